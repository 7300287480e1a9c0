"""The Scenarios sheet: named scenarios side by side, each a column of input values (editable;
unchanged inputs link to the plan's named inputs), with the budget totals of each as live
formulas for the configurations the Budget chose."""

from __future__ import annotations

from openpyxl.utils import get_column_letter, quote_sheetname

from planner.inputs.assumptions import ASSUMPTIONS
from planner.outputs.workbook import styles
from planner.outputs.workbook.cells import Cell, Formula, Input, SheetWriter, Styled
from planner.outputs.workbook.fleet_sheets import FleetBlock, PickedRowRenderer
from planner.outputs.workbook.layout import BUDGET
from planner.outputs.workbook.sensitivity_sheet import MAX_FORMULA, USD, USD_CENTS, metric_formula
from planner.plan.plan import Plan
from planner.plan.scenarios import NamedScenario, scenario_inputs
from planner.plan.sensitivity import SERVER_PRICE, SubstitutingRenderer, driver_leaf

TOTALS = {"tco_usd": ("Total TCO [USD]", USD),
          "usd_per_million_output_tokens": ("Owned cost per million output tokens, all "
                                            "workloads [USD]", USD_CENTS)}


def write_scenarios(w: SheetWriter, plan: Plan, blocks: dict[str, FleetBlock],
                    picks: dict[str, int]) -> None:
    scenarios: list[NamedScenario] = plan.scenarios
    w.widths([44] + [18.0] * max(len(scenarios), 1))
    styles.print_setup(w.ws)
    w.append([Styled("Scenarios: the budget under other inputs, side by side", styles.TITLE)])
    w.append([Styled("Each column changes the blue inputs; unchanged inputs link to the plan's "
                     "own. Totals are live formulas for the configurations the Budget chose "
                     "(a scenario that should change what is bought: see Sensitivity's "
                     "re-sized columns).", styles.NOTE)])
    w.append([])
    w.append([Styled("Scenario", styles.HEADER)] + [Styled(s.name, styles.HEADER)
                                                    for s in scenarios])
    w.append([Styled("What it stands for", styles.TEXT)] + [Styled(s.description, styles.WRAP)
                                                           for s in scenarios])
    inputs = scenario_inputs(scenarios)
    rows: dict[str, int] = {}
    for name in inputs:
        rows[name] = w.row + 1
        label = "Server prices (× catalog)" if name == SERVER_PRICE else (
            f"{ASSUMPTIONS[name].label} [{ASSUMPTIONS[name].unit}]")
        cells: list[Cell] = [Styled(label)]
        for s in scenarios:
            if name in s.changes:
                cells.append(Input(s.changes[name], "0.00##"))
            elif name == SERVER_PRICE:
                cells.append(Styled(1.0, styles.TEXT, "0.00"))
            else:
                cells.append(Formula(f"={name}", plan.assumptions[name], "0.00##", styles.LINK))
        w.append(cells)
    order = [s.workload.id for s in plan.sized if s.met]
    long_cells = []
    for metric, (label, fmt) in TOTALS.items():
        cells = [Styled(label, styles.HEADER)]
        for j, (s, totals) in enumerate(zip(scenarios, plan.scenario_totals, strict=True)):
            column = get_column_letter(2 + j)
            subs = {driver_leaf(name): f"${column}${row}" for name, row in rows.items()
                    if name in s.changes}  # the others already read the plan's own inputs
            renderers = [SubstitutingRenderer(
                PickedRowRenderer(blocks[wid], f"{quote_sheetname(BUDGET)}!$B${picks[wid]}"),
                cells=subs) for wid in order]
            formula = metric_formula(metric, renderers)
            if len(formula) > MAX_FORMULA:
                cells.append(Styled(totals[metric], styles.TEXT, fmt))
                long_cells.append(s.name)
            else:
                cells.append(Formula(formula, totals[metric], fmt))
        w.append(cells)
    if long_cells:
        w.append([Styled("Computed at build time (the formula would exceed Excel's 8,192 "
                         f"characters): {', '.join(sorted(set(long_cells)))}.", styles.NOTE)])
    styles.protect(w.ws)
