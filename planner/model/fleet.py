"""Fleet scope: one workload served by one candidate configuration, from replicas to a budget.

A fleet row is a configuration row (``planner.model.quantities``) whose model, prompt, output,
context and batch come from the workload, plus the quantities below. The batch is the largest that
meets the inter-token target (a closed form: a serving step is linear in the batch on each of its
memory and compute pieces), capped by what fits and by the engine's max_num_seqs. Then: replicas for
the peak rate (with headroom) and for the ITL and time-to-first-token targets at their
percentile (docs/latency.md: the batch decoding at each load by Little's law, the M/D/1 tail of
the prefill queue, the wait for a KV slot), spares, GPUs, servers (a TP group never spans
servers), racks (rack units and rack power), power, capex, opex, TCO, $/M tokens and the rented
alternative.

Leaves beyond the row scope: ``workload`` and ``server`` catalog fields.
"""

from __future__ import annotations

from functools import cache

from planner.model.expr import AND, IF, INT, MAX, MIN, NOT, Expr, Ref
from planner.model.fleet_refs import OUTPUT as _O
from planner.model.fleet_refs import PROMPT as _P
from planner.model.fleet_refs import ceil as _ceil
from planner.model.fleet_refs import cloud, measured, srv, w
from planner.model.latency import LATENCY_AT_LOAD, LATENCY_LIMITS
from planner.model.layouts import DISAGG, POOL_QUANTITIES, STEP_QUANTITIES, layout_capped
from planner.model.quantities import QUANTITY_BY_NAME
from planner.model.quantity import Quantity, a, e, m, q, v
from planner.model.speed_quantities import allreduce_traffic_at, gemm_efficiency_at
from planner.model.units import HOURS_PER_YEAR, MILLION, SECONDS_PER_YEAR

_tp = v("tp")
_layers = m("num_hidden_layers")
NOT_MET = 1e15  # choice key of a candidate that misses a target: after every one that meets


# The configuration a fleet row evaluates: the workload's tokens, the chosen batch.
FLEET_VARS: dict[str, Expr] = {
    "prompt": _P,
    "output": _O,
    "context": _P + _O,
    "batch": q("batch_chosen"),
}

def _itl_bounds(suffix: str, label: str, per: Expr, compute: Expr) -> list[Quantity]:
    """The three linear bounds on the batch that meets the ITL budget, with `per` the time each
    sequence adds and `compute` the achieved FLOP/s the GEMMs run at."""
    budget = q("itl_budget_model") - q("layout_step_fixed_seconds")
    return [
        Quantity(f"batch_memory_all_experts{suffix}",
                 f"Batch at the ITL target (memory, all weights){label}", "sequences",
                 (budget - q("weights_read_seconds")) / per,
                 "(ITL budget − fixed − weights / TP / bandwidth) / per-sequence time"),
        Quantity(f"batch_memory_routed{suffix}",
                 f"Batch at the ITL target (memory, routed experts){label}", "sequences",
                 IF(m("experts") > 0,
                    (budget - (q("weight_bytes") - q("expert_weight_bytes")) / _tp
                     / q("bandwidth_achieved"))
                    / (q("expert_weight_bytes") * m("num_experts_per_tok") / m("experts") / _tp
                       / q("bandwidth_achieved") + per), 0),
                 "MoE: each sequence reads at most its top-k experts; a bound that never "
                 "overstates the batch"),
        Quantity(f"batch_compute{suffix}", f"Batch at the ITL target (compute){label}",
                 "sequences",
                 budget / (q("serving_flops_per_sequence") / _tp / compute + per),
                 "(ITL budget − fixed) / (GEMM FLOPs per sequence / TP / FLOP/s + per-sequence "
                 "time)"),
    ]


