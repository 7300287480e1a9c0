"""The HTML summary's workload cards: for each workload the buy-or-rent verdict (renting first
where it wins), what to buy in plain words and what it costs, owned and rented, each target at
its percentile with the margin behind it, the caveats `planner size` prints, and the best option
on the other server types; then the scenarios and what the budget is sensitive to. Every figure
is a fleet quantity's value, the same the workbook's Budget sheet caches."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from markupsafe import Markup

from planner.evidence.measured import first_token_sentence, layout_sentence, speed_sentence
from planner.inputs.model_shape import model_class
from planner.outputs.html.assessment import UNMET, Assessment, assess
from planner.outputs.html.charts import chart
from planner.outputs.html.decision import (
    card_anchor,
    kw,
    rent_where,
    short_name,
    status,
    verdict_term,
)
from planner.outputs.html.formatting import count
from planner.outputs.html.glossary import Linker
from planner.outputs.html.prices import server_anchor
from planner.outputs.html.svgcharts import tornado_chart
from planner.outputs.terminal import margin_line, money, seconds_text
from planner.plan.plan import Plan
from planner.plan.sensitivity import SERVER_PRICE, base_totals
from planner.plan.sizing import FleetEnv, Sized, layout_words

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
    name: Markup
    achieved: str
    mean: str
    target: str
    met: bool
    mark: Markup  # the tick (or warning) with the margin beside it


@dataclass(frozen=True)
class Option:
    server: str
    anchor: str
    config: str
    gpus: str
    tco: str
    verdict: str


@dataclass(frozen=True)
class Row:
    key: str  # for auditors and tests: capex, opex, tco, ...
    label: str
    value: Markup  # the figure, first in its cell
    note: Markup


@dataclass(frozen=True)
class Caveat:
    text: str
    repeated: bool  # said word for word on an earlier card: the print leaves it out


@dataclass(frozen=True)
class BudgetCard:
    workload: str
    name: str
    anchor: str
    traffic: str
    state: str
    status: Markup
    verdict: Markup
    rent_wins: bool
    rows: list[Row]
    targets: list[Target]
    caveats: list[Caveat]
    options: list[Option]
    options_caption: str
    server_price: Price
    source: str


MAX_OPTIONS = 4


def _f(env: FleetEnv, name: str) -> float:
    value = env.value(name)
    return float(value) if isinstance(value, int | float) else 0.0


def _i(env: FleetEnv, name: str) -> int:
    return int(_f(env, name))


def _config(env: FleetEnv) -> str:
    c = env.candidate
    return f"{c.weights.upper()} weights, {c.kv.upper()} KV cache, {layout_words(env)}"


def dated(p: Price, stale_months: int = STALE_MONTHS) -> Markup:
    """"as of 2026-01", flagged when the price is older than `stale_months`."""
    flag = (Markup(' <b class="stale">(price older than {} months)</b>').format(stale_months)
            if p.stale else "")
    return Markup("as of {}{}").format(p.date, flag)


def order_text(env: FleetEnv) -> str:
    """What the GPUs bought do, as `planner size` says it (terminal.order_line)."""
    extra, idle = _i(env, "extra_replicas"), _i(env, "idle_gpus")
    use = [f"{_i(env, 'gpus')} run the replicas"]
    if extra:
        use.append(f"{extra * env.candidate.tp} run {count(extra, 'extra replica')} at no cost")
    if idle:
        use.append(f"{idle} idle")
    survives = ("survives one server down" if env.value("survives_server_loss") is True
                else "not redundant: one server down loses capacity")
    return f"{count(_i(env, 'gpus_bought'), 'GPU')} bought: {', '.join(use)}; {survives}"


def plain_words(env: FleetEnv) -> str:
    """"7 copies of the model, each on 1 GPU, up to 63 requests at once (1 spare)"."""
    replicas, tp = _i(env, "replicas"), env.candidate.tp
    batch, spare = _i(env, "batch_chosen"), int(env.workload.number("spare_replicas"))
    return (f"{count(replicas, 'copy')} of the model, each on {count(tp, 'GPU')}, up to "
            f"{count(batch, 'request')} at once" + (f" ({spare} spare)" if spare else ""))


def targets(env: FleetEnv, a: Assessment, link: Linker) -> list[Target]:
    wl, pct = env.workload, a.percentile
    mark = link(a.tick)
    rate, capacity = _f(env, "rate_requests_per_second"), _f(env, "capacity_requests_per_second")
    return [
        Target(link("ITL (inter-token latency)"),
               f"{seconds_text(_f(env, 'layout_itl_percentile_seconds'))} at {pct}",
               f"mean {seconds_text(_f(env, 'itl_seconds'))}",
               f"{seconds_text(wl.number('itl_s'))} at {pct}", bool(env.value("meets_itl")),
               mark),
        Target(link("TTFT (time to first token), queueing included"),
               f"{seconds_text(_f(env, 'layout_ttft_percentile_seconds'))} at {pct}",
               f"mean {seconds_text(_f(env, 'layout_ttft_mean_seconds'))}",
               f"{seconds_text(wl.number('ttft_s'))} at {pct}", bool(env.value("meets_ttft")),
               mark),
        Target(link("Capacity at the peak rate"), f"{capacity:,.2f} requests/s",
               "spare replicas not counted", f"{rate:,.2f} requests/s", capacity >= rate, mark),
    ]


def options(sized: Sized) -> tuple[list[Option], str]:
    """The best option on each other server (the first MAX_OPTIONS), and their caption."""
    found = sized.alternatives()
    shown = [Option(short_name(o.server.name), f"#{server_anchor(o.server.id)}", _config(o),
                    count(_i(o, "gpus"), "GPU"), money(_f(o, "tco_usd")),
                    "meets every target" if o.value("meets_targets") else
                    f"misses {o.value('failing_target')}")
             for o in found[:MAX_OPTIONS]]
    caption = ("The best option on each other server" if len(shown) == len(found) else
               f"The best option on the next {len(shown)} of {len(found)} other servers")
    return shown, caption


def cost_rows(env: FleetEnv, today: dt.date, link: Linker) -> list[Row]:
    server, gpu = env.server, env.gpu
    sp = price(money(server.number("price_usd")), server.text("price_date"), today)
    offer = env.offer
    cp = price("", (offer if offer is not None else gpu).text("price_date"), today)
    where, anchor = rent_where(env)
    years = f"{float(env.assumptions['amortisation_years']):g}"
    rate = f"{100 * float(env.assumptions['discount_rate']):g} %"
    be = _f(env, "break_even_utilisation")
    break_even = (f"owning breaks even against on demand above {100 * be:.0f} % utilisation"
                  if be <= 1 else "on demand costs less than owning even at full use")
    return [
        Row("buy", "Buy", Markup("{} × {}").format(_i(env, "servers"), server.name),
            Markup('at {} each {} (<a href="#{}">how it was priced</a>) = {}').format(
                sp.text, dated(sp), server_anchor(server.id), order_text(env))),
        Row("run", "Run", link(plain_words(env)), link(_config(env))),
        Row("space", "Space and power",
            Markup("{} alone").format(count(_i(env, "racks"), "rack")),
            Markup("{} of a rack packed with the fleet; {} IT at maximum, {} with PUE")
            .format(f"{_f(env, 'rack_share'):,.2f}", kw(_f(env, "it_power_w")),
                    kw(_f(env, "facility_power_w")))),
        Row("capex", "Capex", Markup(money(_f(env, "capex_usd"))),
            Markup("owned: servers {}, network {}").format(
                money(_f(env, "server_capex_usd")), money(_f(env, "network_capex_usd")))),
        Row("opex", "Opex per year", Markup(money(_f(env, "opex_usd_per_year"))),
            Markup("owned: energy {}, colocation {}, support {}").format(
                money(_f(env, "energy_usd_per_year")), money(_f(env, "colocation_usd_per_year")),
                money(_f(env, "support_usd_per_year")))),
        Row("tco", "TCO", Markup(money(_f(env, "tco_usd"))),
            Markup("owned, over {} years, opex discounted at {}").format(years, rate)),
        Row("rent", "Rent per year", Markup(money(_f(env, "cheapest_rent_usd_per_year"))),
            Markup('rented, {}: on demand {}, 1-year reserved {}, 3-year reserved {} '
                   '(<a href="{}">prices</a> {}); {}').format(
                where, money(_f(env, "cloud_usd_per_year")),
                money(_f(env, "cloud_reserved_usd_per_year")),
                money(_f(env, "cloud_reserved_3y_usd_per_year")), anchor, dated(cp),
                break_even)),
        Row("per-million", "Per million tokens",
            Markup("{} output, {} input").format(
                money(_f(env, "usd_per_million_output_tokens")),
                money(_f(env, "usd_per_million_input_tokens"))),
            Markup("owned, at the average request rate")),
    ]


def verdict(env: FleetEnv) -> tuple[Markup, bool]:
    term = verdict_term(env)
    owned, rent = money(_f(env, "annual_cost_usd")), money(_f(env, "cheapest_rent_usd_per_year"))
    saving = money(_f(env, "verdict_saving_usd_per_year"))
    where, _ = rent_where(env)
    if term == "buy":
        return (Markup("Buy: owning costs {} a year (capex as an annuity + opex) against {} to "
                       "rent ({}); buying saves {} a year.").format(owned, rent, where, saving),
                False)
    return (Markup("Rent, {}: {} cost {} a year against {} to own (capex as an annuity + "
                   "opex); renting saves {} a year.").format(term, where, rent, owned, saving),
            True)


def card(sized: Sized, today: dt.date, link: Linker | None = None,
         said: set[str] | None = None) -> BudgetCard:
    """A workload's card; `said`: the caveats of the cards before it (added to)."""
    link = link or Linker()
    said = set() if said is None else said
    env = sized.choice
    assert env is not None
    wl, server = sized.workload, env.server
    a = assess(sized)
    traffic = (f"{wl.text('model')}, {_f(env, 'rate_requests_per_second'):,.2f} requests/s at "
               f"peak, {int(wl.number('prompt_tokens')):,} prompt + "
               f"{int(wl.number('output_tokens')):,} output tokens per request")
    found, caption = options(sized)
    sp = price(money(server.number("price_usd")), server.text("price_date"), today)
    if a.state == UNMET:
        return BudgetCard(wl.id, wl.name, card_anchor(wl.id), traffic, a.state,
                          link(f"✗ cannot be met: {a.reason}; nothing is bought for it, and "
                               "the order and every total leave it out."),
                          Markup(""), False, [], [], [], found, caption, sp, wl.source)
    text, rent_wins = verdict(env)
    texts = [margin_line(env),
             speed_sentence(env.candidate.gpu, env.gpu.name, str(env.assumptions["engine"]),
                            model_class(env.model.model))]
    if layout := layout_sentence(env.candidate.layout):
        texts.append(layout)
    texts.append(first_token_sentence(env.ttft))  # the figure its margin applies
    caveats = [Caveat(t, t in said) for t in texts]
    said.update(texts)
    return BudgetCard(wl.id, wl.name, card_anchor(wl.id), traffic, a.state, status(a, link),
                      text, rent_wins, cost_rows(env, today, link),
                      targets(env, a, link), caveats, found, caption, sp, wl.source)


