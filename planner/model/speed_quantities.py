"""Row-scope speed and cost quantities: how fast one configuration serves, and at what price.

The SPEC §3 roofline decode step (bytes and FLOPs per step against bandwidth and peak FLOP/s,
with the efficiencies used), time to first token and cost per million tokens, then the serving
model an engine achieves: per-step kernel and per-sequence overheads, attention, all-reduces
(``allreduce_seconds``, which the fleet quantities also use), interleaved prefill, time per
output token and serving throughput. ``planner.model.quantities`` puts them after the memory
quantities in the row order.
"""

from __future__ import annotations

from planner.model.expr import AND, IF, INT, MAX, MIN, OR, Expr, Ref
from planner.model.perop import HasTable, Measured
from planner.model.quantity import Quantity, a, e, engine_default, g, layer_tokens, m, q, v
from planner.model.units import GB, MILLION, SECONDS_PER_HOUR, TB_PER_S, TFLOPS

_hidden = m("hidden_size")
_layers = m("num_hidden_layers")
_tp = v("tp")
_t = v("context")
_b = v("batch")
_p = v("prompt")
_o = v("output")
_s = Ref("kv", "bytes_per_element")
_compute = Ref("weights", "compute")
_act = a("activation_bytes_per_element")
_measured = HasTable()  # the GPU and engine have measured per-op tables (catalogs/perop.yaml)
_auto_bandwidth = a("bandwidth_efficiency").eq("auto")
_auto_compute = a("compute_efficiency").eq("auto")
_allreduce_tp = q("allreduce_tp_index")  # the row of TP 2, 4 or 8 in the all-reduce table


def _gemm_efficiency(tokens: Expr) -> Expr:
    """The measured GEMM efficiency at `tokens` rows: tokens ÷ the GEMM's time in units of
    tokens ÷ efficiency, linear between the table's measured token counts."""
    kind = q("gemm_table_kind")
    return tokens / (Measured("gemm_fixed", kind, tokens)
                     + tokens * Measured("gemm_slope", kind, tokens))


def _moe_row(at8: int, at4: int, at2: int) -> Expr:
    """The fused-MoE table's row for the GEMMs' precision (7 rows each: ``MOE_LAYOUTS``) and a
    layout whose rows for 8, 4 and 2 GPUs are given (one GPU: the TP 1 row)."""
    return (7 * INT(q("gemm_table_kind") / 2)
            + IF(_tp >= 8, at8, IF(_tp >= 4, at4, IF(_tp >= 2, at2, 0))))


def expert_seconds_saved(old: Expr, new: Expr) -> Expr:
    """The time a prefill's routed-expert FLOPs save running at efficiency `new`, not `old`."""
    return (q("prefill_expert_flops") / (_tp * q("peak_flops_per_gpu"))
            * (1 / old - 1 / new))


def _moe_efficiency(kind: Expr, tokens: Expr) -> Expr:
    """The measured fused MoE's efficiency (table row `kind`) at `tokens` multiplied by each
    routed expert, its time linear between the measured counts (as the GEMM's); the compute
    efficiency used where compute_efficiency is set, the GPU and engine have no table or the
    row was not measured."""
    return IF(AND(_auto_compute, _measured, m("experts") > 0),
              IF(Measured("moe", kind) > 0,
                 tokens / (Measured("moe_fixed", kind, tokens)
                           + tokens * Measured("moe_slope", kind, tokens)),
                 q("compute_efficiency_used")),
              q("compute_efficiency_used"))


def gemm_efficiency_at(tokens: Expr) -> Expr:
    """The GEMM efficiency a decode step of `tokens` sequences runs at: with compute_efficiency
    'auto' and a measured per-op table, the table's at that many rows, else the compute
    efficiency used (``decode_gemm_efficiency`` at the serving batch)."""
    return IF(AND(_auto_compute, _measured), _gemm_efficiency(tokens),
              q("compute_efficiency_used"))


def _measured_above_latency(message: Expr) -> Expr:
    """The measured all-reduce's time for a message beyond its latency, in seconds: linear
    between the table's measured sizes (its fixed part and slope on the message's segment)."""
    return (message * Measured("allreduce_slope", _allreduce_tp, message) / 10**12
            + Measured("allreduce_fixed", _allreduce_tp, message) / MILLION
            - q("allreduce_measured_latency_seconds"))


