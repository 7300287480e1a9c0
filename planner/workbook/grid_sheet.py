"""The Grid sheet (one row per configuration) and the View data sheet (the rows behind the
capacity view and charts). Both use the same row writer, so a configuration's formulas are the
same wherever it appears."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from openpyxl.formatting.rule import CellIsRule, FormulaRule
from openpyxl.styles import Font, PatternFill
from openpyxl.worksheet.datavalidation import DataValidation

from planner.calc import Evaluated
from planner.formats import KV_FORMATS, WEIGHT_FORMATS
from planner.plan import Plan
from planner.quantities import ROW_QUANTITIES
from planner.workbook import styles
from planner.workbook.cells import Cell, Formula, Input, SheetWriter, Styled
from planner.workbook.layout import (
    CONFIG_COLUMNS,
    GRID_COL,
    GRID_COLUMNS,
    LOOKUPS,
    ROW_TOKEN,
    GridRowRenderer,
)

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


def input_config(env: Evaluated) -> list[Cell]:
    s = env.scenario
    return [Input(getattr(s, c), "General" if c in ("model", "gpu", "weights", "kv") else "#,##0")
            for c in CONFIG_COLUMNS]


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
    positions = lookup_positions(plan)
    total = len(plan.rows)
    for i, env in enumerate(plan.rows):
        row = w.row + 1
        w.append(row_cells(env, row, input_config(env), positions))
        if progress and i % 5000 == 0:
            progress("writing grid", i, total)
    last_col, last_row = GRID_COL[GRID_COLUMNS[-1]], max(w.row, 2)
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
