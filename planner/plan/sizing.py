"""Size a workload: evaluate the fleet quantities for every allowed candidate and take the
lowest TCO among those that meet every target. Pure: catalogs and assumptions in, results out;
`planner size`, `planner build` and the tests call it alike."""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass

from planner.errors import ArgumentError, CatalogError
from planner.evidence.measured import (
    SpeedRatio,
    TtftRatio,
    speed_on,
    speed_ratio,
    ttft_figures,
    ttft_ratio,
)
from planner.inputs.catalog import DEFAULT_CLOUDS, load_clouds
from planner.inputs.entries import Catalog, Entry, Workload
from planner.inputs.model_shape import model_class
from planner.inputs.scenario import Scenario, tp_problem
from planner.inputs.settings import resolve
from planner.model.expr import DictEnv, Value
from planner.model.fleet import FLEET_BY_NAME, FLEET_QUANTITIES, FLEET_VARS, depends_on
from planner.model.quantities import ROW_BY_NAME
from planner.plan.calc import ModelEnv, RowEnv, layouts_for

TP_CHOICES = (1, 2, 4, 8)
DEFAULT_WEIGHTS = ("bf16", "fp8")
DEFAULT_KV = ("bf16", "fp8")


@dataclass(frozen=True)
class Candidate:
    server: str
    gpu: str
    weights: str
    kv: str
    tp: int
    layout: str = "tp"  # tp, tp+ep, dp-attention or disaggregated (planner.model.layouts)


class FleetEnv(RowEnv):
    """A configuration row driven by a workload and a server: the row quantities at the
    workload's tokens and the chosen batch, and the fleet quantities over them."""

    def __init__(self, workload: Entry, server: Entry, candidate: Candidate, model: ModelEnv,
                 gpu: Entry, assumptions: Mapping[str, float | str],
                 speed: SpeedRatio | None = None, speed_end: str = "median",
                 offer: Entry | None = None, ttft: TtftRatio | None = None) -> None:
        p, o = int(workload.number("prompt_tokens")), int(workload.number("output_tokens"))
        scenario = Scenario(workload.text("model"), candidate.gpu, candidate.weights,
                            candidate.kv, candidate.tp, p + o, 1, p, o)
        super().__init__(scenario, model, gpu, assumptions)
        self.workload = workload
        self.server = server
        self.candidate = candidate
        self.speed = speed or SpeedRatio(1.0, 1.0, 1.0, 0, "no measured speed was given")
        self.speed_end = speed_end  # median; q1 (optimistic) or q3 (pessimistic) for the spread
        self.offer = offer  # the cheapest cloud offer for this GPU, or None
        # the engine's measured first-token error on this GPU (catalogs/measured-accuracy.yaml)
        self.ttft = ttft or ttft_ratio(str(assumptions["engine"]), candidate.gpu,
                                         model_class(model.model), gpu_name=gpu.name)

    def lookup(self, kind: str, name: str) -> Value:
        if kind == "var" and name in FLEET_VARS:
            return FLEET_VARS[name].evaluate(self)
        if kind == "workload":
            return self.workload.number(name)
        if kind == "server":
            return self.server.number(name)
        if kind == "measured":
            if name == "ttft_ratio":
                return self.ttft.median
            return float(getattr(self.speed, self.speed_end))
        if kind == "layout":
            return self.candidate.layout
        if kind == "cloud":
            if name == "offer_exists":
                return self.offer is not None
            return self.offer.number(name) if self.offer is not None else 0
        return super().lookup(kind, name)

    def number(self, name: str) -> float:
        """A quantity as a float; NaN for a spreadsheet error or text."""
        value = self.value(name)
        return float(value) if isinstance(value, int | float) else math.nan

    def value(self, name: str) -> Value:
        if name not in self.cache:
            quantity = FLEET_BY_NAME.get(name) or ROW_BY_NAME[name]
            self.cache[name] = quantity.expr.evaluate(self)
        return self.cache[name]


