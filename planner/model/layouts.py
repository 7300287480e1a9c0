"""Serving layouts beyond one TP group (fleet scope): expert parallelism, DP attention and
disaggregated prefill/decode, as quantities of a fleet row.

A fleet row carries a layout code (an input cell, ``Ref("layout", "layout")``):

- ``tp``: one tensor-parallel group per replica (the fleet quantities as they are).
- ``tp+ep``: attention TP over the group, routed experts sharded whole over the same GPUs
  (expert parallelism): the MoE all-reduce becomes an all-to-all dispatch and combine, and the
  busiest rank's experts set the pace (``expert_load_imbalance``). Weights and KV per GPU are
  as under TP (TP8 and EP8 hold the same expert bytes per GPU: latency-facts §4 [L30]).
- ``dp-attention``: attention data-parallel (each GPU its own sequences and KV pool, attention
  weights replicated), experts EP, dense FFN TP. An MLA latent, replicated on every GPU under
  TP, is stored once: the KV capacity of the group grows by up to TP.
- ``disaggregated``: a pool of prefill replicas sized for the TTFT percentile at the peak rate
  (M/D/1 per replica: prompts queue for a replica that runs nothing else), the prompt's KV moved
  over RDMA, and a pool of decode replicas sized for the rate at the ITL target with no
  prompt-carrying step: its ITL percentile is a decode step at the percentile of its in-flight
  batch (``planner.model.latency``'s Little's-law batch with no prompt work, docs/latency.md).

``planner.model.fleet`` reads the few ``layout_*`` quantities where a layout changes a fleet
quantity (the step time, the batch caps, the replicas, the percentiles the targets check);
``planner.model.latency`` builds its decode step and slots from the layout's (fixed time, time
per sequence, sequences that fit).
"""

from __future__ import annotations

from planner.model.expr import AND, IF, INT, MAX, MIN, OR, Expr, Ref
from planner.model.fleet_refs import OUTPUT as _O
from planner.model.fleet_refs import PROMPT as _P
from planner.model.fleet_refs import ceil as _ceil
from planner.model.fleet_refs import sqrt as _sqrt
from planner.model.fleet_refs import srv, w
from planner.model.latency import decode_step, running, step_slope
from planner.model.quantity import Quantity, a, m, q, v
from planner.model.queueing import md1_load_limit, md1_mean_wait, md1_tail_wait
from planner.model.speed_quantities import (
    allreduce_seconds,
    allreduce_traffic_at,
    expert_seconds_saved,
)
from planner.model.units import GB

LAYOUT = Ref("layout", "layout")
DP = LAYOUT.eq("dp-attention")
DISAGG = LAYOUT.eq("disaggregated")
_ep = AND(OR(LAYOUT.eq("tp+ep"), DP), m("experts") > 0)  # experts sharded whole over the GPUs
_tp = v("tp")
_layers = m("num_hidden_layers")
_moe = m("moe_layers")
_p = q("latency_percentile_used")


