"""The named assumptions (SPEC §5): what the arithmetic cannot know exactly.

Each one has a unit, a default, the range that makes sense and the evidence for the default.
The same names are the workbook's defined names and the ``--set`` names.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

from planner.errors import ArgumentError
from planner.formats import KV_FORMATS, WEIGHT_FORMATS


@dataclass(frozen=True)
class Assumption:
    name: str
    label: str
    unit: str
    default: float | str
    reason: str
    source: str
    minimum: float | None = None
    maximum: float | None = None
    choices: tuple[str, ...] = ()

    def parse(self, text: str) -> float | str:
        """Turn a ``--set`` value into a checked value, or say what would be right."""
        if self.choices:
            value = text.strip().lower()
            if value not in self.choices:
                raise ArgumentError(
                    f"--set {self.name}={text}: must be one of {', '.join(self.choices)}"
                )
            return value
        try:
            number = float(text)
        except ValueError:
            raise ArgumentError(
                f"--set {self.name}={text}: not a number; expected {self.unit} "
                f"between {self.minimum:g} and {self.maximum:g}"
            ) from None
        if not math.isfinite(number):
            raise ArgumentError(f"--set {self.name}={text}: must be a finite number")
        lo, hi = self.minimum, self.maximum
        if (lo is not None and number < lo) or (hi is not None and number > hi):
            raise ArgumentError(
                f"--set {self.name}={text}: out of range; expected {self.unit} "
                f"between {lo:g} and {hi:g} (default {self.default})"
            )
        return number


ASSUMPTIONS: dict[str, Assumption] = {
    a.name: a
    for a in [
        Assumption(
            "gpu_memory_utilization", "GPU memory the engine may use", "fraction", 0.9,
            "vLLM's long-standing default gpu_memory_utilization (0.92 in 2026 releases), a "
            "fraction of total memory that weights, overhead and KV share; TensorRT-LLM's "
            "free_gpu_memory_fraction is 0.9",
            "vLLM vllm/config/cache.py; SGLang docs server_arguments.md; "
            "TensorRT-LLM KvCacheConfig",
            minimum=0.05, maximum=1.0,
        ),
        Assumption(
            "overhead_gib_per_gpu", "Runtime overhead per GPU outside weights and KV", "GiB",
            4.0,
            "vLLM's memory profile of Llama-3-8B on an H100: 1.8 GiB non-torch memory (3.6 GiB "
            "at TP2: NCCL buffers) + 1.3 GiB activation peak + 0.2-1.4 GiB CUDA graphs; "
            "raise to 5-6 GiB for TP>1 or long prompts",
            "vllm-project/vllm issues #10511, #11349, #14452; sglang #8538; "
            "docs/assumption-evidence.md",
            minimum=0.0, maximum=1024.0,
        ),
        Assumption(
            "bandwidth_efficiency", "Achieved fraction of peak HBM bandwidth in decode",
            "fraction", 0.8,
            "STREAM-style triad reaches 0.89 of spec on H100 and H200, 0.83 on A100, 0.74-0.80 "
            "on MI300X; real decode reaches 0.69-0.82 (gpt-fast); 0.8 is 0.9 x the H100 ceiling",
            "AI-benchmarking-guide Azure results; TileOPs h200.yaml; gpt-fast README; "
            "docs/assumption-evidence.md",
            minimum=0.01, maximum=1.0,
        ),
        Assumption(
            "compute_efficiency", "Achieved fraction of dense peak FLOP/s", "fraction", 0.5,
            "H100 training MFU is 0.38-0.48 (Megatron-LM, Llama 3) and the dense GEMM ceiling "
            "0.70-0.83; forward-only prefill falls between",
            "NVIDIA/Megatron-LM README; Azure GEMM results; docs/assumption-evidence.md",
            minimum=0.01, maximum=1.0,
        ),
        Assumption(
            "memory_basis", "GPU memory figure used for sizing", "reported|marketed",
            "reported",
            "Engines size the KV pool from what the device reports (nvidia-smi MiB, e.g. "
            "81,559 MiB for an 'H100 80GB'); 'marketed' uses the decimal GB on the box. "
            "GPUs without a reported figure fall back to marketed GB",
            "SPEC §2; nvidia-smi readings in catalogs/gpus.yaml",
            choices=("reported", "marketed"),
        ),
        Assumption(
            "state_bytes_per_element", "Bytes per element of a linear-attention state",
            "bytes", 4.0,
            "FP32 recurrent state: SGLang's default for Qwen3-Next and the accuracy-safe "
            "setting (vLLM PR #34489); vLLM's 'auto' keeps BF16 (use 2 to match it)",
            "vllm-project/vllm #34489, #39032; sglang docs qwen3.md; "
            "docs/assumption-evidence.md",
            minimum=0.5, maximum=8.0,
        ),
    ]
}

AssumptionValues = Mapping[str, float | str]


def defaults() -> dict[str, float | str]:
    values: dict[str, float | str] = {name: a.default for name, a in ASSUMPTIONS.items()}
    for fmt in WEIGHT_FORMATS.values():
        values[fmt.setting] = fmt.bytes_per_param
    for kv in KV_FORMATS.values():
        values[kv.setting] = kv.bytes_per_element
    return values


def _suggest(name: str, known: list[str]) -> str:
    import difflib

    close = difflib.get_close_matches(name, known, n=1)
    return f" (did you mean '{close[0]}'?)" if close else ""


def parse_overrides(items: tuple[str, ...] | list[str]) -> dict[str, float | str]:
    """``NAME=VALUE`` strings from ``--set`` into checked values; unknown names are errors."""
    out: dict[str, float | str] = {}
    known = list(defaults())
    for item in items:
        if "=" not in item:
            raise ArgumentError(
                f"--set {item}: expected NAME=VALUE, e.g. gpu_memory_utilization=0.85")
        name, _, text = item.partition("=")
        name = name.strip()
        if name in ASSUMPTIONS:
            out[name] = ASSUMPTIONS[name].parse(text)
            continue
        if name in known:  # a format's bytes per parameter or per KV element
            try:
                number = float(text)
            except ValueError:
                number = math.nan
            if not math.isfinite(number) or not 0 < number <= 8:
                raise ArgumentError(
                    f"--set {name}={text}: expected bytes greater than 0 and at most 8"
                )
            out[name] = number
            continue
        raise ArgumentError(
            f"--set {name}: unknown assumption{_suggest(name, known)}; "
            f"known: {', '.join(ASSUMPTIONS)}, bytes_per_param_FORMAT, bytes_per_kv_element_FORMAT"
        )
    return out


def resolve(overrides: Mapping[str, float | str] | None = None) -> dict[str, float | str]:
    values = defaults()
    values.update(overrides or {})
    return values
