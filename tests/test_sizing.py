"""Fleet sizing: a worked example by hand, invariants over every shipped workload, agreement
with `planner calc`, and the located errors of the workload and server catalogs."""

from __future__ import annotations

import json
import math
from statistics import NormalDist

import pytest
import yaml
from click.testing import CliRunner

from planner.cli import cli
from planner.evidence.measured import ttft_ratio
from planner.inputs.catalog import (
    DEFAULT_SERVERS,
    DEFAULT_WORKLOADS,
    load_gpus,
    load_models,
    load_servers,
    load_workloads,
)
from planner.plan.sizing import size_all, size_json

# A small world whose numbers are easy to follow by hand: engine=none, marketed memory, no
# runtime overhead, round GPU figures, one server type.
MODEL = {"source": "worked example", "params": 1e9, "num_hidden_layers": 10,
         "hidden_size": 1024, "num_attention_heads": 8, "num_key_value_heads": 8,
         "head_dim": 128, "intermediate_size": 4096, "vocab_size": 1000,
         "tie_word_embeddings": True}
GPU = {"source": "worked example", "memory_gb": 80, "bandwidth_tb_s": 2.0, "bf16_tflops": 1000,
       "gpus_per_node": 8, "price_per_hour_usd": 2.0, "price_date": "2026-01",
       "scale_up_gb_s": 400, "allreduce_latency_us": 10}
SERVER = {"gpu": "g", "gpus_per_server": 8, "price_usd": 200000, "power_kw": 10,
          "rack_units": 8, "price_date": "2026-01", "source": "worked example"}
WORKLOAD = {"model": "m", "rate_rps": 10, "prompt_tokens": 1000, "output_tokens": 200,
            "ttft_s": 1.0, "itl_s": 0.02, "weights": ["bf16"], "kv": ["bf16"], "gpus": ["g"],
            "spare_replicas": 1, "source": "worked example"}
ASSUMPTIONS = {"engine": "none", "memory_basis": "marketed", "overhead_gib_per_gpu": 0.0,
               "gpu_memory_utilization": 0.9, "bandwidth_efficiency": 0.8,
               "compute_efficiency": 0.5, "kernel_floor_us": 3.0,
               "max_num_seqs": 256.0, "target_utilisation": 0.8, "pue": 1.25,
               "electricity_usd_per_kwh": 0.08, "average_power_share": 0.75,
               "rack_power_kw": 40.8, "rack_units_per_rack": 42.0,
               "colocation_usd_per_kw_month": 180.0, "amortisation_years": 5.0,
               "discount_rate": 0.08, "reserved_discount": 0.41, "redundancy": "none"}


def world(tmp_path, workload=None, server=None):  # type: ignore[no-untyped-def]
    entry = {k: v for k, v in {**WORKLOAD, **(workload or {})}.items() if v is not None}
    files = {"models": {"m": MODEL}, "gpus": {"g": GPU},
             "servers": {"s": {**SERVER, **(server or {})}}, "workloads": {"w": entry}}
    paths = {}
    for section, entries in files.items():
        paths[section] = tmp_path / f"{section}.yaml"
        paths[section].write_text(yaml.safe_dump({section: entries}, sort_keys=False))
    models, gpus = load_models(paths["models"]), load_gpus(paths["gpus"])
    servers = load_servers(paths["servers"], gpus)
    workloads = load_workloads(paths["workloads"], models, gpus)
    return models, gpus, servers, workloads, paths


def _largest(holds, low: float = 0.0, high: float = 1 - 1e-12) -> float:  # type: ignore[no-untyped-def]
    """The largest x in [low, high] for which holds(x), by bisection (holds is monotone)."""
    for _ in range(100):
        middle = (low + high) / 2
        low, high = (middle, high) if holds(middle) else (low, middle)
    return low


