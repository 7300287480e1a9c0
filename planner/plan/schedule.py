"""Evaluate each bought workload's purchase schedule (planner.model.schedule) for the
configuration the plan chose: quarter by quarter over horizon_quarters, the same definitions
the workbook's Schedule sheet renders. Pure: sized workloads in, values out; `planner size`,
`planner build` and the tests call it alike."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from planner.errors import ArgumentError
from planner.inputs.entries import Entry
from planner.model.expr import Value, XlError
from planner.model.schedule import QUARTER_BY_NAME, QUARTER_QUANTITIES, SCHEDULE_CONSTANTS, TOTALLED
from planner.plan.sizing import FleetEnv, Sized

# JSON key of each schedule entry -> the schedule quantity it reports ("quarter": the number).
JSON_KEYS = {
    "quarter": "",
    "peak_rate_rps": "rate_requests_per_second",
    "gpus_needed": "gpus",
    "servers_needed": "servers",
    "servers_bought": "servers_bought",
    "servers_installed": "servers_installed",
    "gpus_installed": "gpus_installed",
    "gpus_rented": "gpus_rented",
    "capex_usd": "capex_usd",
    "depreciation_usd": "depreciation_usd",
    "rent_usd": "rent_usd",
    "opex_usd": "opex_usd",
    "cash_usd": "cash_usd",
    "npv_to_date_usd": "discounted_cash_usd",
}


def horizon_quarters(assumptions: Mapping[str, float | str]) -> int:
    """The horizon_quarters assumption as a whole number of quarters."""
    value = float(assumptions["horizon_quarters"])
    if not value.is_integer():
        raise ArgumentError(f"--set horizon_quarters={value:g}: must be a whole number of "
                            "quarters, e.g. 8")
    return int(value)


def given_rates(workload: Entry) -> list[float]:
    """The workload's schedule: peak rates of quarters 2, 3, ... (empty when it gives none)."""
    value = workload.values.get("schedule")
    return [float(x) for x in value] if isinstance(value, list) else []


@dataclass
class WorkloadSchedule:
    """One workload's schedule: its constants and, per quarter, every schedule quantity."""

    env: FleetEnv  # the configuration the plan chose
    horizon: int
    constants: dict[str, Value] = field(default_factory=dict)
    quarters: list[dict[str, Value]] = field(default_factory=list)  # [0] is quarter 1

    @property
    def workload(self) -> Entry:
        return self.env.workload

    def value(self, name: str, quarter: int) -> Value:
        return self.quarters[quarter - 1][name]

    def number(self, name: str, quarter: int) -> float:
        value = self.value(name, quarter)
        return float(value) if isinstance(value, int | float) else math.nan

    def row(self, name: str) -> list[float]:
        return [self.number(name, i) for i in range(1, self.horizon + 1)]

    def given(self, quarter: int) -> float:
        """The schedule's peak rate for `quarter`; 0 where it gives none."""
        rates = given_rates(self.workload)
        return rates[quarter - 2] if 2 <= quarter <= len(rates) + 1 else 0.0

    @property
    def npv_usd(self) -> float:
        return self.number("discounted_cash_usd", self.horizon)


class QuarterEnv:
    """The leaves of one quarter's expressions: schedule cells of this, the previous or any
    quarter, the workload's constants, and everything else from the chosen fleet row."""

    def __init__(self, schedule: WorkloadSchedule, quarter: int) -> None:
        self.schedule = schedule
        self.quarter = quarter

    def lookup(self, kind: str, name: str) -> Value:
        s = self.schedule
        if kind == "quarter":
            return s.quarters[self.quarter - 1][name]
        if kind == "previous":
            return s.quarters[self.quarter - 2][name]
        if kind == "constant":
            return s.constants[name]
        if kind == "index":
            return self.quarter
        if kind == "given":
            return s.given(self.quarter)
        return s.env.lookup(kind, name)

    def at(self, name: str, index: int) -> Value:
        return self.schedule.quarters[index - 1][name]


def _typed(value: Value, kind: str) -> Value:
    if kind == "int" and isinstance(value, float) and not isinstance(value, bool) and (
            value.is_integer()):
        return int(value)
    return value


def evaluate_schedule(env: FleetEnv, horizon: int) -> WorkloadSchedule:
    """Every schedule quantity of the chosen row, row by row over the quarters (a row reads
    earlier rows in any quarter and its own in the quarter before)."""
    schedule = WorkloadSchedule(env, horizon)
    outside = QuarterEnv(schedule, 0)
    for c in SCHEDULE_CONSTANTS:
        schedule.constants[c.name] = _typed(c.expr.evaluate(outside), c.kind)
    schedule.quarters = [{} for _ in range(horizon)]
    for quantity in QUARTER_QUANTITIES:
        for quarter in range(1, horizon + 1):
            value = quantity.expr(quarter, horizon).evaluate(QuarterEnv(schedule, quarter))
            schedule.quarters[quarter - 1][quantity.name] = _typed(value, quantity.kind)
    return schedule


def plan_schedules(sized: list[Sized]) -> list[WorkloadSchedule]:
    """The schedule of every workload bought (a workload no candidate meets buys nothing)."""
    out = []
    for s in sized:
        if s.met and s.choice is not None:
            out.append(evaluate_schedule(s.choice, horizon_quarters(s.choice.assumptions)))
    return out


def totals(schedules: list[WorkloadSchedule]) -> list[dict[str, float]]:
    """Per quarter, the sums over the workloads of the totalled quantities."""
    if not schedules:
        return []
    horizon = schedules[0].horizon
    return [{name: sum(s.number(name, i) for s in schedules) for name in TOTALLED}
            for i in range(1, horizon + 1)]


# -- JSON ------------------------------------------------------------------------------------

def _json_value(value: Value, kind: str) -> float | int | str:
    if isinstance(value, XlError):
        return str(value)
    if isinstance(value, bool) or not isinstance(value, int | float):
        return str(value)
    return int(value) if kind == "int" else float(value)


def schedule_entries(values: Sequence[Mapping[str, Value]]) -> list[dict[str, object]]:
    out = []
    for i, quarter in enumerate(values, start=1):
        entry: dict[str, object] = {}
        for key, name in JSON_KEYS.items():
            if not name:
                entry[key] = i
            elif name in quarter:
                entry[key] = _json_value(quarter[name], QUARTER_BY_NAME[name].kind)
        out.append(entry)
    return out


def add_schedules(data: dict[str, object], results: list[Sized]) -> dict[str, object]:
    """`size_json`'s output with each workload's schedule and the fleet's, per quarter, and the
    schedule's NPV (money out negative) at discount_rate."""
    schedules = {s.workload.id: s for s in plan_schedules(results)}
    for entry in data["workloads"]:  # type: ignore[attr-defined]
        s = schedules.get(entry["workload"])
        entry["schedule"] = schedule_entries(s.quarters) if s else []
        entry["schedule_npv_usd"] = s.npv_usd if s else None
        entry["lead_time_weeks"] = (float(s.constants["lead_time_weeks_used"])  # type: ignore[arg-type]
                                    if s else None)
        entry["lead_quarters"] = int(s.constants["lead_quarters"]) if s else None  # type: ignore[arg-type]
    summed = totals(list(schedules.values()))
    fleet = data["totals"]
    fleet["schedule"] = schedule_entries(summed)  # type: ignore[index]
    fleet["schedule_npv_usd"] = (  # type: ignore[index]
        summed[-1]["discounted_cash_usd"] if summed else 0.0)
    fleet["horizon_quarters"] = (  # type: ignore[index]
        next(iter(schedules.values())).horizon if schedules else None)
    return data
