"""What-if rows: the configurations the Budget chose, with one or a few inputs replaced.

A block holds one row per workload. Each row reads the workload's chosen Fleet row (the
Budget's pick) and holds, each in a column of its own, the quantities the totals need: where a
quantity reads a replaced input, its own definition rendered over the cells of the same row
(a short formula); otherwise the chosen row's value, read with INDEX. Counted columns give what
the totals add up (zero for a workload nothing meets, as on the Budget), so a total is a SUM
over its block: live, and auditable one short formula at a time.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from openpyxl.utils import get_column_letter, quote_sheetname

from planner.model.expr import Value
from planner.model.fleet import depends_on
from planner.model.quantities import QUANTITY_BY_NAME
from planner.outputs.workbook import styles
from planner.outputs.workbook.cells import Cell, Formula, SheetWriter, Styled
from planner.outputs.workbook.fleet_sheets import (
    FLEET_COLUMNS,
    FleetBlock,
    PickedRowRenderer,
    quantity_format,
    quantity_header,
)
from planner.outputs.workbook.layout import BUDGET
from planner.plan.plan import Plan
from planner.plan.sensitivity import rerun

Leaf = tuple[str, str]
# What the totals read of a chosen row (planner.plan.sensitivity._fleet_total).
METRIC_QUANTITIES = ("tco_usd", "annual_cost_usd", "prefill_time_share",
                     "average_requests_per_second")
SECONDS_PER_YEAR = 31536000
USD = '"$"#,##0'
USD_CENTS = '"$"#,##0.0000'


def _reads(names: Iterable[str]) -> set[str]:
    """The quantities `names` read, directly or through others (the batch through the batch
    chosen)."""
    seen: set[str] = set()
    todo = list(names)
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        for kind, ref in QUANTITY_BY_NAME[name].expr.refs():
            if kind == "q":
                todo.append(ref)
            elif kind == "var" and ref == "batch":
                todo.append("batch_chosen")
    return seen


_NEEDED = _reads(METRIC_QUANTITIES)


def touched(name: str, leaves: Iterable[Leaf]) -> bool:
    return any(depends_on(name, leaf) for leaf in leaves)


@dataclass(frozen=True)
class Case:
    """Inputs replaced: each leaf (kind, name) by the cell holding its value on the sheet (a
    server price by the row's price times the cell), with the same change for Python's
    values (assumptions, and a factor on every server price)."""

    key: str  # names the case in column A, with the workload: unique on its sheet
    cells: Mapping[Leaf, str]
    assumptions: Mapping[str, float | str]
    factor: float = 1.0


@dataclass
class Totals:
    """A block's totals as formulas over its counted columns, and Python's values of them."""

    tco: str
    per_million_output: str
    values: dict[str, float] = field(default_factory=dict)


class WhatIfRenderer:
    """A quantity of a what-if row: replaced inputs read their cells, quantities with a column
    of their own read it in the same row, everything else the chosen Fleet row."""

    def __init__(self, base: PickedRowRenderer, row: int, letters: Mapping[str, str],
                 cells: Mapping[Leaf, str]) -> None:
        self.base, self.row, self.letters, self.cells = base, row, letters, cells

    def ref(self, kind: str, name: str) -> str:
        cell = self.cells.get((kind, name))
        if cell is not None:
            if kind == "server":  # a price factor: the row's price times the factor cell
                return f"({self.base.ref(kind, name)}*{cell})"
            return cell
        if kind == "q" and name in self.letters:
            return f"${self.letters[name]}{self.row}"
        if kind == "var" and name == "batch" and "batch_chosen" in self.letters:
            return f"${self.letters['batch_chosen']}{self.row}"
        return self.base.ref(kind, name)


class WhatIfRows:
    """The what-if blocks of one sheet: their columns are the quantities the totals need and
    those that read any input the sheet replaces, in the Fleet's (left-to-right) order."""

    LEAD = ("Case and workload [key]", "Workload [id]", "Fleet row [#]",
            "Bought: counted in the totals [1/0]")
    COUNTED = ("TCO counted [USD]", "Decode cost per year counted [USD]",
               "Output tokens per year counted [tokens]")

    def __init__(self, plan: Plan, blocks: dict[str, FleetBlock], picks: dict[str, int],
                 leaves: Iterable[Leaf]) -> None:
        leaves = list(leaves)
        self.plan, self.blocks, self.picks = plan, blocks, picks
        wanted = {n for n in _NEEDED if touched(n, leaves)} | set(METRIC_QUANTITIES)
        self.columns = [n for n in FLEET_COLUMNS if n in wanted]
        first = len(self.LEAD) + 1
        self.letters = {n: get_column_letter(first + i) for i, n in enumerate(self.columns)}
        counted = first + len(self.columns)
        self.tco, self.cost, self.tokens = (get_column_letter(counted + i) for i in range(3))

    @property
    def width(self) -> int:
        return len(self.LEAD) + len(self.columns) + len(self.COUNTED)

    def header(self, w: SheetWriter) -> None:
        heads = [*self.LEAD, *(quantity_header(n) for n in self.columns), *self.COUNTED]
        w.append([Styled(h, styles.HEADER) for h in heads])

    def block(self, case: Case, first: int) -> tuple[list[list[Cell]], Totals]:
        """The rows of `case` (one per workload) as they would sit from row `first`, and the
        totals over them."""
        out: list[list[Cell]] = []
        tco = cost = tokens = 0.0
        for row, sized in enumerate(self.plan.sized, start=first):
            env = sized.choice
            assert env is not None
            wid = sized.workload.id
            block = self.blocks[wid]
            picked = PickedRowRenderer(block, f"$C{row}")
            renderer = WhatIfRenderer(picked, row, self.letters, case.cells)
            moved = rerun(env, case.assumptions, case.factor)
            met = int(sized.met)
            cells: list[Cell] = [
                Styled(f"{case.key} · {wid}"), Styled(wid),
                Formula(f"={quote_sheetname(BUDGET)}!$B${self.picks[wid]}",
                        sized.rows.index(env) + 1, "0"),
                Formula(f"=IF(INDEX({block.index_range('meets_targets')},$C{row}),1,0)", met,
                        "0")]
            for name in self.columns:
                if touched(name, case.cells):
                    text = QUANTITY_BY_NAME[name].expr.formula(renderer)
                else:
                    text = f"=INDEX({block.index_range(name)},$C{row})"
                cells.append(Formula(text, moved.value(name), quantity_format(name)))
            value = {n: _number(moved.value(n)) for n in METRIC_QUANTITIES}
            output = sized.workload.number("output_tokens")
            counted = (value["tco_usd"] if met else 0,
                       value["annual_cost_usd"] * (1 - value["prefill_time_share"]) if met else 0,
                       value["average_requests_per_second"] * output * SECONDS_PER_YEAR
                       if met else 0)
            tco, cost, tokens = tco + counted[0], cost + counted[1], tokens + counted[2]
            col = {n: f"${self.letters[n]}{row}" for n in METRIC_QUANTITIES}
            out_tokens = picked.ref("workload", "output_tokens")
            cells += [
                Formula(f"=IF($D{row}=1,{col['tco_usd']},0)", counted[0], USD),
                Formula(f"=IF($D{row}=1,{col['annual_cost_usd']}"
                        f"*(1-{col['prefill_time_share']}),0)", counted[1], USD),
                Formula(f"=IF($D{row}=1,{col['average_requests_per_second']}*{out_tokens}"
                        f"*{SECONDS_PER_YEAR},0)", counted[2], "#,##0")]
            out.append(cells)
        last = first + len(out) - 1
        totals = Totals(
            f"=SUM(${self.tco}${first}:${self.tco}${last})",
            f"=IF(SUM(${self.tokens}${first}:${self.tokens}${last})>0,"
            f"SUM(${self.cost}${first}:${self.cost}${last})"
            f"/SUM(${self.tokens}${first}:${self.tokens}${last})*1000000,0)",
            {"tco_usd": tco,
             "usd_per_million_output_tokens": cost / tokens * 1e6 if tokens > 0 else 0.0})
        return out, totals


def _number(value: Value) -> float:
    return float(value) if isinstance(value, int | float) else 0.0