def test_worked_example_by_hand(tmp_path) -> None:
    models, gpus, servers, workloads, _ = world(tmp_path)
    [sized] = size_all(workloads, models, gpus, servers, ASSUMPTIONS)
    row = next(r for r in sized.rows if r.candidate.tp == 1)
    v = row.value
    # Memory: 1e9 params x 2 B; KV 2 x 8 heads x 128 x 2 B x 10 layers per token.
    assert v("weight_bytes") == 2e9
    assert v("kv_bytes_per_token") == 40960
    pool = 80e9 * 0.9 - 2e9
    assert v("kv_pool_bytes_per_gpu") == pytest.approx(pool)
    assert v("max_sequences") == int(pool / (40960 * 1200))  # prompt + output fit: 1,424
    # Speed pieces at the mean decode context 1,000 + 200/2 = 1,100 tokens.
    bw, flops = 2e12 * 0.8, 1e15 * 0.5
    kv_read = 40960 * 1100
    fixed = 10 * (6 + 4) * 3e-6  # 10 layers of 6 attention + 4 FFN kernels, 3 µs each
    prefill = (2 * 1e9 * 1000 + 2 * 8 * 128 * 10 * 1000**2 / 2) / flops
    assert v("prefill_compute_seconds") == pytest.approx(prefill)
    assert v("prefill_interleaved_seconds") == pytest.approx(prefill)  # TP 1: no all-reduce
    # Attention runs after the GEMMs: each sequence reads its KV (its FLOPs take far less).
    attention = max(kv_read / bw, 4 * 8 * 128 * 10 * 1100 / flops)
    assert attention == kv_read / bw
    assert v("serving_attention_seconds_per_sequence") == pytest.approx(attention)
    per_seq = prefill / 200 + attention
    b_mem = (0.02 - fixed - 2e9 / bw) / per_seq
    b_comp = (0.02 - fixed) / (2e9 / flops + per_seq)
    assert v("batch_memory_all_experts") == pytest.approx(b_mem)
    assert v("batch_compute") == pytest.approx(b_comp)
    assert v("batch_for_itl") == int(min(b_mem, b_comp)) == 376
    assert v("batch_chosen") == 256  # capped by max_num_seqs
    tpot = fixed + max(2e9 / bw, 256 * 2e9 / flops) + 256 * attention + 256 / 200 * prefill
    assert v("itl_seconds") == pytest.approx(tpot)
    per_replica = 256 / (200 * tpot)
    assert v("requests_per_second_per_replica") == pytest.approx(per_replica)
    assert v("replicas_for_rate") == math.ceil(10 / (per_replica * 0.8)) == 1
    # Latency at p95 (the default), prompt chunks riding in decode steps (engine none mixes).
    # No published run measured this GPU, so the measured speed error applied is 1.
    assert v("speed_ratio_applied") == 1.0
    decode = tpot - 256 / 200 * prefill  # the step at the chosen batch with no prompt in it
    assert v("decode_step_no_prefill_seconds") == pytest.approx(decode)
    assert v("max_num_batched_tokens_effective") == 8192
    assert v("prefill_chunk_tokens") == 8192 - 256  # the step's budget less the decode tokens
    assert v("prefill_chunks_per_prompt") == 1  # 1,000 prompt tokens fit one step
    # The engine admits up to max_num_seqs (256; 1,424 fit): its slots.
    assert v("slots") == 256
    # How many sequences decode at λ requests/s: each decodes 199 tokens, one a step, and the
    # steps last D(n) / (1 − λW) with the prompts they carry (W the prompt's prefill), so
    # n = k D(n), k = λ × 199 / (1 − λW). D(n) = fixed + n × attention + max(weights read,
    # n × GEMM): two lines a + b n, and n is the larger of their fixed points k a / (1 − k b).
    lines = ((fixed + 2e9 / bw, attention), (fixed, attention + 2e9 / flops))

    def running(lam: float) -> float:
        k = lam * 199 / (1 - lam * prefill)
        return max(k * a / (1 - k * b) for a, b in lines)

    def step(n: float) -> float:
        return max(a + b * n for a, b in lines)

    # Sizing: limits on the arrivals per replica that depend on no count of replicas.
    # ITL: with D(n̄) = n̄ / k on a line, the mean gap is a / (1 − λ(W + 199 b)), and at most
    # 5 % of the gaps may carry a prompt (one step each): λ ≤ 0.05 / (a + 0.05 (W + 199 b)),
    # on the memory line (the smaller GEMMs never set the step at these loads).
    tail = min(0.05 / (a + 0.05 * (prefill + 199 * b)) for a, b in lines)
    assert v("itl_tail_rate_limit") == pytest.approx(tail)  # 24.6 requests/s
    gap = decode + prefill  # a decode step at the chosen batch carrying one whole prompt
    assert v("prefill_gap_seconds") == pytest.approx(gap)
    assert gap < 0.02 and v("replicas_for_itl_tail") == 0  # a prompt gap still meets the ITL
    # TTFT, at the chosen batch's step: more sequences than decode at any load it is given.
    bound_step = decode
    # Every first token also waits the measured margin: published first tokens with no queue
    # came a median MARGIN × the model's (every engine's median: engine "none" has none of its
    # own), over a speed error of 1, so m = (MARGIN − 1) × the no-queue time at this step.
    margin_ratio = ttft_ratio("none").median
    assert margin_ratio > 1 and v("ttft_margin_ratio") == margin_ratio
    margin = (margin_ratio - 1) * (bound_step + prefill)
    assert v("ttft_margin_seconds") == pytest.approx(margin)
    no_queue = bound_step + prefill + margin  # its step is its first token, + the margin
    assert v("ttft_no_queue_seconds") == pytest.approx(no_queue)
    service = prefill + bound_step * 1000 / 7936  # its work + its share of full-budget steps
    assert v("prefill_service_seconds") == pytest.approx(service)
    budget = 1.0 - 0.95 * bound_step - no_queue  # target − the step it arrives in − prefill
    assert v("ttft_wait_budget_seconds") == pytest.approx(budget)
    # The largest prefill load ρ = λτ whose M/D/1 tail wait t = ln(ρ/0.05) τ / (2(1 − ρ)) and
    # the prompts arriving meanwhile, riding in its step (λW = ρ W/τ per second of t and of
    # the 0.95 × step it arrived into), stay within the budget; or with its step full of them
    # (the 6,936 tokens it leaves: 27.9 ms of prefill). Both roots by bisection.
    share, cap = prefill / service, prefill * 6936 / 1000
    assert v("ttft_coride_share") == pytest.approx(share)
    assert v("ttft_coride_cap_seconds") == pytest.approx(cap)

    def tail_wait(rho: float) -> float:
        return math.log(rho / 0.05) * service / (2 * (1 - rho)) if rho > 0.05 else 0.0

    riding = _largest(lambda r: tail_wait(r) + share * r * (tail_wait(r) + 0.95 * bound_step)
                      <= budget)
    filled = _largest(lambda r: tail_wait(r) + cap <= budget)
    for name, exact in (("ttft_load_limit_riding", riding), ("ttft_load_limit_filled", filled)):
        assert v(name) <= exact and v(name) == pytest.approx(exact, rel=1e-3), name
    assert v("ttft_load_limit") == 0.99  # at most 0.99 (the budget allows more already)
    assert v("replicas_for_ttft") == math.ceil(10 * service / 0.99) == 1
    assert v("replicas") == 2  # one serving + one spare
    # At the load the serving replica carries: 10 requests/s, 4 % of its time on prompts.
    n = running(10.0)  # 3.4 sequences decode
    assert v("prefill_busy_share") == pytest.approx(10 * prefill)
    assert v("running_sequences") == pytest.approx(n)
    at_load = step(n)  # 1.6 ms, far below the 8.8 ms of the full batch
    assert v("decode_step_at_load_seconds") == pytest.approx(at_load)
    mean_gap = at_load / (1 - 10 * prefill)  # the steps stretched by the prompts they carry
    assert v("itl_mean_at_load_seconds") == pytest.approx(mean_gap)
    carrying = 10 * 1 * mean_gap  # arrivals × prompt steps × mean gap: 1.7 % of gaps
    assert v("prompt_gap_share") == pytest.approx(carrying) and carrying < 0.05
    # So p95 is a decode step: the 0.95 / (1 − 1.7 %) level of the batch, which swings around
    # its mean n: Poisson (the arrivals of one lifetime), each extra sequence lengthening every
    # step (B = k × attention) and every arrival the lifetime (1 / (1 − λW)).
    k = 10 * 199 / (1 - 10 * prefill)
    spread = math.sqrt(n / (1 - k * attention)) / (1 - 10 * prefill)
    assert v("running_sequences_spread") == pytest.approx(spread)
    at_p95 = n + 1 + NormalDist().inv_cdf(0.95 / (1 - carrying)) * spread  # itself + 1.83 σ
    assert v("running_sequences_at_percentile") == pytest.approx(at_p95, rel=1e-3)
    assert v("itl_percentile_seconds") == pytest.approx(step(at_p95), rel=1e-4)
    # TTFT at p95: the step it arrives into, its own step, no queue (ρ = 4.2 % < 5 %), and the
    # prompts arriving while it waits riding in its step: Poisson(λt) of 1,000 tokens in the
    # 6,936 its step leaves, f (1 − e^(−λt × 1,000 / f)) tokens.
    no_queue = at_load + prefill + margin  # the margin: a delay, not in τ
    tau = prefill + at_load * 1000 / 7936
    assert v("prefill_load") == pytest.approx(10 * tau) and 10 * tau < 0.05
    assert v("prefill_wait_at_percentile_seconds") == 0
    ride = prefill * 6936 / 1000 * (1 - math.exp(-10 * 0.95 * at_load * 1000 / 6936))
    assert v("prefill_coride_seconds") == pytest.approx(ride)
    assert v("slots_full_share") < 1e-9 and v("slot_wait_at_percentile_seconds") == 0
    assert v("ttft_percentile_seconds") == pytest.approx(0.95 * at_load + no_queue + ride)
    mean_wait = 10 * tau * tau / (2 * (1 - 10 * tau))  # M/D/1
    mean_ride = prefill * 6936 / 1000 * (1 - math.exp(-10 * (mean_wait + at_load / 2)
                                                       * 1000 / 6936))
    assert v("ttft_mean_seconds") == pytest.approx(at_load / 2 + no_queue + mean_wait
                                                   + mean_ride)
    # Fleet: 2 GPUs in one 8-GPU server in one rack (min(42 // 8, 40.8 // 10) = 4 per rack).
    assert (v("gpus"), v("servers"), v("servers_per_rack"), v("racks")) == (2, 1, 4, 1)
    assert v("it_power_w") == 10000 and v("facility_power_w") == 12500
    # The server states no cost lines: the Ethernet share of switch and cables ($1,600) and
    # NVIDIA AI Enterprise ($4,500 per GPU-year) on every GPU bought (8), not only those used.
    assert (v("gpus_bought"), v("replicas_installed"), v("extra_replicas")) == (8, 8, 6)
    assert v("idle_gpus") == 0 and v("survives_server_loss") is False  # redundancy none
    capex = 200000 + 1600
    energy = 10 * 0.75 * 1.25 * 8760 * 0.08
    opex = energy + 10 * 180 * 12 + 8 * 4500
    pv = (1 - 1.08**-5) / 0.08
    assert v("capex_usd") == pytest.approx(capex)
    assert v("opex_usd_per_year") == pytest.approx(opex)
    assert v("tco_usd") == pytest.approx(capex + opex * pv)
    annual = capex / pv + opex
    tokens_out = 10 * 200 * 8760 * 3600
    prefill_share = 256 / 200 * prefill / tpot
    assert v("usd_per_million_output_tokens") == pytest.approx(annual * (1 - prefill_share)
                                                               / tokens_out * 1e6)
    # No cloud offer carries this GPU: renting is the GPUs at the GPU's hourly price.
    assert v("cloud_instances") == 0
    assert v("cloud_usd_per_year") == pytest.approx(2 * 2.0 * 8760)
    assert v("meets_targets") is True
    # The choice is the cheapest candidate meeting every target: TP 1 here.
    assert sized.choice is row


def test_an_engine_that_runs_prefill_apart_pays_a_pass_per_step(tmp_path) -> None:
    """SGLang (enable_mixed_chunk off) runs prompts as passes of their own: each pays the fixed
    step time, a full weight read and, launched eagerly (no CUDA graph for prefill), the host's
    launch of every kernel, at most one pass per decode step."""
    models, gpus, servers, workloads, _ = world(tmp_path)
    for engine, mixes in (("none", True), ("sglang", False)):
        [sized] = size_all(workloads, models, gpus, servers, {**ASSUMPTIONS, "engine": engine})
        v = next(r for r in sized.rows if r.candidate.tp == 1).value
        prefill = (2 * 1e9 * 1000 + 2 * 8 * 128 * 10 * 1000**2 / 2) / (1e15 * 0.5)
        # 10 layers × (6 attention + 4 FFN kernels) × 41 µs = 4.1 ms of launches, SGLang only
        launch = 0 if mixes else 10 * (6 + 4) * 41e-6
        assert v("prefill_launch_seconds") == pytest.approx(launch)
        pass_fixed = 10 * (6 + 4) * 3e-6 + 2e9 / (2e12 * 0.8) + launch  # 0.3 + 1.25 (+ 4.1) ms
        assert v("prefill_pass_fixed_seconds") == pytest.approx(pass_fixed)
        started = v("serving_batch") / 200
        assert started > 0.9  # about one prompt a step: at most one pass
        expected = started * prefill + (0 if mixes else min(started, 1) * pass_fixed)
        assert v("prefill_per_step_seconds") == pytest.approx(expected)
        assert v("itl_seconds") <= 0.02  # the batch bound keeps the ITL target


