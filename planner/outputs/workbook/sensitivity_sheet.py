"""The Sensitivity sheet: each key input at a low and a high value (editable), the budget
totals for the configurations the Budget chose with that one input moved, the swing and its
rank, all live; the inputs ranked by their live swing for a tornado chart of the change from
the base total TCO; and below, the what-if rows every total adds up. The totals with the whole
search re-run (planner.plan.sensitivity.RESIZED) cannot be formulas: they are grey, labelled
as computed at build time, and turn red (conditional format) once the live base totals no
longer match the build's."""

from __future__ import annotations

import math

from openpyxl.chart import BarChart, Reference
from openpyxl.chart.label import DataLabelList
from openpyxl.formatting.rule import FormulaRule
from openpyxl.styles import Font, PatternFill

from planner.outputs.workbook import styles
from planner.outputs.workbook.cells import Cell, Formula, Input, SheetWriter, Styled
from planner.outputs.workbook.chart_cache import cache_chart
from planner.outputs.workbook.fleet_sheets import FleetBlock
from planner.outputs.workbook.whatif import USD, USD_CENTS, Case, Totals, WhatIfRows
from planner.plan.plan import Plan
from planner.plan.sensitivity import (
    DRIVERS,
    SERVER_PRICE,
    Driver,
    base_totals,
    driver_leaf,
    settings,
)

STALE_NOTE = ("Grey figures turn red once the live totals above differ from the build's: "
              "the inputs changed, rebuild (planner build) for current re-sized figures.")


def stale_condition(tco: str, built_tco: str, per_m: str, built_per_m: str) -> str:
    """True once a live total differs from the build's (beyond rounding)."""
    return (f"OR(ABS({tco}-{built_tco})>0.000000001*MAX(1,ABS({built_tco})),"
            f"ABS({per_m}-{built_per_m})>0.000000001*MAX(1,ABS({built_per_m})))")

HEADER = ["Input [id]", "What it is", "Today", "Low", "High", "Total TCO, low [USD]",
          "Total TCO, high [USD]", "TCO swing [USD]", "Swing to the dollar, ranked [USD]",
          "Rank by swing (live) [#]", "$/M output, low [USD]", "$/M output, high [USD]",
          "TCO re-sized, low [USD] (computed at build time)",
          "TCO re-sized, high [USD] (computed at build time)", "Why this range"]
RANKED = ["Rank [key]", "Input", "Low", "High", "TCO change, input at its low [USD]",
          "TCO change, input at its high [USD]", "TCO swing [USD]"]


