"""The Checks sheet (FAST's checks): each check is a live formula that gives 0 when it holds and
1 when it fails (shown as OK or FAIL), and one master check, the workbook name `checks_ok`,
that About and Budget show. The checks: the Budget's totals equal the sum of their parts; each
workload's choice is its own candidate with the lowest choice key, and meets every target or is
left out of the totals; no sheet holds an error value; each catalog's ids all lie in its named
range.

"No error anywhere" is a check per sheet, ``ISERROR(SUM(used range))``: SUM carries an error
value through, in Excel, LibreOffice and Gnumeric alike, where ``SUMPRODUCT(--ISERROR(range))``
counts them in Excel and LibreOffice only (Gnumeric reads ISERROR's range as one cell).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field

from openpyxl.formatting.rule import CellIsRule
from openpyxl.styles import Font, PatternFill
from openpyxl.utils import get_column_letter, quote_sheetname

from planner.model.expr import Value, XlError
from planner.outputs.workbook import styles
from planner.outputs.workbook.budget_sheet import BudgetLayout, totals_of
from planner.outputs.workbook.cache import Deferred
from planner.outputs.workbook.catalog_sheets import Namer
from planner.outputs.workbook.cells import Formula, SheetWriter, Styled
from planner.outputs.workbook.fleet_sheets import FLEET_COL, FleetBlock, PickedRowRenderer
from planner.outputs.workbook.layout import (
    CHECKS,
    CLOUDS,
    FLEET,
    GPUS,
    MODELS,
    SERVERS,
    WORKLOADS,
    absolute_cell,
)
from planner.plan.plan import Plan

FIRST_CHECK_ROW = 6


@dataclass
class Outcome:
    """Python's verdict on every check, filled in as the Checks sheet is written; `passed`
    resolves the ones that wait for the Grid's rows (``cache.Deferred``)."""

    results: list[Callable[[], bool]] = field(default_factory=list)

    def passed(self) -> bool:
        return all(result() for result in self.results)


@dataclass(frozen=True)
class UsedRange:
    """A sheet's cells that hold values: the Checks sheet sums them to find an error."""

    sheet: str
    first_row: int
    last_row: int
    last_col: int
    errors: Callable[[], int]  # Python's count of error values among its cached formulas

    def ref(self) -> str:
        last = get_column_letter(max(self.last_col, 1))
        return (f"{quote_sheetname(self.sheet)}!$A${self.first_row}:"
                f"${last}${max(self.last_row, self.first_row)}")


def error_count(values: Iterable[object]) -> int:
    """Cached values that are spreadsheet errors (values resolved later are not counted)."""
    return sum(1 for v in values if isinstance(v, XlError) or (
        isinstance(v, float) and not math.isfinite(v)))


def _ok(condition: str) -> str:
    return f"=IF({condition},0,1)"


def _same(a: str, b: str) -> str:
    """Two amounts equal to the cent (sums of the same terms in another order may differ in the
    last bits)."""
    return f"ROUND({a}-({b}),2)=0"


def _number(value: Value) -> float:
    return float(value) if isinstance(value, int | float) else math.nan


def _close(a: float, b: float) -> bool:
    return round(a - b, 2) == 0


@dataclass(frozen=True)
class _Line:
    label: str  # a section's title, or a check's words
    condition: str = ""  # "" for a section
    result: Callable[[], bool] = lambda: True
    deferred: bool = False  # Python's verdict waits for the streamed sheets
    what: str = ""


def _failures(result: Callable[[], bool]) -> Callable[[], Value]:
    return lambda: 0 if result() else 1


def _constant(holds: bool) -> Callable[[], bool]:
    return lambda: holds


class _Checks:
    """The sheet's lines, gathered before any is written (the master check above them sums
    the lines below, so it must know where they end)."""

    def __init__(self, outcome: Outcome) -> None:
        self.outcome = outcome
        self.lines: list[_Line] = []

    def section(self, title: str) -> None:
        self.lines.append(_Line(title))

    def check(self, label: str, condition: str, holds: bool | Callable[[], bool],
              what: str) -> None:
        result = holds if callable(holds) else _constant(holds)
        self.outcome.results.append(result)
        self.lines.append(_Line(label, condition, result, callable(holds), what))

    def rows(self) -> int:
        return sum(1 if line.condition else 3 for line in self.lines)

    def write(self, w: SheetWriter) -> None:
        for line in self.lines:
            if not line.condition:
                w.append([])
                w.append([Styled(line.label, styles.TITLE)])
                w.append([Styled(h, styles.HEADER) for h in
                          ("Check", "Result", "What it compares")])
                continue
            result = line.result
            cached: Value | Deferred = (Deferred(_failures(result)) if line.deferred
                                        else _failures(result)())
            w.append([Styled(line.label, styles.WRAP),
                      Formula(_ok(line.condition), cached, styles.OK_FAIL),
                      Styled(line.what, styles.WRAP)])