def check_rack_limits(servers: Catalog, assumptions: Mapping[str, float | str]) -> None:
    """A rack that cannot hold one server is an input error, said before any sizing."""
    for server in servers.entries.values():
        if server.number("whole_rack"):
            continue
        if float(assumptions["rack_power_kw"]) < server.number("power_kw"):
            raise CatalogError(server.locate("power_kw"),
                               f"one server draws {server.number('power_kw')} kW, more than "
                               f"rack_power_kw = {assumptions['rack_power_kw']}",
                               "raise --set rack_power_kw, or mark a rack-scale unit "
                               "whole_rack: true")
        if float(assumptions["rack_units_per_rack"]) < server.number("rack_units"):
            raise CatalogError(server.locate("rack_units"),
                               f"one server is {server.number('rack_units')}U, taller than "
                               f"rack_units_per_rack = {assumptions['rack_units_per_rack']}",
                               "raise --set rack_units_per_rack, or mark it whole_rack: true")


def candidates(workload: Workload, models: Catalog, servers: Catalog,
               engine: str = "vllm") -> Iterator[Candidate]:
    model = models.entries[workload.text("model")]
    allowed_gpus = workload.ids("gpus")
    for server in servers.entries.values():
        gpu = server.text("gpu")
        if allowed_gpus and gpu not in allowed_gpus:
            continue
        scale = int(server.number("scale_up_gpus") or server.number("gpus_per_server"))
        for weights in workload.ids("weights") or DEFAULT_WEIGHTS:
            for kv in workload.ids("kv") or DEFAULT_KV:
                for tp in TP_CHOICES:
                    if tp > scale or tp > server.number("gpus_per_server"):
                        continue
                    if tp_problem(model, tp):
                        continue
                    for layout in layouts_for(model, tp, engine):
                        yield Candidate(server.id, gpu, weights, kv, tp, layout)


@dataclass
class Sized:
    workload: Workload
    rows: list[FleetEnv]  # every candidate, in the order the workbook lists them
    choice: FleetEnv | None

    @property
    def met(self) -> bool:
        """Whether the chosen candidate meets every target (else nothing is bought)."""
        return self.choice is not None and self.choice.value("meets_targets") is True

    @property
    def cannot_meet(self) -> str | None:
        """Why no candidate meets the workload's targets, with the binding number; None when
        one does."""
        return None if self.met else cannot_meet_reason(self)

    def alternatives(self) -> list[FleetEnv]:
        """The best candidate on each other server type, by the same rule as the choice."""
        best: dict[str, FleetEnv] = {}
        for env in self.rows:
            key = env.candidate.server
            if key not in best or _key(env) < _key(best[key]):
                best[key] = env
        chosen = self.choice.candidate.server if self.choice else None
        return sorted((e for s, e in best.items() if s != chosen), key=_key)


def layout_words(env: FleetEnv) -> str:
    """The serving layout in words: "TP 8", "TP 8 + EP 8", "TP 8 with DP attention and EP",
    or "disaggregated: 2 prefill + 6 decode GPUs (TP 2 each)"."""
    c = env.candidate
    if c.layout == "tp+ep":
        return f"TP {c.tp} + EP {c.tp}"
    if c.layout == "dp-attention":
        return f"TP {c.tp} with DP attention" + (" and EP" if model_class(env.model.model)
                                                 == "moe" else "")
    if c.layout == "disaggregated":
        return (f"disaggregated: {int(env.number('prefill_gpus'))} prefill + "
                f"{int(env.number('decode_gpus'))} decode GPUs (TP {c.tp} each)")
    return f"TP {c.tp}"


def best_per_layout(sized: Sized) -> dict[str, dict[str, object]]:
    """For each layout evaluated, its best candidate by the choice rule: GPUs, TCO, met."""
    best: dict[str, FleetEnv] = {}
    for env in sized.rows:
        key = env.candidate.layout
        if key not in best or _key(env) < _key(best[key]):
            best[key] = env
    return {k: {"gpus": _num(e, "gpus"), "tco_usd": _num(e, "tco_usd"),
                "met": e.value("meets_targets") is True, "tp": e.candidate.tp,
                "gpu": e.candidate.gpu, "weights": e.candidate.weights,
                "prefill_gpus": _num(e, "prefill_gpus"), "decode_gpus": _num(e, "decode_gpus")}
            for k, e in best.items()}


def _gib(x: Value) -> str:
    return f"{float(x) / 2**30:,.1f} GiB" if isinstance(x, int | float) else str(x)


def _ms(x: Value) -> str:
    if not isinstance(x, int | float):
        return str(x)
    return f"{float(x) * 1000:,.1f} ms" if x < 1 else f"{float(x):,.2f} s"


