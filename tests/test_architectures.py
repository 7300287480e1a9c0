"""One named test per recurring bug of the field (STYLE.md), on the shipped catalogs."""

from __future__ import annotations

import pytest

from planner.plan.calc import model_quantities
from tests.conftest import catalogs_for, run

GiB = 2**30


def test_kv_uses_key_value_heads_not_query_heads(shipped) -> None:
    # Llama 3.1 70B: 64 query heads, 8 KV heads; sizing with query heads would be 8x too big.
    env = run(shipped, model="llama-3.1-70b", gpu="h200-sxm", tp=8)
    assert env.value("kv_bytes_per_token") == 2 * 80 * 8 * 128 * 2


def test_mqa_single_kv_head_is_replicated_on_every_rank(tmp_path) -> None:
    models, gpus = catalogs_for(
        tmp_path,
        {"num_hidden_layers": 10, "hidden_size": 1024, "num_attention_heads": 8,
         "num_key_value_heads": 1, "params": 1e9},
        {"memory_gb": 80, "bandwidth_tb_s": 2, "bf16_tflops": 300})
    from planner.inputs.scenario import Scenario
    from planner.plan.calc import evaluate

    env = evaluate(Scenario("m", "g", tp=4), models, gpus)
    assert env.value("kv_bytes_per_token") == 2 * 10 * 1 * 128 * 2
    assert env.value("kv_bytes_per_token_per_gpu") == env.value("kv_bytes_per_token")


def test_mha_without_kv_field_uses_attention_heads(tmp_path) -> None:
    models, gpus = catalogs_for(
        tmp_path,
        {"num_hidden_layers": 12, "hidden_size": 768, "num_attention_heads": 12, "params": 1.2e8},
        {"memory_gb": 24, "bandwidth_tb_s": 1, "bf16_tflops": 100})
    q = model_quantities(models.entries["m"])
    assert q["kv_heads_effective"] == 12
    assert q["kv_elements_per_token"] == 2 * 12 * 12 * 64


@pytest.mark.parametrize("model,head_dim", [("qwen3-32b", 128), ("mistral-small-3-24b", 128)])
def test_head_dim_field_wins_over_hidden_over_heads(shipped, model: str, head_dim: int) -> None:
    q = model_quantities(shipped[0].entries[model])
    assert q["head_dim_effective"] == head_dim  # hidden/heads would be 80 and 160


def test_head_dim_derived_when_absent(shipped) -> None:
    assert model_quantities(shipped[0].entries["llama-3.1-8b"])["head_dim_effective"] == 128


@pytest.mark.parametrize("model", ["deepseek-v3", "kimi-k2"])
def test_mla_caches_one_latent_not_k_and_v(shipped, model: str) -> None:
    env = run(shipped, model=model, gpu="h200-sxm", tp=8, weights="fp8")
    assert env.value("kv_bytes_per_token") == 61 * (512 + 64) * 2  # 70,272 B, no x2 for K/V
    # the latent is replicated on every tensor-parallel rank
    assert env.value("kv_bytes_per_token_per_gpu") == env.value("kv_bytes_per_token")


def test_tp_splits_weights_and_kv_heads(shipped) -> None:
    one = run(shipped, model="llama-3.1-70b", gpu="h200-sxm", tp=1)
    eight = run(shipped, model="llama-3.1-70b", gpu="h200-sxm", tp=8)
    assert eight.value("weight_bytes_per_gpu") == pytest.approx(one.value("weight_bytes") / 8)
    assert eight.value("kv_bytes_per_token_per_gpu") == one.value("kv_bytes_per_token") / 8


def test_tp_beyond_kv_heads_replicates_heads(shipped) -> None:
    # Qwen2.5-7B has 4 KV heads: at TP 4 one head per rank, at TP 28 ... not allowed (28 heads
    # split in 4s); use Qwen3-235B (4 KV heads, 64 query heads) at TP 8: each rank keeps 1 head.
    env = run(shipped, model="qwen3-235b-a22b", gpu="h200-sxm", tp=8, weights="fp8")
    per_head = 94 * 2 * 128 * 2
    assert env.value("kv_bytes_per_token_per_gpu") == per_head  # 1 of 4 heads, not 0.5


@pytest.mark.parametrize("model,full,window,capped", [
    ("gemma-2-9b", 21, 21, 4096), ("gemma-3-27b", 10, 52, 1024), ("gpt-oss-120b", 18, 18, 128)])
