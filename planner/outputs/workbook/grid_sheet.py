"""The Grid sheet (one row per configuration) and the View data sheet (the rows behind the
capacity view and charts). Both use the same row writer, so a configuration's formulas are the
same wherever it appears.

The Grid's rows are streamed (``GridStream``): evaluated a block at a time while the workbook is
packed and written as XML into the sheet, values cached in place. Each column's cell is written
once by openpyxl itself (``SheetWriter.cell_xml``) with a stand-in row number, so the stream
writes exactly what ``row_cells`` appended through openpyxl would, at a fraction of the cost.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Iterator, Mapping, Sequence

from openpyxl.formatting.rule import CellIsRule, FormulaRule
from openpyxl.styles import Font, PatternFill
from openpyxl.worksheet.datavalidation import DataValidation

from planner.inputs.scenario import Scenario
from planner.model.columns import Numbers, Same
from planner.model.formats import KV_FORMATS, WEIGHT_FORMATS
from planner.model.quantities import ROW_QUANTITIES
from planner.outputs.workbook import styles
from planner.outputs.workbook.cache import formula_parts, value_text
from planner.outputs.workbook.cells import (
    FORMULA,
    INPUT,
    Cell,
    Cells,
    Formula,
    Input,
    SheetWriter,
    Styled,
)
from planner.outputs.workbook.layout import (
    CONFIG_COLUMNS,
    GRID_COL,
    GRID_COLUMNS,
    LOOKUPS,
    ROW_TOKEN,
    GridRowRenderer,
)
from planner.plan.calc import BlockEnv, Evaluated
from planner.plan.plan import Plan, scenario_blocks

CONFIG_HEADERS = {
    "model": "Model [id]", "gpu": "GPU [id]", "weights": "Weight format [id]",
    "kv": "KV-cache format [id]", "tp": "TP degree [GPUs]", "context": "Context [tokens]",
    "batch": "Concurrency [sequences]", "prompt": "Prompt [tokens]",
    "output": "Output per request [tokens; 0 = not given]",
}
LOOKUP_HEADERS = {
    "model_row": "Models row [#]", "gpu_row": "GPUs row [#]",
    "weights_row": "Formats row (weights) [#]", "kv_row": "Formats row (KV) [#]",
}
QUANTITY_FORMATS = {q.name: styles.number_format(q.display, q.kind, q.unit)
                    for q in ROW_QUANTITIES}
# Each row's formulas differ only in the row number: render every definition once.
_TEMPLATE = GridRowRenderer(ROW_TOKEN)
QUANTITY_TEMPLATES = {q.name: q.expr.formula(_TEMPLATE) for q in ROW_QUANTITIES}
LOOKUP_TEMPLATES = {k: "=" + _TEMPLATE.lookup(k) for k in LOOKUPS}


def headers() -> list[Styled]:
    out = [CONFIG_HEADERS[c] for c in CONFIG_COLUMNS] + [LOOKUP_HEADERS[k] for k in LOOKUPS]
    out += [styles.header_text(q.label, q.unit, q.display, q.kind) for q in ROW_QUANTITIES]
    return [Styled(h, styles.HEADER) for h in out]


def lookup_positions(plan: Plan) -> dict[str, dict[str, int]]:
    """1-based row of each id within its table, as MATCH returns it."""
    return {
        "model_row": {k: i for i, k in enumerate(plan.models.entries, start=1)},
        "gpu_row": {k: i for i, k in enumerate(plan.gpus.entries, start=1)},
        "weights_row": {k: i for i, k in enumerate(WEIGHT_FORMATS, start=1)},
        "kv_row": {k: i for i, k in enumerate(KV_FORMATS, start=1)},
    }


def row_cells(env: Evaluated, row: int, config: Sequence[Cell],
              positions: dict[str, dict[str, int]]) -> list[Cell]:
    """Configuration cells as given, then the lookups and every quantity as formulas."""
    r = str(row)
    cells = list(config)
    for lookup, (column, _) in LOOKUPS.items():
        cells.append(Formula(LOOKUP_TEMPLATES[lookup].replace(ROW_TOKEN, r),
                             positions[lookup][getattr(env.scenario, column)], "0"))
    for q in ROW_QUANTITIES:
        cells.append(Formula(QUANTITY_TEMPLATES[q.name].replace(ROW_TOKEN, r), env.value(q.name),
                             QUANTITY_FORMATS[q.name]))
    return cells


def config_input(column: str, value: object) -> Input:
    return Input(value, "General" if column in ("model", "gpu", "weights", "kv") else "#,##0")


def input_config(env: Evaluated) -> list[Cell]:
    s = env.scenario
    return [config_input(c, getattr(s, c)) for c in CONFIG_COLUMNS]


def _widths() -> list[float]:
    return ([20.0, 14, 10, 10, 8, 11, 12, 10, 12] + [9.0] * len(LOOKUPS)
            + [16.0] * len(ROW_QUANTITIES))


def write_grid(w: SheetWriter, plan: Plan,
               progress: Callable[[str, int, int], None] | None = None) -> None:
    ws = w.ws
    w.widths(_widths())
    styles.print_setup(ws, title_rows="1:1", fit_width=False)  # before the first row
    ws.print_title_cols = "A:B"
    ws.freeze_panes = "C2"
    w.append(headers())
    w.stream = GridStream(w, plan, progress)  # the rows, written when the workbook is packed
    last_col, last_row = GRID_COL[GRID_COLUMNS[-1]], max(w.row + len(plan.rows), 2)
    ws.auto_filter.ref = f"A1:{last_col}{last_row}"
    _grid_conditional_formats(ws, last_col, last_row)
    _config_validation(ws, last_row)
    # Not protected: Excel refuses to sort a protected range that holds locked cells, and
    # sorting and filtering the Grid is what it is for. Inputs are blue, formulas black.


def _grid_conditional_formats(ws, last_col: str, last_row: int) -> None:  # type: ignore[no-untyped-def]
    fits, bound = GRID_COL["fits"], GRID_COL["decode_bound"]
    bad = PatternFill("solid", fgColor=styles.BAD_FILL, bgColor=styles.BAD_FILL)
    ws.conditional_formatting.add(
        f"A2:{GRID_COL['prompt']}{last_row}",
        FormulaRule(formula=[f"${fits}2=FALSE"], fill=bad, font=Font(color="9C0006")))
    ws.conditional_formatting.add(
        f"{fits}2:{fits}{last_row}",
        CellIsRule(operator="equal", formula=["FALSE"], fill=bad))
    ws.conditional_formatting.add(
        f"{bound}2:{bound}{last_row}",
        CellIsRule(operator="equal", formula=['"compute"'],
                   fill=PatternFill("solid", fgColor=styles.COMPUTE_FILL,
                                    bgColor=styles.COMPUTE_FILL)))
    ws.conditional_formatting.add(
        f"{bound}2:{bound}{last_row}",
        CellIsRule(operator="equal", formula=['"memory"'],
                   fill=PatternFill("solid", fgColor=styles.MEMORY_FILL,
                                    bgColor=styles.MEMORY_FILL)))


def _config_validation(ws, last_row: int) -> None:  # type: ignore[no-untyped-def]
    for column, id_range in (("model", "model_id"), ("gpu", "gpu_id"),
                             ("weights", "weight_format_id"), ("kv", "kv_format_id")):
        dv = DataValidation(type="list", formula1=id_range, showErrorMessage=True,
                            error=f"Choose an id from the {id_range} list")
        dv.add(f"{GRID_COL[column]}2:{GRID_COL[column]}{last_row}")
        ws.data_validations.append(dv)
    for column in ("tp", "context", "batch", "prompt", "output"):
        floor = "-1" if column == "output" else "0"
        dv = DataValidation(type="whole", operator="greaterThan", formula1=floor,
                            showErrorMessage=True, error="Enter a whole number above " + floor)
        dv.add(f"{GRID_COL[column]}2:{GRID_COL[column]}{last_row}")
        ws.data_validations.append(dv)


STAND_IN_ROW = 987_654_321  # the row number cells are written at once, then replaced
_STAND_IN = str(STAND_IN_ROW)
_CHUNK = 2 << 20  # characters of XML handed to the package at a time
_AXIS = {"model": "models", "gpu": "gpus"}  # grid axis of a configuration column


def _escaped(text: str) -> str:
    """Text as a literal part of a %-format template."""
    return text.replace("%", "%%")


class GridStream:
    """The Grid's data rows as XML, evaluated block by block as they are written (so nothing
    grows with the grid); a complete pass leaves the HTML's aggregates (``Plan.summary``)."""

    def __init__(self, w: SheetWriter, plan: Plan,
                 progress: Callable[[str, int, int], None] | None = None) -> None:
        self.w = w
        self.plan = plan
        self.progress = progress
        self.formulas = 0
        self.errors = 0  # formula cells whose value is a spreadsheet error, once written
        self.rows = len(plan.rows)
        self.positions = lookup_positions(plan)
        self._config: dict[tuple[int, object], str] = {}
        self._lookups: dict[tuple[str, object], str] = {}
        self._quantities: list[tuple[str, str, str]] = []
        first = next(scenario_blocks(plan.grid, plan.models, plan.gpus, 1), None)
        if first is None:
            return
        s = first[0]  # register the styles in the order the first row would
        for i, column in enumerate(CONFIG_COLUMNS):
            self._config_xml(i, getattr(s, column))
        for lookup, (column, _) in LOOKUPS.items():
            self._lookup_xml(lookup, getattr(s, column))
        for i, column in enumerate(CONFIG_COLUMNS):  # and every value's, before the save
            for value in plan.grid.axes[_AXIS.get(column, column)]:
                self._config_xml(i, value)
        for lookup, (column, _) in LOOKUPS.items():
            for value in plan.grid.axes[_AXIS.get(column, column)]:
                self._lookup_xml(lookup, value)
        start = len(CONFIG_COLUMNS) + len(LOOKUPS) + 1
        for i, q in enumerate(ROW_QUANTITIES, start=start):
            template = QUANTITY_TEMPLATES[q.name]
            if _STAND_IN in template:
                raise ValueError(f"{q.name}: its formula holds the stand-in row number")
            cell = Formula(template.replace(ROW_TOKEN, _STAND_IN), 0, QUANTITY_FORMATS[q.name])
            head, body, tail = formula_parts(self.w.cell_xml(cell, i, STAND_IN_ROW, False))
            self._quantities.append((_escaped(head.replace(_STAND_IN, ROW_TOKEN)),
                                     _escaped(body.replace(_STAND_IN, ROW_TOKEN)), tail))

    def _config_xml(self, index: int, value: object) -> str:
        key = (index, value)
        if key not in self._config:
            cell = config_input(CONFIG_COLUMNS[index], value)
            text = self.w.cell_xml(cell, index + 1, STAND_IN_ROW)
            self._config[key] = text.replace(_STAND_IN, ROW_TOKEN, 1)  # the reference
        return self._config[key]

    def _lookup_xml(self, lookup: str, value: object) -> str:
        key = (lookup, value)
        if key not in self._lookups:
            column = len(CONFIG_COLUMNS) + 1 + list(LOOKUPS).index(lookup)
            cell = Formula(LOOKUP_TEMPLATES[lookup].replace(ROW_TOKEN, _STAND_IN),
                           self.positions[lookup][value], "0")  # type: ignore[index]
            text = self.w.cell_xml(cell, column, STAND_IN_ROW)
            self._lookups[key] = text.replace(_STAND_IN, ROW_TOKEN)
        return self._lookups[key]

    def __iter__(self) -> Iterator[bytes]:
        total = len(self.plan.rows)
        per_row = len(LOOKUPS) + len(ROW_QUANTITIES)
        row, pending, size = 2, [], 0
        for block in self.plan.rows.blocks():
            for text in self._rows(block, row):
                pending.append(text)
                size += len(text)
                if size >= _CHUNK:
                    yield "".join(pending).encode()
                    pending, size = [], 0
            row += block.size
            self.formulas += block.size * per_row
            if self.progress:
                self.progress("writing grid", row - 2, total)
        if pending:
            yield "".join(pending).encode()

    def cells(self, head: Cells, first_row: int) -> GridCells:
        """Every cell of the rows, as the reader reads them back, made when looked up (the
        Grid is most of a default workbook's cells): the configuration inputs and each
        column's formula at its row, no quantity evaluated."""
        scenarios = [s for block in scenario_blocks(self.plan.grid, self.plan.models,
                                                    self.plan.gpus) for s in block]
        return GridCells(head, scenarios, first_row)

    def _rows(self, block: BlockEnv, first_row: int) -> Iterator[str]:
        """The block's <row> elements: what every row shares written once into a template,
        what varies filled in per row."""
        n = block.size
        parts = [f'<row r="{ROW_TOKEN}">']
        slots: list[Sequence[str] | itertools.repeat[str]] = []
        for i, column in enumerate(CONFIG_COLUMNS):
            values = [getattr(s, column) for s in block.scenarios]
            if all(v == values[0] for v in values):
                parts.append(_escaped(self._config_xml(i, values[0])))
            else:
                parts.append("%s")
                slots.append([self._config_xml(i, v) for v in values])
        s = block.scenarios[0]
        for lookup, (column, _) in LOOKUPS.items():
            parts.append(_escaped(self._lookup_xml(lookup, getattr(s, column))))
        for q, (head, body, tail) in zip(ROW_QUANTITIES, self._quantities, strict=True):
            col = block.quantity(q.name)
            if isinstance(col, Same):
                t, v = value_text(col.value)
                self.errors += n if t == _ERROR else 0
                parts.append(head + t + body + v.replace("%", "%%") + tail)
                continue
            parts.append(head + "%s" + body + "%s" + tail)
            types, texts = _value_texts(col, n)
            if isinstance(types, list):
                self.errors += types.count(_ERROR)
            slots.extend((types, texts))
        parts.append("</row>")
        template = "".join(parts)
        rows = zip(*slots, strict=True) if slots else itertools.repeat((), n)
        for r, filled in zip(range(first_row, first_row + n), rows, strict=True):
            yield (template % filled).replace(ROW_TOKEN, str(r))


