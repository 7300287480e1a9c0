"""The Scenarios sheet: named scenarios side by side, each a column of input values (editable;
unchanged inputs link to the plan's named inputs), with the budget totals of each for the
configurations the Budget chose: SUMs over the scenario's what-if rows, written below."""

from __future__ import annotations

from openpyxl.utils import get_column_letter

from planner.inputs.assumptions import ASSUMPTIONS
from planner.outputs.workbook import styles
from planner.outputs.workbook.cells import Cell, Formula, Input, SheetWriter, Styled
from planner.outputs.workbook.fleet_sheets import FleetBlock
from planner.outputs.workbook.whatif import USD, USD_CENTS, Case, WhatIfRows
from planner.plan.plan import Plan
from planner.plan.scenarios import NamedScenario, scenario_inputs
from planner.plan.sensitivity import SERVER_PRICE, driver_leaf

TOTALS = {"tco_usd": ("Total TCO [USD]", USD),
          "usd_per_million_output_tokens": ("Owned cost per million output tokens, all "
                                            "workloads [USD]", USD_CENTS)}


def _case(plan: Plan, s: NamedScenario, column: str, rows: dict[str, int]) -> Case:
    values: dict[str, float | str] = dict(plan.assumptions)
    factor = 1.0
    for name, value in s.changes.items():
        if name == SERVER_PRICE:
            factor = value
        else:
            values[name] = value
    cells = {driver_leaf(name): f"${column}${rows[name]}" for name in s.changes}
    return Case(s.name, cells, values, factor)


def write_scenarios(w: SheetWriter, plan: Plan, blocks: dict[str, FleetBlock],
                    picks: dict[str, int]) -> None:
    scenarios: list[NamedScenario] = plan.scenarios
    inputs = scenario_inputs(scenarios)
    rows_of = WhatIfRows(plan, blocks, picks, [driver_leaf(name) for name in inputs])
    w.widths([44] + [18.0] * max(len(scenarios), rows_of.width - 1))
    styles.print_setup(w.ws)
    w.append([Styled("Scenarios: the budget under other inputs, side by side", styles.TITLE)])
    w.append([Styled("Each column changes the blue inputs; unchanged inputs link to the plan's "
                     "own. Totals are live, for the configurations the Budget chose: each adds "
                     "up the scenario's what-if rows below (a scenario that should change what "
                     "is bought: see Sensitivity's re-sized columns).", styles.NOTE)])
    w.append([])
    w.append([Styled("Scenario", styles.HEADER)] + [Styled(s.name, styles.HEADER)
                                                    for s in scenarios])
    w.append([Styled("What it stands for", styles.TEXT)] + [Styled(s.description, styles.WRAP)
                                                           for s in scenarios])
    rows = {name: w.row + 1 + i for i, name in enumerate(inputs)}
    for name in inputs:
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
    blocks_start = w.row + len(TOTALS) + 2  # the totals, a blank row, then the title
    made = [rows_of.block(_case(plan, s, get_column_letter(2 + j), rows),
                          blocks_start + 2 + j * len(plan.sized))
            for j, s in enumerate(scenarios)]
    for metric, (label, fmt) in TOTALS.items():
        cells = [Styled(label, styles.HEADER)]
        for _, totals in made:
            text = totals.tco if metric == "tco_usd" else totals.per_million_output
            cells.append(Formula(text, totals.values[metric], fmt))
        w.append(cells)
    w.append([])
    w.append([Styled("What-if rows: each total above adds up one block, the configurations the "
                     "Budget chose with the scenario's inputs (columns that read none of them "
                     "read the chosen Fleet row)", styles.TITLE)])
    rows_of.header(w)
    assert w.row + 1 == blocks_start + 2
    for block_rows, _ in made:
        for cells in block_rows:
            w.append(cells)
    styles.protect(w.ws)