def allreduce_traffic_at(batch: Expr) -> Expr:
    """The all-reduce time each of `batch` sequences adds above the latency: the all-reduces of
    that batch less their latency, ÷ the batch (``allreduce_seconds(batch) −
    allreduce_seconds(None)``, written out so its formula stays short: exact at that batch,
    from a measured table or the ring formula)."""
    per_token = q("allreduce_bytes_per_token")
    measured = _measured_above_latency(batch * per_token) / batch
    ring = 2 * (_tp - 1) / _tp * per_token / q("scale_up_bytes_per_second")  # any batch
    return IF(_tp > 1, 2 * _layers * IF(q("allreduce_measured_latency_seconds") > 0, measured,
                                        ring), 0)


def _experts_read(batch: Expr) -> Expr:
    """Distinct experts a batch routes to per MoE layer, uniform independent routing."""
    return IF(m("experts") > 0,
              m("experts") * (1 - (1 - m("num_experts_per_tok") / m("experts")) ** batch), 0)


def _weights_read(experts_read: Expr) -> Expr:
    """Weights one step reads: all but the routed experts the batch does not reach."""
    return q("weight_bytes") - IF(m("experts") > 0, q("expert_weight_bytes")
                                  * (1 - experts_read / m("experts")), 0)


def _prefill_pairs(p: Expr) -> Expr:
    """Causal query-key pairs per head summed over layers, for a prompt of p tokens."""
    w = MIN(p, m("sliding_window"))
    c = MIN(p, m("attention_chunk_size"))
    return (m("full_attention_layers") * p * p / 2
            + m("sliding_attention_layers") * w * (p - w / 2)
            + m("chunked_attention_layers") * p * c / 2)


def allreduce_seconds(tokens: Expr | None, latency: bool = True) -> Expr:
    """Two all-reduces per layer (attention and FFN outputs) of tokens × hidden activations
    across the TP group: latency + ring traffic 2(TP − 1)/TP × bytes over scale-up bandwidth,
    or, where the GPU and engine have a measured all-reduce table at this TP, its time for the
    message, linear between the measured sizes (``latency=False``: the slope alone, since the
    bytes join a message the step sends anyway).
    Tokens that ride in a step that already pays the latency (prefill chunks interleaved with
    decode) add only the traffic: ``latency=False``; ``tokens=None`` is the latency alone."""
    parts: list[Expr] = [q("allreduce_latency_seconds")] if latency else []
    if tokens is not None:
        message = tokens * q("allreduce_bytes_per_token")
        measured = (_measured_above_latency(message) if latency else
                    message * Measured("allreduce_slope", _allreduce_tp, message) / 10**12)
        parts.append(IF(q("allreduce_measured_latency_seconds") > 0, measured,
                        2 * (_tp - 1) / _tp * message / q("scale_up_bytes_per_second")))
    per_layer = parts[0] if len(parts) == 1 else parts[0] + parts[1]
    return IF(_tp > 1, 2 * _layers * per_layer, 0)


