"""Quarter scope: a workload's purchase schedule, one column per quarter.

A third index beside the workload and the candidate: for the configuration the plan chose (at
the peak of the first quarter), each quarter's peak rate, the serving replicas and servers it
needs, the servers ordered a lead time ahead, those installed, the cloud instances that bridge
the quarters before the first delivery, capex, straight-line depreciation, opex, cumulative cash
and its present value. Every definition is an ``Expr`` for one quarter that reads the chosen
fleet row (``q``), the workload and server (``w``, ``srv``), assumptions (``a``), this quarter's
cells (``this``), the previous quarter's (``prev``), the workload's schedule constants
(``const``) and a quarter picked by position (``At``), so the Python value and the workbook's
Schedule sheet come from one tree.

The sizing is the fleet's own: the replica and server quantities of ``planner.model.fleet`` with
the peak rate replaced by the quarter's (``substitute``), so the per-replica limits (requests
per replica at target utilisation, the ITL-tail and TTFT load limits) and the n+1 redundancy
are the plan's. Servers needed in quarter q + L are ordered (and paid) in quarter q, L = ⌈lead
time in weeks / 13⌉; what was ordered never falls (servers are not sold); cloud instances carry
the replicas the installed servers cannot, which only happens before the first delivery.
Depreciation starts in the quarter a server is delivered and runs over amortisation_years; cash
is signed (money out is negative) and discounted at discount_rate per year, each quarter's flow
at its end.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol, cast

from planner.model.columns import Memo
from planner.model.expr import (
    IF,
    INT,
    MAX,
    MIN,
    BinOp,
    Env,
    Expr,
    Func,
    Neg,
    Ref,
    Renderer,
    Value,
    XlError,
)
from planner.model.fleet import FLEET_BY_NAME, cloud, srv, w
from planner.model.quantity import Quantity, a, q, v

QUARTER_WEEKS = 13  # 52 weeks / 4
QUARTERS_PER_YEAR = 4


def this(name: str) -> Ref:
    """This quarter's value of a schedule quantity."""
    return Ref("quarter", name)


def prev(name: str) -> Ref:
    """The previous quarter's value of a schedule quantity (never read in the first)."""
    return Ref("previous", name)


def const(name: str) -> Ref:
    """One of the workload's schedule constants (SCHEDULE_CONSTANTS)."""
    return Ref("constant", name)


QUARTER = Ref("index", "quarter")  # this quarter's number, 1 to the horizon
GIVEN = Ref("given", "peak_rate")  # the schedule's peak rate for this quarter; 0 where none


class QuarterEnv(Env, Protocol):
    def at(self, name: str, index: int) -> Value: ...


class QuarterRenderer(Renderer, Protocol):
    def at(self, name: str, index: str) -> str: ...


@dataclass(frozen=True, eq=False)
class At(Expr):
    """The value of schedule quantity `name` in the quarter `index` gives (1-based; the
    caller keeps it within the horizon). The workbook reads it with INDEX over the row."""

    name: str
    index: Expr

    def evaluate(self, env: Env) -> Value:
        i = self.index.evaluate(env)
        if isinstance(i, XlError):
            return i
        return cast(QuarterEnv, env).at(self.name, int(float(i)))  # type: ignore[arg-type]

    def render(self, r: Renderer) -> str:
        return cast(QuarterRenderer, r).at(self.name, self.index.render(r))

    def refs(self) -> set[tuple[str, str]]:
        return {("quarter", self.name)} | self.index.refs()

    def children(self) -> Sequence[Expr]:
        return (self.index,)

    @property
    def compound(self) -> bool:
        return False


def rebuild(e: Expr, leaf: Callable[[Ref], Expr | None]) -> Expr:
    """`e` with each leaf for which `leaf` gives an expression replaced by it."""
    if isinstance(e, Ref):
        return leaf(e) or e
    if isinstance(e, BinOp):
        return BinOp(e.op, rebuild(e.left, leaf), rebuild(e.right, leaf))
    if isinstance(e, Neg):
        return Neg(rebuild(e.operand, leaf))
    if isinstance(e, Func):
        return Func(e.name, tuple(rebuild(x, leaf) for x in e.args))
    if isinstance(e, Memo):
        return rebuild(e.expr, leaf)
    return e  # Num, Text


