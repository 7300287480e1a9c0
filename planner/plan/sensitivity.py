"""What the budget is sensitive to: each key input moved to a low and a high value (with the
reason for the range), the totals recomputed for the configurations the budget chose, ranked by
swing. The workbook writes each recomputation live (what-if rows: the chosen rows' quantities
with the one input replaced, planner.outputs.workbook.whatif); `resized` re-runs the whole
search in Python, where the recommended configuration itself may change, and is labelled as
computed at build time.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace

from planner.inputs.assumptions import ASSUMPTIONS
from planner.inputs.entries import Catalog
from planner.plan.sizing import FleetEnv, Reuse, Sized, bought, size_all

SERVER_PRICE = "server_price_factor"  # a multiplier on every server's purchase price


@dataclass(frozen=True)
class Driver:
    name: str  # an assumption name, or SERVER_PRICE
    label: str
    low: float
    high: float
    reason: str


DRIVERS = [
    Driver(SERVER_PRICE, "Server prices (× catalog)", 0.8, 1.3,
           "street prices swing 20-40 % around list (tco-facts §3b); catalog prices are dated "
           "estimates"),
    Driver("electricity_usd_per_kwh", "Electricity price", 0.05, 0.15,
           "US industrial 5-8 ¢/kWh; Europe and constrained grids 12-15 ¢"),
    Driver("pue", "PUE", 1.1, 1.6, "hyperscale 1.1 to the 1.57 industry average (Uptime)"),
    Driver("colocation_usd_per_kw_month", "Colocation per kW-month", 120.0, 250.0,
           "secondary markets to constrained primary markets (CBRE 2024)"),
    Driver("amortisation_years", "Amortisation period", 4.0, 6.0,
           "Amazon's 5 years, Meta's 5.5 and Microsoft's and Alphabet's 6; 4 for a faster "
           "refresh"),
    Driver("discount_rate", "Discount rate", 0.04, 0.12,
           "after-tax cost of debt to a high hurdle rate"),
    Driver("average_power_share", "Average draw ÷ maximum", 0.6, 0.9,
           "lightly loaded to saturated inference servers"),
    Driver("target_utilisation", "Peak load ÷ capacity", 0.65, 0.9,
           "more headroom for bursts to the fleet-sim cap"),
]
DRIVER_BY_NAME = {d.name: d for d in DRIVERS}
METRICS = {
    "tco_usd": "Total TCO [USD]",
    "usd_per_million_output_tokens": "Owned cost per million output tokens, all workloads "
                                     "[USD]",
}


def driver_leaf(driver: str) -> tuple[str, str]:
    return ("server", "price_usd") if driver == SERVER_PRICE else ("assume", driver)


def _fleet_total(rows: list[FleetEnv]) -> dict[str, float]:
    def f(env: FleetEnv, name: str) -> float:
        v = env.value(name)
        return float(v) if isinstance(v, int | float) else 0.0

    tco = sum(f(e, "tco_usd") for e in rows)
    cost = sum(f(e, "annual_cost_usd") * (1 - f(e, "prefill_time_share")) for e in rows)
    tokens = sum(f(e, "average_requests_per_second") * e.workload.number("output_tokens")
                 for e in rows) * 8760 * 3600
    return {"tco_usd": tco,
            "usd_per_million_output_tokens": cost / tokens * 1e6 if tokens else 0.0}


def rerun(env: FleetEnv, assumptions: Mapping[str, float | str], factor: float = 1.0
          ) -> FleetEnv:
    """The same candidate under other assumptions (and server prices × factor)."""
    server = env.server
    if factor != 1.0:
        server = replace(server, values={**server.values,
                                         "price_usd": server.number("price_usd") * factor})
    from planner.plan.calc import ModelEnv

    out = FleetEnv(env.workload, server, env.candidate, ModelEnv(env.model.model, assumptions),
                   env.gpu, assumptions, env.speed, env.speed_end, env.offer)
    return out


@dataclass
class Swing:
    driver: Driver
    base_value: float
    low: dict[str, float]  # metric -> total with the input at its low value
    high: dict[str, float]
    resized_low: dict[str, float]  # the whole search re-run (computed at build time)
    resized_high: dict[str, float]

    def swing(self, metric: str) -> float:
        return abs(self.high[metric] - self.low[metric])


def settings(driver: Driver, value: float, assumptions: Mapping[str, float | str]
             ) -> tuple[dict[str, float | str], float]:
    if driver.name == SERVER_PRICE:
        return dict(assumptions), value
    return {**assumptions, driver.name: value}, 1.0


RESIZED = 3  # the largest swings are also re-sized (the whole search re-run)


def sensitivity(sized: list[Sized], models: Catalog, gpus: Catalog, servers: Catalog,
                workloads: Catalog, assumptions: Mapping[str, float | str],
                clouds: Catalog | None = None) -> list[Swing]:
    """Every driver at its low and high for the chosen configurations, sorted by the swing of
    total TCO, largest first; the RESIZED largest also with the whole search re-run."""
    chosen = bought(sized)
    if not chosen:
        return []
    out = []
    for driver in DRIVERS:
        ends = []
        for value in (driver.low, driver.high):
            values, factor = settings(driver, value, assumptions)
            ends.append(_fleet_total([rerun(e, values, factor) for e in chosen]))
        base_value = 1.0 if driver.name == SERVER_PRICE else float(assumptions[driver.name])
        out.append(Swing(driver, base_value, ends[0], ends[1], {}, {}))
    out.sort(key=lambda s: -s.swing("tco_usd"))
    names = [s.workload.id for s in sized]
    for swing in out[:RESIZED]:
        resized = []
        for value in (swing.driver.low, swing.driver.high):
            values, factor = settings(swing.driver, value, assumptions)
            priced = servers if factor == 1.0 else _scaled(servers, factor)
            again = size_all(workloads, models, gpus, priced, values, names, clouds,
                             Reuse(sized, [driver_leaf(swing.driver.name)]))
            resized.append(_fleet_total(bought(again)))
        swing.resized_low, swing.resized_high = resized
    return out


def _scaled(servers: Catalog, factor: float) -> Catalog:
    entries = {k: replace(e, values={**e.values, "price_usd": e.number("price_usd") * factor})
               for k, e in servers.entries.items()}
    return replace(servers, entries=entries)


def base_totals(sized: list[Sized]) -> dict[str, float]:
    return _fleet_total(bought(sized))


def totals_with(sized: list[Sized], assumptions: Mapping[str, float | str],
                changes: Mapping[str, float]) -> dict[str, float]:
    """The totals for the chosen configurations with some inputs changed (a scenario)."""
    values: dict[str, float | str] = dict(assumptions)
    factor = 1.0
    for name, value in changes.items():
        if name == SERVER_PRICE:
            factor = value
        else:
            values[name] = value
    return _fleet_total([rerun(e, values, factor) for e in bought(sized)])


def label(name: str) -> str:
    if name in DRIVER_BY_NAME:
        return DRIVER_BY_NAME[name].label
    return ASSUMPTIONS[name].label

