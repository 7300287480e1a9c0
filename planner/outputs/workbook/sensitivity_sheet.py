"""The Sensitivity sheet: each key input at a low and a high value, the budget totals
recomputed as live formulas for the configurations the Budget chose (the chosen rows'
quantities re-rendered with the one input replaced by the low or high cell), the swing, and the
totals with the whole search re-run, computed at build time; a tornado chart of the swings."""

from __future__ import annotations

from collections.abc import Sequence

from openpyxl.chart import BarChart, Reference
from openpyxl.utils import quote_sheetname

from planner.model.quantities import QUANTITY_BY_NAME
from planner.outputs.workbook import styles
from planner.outputs.workbook.cells import Cell, Formula, Input, SheetWriter, Styled
from planner.outputs.workbook.chart_cache import cache_chart
from planner.outputs.workbook.fleet_sheets import FleetBlock, PickedRowRenderer
from planner.outputs.workbook.layout import BUDGET
from planner.plan.plan import Plan
from planner.plan.sensitivity import METRICS, SERVER_PRICE, SubstitutingRenderer, Swing, driver_leaf

USD = '"$"#,##0'
USD_CENTS = '"$"#,##0.0000'
MAX_FORMULA = 8000  # Excel allows 8,192 characters in a formula


def metric_formula(metric: str, renderers: Sequence[object]) -> str:
    def term(r: object, name: str) -> str:
        return "(" + QUANTITY_BY_NAME[name].expr.render(r) + ")"  # type: ignore[arg-type]

    if metric == "tco_usd":
        return "=" + "+".join(term(r, "tco_usd") for r in renderers)
    cost = "+".join(f"{term(r, 'annual_cost_usd')}*(1-{term(r, 'prefill_time_share')})"
                    for r in renderers)
    tokens = "+".join(f"{term(r, 'average_requests_per_second')}*"
                      f"{r.ref('workload', 'output_tokens')}"  # type: ignore[attr-defined]
                      for r in renderers)
    return f"=({cost})/(({tokens})*31536000)*1000000"


def write_sensitivity(w: SheetWriter, plan: Plan, blocks: dict[str, FleetBlock],
                      picks: dict[str, int], swings: list[Swing]) -> None:
    w.widths([30, 34, 12, 12, 12, 18, 18, 18, 18, 18, 18, 18, 60])
    styles.print_setup(w.ws)
    w.append([Styled("Sensitivity: what moves the budget", styles.TITLE)])
    w.append([Styled("Each input at its low and high (editable), the other inputs as they are. "
                     "The totals are live formulas for the configurations the Budget chose; "
                     "'re-sized' columns re-run the whole search, so the choice may change: "
                     "computed at build time, not formulas. Rows are ordered by the TCO swing "
                     "at build time.", styles.NOTE)])
    w.append([])
    header = ["Input", "What it is", "Today", "Low", "High",
              "Total TCO, low [USD]", "Total TCO, high [USD]", "TCO swing [USD]",
              "$/M output, low [USD]", "$/M output, high [USD]",
              "TCO re-sized, low [USD] (build time)", "TCO re-sized, high [USD] (build time)",
              "Why this range"]
    w.append([Styled(h, styles.HEADER) for h in header])
    first = w.row + 1
    order = [s.workload.id for s in plan.sized if s.met]
    long_rows: list[str] = []
    for swing in swings:
        d = swing.driver
        row = w.row + 1
        cells: list[Cell] = [Styled(d.name), Styled(d.label)]
        today = (Styled(1.0, styles.TEXT, "0.00") if d.name == SERVER_PRICE
                 else Formula(f"={d.name}", swing.base_value, "0.00##", styles.LINK))
        cells += [today, Input(d.low, "0.00##"), Input(d.high, "0.00##")]
        for metric in METRICS:
            for column, cached in (("D", swing.low), ("E", swing.high)):
                renderers = [SubstitutingRenderer(
                    PickedRowRenderer(blocks[wid], f"{quote_sheetname(BUDGET)}!$B${picks[wid]}"),
                    driver_leaf(d.name), f"${column}${row}") for wid in order]
                formula = metric_formula(metric, renderers)
                fmt = USD if metric == "tco_usd" else USD_CENTS
                if len(formula) > MAX_FORMULA:  # Excel's limit: the value, labelled
                    cells.append(Styled(cached[metric], styles.TEXT, fmt))
                    long_rows.append(d.label)
                else:
                    cells.append(Formula(formula, cached[metric], fmt))
            if metric == "tco_usd":
                cells.append(Formula(f"=MAX(G{row}-F{row},F{row}-G{row})", swing.swing(metric),
                                     USD))
        for key in ("resized_low", "resized_high"):
            values = getattr(swing, key)
            cells.append(Styled(values["tco_usd"], styles.TEXT, USD) if values
                         else Styled("not re-run"))
        cells.append(Styled(d.reason, styles.WRAP))
        w.append(cells)
    last = w.row
    if long_rows:
        w.append([Styled("Computed at build time (the formula would exceed Excel's 8,192 "
                         f"characters): {', '.join(sorted(set(long_rows)))}.", styles.NOTE)])
    _tornado(w, swings, first, last)
    styles.protect(w.ws)


def _tornado(w: SheetWriter, swings: list[Swing], first: int, last: int) -> None:
    chart = BarChart()
    chart.type = "bar"
    chart.grouping = "clustered"
    chart.overlap = 100
    chart.title = "Total TCO with each input at its low and high [USD]"
    for col in (6, 7):
        chart.add_data(Reference(w.ws, min_col=col, min_row=first - 1, max_row=last),
                       titles_from_data=True)
    chart.set_categories(Reference(w.ws, min_col=2, min_row=first, max_row=last))
    chart.y_axis.title = "Total TCO [USD]"
    chart.x_axis.scaling.orientation = "maxMin"  # largest swing on top
    chart.height, chart.width = 10, 24
    labels = [s.driver.label for s in swings]
    cache_chart(chart, ["Total TCO, low [USD]", "Total TCO, high [USD]"], labels,
                [[s.low["tco_usd"] for s in swings], [s.high["tco_usd"] for s in swings]])
    w.ws.add_chart(chart, f"A{w.row + 3}")