def test_prefill_as_a_pass_of_its_own_worked_by_hand(tmp_path) -> None:
    """SGLang's default: a prompt runs as a pass of its own that stalls every running sequence:
    the gap it falls in is a decode step + the pass (its fixed cost, a read of the weights, the
    prompt's FLOPs), and the first token comes at the end of that pass. At p99, 10 requests/s
    on one replica."""
    models, gpus, servers, workloads, _ = world(tmp_path, workload={"latency_percentile": 99})
    # A fast host (4 µs a launch) keeps the worked example on one replica.
    [sized] = size_all(workloads, models, gpus, servers,
                       {**ASSUMPTIONS, "engine": "sglang", "eager_kernel_us": 4.0})
    v = next(r for r in sized.rows if r.candidate.tp == 1).value
    assert v("latency_percentile_used") == 0.99
    bw, flops = 2e12 * 0.8, 1e15 * 0.5
    fixed = 10 * (6 + 4) * 3e-6
    prefill = (2 * 1e9 * 1000 + 2 * 8 * 128 * 10 * 1000**2 / 2) / flops
    launch = 10 * (6 + 4) * 4e-6  # the pass runs eagerly: 100 kernels × 4 µs from the host
    pass_fixed = fixed + 2e9 / bw + launch  # 0.3 ms + 1.25 ms + 0.4 ms, TP 1
    batch, tpot = v("batch_chosen"), v("tpot_seconds")
    started = batch / 200
    decode = tpot - (min(started, 1) * pass_fixed + started * prefill)
    assert v("decode_step_no_prefill_seconds") == pytest.approx(decode)
    assert v("prefill_chunk_tokens") == 8192  # a pass takes the whole budget
    assert v("prefill_chunk_seconds") == pytest.approx(prefill + pass_fixed)
    work = prefill + pass_fixed  # a prompt takes W from decoding: its pass
    assert v("prefill_work_seconds") == pytest.approx(work)
    # Each sequence adds its attention (KV read at 1,100 tokens) and SGLang's 20 µs a step.
    per_sequence = 40960 * 1100 / bw + 20e-6
    assert v("decode_seconds_per_sequence") == pytest.approx(per_sequence)
    assert v("replicas_for_rate") == 1 and v("serving_replicas") == 1
    # Sizing: the gap holding a pass (at the chosen batch's step), the first token at its end.
    assert v("prefill_gap_seconds") == pytest.approx(decode + work)
    # SGLang's own measured first-token error (30 published runs): the pass, × that ratio.
    margin_ratio = ttft_ratio("sglang").median
    assert ttft_ratio("sglang").runs >= 10 and margin_ratio > 1
    margin = (margin_ratio - 1) * work
    assert v("ttft_margin_seconds") == pytest.approx(margin)
    assert v("ttft_no_queue_seconds") == pytest.approx(work + margin)
    service = prefill + pass_fixed * 1000 / 8192  # its work + its share of a full pass
    assert v("prefill_service_seconds") == pytest.approx(service)
    bound_step = decode  # the TTFT limit is taken at the chosen batch's step
    budget = 1.0 - 0.99 * bound_step - work - margin
    assert v("ttft_wait_budget_seconds") == pytest.approx(budget)
    # ITL: a gap holds a pass when a prompt arrived in the decode step before it (at most λ ×
    # the mean gap, which on a line a + b n is D(n̄) / (1 − λW) = a / (1 − λ(W + 199 b)), as
    # D(n̄) = n̄ / k) or in its own first gap (λW / 199): λ a / (1 − λS) + λ w ≤ 1 %, with
    # S = W + 199 b and w = W / 199, a quadratic in λ; the smaller of the two lines' roots.
    def pass_tail(a: float, b: float) -> float:
        slope, w_ = work + 199 * b, work / 199
        lead = a + w_ + 0.01 * slope
        return 2 * 0.01 / (lead + math.sqrt(lead * lead - 4 * w_ * slope * 0.01))

    tail = min(pass_tail(fixed + 2e9 / bw, per_sequence),
               pass_tail(fixed, per_sequence + 2e9 / flops))
    assert v("itl_tail_rate_limit") == pytest.approx(tail)
    # TTFT: the tail wait t with the prompts riding along (fρ per second of t and of the step
    # it arrived into), or with the 7,192 tokens its pass leaves full of them.
    share, cap = prefill / service, prefill * 7192 / 1000

    def tail_wait(rho: float) -> float:
        return math.log(rho / 0.01) * service / (2 * (1 - rho)) if rho > 0.01 else 0.0

    riding = _largest(lambda r: tail_wait(r) + share * r * (tail_wait(r) + 0.99 * bound_step)
                      <= budget)
    filled = _largest(lambda r: tail_wait(r) + cap <= budget)
    assert v("ttft_coride_cap_seconds") == pytest.approx(cap)
    for name, exact in (("ttft_load_limit_riding", riding), ("ttft_load_limit_filled", filled)):
        assert v(name) <= exact and v(name) == pytest.approx(exact, rel=1e-3), name
    # The riding prompts add the lesser of the two, so the target holds at the larger load.
    assert v("ttft_load_limit") == min(0.99, max(v("ttft_load_limit_riding"),
                                                 v("ttft_load_limit_filled")))
    # At 10 requests/s on the replica: the fixed point of n = k D(n) on the memory line.
    k = 10 * 199 / (1 - 10 * work)  # sequences decoding per second of decode step
    n = k * (fixed + 2e9 / bw) / (1 - k * per_sequence)  # 3.6 sequences
    assert v("running_sequences") == pytest.approx(n)
    step = fixed + n * per_sequence + 2e9 / bw
    assert v("decode_step_at_load_seconds") == pytest.approx(step)
    # At the load: SGLang runs every waiting prompt before the next decode step, so a gap holds
    # a pass when a prompt arrived during the decode step before it (1 − e^(−λD)), and a
    # request's first gap the passes after its own (λW of the time, one gap in 199).
    carrying = 1 - math.exp(-10 * step) + 10 * work / 199  # 1.7 % > 1 %: p99 holds a pass
    assert v("prompt_gap_share") == pytest.approx(carrying) and carrying > 0.01
    level = (0.99 - (1 - carrying)) / carrying  # its level among the gaps holding a pass: 0.42
    spread = math.sqrt(n / (1 - k * per_sequence)) / (1 - 10 * work)
    at_level = n + 1 + NormalDist().inv_cdf(level) * spread
    assert v("running_sequences_at_percentile") == pytest.approx(at_level, rel=1e-3)
    assert v("prompts_in_step_at_percentile") == 1  # 0.018 prompts a step: one at p99
    gap = fixed + at_level * per_sequence + 2e9 / bw + work
    assert v("itl_percentile_seconds") == pytest.approx(gap, rel=1e-4)
    # TTFT at p99: the decode step it arrives into, its pass, the M/D/1 tail wait (ρ = 4.2 % >
    # 1 %), and the prompts arriving meanwhile riding in its pass.
    rho = 10 * service
    assert v("prefill_load") == pytest.approx(rho) and rho > 0.01
    wait = math.log(rho / 0.01) * service / (2 * (1 - rho))
    assert v("prefill_wait_at_percentile_seconds") == pytest.approx(wait)
    ride = prefill * 7192 / 1000 * (1 - math.exp(-10 * (wait + 0.99 * step) * 1000 / 7192))
    assert v("prefill_coride_seconds") == pytest.approx(ride)
    assert v("ttft_percentile_seconds") == pytest.approx(0.99 * step + work + margin + wait
                                                         + ride)


