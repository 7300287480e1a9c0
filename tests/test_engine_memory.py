"""What engines reserve before the KV cache at large TP and for MoE and vision models (issue 27,
item 1): each term worked out by hand from the engines' own source, then checked against the
planner's figure and, where a real log measured it, against the log."""

from __future__ import annotations

from typing import Any

import pytest

from planner.inputs.catalog import load_gpus, load_models
from planner.inputs.entries import Catalog
from planner.inputs.scenario import Scenario
from planner.model.units import GiB, MiB
from planner.plan.calc import RowEnv, evaluate
from planner.plan.calibration import sampler_of, startup_settings, version_of


@pytest.fixture(scope="module")
def catalogs() -> tuple[Catalog, Catalog]:
    return load_models(), load_gpus()


def calc(catalogs: tuple[Catalog, Catalog], model: str, gpu: str, tp: int,
         weights: str = "bf16", context: int = 8192, **overrides: Any) -> RowEnv:
    return evaluate(Scenario(model, gpu, weights, "bf16", tp, context), *catalogs,
                    {"engine": "vllm", **overrides})


def number(env: RowEnv, name: str) -> float:
    return float(env.value(name))  # type: ignore[arg-type]


def test_the_sampler_before_vllm_017_sorts_the_vocabulary(
        catalogs: tuple[Catalog, Catalog]) -> None:
    """vLLM before 0.17 filtered top-k/top-p by sorting all logits in PyTorch: 37 bytes a logit
    (vllm-project/vllm PR #32558: 1.25 GB for 256 x 131,072 logits), 15 with the Triton kernel
    of 0.17 and later. The H200 log of vLLM 0.11.2 (faradawn/bench3) serves Llama 3 8B with the
    default 1,024 sequences: 0.9 x 139.80 - 14.96 weights - 105.97 KV - 0.25 non-torch =
    4.64 GiB of activation peak, where the sort gives 1,024 x 128,256 x 37 B = 4.53 GiB."""
    assert sampler_of(version_of("0.11.2")) == {"sampler_bytes_per_logit": 37.0}
    assert sampler_of(version_of("0.6.4")) == {"sampler_bytes_per_logit": 37.0}
    assert sampler_of(version_of("0.17.0")) == {} == sampler_of(version_of("0.22.1"))
    assert sampler_of(version_of("not stated")) == {}
    env = calc(catalogs, "llama-3-8b", "h200-sxm", 1, sampler_bytes_per_logit=37.0)
    assert number(env, "sampler_bytes_per_gpu") == 1024 * 128_256 * 37 == 4_859_363_328
    measured = (0.9 * 139.80 - 14.96 - 105.97 - 0.25) * GiB
    assert number(env, "activation_bytes_per_gpu") / measured == pytest.approx(1, abs=0.03)


def test_a_startup_point_takes_the_sampler_of_its_version(
        catalogs: tuple[Catalog, Catalog]) -> None:
    point = {"engine": "vllm", "engine_version": "0.12.0", "engine_core": "V1",
             "model_id": "Qwen/Qwen3-30B-A3B-Instruct-2507",
             "gpu": {"type": "NVIDIA RTX PRO 6000 Blackwell Server Edition"},
             "max_model_len": 4096}
    settings = startup_settings(point, *catalogs)
    assert settings is not None and settings.overrides["sampler_bytes_per_logit"] == 37.0
    later = startup_settings({**point, "engine_version": "0.19.0"}, *catalogs)
    assert later is not None and "sampler_bytes_per_logit" not in later.overrides