def substitute(name: str, replace: Mapping[str, Expr], through: tuple[str, ...] = ()) -> Expr:
    """The fleet quantity `name` with the quantities in `replace` read from elsewhere (this
    quarter's cells); those in `through` are written out in place, so they too see the
    replacement."""
    def leaf(ref: Ref) -> Expr | None:
        if ref.kind != "q":
            return None
        if ref.name in replace:
            return replace[ref.name]
        if ref.name in through:
            return rebuild(FLEET_BY_NAME[ref.name].expr, leaf)
        return None

    return rebuild(FLEET_BY_NAME[name].expr, leaf)


def _ceil(x: Expr) -> Expr:
    return -INT(-x)


def _sized(name: str) -> Callable[[int, int], Expr]:
    """A fleet sizing quantity at this quarter's peak rate, reading this quarter's replicas."""
    return lambda quarter, horizon: substitute(name, {n: this(n) for n in SIZING})


# The fleet's sizing chain, from the peak rate to the servers needed: each a row of the
# schedule, defined by the fleet's own expression at the quarter's rate.
SIZING = ("rate_requests_per_second", "replicas_for_rate", "replicas_for_ttft",
          "replicas_for_itl_tail", "serving_replicas", "prefill_replicas", "decode_replicas",
          "layout_serving_replicas", "replicas", "gpus",
          "servers_for_replicas", "servers")


@dataclass(frozen=True)
class QuarterQuantity:
    """A schedule row: `define(quarter, horizon)` is its expression in that quarter."""

    name: str
    label: str
    unit: str
    define: Callable[[int, int], Expr]
    description: str
    kind: str = "number"  # number | int
    display: str = "plain"  # plain | usd | ratio

    def expr(self, quarter: int, horizon: int) -> Expr:
        return self.define(quarter, horizon)


def _peak_rate(quarter: int, horizon: int) -> Expr:
    if quarter == 1:
        return q("rate_requests_per_second")
    return IF(GIVEN > 0, GIVEN, prev("rate_requests_per_second") * (1 + w("growth")) ** 3)


def _ordered(quarter: int, horizon: int) -> Expr:
    ahead = At("servers", MIN(QUARTER + const("lead_quarters"), horizon))
    return ahead if quarter == 1 else MAX(prev("servers_ordered"), ahead)


def _delivered(name: str) -> Callable[[int, int], Expr]:
    """What `name` (a running total) was a lead time ago: what has been delivered."""
    back = QUARTER - const("lead_quarters")
    return lambda quarter, horizon: IF(back >= 1, At(name, back), 0)


def _running(name: str) -> Callable[[int, int], Expr]:
    """The running total of `name` (the row `name`_to_date)."""
    return lambda quarter, horizon: (this(name) if quarter == 1 else
                                     prev(f"{name}_to_date") + this(name))


def _cash(quarter: int, horizon: int) -> Expr:
    flow = -(this("capex_usd") + this("opex_usd"))
    return flow if quarter == 1 else prev("cash_usd") + flow


def _discounted(quarter: int, horizon: int) -> Expr:
    flow = -(this("capex_usd") + this("opex_usd")) * (1 + a("discount_rate")) ** (
        -QUARTER / QUARTERS_PER_YEAR)
    return flow if quarter == 1 else prev("discounted_cash_usd") + flow


def _depreciation(quarter: int, horizon: int) -> Expr:
    back = QUARTER - const("life_quarters")
    return ((this("capex_in_service_usd") - IF(back >= 1, At("capex_in_service_usd", back), 0))
            / (a("amortisation_years") * QUARTERS_PER_YEAR))


def _quarterly(name: str, replace: Mapping[str, Expr]) -> Callable[[int, int], Expr]:
    """A fleet cost per year, for this quarter's fleet, over a quarter."""
    return lambda quarter, horizon: substitute(name, replace) / QUARTERS_PER_YEAR


SCHEDULE_CONSTANTS: list[Quantity] = [
    Quantity("growth_per_month", "Growth of the peak rate per month", "fraction",
             w("growth"), "the workload's growth (0 when it gives a schedule or none)",
             display="ratio"),
    Quantity("lead_time_weeks_used", "Lead time of the server", "weeks",
             IF(srv("lead_time_weeks") > 0, srv("lead_time_weeks"), a("lead_time_weeks")),
             "the server's lead_time_weeks, or the lead_time_weeks assumption where it gives "
             "none"),
    Quantity("lead_quarters", "Lead time in quarters", "quarters",
             _ceil(const("lead_time_weeks_used") / QUARTER_WEEKS),
             "lead time / 13 weeks, rounded up: servers needed in quarter q + this are "
             "ordered in quarter q", kind="int"),
    Quantity("life_quarters", "Depreciation life in quarters", "quarters",
             _ceil(a("amortisation_years") * QUARTERS_PER_YEAR),
             "amortisation_years × 4, rounded up: a delivery is depreciated over this many "
             "quarters", kind="int"),
]