def test_a_prompt_gap_over_the_itl_target_needs_replicas_for_the_tail(tmp_path) -> None:
    """A 6,000-token prompt's step breaks a 20 ms ITL target: at p95 at most 5 % of gaps may
    carry one. The mean gap at λ arrivals is D(n̄) / (1 − λW) (W the prompt's prefill), which
    on the step's line a + b n is a / (1 − λ(W + 199 b)) (D(n̄) = n̄ / k), so λ a / (1 − λ(W +
    199 b)) ≤ 0.05: λ ≤ 0.05 / (a + 0.05 (W + 199 b)), whatever the replicas."""
    models, gpus, servers, workloads, _ = world(tmp_path, workload={
        "prompt_tokens": 6000, "ttft_s": 5.0, "rate_rps": 100})
    [sized] = size_all(workloads, models, gpus, servers, ASSUMPTIONS)
    v = next(r for r in sized.rows if r.candidate.tp == 1).value
    bw, flops = 2e12 * 0.8, 1e15 * 0.5
    fixed = 10 * (6 + 4) * 3e-6
    prefill = (2 * 1e9 * 6000 + 2 * 8 * 128 * 10 * 6000**2 / 2) / flops  # W: 24.7 ms
    attention = 40960 * (6000 + 100) / bw  # each sequence's KV read at 6,100 tokens
    assert v("decode_seconds_per_sequence") == pytest.approx(attention)
    lines = ((fixed + 2e9 / bw, attention), (fixed, attention + 2e9 / flops))
    assert v("prefill_chunks_per_prompt") == 1
    gap = v("decode_step_no_prefill_seconds") + prefill  # at the chosen batch
    assert v("prefill_gap_seconds") == pytest.approx(gap) and gap > 0.02
    limit = min(0.05 / (a + 0.05 * (prefill + 199 * b)) for a, b in lines)  # 11.5 /s
    assert v("itl_tail_rate_limit") == pytest.approx(limit)
    assert v("replicas_for_itl_tail") == math.ceil(100 / limit) == 9
    assert v("serving_replicas") == 9 > v("replicas_for_rate") == 8
    # At 100 / 9 = 11.1 requests/s each, fewer than 5 % of the gaps carry a prompt: p95 is a
    # decode step, at the 0.95 / (1 − share) level of the sequences decoding.
    lam = 100 / 9
    k = lam * 199 / (1 - lam * prefill)
    n = max(k * a / (1 - k * b) for a, b in lines)
    mean_gap = max(a + b * n for a, b in lines) / (1 - lam * prefill)
    assert v("itl_mean_at_load_seconds") == pytest.approx(mean_gap)
    assert v("prompt_gap_share") == pytest.approx(lam * mean_gap) and lam * mean_gap <= 0.05
    spread = math.sqrt(n / (1 - k * attention)) / (1 - lam * prefill)
    at_p95 = n + 1 + NormalDist().inv_cdf(0.95 / (1 - lam * mean_gap)) * spread
    step = max(a + b * at_p95 for a, b in lines)
    assert v("itl_percentile_seconds") == pytest.approx(step, rel=1e-4)
    assert step < 0.02 and v("meets_itl") is True


def test_a_target_nothing_meets_names_the_target_and_the_miss(tmp_path) -> None:
    models, gpus, servers, workloads, _ = world(tmp_path, workload={"itl_s": 0.0002})
    [sized] = size_all(workloads, models, gpus, servers, ASSUMPTIONS)
    out = size_json([sized])["workloads"][0]
    assert out["meets_targets"] is False
    assert out["failing_target"] == "itl"
    assert out["itl_seconds"] > out["itl_target_seconds"]


def test_a_dearer_server_loses_the_choice(tmp_path) -> None:
    models, gpus, servers, workloads, paths = world(tmp_path)
    both = {"s": SERVER, "t": {**SERVER, "price_usd": 150000}}
    paths["servers"].write_text(yaml.safe_dump({"servers": both}))
    servers = load_servers(paths["servers"], gpus)
    [sized] = size_all(workloads, models, gpus, servers, ASSUMPTIONS)
    assert sized.choice is not None and sized.choice.candidate.server == "t"


@pytest.fixture(scope="module")
def shipped_sizes():  # type: ignore[no-untyped-def]
    models, gpus = load_models(), load_gpus()
    servers = load_servers(DEFAULT_SERVERS, gpus)
    workloads = load_workloads(DEFAULT_WORKLOADS, models, gpus)
    return models, gpus, servers, workloads, size_all(workloads, models, gpus, servers)


def test_every_shipped_workload_is_met_with_consistent_quantities(shipped_sizes) -> None:
    *_, results = shipped_sizes
    for r in results:
        c = r.choice
        assert c.value("meets_targets"), r.workload.id
        assert c.value("itl_seconds") <= r.workload.number("itl_s")
        assert c.value("layout_itl_percentile_seconds") <= r.workload.number("itl_s")
        assert c.value("layout_ttft_percentile_seconds") <= r.workload.number("ttft_s")
        assert c.value("capacity_requests_per_second") >= c.value("rate_requests_per_second")
        assert c.value("gpus") == c.value("replicas") * c.candidate.tp
        assert c.value("servers") * c.value("replicas_per_server") >= c.value("replicas")


def test_raising_server_prices_never_lowers_a_tco(shipped_sizes, tmp_path) -> None:
    models, gpus, servers, workloads, base = shipped_sizes
    data = yaml.safe_load(DEFAULT_SERVERS.read_text())
    for entry in data["servers"].values():
        entry["price_usd"] *= 1.3
    path = tmp_path / "servers.yaml"
    path.write_text(yaml.safe_dump(data))
    dearer = size_all(workloads, models, gpus, load_servers(path, gpus))
    for a, b in zip(base, dearer, strict=True):
        assert b.choice.value("tco_usd") >= a.choice.value("tco_usd")


def test_doubling_the_rate_about_doubles_a_large_fleet(tmp_path) -> None:
    def gpus_at(rate: float) -> int:
        result = CliRunner().invoke(cli, [
            "size", "--model", "llama-3.1-70b", "--rate", str(rate), "--prompt", "2000",
            "--output", "500", "--itl", "0.05", "--ttft", "2", "--gpu", "h100-sxm", "--json"])
        assert result.exit_code == 0, result.output
        return int(json.loads(result.output)["workloads"][0]["gpus"])

    small, large = gpus_at(200), gpus_at(400)
    assert 1.8 <= large / small <= 2.2


def test_size_agrees_with_calc(shipped_sizes) -> None:
    *_, results = shipped_sizes
    for r in results:
        c = r.choice
        if c.candidate.layout != "tp":  # other layouts: tests/test_layouts.py
            continue
        args = ["calc", "--model", r.workload.text("model"), "--gpu", c.candidate.gpu,
                "--weights", c.candidate.weights, "--kv", c.candidate.kv,
                "--tp", str(c.candidate.tp), "--batch", str(c.value("batch_chosen")),
                "--prompt", str(int(r.workload.number("prompt_tokens"))),
                "--output", str(int(r.workload.number("output_tokens"))), "--json"]
        result = CliRunner().invoke(cli, args)
        assert result.exit_code == 0, result.output
        tpot = json.loads(result.output)["tpot_seconds"]
        assert tpot * c.value("speed_ratio_applied") == pytest.approx(c.value("itl_seconds"),
                                                                      rel=1e-12)


def test_size_json_has_every_key_and_totals_sum(shipped_sizes) -> None:
    *_, results = shipped_sizes
    out = size_json(results)
    keys = {"workload", "model", "prompt_tokens", "output_tokens", "meets_targets",
            "failing_target", "choice", "replicas", "spare_replicas", "gpus", "servers", "racks",
            "it_power_w", "facility_power_w", "capex_usd", "opex_usd_per_year", "tco_usd",
            "usd_per_million_output_tokens", "usd_per_million_input_tokens",
            "cloud_usd_per_year", "itl_seconds", "ttft_seconds",
            "capacity_requests_per_second", "rate_requests_per_second", "ttft_target_seconds",
            "itl_target_seconds", "alternatives", "latency_percentile", "itl_percentile_seconds",
            "ttft_percentile_seconds", "speed_basis", "speed_ratio_applied",
            "replicas_optimistic", "replicas_pessimistic", "at_risk", "met", "cannot_meet",
            "gpus_bought", "idle_gpus", "extra_replicas", "server_capex_usd",
            "network_capex_usd", "annual_cost_usd", "cloud_reserved_3y_usd_per_year",
            "cheapest_rent_usd_per_year", "verdict", "verdict_saving_usd_per_year",
            "survives_server_loss", "order"}
    for w in out["workloads"]:
        assert keys <= set(w)
        order = w["order"]
        assert order["extended_price_usd"] == order["quantity"] * order["unit_price_usd"] == \
            pytest.approx(w["server_capex_usd"])
        assert w["gpus_bought"] == w["gpus"] + w["idle_gpus"] + w["extra_replicas"] * \
            w["choice"]["tp"]
        assert set(w["choice"]) == {"gpu", "server", "weights", "kv", "tp", "layout",
                                   "batch_per_replica"}
        assert w["met"] is True and w["cannot_meet"] is None
        assert w["replicas_optimistic"] <= w["replicas"] - w["spare_replicas"] <= \
            w["replicas_pessimistic"]
    totals = out["totals"]
    assert (totals.pop("workloads_sized"), totals.pop("workloads")) == (5, 5)
    racks, alone = totals.pop("racks"), totals.pop("racks_alone")
    assert racks == math.ceil(round(sum(w["rack_share"] for w in out["workloads"]), 6))
    assert racks <= alone == sum(w["racks"] for w in out["workloads"])
    for key, total in totals.items():
        assert total == pytest.approx(sum(w[key] for w in out["workloads"]))
    fleet = out["fleet"]
    assert fleet["racks_packed"] == racks
    rents = [sum(w[k] for w in out["workloads"]) for k in (
        "cloud_usd_per_year", "cloud_reserved_usd_per_year", "cloud_reserved_3y_usd_per_year")]
    assert fleet["cheapest_rent_usd_per_year"] == pytest.approx(min(rents))
    assert (fleet["verdict"] == "buy") == (totals["annual_cost_usd"] <= min(rents))


