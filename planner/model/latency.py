"""Latency at the workload's percentile, as fleet quantities (docs/latency.md).

Two blocks, spliced into ``planner.model.fleet.FLEET_QUANTITIES`` around the serving replicas:
``LATENCY_LIMITS``, what sizing may use (limits on the arrivals per replica that depend on no count
of replicas: closed forms in the arrivals, or bounds at the chosen batch), and
``LATENCY_AT_LOAD``, the latencies at the load each serving replica then carries (the batch
decoding by Little's law, the kinds of token gap, the M/D/1 tail of the prefill queue, the wait
for a KV slot). ``planner simulate`` checks them.
"""

from __future__ import annotations

from planner.model.expr import AND, IF, LN, MAX, MIN, Expr, Num
from planner.model.fleet_refs import OUTPUT as _O
from planner.model.fleet_refs import PROMPT as _P
from planner.model.fleet_refs import ceil as _ceil
from planner.model.fleet_refs import sqrt as _sqrt
from planner.model.fleet_refs import w
from planner.model.normal import exp as _exp
from planner.model.normal import normal_quantile, normal_tail
from planner.model.quantity import Quantity, e, m, q, v
from planner.model.queueing import md1_mean_wait, md1_tail_wait, tangent_at

_tp = v("tp")


def decode_step(n: Expr) -> Expr:
    """A decode step with n sequences decoding and no prompt in it, × measured speed error:
    the fixed time, n × each sequence's share, and the larger of reading the weights (for an
    MoE model at most the shared weights + each sequence's top-k experts) and the GEMMs' compute.
    The row's own step at the chosen batch is ``decode_step_no_prefill_seconds``."""
    return q("speed_ratio_applied") * (
        q("layout_step_fixed_seconds") + n * q("decode_seconds_per_sequence")
        + MAX(MIN(q("weights_read_seconds"),
                  q("shared_weights_read_seconds") + n * q("expert_read_seconds_per_sequence")),
              n * q("gemm_seconds_per_sequence")))


def running_fixed_point(k: Expr, fixed: Expr, per_sequence: Expr) -> Expr:
    """The sequences decoding if every step took fixed + n × per_sequence (model seconds), k
    sequences decoding per second of step: n = k (fixed + n × per_sequence) r, so
    n = k r fixed / (1 − k r per_sequence); the slots when the line never meets it (the replica
    cannot keep up)."""
    kr = k * q("speed_ratio_applied")
    return IF(kr * per_sequence < 1, kr * fixed / (1 - kr * per_sequence), q("slots"))


def running(k: Expr, busy: Expr | None = None) -> Expr:
    """n̄ with k sequences decoding per second of decode step: the fixed point of n = k D(n), at
    most the slots; all of them where `busy` (the share of time prompts take) reaches 1. An
    aggregated replica's k is λ (output − 1) / (1 − λW) (``running_per_step_second``); a
    disaggregated decode pool's, whose steps carry no prompt, λ (output − 1)."""
    fixed, per = q("layout_step_fixed_seconds"), q("decode_seconds_per_sequence")
    n = MIN(q("slots"), MAX(
        MIN(running_fixed_point(k, fixed + q("weights_read_seconds"), per),
            running_fixed_point(k, fixed + q("shared_weights_read_seconds"),
                                per + q("expert_read_seconds_per_sequence"))),
        running_fixed_point(k, fixed, per + q("gemm_seconds_per_sequence"))))
    return n if busy is None else IF(busy < 1, n, q("slots"))


def step_slope(n: Expr) -> Expr:
    """The slope of the decode step's binding piece at n sequences (model seconds per
    sequence): each sequence's share, + its GEMM where compute binds, + its top-k experts where
    the routed-expert memory line binds."""
    return q("decode_seconds_per_sequence") + IF(
        q("gemm_seconds_per_sequence") * n >= MIN(q("weights_read_seconds"),
                                                  q("shared_weights_read_seconds")
                                                  + q("expert_read_seconds_per_sequence") * n),
        q("gemm_seconds_per_sequence"),
        IF(q("shared_weights_read_seconds") + q("expert_read_seconds_per_sequence") * n
           < q("weights_read_seconds"), q("expert_read_seconds_per_sequence"), 0))


def _tail_limit(fixed: Expr, per_sequence: Expr) -> Expr:
    """The most arrivals per replica with at most 1 − p of the gaps carrying a prompt, if every
    decode step took fixed + n × per_sequence (model seconds): mixed steps, λ c a / (1 − λS)
    ≤ 1 − p with a = r fixed, S = W + (output − 1) r per_sequence; prefill apart, λ a / (1 −
    λS) + λ w ≤ 1 − p with w = W / (output − 1), whose smaller root is 2(1 − p) / (B +
    √(B² − 4 w S (1 − p))), B = c a + w + (1 − p) S (docs/latency.md)."""
    q_ = 1 - q("latency_percentile_used")
    a_ = q("speed_ratio_applied") * fixed
    slope = q("prefill_work_seconds") + q("itl_tail_steps") * per_sequence
    chunks, w_ = q("itl_tail_chunks"), q("itl_tail_prefill_per_gap")
    b_ = chunks * a_ + w_ + q_ * slope
    return 2 * q_ / (b_ + _sqrt(MAX(0, b_ * b_ - 4 * w_ * slope * q_)))