def bought(results: list[Sized]) -> list[FleetEnv]:
    """The chosen candidates of the workloads that are met: what is bought, and what every
    total adds up."""
    return [r.choice for r in results if r.met and r.choice is not None]


def cannot_meet_reason(sized: Sized) -> str:
    """The target no candidate meets and the binding number, read from the candidates closest
    to it: the context limit, the weights against the largest memory, ITL at batch 1, or TTFT
    with no queue."""
    wl = sized.workload
    first = sized.rows[0]
    tokens = int(wl.number("prompt_tokens") + wl.number("output_tokens"))
    limit = first.model.model.number("max_position_embeddings")
    if not any(env.value("context_supported") is True for env in sized.rows):
        return (f"prompt + output {tokens:,} tokens > the model's context limit "
                f"{int(float(limit)):,} tokens")
    fitting = [env for env in sized.rows if env.value("fits_workload") is True]
    if not fitting:
        best = max(sized.rows, key=lambda env: env.number("usable_bytes_per_gpu")
                   - env.number("weight_bytes_per_gpu"))
        return (f"weights need {_gib(best.value('weight_bytes_per_gpu'))} per GPU at TP "
                f"{best.candidate.tp} in {best.candidate.weights}; the {best.gpu.name} leaves "
                f"{_gib(best.value('usable_bytes_per_gpu'))} for weights and KV cache")
    itl_ok = [env for env in fitting if env.value("meets_itl") is True]
    if not itl_ok:
        def worst(env: FleetEnv) -> float:  # the mean or the percentile, whichever misses more
            return max(env.number("itl_seconds"), env.number("layout_itl_percentile_seconds"))

        best = min(fitting, key=worst)
        return (f"ITL at batch {best.value('batch_chosen')} is {_ms(best.value('itl_seconds'))}"
                f" mean and {_ms(best.value('layout_itl_percentile_seconds'))} at p"
                f"{best.number('latency_percentile_used') * 100:g} on the fastest candidate "
                f"({best.candidate.gpu}, TP {best.candidate.tp}, {best.candidate.weights}) > "
                f"the {_ms(wl.number('itl_s'))} target")
    best = min(itl_ok, key=lambda env: env.number("ttft_no_queue_seconds"))
    return (f"TTFT with no queue is {_ms(best.value('ttft_no_queue_seconds'))} on the fastest "
            f"candidate ({best.candidate.gpu}, TP {best.candidate.tp}) > the "
            f"{_ms(wl.number('ttft_s'))} target at p"
            f"{best.number('latency_percentile_used') * 100:g}")


def at_speed_end(env: FleetEnv, end: str) -> FleetEnv:
    """The same candidate with the measured speed error at one end of its interquartile range
    (q1: the model nearer right, optimistic; q3: further off, pessimistic)."""
    return FleetEnv(env.workload, env.server, env.candidate, env.model, env.gpu,
                    env.assumptions, env.speed, end, env.offer, env.ttft)


@dataclass(frozen=True)
class Spread:
    """Serving replicas at the optimistic and pessimistic ends of the measured speed error,
    and whether the chosen plan misses a target at the pessimistic end."""

    optimistic: int
    pessimistic: int
    at_risk: bool


def spread(env: FleetEnv) -> Spread:
    if env.assumptions["speed_basis"] == "model":
        n = int(env.number("layout_serving_replicas"))
        return Spread(n, n, False)
    low, high = at_speed_end(env, "q1"), at_speed_end(env, "q3")
    planned = env.number("layout_serving_replicas")
    needed = high.number("layout_serving_replicas")
    return Spread(int(low.number("layout_serving_replicas")), int(needed),
                  needed > planned or high.value("meets_targets") is not True)


def _key(env: FleetEnv) -> float:
    value = env.value("choice_key")
    return float(value) if isinstance(value, int | float) else float("inf")


def cheapest_offers(clouds: Catalog) -> dict[str, Entry]:
    """For each GPU, the cloud offer with the lowest 3-year reserved price per GPU-hour (the
    first of equals in catalog order): the one a fleet row rents, its prices live in the
    workbook's Clouds sheet."""
    best: dict[str, Entry] = {}
    for offer in clouds.entries.values():
        def per_gpu(e: Entry) -> float:
            return e.number("reserved_3y_usd_per_hour") / max(1, e.number("gpus_per_instance"))

        gpu = offer.text("gpu")
        if gpu not in best or per_gpu(offer) < per_gpu(best[gpu]):
            best[gpu] = offer
    return best