def test_fused_moe_workspace_by_hand(catalogs: tuple[Catalog, Catalog]) -> None:
    """vLLM's fused_experts keeps M x top-k x max(N, K) (the first and third caches share it)
    and M x top-k x N/2 for the activated product, N = 2 x expert FFN / TP, K = hidden, with M
    the tokens of one call, at most VLLM_FUSED_MOE_CHUNK_SIZE (32,768). Mixtral 8x7B at TP 2
    profiling 8,192 tokens: 8,192 x 2 x (14,336 + 7,168) x 2 B."""
    env = calc(catalogs, "mixtral-8x7b", "h100-sxm", 2, max_num_batched_tokens=8192)
    assert number(env, "moe_workspace_bytes_per_gpu") == 8192 * 2 * (14_336 + 7_168) * 2
    # The llm-d log of vLLM 0.19 (Mixtral, TP 2) measures a 1.21 GiB activation peak: the
    # sampler (1,024 x 32,000 x 15 B) is below the forward pass, which the workspace joins.
    assert number(env, "activation_bytes_per_gpu") / GiB == pytest.approx(1.21, abs=0.08)
    # DeepSeek-R1 at TP 8 profiling a whole 131,072-token prompt (vLLM V0 with MLA): the fused
    # MoE runs in chunks of 32,768 tokens, so its workspace is one chunk's: 32,768 x 8 x
    # (max(2 x 2,048 / 8, 7,168) + 2,048 / 8) x 2 B.
    env = calc(catalogs, "deepseek-r1", "h200-sxm", 8, "fp8", 131_072,
               max_num_batched_tokens=131_072)
    assert number(env, "moe_workspace_bytes_per_gpu") == 32_768 * 8 * (7_168 + 256) * 2


def test_nvlink_sharp_buffers_grow_with_the_group(catalogs: tuple[Catalog, Catalog]) -> None:
    """NCCL (src/transport/nvls.cc) gives every GPU of an NVLS group one buffer per head:
    channels x 2 x 128 KiB x 8 steps, 16 channels on Hopper (32 MiB), 24 on a single-node
    Blackwell domain (48 MiB); groups of 2 GPUs or fewer do not use NVLS."""
    for gpu, tp, mib in (("h100-sxm", 8, 8 * 32), ("h100-sxm", 4, 4 * 32), ("h100-sxm", 2, 0),
                         ("b200", 8, 8 * 48), ("a100-80gb-sxm", 8, 0), ("mi300x", 8, 0)):
        env = calc(catalogs, "llama-3.1-70b", gpu, tp)
        assert number(env, "nvls_bytes_per_gpu") == mib * MiB, (gpu, tp)
    env = calc(catalogs, "llama-3.1-70b", "h100-sxm", 8)
    assert number(env, "non_torch_bytes_per_gpu") == (0.25 + 1.85) * GiB + 256 * MiB


def test_vllm_v0_profiles_a_whole_prompt_for_mla(catalogs: tuple[Catalog, Catalog]) -> None:
    """vLLM V0 before 0.8 disabled chunked prefill for MLA models at any length ("MLA is
    enabled; forcing chunked prefill and prefix caching to be disabled", vLLM 0.7.1 in
    vllm-project/vllm#13374), so its profile ran max_model_len tokens in one step; other
    models only up to 32K contexts."""
    point = {"engine": "vllm", "engine_version": "0.7.1", "engine_core": "V0",
             "model_id": "deepseek-ai/DeepSeek-R1", "gpu": {"type": "NVIDIA H200"},
             "quantization": "fp8", "tensor_parallel_size": 8, "max_model_len": 131_072}
    settings = startup_settings(point, *catalogs)
    assert settings is not None and settings.overrides["max_num_batched_tokens"] == 131_072
    later = startup_settings({**point, "engine_version": "0.8.4"}, *catalogs)
    assert later is not None and "max_num_batched_tokens" not in later.overrides
    dense = startup_settings({**point, "model_id": "meta-llama/Llama-3.1-70B-Instruct",
                              "quantization": None}, *catalogs)
    assert dense is not None and "max_num_batched_tokens" not in dense.overrides