def write_checks(w: SheetWriter, plan: Plan, blocks: dict[str, FleetBlock],
                 budget: BudgetLayout, used: list[UsedRange], catalog_ids: Mapping[str, str],
                 name: Namer, outcome: Outcome) -> None:
    c = _Checks(outcome)
    _total_checks(c, plan, blocks, budget)
    _choice_checks(c, plan, blocks, budget)
    c.section("3. No error value on any sheet")
    for u in used:
        c.check(f"{u.sheet}: no cell holds an error", f"NOT(ISERROR(SUM({u.ref()})))",
                _no_errors(u),
                f"SUM over {u.ref()} (an error anywhere in it makes the sum an error)")
    c.section("4. Each catalog's ids lie in its named range")
    for sheet, id_name in catalog_ids.items():
        c.check(f"{sheet}: every id on the sheet is in {id_name}",
                f"COUNTA({id_name})=COUNTA({quote_sheetname(sheet)}!$A:$A)-1", True,
                f"ids in the range the formulas read ({id_name}) = non-empty cells of column A "
                "below the header: a row added below the table is not read by any formula")
    c.check(f"{WORKLOADS}: one Budget row per workload",
            f"COUNTA(workload_id)={len(budget.workloads)}", True,
            "workloads on the sheet = workloads the Budget lists (as built)")
    fleet_rows = sum(b.last - b.first + 1 for b in blocks.values())
    c.check(f"{FLEET}: one row per workload and candidate",
            f"COUNTA({quote_sheetname(FLEET)}!$A:$A)-1={fleet_rows}", True,
            "candidate rows on the Fleet sheet = candidates sized (as built)")

    w.widths([58, 10, 90])
    styles.print_setup(w.ws)
    w.append([Styled("Checks: every line must show OK", styles.TITLE)])
    w.append([Styled("Each check is a live formula: 0 (OK) when it holds, 1 (FAIL) when it does "
                     "not. checks_ok, shown on About and Budget, is TRUE when every one holds.",
                     styles.NOTE)])
    w.append([])
    last = FIRST_CHECK_ROW - 1 + c.rows()
    span = f"$B${FIRST_CHECK_ROW}:$B${last}"
    # FALSE, not an error, when a check cell is itself an error
    w.append([Styled("All checks pass (checks_ok) [TRUE/FALSE]", styles.HEADER),
              Formula(f"=IF(ISERROR(SUM({span})),1,SUM({span}))=0",
                      Deferred(outcome.passed))])
    name("checks_ok", absolute_cell(CHECKS, "B", w.row))
    w.append([Styled("Checks failed [checks]"), Formula(f"=SUM({span})", Deferred(
        lambda: sum(0 if r() else 1 for r in outcome.results)), "#,##0")])
    assert w.row + 1 == FIRST_CHECK_ROW
    c.write(w)
    assert w.row == last
    bad = PatternFill("solid", fgColor=styles.BAD_FILL, bgColor=styles.BAD_FILL)
    w.ws.conditional_formatting.add(f"B{FIRST_CHECK_ROW}:B{last}", CellIsRule(
        operator="equal", formula=["1"], fill=bad, font=Font(color="9C0006", bold=True)))
    styles.protect(w.ws)


def _no_errors(u: UsedRange) -> Callable[[], bool]:
    return lambda: u.errors() == 0