def test_sliding_window_layers_hold_at_most_the_window(shipped, model, full, window, capped):
    t = 32768
    env = run(shipped, {"engine": "none"}, model=model, gpu="h200-sxm", tp=1, context=t)
    per_layer = model_quantities(shipped[0].entries[model])["kv_elements_per_token_per_layer"]
    assert env.value("kv_bytes_per_sequence") == 2 * per_layer * (full * t + window * capped)
    assert env.value("kv_bytes_per_sequence") < env.value("kv_bytes_per_token") * t


def test_chunked_attention_layers_hold_at_most_the_chunk(shipped) -> None:
    env = run(shipped, {"engine": "none"}, model="llama-4-scout", gpu="h200-sxm", tp=8,
              context=65536)
    assert env.value("attended_layer_tokens") == 12 * 65536 + 36 * 8192


def test_vllm_pages_windows_with_the_batched_tokens_and_pads_groups(shipped) -> None:
    # vLLM's hybrid KV manager keeps window - 1 + max_num_batched_tokens tokens per sliding
    # layer (8192 batched tokens on a >= 70 GiB GPU) and pads layer groups to equal size:
    # Gemma 3 27B has 10 full and 52 sliding layers -> groups of 10 -> 60 sliding layers paged.
    env = run(shipped, model="gemma-3-27b", gpu="h200-sxm", tp=1, context=32768)
    assert env.value("sliding_layers_paged") == 60
    assert env.value("attended_layer_tokens") == 10 * 32768 + 60 * (1024 - 1 + 8192)
    # The pool in tokens agrees with the sequences that fit (as vLLM reports both).
    per_seq = env.value("kv_bytes_per_sequence_per_gpu")
    pool = env.value("kv_pool_bytes_per_gpu")
    assert env.value("max_sequences") == int(pool / per_seq)
    assert env.value("kv_pool_tokens") == int(pool * 32768 / per_seq)
    assert env.value("kv_pool_tokens") // 32768 == env.value("max_sequences")


def test_linear_attention_state_is_fixed_per_sequence(shipped) -> None:
    short = run(shipped, model="qwen3-next-80b-a3b", gpu="h200-sxm", tp=4, context=4096)
    long = run(shipped, model="qwen3-next-80b-a3b", gpu="h200-sxm", tp=4, context=65536)
    state = 36 * (32 * 128 * 128 + (2 * 16 * 128 + 32 * 128) * 3) * 4  # fp32 state default
    assert short.value("state_bytes_per_sequence") == state
    assert long.value("state_bytes_per_sequence") == state
    # only the 12 full-attention layers grow with context
    grown = long.value("kv_bytes_per_sequence") - short.value("kv_bytes_per_sequence")
    assert grown == 12 * 2 * 2 * 256 * 2 * (65536 - 4096)


def test_moe_memory_from_total_params_flops_from_active(shipped) -> None:
    env = run(shipped, {"engine": "none"}, model="mixtral-8x7b", gpu="h100-sxm", tp=2, batch=1,
              context=1024)
    assert env.value("weight_bytes") == 46.7e9 * 2  # every expert is resident
    assert env.value("decode_flops_per_step") == pytest.approx(
        2 * 12.9e9 + 4 * 32 * 128 * 32 * 1024)


def test_moe_decode_reads_routed_experts_up_to_all(shipped) -> None:
    one = run(shipped, model="deepseek-v3", gpu="h200-sxm", tp=8, weights="fp8", batch=1)
    many = run(shipped, model="deepseek-v3", gpu="h200-sxm", tp=8, weights="fp8", batch=256)
    assert one.value("experts_read_per_layer") == pytest.approx(8)  # top-8 of 256
    assert 250 < many.value("experts_read_per_layer") <= 256  # nearly all experts
    assert one.value("weight_bytes_read_per_step") < 0.1 * one.value("weight_bytes")
    assert many.value("weight_bytes_read_per_step") <= many.value("weight_bytes")


def test_model_without_params_derives_them_and_says_so(shipped) -> None:
    q = model_quantities(shipped[0].entries["phi-4"])
    assert q["params_basis"] == "derived from shape"
    assert q["params_total"] == pytest.approx(14.66e9, rel=0.01)  # safetensors total
    assert model_quantities(shipped[0].entries["llama-3.1-8b"])["params_basis"] == "catalog params"