def write_sensitivity(w: SheetWriter, plan: Plan, blocks: dict[str, FleetBlock],
                      picks: dict[str, int]) -> None:
    rows_of = WhatIfRows(plan, blocks, picks, [driver_leaf(d.name) for d in DRIVERS])
    w.widths([44, 34, 12, 12, 12, 18, 18, 18, 18, 12, 18, 18, 20, 20, 60]
             + [18.0] * max(0, rows_of.width - 15))
    styles.print_setup(w.ws)
    w.append([Styled("Sensitivity: what moves the budget", styles.TITLE)])
    w.append([Styled("Each input at its low and high (editable), the other inputs as they are, "
                     "for the configurations the Budget chose: every total is a live formula "
                     "over the what-if rows below. Grey columns re-run the whole search, so "
                     "the choice may change: computed at build time, not formulas.",
                     styles.NOTE)])
    w.append([])
    w.append([Styled(h, styles.HEADER) for h in HEADER])
    first = w.row + 1
    rows = {d.name: first + i for i, d in enumerate(DRIVERS)}
    last = first + len(DRIVERS) - 1
    # the what-if rows come after the tables and the chart: where each block will start
    ranked_first = last + 10  # a blank row, five base rows, a blank row, a title, a header
    blocks_start = ranked_first + len(DRIVERS) + 25
    starts = {key: blocks_start + 2 + i * len(plan.sized)
              for i, key in enumerate(["base"] + [f"{d.name} {end}" for d in DRIVERS
                                                  for end in ("low", "high")])}
    made = {key: rows_of.block(_case(plan, key, rows), start) for key, start in starts.items()}
    totals = {key: t for key, (_, t) in made.items()}
    swings = {d.name: abs(totals[f"{d.name} high"].values["tco_usd"]
                          - totals[f"{d.name} low"].values["tco_usd"]) for d in DRIVERS}
    # ranked on the swing to the dollar, ties in table order: two inputs that move the same
    # term by the same share (PUE and average draw) swing equally but for rounding noise,
    # which engines settle differently
    dollars = {name: math.floor(swing + 0.5) for name, swing in swings.items()}
    order = sorted(DRIVERS, key=lambda d: -dollars[d.name])  # stable
    rank = {d.name: i for i, d in enumerate(order, start=1)}
    resized = {s.driver.name: s for s in plan.swings}
    for d in DRIVERS:
        row = rows[d.name]
        low, high = totals[f"{d.name} low"], totals[f"{d.name} high"]
        today: Cell = (Styled(1.0, styles.TEXT, "0.00") if d.name == SERVER_PRICE
                       else Formula(f"={d.name}", plan.assumptions[d.name], "0.00##", styles.LINK))
        cells: list[Cell] = [Styled(d.name), Styled(d.label), today, Input(d.low, "0.00##"),
                             Input(d.high, "0.00##"),
                             Formula(low.tco, low.values["tco_usd"], USD),
                             Formula(high.tco, high.values["tco_usd"], USD),
                             Formula(f"=MAX(G{row}-F{row},F{row}-G{row})", swings[d.name], USD),
                             Formula(f"=ROUND(H{row},0)", dollars[d.name], USD),
                             Formula(f"=SUMPRODUCT(($I${first}:$I${last}>I{row})*1)"
                                     f"+SUMPRODUCT(($I${first}:I{row}=I{row})*1)", rank[d.name],
                                     "0"),
                             Formula(low.per_million_output,
                                     low.values["usd_per_million_output_tokens"], USD_CENTS),
                             Formula(high.per_million_output,
                                     high.values["usd_per_million_output_tokens"], USD_CENTS)]
        swing = resized.get(d.name)
        for values in ((swing.resized_low, swing.resized_high) if swing else ({}, {})):
            cells.append(Styled(values["tco_usd"], styles.BUILD_TIME, USD) if values
                         else Styled("not re-run", styles.BUILD_TIME))
        cells.append(Styled(d.reason, styles.WRAP))
        assert w.append(cells) == row
    w.append([])
    base = totals["base"]
    built = base_totals(plan.sized)
    base_row = w.row + 1
    w.append([Styled("base_total_tco"), Styled("Total TCO, every input as it is [USD]"),
              Formula(base.tco, base.values["tco_usd"], USD)])
    w.append([Styled("base_usd_per_million_output"),
              Styled("$/M output, every input as it is [USD]"),
              Formula(base.per_million_output, base.values["usd_per_million_output_tokens"],
                      USD_CENTS)])
    w.append([Styled("built_total_tco"),
              Styled("Total TCO when built (computed at build time) [USD]"),
              Styled(built["tco_usd"], styles.BUILD_TIME, USD)])
    w.append([Styled("built_usd_per_million_output"),
              Styled("$/M output when built (computed at build time) [USD]"),
              Styled(built["usd_per_million_output_tokens"], styles.BUILD_TIME, USD_CENTS)])
    tco, built_tco = f"$C${base_row}", f"$C${base_row + 2}"
    per_m, built_per_m = f"$C${base_row + 1}", f"$C${base_row + 3}"
    w.append([Styled("build_time_check"), Styled(STALE_NOTE, styles.NOTE)])
    # a format, not a formula cell: an edited workbook and its rebuild differ here by design
    w.ws.conditional_formatting.add(
        f"M{first}:N{last} C{base_row + 2}:C{base_row + 3}",
        FormulaRule(formula=[stale_condition(tco, built_tco, per_m, built_per_m)],
                    font=Font(bold=True, color="9C0006"),
                    fill=PatternFill("solid", bgColor=styles.BAD_FILL)))
    w.append([])
    assert w.row + 3 == ranked_first
    _ranked(w, order, first, last, base_row, totals, swings)
    chart_row = w.row + 2
    _tornado(w, order, totals, swings, ranked_first, chart_row)
    while w.row < blocks_start - 1:
        w.append([])
    w.append([Styled("What-if rows: each total above adds up one block, the configurations the "
                     "Budget chose with the input replaced (columns that read no replaced "
                     "input read the chosen Fleet row)", styles.TITLE)])
    rows_of.header(w)
    for key, start in starts.items():
        assert w.row + 1 == start
        for cells in made[key][0]:
            w.append(cells)
    styles.protect(w.ws)


