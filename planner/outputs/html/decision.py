"""The page's first screen: the whole decision at a glance. The order (server model × quantity at
its dated unit price, GPUs bought, rack space and power, summed over the workloads that are met:
racks are their rack shares added up and rounded up once), capex, opex per year and TCO, the
buy-or-rent verdict for the fleet and per workload (renting first where it wins), and a warning
when a workload cannot be met or is at risk. Every figure is a fleet quantity's value summed as
`planner size` sums it (:func:`planner.plan.sizing.bought`)."""

from __future__ import annotations

import math
from dataclasses import dataclass

from markupsafe import Markup

from planner.outputs.html.assessment import MET, RISK, UNMET, Assessment, assess
from planner.outputs.html.formatting import count, plural
from planner.outputs.html.glossary import Linker
from planner.outputs.html.prices import cloud_anchor, server_anchor
from planner.outputs.terminal import money
from planner.plan.plan import Plan
from planner.plan.sizing import FleetEnv, bought


def card_anchor(workload_id: str) -> str:
    return f"workload-{workload_id}"


def short_name(name: str) -> str:
    """A server's name without its examples: "AMD Instinct MI300X 8-GPU OAM/UBB server"."""
    return name.split(" (")[0]


def kw(watts: float) -> str:
    return f"{watts / 1000:,.1f} kW"


@dataclass(frozen=True)
class OrderLine:
    server: str
    anchor: str
    quantity: str
    unit_price: str
    price_date: str
    gpus: str
    racks: str
    power: str
    workloads: str


@dataclass(frozen=True)
class Figure:
    key: str
    label: str
    value: str
    note: str


@dataclass(frozen=True)
class WorkloadVerdict:
    id: str
    name: str
    anchor: str
    state: str
    verdict: str  # "rent 3-year reserved", "buy", "cannot be met"
    rent_wins: bool
    owned: str
    rent: str
    rent_where: str
    rent_anchor: str
    saving: str
    status: Markup


def rent_where(env: FleetEnv) -> tuple[str, str]:
    """What the cheapest rent rents, and the sources row that prices it."""
    offer = env.offer
    if offer is not None and env.number("cloud_instances"):
        n = int(env.number("cloud_instances"))
        return (f"{n} × {offer.text('provider')} {offer.text('instance')}",
                f"#{cloud_anchor(offer.id)}")
    return f"{count(int(env.number('gpus')), 'GPU')} at the GPU-hour price", "#gpu-sources"


def verdict_term(env: FleetEnv) -> str:
    """"buy", or the rental term that wins: "3-year reserved", "1-year reserved", "on demand"."""
    verdict = str(env.value("verdict"))
    return verdict.removeprefix("rent ")


def status(a: Assessment, link: Linker) -> Markup:
    if a.state == UNMET:
        return link(f"✗ cannot be met: {a.reason}")
    if a.state == RISK:
        return link(f"⚠ at risk: meets its {a.percentile} targets with {a.margin}, but at "
                    f"the pessimistic end ({a.pessimistic}) it needs {count(a.needed, 'replica')}"
                    f" where {a.planned} are planned")
    return link(f"✓ meets its {a.percentile} targets, {a.margin}")


def workload_rows(plan: Plan, link: Linker) -> list[WorkloadVerdict]:
    rows = []
    for sized in plan.sized:
        env, a = sized.choice, assess(sized)
        assert env is not None
        wl = sized.workload
        if a.state == UNMET:
            rows.append(WorkloadVerdict(wl.id, wl.name, card_anchor(wl.id), a.state,
                                        "cannot be met", False, "—", "—", "", "", "—",
                                        link(a.short)))
            continue
        where, anchor = rent_where(env)
        term = verdict_term(env)
        rows.append(WorkloadVerdict(
            wl.id, wl.name, card_anchor(wl.id), a.state,
            "buy" if term == "buy" else f"rent, {term}", term != "buy",
            money(env.number("annual_cost_usd")), money(env.number("cheapest_rent_usd_per_year")),
            where, anchor, money(env.number("verdict_saving_usd_per_year")), link(a.short)))
    return rows


def order_lines(chosen: list[FleetEnv]) -> list[OrderLine]:
    """The order grouped by server model, in the order the workloads first name them."""
    groups: dict[str, list[FleetEnv]] = {}
    for env in chosen:
        groups.setdefault(env.server.id, []).append(env)
    lines = []
    for envs in groups.values():
        server = envs[0].server
        servers = sum(int(e.number("servers")) for e in envs)
        gpus = sum(int(e.number("gpus_bought")) for e in envs)
        share = sum(e.number("rack_share") for e in envs)
        lines.append(OrderLine(
            short_name(server.name), server_anchor(server.id), f"{servers:,}",
            money(float(server.number("price_usd"))), server.text("price_date"),
            count(gpus, "GPU"),
            "1 rack" if share == 1 else f"{share:,.2f} racks",
            kw(sum(e.number("it_power_w") for e in envs)),
            ", ".join(e.workload.id for e in envs)))
    return lines


