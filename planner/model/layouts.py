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
  (M/D/1 per replica, as the aggregated TTFT), the prompt's KV moved over RDMA, and a pool of
  decode replicas sized for the rate at the ITL target with no prompt-carrying step.

``planner.model.fleet`` reads the few ``layout_*`` quantities where a layout changes a fleet
quantity (the step time, the batch caps, the replicas, the percentiles the targets check).
"""

from __future__ import annotations

from planner.model.expr import AND, IF, INT, LN, MAX, MIN, OR, Expr, Ref
from planner.model.quantity import Quantity, a, m, q, v
from planner.model.speed_quantities import allreduce_seconds
from planner.model.units import GB

LAYOUT = Ref("layout", "layout")
DP = LAYOUT.eq("dp-attention")
DISAGG = LAYOUT.eq("disaggregated")
_ep = AND(OR(LAYOUT.eq("tp+ep"), DP), m("experts") > 0)  # experts sharded whole over the GPUs
_tp = v("tp")
_layers = m("num_hidden_layers")
_moe = m("moe_layers")
_P, _O = Ref("workload", "prompt_tokens"), Ref("workload", "output_tokens")
_p = q("latency_percentile_used")


def _ceil(x: Expr) -> Expr:
    return -INT(-x)


def md1_load_limit(budget: Expr, tau: Expr) -> Expr:
    """The load ρ whose M/D/1 tail wait ln(ρ/(1 − p)) τ / (2(1 − ρ)) stays within the budget
    (from ln x ≤ x − 1: never overstated), at most 0.99; 0 when the budget is negative."""
    r = 2 * budget / tau
    return IF(budget > 0, MIN(0.99, (1 + r) / (1 / (1 - _p) + r)), 0)


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
             - allreduce_seconds(1, latency=False) * q("allreduce_share_removed")
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
    Quantity("layout_step_delta_seconds", "Step time the layout adds at the batch", "s",
             q("layout_fixed_seconds") + q("serving_batch") * q("layout_seconds_per_sequence")
             + (q("batch_chosen") - q("serving_batch"))
             * (q("step_seconds_per_sequence")
                + q("serving_flops_per_sequence") / _tp / q("compute_achieved")),
             "fixed + serving batch × per-sequence change, + the sequences beyond the TP row's "
             "caps (DP attention) at their full per-sequence time and GEMM compute",
             display="seconds"),
]

# -- disaggregated prefill / decode ---------------------------------------------------------------
POOL_QUANTITIES: list[Quantity] = [
    Quantity("kv_transfer_bytes", "KV cache moved per request", "B",
             q("kv_bytes_per_token") * _P + q("state_bytes_per_sequence"),
             "KV per token × prompt tokens (+ any linear-attention state)", display="bytes"),
    Quantity("rdma_bytes_per_second", "RDMA bandwidth per GPU achieved", "B/s",
             IF(Ref("server", "rdma_gb_s") > 0, Ref("server", "rdma_gb_s"),
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
    Quantity("prefill_pool_first_token_seconds", "TTFT with no queue (disaggregated)", "s",
             q("prefill_pool_service_seconds") + q("kv_transfer_seconds"),
             "prefill + KV transfer to the decode replica", display="seconds"),
    Quantity("prefill_pool_load_limit", "Prefill load meeting the TTFT percentile "
             "(disaggregated)", "fraction",
             md1_load_limit(Ref("workload", "ttft_s") - q("prefill_pool_first_token_seconds"),
                            q("prefill_pool_service_seconds")),
             "as the aggregated limit, with the wait budget TTFT target − prefill − transfer",
             display="ratio"),
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
    Quantity("prefill_pool_load", "Load of a prefill replica", "fraction",
             IF(q("prefill_replicas") > 0,
                q("rate_requests_per_second") * q("prefill_pool_service_seconds")
                / q("prefill_replicas"), 0),
             "peak rate × prefill time / prefill replicas (ρ)", display="ratio"),
    Quantity("prefill_pool_ttft_percentile_seconds", "TTFT at the percentile (disaggregated)",
             "s",
             IF(q("prefill_pool_load") < 1,
                q("prefill_pool_first_token_seconds")
                + IF(q("prefill_pool_load") > 1 - _p,
                     LN(q("prefill_pool_load") / (1 - _p)) * q("prefill_pool_service_seconds")
                     / (2 * (1 - q("prefill_pool_load"))), 0), 1e9),
             "prefill + transfer + the M/D/1 tail wait ln(ρ/(1 − p)) τ / (2(1 − ρ))",
             display="seconds"),
    Quantity("layout_serving_replicas", "Serving replicas (layout)", "replicas",
             IF(DISAGG, q("prefill_replicas") + q("decode_replicas"), q("serving_replicas")),
             "disaggregated: prefill + decode replicas; otherwise the serving replicas",
             kind="int"),
    Quantity("layout_itl_percentile_seconds", "ITL at the percentile (layout)", "s",
             IF(DISAGG, q("itl_seconds"), q("itl_percentile_seconds")),
             "disaggregated: every gap is a decode step (no prompt rides in it)",
             display="seconds"),
    Quantity("layout_ttft_percentile_seconds", "TTFT at the percentile (layout)", "s",
             IF(DISAGG, q("prefill_pool_ttft_percentile_seconds"),
                q("ttft_percentile_seconds")),
             "disaggregated: the prefill pool's; otherwise the aggregated one",
             display="seconds"),
    Quantity("prefill_gpus", "Prefill GPUs", "GPUs", q("prefill_replicas") * _tp,
             "prefill replicas × TP", kind="int"),
    Quantity("decode_gpus", "Decode GPUs (spares included)", "GPUs",
             IF(DISAGG, (q("decode_replicas") + Ref("workload", "spare_replicas")) * _tp, 0),
             "disaggregated: (decode replicas + spares) × TP", kind="int"),
]

LAYOUT_QUANTITIES = STEP_QUANTITIES + POOL_QUANTITIES