@pytest.mark.parametrize("change,message", [
    ({"model": "no-such-model"}, "unknown model id 'no-such-model'"),
    ({"weights": ["fp9"]}, "unknown weight format 'fp9'"),
    ({"rate_rps": 0}, "must be greater than 0"),
    ({"rate_rps": -3}, "must not be negative"),
    ({"itl_s": 0}, "must be greater than 0"),
])
def test_bad_workloads_get_located_errors(tmp_path, change, message) -> None:
    _, _, _, _, paths = world(tmp_path)
    data = {"workloads": {"w": {**WORKLOAD, **change}}}
    paths["workloads"].write_text(yaml.safe_dump(data, sort_keys=False))
    result = CliRunner().invoke(cli, ["size", "--workloads", str(paths["workloads"]),
                                      "--servers", str(paths["servers"]), "--models",
                                      str(paths["models"]), "--gpus", str(paths["gpus"])])
    assert result.exit_code != 0
    assert message in str(result.exception) + result.output
    assert "workloads.yaml" in str(result.exception) + result.output


def test_a_server_of_an_unknown_gpu_and_a_rack_below_one_server(tmp_path) -> None:
    models, gpus, _, workloads, paths = world(tmp_path)
    paths["servers"].write_text(yaml.safe_dump({"servers": {"s": {**SERVER, "gpu": "h900"}}}))
    from planner.errors import CatalogError

    with pytest.raises(CatalogError, match="unknown GPU id 'h900'"):
        load_servers(paths["servers"], gpus)
    paths["servers"].write_text(yaml.safe_dump({"servers": {"s": SERVER}}))
    servers = load_servers(paths["servers"], gpus)
    with pytest.raises(CatalogError, match="more than rack_power_kw"):
        size_all(workloads, models, gpus, servers, {**ASSUMPTIONS, "rack_power_kw": 5.0})


def test_worked_example_at_tp2_with_all_reduce(tmp_path) -> None:
    """The same world's TP 2 candidate: weights and KV heads split over two GPUs, two
    all-reduces per layer, a replica of two GPUs."""
    models, gpus, servers, workloads, _ = world(tmp_path)
    [sized] = size_all(workloads, models, gpus, servers, ASSUMPTIONS)
    row = next(r for r in sized.rows if r.candidate.tp == 2)
    v = row.value
    bw, flops = 2e12 * 0.8, 1e15 * 0.5
    assert v("weight_bytes_per_gpu") == 1e9
    assert v("kv_bytes_per_token_per_gpu") == 40960 / 2  # 4 of 8 KV heads per GPU
    pool = 80e9 * 0.9 - 1e9
    assert v("max_sequences") == int(pool / (20480 * 1200))
    latency = 2 * 10 * 10e-6  # 2 all-reduces x 10 layers x 10 µs
    traffic = 2 * 10 * 2 * (2 - 1) / 2 * 1024 * 2 / 400e9  # per sequence: hidden x 2 B
    assert v("step_fixed_seconds") == pytest.approx(10 * 30e-6 + latency)
    prefill = (2 * 1e9 * 1000 + 2 * 8 * 128 * 10 * 1000**2 / 2) / (2 * flops) \
        + 2 * 10 * (10e-6 + 1000 * 1024 * 2 / 400e9)
    assert v("prefill_compute_seconds") == pytest.approx(prefill)
    # Inside decode steps a prompt's chunk pays only the all-reduce traffic: the step it rides
    # in already pays the latency.
    interleaved = prefill - latency
    assert v("prefill_interleaved_seconds") == pytest.approx(interleaved)
    kv_read = 20480 * 1100
    per_seq = traffic + interleaved / 200 + kv_read / bw
    b_mem = (0.02 - 10 * 30e-6 - latency - 1e9 / bw) / per_seq
    assert v("batch_memory_all_experts") == pytest.approx(b_mem)
    b = min(int(b_mem), 256)
    assert v("batch_chosen") == b
    tpot = 10 * 30e-6 + max(1e9 / bw, b * 2e9 / 2 / flops) + b * kv_read / bw \
        + 2 * 10 * (10e-6 + b * 1024 * 2 / 400e9) + b / 200 * interleaved
    assert v("itl_seconds") == pytest.approx(tpot)
    assert v("gpus") == v("replicas") * 2
    assert v("replicas_per_server") == 4


def test_worked_example_tokens_per_day_fills_servers_and_racks(tmp_path) -> None:
    """A workload given as tokens per day with a peak factor, large enough to need several
    servers and racks: the rack holds as many 10 kW servers as 40.8 kW allows (4)."""
    models, gpus, servers, workloads, _ = world(tmp_path, workload={
        "rate_rps": None, "tokens_per_day": 2_000_000_000_000, "peak_to_average": 2.0,
        "spare_replicas": 0})
    [sized] = size_all(workloads, models, gpus, servers, ASSUMPTIONS)
    c = sized.choice
    v = c.value
    rate = 2e12 / 86400 / 1200 * 2.0
    assert v("rate_requests_per_second") == pytest.approx(rate)
    assert v("average_requests_per_second") == pytest.approx(rate / 2)
    per_replica = v("requests_per_second_per_replica")
    replicas = max(math.ceil(rate / (per_replica * 0.8)), v("replicas_for_ttft"),
                   v("replicas_for_itl_tail"), 1)
    assert v("replicas") == replicas
    per_server = 8 // c.candidate.tp
    assert v("servers") == math.ceil(replicas / per_server)
    assert v("racks") == math.ceil(v("servers") / 4)
    assert v("racks") >= 2
    tokens_out = rate / 2 * 200 * 8760 * 3600
    share = v("prefill_time_share")
    assert v("usd_per_million_output_tokens") == pytest.approx(
        v("annual_cost_usd") * (1 - share) / tokens_out * 1e6)


def test_size_quotes_the_measured_speed_of_each_chosen_gpu() -> None:
    from planner.evidence.measured import load_measured

    data = load_measured()
    assert data is not None
    result = CliRunner().invoke(cli, ["size", "--json"])
    assert result.exit_code == 0, result.output
    for w in json.loads(result.output)["workloads"]:
        assert w["measured_speed"]["gpu"] == data["steady_state_by_gpu"].get(w["choice"]["gpu"])
        assert w["measured_speed"]["engine"] == data["steady_state_by_engine"]["vllm"]
    text = CliRunner().invoke(cli, ["size"]).output
    workloads = json.loads(result.output)["workloads"]
    # one speed line per workload, keyed by its GPU, engine and model class
    assert text.count("  Measured: ") == len(workloads)
    # the first token too: the figure each plan's margin applies, with its basis
    for w in workloads:
        assert f"  Measured first token: {w['ttft_ratio_basis']}; " in text
    assert text.count("  Measured first token: ") == len(workloads)
    assert all(w["measured_ttft"] == data["ttft_no_queue"] for w in workloads)


# -- latency that holds: percentile targets, the measured error as margin, no purchase for a miss

