"""The HTML summary's first section: for each workload what to buy and what it costs, whether
each target is met, and the best option on the other server types. Every figure is a fleet
quantity's value, the same the workbook's Budget sheet caches."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from markupsafe import Markup

from planner.outputs.html.svgcharts import tornado_chart
from planner.outputs.terminal import money, seconds_text
from planner.plan.plan import Plan
from planner.plan.sensitivity import SERVER_PRICE, base_totals
from planner.plan.sizing import FleetEnv, Sized, bought

STALE_MONTHS = 12


def months_old(date: str, today: dt.date) -> int:
    year, month = (int(x) for x in date.split("-")[:2])
    return (today.year - year) * 12 + today.month - month


@dataclass(frozen=True)
class Price:
    text: str
    date: str
    stale: bool


def price(amount: str, date: str, today: dt.date) -> Price:
    return Price(amount, date, months_old(date, today) > STALE_MONTHS)


@dataclass(frozen=True)
class Target:
    name: str
    achieved: str
    target: str
    met: bool


@dataclass(frozen=True)
class Option:
    server: str
    config: str
    gpus: int
    tco: str
    verdict: str


@dataclass(frozen=True)
class BudgetCard:
    workload: str
    name: str
    traffic: str
    meets: bool
    verdict: str
    buy: str
    run: str
    power: str
    server_price: Price
    cloud_price: Price
    capex: str
    opex_year: str
    opex_month: str
    tco: str
    years: str
    per_million_output: str
    per_million_input: str
    cloud_on_demand: str
    cloud_reserved: str
    break_even: str
    targets: list[Target]
    options: list[Option]
    source: str


def _f(env: FleetEnv, name: str) -> float:
    value = env.value(name)
    return float(value) if isinstance(value, int | float) else 0.0


def _i(env: FleetEnv, name: str) -> int:
    return int(_f(env, name))


def _config(env: FleetEnv) -> str:
    c = env.candidate
    return f"{c.weights.upper()} weights, {c.kv.upper()} KV, TP {c.tp}"


def card(sized: Sized, today: dt.date) -> BudgetCard:
    env = sized.choice
    assert env is not None
    wl, c, server, gpu = sized.workload, env.candidate, env.server, env.gpu
    meets = sized.met
    percentile = f"p{_f(env, 'latency_percentile_used') * 100:g}"
    targets = [
        Target(f"Inter-token latency at {percentile} (mean {seconds_text(_f(env, 'itl_seconds'))})",
               seconds_text(_f(env, "itl_percentile_seconds")),
               seconds_text(wl.number("itl_s")), bool(env.value("meets_itl"))),
        Target(f"Time to first token at {percentile}, queued (mean "
               f"{seconds_text(_f(env, 'ttft_mean_seconds'))})",
               seconds_text(_f(env, "ttft_percentile_seconds")),
               seconds_text(wl.number("ttft_s")), bool(env.value("meets_ttft"))),
        Target("Capacity at peak", f"{_f(env, 'capacity_requests_per_second'):,.1f} req/s",
               f"{_f(env, 'rate_requests_per_second'):,.1f} req/s",
               _f(env, "capacity_requests_per_second") >= _f(env, "rate_requests_per_second")),
    ]
    options = [Option(o.server.name, _config(o), _i(o, "gpus"), money(_f(o, "tco_usd")),
                      "meets every target" if o.value("meets_targets") else
                      f"misses {o.value('failing_target')}")
               for o in sized.alternatives()]
    used, bought = _i(env, "gpus"), _i(env, "servers") * int(server.number("gpus_per_server"))
    spare = int(wl.number("spare_replicas"))
    return BudgetCard(
        workload=wl.id, name=wl.name,
        traffic=(f"{wl.text('model')}, {_f(env, 'rate_requests_per_second'):,.2f} requests/s at "
                 f"peak, {int(wl.number('prompt_tokens')):,} prompt + "
                 f"{int(wl.number('output_tokens')):,} output tokens per request"),
        meets=meets,
        verdict="meets every target" if meets else
        f"cannot be met: {sized.cannot_meet}; nothing is bought for it, and the totals leave "
        "it out",
        buy=(f"{_i(env, 'servers')} × {server.name} = {bought} {gpu.name} GPUs"
             + (f" ({used} in use)" if used != bought else "")
             + f", in {_i(env, 'racks')} rack{'s' if _i(env, 'racks') != 1 else ''}"),
        run=(f"{_config(env)}; {_i(env, 'replicas')} replicas of {c.tp} GPU"
             f"{'s' if c.tp > 1 else ''} ({spare} spare), {_i(env, 'batch_chosen')} sequences "
             "each"),
        power=(f"{_f(env, 'it_power_w') / 1000:,.1f} kW IT at maximum, "
               f"{_f(env, 'facility_power_w') / 1000:,.1f} kW with PUE"),
        server_price=price(money(server.number("price_usd")), server.text("price_date"), today),
        cloud_price=price(f"${gpu.number('price_per_hour_usd'):,.2f}/GPU-hour",
                          gpu.text("price_date"), today),
        capex=money(_f(env, "capex_usd")), opex_year=money(_f(env, "opex_usd_per_year")),
        opex_month=money(_f(env, "opex_usd_per_year") / 12), tco=money(_f(env, "tco_usd")),
        years=f"{float(env.assumptions['amortisation_years']):g}",
        per_million_output=money(_f(env, "usd_per_million_output_tokens")),
        per_million_input=money(_f(env, "usd_per_million_input_tokens")),
        cloud_on_demand=money(_f(env, "cloud_usd_per_year")),
        cloud_reserved=money(_f(env, "cloud_reserved_usd_per_year")),
        break_even=(f"owning breaks even above {100 * _f(env, 'break_even_utilisation'):.0f} % "
                    "utilisation" if _f(env, "break_even_utilisation") <= 1 else
                    "renting on demand costs less than owning even at full use"),
        targets=targets, options=options, source=wl.source)


@dataclass(frozen=True)
class BudgetTotals:
    gpus: int
    servers: int
    racks: int
    it_kw: str
    capex: str
    opex_year: str
    tco: str


def budget_context(plan: Plan) -> dict[str, object]:
    today = dt.date.today()
    cards = [card(s, today) for s in plan.sized]
    chosen = bought(plan.sized)
    totals = BudgetTotals(
        gpus=sum(_i(e, "gpus") for e in chosen), servers=sum(_i(e, "servers") for e in chosen),
        racks=sum(_i(e, "racks") for e in chosen),
        it_kw=f"{sum(_f(e, 'it_power_w') for e in chosen) / 1000:,.1f}",
        capex=money(sum(_f(e, "capex_usd") for e in chosen)),
        opex_year=money(sum(_f(e, "opex_usd_per_year") for e in chosen)),
        tco=money(sum(_f(e, "tco_usd") for e in chosen)))
    a = plan.assumptions
    site = {"pue": f"{float(a['pue']):g}",
            "electricity": f"${float(a['electricity_usd_per_kwh']):g}",
            "colocation": f"${float(a['colocation_usd_per_kw_month']):,.2f}",
            "years": f"{float(a['amortisation_years']):g}",
            "discount": f"{100 * float(a['discount_rate']):g} %",
            "utilisation": f"{100 * float(a['target_utilisation']):g} %", "engine": a["engine"]}
    return {"budget": cards, "budget_totals": totals, "site": site,
            "stale_months": STALE_MONTHS, "sensitivity": sensitivity_context(plan),
            "scenarios": scenario_rows(plan)}


@dataclass(frozen=True)
class ScenarioRow:
    name: str
    description: str
    changes: str
    tco: str
    per_million: str


def scenario_rows(plan: Plan) -> list[ScenarioRow]:
    rows = []
    for s, totals in zip(plan.scenarios, plan.scenario_totals, strict=True):
        changes = ", ".join(f"{k} {_setting(k, v)}" for k, v in s.changes.items()) or "none"
        rows.append(ScenarioRow(s.name, s.description, changes, money(totals["tco_usd"]),
                                money(totals["usd_per_million_output_tokens"])))
    return rows


@dataclass(frozen=True)
class SwingRow:
    label: str
    today: str
    low: str
    high: str
    tco_low: str
    tco_high: str
    per_million_low: str
    per_million_high: str
    resized: str
    reason: str


def _setting(name: str, value: float) -> str:
    return f"× {value:g}" if name == SERVER_PRICE else f"{value:g}"


def sensitivity_context(plan: Plan) -> dict[str, object] | None:
    if not plan.swings:
        return None
    base = base_totals(plan.sized)
    rows = []
    for s in plan.swings:
        d = s.driver
        resized = (f"{money(s.resized_low['tco_usd'])} to {money(s.resized_high['tco_usd'])}"
                   if s.resized_low else "—")
        rows.append(SwingRow(d.label, _setting(d.name, s.base_value), _setting(d.name, d.low),
                             _setting(d.name, d.high), money(s.low["tco_usd"]),
                             money(s.high["tco_usd"]),
                             money(s.low["usd_per_million_output_tokens"]),
                             money(s.high["usd_per_million_output_tokens"]), resized,
                             d.reason))
    chart = tornado_chart(
        "Total TCO with each input at its low and high", "Total TCO [USD]", base["tco_usd"],
        [(s.driver.label, s.low["tco_usd"], s.high["tco_usd"]) for s in plan.swings],
        description="Each input moved alone, the configurations the budget chose kept.",
        value_format=lambda v: money(v))
    return {"rows": rows, "chart": Markup(chart), "base": money(base["tco_usd"])}
