"""What an engine's startup log says, as one typed record; the error for a log that says none.

``EngineReport`` holds every figure the parser reads (per GPU, None when the log does not print
it) with the line each came from; ``LogError`` names a log that cannot be read or carries no
engine's KV-cache figures; ``ENGINE_NAMES`` gives each engine's display name.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from planner.errors import PlannerError

ENGINE_NAMES = {"vllm": "vLLM", "sglang": "SGLang", "trtllm": "TensorRT-LLM"}


class LogError(PlannerError):
    """A log file that cannot be read, or that carries no engine's KV-cache figures."""

    def __init__(self, name: str, problem: str, hint: str | None = None,
                 line: int | None = None, shown: str | None = None) -> None:
        self.name = name
        self.problem = problem
        self.hint = hint
        self.line = line
        text = f"{name}, line {line}: {problem}" if line else f"{name}: {problem}"
        if shown is not None:
            text += f"\n  {line:>4} | {shown if len(shown) <= 200 else shown[:197] + '...'}"
        if hint:
            text += f"\n  hint: {hint}"
        super().__init__(text)


@dataclass(frozen=True)
class EngineReport:
    """What an engine printed at startup; every figure is per GPU and None when not printed."""

    engine: str                 # "vllm" | "sglang" | "trtllm"
    engine_version: str | None
    engine_core: str | None     # "V0" | "V1" for vLLM
    model: str | None           # model name/path as the log gives it
    tensor_parallel_size: int | None
    gpu_memory_utilization: float | None   # vLLM; SGLang: mem_fraction_static;
    #                                        TRT: kv_cache_free_gpu_mem_fraction
    memory_fraction_name: str | None       # which of the three the log used
    max_model_len: int | None
    max_num_seqs: int | None
    max_num_batched_tokens: int | None
    kv_cache_dtype: str | None
    dtype: str | None
    quantization: str | None
    total_gib: float | None     # device total the engine saw, when printed
    weights_gib: float | None
    activation_peak_gib: float | None
    non_torch_gib: float | None
    kv_cache_gib: float | None
    kv_cache_tokens: int | None
    gpu_blocks: int | None
    max_concurrency: float | None
    cuda_graph_gib: float | None
    cuda_graph_estimate_gib: float | None = None  # vLLM ≥ 0.21: reserved before the KV pool
    cuda_graphs_in_budget: bool | None = None  # the log says the estimate was deducted
    lines: dict[str, int] = field(default_factory=dict)  # field -> 1-based line it was read from