# -- expert parallelism and DP attention: memory ------------------------------------------------
STEP_QUANTITIES: list[Quantity] = [
    Quantity("attention_weight_bytes", "Attention weights (all layers)", "B",
             q("weight_bytes") * m("attention_params_per_layer") * m("attention_layers")
             / m("params_total"),
             "weights × attention parameters per layer × attention layers / total parameters",
             display="bytes"),
    Quantity("layout_weight_bytes_per_gpu", "Weights per GPU (layout)", "B",
             q("weight_bytes_per_gpu") + IF(DP, q("attention_weight_bytes") * (1 - 1 / _tp), 0),
             "weights / TP; under DP attention every GPU holds all the attention weights "
             "(experts EP and dense FFN TP stay sharded)", display="bytes"),
    Quantity("layout_kv_pool_bytes_per_gpu", "KV pool per GPU (layout)", "B",
             q("kv_pool_bytes_per_gpu") + q("weight_bytes_per_gpu")
             - q("layout_weight_bytes_per_gpu"),
             "KV pool per GPU less the attention weights DP attention replicates",
             display="bytes"),
    Quantity("layout_max_sequences", "Sequences that fit (layout)", "sequences",
             IF(AND(DP, q("weights_fit")),
                _tp * INT(MAX(0, q("layout_kv_pool_bytes_per_gpu")) / q("kv_bytes_per_sequence")),
                q("max_sequences")),
             "DP attention: each GPU holds whole sequences in its own pool, TP × (pool per GPU / "
             "KV per sequence); otherwise the sequences that fit under TP", kind="int"),
    Quantity("layout_max_num_seqs", "Engine's max sequences (layout)", "sequences",
             IF(DP, _tp, 1) * q("max_num_seqs_effective"),
             "max_num_seqs is per DP rank: × TP under DP attention", kind="int"),
    # -- expert parallelism and DP attention: the step -----------------------------------------
    Quantity("layout_prefill_interleaved_seconds", "Prefill of one request in decode (layout)",
             "s",
             q("prefill_interleaved_seconds")
             - IF(_ep, expert_seconds_saved(q("prefill_expert_efficiency"),
                                            q("prefill_expert_efficiency_ep")), 0),
             "prefill_interleaved_seconds; with the experts spread whole (expert parallelism, "
             "DP attention) their FLOPs at the EP efficiency instead of the sliced one",
             display="seconds"),
    Quantity("layout_prefill_serving_seconds", "Prefill of one request as serving batches it "
             "(layout)", "s",
             q("prefill_serving_seconds")
             - IF(_ep, expert_seconds_saved(q("serving_expert_efficiency"),
                                            q("serving_expert_efficiency_ep")), 0),
             "prefill_serving_seconds; with the experts spread whole their FLOPs at the EP "
             "efficiency in a serving step instead of the sliced one", display="seconds"),
    Quantity("allreduce_share_removed", "Share of the all-reduces the layout removes",
             "fraction",
             IF(DP, 1 - (_layers - _moe) / (2 * _layers), IF(_ep, _moe / (2 * _layers), 0)),
             "of two all-reduces per layer: DP attention keeps only the dense FFN layers' one; "
             "EP replaces each MoE layer's FFN all-reduce by an all-to-all", display="ratio"),
    Quantity("a2a_fixed_seconds", "All-to-all latency per step", "s",
             IF(_ep, 2 * _moe * q("allreduce_latency_seconds"), 0),
             "EP: a dispatch and a combine per MoE layer, each paying the collective latency",
             display="seconds"),
    Quantity("a2a_seconds_per_sequence", "All-to-all time each sequence adds", "s",
             IF(_ep, _moe * m("hidden_size") * m("num_experts_per_tok") * 3
                * a("expert_load_imbalance") / _tp / q("scale_up_bytes_per_second"), 0),
             "EP: MoE layers × hidden × top-k × 3 bytes (FP8 dispatch + BF16 combine, DeepEP) × "
             "load imbalance / TP / scale-up bandwidth", display="seconds"),
    Quantity("expert_imbalance_seconds_per_sequence", "Expert load imbalance per sequence", "s",
             IF(_ep, (a("expert_load_imbalance") - 1) * 2 * m("routed_expert_params")
                * m("num_experts_per_tok") / m("experts") / _tp / q("compute_achieved"), 0),
             "EP: (imbalance − 1) × routed-expert FLOPs per token / TP / FLOP/s: the busiest "
             "rank computes more than its share", display="seconds"),
    Quantity("layout_attention_seconds_per_sequence", "Attention time per sequence (layout)",
             "s",
             IF(DP, MAX(q("serving_attention_seconds_per_sequence")
                        / (_tp * q("kv_share_per_gpu")),
                        q("serving_attention_flops_per_sequence") / _tp
                        / q("compute_achieved")),
                q("serving_attention_seconds_per_sequence")),
             "DP attention: each GPU reads the KV of its own sequences only (÷ TP × the share "
             "one GPU stores under TP), never below the attention FLOPs / TP", display="seconds"),
    Quantity("layout_seconds_per_sequence", "Step time per sequence the layout adds", "s",
             q("a2a_seconds_per_sequence") + q("expert_imbalance_seconds_per_sequence")
             - q("allreduce_traffic_seconds_per_sequence") * q("allreduce_share_removed")
             + q("layout_attention_seconds_per_sequence")
             - q("serving_attention_seconds_per_sequence"),
             "all-to-all + imbalance − all-reduce traffic removed + attention change (0 under "
             "TP)", display="seconds"),
    Quantity("layout_fixed_seconds", "Fixed step time the layout adds", "s",
             q("a2a_fixed_seconds") - allreduce_seconds(None) * q("allreduce_share_removed")
             + (q("layout_weight_bytes_per_gpu") - q("weight_bytes_per_gpu"))
             / q("bandwidth_achieved"),
             "all-to-all latencies − all-reduce latencies removed + reading the replicated "
             "attention weights (0 under TP)", display="seconds"),
    Quantity("layout_step_fixed_seconds", "Step time independent of batch (layout)", "s",
             q("step_fixed_seconds") + q("layout_fixed_seconds"),
             "fixed step time + what the layout adds", display="seconds"),
    Quantity("allreduce_traffic_at_serving_batch", "All-reduce time each sequence adds at "
             "the serving batch", "s", allreduce_traffic_at(q("serving_batch")),
             "(the all-reduces of the serving batch − their latency) / the serving batch",
             display="seconds"),
    Quantity("layout_allreduce_removed_seconds", "All-reduce time the layout removes at the "
             "batch, beyond its per-sequence average", "s",
             IF(q("serving_batch").eq(q("allreduce_reference_batch")), 0,
                q("allreduce_share_removed") * q("serving_batch")
                * (q("allreduce_traffic_at_serving_batch")
                   - q("allreduce_traffic_seconds_per_sequence"))),
             "share removed × serving batch × (its all-reduce per sequence − the reference "
             "batch's average): the per-sequence change counts the average, this the rest, so "
             "the layout removes exactly its share of the serving batch's all-reduces (0 when "
             "the serving batch is the reference batch)", display="seconds"),
    Quantity("layout_prefill_delta_seconds", "Prefill time the layout changes per step", "s",
             IF(OR(DISAGG, _O <= 0), 0,
                q("batch_chosen") / _O * q("layout_prefill_serving_seconds")
                - q("prefills_per_step") * q("prefill_serving_seconds")
                - (q("batch_chosen") - q("serving_batch")) / _O
                * q("layout_prefill_interleaved_seconds")),
             "every sequence's prompt at its prefill as the layout's serving step batches it, "
             "less the TP row's and the one-prompt bound the sequences beyond its caps carry "
             "in their per-sequence time (0 disaggregated: no prompt in a decode step)",
             display="seconds"),
    Quantity("layout_step_delta_seconds", "Step time the layout adds at the batch", "s",
             q("layout_fixed_seconds") + q("serving_batch") * q("layout_seconds_per_sequence")
             - q("layout_allreduce_removed_seconds")
             + (q("batch_chosen") - q("serving_batch"))
             * (q("step_seconds_per_sequence")
                + q("serving_flops_per_sequence") / _tp / q("compute_achieved"))
             + q("layout_prefill_delta_seconds"),
             "fixed + serving batch × per-sequence change − the rest of the all-reduces removed, "
             "+ the sequences beyond the TP row's caps (DP attention) at their full "
             "per-sequence time and GEMM compute, + the prefill the layout changes",
             display="seconds"),
]