QUARTER_QUANTITIES: list[QuarterQuantity] = [
    QuarterQuantity("rate_requests_per_second", "Peak rate", "requests/s", _peak_rate,
                    "first quarter: the workload's peak, which the plan sized; then the "
                    "schedule's rate for the quarter, else the previous quarter's × (1 + "
                    "growth)^3"),
    QuarterQuantity("replicas_for_rate", "Replicas for the peak rate", "replicas",
                    _sized("replicas_for_rate"),
                    "peak rate / (requests per replica × target utilisation), rounded up",
                    kind="int"),
    QuarterQuantity("replicas_for_ttft", "Replicas for the TTFT percentile", "replicas",
                    _sized("replicas_for_ttft"),
                    "peak rate × prefill service time / prefill load limit, rounded up",
                    kind="int"),
    QuarterQuantity("replicas_for_itl_tail", "Replicas for the ITL percentile", "replicas",
                    _sized("replicas_for_itl_tail"),
                    "peak rate / arrivals per replica keeping prompt gaps out of the tail, "
                    "rounded up (where a prompt's gap breaks the ITL target)", kind="int"),
    QuarterQuantity("serving_replicas", "Serving replicas", "replicas",
                    _sized("serving_replicas"), "the most of the three, at least one",
                    kind="int"),
    QuarterQuantity("prefill_replicas", "Prefill replicas (disaggregated)", "replicas",
                    _sized("prefill_replicas"), "the prefill pool for the TTFT percentile at "
                    "this quarter's rate (0 unless the layout is disaggregated)", kind="int"),
    QuarterQuantity("decode_replicas", "Decode replicas (disaggregated)", "replicas",
                    _sized("decode_replicas"), "the decode pool for this quarter's rate (0 "
                    "unless the layout is disaggregated)", kind="int"),
    QuarterQuantity("layout_serving_replicas", "Serving replicas (layout)", "replicas",
                    _sized("layout_serving_replicas"), "prefill + decode replicas where "
                    "disaggregated, else the serving replicas", kind="int"),
    QuarterQuantity("replicas", "Replicas (spares included)", "replicas", _sized("replicas"),
                    "serving replicas + spares", kind="int"),
    QuarterQuantity("gpus", "GPUs needed", "GPUs", _sized("gpus"),
                    "replicas (spares included) × TP", kind="int"),
    QuarterQuantity("servers_for_replicas", "Servers holding the replicas", "servers",
                    _sized("servers_for_replicas"),
                    "replicas / replicas per server, rounded up", kind="int"),
    QuarterQuantity("servers", "Servers needed", "servers", _sized("servers"),
                    "the servers holding the replicas; under redundancy n+1 one more than the "
                    "serving replicas need", kind="int"),
    QuarterQuantity("servers_ordered", "Servers ordered to date", "servers", _ordered,
                    "the servers needed a lead time ahead (the last quarter's beyond the "
                    "horizon), never fewer than already ordered", kind="int"),
    QuarterQuantity("servers_bought", "Servers bought (ordered and paid)", "servers",
                    lambda quarter, horizon: this("servers_ordered") if quarter == 1 else
                    this("servers_ordered") - prev("servers_ordered"),
                    "servers ordered to date − the previous quarter's", kind="int"),
    QuarterQuantity("servers_installed", "Servers installed", "servers",
                    _delivered("servers_ordered"),
                    "servers ordered to date a lead time ago (none before the first delivery)",
                    kind="int"),
    QuarterQuantity("gpus_installed", "GPUs installed", "GPUs",
                    lambda quarter, horizon: substitute(
                        "gpus_bought", {"servers": this("servers_installed")}),
                    "servers installed × GPUs per server", kind="int"),
    QuarterQuantity("replicas_rented", "Replicas rented", "replicas",
                    lambda quarter, horizon: MAX(0, this("replicas") - this("servers_installed")
                                                 * q("replicas_per_server")),
                    "replicas (spares included) the installed servers cannot hold", kind="int"),
    QuarterQuantity("cloud_instances", "Cloud instances rented", "instances",
                    lambda quarter, horizon: substitute(
                        "cloud_instances", {"replicas": this("replicas_rented")}),
                    "replicas rented / replicas per instance of the row's cloud offer, rounded "
                    "up", kind="int"),
    QuarterQuantity("gpus_rented", "GPUs rented", "GPUs",
                    lambda quarter, horizon: IF(
                        q("cloud_replicas_per_instance") > 0,
                        this("cloud_instances") * cloud("gpus_per_instance"),
                        this("replicas_rented") * v("tp")),
                    "instances × GPUs per instance (no offer for this GPU and TP: replicas "
                    "rented × TP)", kind="int"),
    QuarterQuantity("capex_usd", "Capex", "USD",
                    lambda quarter, horizon: substitute(
                        "capex_usd", {"servers": this("servers_bought")},
                        ("server_capex_usd", "network_capex_usd")),
                    "servers bought × (server price + network per server), paid when ordered",
                    display="usd"),
    QuarterQuantity("capex_usd_to_date", "Capex to date", "USD", _running("capex_usd"),
                    "the previous quarter's + this quarter's capex", display="usd"),
    QuarterQuantity("capex_in_service_usd", "Capex delivered to date", "USD",
                    _delivered("capex_usd_to_date"),
                    "capex to date a lead time ago: the servers in service", display="usd"),
    QuarterQuantity("depreciation_usd", "Depreciation", "USD", _depreciation,
                    "straight line from delivery: (capex delivered to date − that of a "
                    "depreciation life ago) / (amortisation_years × 4)", display="usd"),
    QuarterQuantity("it_power_w", "IT power installed", "W",
                    lambda quarter, horizon: substitute(
                        "it_power_w", {"servers": this("servers_installed")}),
                    "servers installed × maximum server power"),
    QuarterQuantity("energy_usd", "Energy", "USD",
                    _quarterly("energy_usd_per_year", {"it_power_w": this("it_power_w")}),
                    "the fleet's energy per year for the installed IT power, ÷ 4",
                    display="usd"),
    QuarterQuantity("colocation_usd", "Colocation", "USD",
                    _quarterly("colocation_usd_per_year", {"it_power_w": this("it_power_w")}),
                    "IT kW installed × colocation price per kW-month × 12, ÷ 4", display="usd"),
    QuarterQuantity("support_usd", "Software and support", "USD",
                    _quarterly("support_usd_per_year",
                               {"gpus_bought": this("gpus_installed")}),
                    "GPUs installed × the server's support per GPU-year, ÷ 4", display="usd"),
    QuarterQuantity("rent_usd", "Rent", "USD",
                    _quarterly("cloud_usd_per_year",
                               {"cloud_instances": this("cloud_instances"),
                                "gpus": this("gpus_rented")}),
                    "instances rented × on-demand price × 8,760 h, ÷ 4 (no offer: GPUs rented "
                    "× the GPU's hourly price)", display="usd"),
    QuarterQuantity("opex_usd", "Opex", "USD",
                    lambda quarter, horizon: this("energy_usd") + this("colocation_usd")
                    + this("support_usd") + this("rent_usd"),
                    "energy + colocation + support of what is installed + rent", display="usd"),
    QuarterQuantity("cash_usd", "Cumulative cash", "USD", _cash,
                    "the previous quarter's − capex − opex (money out is negative)",
                    display="usd"),
    QuarterQuantity("discounted_cash_usd", "Cumulative discounted cash (NPV to date)", "USD",
                    _discounted,
                    "the previous quarter's − (capex + opex) × (1 + discount_rate)^(−quarter / "
                    "4): each quarter's flow at its end", display="usd"),
]

QUARTER_BY_NAME = {x.name: x for x in QUARTER_QUANTITIES}
CONSTANT_BY_NAME = {x.name: x for x in SCHEDULE_CONSTANTS}
# The per-quarter sums over the workloads bought, in the order the totals list them.
TOTALLED = ("rate_requests_per_second", "gpus", "servers", "servers_bought",
            "servers_installed", "gpus_installed", "gpus_rented", "capex_usd",
            "depreciation_usd", "rent_usd", "opex_usd", "cash_usd", "discounted_cash_usd")
