"""The Schedule sheet: per bought workload, a column per quarter of what to buy as demand
changes, the cloud capacity that bridges the lead time, capex, depreciation, opex and cash, and
the fleet's totals. Every cell renders a definition of ``planner.model.schedule`` for the
configuration the Budget picked (read with INDEX at its pick, as Scenarios does), so editing a
growth rate (Workloads), a lead time (Servers), a quarter's peak rate (the blue cells here) or
an assumption re-plans on recalculation."""

from __future__ import annotations

from dataclasses import dataclass

from openpyxl.utils import get_column_letter, quote_sheetname

from planner.model.schedule import (
    QUARTER_BY_NAME,
    QUARTER_QUANTITIES,
    SCHEDULE_CONSTANTS,
    TOTALLED,
)
from planner.outputs.workbook import styles
from planner.outputs.workbook.catalog_sheets import Namer
from planner.outputs.workbook.cells import Cell, Formula, Input, SheetWriter, Styled
from planner.outputs.workbook.fleet_sheets import FleetBlock, PickedRowRenderer
from planner.outputs.workbook.layout import BUDGET, absolute_cell
from planner.plan.plan import Plan
from planner.plan.schedule import WorkloadSchedule, horizon_quarters, totals

SCHEDULE = "Schedule"
FIRST_QUARTER_COLUMN = 3  # A: what, B: the workload's constants, C on: quarters
USD = '"$"#,##0'
QUARTER_FORMAT = '"Q"0'
GIVEN_LABEL = "Peak rate the schedule gives [requests/s]"


def _column(quarter: int) -> str:
    return get_column_letter(FIRST_QUARTER_COLUMN + quarter - 1)


def _format(kind: str, display: str, unit: str) -> str:
    if display == "usd":
        return USD
    if display == "ratio" and unit == "fraction":
        return "0.00%"
    return styles.number_format(display, kind, unit)


def _label(label: str, unit: str) -> str:
    return f"{label} [{unit}]"


@dataclass
class ScheduleRenderer:
    """Leaves of one quarter's formula: schedule cells of this or the previous quarter's column
    or of any quarter of the row (INDEX), the workload's constants in column B, and the chosen
    Fleet row for everything else."""

    picked: PickedRowRenderer
    rows: dict[str, int]  # schedule quantity or constant -> its row
    header_row: int  # the quarter numbers
    given_row: int
    quarter: int
    horizon: int

    def ref(self, kind: str, name: str) -> str:
        if kind == "quarter":
            return f"{_column(self.quarter)}{self.rows[name]}"
        if kind == "previous":
            return f"{_column(self.quarter - 1)}{self.rows[name]}"
        if kind == "constant":
            return f"$B${self.rows[name]}"
        if kind == "index":
            return f"{_column(self.quarter)}${self.header_row}"
        if kind == "given":
            return f"{_column(self.quarter)}{self.given_row}"
        return self.picked.ref(kind, name)

    def at(self, name: str, index: str) -> str:
        row = self.rows[name]
        return (f"INDEX(${_column(1)}${row}:${_column(self.horizon)}${row},1,{index})")


def _block(w: SheetWriter, s: WorkloadSchedule, picked: PickedRowRenderer) -> dict[str, int]:
    """One workload's rows; returns the row of each quantity."""
    horizon = s.horizon
    wl = s.workload
    c = s.env.candidate
    w.append([Styled(f"{wl.id}: {wl.name}", styles.TITLE)])
    w.append([Styled(f"{c.server} ({c.gpu}, {c.weights} weights, {c.kv} KV cache, TP {c.tp}) "
                     "as the Budget chose it at the first quarter's peak", styles.NOTE)])
    header_row = w.row + 1
    w.append([Styled("Quantity [unit]", styles.HEADER), Styled("Workload", styles.HEADER)]
             + [Styled(i, styles.HEADER, QUARTER_FORMAT) for i in range(1, horizon + 1)]
             + [Styled("What it is", styles.HEADER)])
    rows: dict[str, int] = {}
    row = header_row
    for constant in SCHEDULE_CONSTANTS:
        row += 1
        rows[constant.name] = row
    given_row = row + 1
    for i, quantity in enumerate(QUARTER_QUANTITIES):
        rows[quantity.name] = given_row + 1 + i
    outside = ScheduleRenderer(picked, rows, header_row, given_row, 1, horizon)
    blank: list[Cell] = [None] * horizon
    for constant in SCHEDULE_CONSTANTS:
        w.append([Styled(_label(constant.label, constant.unit)),
                  Formula(constant.expr.formula(outside), s.constants[constant.name],
                          _format(constant.kind, constant.display, constant.unit)),
                  *blank, Styled(constant.description, styles.NOTE)])
    given: list[Cell] = [Styled(GIVEN_LABEL), None, Styled("plan's", styles.NOTE)]
    for quarter in range(2, horizon + 1):
        rate = s.given(quarter)
        given.append(Input(rate if rate else None, "#,##0.00"))
    w.append(given + [Styled("the workload's schedule: type a rate to override the growth in "
                             "that quarter; blank: the previous quarter's × (1 + growth)^3",
                             styles.NOTE)])
    for quantity in QUARTER_QUANTITIES:
        cells: list[Cell] = [Styled(_label(quantity.label, quantity.unit)), None]
        fmt = _format(quantity.kind, quantity.display, quantity.unit)
        for quarter in range(1, horizon + 1):
            r = ScheduleRenderer(picked, rows, header_row, given_row, quarter, horizon)
            cells.append(Formula(quantity.expr(quarter, horizon).formula(r),
                                 s.value(quantity.name, quarter), fmt))
        w.append([*cells, Styled(quantity.description, styles.NOTE)])
    w.append([])
    return rows


