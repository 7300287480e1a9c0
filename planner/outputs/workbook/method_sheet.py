"""The Method sheet: every quantity in words and as a readable formula, with the Grid column
that holds it, so a reader can audit a number without decoding cell references."""

from __future__ import annotations

from planner.model.fleet import FLEET_QUANTITIES
from planner.model.quantities import MODEL_QUANTITIES, ROW_QUANTITIES, assumptions_used
from planner.outputs.method import readable_formula
from planner.outputs.workbook import styles
from planner.outputs.workbook.cells import SheetWriter, Styled
from planner.outputs.workbook.fleet_sheets import FLEET_COL
from planner.outputs.workbook.layout import FLEET, GRID, GRID_COL, MODEL_COL, MODELS


def write_method(w: SheetWriter) -> None:
    w.widths([30, 34, 12, 16, 70, 80, 44])
    styles.print_setup(w.ws)  # before the first row
    w.append([Styled("Method: what each column computes", styles.TITLE)])
    w.append([Styled("Names in the formulas: a bare name is another quantity of the same row, "
                     "a configuration value (tp, context, batch, prompt, output) or an "
                     "assumption; model.X, gpu.X, weights.X, kv.X, engine.X, workload.X and "
                     "server.X are catalog, format and engine-table fields.",
                     styles.NOTE)])
    w.append([Styled(h, styles.HEADER) for h in (
        "Quantity (JSON key)", "Label", "Unit", "Column", "Definition", "Formula",
        "Rests on assumptions")])
    rows = [(q, f"{GRID}!{GRID_COL[q.name]}") for q in ROW_QUANTITIES]
    rows += [(q, f"{FLEET}!{FLEET_COL[q.name]}") for q in FLEET_QUANTITIES]
    rows += [(q, f"{MODELS}!{MODEL_COL[q.name]}") for q in MODEL_QUANTITIES]
    for q, column in rows:
        formula = readable_formula(q.expr)
        lines = 1 + max(len(q.description) // 75, len(formula) // 85)  # rows do not auto-grow
        w.ws.row_dimensions[w.row + 1].height = 15 * lines
        rests_on = ", ".join(assumptions_used(q)) or "exact (shape and specs only)"
        w.append([Styled(q.name), Styled(q.label), Styled(q.unit or "-"), Styled(column),
                  Styled(q.description, styles.WRAP), Styled(formula, styles.WRAP),
                  Styled(rests_on, styles.WRAP)])
    styles.protect(w.ws)