def headline(chosen: list[FleetEnv]) -> tuple[str, bool]:
    """The fleet's verdict in one sentence, and whether renting wins for the fleet."""
    owned = sum(e.number("annual_cost_usd") for e in chosen)
    rent = sum(e.number("cheapest_rent_usd_per_year") for e in chosen)
    saving = money(sum(e.number("verdict_saving_usd_per_year") for e in chosen))
    terms = [verdict_term(e) for e in chosen]
    renting = [t for t in terms if t != "buy"]
    basis = "(capex as a yearly annuity + opex)"
    if not renting:
        return (f"Buy. Owning costs {money(owned)} a year {basis} against {money(rent)} for the "
                f"cheapest rent of the same GPUs: buying saves {saving} a year.", False)
    if len(renting) == len(terms):
        how = f"{renting[0]}" if len(set(renting)) == 1 else "on the cheapest term for each"
        return (f"Rent rather than buy. Renting the same GPUs ({how}) costs {money(rent)} a year "
                f"against {money(owned)} a year to own {basis}: renting saves {saving} a year.",
                True)
    buy = len(terms) - len(renting)
    return (f"Rent for {count(len(renting), 'workload')}, buy for {buy}: each on its cheaper "
            f"side saves {saving} a year against the other choice (owning counted as capex as "
            "a yearly annuity + opex).", len(renting) > buy)


def order_caption(chosen: list[FleetEnv]) -> str:
    renting = sum(verdict_term(e) != "buy" for e in chosen)
    if renting == 0:
        return "The order"
    if renting == len(chosen):
        return "The order, if bought instead"
    return "The order to own every workload (the verdict rents some: see below)"


def warning(assessed: list[tuple[str, str, Assessment]], link: Linker) -> Markup | None:
    unmet = [(i, n) for i, n, a in assessed if a.state == UNMET]
    risky = [(i, n) for i, n, a in assessed if a.state == RISK]

    def names(items: list[tuple[str, str]]) -> Markup:
        return Markup(", ").join(Markup('<a href="#{}">{}</a>').format(card_anchor(i), n)
                                 for i, n in items)

    parts = [Markup("⚠")]
    if unmet:
        parts += [link(f"{count(len(unmet), 'workload')} of {len(assessed)} cannot be met and "
                       f"{plural(len(unmet), 'is')} left out of the order and every total:"),
                  names(unmet) + "."]
    if risky:
        they = "it needs" if len(risky) == 1 else "they need"
        parts += [link(f"{count(len(risky), 'workload')} of {len(assessed)} "
                       f"{plural(len(risky), 'is')} at risk: at the pessimistic end of the "
                       f"measured speed error {they} more replicas than planned:"),
                  names(risky) + "."]
    return Markup(" ").join(parts) if len(parts) > 1 else None


def decision_context(plan: Plan, link: Linker) -> dict[str, object]:
    if not plan.sized:
        return {"decision": None}
    chosen = bought(plan.sized)
    assessed = [(s.workload.id, s.workload.name, assess(s)) for s in plan.sized]
    years = f"{float(plan.assumptions['amortisation_years']):g}"
    text, rent_wins = headline(chosen) if chosen else (
        "Nothing to buy or rent: no workload can be met.", False)
    total = sum(e.number("rack_share") for e in chosen)
    servers = sum(int(e.number("servers")) for e in chosen)
    gpus = sum(int(e.number("gpus_bought")) for e in chosen)
    figures = [
        Figure("capex", "Capex", money(sum(e.number("capex_usd") for e in chosen)),
               "owned: servers and network, once"),
        Figure("opex", "Opex per year", money(sum(e.number("opex_usd_per_year") for e in chosen)),
               "owned: energy, colocation, support"),
        Figure("tco", "TCO", money(sum(e.number("tco_usd") for e in chosen)),
               f"owned, over {years} years, opex discounted at "
               f"{100 * float(plan.assumptions['discount_rate']):g} %"),
        Figure("owned", "Owned per year",
               money(sum(e.number("annual_cost_usd") for e in chosen)),
               "owned: capex as a yearly annuity + opex"),
        Figure("rent", "Rent per year",
               money(sum(e.number("cheapest_rent_usd_per_year") for e in chosen)),
               "rented: the same GPUs, each workload's cheapest term"),
    ]
    if rent_wins:  # lead with what wins
        figures = figures[4:] + figures[3:4] + figures[:3]
    sized = sum(a.state != UNMET for _, _, a in assessed)
    return {"decision": {
        "headline": text,
        "rent_wins": rent_wins,
        "warning": warning(assessed, link),
        "figures": figures,
        "order": order_lines(chosen),
        "order_caption": order_caption(chosen),
        "total": OrderLine("Total", "", f"{servers:,}", "", "", count(gpus, "GPU"),
                           count(math.ceil(total - 1e-9), "rack"),
                           kw(sum(e.number("it_power_w") for e in chosen)), ""),
        "sized": f"{sized} of {len(assessed)} workloads" if sized < len(assessed) else
                 f"all {count(len(assessed), 'workload')}",
        "rows": workload_rows(plan, link),
        "all_met": all(a.state == MET for _, _, a in assessed),
    }}