def test_weights_that_do_not_fit_leave_no_pool(shipped) -> None:
    env = run(shipped, model="llama-3.1-405b", gpu="h100-sxm", tp=1)
    assert env.value("weights_fit") is False
    assert env.value("kv_pool_bytes") == 0 and env.value("max_sequences") == 0
    assert env.value("fits") is False


def test_fp8_weights_compute_at_fp8_rate_only_where_the_gpu_has_it(shipped) -> None:
    h100 = run(shipped, model="llama-3.1-8b", gpu="h100-sxm", weights="fp8")
    a100 = run(shipped, model="llama-3.1-8b", gpu="a100-80gb-sxm", weights="fp8")
    int4 = run(shipped, model="llama-3.1-8b", gpu="h100-sxm", weights="int4")
    assert h100.value("peak_flops_per_gpu") == 1979e12
    assert a100.value("peak_flops_per_gpu") == 312e12
    assert int4.value("peak_flops_per_gpu") == 989e12  # weight-only format multiplies in BF16


def test_int4_bytes_include_group_scales(shipped) -> None:
    env = run(shipped, {"engine": "none"}, model="llama-3.1-8b", gpu="h100-sxm", weights="int4")
    assert env.value("weight_bytes") > 0.5 * 8.03e9
    assert env.value("weight_bytes") == pytest.approx(8.03e9 * 4.15625 / 8)


def test_quantized_checkpoints_keep_embeddings_in_bf16(shipped) -> None:
    # Llama 3.3 70B FP8: 2 x 128256 x 8192 embedding + LM head parameters stay BF16, the rest
    # is FP8. vLLM loaded 33.88 GiB per GPU at TP 2 (llm-d-planner PR #205 log).
    env = run(shipped, model="llama-3.1-70b", gpu="h100-sxm", weights="fp8", tp=2)
    embed = 2 * 128256 * 8192
    assert env.value("weight_bytes") == pytest.approx(embed * 2 + (70.55e9 - embed) * 1)
    assert env.value("weight_bytes_per_gpu") / 2**30 == pytest.approx(33.88, rel=0.01)


def test_mxfp4_quantizes_only_the_experts(shipped) -> None:
    # gpt-oss-120b: 36 layers x 128 experts x 3 x 2880 x 2880 expert parameters in MXFP4
    # (4.25 bits), everything else BF16; vLLM's MXFP4 kernels pad 2880 to 3072.
    env = run(shipped, model="gpt-oss-120b", gpu="h100-sxm", weights="mxfp4")
    experts = 36 * 128 * 3 * 2880 * 2880
    total = model_quantities(shipped[0].entries["gpt-oss-120b"])["params_total"]
    padded = 36 * 128 * 3 * 3072 * 3072
    assert env.value("weight_bytes") == pytest.approx(padded * 0.53125 + (total - experts) * 2)
    assert env.value("weight_bytes") > total * 0.53125 * 1.05
    # gpt-oss-20b at TP 2: vLLM 0.19 loaded 7.01 GiB per GPU (llm-d-planner PR #205 log).
    small = run(shipped, model="gpt-oss-20b", gpu="h100-sxm", weights="mxfp4", tp=2)
    assert small.value("weight_bytes_per_gpu") / 2**30 == pytest.approx(7.01, rel=0.03)


def test_decode_bound_switches_to_compute_at_large_batch(shipped) -> None:
    small = run(shipped, model="llama-3.1-8b", gpu="h100-sxm", batch=1, context=1024)
    large = run(shipped, model="llama-3.1-8b", gpu="h100-sxm", batch=512, context=128)
    assert small.value("decode_bound") == "memory"
    assert large.value("decode_bound") == "compute"