def _total_checks(c: _Checks, plan: Plan, blocks: dict[str, FleetBlock],
                  budget: BudgetLayout) -> None:
    t = totals_of(plan)
    c.section("1. Totals equal the sum of their parts")

    def num(key: str) -> float:
        value = t[key]
        return float(value) if isinstance(value, int | float) else math.nan

    c.check("Capex = servers + network", _same("total_capex_usd",
                                               "total_server_capex_usd+total_network_capex_usd"),
            _close(num("total_capex_usd"),
                   num("total_server_capex_usd") + num("total_network_capex_usd")),
            "the fleet's capex total against its two lines")
    c.check("Opex = energy + colocation + software and support", _same(
        "total_opex_usd_per_year", "total_energy_usd_per_year+total_colocation_usd_per_year"
        "+total_support_usd_per_year"),
        _close(num("total_opex_usd_per_year"), num("total_energy_usd_per_year")
               + num("total_colocation_usd_per_year") + num("total_support_usd_per_year")),
        "the fleet's opex total against its three lines")
    if blocks:
        row = min(b.first for b in blocks.values())
        pvf_cell = f"{quote_sheetname(FLEET)}!${FLEET_COL['present_value_factor']}${row}"
        first = next(s.rows[0] for s in plan.sized)
        pvf = _number(first.value("present_value_factor"))
        c.check("TCO = capex + opex × present-value factor", _same(
            "total_tco_usd", f"total_capex_usd+total_opex_usd_per_year*{pvf_cell}"),
            _close(num("total_tco_usd"),
                   num("total_capex_usd") + num("total_opex_usd_per_year") * pvf),
            "the fleet's TCO against its capex and discounted opex (the present-value factor "
            "of any Fleet row: it depends on the assumptions alone)")
        c.check("Owned annual cost = capex ÷ present-value factor + opex", _same(
            "total_annual_cost_usd", f"total_capex_usd/{pvf_cell}+total_opex_usd_per_year"),
            _close(num("total_annual_cost_usd"),
                   num("total_capex_usd") / pvf + num("total_opex_usd_per_year")),
            "the fleet's equivalent annual cost against capex as an annuity plus opex")
    bought = budget.range("choice", "bought", sheet=True)
    quantity = budget.range("order", "quantity", sheet=True)
    per_server = budget.range("gpus", "gpus_per_server", sheet=True)
    chosen = [s.choice for s in plan.sized if s.met and s.choice is not None]
    c.check("GPUs bought = servers × GPUs per server",
            f"total_gpus=SUMPRODUCT({bought},{quantity},{per_server})",
            num("total_gpus") == sum(_number(e.value("servers")) * e.server.number(
                "gpus_per_server") for e in chosen),
            "the GPUs total against the order list's servers and each server's GPUs")
    extra = budget.range("gpus", "extra_replicas", sheet=True)
    tp = budget.range("choice", "tp", sheet=True)
    c.check("GPUs bought = running + idle + extra replicas × TP",
            f"total_gpus=total_gpus_running+total_idle_gpus+SUMPRODUCT({bought},{extra},{tp})",
            num("total_gpus") == num("total_gpus_running") + num("total_idle_gpus") + sum(
                _number(e.value("extra_replicas")) * e.candidate.tp for e in chosen),
            "every GPU bought either runs a planned replica, runs an extra one, or is idle")
    c.check("Racks packed across the fleet ≤ racks if each workload had its own",
            "total_racks<=total_racks_alone", num("total_racks") <= num("total_racks_alone"),
            "packing the workloads' servers together never needs more racks")
    for sized in plan.sized:
        env, wid = sized.choice, sized.workload.id
        assert env is not None
        picked = PickedRowRenderer(blocks[wid], budget.cell("choice", "fleet_row", wid,
                                                            sheet=True))
        parts = [(budget.cell("order", "extended_price", wid, True), "server_capex_usd"),
                 (budget.cell("order", "capex", wid, True), "capex_usd"),
                 (budget.cell("running", "opex", wid, True), "opex_usd_per_year")]
        c.check(f"{wid}: the order list and running cost agree with its Fleet row",
                "AND(" + ",".join(_same(cell, picked.col(q)) for cell, q in parts) + ")", True,
                "servers (quantity × unit price), capex and opex as the Budget computes them, "
                "against the chosen Fleet row's")


def _choice_checks(c: _Checks, plan: Plan, blocks: dict[str, FleetBlock],
                   budget: BudgetLayout) -> None:
    c.section("2. Each workload's choice is a candidate that meets its targets, or is not bought")
    for sized in plan.sized:
        wid, block = sized.workload.id, blocks[sized.workload.id]
        pick = budget.cell("choice", "fleet_row", wid, sheet=True)
        picked = PickedRowRenderer(block, pick)
        bought = budget.cell("choice", "bought", wid, sheet=True)
        meets = picked.col("meets_targets")
        key = block.range("choice_key")
        condition = (f'AND({picked.col("workload")}="{wid}",{picked.col("choice_key")}'
                     f"=MIN({key}),{bought}=IF({meets},1,0),OR({bought}=0,{meets}))")
        c.check(f"{wid}: its own candidate, the lowest choice key, and meets every target or "
                "is left out of the totals", condition,
                sized.choice is not None and sized.choice.workload.id == wid,
                "the chosen Fleet row's workload, its choice key against the block's least, "
                "and the Budget's 'in the totals' against the row's 'meets every target'")


CATALOG_ID_NAMES = {MODELS: "model_id", GPUS: "gpu_id", SERVERS: "server_id",
                    WORKLOADS: "workload_id", CLOUDS: "cloud_id"}
