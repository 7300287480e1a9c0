"""vLLM's startup phrases: configuration, memory profile and KV cache, V0 and V1 wordings.

``VLLM_RULES`` lists, in the order the scanner tries them, the lines vLLM prints while starting
(the engine banner and its config repr, non-default args, the launch command, the memory
profiling results of each version, the KV cache size and CUDA graph memory) and the report
fields each carries, with the helpers that read the config and profile lines.
"""

from __future__ import annotations

import ast
import re
from typing import Any

from planner.evidence.enginelog.rules import (
    GIB,
    INT,
    NUM,
    Extract,
    Rule,
    as_float,
    as_int,
    command,
    pick_keys,
    rule,
    typed,
)

_VLLM_CONFIG_KEYS = {
    "model": "model", "dtype": "dtype", "max_seq_len": "max_model_len",
    "tensor_parallel_size": "tensor_parallel_size", "quantization": "quantization",
    "kv_cache_dtype": "kv_cache_dtype",
}


def _vllm_config(core: str) -> Extract:
    """``Initializing a V1 LLM engine (v0.19.0) with config: model='..', dtype=.., ..``; the V0
    wording ("an LLM engine") was also V1's first one, so it only weakly says V0."""

    def extract(match: re.Match[str]) -> dict[str, Any]:
        out: dict[str, Any] = {"engine_version": match.group(1), "engine_core": core}
        out.update(typed(pick_keys(match.group(2), _VLLM_CONFIG_KEYS)))
        return out

    return extract


_NON_DEFAULT_KEYS = (
    "model", "tensor_parallel_size", "gpu_memory_utilization", "max_model_len", "max_num_seqs",
    "max_num_batched_tokens", "kv_cache_dtype", "dtype", "quantization",
)


def _vllm_non_default(match: re.Match[str]) -> dict[str, Any]:
    text = match.group(1)
    try:
        parsed = ast.literal_eval(text)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        parsed = None
    values: dict[str, Any] = {}
    if isinstance(parsed, dict):
        values = {k: parsed[k] for k in _NON_DEFAULT_KEYS if k in parsed}
    else:  # a repr literal_eval cannot read (an object among the values): read plain pairs
        for key in _NON_DEFAULT_KEYS:
            found = re.search(rf"'{key}': ('[^']*'|[^,}}\s]+)", text)
            if found:
                values[key] = found.group(1)
    return typed(values)


def _vllm_profile_results(match: re.Match[str]) -> dict[str, Any]:
    """vLLM 0.6.4's one-line ``Memory profiling results: duration=.., total_gpu_memory=..``."""
    pairs = dict(re.findall(r"(\w+)=(\d+(?:\.\d+)?)", match.group(1)))
    out: dict[str, Any] = {}
    for key, name in (("total_gpu_memory", "total_gib"), ("non_torch_memory", "non_torch_gib"),
                      ("kv_cache_size", "kv_cache_gib"),
                      ("gpu_memory_utilization", "gpu_memory_utilization")):
        if key in pairs:
            out[name] = float(pairs[key])
    if "peak_torch_memory" in pairs:
        out["_peak_torch_gib"] = float(pairs["peak_torch_memory"])
    return out


_VLLM_FLAGS = {
    "--model": "model", "--tensor-parallel-size": "tensor_parallel_size",
    "-tp": "tensor_parallel_size", "--gpu-memory-utilization": "gpu_memory_utilization",
    "--max-model-len": "max_model_len", "--max-num-seqs": "max_num_seqs",
    "--max-num-batched-tokens": "max_num_batched_tokens", "--kv-cache-dtype": "kv_cache_dtype",
    "--dtype": "dtype", "--quantization": "quantization", "-q": "quantization",
}

_CORE_HINT = {"engine_core": 1}  # a line only one vLLM core prints: weaker than its banner