def test_decode_step_is_the_larger_bound_not_their_sum(tmp_path) -> None:
    """Worked by hand: a 1B-parameter BF16 model, 2 layers of 4 KV heads × head dim 64 (hidden
    256 / 4 heads), on a GPU of 1 TB/s and 1 dense TFLOP/s; engine none, TP 1, 1,000 tokens."""
    from planner.inputs.scenario import Scenario
    from planner.plan.calc import Evaluated, evaluate

    models, gpus = catalogs_for(
        tmp_path,
        {"num_hidden_layers": 2, "hidden_size": 256, "num_attention_heads": 4,
         "num_key_value_heads": 4, "params": 1e9},
        {"memory_gb": 80, "bandwidth_tb_s": 1, "bf16_tflops": 1})

    def step(batch: int, compute_efficiency: float) -> Evaluated:
        return evaluate(Scenario("m", "g", batch=batch, context=1000), models, gpus,
                        {"engine": "none", "bandwidth_efficiency": 0.5,
                         "compute_efficiency": compute_efficiency})

    # weights 1e9 × 2 B = 2e9 B; KV 2 (K and V) × 2 layers × 4 heads × 64 × 2 B = 2,048 B/token.
    # Batch 4: reads 2e9 + 4 × 1,000 × 2,048 = 2.008192e9 B at 0.5 × 1e12 B/s = 4.016384 ms;
    # computes 4 × (2 × 1e9 + 4 × 4 heads × 64 × 2 layers × 1,000 tokens) = 8.008192e9 FLOP
    # at 0.25 × 1e12 FLOP/s = 32.032768 ms. The step is the larger: 32.032768 ms, not the
    # 36.049152 ms of their sum.
    compute = step(4, 0.25)
    assert compute.value("decode_bytes_per_gpu") == 2.008192e9
    assert compute.value("decode_flops_per_step") == 8.008192e9
    assert compute.value("decode_memory_seconds") == pytest.approx(4.016384e-3, rel=1e-12)
    assert compute.value("decode_compute_seconds") == pytest.approx(32.032768e-3, rel=1e-12)
    assert compute.value("decode_step_seconds") == pytest.approx(32.032768e-3, rel=1e-12)
    assert compute.value("decode_bound") == "compute"
    assert compute.value("decode_tokens_per_second") == pytest.approx(4 / 32.032768e-3,
                                                                      rel=1e-12)
    # Batch 1 at compute efficiency 1: reads 2.002048e9 B = 4.004096 ms; computes 2.002048e9
    # FLOP = 2.002048 ms. Memory bound: 4.004096 ms, not 6.006144 ms.
    memory = step(1, 1.0)
    assert memory.value("decode_memory_seconds") == pytest.approx(4.004096e-3, rel=1e-12)
    assert memory.value("decode_compute_seconds") == pytest.approx(2.002048e-3, rel=1e-12)
    assert memory.value("decode_step_seconds") == pytest.approx(4.004096e-3, rel=1e-12)
    assert memory.value("decode_bound") == "memory"
    assert memory.value("tokens_per_second_per_sequence") == pytest.approx(1 / 4.004096e-3,
                                                                            rel=1e-12)


def test_estimates_name_the_assumptions_they_rest_on() -> None:
    from planner.model.quantities import ROW_BY_NAME, assumptions_used

    assert assumptions_used(ROW_BY_NAME["kv_bytes_per_token"]) == ["bytes_per_kv_element"]
    assert assumptions_used(ROW_BY_NAME["prefill_flops"]) == []  # exact arithmetic
    cost = assumptions_used(ROW_BY_NAME["cost_per_million_tokens"])
    assert {"bandwidth_efficiency", "compute_efficiency", "price_per_hour_usd"} <= set(cost)
    assert "gpu_memory_utilization" in assumptions_used(ROW_BY_NAME["max_sequences"])


def test_fp4_multiplies_use_the_gpus_fp4_efficiency(shipped) -> None:
    """B200 FP4 GEMMs reach 0.58 of their 9 PF peak where BF16 reaches 0.78 (docs/gpu-evidence.md):
    where no measured per-op table applies (here engine=none), NVFP4 weights on a B200 use
    compute_efficiency_fp4 (0.35); BF16 on the same GPU, and NVFP4 on an H100 (no FP4 units: the
    multiplies run in BF16), keep the fallback 0.5."""
    catalog = {"engine": "none"}
    fp4 = run(shipped, catalog, model="llama-3.3-70b", gpu="b200", weights="nvfp4", batch=256)
    bf16 = run(shipped, catalog, model="llama-3.3-70b", gpu="b200", weights="bf16", batch=256)
    hopper = run(shipped, catalog, model="llama-3.3-70b", gpu="h100-sxm", weights="nvfp4", tp=2)
    assert fp4.value("compute_efficiency_used") == 0.35
    assert fp4.value("peak_flops_per_gpu") == 9000e12
    assert bf16.value("compute_efficiency_used") == 0.5
    assert hopper.value("compute_efficiency_used") == 0.5
    assert hopper.value("peak_flops_per_gpu") == 989e12
    # The GEMM compute bound: serving batch x 2 x active parameters / (9 PF x 0.35).
    assert fp4.value("serving_flops_per_sequence") == 2 * 70.55e9
    flops = fp4.value("serving_batch") * 2 * 70.55e9
    assert fp4.value("serving_compute_seconds") == pytest.approx(flops / (9000e12 * 0.35))