def _coride(waited: Expr) -> Expr:
    """Prompt work riding in a prompt's last step: the prompts arriving during `waited` + its
    full chunks fill the budget that step leaves (docs/latency.md)."""
    left = q("prefill_budget_left_tokens")
    t = waited + (q("prefill_chunks_per_prompt") - 1) * (
        q("prefill_step_at_load_seconds")
        + q("layout_prefill_interleaved_seconds") * q("speed_ratio_applied")
        * q("prefill_chunk_tokens") / _P)
    return IF(left > 0, q("layout_prefill_interleaved_seconds") * q("speed_ratio_applied")
              * left / _P * (1 - _exp(-q("arrivals_per_replica") * t * MIN(_P, left) / left)), 0)


def _tangent_coefficients(before: Expr | None, riding: bool) -> tuple[Expr, Expr, Expr]:
    """(a2, a1, a0) of the quadratic whose root is the largest prefill load ρ meeting the TTFT
    wait budget b with ln replaced by its tangent after the pass `before` (`tangent_at`).
    riding: the prompts arriving meanwhile ride in its last step, t (1 + fρ) + fρE ≤ b, with
    t = (lead + ρ/ρ0) τ / (2(1 − ρ)), the quadratic a2 ρ² + a1 ρ + a0 ≤ 0, whose smaller
    positive root is 2(−a0) / (a1 + √(a1² − 4 a2 a0)); else they fill the step, t ≤ b − the
    most that rides (f = 0, b less that cap: `md1_load_limit`'s bound)."""
    lead, rho0 = tangent_at(before)
    tau, ahead = q("prefill_service_seconds"), q("ttft_before_last_step_seconds")
    f = q("ttft_coride_share") if riding else Num(0)
    b = q("ttft_wait_budget_seconds") - (0 if riding else q("ttft_coride_cap_seconds"))
    a2 = tau * f / rho0 - 2 * f * ahead
    a1 = tau * (lead * f + 1 / rho0) + 2 * f * ahead + 2 * b
    a0 = tau * lead - 2 * b
    return a2, a1, a0


def _tangent_pass(name: str, label: str, gate: Expr, before: Expr | None, riding: bool,
                  how: str) -> list[Quantity]:
    """A pass of the TTFT load limit: its linear coefficient a1 (a quantity of its own, so the
    root's formula stays short), then the smaller positive root of a2 ρ² + a1 ρ + a0."""
    a2, a1, a0 = _tangent_coefficients(before, riding)
    linear = q(f"{name}_linear")
    return [
        Quantity(f"{name}_linear", f"{label}: linear coefficient", "s", a1,
                 "a1 = τ (lead f + 1/ρ0) + 2 f E + 2 b, lead = ln x0 − 1, ρ0 = (1 − p) x0 "
                 "(f = 0 and b less the cap where the last step is full)"),
        Quantity(name, label, "fraction",
                 IF(gate, IF(a0 < 0, 2 * -a0 / (linear + _sqrt(linear * linear - 4 * a2 * a0)),
                             0), 0), how, display="ratio"),
    ]


# What sizing may use: limits on the arrivals per replica.
def _no_queue(step: Expr) -> Expr:
    """The model's time to first token with no queue when each prefill step costs `step`:
    prefill steps per prompt × step + the prompt's prefill work (× measured speed error)."""
    return (q("prefill_chunks_per_prompt") * step
            + q("layout_prefill_interleaved_seconds") * q("speed_ratio_applied"))