VLLM_RULES: tuple[Rule, ...] = (
    # --- vLLM: configuration
    rule("vllm", r"Initializing a V1 LLM engine \(v([^)\s]+)\) with config: (.*)",
         _vllm_config("V1")),
    rule("vllm", r"Initializing an LLM engine \(v([^)\s]+)\) with config: (.*)",
         _vllm_config("V0"), sources={"engine_core": 2}),
    rule("vllm", r"vLLM API server version (\S+)", lambda m: {"engine_version": m.group(1)}, 1),
    rule("vllm", r"non-default args: (\{.*\})", _vllm_non_default, 1),
    rule("vllm", r"Chunked prefill is enabled with max_num_batched_tokens=" + INT,
         lambda m: {"max_num_batched_tokens": as_int(m.group(1))}),
    rule("vllm", r"Using max model len " + INT, lambda m: {"max_model_len": as_int(m.group(1))}, 1),
    rule("vllm", r"Defaulting max_num_seqs to " + INT + r" for ",
         lambda m: {"max_num_seqs": as_int(m.group(1))}, 1),
    rule("vllm", r"Defaulting max_num_batched_tokens to " + INT + r" for ",
         lambda m: {"max_num_batched_tokens": as_int(m.group(1))}, 1),
    rule("vllm", r"(?:^|[\s;&|])vllm serve\s+(.*)", command(_VLLM_FLAGS, True), 5),
    rule("vllm", r"-m vllm\.entrypoints\.openai\.api_server\s+(.*)",
         command(_VLLM_FLAGS, False), 5),
    # --- vLLM: memory
    rule("vllm", r"Model loading took " + NUM + GIB,
         lambda m: {"weights_gib": as_float(m.group(1))}),
    rule("vllm", r"Loading model weights took " + NUM + GIB,
         lambda m: {"weights_gib": as_float(m.group(1))}),
    rule("vllm", r"total_gpu_memory\s*\(\s*" + NUM + GIB + r"\s*\)\s*x\s*gpu_memory_utilization"
         r"\s*\(\s*" + NUM + r"\s*\)",
         lambda m: {"total_gib": as_float(m.group(1)),
                    "gpu_memory_utilization": as_float(m.group(2))}, 1, r"total_gpu_memory\s*\("),
    rule("vllm", r"model\s+weights\s+take\s*" + NUM + GIB,
         lambda m: {"weights_gib": as_float(m.group(1))}, 1, r"model\s+weights\s+take"),
    rule("vllm", r"non_torch_memory\s+takes\s*" + NUM + GIB,
         lambda m: {"non_torch_gib": as_float(m.group(1))}, 0, r"non_torch_memory\s+takes"),
    rule("vllm", r"PyTorch\s+activation\s+peak\s+memory\s+takes\s*" + NUM + GIB,
         lambda m: {"activation_peak_gib": as_float(m.group(1))}, 0,
         r"PyTorch\s+activation\s+peak"),
    rule("vllm", r"the\s+rest\s+of\s+the\s+memory\s+reserved\s+for\s+KV\s+Cache\s+is\s*"
         + NUM + GIB, lambda m: {"kv_cache_gib": as_float(m.group(1))}, 1,
         r"the\s+rest\s+of\s+the\s+memory"),
    rule("vllm", r"Memory profiling results:(.*\bgpu_memory_utilization=\d+(?:\.\d+)?)(?!\d)",
         _vllm_profile_results, 1, r"Memory profiling results:"),
    rule("vllm", r"torch peak memory increase: " + NUM + GIB,
         lambda m: {"activation_peak_gib": as_float(m.group(1))}),
    rule("vllm", r"non-torch forward increase memory: " + NUM + GIB,
         lambda m: {"non_torch_gib": as_float(m.group(1))}),
    rule("vllm", r"; weights memory: " + NUM + GIB,
         lambda m: {"weights_gib": as_float(m.group(1))}, 1),
    rule("vllm", r"Free memory on device (?:\S+ )?\(" + NUM + "/" + NUM + r" GiB\) on startup"
         r"(?:\.|,?) (?:is less than )?[Dd]esired GPU memory utilization (?:is )?\(" + NUM,
         lambda m: {"total_gib": as_float(m.group(2)),
                    "gpu_memory_utilization": as_float(m.group(3))}, 2),
    rule("vllm", r"Actual usage is " + NUM + r" GiB for weight, " + NUM + r" GiB for peak "
         r"activation, " + NUM + r" GiB for non-torch memory",
         lambda m: {"weights_gib": as_float(m.group(1)),
                    "activation_peak_gib": as_float(m.group(2)),
                    "non_torch_gib": as_float(m.group(3))}, 2),
    rule("vllm", r"worker init memory snapshot: .*\btotal_memory=" + NUM + GIB,
         lambda m: {"total_gib": as_float(m.group(1))}, 3),
    # --- vLLM: the KV cache
    rule("vllm", r"Available KV cache memory: " + NUM + GIB,
         lambda m: {"kv_cache_gib": as_float(m.group(1)), "engine_core": "V1"},
         sources=_CORE_HINT),
    rule("vllm", r"GPU KV cache size: " + INT + r" tokens",
         lambda m: {"kv_cache_tokens": as_int(m.group(1)), "engine_core": "V1"},
         sources=_CORE_HINT),
    rule("vllm", r"Maximum concurrency for " + INT + r" tokens per request: " + NUM + r"x",
         lambda m: {"max_concurrency": as_float(m.group(2)), "max_model_len": as_int(m.group(1))},
         sources={"max_model_len": 2}),
    rule("vllm", r"# (?:GPU|CUDA) blocks: " + INT + r", # CPU blocks: " + INT,
         lambda m: {"gpu_blocks": as_int(m.group(1)), "engine_core": "V0"},
         sources=_CORE_HINT),
    rule("vllm", r"# GPU blocks: " + INT + r"\s*$",
         lambda m: {"gpu_blocks": as_int(m.group(1)), "engine_core": "V1"},
         sources=_CORE_HINT),
    rule("vllm", r"initialization after num_gpu_blocks is: " + INT,
         lambda m: {"gpu_blocks": as_int(m.group(1)), "engine_core": "V1"},
         sources=_CORE_HINT),
    rule("vllm", r"Graph capturing finished in \d+ secs?, took " + NUM + GIB,
         lambda m: {"cuda_graph_gib": as_float(m.group(1))}),
    rule("vllm", r"CUDA graph pool memory: " + NUM + r" GiB \(actual\)",
         lambda m: {"cuda_graph_gib": as_float(m.group(1))}, 1),
    rule("vllm", r"Estimated CUDA graph memory: " + NUM + r" GiB total",
         lambda m: {"cuda_graph_estimate_gib": as_float(m.group(1))}),
    rule("vllm", r"CUDA graph memory profiling is enabled",
         lambda m: {"cuda_graphs_in_budget": True}),
)