IMPOSSIBLE = {
    "itl": (["--model", "llama-3.1-70b", "--rate", "1", "--prompt", "1000", "--output", "100",
             "--itl", "0.001"], "ITL at batch 1 is "),
    "context": (["--model", "llama-3.1-70b", "--rate", "1", "--prompt", "10000000", "--output",
                 "300"], "prompt + output 10,000,300 tokens > the model's context limit "
                         "131,072 tokens"),
    "memory": (["--model", "kimi-k2", "--rate", "1", "--prompt", "1000", "--output", "100",
                "--weights", "bf16", "--gpu", "h100-sxm"], "weights need "),
    "ttft": (["--model", "llama-3.1-8b", "--rate", "1", "--prompt", "100000", "--output", "100",
              "--ttft", "0.05"], "TTFT with no queue is "),
}


@pytest.mark.parametrize("case", list(IMPOSSIBLE))
def test_a_workload_nothing_meets_is_named_and_not_bought(case: str) -> None:
    args, reason = IMPOSSIBLE[case]
    text = CliRunner().invoke(cli, ["size", *args])
    assert text.exit_code == 3, text.output
    assert f"CANNOT BE MET: {reason}" in text.output
    assert "Buy:" not in text.output and "0 of 1 workloads sized" in text.output
    assert "Total: 0 GPUs bought in 0 servers" in text.output
    result = CliRunner().invoke(cli, ["size", *args, "--json"])
    assert result.exit_code == 3
    out = json.loads(result.output)
    [w] = out["workloads"]
    assert w["met"] is False and reason in w["cannot_meet"]
    assert out["totals"]["gpus"] == 0 and out["totals"]["workloads_sized"] == 0


def test_the_binding_numbers_of_a_memory_miss_are_the_candidates_own() -> None:
    result = CliRunner().invoke(cli, ["size", *IMPOSSIBLE["memory"][0], "--json"])
    [w] = json.loads(result.output)["workloads"]
    # Kimi K2's 1.03 T parameters in BF16 over 8 GPUs: 2.06e12 B / 8 = 238.2 GiB per GPU.
    assert "weights need 236.8 GiB per GPU at TP 8 in bf16" in w["cannot_meet"]
    assert "the NVIDIA H100 SXM 80GB leaves 65.7 GiB for weights and KV cache" in w["cannot_meet"]


def test_each_gpu_carries_its_own_first_token_error_where_measured() -> None:
    """With SGLang, an MoE model's MI300X row carries the MI300X SGLang first tokens at low load
    (29 DeepSeek-R1 runs, ×1.98 in catalogs/measured-accuracy.yaml), its H100 row SGLang's
    no-queue figure (1.43), and a dense model's MI300X row that figure too (the cell is MoE
    runs'): the margin on a first token is the excess over the speed error, never below 1."""
    models, gpus = load_models(), load_gpus()
    servers = load_servers(DEFAULT_SERVERS, gpus)
    workloads = load_workloads(DEFAULT_WORKLOADS, models, gpus)
    moe, dense = size_all(workloads, models, gpus, servers, {"engine": "sglang"},
                          ["reasoning-moe-gpt-oss-120b", "chat-assistant-70b"])
    rows = {r.candidate.gpu: r for r in moe.rows}
    mi300x, h100 = rows["mi300x"], rows["h100-sxm"]
    assert (mi300x.ttft.median, mi300x.ttft.runs) == (1.98, 29)
    assert "MoE models at concurrency 4 or below on the AMD Instinct MI300X" in mi300x.ttft.basis
    assert h100.ttft == ttft_ratio("sglang") and h100.ttft.median == 1.43
    dense_mi300x = next(r for r in dense.rows if r.candidate.gpu == "mi300x")
    assert dense_mi300x.ttft == ttft_ratio("sglang")
    for row in (mi300x, h100, dense_mi300x):
        expected = max(1.0, row.ttft.median / row.number("speed_ratio_applied"))
        assert row.number("ttft_margin_ratio") == pytest.approx(expected)
    [out, _] = size_json([moe, dense])["workloads"]  # and --json says what the plan applied
    assert out["ttft_ratio_basis"] == moe.choice.ttft.basis
    assert out["ttft_margin_ratio"] == pytest.approx(moe.choice.number("ttft_margin_ratio"))


@pytest.mark.parametrize("engine", ["vllm", "sglang", "trtllm"])
def test_every_shipped_plan_holds_its_percentile_targets(engine: str) -> None:
    models, gpus = load_models(), load_gpus()
    servers = load_servers(DEFAULT_SERVERS, gpus)
    workloads = load_workloads(DEFAULT_WORKLOADS, models, gpus)
    for r in size_all(workloads, models, gpus, servers, {"engine": engine}):
        if not r.met:
            assert r.cannot_meet, r.workload.id
            continue
        c = r.choice
        wid = r.workload.id
        assert c.value("layout_itl_percentile_seconds") <= r.workload.number("itl_s"), wid
        assert c.value("layout_ttft_percentile_seconds") <= r.workload.number("ttft_s"), wid


def test_a_higher_percentile_never_needs_fewer_gpus(shipped_sizes) -> None:
    models, gpus, servers, workloads, base = shipped_sizes
    data = yaml.safe_load(DEFAULT_WORKLOADS.read_text())
    for entry in data["workloads"].values():
        entry["latency_percentile"] = 99
    import tempfile
    from pathlib import Path

    path = Path(tempfile.mkdtemp()) / "workloads.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    strict = size_all(load_workloads(path, models, gpus), models, gpus, servers)
    for a, b in zip(base, strict, strict=True):
        assert a.workload.id == b.workload.id
        for x, y in zip(a.rows, b.rows, strict=True):  # the same candidate at p95 and p99
            assert y.value("gpus") >= x.value("gpus"), (a.workload.id, x.candidate)
        if a.met and b.met:
            assert b.choice.value("tco_usd") >= a.choice.value("tco_usd")


def test_the_model_basis_never_needs_more_gpus_where_the_model_is_optimistic(
        shipped_sizes) -> None:
    models, gpus, servers, workloads, measured = shipped_sizes
    model = size_all(workloads, models, gpus, servers, {"speed_basis": "model"})
    compared = 0
    for a, b in zip(measured, model, strict=True):
        for x, y in zip(a.rows, b.rows, strict=True):
            # a candidate that misses under the margins buys nothing to compare
            if x.value("speed_ratio_applied") > 1 and x.value("meets_targets") is True:
                compared += 1
                assert y.value("speed_ratio_applied") == 1
                assert y.value("gpus") <= x.value("gpus"), (a.workload.id, x.candidate)
    assert compared > 10  # the MI300X and H200 candidates carry measured ratios above 1


def test_the_first_token_carries_its_measured_error_beyond_the_speed_error(tmp_path) -> None:
    """A first token measured 1.5× the model's with a speed error of 1.2 already applied waits
    1.5 / 1.2 = 1.25× its no-queue time: 0.25× more as a delay that shrinks the wait budget
    by exactly that; a first-token error within the speed error adds nothing, nor does the
    model basis."""
    from planner.evidence.measured import SpeedRatio, TtftRatio
    from planner.plan.sizing import FleetEnv

    models, gpus, servers, workloads, _ = world(tmp_path)
    [sized] = size_all(workloads, models, gpus, servers, ASSUMPTIONS)
    base = next(r for r in sized.rows if r.candidate.tp == 1)
    speed = SpeedRatio(1.2, 1.2, 1.2, 5, "by hand")

    def row(ttft: float, **assumptions: str) -> FleetEnv:
        return FleetEnv(base.workload, base.server, base.candidate, base.model, base.gpu,
                        {**base.assumptions, **assumptions}, speed,
                        ttft=TtftRatio(ttft, 30, "by hand"))

    within, beyond = row(1.1), row(1.5)
    assert within.value("ttft_margin_ratio") == 1  # 1.1 < 1.2: the speed error covers it
    assert within.value("ttft_margin_seconds") == 0
    model_time = within.number("ttft_no_queue_seconds")  # the model's, × the speed error
    assert beyond.value("ttft_margin_ratio") == pytest.approx(1.25)
    assert beyond.number("ttft_margin_seconds") == pytest.approx(0.25 * model_time)
    assert beyond.number("ttft_no_queue_seconds") == pytest.approx(1.25 * model_time)
    assert (within.number("ttft_wait_budget_seconds") - beyond.number("ttft_wait_budget_seconds")
            == pytest.approx(0.25 * model_time))
    # τ, the GPU time a prompt's prefill occupies, does not carry the delay
    assert beyond.number("prefill_service_seconds") == within.number("prefill_service_seconds")
    plain = row(1.5, speed_basis="model")
    assert plain.value("ttft_margin_ratio") == 1 and plain.value("ttft_margin_seconds") == 0


