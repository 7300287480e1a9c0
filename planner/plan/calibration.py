"""Engine evidence in, planner settings out: how a real engine run maps to `planner calc`.

A calibration point (an engine's startup figures, or a published throughput run) names a model, a
GPU and the engine's settings. ``settings`` turns it into the Scenario and ``--set`` overrides a
user would copy from the engine's command line; ``predict_point`` evaluates them. The accuracy
report (docs/accuracy.md) and ``planner calibrate`` both use this, so they judge the same thing.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from planner.inputs.entries import Catalog
from planner.inputs.scenario import Scenario
from planner.model.units import GiB
from planner.plan.calc import RowEnv, evaluate

# Device names as engines and datasheets print them -> GPU catalog ids (first match wins).
GPU_PATTERNS: list[tuple[str, str]] = [
    (r"GH200", "gh200"), (r"GB200", "gb200"), (r"GB300", "gb300"), (r"B300", "b300"),
    (r"B200", "b200"), (r"H200.*NVL", "h200-nvl"), (r"H200", "h200-sxm"),
    (r"H100.*NVL", "h100-nvl"), (r"H100.*PCIe", "h100-pcie"), (r"H100", "h100-sxm"),
    (r"A100.*40", "a100-40gb-sxm"), (r"A100", "a100-80gb-sxm"), (r"L40S", "l40s"),
    (r"\bL4\b", "l4"), (r"A10G", "a10g"), (r"RTX 4090", "rtx-4090"), (r"RTX 5090", "rtx-5090"),
    (r"RTX PRO 6000", "rtx-pro-6000"), (r"MI355X", "mi355x"), (r"MI325X", "mi325x"),
    (r"MI300X", "mi300x"), (r"MI250X", "mi250x"), (r"Gaudi ?3", "gaudi3"),
]


def gpu_id(device: str, gpus: Catalog) -> str | None:
    """The catalog id of a device name such as 'NVIDIA H100 80GB HBM3', or None."""
    for pattern, gid in GPU_PATTERNS:
        if re.search(pattern, device, flags=re.I) and gid in gpus.entries:
            return gid
    # Else a catalog GPU whose name the device text contains ('NVIDIA GeForce RTX 3090 (24 GB)'
    # holds 'NVIDIA GeForce RTX 3090'), the longest name first.
    text = _squeeze(device)
    named = sorted(((_squeeze(entry.text("name")), gid) for gid, entry in gpus.entries.items()),
                   key=lambda pair: -len(pair[0]))
    return next((gid for name, gid in named if name and name in text), None)


def _squeeze(text: str) -> str:
    return re.sub(r"[^a-z0-9]", "", text.lower().replace("nvidia", "").replace("geforce", ""))


def model_id(name: str, models: Catalog) -> str | None:
    """The catalog id of a Hugging Face repository id (by the entries' hf_id), or None."""
    wanted = name.lower().rstrip("/").split("/")[-2:]
    for mid, entry in models.entries.items():
        hf = entry.text("hf_id").lower()
        if hf and hf.split("/")[-2:] == wanted:
            return mid
    base = _bare(wanted[-1])
    for mid, entry in models.entries.items():
        hf = entry.text("hf_id").lower().split("/")[-1]
        if hf and base == _bare(hf):
            return mid
    return None


def _bare(name: str) -> str:
    """A repository name without vendor prefixes and release suffixes: 'Meta-Llama-3.1-8B-
    Instruct' and 'Llama-3.1-8B' both become 'llama-3.1-8b'; '-FP8' checkpoints and dated
    re-releases ('Qwen3-30B-A3B-Instruct-2507') match too."""
    name = re.sub(r"-(?:19|2\d)[01]\d$", "", name.lower().removeprefix("meta-"))  # -2507
    for suffix in ("-dynamic", "-fp8", "-instruct", "-chat", "-it", "-hf"):
        name = name.removesuffix(suffix)
    return name


def weight_format(quantization: str | None, dtype: str | None = None) -> str:
    text = (quantization or "").lower()
    for needle, fmt in (("mxfp4", "mxfp4"), ("nvfp4", "nvfp4"), ("fp8", "fp8"), ("awq", "int4"),
                        ("gptq", "int4"), ("int4", "int4"), ("int8", "int8"), ("w8a8", "int8")):
        if needle in text:
            return fmt
    return "fp16" if (dtype or "").lower() in ("float16", "fp16", "half") else "bf16"


def kv_format(kv_cache_dtype: str | None) -> str:
    text = (kv_cache_dtype or "auto").lower()
    return "fp8" if text.startswith("fp8") else "bf16"


ENGINE_NAMES = (("sglang", "sglang"), ("tensorrt", "trtllm"), ("trt", "trtllm"), ("vllm", "vllm"))


def engine_of(text: str) -> str:
    lowered = text.lower()
    for needle, engine in ENGINE_NAMES:
        if needle in lowered:
            return engine
    return "vllm"


@dataclass
class Settings:
    """What a user copies from an engine's command line into `planner calc`."""

    scenario: Scenario
    overrides: dict[str, float | str] = field(default_factory=dict)

    def command(self) -> str:
        s = self.scenario
        parts = [f"planner calc --model {s.model} --gpu {s.gpu} --tp {s.tp}",
                 f"--weights {s.weights}", f"--kv {s.kv}", f"--context {s.context}"]
        if s.batch != 1:
            parts.append(f"--batch {s.batch}")
        if s.output:
            parts.append(f"--prompt {s.prompt} --output {s.output}")
        parts += [f"--set {k}={v}" for k, v in self.overrides.items()]
        return " ".join(parts)


def startup_settings(point: Mapping[str, Any], models: Catalog, gpus: Catalog) -> Settings | None:
    """The settings of a startup point, or None when its model or GPU is not in the catalogs."""
    mid = model_id(str(point.get("shape_ref") or point.get("model_id") or ""), models)
    gid = gpu_id(str(point.get("gpu", {}).get("type", "")), gpus)
    if mid is None or gid is None:
        return None
    engine = engine_of(str(point.get("engine", "")))
    overrides: dict[str, float | str] = {"engine": engine}
    fraction = (point.get("gpu_memory_utilization") or point.get("mem_fraction_static")
                or point.get("kv_cache_free_gpu_mem_fraction"))
    if fraction is not None and point.get("gmu_explicit", True) is not False:
        overrides["gpu_memory_utilization"] = float(fraction)
    build = point.get("engine_build") or {}
    seqs = point.get("max_num_seqs") or build.get("max_batch_size")
    tokens = point.get("max_num_batched_tokens") or build.get("max_num_tokens")
    if seqs:
        overrides["max_num_seqs"] = float(seqs)
    if tokens:
        overrides["max_num_batched_tokens"] = float(tokens)
    context = int(point.get("max_model_len") or 8192)
    version = version_of(point.get("engine_version"))
    mla = models.entries[mid].number("kv_lora_rank") > 0
    if engine == "vllm" and point.get("engine_core") == "V0" and not tokens and (
            context <= 32768 or (mla and version < (0, 8))):
        # vLLM V0 left chunked prefill off up to 32K contexts, and for MLA models at any
        # length before 0.8 ("MLA is enabled; forcing chunked prefill and prefix caching to
        # be disabled"), so one step held a whole prompt: max_num_batched_tokens defaulted to
        # max(max_model_len, 2048).
        overrides["max_num_batched_tokens"] = float(max(context, 2048))
    if engine == "vllm":
        overrides.update(sampler_of(version))
    reported = point.get("reported") or {}
    if engine == "vllm" and version >= (0, 21):
        overrides.update(graphs_in_budget(reported.get("cuda_graph_gib_estimated")))
    scenario = Scenario(mid, gid, weight_format(point.get("quantization"), point.get("dtype")),
                        kv_format(point.get("kv_cache_dtype")),
                        int(point.get("tensor_parallel_size") or 1), context, 1,
                        min(2048, context))
    return Settings(scenario, overrides)


# vLLM before 0.17 filtered top-k/top-p by sorting the whole vocabulary in PyTorch: 1.25 GB for
# 256 x 131,072 logits, 37 bytes a logit, against 384 MB (11.5 bytes) for the Triton kernel that
# replaced it (vllm-project/vllm PR #32558's measurement; the kernel landed in PR #33538). The
# profile run's sampler then held 37 bytes a logit rather than the 15 of 0.17 and later.
SORT_SAMPLER_BYTES_PER_LOGIT = 37.0
TRITON_SAMPLER_VERSION = (0, 17)


def sampler_of(version: tuple[int, int]) -> dict[str, float | str]:
    """The sampler_bytes_per_logit of a vLLM version: the PyTorch sort before 0.17, the
    planner's default (the Triton kernel) from 0.17 or when the version is unknown."""
    if (0, 0) < version < TRITON_SAMPLER_VERSION:
        return {"sampler_bytes_per_logit": SORT_SAMPLER_BYTES_PER_LOGIT}
    return {}


def graphs_in_budget(estimate_gib: float | None) -> dict[str, float | str]:
    """The settings of an engine that reserves its CUDA-graph estimate before the KV pool
    (vLLM 0.21 and later), with the estimate it printed when it printed one."""
    found: dict[str, float | str] = {"cuda_graphs_in_budget": 1.0}
    if estimate_gib is not None:
        found["cuda_graph_gib_per_gpu"] = float(estimate_gib)
    return found


def version_of(text: Any) -> tuple[int, int]:
    """(major, minor) of a version text such as '0.22.1' or '0.6.6.post1'; (0, 0) if none."""
    found = re.match(r"\s*(\d+)\.(\d+)", str(text or ""))
    return (int(found.group(1)), int(found.group(2))) if found else (0, 0)


def predict(settings: Settings, models: Catalog, gpus: Catalog) -> RowEnv:
    return evaluate(settings.scenario, models, gpus, settings.overrides)


def kv_gib(env: RowEnv) -> float:
    return float(env.value("kv_pool_bytes_per_gpu")) / GiB  # type: ignore[arg-type]