def default_clouds(gpus: Catalog) -> Catalog:
    """The shipped cloud offers, for the GPUs `gpus` holds."""
    return load_clouds(DEFAULT_CLOUDS, gpus, strict=False)


class Reuse:
    """A sizing done before, under inputs that differ from this one's in `changed` leaves
    (kind, name) alone: a candidate's quantities that read none of them are its values there,
    copied instead of evaluated again. The sensitivity re-sizes the whole search for a cost
    input this way: latency, batch and replicas do not read a price."""

    def __init__(self, base: list[Sized], changed: Iterable[tuple[str, str]]) -> None:
        self.rows = {(s.workload.id, env.candidate): env for s in base for env in s.rows}
        self.changed = tuple(changed)
        self._kept: dict[str, bool] = {}

    def _keeps(self, name: str) -> bool:
        if name not in self._kept:
            self._kept[name] = not any(depends_on(name, leaf) for leaf in self.changed)
        return self._kept[name]

    def seed(self, env: FleetEnv) -> None:
        before = self.rows.get((env.workload.id, env.candidate))
        if before is None or before.speed_end != env.speed_end:
            return
        env.cache.update({k: v for k, v in before.cache.items() if self._keeps(k)})


def size_workload(workload: Workload, models: Catalog, gpus: Catalog, servers: Catalog,
                  assumptions: Mapping[str, float | str],
                  model_envs: dict[str, ModelEnv] | None = None,
                  offers: Mapping[str, Entry] | None = None,
                  reuse: Reuse | None = None) -> Sized:
    envs = model_envs if model_envs is not None else {}
    mid = workload.text("model")
    if mid not in envs:
        envs[mid] = ModelEnv(models.entries[mid], assumptions)
    rows = []
    engine, kind = str(assumptions["engine"]), model_class(models.entries[mid])
    speeds: dict[str, SpeedRatio] = {}
    ttfts: dict[str, TtftRatio] = {}
    for c in candidates(workload, models, servers, engine):
        if c.gpu not in speeds:
            speeds[c.gpu] = speed_ratio(c.gpu, engine, kind, gpu_name=gpus.entries[c.gpu].name)
            ttfts[c.gpu] = ttft_ratio(engine, c.gpu, kind, gpu_name=gpus.entries[c.gpu].name)
        env = FleetEnv(workload, servers.entries[c.server], c, envs[mid], gpus.entries[c.gpu],
                       assumptions, speeds[c.gpu], offer=(offers or {}).get(c.gpu),
                       ttft=ttfts[c.gpu])
        if reuse is not None:
            reuse.seed(env)
        for quantity in FLEET_QUANTITIES:
            env.value(quantity.name)
        rows.append(env)
    if not rows:
        raise _no_candidate(workload)
    choice = min(rows, key=_key)  # first of equals, as MATCH finds it in the workbook
    return Sized(workload, rows, choice)


def _no_candidate(workload: Workload) -> CatalogError:
    return CatalogError(workload.locate("gpus"), "no server in the server catalog carries an "
                        "allowed GPU at a TP degree this model can use",
                        "allow more GPUs, or add a server for one of them")


def check_sizable(workloads: Catalog, models: Catalog, servers: Catalog,
                  overrides: Mapping[str, float | str] | None = None) -> None:
    """What `size_all` would refuse, said without sizing: a rack that holds no server, a
    workload with no candidate."""
    assumptions = resolve(overrides)
    check_rack_limits(servers, assumptions)
    for entry in workloads.entries.values():
        assert isinstance(entry, Workload)
        if next(candidates(entry, models, servers, str(assumptions["engine"])), None) is None:
            raise _no_candidate(entry)


