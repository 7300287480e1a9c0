"""The HTML summary's timeline: when to buy as demand changes. A chart of the fleet's GPUs
needed, installed and rented by quarter and one of capex by quarter, then per workload bought a
table of its quarters. Every figure is a schedule quantity's value (planner.plan.schedule), the
one the workbook's Schedule sheet caches."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from markupsafe import Markup

from planner.outputs.html.svgcharts import NARROW, WIDTH, Series, bar_chart, line_chart
from planner.outputs.schedule_text import signed_money
from planner.outputs.terminal import money
from planner.plan.plan import Plan
from planner.plan.schedule import WorkloadSchedule, given_rates, horizon_quarters, totals


def dollars(x: float) -> str:
    """Whole dollars, zero as $0."""
    return money(x) if x else "$0"


# (label, quantity, how a value is shown)
ROWS: list[tuple[str, str, Callable[[float], str]]] = [
    ("Peak rate", "rate_requests_per_second", lambda x: f"{x:,.1f} req/s"),
    ("GPUs needed", "gpus", lambda x: f"{x:,.0f}"),
    ("Servers needed", "servers", lambda x: f"{x:,.0f}"),
    ("Servers bought", "servers_bought", lambda x: f"{x:,.0f}"),
    ("Servers installed", "servers_installed", lambda x: f"{x:,.0f}"),
    ("GPUs installed", "gpus_installed", lambda x: f"{x:,.0f}"),
    ("GPUs rented", "gpus_rented", lambda x: f"{x:,.0f}"),
    ("Capex", "capex_usd", dollars),
    ("Depreciation", "depreciation_usd", dollars),
    ("Rent", "rent_usd", dollars),
    ("Opex (rent included)", "opex_usd", dollars),
    ("Cash to date", "cash_usd", signed_money),
]


@dataclass(frozen=True)
class ScheduleTable:
    workload: str
    name: str
    plan: str  # what was chosen, its demand and lead time
    rows: list[tuple[str, list[str]]]
    npv: str


def _rows(quarters: Sequence[Mapping[str, object]]) -> list[tuple[str, list[str]]]:
    return [(label, [show(float(q[name])) for q in quarters])  # type: ignore[arg-type]
            for label, name, show in ROWS if all(name in q for q in quarters)]


def _demand(s: WorkloadSchedule) -> str:
    rates = given_rates(s.workload)
    if rates:
        return "peak rates after the first quarter " + ", ".join(f"{r:g}" for r in rates) + \
            " req/s"
    growth = float(s.constants["growth_per_month"])  # type: ignore[arg-type]
    return f"growing {growth * 100:g} % a month" if growth else "flat demand"


def table(s: WorkloadSchedule) -> ScheduleTable:
    c = s.env.candidate
    weeks = float(s.constants["lead_time_weeks_used"])  # type: ignore[arg-type]
    lead = int(float(s.constants["lead_quarters"]))  # type: ignore[arg-type]
    return ScheduleTable(
        s.workload.id, s.workload.name,
        f"{s.env.server.name}, TP {c.tp}; {_demand(s)}; lead time {weeks:g} weeks "
        f"({lead} quarter{'s' * (lead != 1)})",
        _rows(s.quarters), signed_money(s.npv_usd))


def charts(summed: list[dict[str, float]]) -> dict[str, dict[str, Markup]]:
    """The two timeline charts, each drawn for the page and again for a phone's width."""
    quarters = range(1, len(summed) + 1)

    def gpus(width: float) -> str:
        return line_chart(
            "GPUs by quarter, all workloads bought", "quarter", "GPUs",
            [Series("needed", [(q, t["gpus"]) for q, t in zip(quarters, summed, strict=True)]),
             Series("installed", [(q, t["gpus_installed"])
                                  for q, t in zip(quarters, summed, strict=True)]),
             Series("rented", [(q, t["gpus_rented"])
                               for q, t in zip(quarters, summed, strict=True)])],
            description="Servers are ordered a lead time before the quarter that needs them; "
                        "cloud GPUs carry the load until they arrive.",
            x_ticks=[float(q) for q in quarters], width=width)

    def capex(width: float) -> str:
        return bar_chart(
            "Capex by quarter (paid when ordered), all workloads bought", "capex, USD",
            [(f"Q{q}", t["capex_usd"]) for q, t in zip(quarters, summed, strict=True)],
            value_format=dollars, width=width)

    return {name: {"wide": Markup(draw(WIDTH)), "narrow": Markup(draw(NARROW))}
            for name, draw in (("gpus", gpus), ("capex", capex))}


def schedule_context(plan: Plan) -> dict[str, object]:
    schedules = plan.schedules
    summed = totals(schedules)
    horizon = horizon_quarters(plan.assumptions) if plan.sized else 0
    return {
        "schedule": [table(s) for s in schedules],
        "schedule_horizon": horizon,
        "schedule_heads": [f"Q{q}" for q in range(1, horizon + 1)],
        "schedule_totals": _rows(summed) if len(schedules) > 1 else [],
        "schedule_npv": signed_money(summed[-1]["discounted_cash_usd"]) if summed else "",
        "schedule_discount": f"{float(plan.assumptions['discount_rate']) * 100:g} %",
        "schedule_charts": charts(summed) if summed else {},
    }