def budget_context(plan: Plan, link: Linker | None = None) -> dict[str, object]:
    today = dt.date.today()
    link = link or Linker()
    said: set[str] = set()
    cards = [card(s, today, link, said) for s in plan.sized]
    a = plan.assumptions
    site = {"pue": f"{float(a['pue']):g}",
            "electricity": f"${float(a['electricity_usd_per_kwh']):g}",
            "colocation": f"${float(a['colocation_usd_per_kw_month']):,.2f}",
            "years": f"{float(a['amortisation_years']):g}",
            "discount": f"{100 * float(a['discount_rate']):g} %",
            "utilisation": f"{100 * float(a['target_utilisation']):g} %", "engine": a["engine"],
            "redundancy": str(a["redundancy"])}
    return {"budget": cards, "site": site, "stale_months": STALE_MONTHS,
            "sensitivity": sensitivity_context(plan), "scenarios": scenario_rows(plan)}


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
    def draw(width: float) -> str:
        return tornado_chart(
            "Total TCO with each input at its low and high", "Total TCO, owned [USD]",
            base["tco_usd"],
            [(s.driver.label, s.low["tco_usd"], s.high["tco_usd"]) for s in plan.swings],
            description="Each input moved alone, the configurations the budget chose kept.",
            value_format=lambda v: money(v), width=width)

    return {"rows": rows, "chart": chart(draw, ""), "base": money(base["tco_usd"])}