def size_all(workloads: Catalog, models: Catalog, gpus: Catalog, servers: Catalog,
             overrides: Mapping[str, float | str] | None = None,
             names: list[str] | tuple[str, ...] = (),
             clouds: Catalog | None = None, reuse: Reuse | None = None) -> list[Sized]:
    assumptions = resolve(overrides)
    check_rack_limits(servers, assumptions)
    chosen = list(names) or list(workloads.entries)
    for name in chosen:
        if name not in workloads.entries:
            raise ArgumentError(f"--workload {name}: unknown workload; known: "
                                f"{', '.join(workloads.entries)}")
    envs: dict[str, ModelEnv] = {}
    offers = cheapest_offers(clouds if clouds is not None else default_clouds(gpus))
    out = []
    for name in chosen:
        entry = workloads.entries[name]
        assert isinstance(entry, Workload)
        out.append(size_workload(entry, models, gpus, servers, assumptions, envs, offers,
                                 reuse))
    return out


# -- JSON ------------------------------------------------------------------------------------

_TOTALS = ("gpus", "servers", "racks", "it_power_w", "facility_power_w", "capex_usd",
           "opex_usd_per_year", "tco_usd")
# What finance buys, per workload: each a fleet quantity, summed over the workloads bought.
FINANCE_KEYS = ("gpus_bought", "idle_gpus", "extra_replicas", "replicas_installed",
                "rack_share", "server_capex_usd", "network_capex_usd", "energy_usd_per_year",
                "colocation_usd_per_year", "support_usd_per_year", "annual_cost_usd",
                "cloud_reserved_3y_usd_per_year")
SUMMED = (*_TOTALS, *FINANCE_KEYS, "cloud_usd_per_year", "cloud_reserved_usd_per_year")
# The fleet's own figures, over the totals: racks packed once, and buy or rent for the fleet.
FLEET_DECISION = ("cheapest_rent_usd_per_year", "verdict", "verdict_saving_usd_per_year")


def _as_float(value: Value) -> float:
    return float(value) if isinstance(value, int | float) else math.nan


def fleet_totals(results: list[Sized]) -> dict[str, Value]:
    """The totals of the workloads bought (every quantity in SUMMED), the racks they fill when
    packed together (their rack shares added, rounded up once) and the fleet's verdict: the
    verdict's definition over the totals."""
    chosen = bought(results)
    out: dict[str, Value] = {}
    for key in SUMMED:
        values = [env.value(key) for env in chosen]
        out[key] = sum(_as_float(v) for v in values)
    shares = sum(_as_float(env.value("rack_share")) for env in chosen)
    out["racks_packed"] = math.ceil(round(shares, 6))
    env = DictEnv({("q", k): v for k, v in out.items()})
    for name in FLEET_DECISION:
        out[name] = FLEET_BY_NAME[name].expr.evaluate(env)
        env.values[("q", name)] = out[name]
    return out


def _num(env: FleetEnv, name: str) -> float | int | str | bool:
    value = env.value(name)
    if isinstance(value, bool | str):
        return value
    if isinstance(value, int | float):
        quantity = FLEET_BY_NAME.get(name) or ROW_BY_NAME[name]
        return int(value) if quantity.kind == "int" else float(value)
    return str(value)


