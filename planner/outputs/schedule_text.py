"""The purchase schedule as text, for `planner size --horizon N`: per workload bought a table
of its quarters (peak rate, GPUs needed, servers bought and installed, GPUs rented, capex,
depreciation, opex and cash in thousands of dollars), then the fleet's totals. Every figure is
a schedule quantity's value (planner.plan.schedule), the one the Schedule sheet caches."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from planner.outputs.terminal import money
from planner.plan.schedule import WorkloadSchedule, given_rates, totals

# (label, quantity, how a value is shown)
ROWS: list[tuple[str, str, Callable[[float], str]]] = [
    ("Peak rate [req/s]", "rate_requests_per_second", lambda x: f"{x:,.2f}"),
    ("GPUs needed", "gpus", lambda x: f"{x:,.0f}"),
    ("Servers needed", "servers", lambda x: f"{x:,.0f}"),
    ("Servers bought", "servers_bought", lambda x: f"{x:,.0f}"),
    ("Servers installed", "servers_installed", lambda x: f"{x:,.0f}"),
    ("GPUs rented", "gpus_rented", lambda x: f"{x:,.0f}"),
    ("Capex [k$]", "capex_usd", lambda x: f"{x / 1000:,.0f}"),
    ("Depreciation [k$]", "depreciation_usd", lambda x: f"{x / 1000:,.0f}"),
    ("Opex [k$]", "opex_usd", lambda x: f"{x / 1000:,.0f}"),
    ("Cash to date [k$]", "cash_usd", lambda x: f"{x / 1000:,.0f}"),
]


def table(quarters: Sequence[Mapping[str, float]], indent: str = "  ") -> list[str]:
    """Rows of quarters, right-aligned under Q1, Q2, ..."""
    cells = [[show(float(q[name])) for q in quarters] for _, name, show in ROWS
             if all(name in q for q in quarters)]
    labels = [label for label, name, _ in ROWS if all(name in q for q in quarters)]
    heads = [f"Q{i}" for i in range(1, len(quarters) + 1)]
    width = max([len(h) for h in heads] + [len(c) for row in cells for c in row]) + 2
    left = max(len(label) for label in labels)
    out = [indent + " " * left + "".join(h.rjust(width) for h in heads)]
    for label, row in zip(labels, cells, strict=True):
        out.append(indent + label.ljust(left) + "".join(c.rjust(width) for c in row))
    return out


def signed_money(x: float) -> str:
    """Money with its sign before the currency: -$1,234."""
    return f"-{money(-x)}" if x < 0 else money(x)


def _demand(s: WorkloadSchedule) -> str:
    rates = given_rates(s.workload)
    if rates:
        return "schedule " + ", ".join(f"{r:g}" for r in rates) + " req/s after Q1"
    growth = float(s.constants["growth_per_month"])  # type: ignore[arg-type]
    return f"growth {growth * 100:g} % a month" if growth else "flat demand"


def schedule_report(schedules: list[WorkloadSchedule]) -> str:
    if not schedules:
        return "Schedule: no workload is bought, so there is nothing to schedule."
    horizon = schedules[0].horizon
    rate = float(schedules[0].env.assumptions["discount_rate"])
    lines = [f"Schedule over {horizon} quarters (servers a quarter needs are ordered and paid a "
             "lead time before; cloud instances bridge until they arrive; money out negative):"]
    for s in schedules:
        c = s.env.candidate
        weeks = float(s.constants["lead_time_weeks_used"])  # type: ignore[arg-type]
        lead = int(float(s.constants["lead_quarters"]))  # type: ignore[arg-type]
        lines += ["", f"{s.workload.id}: {c.server}, TP {c.tp}; {_demand(s)}; lead time "
                      f"{weeks:g} weeks = {lead} quarter{'s' * (lead != 1)}"]
        lines += table(s.quarters)  # type: ignore[arg-type]
        lines.append(f"  NPV over {horizon} quarters at {rate * 100:g} %: "
                     f"{signed_money(s.npv_usd)}")
    if len(schedules) > 1:
        summed = totals(schedules)
        lines += ["", "All workloads bought:"]
        lines += table(summed)
        lines.append(f"  NPV over {horizon} quarters at {rate * 100:g} %: "
                     f"{signed_money(summed[-1]['discounted_cash_usd'])}")
    return "\n".join(lines)