# -- disaggregated prefill / decode ---------------------------------------------------------------
POOL_QUANTITIES: list[Quantity] = [
    Quantity("kv_transfer_bytes", "KV cache moved per request", "B",
             q("kv_bytes_per_token") * _P + q("state_bytes_per_sequence"),
             "KV per token × prompt tokens (+ any linear-attention state)", display="bytes"),
    Quantity("rdma_bytes_per_second", "RDMA bandwidth per GPU achieved", "B/s",
             IF(srv("rdma_gb_s") > 0, srv("rdma_gb_s"),
                a("rdma_gb_s_fallback")) * GB * a("kv_transfer_efficiency"),
             "the server's rdma_gb_s (else rdma_gb_s_fallback) × 10^9 × kv_transfer_efficiency",
             display="rate"),
    Quantity("kv_transfer_seconds", "KV transfer per request", "s",
             q("kv_transfer_bytes") / (_tp * q("rdma_bytes_per_second")),
             "KV moved / (TP × RDMA per GPU): each GPU of the prefill group sends a share",
             display="seconds"),
    Quantity("prefill_pool_service_seconds", "Prefill of a prompt on a prefill replica", "s",
             q("prefill_seconds") * q("speed_ratio_applied"),
             "prefill alone (no decode in the same GPU) × measured speed error: τ of its queue",
             display="seconds"),
    Quantity("prefill_pool_ttft_margin_seconds", "First-token time beyond the model "
             "(disaggregated)", "s",
             (q("ttft_margin_ratio") - 1) * q("prefill_pool_service_seconds"),
             "(measured first-token error beyond the speed error − 1) × the prefill replica's "
             "time for a prompt: a delay every first token waits, not GPU time",
             display="seconds"),
    Quantity("prefill_pool_first_token_seconds", "TTFT with no queue (disaggregated)", "s",
             q("prefill_pool_service_seconds") + q("kv_transfer_seconds")
             + q("prefill_pool_ttft_margin_seconds"),
             "prefill + KV transfer to the decode replica + the measured first-token margin",
             display="seconds"),
    Quantity("prefill_pool_wait_budget_seconds", "Time a prompt may wait for a prefill "
             "replica", "s", w("ttft_s") - q("prefill_pool_first_token_seconds"),
             "TTFT target − prefill − KV transfer: no decode step to arrive into, no prompt "
             "riding along (a prefill replica runs prompts only)", display="seconds"),
    Quantity("prefill_pool_load_limit_first", "Prefill load meeting the TTFT percentile "
             "(disaggregated, first pass)", "fraction",
             md1_load_limit(q("prefill_pool_wait_budget_seconds"),
                            q("prefill_pool_service_seconds")),
             "the load ρ whose M/D/1 tail wait ln(ρ/(1 − p)) τ / (2(1 − ρ)) stays within the "
             "wait budget b, from ln x ≤ x − 1: ρ ≤ (1 + 2b/τ) / (1/(1 − p) + 2b/τ)",
             display="ratio"),
    Quantity("prefill_pool_load_limit_second", "Prefill load meeting the TTFT percentile "
             "(disaggregated, second pass)", "fraction",
             md1_load_limit(q("prefill_pool_wait_budget_seconds"),
                            q("prefill_pool_service_seconds"),
                            q("prefill_pool_load_limit_first")),
             "ln replaced by its tangent at the first pass's load: closer, still never "
             "overstated", display="ratio"),
    Quantity("prefill_pool_load_limit", "Prefill load meeting the TTFT percentile "
             "(disaggregated)", "fraction",
             md1_load_limit(q("prefill_pool_wait_budget_seconds"),
                            q("prefill_pool_service_seconds"),
                            q("prefill_pool_load_limit_second")),
             "a third pass, at the second's load (at most 0.99; 0 when prefill and transfer "
             "alone miss the target)", display="ratio"),
    Quantity("prefill_replicas", "Prefill replicas", "replicas",
             IF(DISAGG, MAX(1, _ceil(q("rate_requests_per_second")
                                     * q("prefill_pool_service_seconds")
                                     / MAX(0.01, q("prefill_pool_load_limit")))), 0),
             "disaggregated: peak rate × prefill time / load limit, rounded up (0 otherwise)",
             kind="int"),
    Quantity("decode_replicas", "Decode replicas", "replicas",
             IF(DISAGG, MAX(1, q("replicas_for_rate")), 0),
             "disaggregated: replicas for the peak rate at the ITL batch, no prompt carried",
             kind="int"),
    # -- the decode pool at its load: the latency block's in-flight batch with no prompts ------
    Quantity("decode_pool_arrivals_per_replica", "Peak arrivals per decode replica",
             "requests/s",
             IF(q("decode_replicas") > 0, q("rate_requests_per_second") / q("decode_replicas"),
                0),
             "disaggregated: peak rate / decode replicas (0 otherwise)"),
    Quantity("decode_pool_running_per_step_second", "Sequences decoding per second of decode "
             "step (decode pool)", "sequences/s",
             q("decode_pool_arrivals_per_replica") * (_O - 1),
             "k = λ (output − 1): each request decodes output − 1 tokens after the first (the "
             "prefill pool's), one a step, and no step carries a prompt"),
    Quantity("decode_pool_running_sequences", "Sequences decoding in a decode replica, mean",
             "sequences", running(q("decode_pool_running_per_step_second")),
             "n̄, the fixed point of n = k D(n) with k = arrivals × (output − 1): each request "
             "decodes its output − 1 tokens after the first (the prefill pool's), one a step, "
             "and no step carries a prompt; at most the slots"),
    Quantity("decode_pool_running_feedback", "Step growth fed back per sequence (decode pool)",
             "fraction",
             q("decode_pool_running_per_step_second") * q("speed_ratio_applied")
             * step_slope(q("decode_pool_running_sequences")),
             "B = k × the slope of the step's binding piece at n̄", display="ratio"),
    Quantity("decode_pool_running_spread", "Sequences decoding in a decode replica, standard "
             "deviation", "sequences",
             IF(q("decode_pool_running_feedback") < 1,
                _sqrt(q("decode_pool_running_sequences")
                      / (1 - q("decode_pool_running_feedback"))), 0),
             "√(n̄ / (1 − B)): the Poisson count of one request lifetime widened by the step's "
             "feedback (no prompt lengthens a lifetime here)"),
    Quantity("decode_pool_running_at_percentile", "Sequences decoding at the ITL percentile "
             "(decode pool)", "sequences",
             MIN(q("slots"), MAX(0, q("decode_pool_running_sequences") + 1
                                 + q("latency_percentile_z")
                                 * q("decode_pool_running_spread"))),
             "n̄ + 1 + z_p σ: every gap is a decode step, so the percentile of the gaps is the "
             "step at the percentile of the batch; at most the slots"),
    Quantity("decode_pool_itl_percentile_seconds", "ITL at the percentile (decode pool)", "s",
             decode_step(q("decode_pool_running_at_percentile")),
             "D(n̄ + 1 + z_p σ): a decode step with the sequences decoding at the percentile "
             "and no prompt in it (× measured speed error)", display="seconds"),
    Quantity("prefill_pool_load", "Load of a prefill replica", "fraction",
             IF(q("prefill_replicas") > 0,
                q("rate_requests_per_second") * q("prefill_pool_service_seconds")
                / q("prefill_replicas"), 0),
             "peak rate × prefill time / prefill replicas (ρ)", display="ratio"),
    Quantity("prefill_pool_ttft_percentile_seconds", "TTFT at the percentile (disaggregated)",
             "s",
             IF(q("prefill_pool_load") < 1,
                q("prefill_pool_first_token_seconds")
                + md1_tail_wait(q("prefill_pool_load"), q("prefill_pool_service_seconds")),
                1e9),
             "prefill + transfer + the M/D/1 tail wait ln(ρ/(1 − p)) τ / (2(1 − ρ))",
             display="seconds"),
    Quantity("layout_serving_replicas", "Serving replicas (layout)", "replicas",
             IF(DISAGG, q("prefill_replicas") + q("decode_replicas"), q("serving_replicas")),
             "disaggregated: prefill + decode replicas; otherwise the serving replicas",
             kind="int"),
    Quantity("layout_itl_percentile_seconds", "ITL at the percentile (layout)", "s",
             IF(DISAGG, q("decode_pool_itl_percentile_seconds"), q("itl_percentile_seconds")),
             "disaggregated: the decode pool's, every gap a decode step (no prompt rides in "
             "it); otherwise the aggregated one", display="seconds"),
    Quantity("layout_ttft_percentile_seconds", "TTFT at the percentile (layout)", "s",
             IF(DISAGG, q("prefill_pool_ttft_percentile_seconds"),
                q("ttft_percentile_seconds")),
             "disaggregated: the prefill pool's; otherwise the aggregated one",
             display="seconds"),
    Quantity("layout_ttft_mean_seconds", "Time to first token, mean (layout)", "s",
             IF(DISAGG, IF(q("prefill_pool_load") < 1, q("prefill_pool_first_token_seconds")
                           + md1_mean_wait(q("prefill_pool_load"),
                                           q("prefill_pool_service_seconds")), 1e9),
                q("ttft_mean_seconds")),
             "disaggregated: prefill + transfer + the M/D/1 mean wait ρτ/(2(1 − ρ)); otherwise "
             "the aggregated one", display="seconds"),
    Quantity("prefill_gpus", "Prefill GPUs", "GPUs", q("prefill_replicas") * _tp,
             "prefill replicas × TP", kind="int"),
    Quantity("decode_gpus", "Decode GPUs (spares included)", "GPUs",
             IF(DISAGG, (q("decode_replicas") + w("spare_replicas")) * _tp, 0),
             "disaggregated: (decode replicas + spares) × TP", kind="int"),
]