FLEET_QUANTITIES: list[Quantity] = [
    Quantity("rate_requests_per_second", "Peak request rate", "requests/s",
             IF(w("rate_rps") > 0, w("rate_rps"),
                w("tokens_per_day") / 86400 / (_P + _O) * MAX(1, w("peak_to_average"))),
             "rate_rps, or tokens per day / 86,400 / (prompt + output) × peak-to-average"),
    Quantity("latency_percentile_used", "Latency percentile of the targets", "fraction",
             IF(w("latency_percentile") > 0, w("latency_percentile"), 95) / 100,
             "the workload's latency_percentile ÷ 100 (95 when not given): the targets hold for "
             "this share of tokens and requests", display="ratio"),
    Quantity("speed_ratio_applied", "Measured speed error applied", "ratio",
             IF(a("speed_basis").eq("model"), 1, measured("speed_ratio")),
             "speed_basis measured: the median planner ÷ published serving speed measured for "
             "this GPU, engine and model class (1 where none was measured); model: 1. Every "
             "time below is the model's time × this ratio", display="ratio"),
    Quantity("ttft_margin_ratio", "Measured first-token error beyond the speed error",
             "ratio",
             IF(a("speed_basis").eq("model"), 1,
                MAX(1, measured("ttft_ratio") / q("speed_ratio_applied"))),
             "speed_basis measured: the median published ÷ planner time to first token with no "
             "queue measured for this engine (every engine's where it has fewer than 10 runs), "
             "over the measured speed error already applied, at least 1; model: 1. The first "
             "token's time with no queue is the model's × this ratio", display="ratio"),
    Quantity("itl_budget_model", "ITL target in the model's time", "s",
             w("itl_s") / q("speed_ratio_applied"),
             "ITL target ÷ measured speed error: the step time the model may predict",
             display="seconds"),
    Quantity("bandwidth_achieved", "Achieved bandwidth per GPU", "B/s",
             q("bandwidth_bytes_per_second") * q("bandwidth_efficiency_used"),
             "bandwidth × bandwidth efficiency", display="rate"),
    Quantity("compute_achieved", "Achieved FLOP/s per GPU", "FLOP/s",
             q("peak_flops_per_gpu") * q("compute_efficiency_used"),
             "peak FLOP/s × compute efficiency", display="rate"),
    *STEP_QUANTITIES,
    Quantity("step_seconds_per_sequence", "Step time each sequence adds (shared part)", "s",
             q("allreduce_traffic_seconds_per_sequence")
             + IF(DISAGG, 0, (q("layout_prefill_interleaved_seconds")
                              + IF(e("mixes_prefill"), 0, q("prefill_pass_fixed_seconds"))) / _O)
             + q("step_seconds_per_running_sequence")
             + q("serving_attention_seconds_per_sequence") + q("layout_seconds_per_sequence"),
             "all-reduce traffic per sequence + its prefill spread over its output tokens (with "
             "a prefill pass's fixed cost where the engine runs prefill apart: an upper bound, "
             "so the batch is never overstated; none in a disaggregated decode pool) + engine "
             "time per sequence + its attention + what the layout adds (planner.model.layouts)",
             display="seconds"),
    *_itl_bounds("", "", q("step_seconds_per_sequence"), q("compute_achieved")),
    Quantity("batch_for_itl_first", "Largest batch meeting the ITL target (first pass)",
             "sequences",
             layout_capped(INT(MIN(MAX(q("batch_memory_all_experts"),
                                       q("batch_memory_routed")), q("batch_compute")))),
             "whole sequences under both the memory and the compute piece, with each "
             "sequence's all-reduce averaged over the reference batch and the GEMMs at the "
             "compute efficiency; capped as the batch is (at least 1)", kind="int"),
    Quantity("allreduce_traffic_at_first_pass", "All-reduce time each sequence adds at the "
             "first pass's batch", "s", allreduce_traffic_at(q("batch_for_itl_first")),
             "(the all-reduces of that batch − their latency) / that batch: small messages "
             "cost more a byte, so this is at least the reference batch's average",
             display="seconds"),
    Quantity("step_seconds_per_sequence_at_first_pass", "Step time each sequence adds "
             "(shared part, second pass)", "s",
             q("step_seconds_per_sequence")
             + (q("allreduce_traffic_at_first_pass") - q("allreduce_traffic_seconds_per_sequence"))
             * (1 - q("allreduce_share_removed")),
             "the per-sequence time with each sequence's all-reduce at the first pass's batch "
             "(less the share the layout removes)", display="seconds"),
    Quantity("compute_achieved_at_first_pass", "Achieved FLOP/s at the first pass's batch",
             "FLOP/s", q("peak_flops_per_gpu") * gemm_efficiency_at(q("batch_for_itl_first")),
             "peak FLOP/s × the GEMM efficiency of a decode step of that many sequences",
             display="rate"),
    *_itl_bounds("_at_first_pass", " (second pass)",
                 q("step_seconds_per_sequence_at_first_pass"),
                 q("compute_achieved_at_first_pass")),
    Quantity("batch_for_itl", "Largest batch meeting the ITL target", "sequences",
             INT(MIN(MAX(q("batch_memory_all_experts_at_first_pass"),
                         q("batch_memory_routed_at_first_pass")),
                     q("batch_compute_at_first_pass"))),
             "whole sequences under both the memory and the compute piece, a second pass with "
             "each sequence's all-reduce and the GEMMs' efficiency at the first pass's batch: "
             "the step is linear in the batch only piecewise (an all-reduce costs more a byte "
             "for small messages, a GEMM runs less efficiently with fewer rows), so the slope "
             "is taken near the batch it sets", kind="int"),
    Quantity("batch_chosen", "Batch per replica", "sequences",
             layout_capped(q("batch_for_itl")),
             "the ITL batch capped by the sequences of prompt + output that fit and the "
             "engine's max_num_seqs (at least 1)", kind="int"),
    Quantity("itl_seconds", "Inter-token latency, mean", "s",
             (q("tpot_seconds") + q("layout_step_delta_seconds")
              - IF(AND(DISAGG, _O > 0), q("prefill_per_step_seconds"), 0))
             * q("speed_ratio_applied"),
             "time per output token at the chosen batch (prefill spread over the decode steps, "
             "none in a disaggregated decode pool) + what the layout adds × measured speed "
             "error", display="seconds"),
    Quantity("requests_per_second_per_replica", "Requests per replica", "requests/s",
             q("batch_chosen") / (_O * q("itl_seconds")),
             "batch / (output tokens × mean inter-token latency) (Little's law)"),
    Quantity("replicas_for_rate", "Replicas for the peak rate", "replicas",
             _ceil(q("rate_requests_per_second")
                   / (q("requests_per_second_per_replica") * a("target_utilisation"))),
             "peak rate / (requests per replica × target utilisation), rounded up", kind="int"),
    *LATENCY_LIMITS,
    Quantity("serving_replicas", "Serving replicas", "replicas",
             MAX(1, q("replicas_for_rate"), q("replicas_for_ttft"), q("replicas_for_itl_tail")),
             "the most of the three, at least one", kind="int"),
    Quantity("replicas", "Replicas (spares included)", "replicas",
             q("layout_serving_replicas") + w("spare_replicas"), "serving replicas + spares",
             kind="int"),
    Quantity("capacity_requests_per_second", "Served capacity", "requests/s",
             IF(DISAGG, q("decode_replicas"), q("serving_replicas"))
             * q("requests_per_second_per_replica"),
             "serving replicas × requests per replica (spares not counted)"),
    Quantity("arrivals_per_replica", "Peak arrivals per serving replica", "requests/s",
             q("rate_requests_per_second") / q("serving_replicas"),
             "peak rate / serving replicas"),
    *LATENCY_AT_LOAD,
    *POOL_QUANTITIES,
    Quantity("fits_workload", "A sequence of prompt + output fits", "",
             AND(q("max_sequences") >= 1, q("context_supported")),
             "at least one sequence of prompt + output tokens fits, within the model's context "
             "limit", kind="bool"),
    Quantity("meets_itl", "Meets the ITL target", "",
             AND(q("batch_for_itl") >= 1, q("itl_seconds") <= w("itl_s"),
                 q("layout_itl_percentile_seconds") <= w("itl_s")),
             "batch 1 or more meets the target, and the mean and percentile gaps are within it",
             kind="bool"),
    Quantity("meets_ttft", "Meets the TTFT target", "",
             q("layout_ttft_percentile_seconds") <= w("ttft_s"),
             "TTFT at the percentile within the target", kind="bool"),
    Quantity("meets_targets", "Meets every target", "",
             AND(q("fits_workload"), q("meets_itl"), q("meets_ttft")),
             "fits, meets ITL and meets TTFT", kind="bool"),
    Quantity("failing_target", "Target missed", "",
             IF(NOT(q("fits_workload")), "memory",
                IF(NOT(q("meets_itl")), "itl", IF(NOT(q("meets_ttft")), "ttft", "none"))),
             "the first target missed: memory, itl or ttft (none when all are met)",
             kind="text"),
    Quantity("target_miss_ratio", "Worst achieved ÷ target", "ratio",
             MAX(q("layout_itl_percentile_seconds") / w("itl_s"),
                 q("layout_ttft_percentile_seconds") / w("ttft_s"), IF(q("fits_workload"), 0, 99)),
             "the larger of ITL ÷ target and TTFT ÷ target at the percentile (99 when nothing "
             "fits)",
             display="ratio"),
    Quantity("gpus", "GPUs running the replicas", "GPUs", q("replicas") * _tp,
             "replicas (spares included) × TP", kind="int"),
    Quantity("replicas_per_server", "Replicas per server", "replicas",
             INT(srv("gpus_per_server") / _tp),
             "whole TP groups in one server (a group never spans servers)", kind="int"),
    Quantity("servers_for_replicas", "Servers holding the replicas", "servers",
             _ceil(q("replicas") / q("replicas_per_server")),
             "replicas / replicas per server, rounded up", kind="int"),
    Quantity("servers", "Servers bought", "servers",
             MAX(q("servers_for_replicas"),
                 IF(a("redundancy").eq("n+1"),
                    _ceil(q("layout_serving_replicas") / q("replicas_per_server")) + 1, 0)),
             "the servers holding the replicas; under redundancy n+1 at least one server more "
             "than the serving replicas need, so the peak rate is still carried with any one "
             "server down (spares sit in another server)", kind="int"),
    Quantity("gpus_bought", "GPUs bought", "GPUs", q("servers") * srv("gpus_per_server"),
             "servers × GPUs per server: what the order buys", kind="int"),
    Quantity("replicas_installed", "Replicas the servers hold", "replicas",
             q("servers") * q("replicas_per_server"),
             "servers × replicas per server: GPUs a server leaves free run extra replicas, "
             "headroom at no cost", kind="int"),
    Quantity("extra_replicas", "Extra replicas in GPUs already bought", "replicas",
             q("replicas_installed") - q("replicas"),
             "replicas the servers hold − replicas planned", kind="int"),
    Quantity("idle_gpus", "GPUs bought that no replica uses", "GPUs",
             q("gpus_bought") - q("replicas_installed") * _tp,
             "GPUs bought − replicas the servers hold × TP (a TP group needs its GPUs in one "
             "server)", kind="int"),
    Quantity("survives_server_loss", "Peak rate carried with one server down", "",
             (q("servers") - 1) * q("replicas_per_server") >= q("layout_serving_replicas"),
             "(servers − 1) × replicas per server ≥ serving replicas", kind="bool"),
    Quantity("servers_per_rack", "Servers per rack", "servers",
             MIN(INT(a("rack_units_per_rack") / srv("rack_units")),
                 INT(a("rack_power_kw") / srv("power_kw"))),
             "the fewer of rack units ÷ server height and rack power ÷ server power",
             kind="int"),
    Quantity("racks", "Racks (this workload alone)", "racks",
             IF(srv("whole_rack"), q("servers"),
                _ceil(q("servers") / MAX(1, q("servers_per_rack")))),
             "servers / servers per rack, rounded up (a rack-scale unit is its own rack)",
             kind="int"),
    Quantity("rack_share", "Share of racks (packed with the fleet)", "racks",
             IF(srv("whole_rack"), q("servers"), q("servers") / MAX(1, q("servers_per_rack"))),
             "servers / servers per rack, not rounded: the fleet's racks are its workloads' "
             "shares added up and rounded up once", display="ratio"),
    Quantity("it_power_w", "IT power (maximum)", "W", q("servers") * srv("power_kw") * 1000,
             "servers × maximum server power"),
    Quantity("facility_power_w", "Facility power", "W", q("it_power_w") * a("pue"),
             "IT power × PUE"),
    Quantity("server_capex_usd", "Servers", "USD", q("servers") * srv("price_usd"),
             "servers × server price", display="usd"),
    Quantity("network_capex_usd", "Network", "USD",
             q("servers") * srv("network_usd_per_server"),
             "servers × network cost per server (its fabric's switch share and cables)",
             display="usd"),
    Quantity("capex_usd", "Capex", "USD", q("server_capex_usd") + q("network_capex_usd"),
             "servers + network", display="usd"),
    Quantity("energy_usd_per_year", "Energy per year", "USD",
             q("it_power_w") / 1000 * a("average_power_share") * a("pue") * HOURS_PER_YEAR
             * a("electricity_usd_per_kwh"),
             "IT kW × average power share × PUE × 8,760 h × electricity price", display="usd"),
    Quantity("colocation_usd_per_year", "Colocation per year", "USD",
             q("it_power_w") / 1000 * a("colocation_usd_per_kw_month") * 12,
             "IT kW × colocation price per kW-month × 12", display="usd"),
    Quantity("support_usd_per_year", "Software and support per year", "USD",
             q("gpus_bought") * srv("support_usd_per_gpu_year"),
             "GPUs bought × the server's support per GPU-year (NVIDIA AI Enterprise where not "
             "bundled, 0 for AMD)", display="usd"),
    Quantity("opex_usd_per_year", "Opex per year", "USD",
             q("energy_usd_per_year") + q("colocation_usd_per_year")
             + q("support_usd_per_year"), "energy + colocation + support", display="usd"),
    Quantity("present_value_factor", "Present value of 1 USD a year", "years",
             IF(a("discount_rate") > 0,
                (1 - (1 + a("discount_rate")) ** -a("amortisation_years")) / a("discount_rate"),
                a("amortisation_years")),
             "(1 − (1 + rate)^−years) / rate: end-of-year payments over the amortisation period",
             display="ratio"),
    Quantity("tco_usd", "TCO over the amortisation period", "USD",
             q("capex_usd") + q("opex_usd_per_year") * q("present_value_factor"),
             "capex + opex × present-value factor (discounted at discount_rate)", display="usd"),
    Quantity("annual_cost_usd", "Owned, equivalent annual cost", "USD",
             q("capex_usd") / q("present_value_factor") + q("opex_usd_per_year"),
             "capex spread as an annuity at discount_rate over amortisation_years (PMT) + opex: "
             "owning on the same yearly basis as renting", display="usd"),
    Quantity("prefill_time_share", "Share of GPU time on prefill", "fraction",
             IF(DISAGG, q("prefill_replicas") / q("layout_serving_replicas"),
                q("batch_chosen") / _O * q("layout_prefill_interleaved_seconds")
                / q("tpot_seconds")),
             "interleaved prefill time ÷ time per output token; disaggregated: prefill "
             "replicas ÷ serving replicas", display="ratio"),
    Quantity("average_requests_per_second", "Average request rate", "requests/s",
             q("rate_requests_per_second") / MAX(1, w("peak_to_average")),
             "peak rate / peak-to-average (1 when not given)"),
    Quantity("usd_per_million_output_tokens", "Owned cost per million output tokens", "USD",
             q("annual_cost_usd") * (1 - q("prefill_time_share"))
             / (q("average_requests_per_second") * _O * SECONDS_PER_YEAR) * MILLION,
             "annual cost × decode share of GPU time / output tokens a year × 10^6",
             display="usd"),
    Quantity("usd_per_million_input_tokens", "Owned cost per million input tokens", "USD",
             q("annual_cost_usd") * q("prefill_time_share")
             / (q("average_requests_per_second") * _P * SECONDS_PER_YEAR) * MILLION,
             "annual cost × prefill share of GPU time / input tokens a year × 10^6",
             display="usd"),
    Quantity("cloud_replicas_per_instance", "Replicas per cloud instance", "replicas",
             IF(cloud("offer_exists"), INT(cloud("gpus_per_instance") / _tp), 0),
             "whole TP groups in one instance of the cheapest offer for this GPU "
             "(catalogs/clouds.yaml); 0 where there is none", kind="int"),
    Quantity("cloud_instances", "Cloud instances to rent", "instances",
             IF(q("cloud_replicas_per_instance") > 0,
                _ceil(q("replicas") / q("cloud_replicas_per_instance")), 0),
             "replicas (spares included) / replicas per instance, rounded up", kind="int"),
    Quantity("cloud_usd_per_year", "Rented on demand, per year", "USD",
             IF(q("cloud_instances") > 0,
                q("cloud_instances") * cloud("on_demand_usd_per_hour") * HOURS_PER_YEAR,
                q("gpus") * Ref("gpu", "price_per_hour_usd") * HOURS_PER_YEAR),
             "instances × on-demand price per instance-hour × 8,760 h (no offer for this "
             "GPU and TP: GPUs × the GPU's hourly price)", display="usd"),
    Quantity("cloud_reserved_usd_per_year", "Rented 1-year reserved, per year", "USD",
             IF(q("cloud_instances") > 0,
                q("cloud_instances") * cloud("reserved_1y_usd_per_hour") * HOURS_PER_YEAR,
                q("cloud_usd_per_year") * (1 - a("reserved_discount"))),
             "instances × 1-year reserved price × 8,760 h (no offer: on demand × (1 − "
             "reserved_discount))", display="usd"),
    Quantity("cloud_reserved_3y_usd_per_year", "Rented 3-year reserved, per year", "USD",
             IF(q("cloud_instances") > 0,
                q("cloud_instances") * cloud("reserved_3y_usd_per_hour") * HOURS_PER_YEAR,
                q("cloud_usd_per_year") * (1 - a("reserved_discount"))),
             "instances × 3-year reserved price × 8,760 h (no offer: on demand × (1 − "
             "reserved_discount))", display="usd"),
    Quantity("break_even_utilisation", "Break-even utilisation against on-demand", "fraction",
             q("annual_cost_usd") / q("cloud_usd_per_year"),
             "owned annual cost ÷ on-demand annual cost: renting on demand is cheaper when the "
             "GPUs would be busy less than this share of the year", display="ratio"),
    Quantity("cheapest_rent_usd_per_year", "Cheapest rent, per year", "USD",
             MIN(q("cloud_usd_per_year"), q("cloud_reserved_usd_per_year"),
                 q("cloud_reserved_3y_usd_per_year")),
             "the least of on demand, 1-year and 3-year reserved", display="usd"),
    Quantity("verdict", "Buy or rent", "",
             IF(q("annual_cost_usd") <= q("cheapest_rent_usd_per_year"), "buy",
                IF(q("cloud_reserved_3y_usd_per_year") <= q("cheapest_rent_usd_per_year"),
                   "rent 3-year reserved",
                   IF(q("cloud_reserved_usd_per_year") <= q("cheapest_rent_usd_per_year"),
                      "rent 1-year reserved", "rent on demand"))),
             "buy where the owned annual cost is no more than the cheapest rent; else the "
             "cheapest rental term", kind="text"),
    Quantity("verdict_saving_usd_per_year", "Saving of the verdict over the other", "USD",
             MAX(q("annual_cost_usd"), q("cheapest_rent_usd_per_year"))
             - MIN(q("annual_cost_usd"), q("cheapest_rent_usd_per_year")),
             "|owned annual cost − cheapest rent|", display="usd"),
    Quantity("choice_key", "Choice key (lowest wins)", "USD",
             IF(q("meets_targets"), q("tco_usd"), NOT_MET * (1 + q("target_miss_ratio"))),
             "TCO when every target is met; otherwise after all that meet, closest miss first",
             display="usd"),
]

