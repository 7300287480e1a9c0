"""How each serving engine turns GPU memory into a KV-cache pool: data, not branches.

Every engine reserves the same kinds of memory (weights, a runtime share for activations and
communication buffers) but applies its memory fraction to a different base. One formula covers
them all (``kv_pool_raw_bytes_per_gpu`` in ``planner.model.memory_quantities``):

    pool = f × (total − a·weights − b·runtime) − (1 − a)·weights − (1 − b)·runtime

where ``a`` and ``b`` say whether the fraction applies after the weights / the runtime share are
taken (TensorRT-LLM: both; SGLang: after the buffers it allocates at start-up; vLLM: neither).
The workbook writes this table on the Assumptions sheet, so an engine's policy is an input too.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Engine:
    id: str
    label: str
    fraction_setting: str  # the engine's own name for gpu_memory_utilization
    fraction_after_weights: int  # 1: the fraction applies to memory left after the weights
    fraction_after_runtime: int  # 1: ... and after the runtime share
    charges_runtime: int  # 1: the runtime share is modelled (0: only a pinned overhead counts)
    profiles_activation: int  # 1: a profile run's activation peak is reserved
    weights_as_loaded: int  # 1: per-component formats (embeddings kept 16-bit, ...)
    window_tail: int  # 1: window layers keep window − 1 + max_num_batched_tokens tokens
    pads_layer_groups: int  # 1: hybrid models' layer groups are padded to equal size
    max_num_seqs_large: int  # default max_num_seqs on GPUs with ≥ 70 GiB
    max_num_seqs_small: int
    max_num_batched_tokens_large: int
    max_num_batched_tokens_small: int
    us_per_sequence: float  # engine time per running sequence per step (scheduler, sampler)
    non_torch_gib: float  # memory outside the framework's allocator per GPU at TP 1
    mixes_prefill: int  # 1: prompt chunks ride in decode steps; 0: prefill runs as its own step
    eager_prefill: int  # 1: prefill passes launch every kernel from the host (no CUDA graph)
    source: str
    # Serving layouts the engine runs (planner.model.layouts): data the candidate search reads.
    layouts: tuple[str, ...] = ("tp",)


ALL_LAYOUTS = ("tp", "tp+ep", "dp-attention", "disaggregated")
LAYOUT_FLAGS = {  # how each engine turns a layout on: the docs and the HTML cite these
    "vllm": "tp+ep: --enable-expert-parallel; dp-attention: --data-parallel-size N "
            "--enable-expert-parallel (attention replicated per DP rank); disaggregated: "
            "--kv-transfer-config NixlConnector",
    "sglang": "tp+ep: --ep-size N; dp-attention: --enable-dp-attention --dp-size N --ep-size N; "
              "disaggregated: --disaggregation-mode prefill|decode (Mooncake or NIXL)",
    "trtllm": "tp+ep: moe_expert_parallel_size; dp-attention: enable_attention_dp with "
              "moe_expert_parallel_size; disaggregated: trtllm-serve disaggregated",
}


ENGINES: dict[str, Engine] = {
    e.id: e
    for e in [
        Engine("vllm", "vLLM (V1 engine)", "gpu_memory_utilization", 0, 0, 1, 1, 1, 1, 1,
               1024, 256, 8192, 2048, 20.0, 0.25, 1, 0,
               "vLLM V1 gpu_worker.determine_available_memory: kv = total × gmu − (weights + "
               "activation peak + non-torch); defaults from engine/arg_utils.py (`vllm serve`: "
               "1024 seqs / 8192 batched tokens on GPUs with ≥ 70 GiB, else 256 / 2048); "
               "hybrid KV manager sizes sliding groups to window − 1 + max_num_batched_tokens",
               ALL_LAYOUTS),
        Engine("sglang", "SGLang", "mem_fraction_static", 0, 1, 1, 0, 1, 0, 0,
               1024, 256, 8192, 2048, 20.0, 0.25, 0, 1,
               "SGLang model_runner.profile_max_num_token: pool = free after weights − free "
               "before weights × (1 − mem_fraction_static); no activation profile run; "
               "prefill runs as a pass of its own (server_args enable_mixed_chunk: bool = "
               "False), launched eagerly: its CUDA graphs capture decode steps only "
               "(docs/advanced_features/piecewise_cuda_graph.md: 'regular CUDA graph "
               "optimization only captures the decoding step'; piecewise prefill graphs were "
               "opt-in through 0.5.8, PR #10062, made the default by PR #16331 in 2026 on "
               "NVIDIA GPUs only, and never on ROCm)", ALL_LAYOUTS),
        Engine("trtllm", "TensorRT-LLM", "kv_cache_free_gpu_mem_fraction", 1, 1, 1, 1, 1, 0, 0,
               2048, 2048, 8192, 8192, 10.0, 2.5, 1, 0,
               "TensorRT-LLM KvCacheConfig.free_gpu_memory_fraction: a fraction of the memory "
               "free after weights and runtime buffers (max_batch_size 2048, max_num_tokens "
               "8192 by default); its C++ executor overlaps scheduling with the GPU: 10 µs per "
               "running sequence a step, half of vLLM's 20 (NVIDIA's H100 Llama-3.1-8B FP8 "
               "128/128 run at 2,048 sequences leaves under 5 µs after its GEMMs; B200 and TP 8 "
               "runs saturate earlier; docs/accuracy.md); about 2.5 GiB outside torch per GPU "
               "(its H200 PyTorch-backend log: non-torch 2.55 GiB after loading)", ALL_LAYOUTS),
        Engine("none", "No engine (the model's own need)", "gpu_memory_utilization", 0, 0, 0, 0,
               0, 0, 0, 1024, 256, 8192, 2048, 0.0, 0.0, 1, 0,
               "SPEC's arithmetic: memory × gpu_memory_utilization − overhead_gib_per_gpu − "
               "weights, windows capped at the window, one format for every parameter"),
    ]
}

ENGINE_FIELDS = ("fraction_after_weights", "fraction_after_runtime", "charges_runtime",
                 "profiles_activation", "weights_as_loaded", "window_tail", "pads_layer_groups",
                 "max_num_seqs_large", "max_num_seqs_small", "max_num_batched_tokens_large",
                 "max_num_batched_tokens_small", "us_per_sequence", "non_torch_gib",
                 "mixes_prefill", "eager_prefill")