LATENCY_LIMITS: list[Quantity] = [
    # -- latency at the percentile (docs/latency.md). First what sizing may use: limits on the
    # arrivals per replica that depend on no count of replicas (closed forms in the arrivals, or
    # bounds at the chosen batch, more sequences than decode at any load a replica is given).
    Quantity("slots", "Sequences a replica can run", "sequences",
             MIN(q("layout_max_num_seqs"), q("layout_max_sequences")),
             "the engine's max_num_seqs and the sequences of prompt + output the KV pool holds "
             "(in the serving layout: × TP under DP attention), whichever is fewer: what the "
             "engine admits, the batch at any moment (beyond it arrivals wait for a slot)",
             kind="int"),
    Quantity("decode_seconds_per_sequence", "Decode step time each sequence adds", "s",
             q("allreduce_traffic_seconds_per_sequence") + q("step_seconds_per_running_sequence")
             + q("serving_attention_seconds_per_sequence") + q("layout_seconds_per_sequence"),
             "all-reduce traffic per sequence + engine time per sequence + its attention + what "
             "the serving layout adds (planner.model.layouts): the slope of a decode step in the "
             "sequences decoding (no prefill in it)",
             display="seconds"),
    Quantity("shared_weights_read_seconds", "Reading the weights every step reads", "s",
             IF(m("experts") > 0,
                (q("weight_bytes") - q("expert_weight_bytes")) / _tp / q("bandwidth_achieved"),
                q("weights_read_seconds")),
             "MoE: the weights other than the routed experts / TP / achieved bandwidth; dense: "
             "all the weights", display="seconds"),
    Quantity("expert_read_seconds_per_sequence", "Expert weights each sequence reads", "s",
             IF(m("experts") > 0,
                q("expert_weight_bytes") * m("num_experts_per_tok") / m("experts") / _tp
                / q("bandwidth_achieved"), 0),
             "MoE: a sequence's top-k routed experts / TP / achieved bandwidth (at most, as the "
             "batch shares experts); dense: 0", display="seconds"),
    Quantity("gemm_seconds_per_sequence", "GEMM compute each sequence adds", "s",
             q("serving_flops_per_sequence") / _tp / q("compute_achieved"),
             "GEMM FLOPs per sequence / TP / achieved FLOP/s", display="seconds"),
    Quantity("decode_step_no_prefill_seconds", "Decode step carrying no prompt", "s",
             (q("tpot_seconds") - IF(_O > 0, q("prefill_per_step_seconds"), 0)
              + q("layout_step_delta_seconds") - q("layout_prefill_delta_seconds"))
             * q("speed_ratio_applied"),
             "time per output token at the chosen batch less the prefill it carries on average, "
             "+ what the serving layout adds but its prefill, × measured speed error: the gap "
             "between tokens when no prompt is being processed and the chosen batch decodes "
             "(the step the capacity is bought at)",
             display="seconds"),
    Quantity("prefill_chunk_tokens", "Prompt tokens per prefill step", "tokens",
             MAX(1, q("max_num_batched_tokens_effective")
                 - IF(e("mixes_prefill"), q("batch_chosen"), 0)),
             "the engine's token budget per step (max_num_batched_tokens, SGLang's chunked "
             "prefill size), less the running sequences' decode tokens where prompt chunks ride "
             "in decode steps", kind="int"),
    Quantity("prefill_chunks_per_prompt", "Prefill steps per prompt", "steps",
             _ceil(_P / q("prefill_chunk_tokens")),
             "prompt tokens / tokens per prefill step, rounded up", kind="int"),
    Quantity("prefill_chunk_seconds", "Prefill work in one prefill step", "s",
             (q("layout_prefill_interleaved_seconds") * MIN(_P, q("prefill_chunk_tokens")) / _P
              + IF(e("mixes_prefill"), 0, q("prefill_pass_fixed_seconds")))
             * q("speed_ratio_applied"),
             "one chunk's share of the prompt's prefill (× measured speed error); where the "
             "engine runs prefill as a pass of its own (SGLang by default) the pass also pays "
             "its fixed cost and a read of the weights", display="seconds"),
    Quantity("prefill_gap_seconds", "Gap between tokens when a prompt is processed", "s",
             q("decode_step_no_prefill_seconds")
             + IF(e("mixes_prefill"), q("prefill_chunk_seconds"), q("prefill_work_seconds")),
             "a decode step at the chosen batch + the prefill chunk it "
             "carries (mixed steps), or + the prompt's passes, run back to back while every "
             "running sequence waits (prefill apart)",
             display="seconds"),
    Quantity("prefill_work_seconds", "Time a prompt takes from decoding", "s",
             (q("layout_prefill_interleaved_seconds")
              + IF(e("mixes_prefill"), 0,
                   q("prefill_chunks_per_prompt") * q("prefill_pass_fixed_seconds")))
             * q("speed_ratio_applied"),
             "the prompt's prefill work (× measured speed error), which lengthens the steps its "
             "chunks ride in; where the engine runs prefill apart, + a pass's fixed cost for "
             "each chunk: W, the share of a replica's time each arrival takes", display="seconds"),
    Quantity("prefill_step_seconds", "Step a prompt chunk rides in (bound)", "s",
             IF(e("mixes_prefill"), q("decode_step_no_prefill_seconds"),
                q("prefill_pass_fixed_seconds") * q("speed_ratio_applied")),
             "what a prefill step costs beside its prompt work: the decode step it rides in at "
             "the chosen batch (mixed), or a pass's fixed cost and weight read (prefill apart)",
             display="seconds"),
    Quantity("ttft_margin_seconds", "First-token time the engines showed beyond the model",
             "s",
             (q("ttft_margin_ratio") - 1) * _no_queue(q("prefill_step_seconds")),
             "(measured first-token error beyond the speed error − 1) × the model's time to "
             "first token with no queue at the chosen batch: tokenising, scheduling, an eager "
             "prefill and streaming that published runs show and the roofline does not; a "
             "delay every first token waits, not GPU time", display="seconds"),
    Quantity("ttft_no_queue_seconds", "Time to first token with no queue", "s",
             _no_queue(q("prefill_step_seconds")) + q("ttft_margin_seconds"),
             "prefill steps per prompt × the step each rides in + the prompt's prefill work, "
             "at the chosen batch, + the measured first-token margin", display="seconds"),
    Quantity("prefill_service_seconds", "GPU time a prompt's prefill occupies", "s",
             q("layout_prefill_interleaved_seconds") * q("speed_ratio_applied")
             + q("prefill_step_seconds") * _P / q("prefill_chunk_tokens"),
             "the prompt's prefill work + its share of the steps that carry it (prompt / step "
             "budget × the step): the service time τ of the queue of waiting prompts, which "
             "queue back to back at the step budget; at the chosen batch",
             display="seconds"),
    Quantity("itl_tail_chunks", "Prompt steps counted per prompt", "steps",
             IF(e("mixes_prefill"), q("prefill_chunks_per_prompt"), 1),
             "c: the prefill steps per prompt where prompts ride in mixed steps; 1 where the "
             "engine runs prefill apart (every pass of a prompt falls in one gap)"),
    Quantity("itl_tail_prefill_per_gap", "Prefill spread over a request's gaps", "s",
             IF(e("mixes_prefill"), 0, q("prefill_work_seconds") / MAX(1, _O - 1)),
             "w = W / (output − 1) where prefill runs apart (a request's first gap holds the "
             "passes after its own); 0 with mixed steps", display="seconds"),
    Quantity("itl_tail_steps", "Decode steps per request × measured speed error", "steps",
             (_O - 1) * q("speed_ratio_applied"),
             "(output − 1) × measured speed error: what turns a step line's model seconds "
             "per sequence into a request's share of the time"),
    Quantity("decode_step_at_slots_seconds", "Decode step with every slot decoding", "s",
             decode_step(q("slots")),
             "D(slots): a decode step with every slot decoding and no prompt in it (× measured "
             "speed error)", display="seconds"),
    Quantity("itl_tail_limit_all_weights", "Arrivals keeping prompt gaps out of the ITL tail "
             "(reading all weights)", "requests/s",
             _tail_limit(q("layout_step_fixed_seconds") + q("weights_read_seconds"),
                         q("decode_seconds_per_sequence")),
             "the limit below on the memory line that reads every weight"),
    Quantity("itl_tail_limit_routed", "Arrivals keeping prompt gaps out of the ITL tail "
             "(reading the experts routed to)", "requests/s",
             _tail_limit(q("layout_step_fixed_seconds") + q("shared_weights_read_seconds"),
                         q("decode_seconds_per_sequence")
                         + q("expert_read_seconds_per_sequence")),
             "the limit below on the memory line that reads the shared weights and each "
             "sequence's top-k experts"),
    Quantity("itl_tail_limit_memory", "Arrivals keeping prompt gaps out of the ITL tail "
             "(memory piece)", "requests/s",
             MAX(q("itl_tail_limit_all_weights"), q("itl_tail_limit_routed")),
             "at most 1 − p of inter-token gaps may carry a prompt. Mixed steps: the share is at "
             "most λ c g, c prefill steps per prompt, and the mean gap g = D(n̄) / (1 − λW) = "
             "a / (1 − λ(W + (output − 1) b)) on a step line a + b n (D(n̄) = n̄ / k), so "
             "λ ≤ (1 − p) / (c a + (1 − p)(W + (output − 1) b)), exact; prefill apart: at most "
             "λ g + λW / (output − 1), the smaller root of its quadratic. Here the memory "
             "piece: the larger limit of its two lines (the step takes the smaller)"),
    Quantity("itl_tail_limit_compute", "Arrivals keeping prompt gaps out of the ITL tail "
             "(compute piece)", "requests/s",
             _tail_limit(q("layout_step_fixed_seconds"), q("decode_seconds_per_sequence")
                         + q("gemm_seconds_per_sequence")),
             "the same on the compute line"),
    Quantity("itl_tail_limit_slots", "Arrivals keeping prompt gaps out of the ITL tail "
             "(every slot decoding)", "requests/s",
             _tail_limit(q("decode_step_at_slots_seconds") / q("speed_ratio_applied"), Num(0)),
             "the same with every slot decoding: no step is longer"),
    Quantity("itl_tail_rate_limit", "Arrivals per replica keeping prompt gaps out of the tail",
             "requests/s",
             MAX(MIN(q("itl_tail_limit_memory"), q("itl_tail_limit_compute")),
                 q("itl_tail_limit_slots")),
             "the step is the larger of its memory and compute pieces, at most the step with "
             "every slot decoding: the lesser of the pieces' limits, at least the slots' "),
    Quantity("replicas_for_itl_tail", "Replicas for the ITL percentile", "replicas",
             IF(q("prefill_gap_seconds") > w("itl_s"),
                _ceil(q("rate_requests_per_second") / q("itl_tail_rate_limit")), 0),
             "where a gap carrying a prompt breaks the ITL target: peak rate / arrivals per "
             "replica keeping such gaps out of the percentile, rounded up", kind="int"),
    Quantity("ttft_wait_budget_seconds", "Time a prompt may wait for prefill", "s",
             w("ttft_s") - q("latency_percentile_used") * q("decode_step_no_prefill_seconds")
             - q("ttft_no_queue_seconds"),
             "TTFT target − the running step it arrives into (percentile × the decode step) − "
             "prefill with no queue, at the chosen batch", display="seconds"),
    Quantity("prefill_budget_left_tokens", "Step budget a prompt's last step leaves", "tokens",
             q("prefill_chunks_per_prompt") * q("prefill_chunk_tokens") - _P,
             "prefill steps per prompt × tokens per step − prompt tokens: room for the prompts "
             "behind it", kind="int"),
    Quantity("ttft_coride_cap_seconds", "Most prompt work riding in a prompt's last step",
             "s",
             q("layout_prefill_interleaved_seconds") * q("speed_ratio_applied")
             * q("prefill_budget_left_tokens") / _P,
             "the prefill work of the budget a prompt's last step leaves: however many prompts "
             "arrive behind it, no more rides with it", display="seconds"),
    Quantity("ttft_coride_share", "Prefill work per unit of prefill load", "fraction",
             q("layout_prefill_interleaved_seconds") * q("speed_ratio_applied")
             / q("prefill_service_seconds"),
             "prefill work / prefill service time: f, with λW = f ρ the share of time that "
             "prompts arriving behind one add to the step it completes in", display="ratio"),
    Quantity("ttft_before_last_step_seconds", "Time from arrival to a prompt's last step", "s",
             q("latency_percentile_used") * q("decode_step_no_prefill_seconds")
             + (q("prefill_chunks_per_prompt") - 1)
             * (q("prefill_step_seconds") + q("layout_prefill_interleaved_seconds")
                * q("speed_ratio_applied") * q("prefill_chunk_tokens") / _P),
             "with no queue: the running step it arrives into (percentile × the decode step) + "
             "its full chunks before the last, each a step with a full budget of prompt: E, "
             "during which later arrivals gather to ride in its last step", display="seconds"),
    *_tangent_pass(
        "ttft_load_limit_first", "Prefill load meeting the TTFT percentile (first pass)",
        q("ttft_wait_budget_seconds") > 0, None, True,
        "the prefill load ρ whose M/D/1 tail wait t = ln(ρ/(1 − p)) τ / (2(1 − ρ)), and the "
        "prompts riding in its last step (λW = fρ times t and E), stay within the wait budget, "
        "with ln x ≤ x − 1 (the tangent at 1): a load never overstated"),
    *_tangent_pass(
        "ttft_load_limit_second", "Prefill load meeting the TTFT percentile (second pass)",
        q("ttft_wait_budget_seconds") > 0, q("ttft_load_limit_first"), True,
        "the same bound with ln replaced by its tangent at the first pass's load: closer, "
        "still never overstated"),
    *_tangent_pass(
        "ttft_load_limit_riding", "Prefill load meeting the TTFT percentile (riding)",
        q("ttft_wait_budget_seconds") > 0, q("ttft_load_limit_second"), True,
        "a third pass: within 0.1 % of the exact root on the shipped workloads"),
    *_tangent_pass(
        "ttft_load_limit_filled_first", "Prefill load meeting the TTFT percentile, last step "
        "full (first pass)", q("ttft_wait_budget_seconds") > q("ttft_coride_cap_seconds"),
        None, False,
        "the riding prompts can add no more than the budget the last step leaves: the load "
        "whose M/D/1 tail wait alone stays within the wait budget less that cap, ln x ≤ x − 1 "
        "first"),
    *_tangent_pass(
        "ttft_load_limit_filled_second", "Prefill load meeting the TTFT percentile, last step "
        "full (second pass)", q("ttft_wait_budget_seconds") > q("ttft_coride_cap_seconds"),
        q("ttft_load_limit_filled_first"), False,
        "the same bound with ln replaced by its tangent at the first pass's load"),
    *_tangent_pass(
        "ttft_load_limit_filled", "Prefill load meeting the TTFT percentile, last step full",
        q("ttft_wait_budget_seconds") > q("ttft_coride_cap_seconds"),
        q("ttft_load_limit_filled_second"), False,
        "a third pass"),
    Quantity("ttft_load_limit", "Prefill load meeting the TTFT percentile", "fraction",
             IF(q("ttft_wait_budget_seconds") > 0,
                MIN(0.99, MAX(
                    IF(q("ttft_load_limit_riding") >= 1 - q("latency_percentile_used"),
                       q("ttft_load_limit_riding"),
                       MIN(1 - q("latency_percentile_used"),
                           q("ttft_wait_budget_seconds")
                           / MAX(1e-12, q("ttft_coride_share")
                                 * q("ttft_before_last_step_seconds")))),
                    IF(q("ttft_wait_budget_seconds") > q("ttft_coride_cap_seconds"),
                       MAX(1 - q("latency_percentile_used"), q("ttft_load_limit_filled")), 0))),
                0),
             "the prompts riding along add the lesser of their linear share and the budget's "
             "cap, so the target holds at the larger of the two loads. Below ρ = 1 − p no "
             "prompt waits at the percentile (t = 0, where the tangent would go negative): "
             "there the riding prompts alone must fit, f ρ E ≤ b, and with the cap any load "
             "up to 1 − p does when the cap fits the budget; at most 0.99; 0 when prefill "
             "alone misses", display="ratio"),
    Quantity("replicas_for_ttft", "Replicas for the TTFT percentile", "replicas",
             IF(q("ttft_load_limit") > 0,
                _ceil(q("rate_requests_per_second") * q("prefill_service_seconds")
                      / q("ttft_load_limit")), 0),
             "peak rate × prefill service time / prefill load limit, rounded up", kind="int"),
]

