"""SGLang's startup phrases: server args, weight loading, the KV cache pool and CUDA graphs.

``SGLANG_RULES`` lists, in the order the scanner tries them, the lines SGLang prints while
starting (its ``ServerArgs`` repr, the launch command, weights and KV cache sizes, the
scheduler's token totals, CUDA graph memory) and the report fields each carries, with the
helpers that read the server args and the scheduler's totals.
"""

from __future__ import annotations

import re
from typing import Any

from planner.evidence.enginelog.rules import (
    GIB,
    INT,
    NUM,
    Rule,
    as_float,
    as_int,
    command,
    pick_keys,
    rule,
    typed,
)

_SGLANG_FLAGS = {
    "--model-path": "model", "--model": "model", "--tp-size": "tensor_parallel_size",
    "--tp": "tensor_parallel_size", "--mem-fraction-static": "gpu_memory_utilization",
    "--context-length": "max_model_len", "--max-running-requests": "max_num_seqs",
    "--chunked-prefill-size": "max_num_batched_tokens", "--kv-cache-dtype": "kv_cache_dtype",
    "--dtype": "dtype", "--quantization": "quantization",
}

_SGLANG_ARG_KEYS = {
    "model_path": "model", "tp_size": "tensor_parallel_size",
    "mem_fraction_static": "gpu_memory_utilization", "context_length": "max_model_len",
    "max_running_requests": "max_num_seqs", "chunked_prefill_size": "max_num_batched_tokens",
    "kv_cache_dtype": "kv_cache_dtype", "dtype": "dtype", "quantization": "quantization",
}


def _sglang_args(text: str) -> dict[str, Any]:
    """The request: ``None`` means "not set" (dropped, except quantization), and a dtype of
    "auto" is kept as the log says it; what the engine resolved, printed later, wins."""
    values = typed(pick_keys(text, _SGLANG_ARG_KEYS))
    return {k: v for k, v in values.items() if v is not None or k == "quantization"}


def _sglang_totals(match: re.Match[str]) -> dict[str, Any]:
    """What the scheduler settled on: ``max_total_num_tokens=N, chunked_prefill_size=..,
    max_running_requests=.., context_len=..`` (older logs print no other token count)."""
    text = match.string[match.start():]
    out: dict[str, Any] = {"kv_cache_tokens": as_int(match.group(1))}
    for key, name in (("chunked_prefill_size", "max_num_batched_tokens"),
                      ("max_running_requests", "max_num_seqs"), ("context_len", "max_model_len")):
        found = re.search(rf"\b{key}=(\d+)", text)
        if found:
            out[name] = int(found.group(1))
    return out


SGLANG_RULES: tuple[Rule, ...] = (
    rule("sglang", r"server_args=ServerArgs\((.*)\)", lambda m: _sglang_args(m.group(1)),
         sources={"max_model_len": 1, "max_num_seqs": 1, "max_num_batched_tokens": 1,
                  "dtype": 1, "kv_cache_dtype": 1, "quantization": 1}),
    rule("sglang", r"-m sglang\.[\w.]+\s+(.*)", command(_SGLANG_FLAGS, False), 5),
    rule("sglang", r"Load weight end\..*?\bmem usage=" + NUM + GIB,
         lambda m: {"weights_gib": as_float(m.group(1))}),
    rule("sglang", r"Load weight end\..*?\bdtype=torch\.(\w+)", lambda m: {"dtype": m.group(1)}),
    rule("sglang", r"Load weight end\..*?\bquant=(\w+)", lambda m: {"quantization": m.group(1)}),
    rule("sglang", r"Using KV cache dtype: torch\.(\w+)",
         lambda m: {"kv_cache_dtype": m.group(1)}),
    rule("sglang", r"KV Cache is allocated\. #tokens: " + INT + r", K size: " + NUM + GIB
         + r", V size: " + NUM + GIB,
         lambda m: {"kv_cache_tokens": as_int(m.group(1)),
                    "kv_cache_gib": round(as_float(m.group(2)) + as_float(m.group(3)), 2)}),
    rule("sglang", r"KV Cache is allocated\. #tokens: " + INT + r", KV size: " + NUM + GIB,
         lambda m: {"kv_cache_tokens": as_int(m.group(1)), "kv_cache_gib": as_float(m.group(2))}),
    rule("sglang", r"KV Cache is allocated\. K size: " + NUM + GIB + r", V size: " + NUM + GIB,
         lambda m: {"kv_cache_gib": round(as_float(m.group(1)) + as_float(m.group(2)), 2)}),
    rule("sglang", r"max_total_num_tokens=" + INT, lambda m: _sglang_totals(m),
         sources={"kv_cache_tokens": 1}),
    rule("sglang", r"Capture cuda graph end\. Time elapsed: [\d.]+ s\. mem usage=" + NUM + GIB,
         lambda m: {"cuda_graph_gib": as_float(m.group(1))}),
)
