"""TensorRT-LLM's startup phrases: version, KV cache allocation, blocks, limits and weights.

``TRTLLM_RULES`` lists, in the order the scanner tries them, the lines TensorRT-LLM prints while
starting and the report fields each carries.
"""

from __future__ import annotations

from planner.evidence.enginelog.rules import GIB, INT, NUM, Rule, as_float, as_int, rule

TRTLLM_RULES: tuple[Rule, ...] = (
    rule("trtllm", r"TensorRT-LLM version: (\S+)", lambda m: {"engine_version": m.group(1)}),
    rule("trtllm", r"Allocated " + NUM + r" GiB for max tokens in paged KV cache \(" + INT
         + r"\)", lambda m: {"kv_cache_gib": as_float(m.group(1)),
                             "kv_cache_tokens": as_int(m.group(2))}),
    rule("trtllm", r"Memory usage when calculating max tokens in paged kv cache: total: " + NUM
         + r" GiB", lambda m: {"total_gib": as_float(m.group(1))}),
    rule("trtllm", r"Number of blocks in KV cache primary pool: " + INT,
         lambda m: {"gpu_blocks": as_int(m.group(1))}),
    rule("trtllm", r"\bprimary blocks=" + INT, lambda m: {"gpu_blocks": as_int(m.group(1))}, 1),
    rule("trtllm", r"\bmax_seq_len=" + INT + r", max_num_requests=" + INT
         + r", max_num_tokens=" + INT,
         lambda m: {"max_model_len": as_int(m.group(1)), "max_num_seqs": as_int(m.group(2)),
                    "max_num_batched_tokens": as_int(m.group(3))}),
    rule("trtllm", r"Memory used after loading model weights \(inside torch\) in memory usage "
         r"profiling: " + NUM + GIB, lambda m: {"weights_gib": as_float(m.group(1))}),
    rule("trtllm", r"kv_cache_free_gpu_mem(?:ory)?_fraction[:=]\s*" + NUM,
         lambda m: {"gpu_memory_utilization": as_float(m.group(1))}),
    rule("trtllm", r"\bfree_gpu_memory_fraction=" + NUM,
         lambda m: {"gpu_memory_utilization": as_float(m.group(1))}, 1),
)