def _case(plan: Plan, key: str, rows: dict[str, int]) -> Case:
    if key == "base":
        return Case("base", {}, plan.assumptions)
    name, end = key.rsplit(" ", 1)
    driver = next(d for d in DRIVERS if d.name == name)
    values, factor = settings(driver, driver.low if end == "low" else driver.high,
                              plan.assumptions)
    cell = f"${'D' if end == 'low' else 'E'}${rows[name]}"
    return Case(key, {driver_leaf(name): cell}, values, factor)


def _ranked(w: SheetWriter, order: list[Driver], first: int, last: int, base_row: int,
            totals: dict[str, Totals], swings: dict[str, float]) -> None:
    """The inputs in the order of their live swing (the Rank column), largest first: what the
    tornado draws, as changes from the live base total."""
    w.append([Styled("Inputs ranked by their live TCO swing, largest first: the tornado's data",
                     styles.TITLE)])
    w.append([Styled(h, styles.HEADER) for h in RANKED])
    base = totals["base"].values["tco_usd"]
    for k, d in enumerate(order, start=1):
        at = f"MATCH({k},$J${first}:$J${last},0)"

        def pick(column: str, cached: object, fmt: str = "General", less: str = "",
                 at: str = at) -> Formula:
            return Formula(f"=INDEX(${column}${first}:${column}${last},{at}){less}",
                           cached, fmt)  # type: ignore[arg-type]

        low, high = totals[f"{d.name} low"].values, totals[f"{d.name} high"].values
        w.append([Styled(f"rank {k}"), pick("B", d.label), pick("D", d.low, "0.00##"),
                  pick("E", d.high, "0.00##"),
                  pick("F", low["tco_usd"] - base, USD, f"-$C${base_row}"),
                  pick("G", high["tco_usd"] - base, USD, f"-$C${base_row}"),
                  pick("H", swings[d.name], USD)])


def _tornado(w: SheetWriter, order: list[Driver], totals: dict[str, Totals],
             swings: dict[str, float], ranked_first: int, anchor_row: int) -> None:
    """Bars either side of the base total TCO (the axis at zero change), largest swing on
    top: each input's low end and high end, labelled by the legend and by their values."""
    header, first, last = ranked_first - 1, ranked_first, ranked_first + len(order) - 1
    chart = BarChart()
    chart.type = "bar"
    chart.grouping = "clustered"
    chart.overlap = 100
    chart.gapWidth = 40
    chart.title = "Total TCO: change from the base with each input at its low and its high"
    for col in (5, 6):
        chart.add_data(Reference(w.ws, min_col=col, min_row=header, max_row=last),
                       titles_from_data=True)
    chart.set_categories(Reference(w.ws, min_col=2, min_row=first, max_row=last))
    chart.y_axis.title = "Change from the base total TCO [USD]"
    chart.y_axis.number_format = USD
    chart.y_axis.crosses = "max"  # the value axis below the bars (categories run top down)
    chart.x_axis.scaling.orientation = "maxMin"  # largest swing on top
    chart.x_axis.tickLblPos = "low"  # input names at the left edge, clear of the bars
    chart.x_axis.delete = False
    chart.y_axis.delete = False
    chart.legend.position = "b"
    for series in chart.series:
        series.dLbls = DataLabelList(showVal=True, showSerName=False, showCatName=False,
                                     showLegendKey=False, showPercent=False, numFmt=USD)
    chart.height, chart.width = 11, 26
    base = totals["base"].values["tco_usd"]
    cache_chart(chart, [RANKED[4], RANKED[5]], [d.label for d in order],
                [[totals[f"{d.name} low"].values["tco_usd"] - base for d in order],
                 [totals[f"{d.name} high"].values["tco_usd"] - base for d in order]])
    w.ws.add_chart(chart, f"A{anchor_row}")