def test_the_ttft_tail_is_the_md1_exponential_tail_past_the_percentile(tmp_path) -> None:
    """Long prompts at p95: the prefill queue is busy more than 5 % of the time, so the 95th
    percentile wait is ln(ρ / 0.05) τ / (2(1 − ρ)), with the prompts arriving meanwhile riding
    in the last step; the load limit, taken at the chosen batch's decode step, never overstates
    the load and keeps the target."""
    models, gpus, servers, workloads, _ = world(tmp_path, workload={
        "prompt_tokens": 30000, "output_tokens": 50, "ttft_s": 2.0, "itl_s": 0.5,
        "rate_rps": 20, "spare_replicas": 0})
    [sized] = size_all(workloads, models, gpus, servers, ASSUMPTIONS)
    v = next(r for r in sized.rows if r.candidate.tp == 1).value
    bw, flops = 2e12 * 0.8, 1e15 * 0.5
    fixed = 10 * (6 + 4) * 3e-6
    prefill = (2 * 1e9 * 30000 + 2 * 8 * 128 * 10 * 30000**2 / 2) / flops  # 138 ms
    attention = 40960 * (30000 + 25) / bw
    budget_tokens = 8192 - v("batch_chosen")  # 8,136 a step: 4 steps, the last 5,592 tokens
    assert v("prefill_chunk_tokens") == budget_tokens and v("prefill_chunks_per_prompt") == 4
    # Sizing: the TTFT limit at the chosen batch's step (56 sequences: 44.6 ms).
    decode = v("decode_step_no_prefill_seconds")
    service = prefill + decode * 30000 / budget_tokens
    assert v("prefill_service_seconds") == pytest.approx(service)
    margin = (ttft_ratio("none").median - 1) * (4 * decode + prefill)  # the measured margin
    assert margin > 0 and v("ttft_margin_seconds") == pytest.approx(margin)
    budget = 2.0 - 0.95 * decode - (4 * decode + prefill) - margin
    assert v("ttft_wait_budget_seconds") == pytest.approx(budget)
    share = prefill / service
    ahead = 0.95 * decode + 3 * (decode + prefill * budget_tokens / 30000)
    cap = prefill * (4 * budget_tokens - 30000) / 30000  # the 2,544 tokens its last step leaves

    def tail_wait(rho: float) -> float:
        return math.log(rho / 0.05) * service / (2 * (1 - rho)) if rho > 0.05 else 0.0

    riding = _largest(lambda r: tail_wait(r) + share * r * (tail_wait(r) + ahead) <= budget)
    filled = _largest(lambda r: tail_wait(r) + cap <= budget)
    limit = v("ttft_load_limit")
    assert limit <= max(riding, filled) and limit == pytest.approx(max(riding, filled),
                                                                   rel=1e-3)
    replicas = v("serving_replicas")
    assert v("replicas_for_ttft") == math.ceil(20 * service / limit) == replicas == 9
    assert replicas > v("replicas_for_rate") == 5  # TTFT binds
    # At 20 / 9 requests/s each: under one sequence decodes on average.
    lam = 20 / replicas
    k = lam * 49 / (1 - lam * prefill)
    n = k * (fixed + 2e9 / bw) / (1 - k * attention)
    assert v("running_sequences") == pytest.approx(n)
    step = fixed + n * attention + 2e9 / bw
    assert v("decode_step_at_load_seconds") == pytest.approx(step)
    no_queue = 4 * step + prefill + margin  # four steps, each carrying a chunk; the margin
    assert v("ttft_no_queue_at_load_seconds") == pytest.approx(no_queue)
    tau = prefill + step * 30000 / budget_tokens  # back to back at the budget
    rho = lam * tau
    assert v("prefill_load") == pytest.approx(rho) and 0.05 < rho < 1
    wait = math.log(rho / 0.05) * tau / (2 * (1 - rho))
    assert v("prefill_wait_at_percentile_seconds") == pytest.approx(wait)
    left = 4 * budget_tokens - 30000
    behind = wait + 0.95 * step + 3 * (step + prefill * budget_tokens / 30000)
    ride = prefill * left / 30000 * (1 - math.exp(-lam * behind))  # left < a prompt
    assert v("prefill_coride_seconds") == pytest.approx(ride)
    expected = 0.95 * step + no_queue + wait + ride
    assert v("ttft_percentile_seconds") == pytest.approx(expected)
    assert expected <= 2.0 and v("meets_ttft") is True


# -- what finance buys: the order, failure domains, buy or rent on one basis

def offer_world(tmp_path, on_demand: float, reserved_1y: float, reserved_3y: float,
                **kwargs):  # type: ignore[no-untyped-def]
    models, gpus, servers, workloads, paths = world(tmp_path, **kwargs)
    paths["clouds"] = tmp_path / "clouds.yaml"
    paths["clouds"].write_text(yaml.safe_dump({"clouds": {"cloud-g": {
        "provider": "example", "instance": "8g", "gpu": "g", "gpus_per_instance": 8,
        "on_demand_usd_per_hour": on_demand, "reserved_1y_usd_per_hour": reserved_1y,
        "reserved_3y_usd_per_hour": reserved_3y, "price_date": "2026-06",
        "source": "worked example"}}}, sort_keys=False))
    from planner.inputs.catalog import load_clouds

    clouds = load_clouds(paths["clouds"], gpus)
    return models, gpus, servers, workloads, clouds


def test_buy_or_rent_worked_by_hand(tmp_path) -> None:
    """The worked example's 2 replicas of TP 1 fit one 8-GPU instance: rent is that instance
    for a year at each term; owning is the capex as an annuity at 8 % over 5 years + opex."""
    models, gpus, servers, workloads, clouds = offer_world(tmp_path, 20.0, 14.0, 9.0)
    [sized] = size_all(workloads, models, gpus, servers, ASSUMPTIONS, clouds=clouds)
    v = next(r for r in sized.rows if r.candidate.tp == 1).value
    assert (v("cloud_replicas_per_instance"), v("cloud_instances")) == (8, 1)
    assert v("cloud_usd_per_year") == pytest.approx(20.0 * 8760)  # 175,200
    assert v("cloud_reserved_usd_per_year") == pytest.approx(14.0 * 8760)  # 122,640
    assert v("cloud_reserved_3y_usd_per_year") == pytest.approx(9.0 * 8760)  # 78,840
    capex = 200000 + 1600
    opex = 10 * 0.75 * 1.25 * 8760 * 0.08 + 10 * 180 * 12 + 8 * 4500  # 64,170
    pv = (1 - 1.08**-5) / 0.08  # 3.9927
    owned = capex / pv + opex  # 50,492 + 64,170 = 114,662 a year
    assert v("annual_cost_usd") == pytest.approx(owned)
    assert owned == pytest.approx(114662, abs=1)
    assert v("break_even_utilisation") == pytest.approx(owned / 175200)  # 65 %
    assert v("verdict") == "rent 3-year reserved"
    assert v("verdict_saving_usd_per_year") == pytest.approx(owned - 78840)  # 35,821
    # The same offer at twice the price: owning wins by the difference.
    models, gpus, servers, workloads, clouds = offer_world(tmp_path, 40.0, 28.0, 18.0)
    [sized] = size_all(workloads, models, gpus, servers, ASSUMPTIONS, clouds=clouds)
    v = next(r for r in sized.rows if r.candidate.tp == 1).value
    assert v("verdict") == "buy"
    assert v("verdict_saving_usd_per_year") == pytest.approx(18.0 * 8760 - owned)


def test_a_tp_group_larger_than_the_instance_cannot_be_rented_there(tmp_path) -> None:
    models, gpus, servers, workloads, clouds = offer_world(tmp_path, 20.0, 14.0, 9.0)
    [sized] = size_all(workloads, models, gpus, servers, ASSUMPTIONS, clouds=clouds)
    for row in sized.rows:  # an 8-GPU instance holds TP 8 once, TP 4 twice, TP 2 four times
        per = 8 // row.candidate.tp
        assert row.value("cloud_replicas_per_instance") == per
        assert row.value("cloud_instances") == math.ceil(row.value("replicas") / per)