def fleet_json(env: FleetEnv) -> dict[str, object]:
    c = env.candidate
    out: dict[str, object] = {
        "workload": env.workload.id,
        "model": env.workload.text("model"),
        "prompt_tokens": int(env.workload.number("prompt_tokens")),
        "output_tokens": int(env.workload.number("output_tokens")),
        "meets_targets": _num(env, "meets_targets"),
        "failing_target": None if env.value("failing_target") == "none" else
        _num(env, "failing_target"),
        "choice": {"gpu": c.gpu, "server": c.server, "weights": c.weights, "kv": c.kv,
                   "tp": c.tp, "layout": c.layout,
                   "batch_per_replica": _num(env, "batch_chosen")},
        "layout": c.layout,
        "prefill_gpus": _num(env, "prefill_gpus"),
        "decode_gpus": _num(env, "decode_gpus"),
        "kv_transfer_seconds": _num(env, "kv_transfer_seconds"),
        "replicas": _num(env, "replicas"),
        "spare_replicas": int(env.workload.number("spare_replicas")),
    }
    for key in ("gpus", "servers", "racks", "it_power_w", "facility_power_w", "capex_usd",
                "opex_usd_per_year", "tco_usd", "usd_per_million_output_tokens",
                "usd_per_million_input_tokens", "cloud_usd_per_year",
                "cloud_reserved_usd_per_year", "break_even_utilisation", "itl_seconds"):
        out[key] = _num(env, key)
    for key in (*FINANCE_KEYS, "cheapest_rent_usd_per_year", "verdict",
                "verdict_saving_usd_per_year", "survives_server_loss"):
        out[key] = _num(env, key)
    out["order"] = {"server": c.server, "name": env.server.name,
                    "quantity": _num(env, "servers"),
                    "unit_price_usd": float(env.server.number("price_usd")),
                    "price_date": env.server.text("price_date"),
                    "extended_price_usd": _num(env, "server_capex_usd")}
    out["ttft_seconds"] = _num(env, "layout_ttft_mean_seconds")
    out["capacity_requests_per_second"] = _num(env, "capacity_requests_per_second")
    out["rate_requests_per_second"] = _num(env, "rate_requests_per_second")
    out["ttft_target_seconds"] = float(env.workload.number("ttft_s"))
    out["itl_target_seconds"] = float(env.workload.number("itl_s"))
    percentile = env.number("latency_percentile_used")
    out["latency_percentile"] = round(percentile * 100, 6)
    out["itl_percentile_seconds"] = _num(env, "layout_itl_percentile_seconds")
    out["ttft_percentile_seconds"] = _num(env, "layout_ttft_percentile_seconds")
    out["speed_basis"] = str(env.assumptions["speed_basis"])
    out["speed_ratio_applied"] = _num(env, "speed_ratio_applied")
    out["speed_ratio_basis"] = env.speed.basis
    out["ttft_margin_ratio"] = _num(env, "ttft_margin_ratio")
    out["ttft_ratio_basis"] = env.ttft.basis
    ends = spread(env)
    out["replicas_optimistic"] = ends.optimistic
    out["replicas_pessimistic"] = ends.pessimistic
    out["at_risk"] = ends.at_risk
    out["gpus_bought"] = _num(env, "gpus_bought")
    out["gpus_used"] = _num(env, "gpus")
    out["idle_gpus"] = _num(env, "idle_gpus")
    out["extra_replicas"] = _num(env, "extra_replicas")
    out["survives_server_loss"] = _num(env, "survives_server_loss")
    out["rack_share"] = _num(env, "rack_share")
    for key in ("server_capex_usd", "network_capex_usd", "support_usd_per_year",
                "energy_usd_per_year", "colocation_usd_per_year",
                "verdict_saving_usd_per_year"):
        out[key] = _num(env, key)
    offer = env.offer if env.value("cloud_instances") else None
    out["rent"] = {
        "instance": (f"{offer.text('provider')} {offer.text('instance')}" if offer is not None
                     else None),
        "offer": offer.id if offer is not None else None,
        "instances": _num(env, "cloud_instances"),
        "on_demand_usd_per_year": _num(env, "cloud_usd_per_year"),
        "reserved_1y_usd_per_year": _num(env, "cloud_reserved_usd_per_year"),
        "reserved_3y_usd_per_year": _num(env, "cloud_reserved_3y_usd_per_year"),
    }
    out["owned_equivalent_annual_cost_usd"] = _num(env, "annual_cost_usd")
    out["verdict"] = _num(env, "verdict")
    out["measured_speed"] = speed_on(c.gpu, str(env.assumptions["engine"]),
                                     model_class=model_class(env.model.model))
    out["measured_ttft"] = ttft_figures()
    return out


def size_json(results: list[Sized]) -> dict[str, object]:
    workloads = []
    for r in results:
        assert r.choice is not None
        entry = fleet_json(r.choice)
        entry["met"] = r.met
        entry["cannot_meet"] = r.cannot_meet
        entry["alternatives"] = [fleet_json(e) for e in r.alternatives()]
        entry["best_per_layout"] = best_per_layout(r)
        workloads.append(entry)
    met = [w for w in workloads if w["met"]]
    totals: dict[str, object] = {k: sum(w[k] for w in met)  # type: ignore[misc]
                                 for k in (*_TOTALS, *FINANCE_KEYS)}
    totals["workloads_sized"] = len(met)
    totals["workloads"] = len(workloads)
    fleet = fleet_totals(results)
    totals["racks_alone"] = totals["racks"]  # each workload's fleet in racks of its own
    totals["racks"] = fleet["racks_packed"]  # the fleet's racks: the shares packed together
    return {"workloads": workloads, "totals": totals,
            "fleet": {"racks_packed": fleet["racks_packed"],
                      **{k: fleet[k] for k in FLEET_DECISION}}}