def test_llama4_vision_encoder_is_profiled(catalogs: tuple[Catalog, Catalog]) -> None:
    """Llama 4's params hold the text model and vision_params its encoder (871,933,824
    parameters from the config's vision_config), so vLLM's encoder profile is charged and the
    weights keep their total."""
    env = calc(catalogs, "llama-4-scout", "h100-sxm", 4)
    tower = 871_933_824
    assert number(env, "weight_bytes") == (108_128_066_176 + tower) * 2 == 109e9 * 2
    sampler = 1024 * 202_048 * 15
    workspace = 8192 * 1 * (max(2 * 8192 // 4, 5120) + 8192 // 4) * 2
    forward = 8192 * (3 * 16384 / 4 + 4 * 5120) * 2
    assert number(env, "activation_bytes_per_gpu") == pytest.approx(
        max(sampler, forward) + workspace + tower * 2.4)


# -- AMD CDNA decode attention (issue 27, item 3) ----------------------------------------------

def test_mla_decode_occupancy_on_cdna_by_hand(catalogs: tuple[Catalog, Catalog]) -> None:
    """aiter's MLA decode kernel (ROCm/aiter aiter/mla.py get_meta_param) splits each
    sequence's KV over i <= 16 workgroups, choosing i to maximise its own cost model:
    (batch x i workgroups / the 304 compute units of the waves they take) x context / (context
    + 84.1 x i). DeepSeek-V3 on 8 x MI300X, one sequence at a mean context of 2,500 tokens: 16
    splits fill 16 of 304 units, 0.0526 x 2,500 / 3,845.6 = 0.0342 of the bandwidth: the
    latent's 61 x 576 x 2 B a token then takes 30x its bytes' time."""
    env = evaluate(Scenario("deepseek-v3", "mi300x", "fp8", "bf16", 8, 4500, 1, 500, 4000),
                   *catalogs, {"engine": "sglang"})
    assert number(env, "attention_occupancy") == pytest.approx(16 / 304 * 2500 / (2500 + 84.1 * 16))
    kv = 61 * 576 * 2 * 2500
    assert number(env, "kv_read_bytes_per_sequence_per_gpu") == kv
    bandwidth = 5.3e12 * 0.7 * 16 / 304 * 2500 / (2500 + 84.1 * 16)
    assert number(env, "serving_attention_seconds") == pytest.approx(kv / bandwidth)
    # The time per sequence the fleet's batch solver adds stays the bytes' own time.
    assert number(env, "serving_attention_seconds_per_sequence") == pytest.approx(
        kv / (5.3e12 * 0.7))
    # 56 sequences: 5 splits (280 workgroups in one wave of 304) win over 16 (896 in 3 waves).
    env = evaluate(Scenario("deepseek-v3", "mi300x", "fp8", "bf16", 8, 4500, 56, 500, 4000),
                   *catalogs, {"engine": "sglang"})
    assert number(env, "attention_occupancy") == pytest.approx(280 / 304 * 2500 / (2500 + 84.1 * 5))
    # The slope with context at batch 1, which the SGLang cookbook's MI300X runs show (time per
    # output token 23.84 ms at a mean context of about 0.8K, 24.93 ms at 4.4K: 0.30 ms per 1K
    # tokens): 0.36 ms per 1K tokens from the kernel's occupancy, 0.02 from the bytes alone.
    def attention_ms(context: int) -> float:
        e = evaluate(Scenario("deepseek-v3", "mi300x", "fp8", "bf16", 8, context, 1, 500),
                     *catalogs, {"engine": "sglang"})  # no output given: decode at the context
        return number(e, "serving_attention_seconds") * 1000
    slope = (attention_ms(4400) - attention_ms(800)) / 3.6
    assert 0.30 <= slope <= 0.40
    # GQA models and NVIDIA GPUs are unaffected: the figure is the MLA kernel's.
    assert number(calc(catalogs, "llama-3.1-70b", "mi300x", 8), "attention_occupancy") == 1
    env = evaluate(Scenario("deepseek-v3", "h200-sxm", "fp8", "bf16", 8, 4500, 1, 500, 4000),
                   *catalogs, {"engine": "sglang"})
    assert number(env, "attention_occupancy") == 1