SPEED_QUANTITIES: list[Quantity] = [
    # -- roofline decode (SPEC §3) --------------------------------------------------------------
    Quantity("experts_read_per_layer", "Experts read per MoE layer", "experts",
             _experts_read(_b),
             "expected distinct experts the batch routes to, assuming uniform independent "
             "routing: E × (1 − (1 − k/E)^batch), at most all experts"),
    Quantity("weight_bytes_read_per_step", "Weights read per step", "B",
             _weights_read(q("experts_read_per_layer")),
             "dense: all weights; MoE: all but the routed experts the batch does not read",
             display="bytes"),
    Quantity("decode_bytes_per_step", "Bytes read per decode step", "B",
             q("weight_bytes_read_per_step") + q("kv_bytes_in_use"),
             "weights read + the KV cache the batch holds, all GPUs", spec=True,
             display="bytes"),
    Quantity("decode_bytes_per_gpu", "Bytes read per step per GPU", "B",
             q("weight_bytes_read_per_step") / _tp + _b * q("kv_bytes_per_sequence_per_gpu"),
             "weights read / TP + batch × KV per sequence per GPU (replicated KV read on every "
             "rank)", display="bytes"),
    Quantity("decode_flops_per_step", "FLOPs per decode step", "FLOP",
             _b * (2 * m("params_active")
                   + 4 * m("num_attention_heads") * m("attention_head_dim")
                   * layer_tokens(_t, False)),
             "batch × (2 × active parameters + 4 × query heads × head dim × attended "
             "layer-tokens, windows capped)", spec=True),
    Quantity("peak_flops_per_gpu", "Peak dense FLOP/s per GPU", "FLOP/s",
             TFLOPS * IF(AND(_compute.eq("fp8"), g("fp8_tflops") > 0), g("fp8_tflops"),
                         IF(AND(_compute.eq("fp4"), g("fp4_tflops") > 0), g("fp4_tflops"),
                            g("bf16_tflops"))),
             "dense tensor FLOP/s at the precision the multiplies run in: FP8/FP4 when the "
             "weights are and the GPU has the units, else BF16", display="rate"),
    Quantity("bandwidth_bytes_per_second", "Memory bandwidth per GPU", "B/s",
             g("bandwidth_tb_s") * TB_PER_S, "bandwidth_tb_s × 10^12", display="rate"),
    Quantity("gemm_table_kind", "Measured GEMM table, precision and shape", "row",
             IF(AND(_compute.eq("fp8"), g("fp8_tflops") > 0), 2,
                IF(AND(_compute.eq("fp4"), g("fp4_tflops") > 0), 4, 0))
             + IF(m("params_active") / _layers / _tp / 4 >= 2**24, 1, 0),
             "the row of the GPU's measured GEMM table that applies: 0-1 BF16, 2-3 FP8, 4-5 FP4 "
             "(the precision the multiplies run in), + 1 when a layer's mean GEMM per GPU "
             "(active parameters / layers / TP / 4) holds at least 2^24 weights (the large "
             "N × K class)", kind="int"),
    Quantity("moe_table_kind", "Measured fused-MoE table row, experts sliced over TP", "row",
             _moe_row(3, 2, 1),
             "the row of the GPU's measured fused-MoE table for experts sliced over the TP "
             "group: 7 rows a precision (BF16, FP8, FP4: the GEMMs'), of which TP 1, 2, 4, 8 "
             "first (TP 3 reads TP 2's)", kind="int"),
    Quantity("moe_table_kind_ep", "Measured fused-MoE table row, experts spread (EP)", "row",
             _moe_row(6, 5, 4),
             "the row for routed experts spread whole over the TP group's GPUs (expert "
             "parallelism): EP 2, 4, 8 after the TP rows (one GPU: TP 1)", kind="int"),
    Quantity("bandwidth_efficiency_used", "Bandwidth efficiency used", "fraction",
             IF(_auto_bandwidth,
                IF(_measured, Measured("gemm", q("gemm_table_kind")),
                   IF(g("bandwidth_efficiency") > 0, g("bandwidth_efficiency"),
                      a("bandwidth_efficiency_fallback"))), a("bandwidth_efficiency")),
             "bandwidth_efficiency; with 'auto' the bandwidth one-token GEMMs stream weights at "
             "in the GPU and engine's measured per-op table (at that precision), else the GPU "
             "family's measured figure, else the fallback", display="ratio"),
    Quantity("prefill_gemm_efficiency", "GEMM efficiency measured at the largest step",
             "fraction",
             IF(_measured, _gemm_efficiency(q("max_num_batched_tokens_effective")), 0),
             "the GEMM efficiency the GPU and engine's measured per-op table gives at the "
             "engine's largest step (max_num_batched_tokens, what prefill runs at), the GEMM's "
             "time linear between the measured token counts; 0 without a table",
             display="ratio"),
    Quantity("compute_efficiency_used", "Compute efficiency used", "fraction",
             IF(_auto_compute,
                IF(_measured, q("prefill_gemm_efficiency"),
                   IF(AND(_compute.eq("fp4"), g("compute_efficiency_fp4") > 0),
                      g("compute_efficiency_fp4"),
                      IF(g("compute_efficiency") > 0, g("compute_efficiency"),
                         a("compute_efficiency_fallback")))), a("compute_efficiency")),
             "compute_efficiency; with 'auto' the GEMM efficiency the GPU and engine's measured "
             "per-op table gives at the engine's largest step (max_num_batched_tokens, what "
             "prefill runs at), else the GPU family's measured figure (its FP4 figure when the "
             "multiplies run in FP4), else the fallback: what prefill, attention FLOPs and the "
             "roofline run at", display="ratio"),
    Quantity("decode_memory_seconds", "Decode step, memory bound", "s",
             q("decode_bytes_per_gpu") / (q("bandwidth_bytes_per_second")
                                         * q("bandwidth_efficiency_used")),
             "bytes per GPU / (bandwidth × bandwidth efficiency)", display="seconds"),
    Quantity("decode_compute_seconds", "Decode step, compute bound", "s",
             q("decode_flops_per_step") / _tp / (q("peak_flops_per_gpu")
                                                 * q("compute_efficiency_used")),
             "FLOPs per GPU / (peak × compute efficiency)", display="seconds"),
    Quantity("decode_step_seconds", "Decode step", "s",
             MAX(q("decode_memory_seconds"), q("decode_compute_seconds")),
             "the larger of the memory and compute bounds", spec=True, display="seconds"),
    Quantity("decode_bound", "Decode bound by", "",
             IF(q("decode_compute_seconds") > q("decode_memory_seconds"), "compute", "memory"),
             "which bound sets the decode step", kind="text"),
    Quantity("decode_tokens_per_second", "Decode throughput", "tokens/s",
             _b / q("decode_step_seconds"), "batch / decode step (whole replica)", spec=True),
    Quantity("tokens_per_second_per_sequence", "Per-user speed", "tokens/s",
             1 / q("decode_step_seconds"), "1 / decode step", spec=True),
    Quantity("decode_intensity", "Decode arithmetic intensity", "FLOP/B",
             q("decode_flops_per_step") / q("decode_bytes_per_step"),
             "FLOPs per step / bytes per step", spec=True),
    Quantity("attention_intensity", "Attention arithmetic intensity", "FLOP/B",
             IF(m("is_mla"), m("num_attention_heads"),
                m("num_attention_heads") / m("kv_heads_effective")),
             "query heads per KV head (GQA group size); MLA shares one latent across all heads",
             spec=True),
    Quantity("ridge_intensity", "GPU ridge point", "FLOP/B",
             q("peak_flops_per_gpu") / q("bandwidth_bytes_per_second"),
             "peak FLOP/s / bandwidth: above it a step is compute-bound", spec=True),
    Quantity("prefill_flops", "Prefill FLOPs", "FLOP",
             2 * m("params_active") * _p
             + 2 * m("num_attention_heads") * m("attention_head_dim") * _prefill_pairs(_p),
             "2 × active parameters × prompt + attention 2 × layers × heads × head dim × prompt², "
             "halved for the causal mask (windows capped)", spec=True),
    Quantity("weights_read_seconds", "One read of all the weights", "s",
             q("weight_bytes") / (_tp * q("bandwidth_bytes_per_second")
                                  * q("bandwidth_efficiency_used")),
             "weights / TP / (bandwidth × efficiency): what a prefill pass reads at least once",
             display="seconds"),
    Quantity("ttft_seconds", "Time to first token (roofline)", "s",
             MAX(q("prefill_flops") / (_tp * q("peak_flops_per_gpu")
                                       * q("compute_efficiency_used")),
                 q("weights_read_seconds")),
             "prefill FLOPs / replica FLOP/s, never below one read of the weights",
             spec=True, display="seconds"),
    Quantity("cost_per_million_tokens", "Cost per million output tokens (rented, fully busy)",
             "USD",
             IF(q("fits"), g("price_per_hour_usd") * _tp / SECONDS_PER_HOUR
                / q("decode_tokens_per_second") * MILLION, "does not fit"),
             "GPU-hour price × TP / 3600 / decode tokens/s × 10^6: rented GPUs busy all the "
             "time, output tokens only (prompt tokens cost nothing here; `planner size` gives "
             "owned costs per input and output token); 'does not fit' when it cannot run",
             spec=True, display="usd"),
    # -- serving: what an engine achieves, per-step and communication costs included ----------
    Quantity("scale_up_bytes_per_second", "Scale-up bandwidth per GPU", "B/s",
             IF(g("scale_up_gb_s") > 0, g("scale_up_gb_s"), a("pcie_gb_s")) * GB,
             "scale_up_gb_s (NVLink, Infinity Fabric) × 10^9, else pcie_gb_s", display="rate"),
    Quantity("allreduce_tp_index", "TP's place in a measured all-reduce table", "index",
             IF(_tp.eq(8), 2, _tp / 2 - 1),
             "0, 1 and 2 for TP 2, 4 and 8: the row of this TP among the GPU's all-reduce "
             "tables (catalogs/perop.yaml)", kind="int"),
    Quantity("allreduce_measured_latency_seconds", "Measured all-reduce latency", "s",
             IF(AND(_measured, OR(_tp.eq(2), _tp.eq(4), _tp.eq(8))),
                Measured("allreduce", _allreduce_tp) / MILLION, 0),
             "the latency of the engine's own all-reduce at this TP in the GPU and engine's "
             "measured per-op table (TP 2, 4 and 8), in seconds; 0 where there is none",
             display="seconds"),
    Quantity("allreduce_latency_seconds", "All-reduce latency", "s",
             IF(q("allreduce_measured_latency_seconds") > 0,
                q("allreduce_measured_latency_seconds"),
                IF(g("allreduce_latency_us") > 0, g("allreduce_latency_us"),
                   a("allreduce_latency_us_fallback")) / MILLION),
             "the measured all-reduce latency where there is one, else allreduce_latency_us of "
             "the GPU, else the fallback, in seconds", display="seconds"),
    Quantity("allreduce_bytes_per_token", "All-reduce message per token", "B",
             _hidden * _act, "hidden size × activation bytes: what one token adds to each "
             "all-reduce", display="bytes"),
    Quantity("allreduce_reference_batch", "Batch the all-reduce traffic is averaged over",
             "sequences", MAX(1, MIN(q("max_sequences"), q("max_num_seqs_effective"))),
             "the most sequences a replica decodes together: the sequences that fit, at most "
             "the engine's max_num_seqs (at least 1)", kind="int"),
    Quantity("allreduce_traffic_seconds_per_sequence", "All-reduce traffic one sequence adds",
             "s",
             allreduce_traffic_at(q("allreduce_reference_batch")),
             "TP ≥ 2: (the all-reduces of the reference batch − their latency) / that batch: "
             "2 × layers × 2(TP−1)/TP × one token's message / scale-up bandwidth, or, from a "
             "measured table, its time above the latency averaged over the batch (its slope "
             "at one token is the small-message algorithm's, not the traffic's)",
             display="seconds"),
    Quantity("kernels_per_step", "Kernels per engine step", "kernels",
             m("attention_layers") * IF(m("is_mla"), a("kernels_mla_attention"),
                                        a("kernels_attention"))
             + m("linear_attention_layers") * a("kernels_linear_attention")
             + (_layers - m("moe_layers")) * a("kernels_dense_ffn")
             + m("moe_layers") * (a("kernels_moe_ffn")
                                  + IF(m("shared_expert_ffn") > 0, a("kernels_shared_expert"), 0)),
             "attention layers × kernels of their block (MLA or GQA) + linear-attention layers × "
             "theirs + dense FFN layers × kernels_dense_ffn + MoE layers × (kernels_moe_ffn + "
             "kernels_shared_expert where the model has a shared expert)", kind="int"),
    Quantity("step_overhead_seconds", "Fixed time per engine step", "s",
             q("kernels_per_step") * (a("kernel_floor_us") + a("eager_decode")
                                      * a("eager_kernel_us")) / MILLION,
             "kernels per step × kernel_floor_us, + eager_kernel_us a kernel where the engine "
             "runs without CUDA graphs (eager_decode 1: the host launches every kernel of "
             "every step)", display="seconds"),
    Quantity("step_seconds_per_running_sequence", "Engine time per running sequence", "s",
             engine_default("step_overhead_us_per_sequence", "us_per_sequence") / MILLION,
             "step_overhead_us_per_sequence, or with 'auto' the engine's figure, in seconds",
             display="seconds"),
    Quantity("serving_batch", "Sequences decoding together", "sequences",
             MAX(1, MIN(_b, q("max_sequences"), q("max_num_seqs_effective"))),
             "the concurrency, capped by the sequences that fit and the engine's max_num_seqs",
             kind="int"),
    Quantity("decode_context", "Mean context while decoding", "tokens",
             IF(_o > 0, _p + _o / 2, _t),
             "prompt + output / 2 when the output length is given, else the context"),
    Quantity("kv_read_bytes_per_sequence_per_gpu", "KV read per sequence per step per GPU", "B",
             _s * m("kv_elements_per_token_per_layer") * layer_tokens(q("decode_context"), False)
             * q("kv_share_per_gpu") + q("state_bytes_per_sequence") / _tp,
             "KV one sequence reads per step at the mean decode context (windows capped at the "
             "window), per GPU, plus its state", display="bytes"),
    Quantity("serving_flops_per_sequence", "GEMM FLOPs per sequence per step", "FLOP",
             2 * m("params_active"),
             "2 × active parameters: the matrix multiplies one decoded token costs"),
    Quantity("serving_attention_flops_per_sequence", "Attention FLOPs per sequence per step",
             "FLOP",
             4 * m("num_attention_heads") * m("attention_head_dim")
             * layer_tokens(q("decode_context"), False),
             "4 × heads × head dim × attended layer-tokens at the mean decode context"),
    Quantity("serving_experts_read", "Experts read per MoE layer (serving)", "experts",
             _experts_read(q("serving_batch")),
             "E × (1 − (1 − k/E)^serving batch)"),
    Quantity("serving_weight_bytes_read", "Weights read per serving step", "B",
             _weights_read(q("serving_experts_read")),
             "as weights read per step, at the serving batch", display="bytes"),
    Quantity("serving_memory_seconds", "Serving step: reading the weights", "s",
             q("serving_weight_bytes_read") / _tp
             / (q("bandwidth_bytes_per_second") * q("bandwidth_efficiency_used")),
             "weights read / TP / (bandwidth × efficiency): the GEMMs' memory bound",
             display="seconds"),
    Quantity("decode_gemm_efficiency", "GEMM efficiency at the decode batch", "fraction",
             gemm_efficiency_at(q("serving_batch")),
             "with compute_efficiency 'auto' and a measured per-op table, the GEMM efficiency it "
             "gives at the serving batch's tokens (the GEMM's time linear between the measured "
             "token counts), else the compute efficiency used", display="ratio"),
    Quantity("serving_compute_seconds", "Serving step: GEMM compute", "s",
             q("serving_batch") * q("serving_flops_per_sequence") / _tp
             / (q("peak_flops_per_gpu") * q("decode_gemm_efficiency")),
             "serving batch × GEMM FLOPs per sequence / TP / (peak × GEMM efficiency at the "
             "decode batch): the GEMMs' compute bound", display="seconds"),
    Quantity("mla_decode_splits", "MLA decode: KV splits per sequence", "splits",
             IF(g("compute_units") > 0,
                MIN(g("mla_decode_max_splits"),
                    MAX(1, INT(g("compute_units") / q("serving_batch")))), 1),
             "the most workgroups per sequence that one wave of the GPU's compute units holds, "
             "at most mla_decode_max_splits (aiter's choice, to within 3% of its cost model)",
             kind="int"),
    Quantity("attention_occupancy", "MLA decode: share of the GPU the attention kernel fills",
             "fraction",
             IF(AND(m("is_mla"), g("mla_decode_max_splits") > 0, g("compute_units") > 0),
                MIN(1, q("serving_batch") * q("mla_decode_splits") / g("compute_units"))
                * q("decode_context")
                / (q("decode_context")
                   + g("mla_decode_split_overhead_tokens") * q("mla_decode_splits")), 1),
             "GPUs whose MLA decode kernel splits each sequence's KV over at most "
             "mla_decode_max_splits workgroups (AMD CDNA, aiter's mla_decode_fwd): batch × splits "
             "/ compute units, at most 1, × context / (context + "
             "mla_decode_split_overhead_tokens × splits), the kernel's own cost model; 1 "
             "elsewhere", display="ratio"),
    Quantity("attention_measured_efficiency", "Measured attention bandwidth efficiency",
             "fraction",
             IF(_measured, Measured("attention", IF(m("is_mla"), 1, 0), q("serving_batch")), 0),
             "the bandwidth decode attention's KV reads achieve at the serving batch (nearest "
             "measured batch) in the GPU and engine's measured per-op table, MLA or GQA as the "
             "model is; 0 where there is none", display="ratio"),
    Quantity("attention_bandwidth_efficiency", "Attention bandwidth efficiency used", "fraction",
             IF(AND(_auto_bandwidth, q("attention_measured_efficiency") > 0),
                q("attention_measured_efficiency"), q("bandwidth_efficiency_used")),
             "with bandwidth_efficiency 'auto' the measured attention bandwidth efficiency "
             "where there is one, else the bandwidth efficiency used", display="ratio"),
    Quantity("serving_attention_seconds_per_sequence", "Attention time per sequence per step",
             "s",
             MAX(q("kv_read_bytes_per_sequence_per_gpu")
                 / (q("bandwidth_bytes_per_second") * q("bandwidth_efficiency_used")),
                 q("serving_attention_flops_per_sequence") / _tp
                 / (q("peak_flops_per_gpu") * q("compute_efficiency_used"))),
             "the larger of its KV read / (bandwidth × efficiency) and its attention FLOPs / TP / "
             "(peak × compute efficiency): attention kernels run after the GEMMs, not alongside "
             "(the fleet's batch search takes it as each sequence's slope)",
             display="seconds"),
    Quantity("serving_attention_seconds", "Serving step: attention", "s",
             q("serving_batch") * q("serving_attention_seconds_per_sequence")
             * q("bandwidth_efficiency_used") / q("attention_bandwidth_efficiency")
             / q("attention_occupancy"),
             "serving batch × attention time per sequence × bandwidth efficiency used ÷ the "
             "attention's own bandwidth efficiency at this batch (the same without a measured "
             "per-op table) ÷ the share of the GPU the attention kernel fills (below 1 only for "
             "MLA decode on AMD CDNA at small batches)", display="seconds"),
    Quantity("decode_allreduce_seconds", "Decode all-reduce time per step", "s",
             allreduce_seconds(q("serving_batch")),
             "TP ≥ 2: 2 × layers × (latency + 2(TP−1)/TP × batch × hidden × activation bytes / "
             "scale-up bandwidth), or the measured all-reduce's time for that message where the "
             "GPU and engine have a table at this TP", display="seconds"),
    Quantity("prefill_expert_tokens", "Tokens each routed expert multiplies in a prefill",
             "tokens",
             IF(m("experts") > 0, MAX(1, _p * m("num_experts_per_tok") / m("experts")), 0),
             "prompt × experts a token is routed to / routed experts (0 for a dense model)"),
    Quantity("prefill_expert_flops", "Routed-expert FLOPs of a prefill", "FLOP",
             IF(m("experts") > 0, 2 * m("routed_expert_params") * m("num_experts_per_tok")
                / m("experts") * _p, 0),
             "2 × the routed-expert parameters a token uses × prompt (within prefill_flops)"),
    Quantity("prefill_expert_efficiency", "Routed experts' efficiency in a prefill", "fraction",
             _moe_efficiency(q("moe_table_kind"), q("prefill_expert_tokens")),
             "with compute_efficiency 'auto' and a measured fused-MoE table for the GPU, engine, "
             "precision and TP, the table's at the tokens each expert multiplies (an expert "
             "sees only the tokens routed to it), else the compute efficiency used",
             display="ratio"),
    Quantity("prefill_expert_efficiency_ep", "Routed experts' prefill efficiency under EP",
             "fraction",
             _moe_efficiency(q("moe_table_kind_ep"), q("prefill_expert_tokens")),
             "as prefill_expert_efficiency, with the experts spread whole over the GPUs (the "
             "layouts with expert parallelism)", display="ratio"),
    Quantity("prefill_gemm_seconds", "Prefill GEMM compute per request", "s",
             ((q("prefill_flops") - q("prefill_expert_flops")) / q("compute_efficiency_used")
              + q("prefill_expert_flops") / q("prefill_expert_efficiency"))
             / (_tp * q("peak_flops_per_gpu")),
             "(prefill FLOPs but the routed experts' / compute efficiency + the routed experts' "
             "/ their efficiency) / replica peak FLOP/s", display="seconds"),
    Quantity("prefill_compute_seconds", "Prefill compute per request", "s",
             q("prefill_gemm_seconds") + allreduce_seconds(_p),
             "prefill FLOPs / replica FLOP/s + its all-reduces (prompt × hidden activations)",
             display="seconds"),
    Quantity("prefill_interleaved_seconds", "Prefill of one request inside decode steps", "s",
             q("prefill_gemm_seconds") + allreduce_seconds(_p, latency=False),
             "prefill FLOPs / replica FLOP/s + the all-reduce traffic of its activations; the "
             "latency is paid once by the step its chunk rides in", display="seconds"),
    Quantity("prefills_per_step", "Prompts started per decode step", "requests",
             IF(_o > 0, q("serving_batch") / _o, 0),
             "serving batch / output tokens: in a steady state each running sequence ends, "
             "and a new one starts, once every output-length steps"),
    Quantity("prefill_step_tokens", "Prompt tokens one serving step's prefill batches",
             "tokens",
             IF(_o > 0, MAX(_p, MIN(q("max_num_batched_tokens_effective"),
                                    _p * q("prefills_per_step"))), _p),
             "the prompts started per step run as one pass (the engine batches the prompts "
             "that arrive together): prompt × prompts per step, at most the engine's max "
             "batched tokens, never below one prompt"),
    Quantity("serving_expert_tokens", "Tokens each routed expert multiplies in a serving "
             "step's prefill", "tokens",
             IF(m("experts") > 0,
                MAX(1, (q("prefill_step_tokens")
                        + IF(e("mixes_prefill"), q("serving_batch"), 0))
                    * m("num_experts_per_tok") / m("experts")), 0),
             "(the step's prompt tokens, + the decoding sequences' tokens where prompt chunks "
             "ride in decode steps: one grouped GEMM multiplies them all) × experts a token is "
             "routed to / routed experts"),
    Quantity("serving_expert_efficiency", "Routed experts' efficiency in a serving step",
             "fraction", _moe_efficiency(q("moe_table_kind"), q("serving_expert_tokens")),
             "as prefill_expert_efficiency, at the tokens each expert multiplies in a serving "
             "step's prefill", display="ratio"),
    Quantity("serving_expert_efficiency_ep", "Routed experts' serving efficiency under EP",
             "fraction", _moe_efficiency(q("moe_table_kind_ep"), q("serving_expert_tokens")),
             "as serving_expert_efficiency, with the experts spread whole over the GPUs",
             display="ratio"),
    Quantity("prefill_serving_seconds", "Prefill of one request as serving batches it", "s",
             q("prefill_interleaved_seconds")
             - expert_seconds_saved(q("prefill_expert_efficiency"),
                                    q("serving_expert_efficiency")),
             "prefill of one request inside decode steps, its routed experts at their "
             "efficiency in a serving step's prefill instead of one prompt's alone",
             display="seconds"),
    Quantity("step_fixed_seconds", "Step time independent of batch", "s",
             q("step_overhead_seconds") + allreduce_seconds(None),
             "fixed step time + all-reduce latencies", display="seconds"),
    Quantity("prefill_launch_seconds", "Host launches of an eager prefill pass", "s",
             engine_default("eager_prefill", "eager_prefill") * (1 - a("eager_decode"))
             * q("kernels_per_step") * a("eager_kernel_us") / MILLION,
             "where prefill passes run without a CUDA graph (eager_prefill, or with 'auto' the "
             "engine's figure: SGLang), kernels per step × eager_kernel_us: the time the GPU "
             "waits on the host launching each kernel, on top of the pass's GPU work; 0 "
             "elsewhere, and 0 with eager_decode 1, whose fixed step time already holds them",
             display="seconds"),
    Quantity("prefill_pass_fixed_seconds", "Fixed cost of a prefill pass of its own", "s",
             q("step_fixed_seconds") + q("weights_read_seconds") + q("prefill_launch_seconds"),
             "an engine that runs prefill apart from decoding pays, for each prefill pass, the "
             "fixed step time, the all-reduce latencies, a full read of the weights and, "
             "launched eagerly, the host's launches", display="seconds"),
    Quantity("prefill_per_step_seconds", "Prefill time per decode step", "s",
             MIN(q("prefills_per_step"), 1)
             * IF(e("mixes_prefill"), q("prefill_launch_seconds"),
                  q("prefill_pass_fixed_seconds"))
             + q("prefills_per_step") * q("prefill_serving_seconds"),
             "engines that mix prompt chunks into decode steps (vLLM, TensorRT-LLM): prompts "
             "per step × prefill as serving batches it; engines that run prefill as a pass of "
             "its own (SGLang by default): at most one pass per decode step, each with its "
             "fixed cost (the host's launches included where it runs eagerly), plus the "
             "prompts' FLOPs and all-reduce traffic", display="seconds"),
    Quantity("prefill_seconds", "Prefill alone (time to first token, no queue)", "s",
             MAX(q("prefill_compute_seconds"), q("weights_read_seconds"))
             + q("step_overhead_seconds") + q("prefill_launch_seconds"),
             "prefill compute with its all-reduces, never below one read of the weights, + the "
             "fixed step time + the host's launches where the pass runs eagerly",
             display="seconds"),
    Quantity("tpot_seconds", "Time per output token", "s",
             q("step_overhead_seconds")
             + q("serving_batch") * q("step_seconds_per_running_sequence")
             + MAX(q("serving_memory_seconds"), q("serving_compute_seconds"))
             + q("serving_attention_seconds")
             + q("decode_allreduce_seconds")
             + IF(_o > 0, q("prefill_per_step_seconds"), 0),
             "fixed step time + engine time per running sequence × serving batch + the GEMMs "
             "(the larger of reading the weights and their compute) + attention + all-reduces "
             "+ the prefill the engine interleaves (serving batch / output tokens × prefill of "
             "one request as serving batches it)", spec=True, display="seconds"),
    Quantity("serving_output_tokens_per_second", "Serving output throughput", "tokens/s",
             q("serving_batch") / q("tpot_seconds"),
             "serving batch / time per output token: one replica's steady-state output",
             spec=True),
]