# The latencies at the load each serving replica carries.
LATENCY_AT_LOAD: list[Quantity] = [
    Quantity("prefill_busy_share", "Share of a replica's time on prompts", "fraction",
             q("arrivals_per_replica") * q("prefill_work_seconds"),
             "arrivals per replica × time a prompt takes from decoding: λW", display="ratio"),
    Quantity("running_per_step_second", "Sequences decoding per second of decode step",
             "sequences/s",
             IF(q("prefill_busy_share") < 1,
                q("arrivals_per_replica") * (_O - 1) / (1 - q("prefill_busy_share")), 0),
             "k = λ (output − 1) / (1 − λW): each request decodes output − 1 tokens, one a "
             "step, and a step lasts D / (1 − λW) with the prompts it carries, so by Little's "
             "law the sequences decoding are n = k D(n)"),
    Quantity("running_sequences", "Sequences decoding at this load, mean", "sequences",
             running(q("running_per_step_second"), q("prefill_busy_share")),
             "n̄, the fixed point of n = k D(n): the decode step is the larger of its memory "
             "piece (the smaller of all weights and, MoE, shared weights + top-k experts per "
             "sequence) and its compute piece, each a line a + b n, and the fixed point of a "
             "max (min) of lines with k b < 1 is the max (min) of their fixed points k a / "
             "(1 − k b); at most the slots, which it fills when prompts take all the time"),
    Quantity("running_feedback", "Step growth fed back per sequence", "fraction",
             q("running_per_step_second") * q("speed_ratio_applied")
             * step_slope(q("running_sequences")),
             "B = k × the slope of the step's binding piece at n̄: one more sequence decoding "
             "lengthens every step, which keeps B more sequences in flight", display="ratio"),
    Quantity("decode_step_at_load_seconds", "Decode step at this load, mean", "s",
             decode_step(q("running_sequences")),
             "D(n̄): a decode step with the mean sequences decoding and no prompt in it "
             "(× measured speed error)", display="seconds"),
    Quantity("itl_mean_at_load_seconds", "Inter-token gap at this load, mean", "s",
             IF(q("prefill_busy_share") < 1,
                q("decode_step_at_load_seconds") / (1 - q("prefill_busy_share")), 1e9),
             "D(n̄) / (1 − λW): the decode step stretched by the prompts the steps carry",
             display="seconds"),
    Quantity("prompt_gap_share", "Share of token gaps carrying a full prompt chunk",
             "fraction",
             MIN(1, IF(e("mixes_prefill"),
                       q("arrivals_per_replica") * q("itl_mean_at_load_seconds")
                       * IF(q("prefill_chunks_per_prompt") > 1,
                            q("prefill_chunks_per_prompt") - 1 + MIN(1, q("prefill_load")), 1),
                       1 - _exp(-q("arrivals_per_replica")
                                * q("decode_step_at_load_seconds"))
                       + MIN(1, q("prefill_busy_share")) / MAX(1, _O - 1))),
             "mixed steps: prompt steps ÷ steps = arrivals per replica × mean gap × the steps "
             "per prompt that carry a full chunk (or the whole prompt): all but the last, and "
             "the last too when the next prompt is waiting to fill it (the prefill queue is "
             "busy: ρ of the time); prompts arriving in one step share the next, so a bound. "
             "Prefill apart: the engine runs every pending prompt, chunk after chunk, before "
             "the next decode step, so a gap holds prefill when a prompt arrived during the "
             "decode step before it, 1 − e^(−λ D(n̄)), and a request's first gap holds the "
             "passes after its own (λW of the time; one gap in output − 1)", display="ratio"),
    Quantity("short_chunk_gap_share", "Share of token gaps carrying a prompt's short tail",
             "fraction",
             IF(AND(e("mixes_prefill"), q("prefill_chunks_per_prompt") > 1),
                MIN(1, q("arrivals_per_replica") * q("itl_mean_at_load_seconds")
                    * (1 - MIN(1, q("prefill_load")))), 0),
             "mixed steps: a prompt longer than a step's budget ends in a short chunk, alone in "
             "its step when no prompt waits behind it (1 − ρ of the time); prefill apart: 0 "
             "(the chunks run back to back)", display="ratio"),
    Quantity("running_sequences_spread", "Sequences decoding, standard deviation",
             "sequences",
             IF(AND(q("prefill_busy_share") < 1, q("running_feedback") < 1),
                _sqrt(q("running_sequences") / (1 - q("running_feedback")))
                / (1 - q("prefill_busy_share")), 0),
             "the requests in flight are the arrivals of one request lifetime (Poisson, "
             "variance n̄); each extra one lengthens that lifetime by its prefill, and the "
             "prompts processed in a lifetime are the arrivals in it (sd × 1 / (1 − λW)); each "
             "extra sequence lengthens every step, which holds B more (the birth-death chain "
             "with rates λ and n / ((output − 1) × step): variance × 1 / (1 − B)): "
             "√(n̄ / (1 − B)) / (1 − λW)"),
    Quantity("itl_level_within", "Level of the ITL percentile within its kind of gap",
             "fraction",
             IF(q("prompt_gap_share") < 1 - q("latency_percentile_used"),
                q("latency_percentile_used") / (1 - q("prompt_gap_share")),
                (q("latency_percentile_used") - 1 + q("prompt_gap_share"))
                / q("prompt_gap_share")),
             "the gaps carrying a full chunk are the longest: where fewer than 1 − p carry "
             "one, the percentile is the level p / (1 − share) of the others; else the level "
             "(p − (1 − share)) / share of those", display="ratio"),
    *normal_quantile("itl_level_z", "Normal quantile of that level", q("itl_level_within"),
                      "the level within its kind of gap"),
    Quantity("running_sequences_at_percentile", "Sequences decoding at the ITL percentile",
             "sequences",
             MIN(q("slots"), MAX(0, q("running_sequences") + 1
                                 + q("itl_level_z")
                                 * q("running_sequences_spread"))),
             "n̄ + 1 + z σ, z the normal quantile of that level (Abramowitz & Stegun "
             "26.2.23): the batch a token at the percentile sees, itself included; at most the "
             "slots"),
    Quantity("prompts_per_step", "Prompts per step at this load, mean", "prompts",
             q("arrivals_per_replica") * q("itl_mean_at_load_seconds"),
             "arrivals per replica × mean gap: the prompts that arrive during a step and ride "
             "in the next"),
    *normal_quantile("latency_percentile_z", "Normal quantile of the latency percentile",
                      q("latency_percentile_used"), "the latency percentile"),
    Quantity("prompts_in_step_at_percentile", "Prompts in a step at the ITL percentile",
             "prompts",
             MAX(1, _ceil(q("prompts_per_step") - 0.5
                          + q("latency_percentile_z")
                          * _sqrt(q("prompts_per_step")
                                  / MAX(1e-12, 1 - q("prefill_busy_share")
                                        * q("prefill_busy_share"))))),
             "the prompts in the step at the percentile when so many steps carry one: arrivals "
             "in a step of length D + W K, K the prompts it carries, have mean m = λ × mean "
             "gap and variance m / (1 − (λW)²); the normal quantile, whole prompts, at least "
             "one", kind="int"),
    Quantity("prefill_gap_at_load_seconds", "Gap carrying prompts at the ITL percentile", "s",
             decode_step(q("running_sequences_at_percentile"))
             + IF(e("mixes_prefill"),
                  q("layout_prefill_interleaved_seconds") * q("speed_ratio_applied")
                  * MIN(q("prefill_chunk_tokens"), q("prompts_in_step_at_percentile") * _P) / _P,
                  q("prompts_in_step_at_percentile") * q("prefill_work_seconds")),
             "a decode step with the sequences decoding at the percentile + the prompt work of "
             "those prompts' tokens, at most a step's budget (mixed); where prefill runs apart, "
             "+ every pass of those prompts (W each: their work and a pass's fixed cost per "
             "chunk), run back to back", display="seconds"),
    Quantity("itl_percentile_seconds", "Inter-token latency at the percentile", "s",
             IF(q("prompt_gap_share") >= 1 - q("latency_percentile_used"),
                q("prefill_gap_at_load_seconds"),
                decode_step(q("running_sequences_at_percentile"))
                + IF(q("prompt_gap_share") + q("short_chunk_gap_share")
                     >= 1 - q("latency_percentile_used"),
                     q("layout_prefill_interleaved_seconds") * q("speed_ratio_applied")
                     * (_P - (q("prefill_chunks_per_prompt") - 1) * q("prefill_chunk_tokens"))
                     / _P, 0)),
             "where at least 1 − percentile of gaps carry a full chunk, the gap carrying the "
             "prompts at the percentile; else a decode step with the sequences decoding at the "
             "percentile, + a short tail chunk's work where those gaps reach the percentile "
             "(they differ from decode steps by that work, less than the batch moves them)",
             display="seconds"),
    Quantity("prefill_step_at_load_seconds", "Step a prompt chunk rides in", "s",
             IF(e("mixes_prefill"), q("decode_step_at_load_seconds"),
                q("prefill_pass_fixed_seconds") * q("speed_ratio_applied")),
             "the decode step at this load (mixed), or a pass's fixed cost (prefill apart)",
             display="seconds"),
    Quantity("ttft_no_queue_at_load_seconds", "Time to first token with no queue, at load",
             "s",
             _no_queue(q("prefill_step_at_load_seconds")) + q("ttft_margin_seconds"),
             "prefill steps per prompt × the step each rides in + the prompt's prefill work + "
             "the measured first-token margin", display="seconds"),
    Quantity("prefill_service_at_load_seconds", "Prefill service time τ, at load", "s",
             q("layout_prefill_interleaved_seconds") * q("speed_ratio_applied")
             + q("prefill_step_at_load_seconds") * _P / q("prefill_chunk_tokens"),
             "the prompt's prefill work + prompt / step budget × the step it rides in",
             display="seconds"),
    Quantity("prefill_load", "Share of a replica's time serving prompts", "fraction",
             q("arrivals_per_replica") * q("prefill_service_at_load_seconds"),
             "arrivals per replica × prefill service time (ρ of the prefill queue)",
             display="ratio"),
    Quantity("prefill_wait_at_percentile_seconds", "Prompt's wait at the percentile", "s",
             IF(q("prefill_load") < 1,
                md1_tail_wait(q("prefill_load"), q("prefill_service_at_load_seconds")),
                1e9),
             "the M/D/1 exponential tail wait ln(ρ/(1 − p)) τ / (2(1 − ρ)) (0 when ρ ≤ 1 − p)",
             display="seconds"),
    Quantity("prefill_coride_seconds", "Prompts riding in a prompt's last step", "s",
             _coride(q("prefill_wait_at_percentile_seconds")
                     + q("latency_percentile_used") * q("decode_step_at_load_seconds")),
             "the prompts arriving while one waits (its wait + the step it arrived into + its "
             "full chunks: t) fill the budget its last step leaves, f tokens, and finish with "
             "it: K ~ Poisson(λt) prompts of P tokens ride, E[min(f, K P)] ≈ f (1 − "
             "e^(−λt min(P, f) / f)) tokens (exact for f ≤ P; λtP for f ≫ P), × prefill work "
             "per token", display="seconds"),
    Quantity("slot_throughput", "Requests per second with every slot taken", "requests/s",
             IF(q("slots") > 0,
                1 / ((_O - 1) * q("decode_step_at_slots_seconds") / q("slots")
                     + q("prefill_work_seconds")), 0),
             "μ: with every slot decoding, a request ends every (output − 1) × D(slots) / slots "
             "and its successor's prefill takes W (0 where no sequence fits)"),
    Quantity("slots_full_z", "Free slots in standard deviations", "standard deviations",
             IF(q("running_sequences_spread") > 0,
                (q("slots") - q("running_sequences")
                 - q("arrivals_per_replica") * q("ttft_no_queue_at_load_seconds"))
                / q("running_sequences_spread"),
                IF(q("running_sequences") < q("slots"), 40, -40)),
             "(slots − sequences decoding − prompts in prefill) / standard deviation"),
    *normal_tail("slots_full_share", "Share of arrivals finding every slot taken",
                  q("slots_full_z"), "the free slots in standard deviations"),
    Quantity("slot_wait_at_percentile_seconds", "Wait for a slot at the percentile", "s",
             IF(q("arrivals_per_replica") < q("slot_throughput"),
                IF(q("slots_full_share") > 1 - q("latency_percentile_used"),
                   LN(q("slots_full_share") / (1 - q("latency_percentile_used")))
                   / (2 * (q("slot_throughput") - q("arrivals_per_replica"))), 0), 1e9),
             "the G/G/c tail with c = slots: P(wait > t) = C e^(−2(μ − λ) t / (c_a² + c_s²)), "
             "C the share finding every slot taken, Poisson arrivals (c_a² = 1) and requests "
             "of one length (c_s² = 0): ln(C / (1 − p)) / (2(μ − λ)), 0 when C ≤ 1 − p",
             display="seconds"),
    Quantity("prefill_wait_mean_seconds", "Prompt's wait for prefill, mean", "s",
             md1_mean_wait(q("prefill_load"), q("prefill_service_at_load_seconds")),
             "the M/D/1 mean wait ρτ / (2(1 − ρ))", display="seconds"),
    Quantity("ttft_mean_seconds", "Time to first token, mean", "s",
             IF(AND(q("prefill_load") < 1, q("arrivals_per_replica") < q("slot_throughput")),
                q("decode_step_at_load_seconds") / 2 + q("ttft_no_queue_at_load_seconds")
                + q("prefill_wait_mean_seconds")
                + _coride(q("prefill_wait_mean_seconds") + q("decode_step_at_load_seconds") / 2)
                + q("slots_full_share")
                / (2 * (q("slot_throughput") - q("arrivals_per_replica"))), 1e9),
             "half a decode step + prefill with no queue + the M/D/1 mean wait ρτ/(2(1 − ρ)) "
             "+ the prompts riding in its last step after that wait + the mean wait for a slot",
             display="seconds"),
    Quantity("ttft_percentile_seconds", "Time to first token at the percentile", "s",
             IF(q("prefill_load") < 1,
                q("latency_percentile_used") * q("decode_step_at_load_seconds")
                + q("ttft_no_queue_at_load_seconds") + q("prefill_wait_at_percentile_seconds")
                + q("prefill_coride_seconds") + q("slot_wait_at_percentile_seconds"), 1e9),
             "the decode step it arrives into (percentile × its length) + prefill with no queue "
             "+ the M/D/1 tail wait + the prompts riding in its last step + the wait for a "
             "slot", display="seconds"),
]