FLEET_BY_NAME = {x.name: x for x in FLEET_QUANTITIES}
QUANTITY_BY_NAME.update(FLEET_BY_NAME)


# Leaves read through a kind of their own: a format's figures read its bytes_per_* assumption,
# the engine table and the measured speed error the engine's name (kind -> what the assumption's
# name starts with).
_THROUGH = {"weights": "bytes_per", "kv": "bytes_per", "engine": "engine", "measured": "engine"}


@cache
def depends_on(quantity: str, leaf: tuple[str, str]) -> bool:
    """Whether a quantity reads `leaf` (kind, name) through any quantity or fleet variable it
    reads, an assumption read through a format, the engine table or the measured speed error
    (_THROUGH) included."""
    from planner.model.quantities import MODEL_BY_NAME

    q_ = QUANTITY_BY_NAME.get(quantity) or MODEL_BY_NAME.get(quantity)
    if q_ is None:
        return False
    return _reads(q_.expr, leaf)


def _reads(expr: Expr, leaf: tuple[str, str]) -> bool:
    through = leaf[0] == "assume"
    for kind, name in expr.refs():
        if (kind, name) == leaf or through and kind in _THROUGH and leaf[1].startswith(
                _THROUGH[kind]):
            return True
        if kind in ("q", "model") and depends_on(name, leaf):
            return True
        if kind == "var" and name in FLEET_VARS and _reads(FLEET_VARS[name], leaf):
            return True
    return False