def test_servers_hold_whole_tp_groups_by_hand(tmp_path) -> None:
    """A 6-GPU server holds one TP-4 group (2 GPUs idle), so 3 replicas (1 serving, 2 spare)
    need 3 servers, not ⌈12 GPUs / 6⌉ = 2, under either redundancy; under n+1 a single serving
    replica with no spare still buys a second server."""
    server = {"gpus_per_server": 6}
    for redundancy in ("none", "n+1"):
        models, gpus, servers, workloads, _ = world(
            tmp_path, workload={"rate_rps": 1, "spare_replicas": 2}, server=server)
        [sized] = size_all(workloads, models, gpus, servers,
                           {**ASSUMPTIONS, "redundancy": redundancy})
        row = next(r for r in sized.rows if r.candidate.tp == 4)
        assert (row.value("serving_replicas"), row.value("replicas")) == (1, 3), redundancy
        assert row.value("replicas_per_server") == 1
        assert row.value("servers") == 3, redundancy  # one TP-4 group per 6-GPU server
        assert row.value("gpus_bought") == 18
        assert row.value("idle_gpus") == 6
    models, gpus, servers, workloads, _ = world(
        tmp_path, workload={"rate_rps": 1, "spare_replicas": 0}, server=server)
    [sized] = size_all(workloads, models, gpus, servers, {**ASSUMPTIONS, "redundancy": "n+1"})
    row = next(r for r in sized.rows if r.candidate.tp == 4)
    assert row.value("servers") == row.value("serving_replicas") + 1 == 2
    assert row.value("survives_server_loss") is True


def test_finance_invariants_over_every_shipped_workload(shipped_sizes) -> None:
    *_, results = shipped_sizes
    for r in results:
        for env in r.rows:
            v = env.value
            per_server = int(env.server.number("gpus_per_server")) // env.candidate.tp
            assert v("replicas_per_server") == per_server
            assert v("servers") >= math.ceil(v("replicas") / per_server)
            assert v("gpus_bought") == v("servers") * env.server.number("gpus_per_server")
            assert v("gpus_bought") == (v("replicas") + v("extra_replicas")) \
                * env.candidate.tp + v("idle_gpus")
            # n+1 (the default): the peak is carried with the largest (any) server removed
            assert (v("servers") - 1) * per_server >= v("layout_serving_replicas")
            assert v("survives_server_loss") is True
            cheapest = min(v("cloud_usd_per_year"), v("cloud_reserved_usd_per_year"),
                           v("cloud_reserved_3y_usd_per_year"))
            assert (v("verdict") == "buy") == (v("annual_cost_usd") <= cheapest)
            if env.server.text("vendor") == "amd":
                assert v("support_usd_per_year") == 0
            assert v("capex_usd") == pytest.approx(v("server_capex_usd")
                                                   + v("network_capex_usd"))


def test_raising_a_cloud_price_never_lowers_a_rent(shipped_sizes, tmp_path) -> None:
    from planner.inputs.catalog import DEFAULT_CLOUDS, load_clouds

    models, gpus, servers, workloads, base = shipped_sizes
    data = yaml.safe_load(DEFAULT_CLOUDS.read_text())
    for entry in data["clouds"].values():
        for key in ("on_demand_usd_per_hour", "reserved_1y_usd_per_hour",
                    "reserved_3y_usd_per_hour"):
            entry[key] *= 1.2
    path = tmp_path / "clouds.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    dearer = size_all(workloads, models, gpus, servers,
                      clouds=load_clouds(path, gpus, strict=False))
    for a, b in zip(base, dearer, strict=True):
        for x, y in zip(a.rows, b.rows, strict=True):
            for key in ("cloud_usd_per_year", "cloud_reserved_usd_per_year",
                        "cloud_reserved_3y_usd_per_year"):
                assert y.value(key) >= x.value(key)
            assert y.value("annual_cost_usd") == pytest.approx(x.value("annual_cost_usd"))


def test_each_alternative_is_the_cheapest_on_its_server(shipped_sizes) -> None:
    """alternatives() gives, for every server type but the chosen one, the lowest-TCO candidate
    on that server that meets every target (where one does; else the closest miss), found here
    by a plain search over the rows."""
    *_, results = shipped_sizes
    checked = 0
    for r in results:
        chosen = r.choice.candidate.server if r.choice else None
        servers = {env.candidate.server for env in r.rows} - {chosen}
        alternatives = {env.candidate.server: env for env in r.alternatives()}
        assert set(alternatives) == servers, r.workload.id
        for server, alt in alternatives.items():
            on_server = [env for env in r.rows if env.candidate.server == server]
            meeting = [env for env in on_server if env.value("meets_targets") is True]
            if not meeting:
                assert alt.value("meets_targets") is not True
                continue
            cheapest = min(env.number("tco_usd") for env in meeting)
            assert alt.value("meets_targets") is True, (r.workload.id, server)
            assert alt.number("tco_usd") == cheapest, (r.workload.id, server)
            checked += 1
    assert checked >= 10  # enough servers with a candidate meeting the targets to mean something


def test_present_value_factor_discounts_by_hand(tmp_path) -> None:
    """$1 a year for 5 years at 8 % is worth 1/1.08 + 1/1.08² + ... + 1/1.08⁵ = 3.9927 today
    (discounting), not the 5.8666 that compounding would give; at 0 % it is 5; TCO is capex +
    opex × that factor, and the equivalent annual cost capex ÷ factor + opex."""
    models, gpus, servers, workloads, _ = world(tmp_path)
    by_hand = 1 / 1.08 + 1 / 1.08**2 + 1 / 1.08**3 + 1 / 1.08**4 + 1 / 1.08**5
    assert by_hand == pytest.approx(3.99271, abs=1e-5)
    for rate, factor in ((0.08, by_hand), (0.0, 5.0), (0.2, 2.99061)):
        [sized] = size_all(workloads, models, gpus, servers, {**ASSUMPTIONS, "discount_rate": rate})
        row = sized.rows[0]
        assert row.value("present_value_factor") == pytest.approx(factor, abs=1e-5), rate
        capex, opex = row.number("capex_usd"), row.number("opex_usd_per_year")
        assert row.value("tco_usd") == pytest.approx(capex + opex * factor)
        assert row.value("annual_cost_usd") == pytest.approx(capex / factor + opex)


@pytest.mark.parametrize("settings,server,expect", [
    ({}, {"power_kw": 50}, "one server draws 50"),  # more than a 40.8 kW rack
    ({}, {"rack_units": 48}, "taller than rack_units_per_rack"),
    ({"rack_power_kw": 8}, {}, "more than rack_power_kw = 8"),
    ({}, {"gpus_per_server": 1, "scale_up_gpus": None}, None),  # TP 1 fits: sizable
])
def test_a_check_without_sizing_refuses_what_sizing_refuses(tmp_path, settings, server,
                                                            expect) -> None:
    """`planner import-workbook` checks what it writes builds without sizing every workload
    again (sizing.check_sizable): the same refusal, at the same place, as size_all's."""
    from planner.errors import CatalogError
    from planner.plan.sizing import check_sizable

    server = {k: v for k, v in server.items() if v is not None}
    models, gpus, servers, workloads, _ = world(tmp_path, server=server)
    assumptions = {**ASSUMPTIONS, **settings}
    if expect is None:
        check_sizable(workloads, models, servers, assumptions)
        assert size_all(workloads, models, gpus, servers, assumptions)[0].rows
        return
    with pytest.raises(CatalogError) as sized:
        size_all(workloads, models, gpus, servers, assumptions)
    with pytest.raises(CatalogError) as checked:
        check_sizable(workloads, models, servers, assumptions)
    assert expect in str(checked.value) and str(checked.value) == str(sized.value)


def test_a_workload_no_server_can_carry_is_refused_alike(tmp_path) -> None:
    from planner.errors import CatalogError
    from planner.plan.sizing import check_sizable

    models, _, _, _, paths = world(tmp_path)  # then a GPU "h" that no server carries
    paths["gpus"].write_text(yaml.safe_dump({"gpus": {"g": GPU, "h": GPU}}))
    paths["workloads"].write_text(yaml.safe_dump({"workloads": {"w": {**WORKLOAD,
                                                                      "gpus": ["h"]}}}))
    gpus = load_gpus(paths["gpus"])
    servers = load_servers(paths["servers"], gpus)
    workloads = load_workloads(paths["workloads"], models, gpus)
    with pytest.raises(CatalogError) as sized:
        size_all(workloads, models, gpus, servers, ASSUMPTIONS)
    with pytest.raises(CatalogError) as checked:
        check_sizable(workloads, models, servers, ASSUMPTIONS)
    assert "no server in the server catalog carries an allowed GPU" in str(checked.value)
    assert str(checked.value) == str(sized.value)