def test_an_eager_prefill_pass_waits_on_the_host_launching_each_kernel(shipped) -> None:
    """SGLang's prefill passes are not replayed from a CUDA graph (its graphs capture decode
    steps), so every kernel is launched from Python: 41 µs each (eager_kernel_us, from SGLang
    PR #12160's eager vs graphed DeepSeek-V3 pass). DeepSeek-R1 on 8 × B200, 92 sequences of
    500 + 504 tokens, worked by hand."""
    scenario = dict(model="deepseek-r1", gpu="b200", weights="fp8", tp=8, context=1004,
                    batch=92, prompt=500, output=504)
    env = run(shipped, {"engine": "sglang"}, **scenario)
    # 61 MLA blocks × 12 + 3 dense FFNs × 4 + 58 MoE FFNs × (8 routed + 4 shared-expert) kernels
    assert env.value("kernels_per_step") == 61 * 12 + 3 * 4 + 58 * (8 + 4) == 1440
    launch = 1440 * 41e-6  # 59.04 ms a pass
    assert env.value("prefill_launch_seconds") == pytest.approx(launch)
    fixed = env.value("step_fixed_seconds") + env.value("weights_read_seconds")
    assert env.value("prefill_pass_fixed_seconds") == pytest.approx(fixed + launch)
    # 92 / 504 = 0.1825 prompts start a step, each in a pass of its own
    started = 92 / 504
    per_step = started * (fixed + launch) + started * env.value("prefill_interleaved_seconds")
    assert env.value("prefill_per_step_seconds") == pytest.approx(per_step)
    assert per_step == pytest.approx(0.01972, abs=5e-5)  # 19.7 ms of a 45 ms step
    # The first token with no queue waits for the launches too.
    graphed = run(shipped, {"engine": "sglang", "eager_prefill": 0}, **scenario)
    assert graphed.value("prefill_launch_seconds") == 0
    assert env.value("prefill_seconds") == pytest.approx(graphed.value("prefill_seconds")
                                                         + launch)
    # vLLM V1 and TensorRT-LLM ride prompt chunks in graph-captured or compiled steps: no launch.
    for engine in ("vllm", "trtllm"):
        assert run(shipped, {"engine": engine}, **scenario).value("prefill_launch_seconds") == 0


def test_an_engine_without_cuda_graphs_launches_every_step_from_the_host(shipped) -> None:
    """eager_decode 1 (vLLM --enforce-eager, SGLang --disable-cuda-graph, TensorRT-LLM's
    early-2025 PyTorch backend): every decode step pays 41 µs a kernel of host launches on top
    of its GPU work, and prefill passes too, once. DeepSeek-R1 on 8 × H200, 4 sequences of
    3,200 + 800 tokens (dstack's TensorRT-LLM 0.17 runs), worked by hand."""
    scenario = dict(model="deepseek-r1", gpu="h200-sxm", weights="fp8", tp=8, context=4000,
                    batch=4, prompt=3200, output=800)
    graphed = run(shipped, {"engine": "trtllm"}, **scenario)
    eager = run(shipped, {"engine": "trtllm", "eager_decode": 1}, **scenario)
    launch = 1440 * 41e-6  # 1,440 kernels a step (the test above) × 41 µs = 59.04 ms
    assert graphed.value("step_overhead_seconds") == pytest.approx(1440 * 5e-6)  # 7.2 ms
    assert eager.value("step_overhead_seconds") == pytest.approx(1440 * 5e-6 + launch)
    assert eager.value("tpot_seconds") == pytest.approx(graphed.value("tpot_seconds") + launch)
    assert eager.value("prefill_seconds") == pytest.approx(graphed.value("prefill_seconds")
                                                           + launch)
    # dstack's c4 run printed 55.1 ms a token; graphed the planner says 12.0, eager 71.1.
    assert graphed.value("tpot_seconds") == pytest.approx(0.0120, abs=5e-4)
    assert eager.value("tpot_seconds") == pytest.approx(0.0711, abs=5e-4)
    # SGLang's eager prefill passes are not charged twice.
    sglang = run(shipped, {"engine": "sglang", "eager_decode": 1}, **scenario)
    assert sglang.value("prefill_launch_seconds") == 0
    assert sglang.value("prefill_seconds") == pytest.approx(
        run(shipped, {"engine": "sglang"}, **scenario).value("prefill_seconds"))