def write_schedule(w: SheetWriter, plan: Plan, blocks: dict[str, FleetBlock],
                   picks: dict[str, int], name: Namer) -> None:
    horizon = horizon_quarters(plan.assumptions)
    w.widths([52, 14] + [14.0] * horizon + [100])
    styles.print_setup(w.ws)
    w.append([Styled("Schedule: what to buy each quarter as demand changes, and what it costs",
                     styles.TITLE)])
    w.append([Styled("For each workload bought, the configuration the Budget chose, sized at "
                     "each quarter's peak. Servers a quarter needs are ordered (and paid) a "
                     "lead time before; cloud instances carry the replicas until they arrive. "
                     "Edit a growth rate (Workloads), a lead time (Servers), a quarter's peak "
                     "rate (blue cells) or an assumption and the schedule follows on "
                     "recalculation.", styles.NOTE)])
    w.append([])
    block_rows: list[dict[str, int]] = []
    for s in plan.schedules:
        wid = s.workload.id
        pick = f"{quote_sheetname(BUDGET)}!$B${picks[wid]}"
        block_rows.append(_block(w, s, PickedRowRenderer(blocks[wid], pick)))
    for sized in plan.sized:
        if not sized.met:
            w.append([Styled(f"{sized.workload.id}: no candidate meets its targets; nothing is "
                             "bought, so it has no schedule.", styles.NOTE)])
    if not plan.schedules:
        w.append([Styled("No workload is bought, so there is no schedule.", styles.NOTE)])
        styles.protect(w.ws)
        return
    if any(not s.met for s in plan.sized):
        w.append([])
    w.append([Styled("Totals of the workloads bought", styles.TITLE)])
    w.append([Styled("Quantity [unit]", styles.HEADER), Styled("", styles.HEADER)]
             + [Styled(i, styles.HEADER, QUARTER_FORMAT) for i in range(1, horizon + 1)])
    summed = totals(plan.schedules)
    npv_row = 0
    for total in TOTALLED:
        quantity = QUARTER_BY_NAME[total]
        fmt = _format(quantity.kind, quantity.display, quantity.unit)
        label = ("Peak rate, all workloads" if total == "rate_requests_per_second" else
                 quantity.label)
        cells: list[Cell] = [Styled(_label(label, quantity.unit)), None]
        for quarter in range(1, horizon + 1):
            col = _column(quarter)
            parts = ",".join(f"{col}{rows[total]}" for rows in block_rows)
            cells.append(Formula(f"=SUM({parts})", summed[quarter - 1][total], fmt))
        npv_row = w.append(cells)
    w.append([])
    npv = summed[-1]["discounted_cash_usd"]
    row = w.append([Styled(f"Net present value over {horizon} quarters at discount_rate, money "
                           "out negative [USD]"),
                    Formula(f"={_column(horizon)}{npv_row}", npv, USD)])
    name("schedule_npv_usd", absolute_cell(SCHEDULE, "B", row))
    w.append([Styled("The quarters are the columns written at build time: planner build --set "
                     "horizon_quarters=N for another horizon.", styles.NOTE)])
    styles.protect(w.ws)