LAYOUT_QUANTITIES = STEP_QUANTITIES + POOL_QUANTITIES

def layout_capped(batch: Expr) -> Expr:
    """A batch capped by what the layout holds: the sequences that fit and the engine's
    max_num_seqs as the layout counts them, at least 1 (the Fleet's batches and calc's)."""
    return MAX(1, MIN(batch, q("layout_max_sequences"), q("layout_max_num_seqs")))


# -- one configuration in a layout (`planner calc --layout`) -----------------------------------
CALC_BATCH = Ref("calc", "batch")  # the concurrency asked for: calc's --batch
CALC_QUANTITIES: list[Quantity] = [
    Quantity("batch_chosen", "Sequences decoding together (layout)", "sequences",
             layout_capped(CALC_BATCH),
             "the concurrency, capped by the sequences that fit and the engine's max_num_seqs "
             "as the layout holds them (DP attention: each GPU its own pool and max_num_seqs)",
             kind="int"),
    Quantity("layout_tpot_seconds", "Time per output token (layout)", "s",
             q("tpot_seconds") + q("layout_step_delta_seconds"),
             "time per output token at the batch + the step time the layout adds",
             display="seconds"),
    Quantity("layout_output_tokens_per_second", "Serving output throughput (layout)",
             "tokens/s", q("batch_chosen") / q("layout_tpot_seconds"),
             "batch / time per output token in the layout: one replica's steady-state output"),
    Quantity("layout_fits", "Fits (layout)", "",
             AND(q("weights_fit"), q("context_supported"),
                 CALC_BATCH <= q("layout_max_sequences")),
             "weights fit, the model supports the context, and the concurrency asked for ≤ the "
             "sequences the layout holds (`fits`, with the layout's pool)", kind="bool"),
]
CALC_LAYOUTS = ("tp", "tp+ep", "dp-attention")  # disaggregation needs a rate: planner size