class GridCells(Mapping[tuple[int, int], tuple[object, str]]):
    """The Grid's header (`head`) and data rows as ``SheetWriter.recorded`` would hold them,
    (row, column) -> (value, kind), each data cell made when it is looked up."""

    def __init__(self, head: Cells, scenarios: list[Scenario], first_row: int) -> None:
        self.head, self.scenarios, self.first_row = head, scenarios, first_row
        templates = [LOOKUP_TEMPLATES[k] for k in LOOKUPS]
        templates += [QUANTITY_TEMPLATES[q.name] for q in ROW_QUANTITIES]
        self.formulas = [Formula(t, 0).text for t in templates]  # "=" as a Formula adds it
        self.configs = len(CONFIG_COLUMNS)
        self.width = self.configs + len(self.formulas)

    def __getitem__(self, key: tuple[int, int]) -> tuple[object, str]:
        if key in self.head:
            return self.head[key]
        row, column = key
        i = row - self.first_row
        if not (0 <= i < len(self.scenarios) and 1 <= column <= self.width):
            raise KeyError(key)
        if column <= self.configs:
            name = CONFIG_COLUMNS[column - 1]
            return config_input(name, getattr(self.scenarios[i], name)).value, INPUT
        return self.formulas[column - self.configs - 1].replace(ROW_TOKEN, str(row)), FORMULA

    def __iter__(self) -> Iterator[tuple[int, int]]:
        yield from self.head
        for row in range(self.first_row, self.first_row + len(self.scenarios)):
            for column in range(1, self.width + 1):
                yield row, column

    def __len__(self) -> int:
        return len(self.head) + len(self.scenarios) * self.width


_ERROR = ' t="e"'  # the type attribute of a cached error value


def _value_texts(col: list, n: int) -> tuple[Sequence[str] | itertools.repeat[str],  # type: ignore[type-arg]
                                             Sequence[str]]:
    """The type attributes and value texts ``cache.value_text`` gives a column's values."""
    if isinstance(col, Numbers):
        try:
            finite = math.isfinite(sum(col))
        except OverflowError:
            finite = False
        if finite:  # plain numbers: no type attribute, the shortest repr
            return itertools.repeat("", n), list(map(repr, col))
    texts = [value_text(v) for v in col]
    return [t for t, _ in texts], [v for _, v in texts]
