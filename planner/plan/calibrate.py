"""`planner calibrate`: an engine's startup log beside the planner's prediction for the same run.

``calibrate`` parses the log (planner.evidence.enginelog), turns the engine's settings into
``planner calc`` settings (planner.plan.calibration), predicts, and works out the ``--set`` values
that make the planner reproduce the engine's KV cache: the runtime share the engine reserved, pinned
as ``overhead_gib_per_gpu``. Every figure is per GPU; sizes are GiB (2^30 bytes)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from planner.errors import ArgumentError
from planner.evidence.enginelog.parse import parse_log
from planner.evidence.enginelog.report import ENGINE_NAMES, EngineReport
from planner.inputs.entries import Catalog
from planner.inputs.scenario import Scenario
from planner.model.engines import ENGINES
from planner.model.units import GiB
from planner.plan.calc import RowEnv
from planner.plan.calibration import (
    Settings,
    gpu_id,
    graphs_in_budget,
    kv_format,
    model_id,
    predict,
    sampler_of,
    version_of,
    weight_format,
)

VLLM_BLOCK_SIZE = 16  # vLLM's default KV block size: V0 logs print blocks, not tokens

# Where a log names its device: vLLM/SGLang MoE config files ("device_name=NVIDIA_H100_80GB_HBM3"),
# PyTorch warnings and nvidia-smi/rocm-smi tables ("NVIDIA H100 80GB HBM3", "AMD Instinct MI300X").
_DEVICE = re.compile(r"device_name=([\w-]+)|\b((?:NVIDIA|Tesla|AMD Instinct|AMD Radeon|"
                     r"Intel(?:\(R\))? Gaudi) ?[A-Z0-9](?:[\w-]| (?=[\w-])){0,40})")


@dataclass(frozen=True)
class Figure:
    """One per-GPU figure, as the engine printed it (None: not printed) and as predicted."""

    key: str
    label: str
    engine: float | None
    planner: float
    whole: bool = False  # a count (tokens, sequences), not GiB

    @property
    def error_percent(self) -> float | None:
        if self.engine is None or self.engine == 0:
            return None
        return (self.planner - self.engine) / self.engine * 100


@dataclass
class CalibrationResult:
    log: Path
    report: EngineReport
    settings: Settings
    env: RowEnv
    figures: list[Figure]
    reproduce: dict[str, float | str]     # every --set value of the reproducing command
    overhead_basis: str                   # how overhead_gib_per_gpu was worked out
    reproduced_kv_gib: float
    notes: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)  # for stderr: options the log contradicts

    def command(self) -> str:
        return Settings(self.settings.scenario, self.reproduce).command()

    def figure(self, key: str) -> Figure:
        return next(f for f in self.figures if f.key == key)

    def reproduced_error_percent(self) -> float | None:
        """The reproducing command's KV cache against the engine's, in percent."""
        kv = self.figure("kv_cache_gib").engine
        return (self.reproduced_kv_gib - kv) / kv * 100 if kv else None


@dataclass(frozen=True)
class Given:
    """Settings from the command line, for what a log does not print (they win over the log's,
    with a note where the two differ)."""

    tp: int | None = None
    weights: str | None = None
    kv: str | None = None
    context: int | None = None
    overrides: dict[str, float | str] = field(default_factory=dict)


def calibrate(log: Path, models: Catalog, gpus: Catalog, model: str | None = None,
              gpu: str | None = None, given: Given | None = None) -> CalibrationResult:
    """The engine's figures in ``log`` beside the planner's for the same settings."""
    report = parse_log(log)
    notes: list[str] = []
    mid, gid = _identify(log, report, models, gpus, model, gpu, notes)
    warnings = _contradictions(report, gpus, gpu)
    settings, unprinted = _settings(report, mid, gid, notes, given or Given())
    env = predict(settings, models, gpus)
    _check_weights_fit(log, report, env, unprinted)
    figures = _figures(report, env, notes)
    overhead, basis = _overhead(report, env)
    reproduce = {**settings.overrides, "overhead_gib_per_gpu": round(overhead, 2)}
    if overhead < 0:
        notes.append(f"the engine's KV cache needs a negative runtime share ({overhead:.2f} GiB):"
                     " check the memory fraction and the GPU; overhead_gib_per_gpu set to 0")
        reproduce["overhead_gib_per_gpu"] = 0.0
    reproduced = predict(Settings(settings.scenario, reproduce), models, gpus)
    _weights_note(report, env, notes)
    if report.engine == "vllm" and report.engine_core == "V0":
        notes.append("a vLLM V0 log: V0's profile run differs from V1's (the planner models V1), "
                     "so its activation peak and KV cache are not the planner's to match")
    return CalibrationResult(log, report, settings, env, figures, reproduce, basis,
                             _gib(reproduced, "kv_pool_bytes_per_gpu"), notes, warnings)


# ---------------------------------------------------------------------------------------------
# Model, GPU and settings


def device_name(text: str, gpus: Catalog) -> tuple[str, str] | None:
    """The first device name in a log that maps to a catalog GPU: (gpu id, name as printed)."""
    for found in _DEVICE.finditer(text):
        name = (found.group(1) or found.group(2)).replace("_", " ").strip()
        gid = gpu_id(name, gpus)
        if gid is not None:
            return gid, name
    return None


def _identify(log: Path, report: EngineReport, models: Catalog, gpus: Catalog,
              model: str | None, gpu: str | None, notes: list[str]) -> tuple[str, str]:
    problems: list[str] = []
    mid = model or (model_id(report.model, models) if report.model else None)
    if mid is None:
        named = (f"its model '{report.model}' matches no hf_id in the model catalog"
                 if report.model else "it does not name its model")
        problems.append(f"cannot tell which catalog model ran this log: {named}; pass --model "
                        "ID, one of "
                        f"{', '.join(models.entries)} (`planner list models`)")
    elif model is None:
        notes.append(f"model {mid}: the catalog entry for the log's '{report.model}' (by hf_id)")
    gid = gpu
    if gid is None:
        text = Path(log).read_bytes().decode("utf-8", errors="replace")
        found = device_name(text, gpus)
        same = _same_total(report, gpus)
        if found:
            gid = found[0]
            notes.append(f"GPU {gid}: the log names the device '{found[1]}'")
        elif len(same) == 1:
            gid = same[0]
            notes.append(f"GPU {gid}: the only catalog GPU whose memory_engine_gib is the "
                         f"{report.total_gib:g} GiB the log's device reports (pass --gpu if "
                         "another ran it)")
        else:
            problems.append("cannot tell which GPU ran this log: it names no device the GPU "
                            f"catalog knows{_by_memory(report, gpus)}; pass --gpu ID, one of "
                            f"{', '.join(gpus.entries)} (`planner list gpus`)")
    if problems:
        raise ArgumentError(f"{log}: " + "\n  ".join(problems))
    assert mid is not None and gid is not None
    return mid, gid


def _same_total(report: EngineReport, gpus: Catalog) -> list[str]:
    """The catalog GPUs whose engine-visible total is the log's device total, as printed (to
    the hundredth of a GiB the engines print)."""
    if report.total_gib is None:
        return []
    return [g.id for g in gpus.entries.values()
            if abs(float(g.number("memory_engine_gib")) - report.total_gib) < 0.006]


def _contradictions(report: EngineReport, gpus: Catalog, gpu: str | None) -> list[str]:
    """--gpu against the device total the log printed: a GPU of another size did not run it."""
    if gpu is None or report.total_gib is None or gpu not in gpus.entries:
        return []
    expected = float(gpus.entries[gpu].number("memory_engine_gib"))
    if not expected or abs(expected - report.total_gib) <= 0.005 * expected:
        return []
    line = report.lines.get("total_gib")
    where = f" (line {line})" if line else ""
    same = _same_total(report, gpus)
    hint = f"; {', '.join(same)} {'reports' if len(same) == 1 else 'report'} that" if same \
        else ""
    return [f"--gpu {gpu}: the log's device reports {report.total_gib:g} GiB{where}, but "
            f"{gpu} reports {expected:g} GiB to an engine{hint}; the comparison below is "
            f"for {gpu} as asked, check that it is the GPU that ran the log"]


def _by_memory(report: EngineReport, gpus: Catalog) -> str:
    """A hint from the device total the engine printed: catalog GPUs of that size."""
    if report.total_gib is None:
        return ""
    total = report.total_gib
    close = [g.id for g in gpus.entries.values()
             if abs(float(g.number("memory_engine_gib")) - total) < 0.005 * total]
    if not close:
        return ""
    return f" (it saw {report.total_gib:g} GiB, as {', '.join(close)} report)"


def _settings(report: EngineReport, mid: str, gid: str, notes: list[str], given: Given
              ) -> tuple[Settings, list[str]]:
    """The planner settings for the log's run, and the options that would supply what the
    log does not print (--tp, --weights, ...), for the error when they are clearly wrong."""
    overrides: dict[str, float | str] = {"engine": report.engine}
    missing: list[tuple[str, str]] = []  # (what the log does not print, the option that would)
    fraction = _fraction_name(report.engine)
    if report.gpu_memory_utilization is not None:
        overrides["gpu_memory_utilization"] = report.gpu_memory_utilization
    elif "gpu_memory_utilization" not in given.overrides:
        missing.append((f"{fraction} (the planner's default used)",
                        f"--set gpu_memory_utilization=F (the engine's {fraction})"))
    if report.max_num_seqs is not None:
        overrides["max_num_seqs"] = report.max_num_seqs
    if report.max_num_batched_tokens is not None:
        overrides["max_num_batched_tokens"] = report.max_num_batched_tokens
    if report.cuda_graphs_in_budget:
        overrides.update(graphs_in_budget(report.cuda_graph_estimate_gib or report.cuda_graph_gib))
    if report.engine == "vllm":
        overrides.update(sampler_of(version_of(report.engine_version)))
    for name, value in given.overrides.items():
        _replaces(notes, f"--set {name}={value}", overrides.get(name), value)
        overrides[name] = value
    tp = _chosen(notes, "--tp", report.tensor_parallel_size, given.tp)
    if tp is None:
        tp = 1
        missing.append(("the tensor-parallel size (1 assumed)", "--tp N"))
    context = _chosen(notes, "--context", report.max_model_len, given.context)
    if context is None:
        context = Scenario.context
        missing.append((f"the maximum context ({context} assumed)", "--context TOKENS"))
    quantization = report.quantization or _name_format(report.model)
    weights = weight_format(quantization, report.dtype)
    if given.weights is not None:
        printed = weights if quantization or report.dtype else None
        _replaces(notes, "--weights", printed, given.weights)
        weights = given.weights
    elif quantization is None and report.dtype is None:
        missing.append(("the weight dtype and quantization (bf16 assumed)", "--weights FORMAT"))
    kv = kv_format(report.kv_cache_dtype)
    if given.kv is not None:
        _replaces(notes, "--kv", kv if report.kv_cache_dtype else None, given.kv)
        kv = given.kv
    if missing:
        notes.append("the log does not print " + "; ".join(what for what, _ in missing))
    scenario = Scenario(mid, gid, weights, kv, tp, context, 1, min(2048, context))
    return Settings(scenario, overrides), [option for _, option in missing]


def _chosen(notes: list[str], option: str, printed: int | None, given: int | None
            ) -> int | None:
    """The command line's value where given, else the log's."""
    if given is None:
        return printed
    _replaces(notes, option, printed, given)
    return given


def _replaces(notes: list[str], option: str, printed: object, given: object) -> None:
    if printed is not None and str(printed) != str(given):
        notes.append(f"{option} {given} used where the log printed {printed}")


def _check_weights_fit(log: Path, report: EngineReport, env: RowEnv,
                       unprinted: list[str]) -> None:
    """An engine that started held its weights; settings under which the planner's weights
    do not fit on the GPU are not the engine's, so the comparison would mean nothing."""
    if bool(env.value("weights_fit")):
        return
    s = env.scenario
    weights = _gib(env, "weight_bytes_per_gpu")
    usable = _gib(env, "usable_bytes_per_gpu")
    total = _gib(env, "gpu_memory_bytes")
    started = (f", yet the engine started with a KV cache of {report.kv_cache_gib:g} GiB per GPU"
               if report.kv_cache_gib else "")
    options = sorted((o for o in unprinted if not o.startswith("--context")),
                     key=lambda o: o.startswith("--set"))
    listed = (", ".join(options[:-1]) + " and " + options[-1] if len(options) > 1
              else "".join(options))
    hint = (f"pass what the log does not print, as the engine ran: {listed}"
            if options else "check --model and --gpu, and --tp and --weights if given")
    raise ArgumentError(
        f"{log}: the settings read from the log cannot be the engine's: {s.model} at TP {s.tp} "
        f"in {s.weights} needs {weights:.2f} GiB of weights per GPU, more than the "
        f"{usable:.2f} GiB its memory policy leaves for weights and KV on {s.gpu} "
        f"({total:.2f} GiB){started}; {hint}")


def _fraction_name(engine: str) -> str:
    return ENGINES[engine].fraction_setting


def _name_format(name: str | None) -> str | None:
    """A quantized checkpoint's format from its name (Qwen3-235B-A22B-FP8), when the log
    prints no quantization."""
    text = (name or "").lower()
    return text if weight_format(text) != "bf16" else None


# ---------------------------------------------------------------------------------------------
# Figures and the reproducing overhead


def _gib(env: RowEnv, name: str) -> float:
    return float(env.value(name)) / GiB  # type: ignore[arg-type]


def _figures(report: EngineReport, env: RowEnv, notes: list[str]) -> list[Figure]:
    engine = ENGINES[report.engine]
    charged = engine.charges_runtime
    tokens = report.kv_cache_tokens
    if tokens is None and report.engine == "vllm" and report.gpu_blocks is not None:
        tokens = report.gpu_blocks * VLLM_BLOCK_SIZE
        notes.append(f"KV tokens: # GPU blocks {report.gpu_blocks} × {VLLM_BLOCK_SIZE} "
                     "(vLLM's default block size); the log prints no token count")
    figures = [
        Figure("total_gib", "GPU memory", report.total_gib, _gib(env, "gpu_memory_bytes")),
        Figure("weights_gib", "Weights", report.weights_gib, _gib(env, "weight_bytes_per_gpu")),
        Figure("activation_peak_gib", "Activation peak", report.activation_peak_gib,
               charged * engine.profiles_activation * _gib(env, "activation_bytes_per_gpu")),
        Figure("non_torch_gib", "Non-torch memory", report.non_torch_gib,
               charged * _gib(env, "non_torch_bytes_per_gpu")),
        Figure("kv_cache_gib", "KV cache", report.kv_cache_gib,
               _gib(env, "kv_pool_bytes_per_gpu")),
        Figure("kv_cache_tokens", "KV cache tokens", tokens,
               float(env.value("kv_pool_tokens")), True),  # type: ignore[arg-type]
        Figure("max_concurrency", "Max concurrency", report.max_concurrency,
               float(env.value("max_sequences"))),  # type: ignore[arg-type]
    ]
    concurrency = figures[-1]
    if concurrency.engine is not None and abs(concurrency.error_percent or 0) > 1:
        notes.append(f"max concurrency: the engine prints KV tokens ÷ max_model_len "
                     f"({concurrency.engine:g}); the planner counts whole sequences")
    unprinted = [f.label if f.label[1].isupper() else f.label.lower()
                 for f in figures if f.engine is None]
    if unprinted:
        notes.append("not printed by the log: " + ", ".join(unprinted))
    return figures


def _overhead(report: EngineReport, env: RowEnv) -> tuple[float, str]:
    """The runtime share (GiB) that reproduces the engine: what it printed for activations and
    non-torch memory, else what its memory policy leaves once weights and KV are taken."""
    if report.activation_peak_gib is not None and report.non_torch_gib is not None:
        return (report.activation_peak_gib + report.non_torch_gib,
                f"the engine's activation peak {report.activation_peak_gib:g} + non-torch "
                f"{report.non_torch_gib:g} GiB")
    engine = ENGINES[report.engine]
    a, b = engine.fraction_after_weights, engine.fraction_after_runtime
    f = float(env.assumptions["gpu_memory_utilization"])
    total = report.total_gib if report.total_gib is not None else _gib(env, "gpu_memory_bytes")
    weights = (report.weights_gib if report.weights_gib is not None
               else _gib(env, "weight_bytes_per_gpu"))
    kv = report.kv_cache_gib
    if kv is None:  # vLLM V0 prints blocks only; a token count sizes the pool as well
        kv = float(report.kv_cache_tokens or 0) * _gib(env, "kv_bytes_per_token_per_gpu")
    # pool = f × (total − a·weights − b·runtime) − (1 − b)·runtime − (1 − a)·weights
    runtime = (f * total - weights * (f * a - a + 1) - kv) / (1 - b + f * b)
    return runtime, (f"what {ENGINE_NAMES[report.engine]}'s policy leaves of {total:g} GiB × "
                     f"{f:g} after weights {weights:.2f} and KV {kv:.2f} GiB")


def _weights_note(report: EngineReport, env: RowEnv, notes: list[str]) -> None:
    if report.weights_gib is None:
        return
    planner = _gib(env, "weight_bytes_per_gpu")
    if abs(planner - report.weights_gib) <= 0.01 * report.weights_gib:
        return
    s = env.scenario
    loaded = report.weights_gib * GiB * s.tp / 1e9
    notes.append(f"weights differ by more than 1 %: the engine loaded {report.weights_gib:g} GiB "
                 f"per GPU (about {loaded:.1f} GB over {s.tp} GPU(s)), the planner estimates "
                 f"{planner:.2f} GiB; overhead_gib_per_gpu cannot make up for that. The model "
                 f"catalog's checkpoint_bytes and checkpoint_format fields on {s.model} pin "
                 "exact weights (metadata.total_size of the checkpoint's "
                 f"model.safetensors.index.json, with checkpoint_format: {s.weights})")


# ---------------------------------------------------------------------------------------------
# Output


def _number(value: float | None, whole: bool) -> str:
    if value is None:
        return "—"
    return f"{value:,.0f}" if whole else f"{value:,.2f}"


def _percent(value: float | None) -> str:
    return "" if value is None else f"{value:+.1f} %"


def calibration_text(result: CalibrationResult) -> str:
    r, s = result.report, result.settings.scenario
    engine = " ".join([ENGINE_NAMES[r.engine]] + [x for x in (r.engine_version, r.engine_core)
                                                  if x])
    fraction = (f", {r.memory_fraction_name} {r.gpu_memory_utilization:g}"
                if r.memory_fraction_name and r.gpu_memory_utilization is not None else "")
    named = f"the log's {r.model}" if r.model else "the log names none"
    lines = [f"log: {result.log}",
             f"engine: {engine}, TP {s.tp}{fraction}",
             f"model: {s.model} ({named}); GPU: {s.gpu}",
             f"settings: {result.settings.command()}", "",
             f"{'per GPU':<24}{'engine':>12}{'planner':>12}{'error':>10}"]
    for f in result.figures:
        unit = "" if f.whole or f.key == "max_concurrency" else " (GiB)"
        lines.append(f"{f.label + unit:<24}{_number(f.engine, f.whole):>12}"
                     f"{_number(f.planner, f.whole):>12}{_percent(f.error_percent):>10}")
    error = result.reproduced_error_percent()
    shown = "" if error is None else f" ({_percent(error)} against the engine's)"
    lines += ["", "the --set values that reproduce the engine:",
              f"  --set overhead_gib_per_gpu={result.reproduce['overhead_gib_per_gpu']}"
              f"   ({result.overhead_basis})",
              f"  {result.command()}",
              f"  gives a KV cache of {result.reproduced_kv_gib:.2f} GiB per GPU{shown}"]
    if result.notes:
        lines += ["", "notes:"] + [f"  - {note}" for note in result.notes]
    return "\n".join(lines)


def calibration_json(result: CalibrationResult) -> dict[str, object]:
    r = result.report
    return {
        "log": str(result.log),
        "engine": {"id": r.engine, "version": r.engine_version, "core": r.engine_core,
                   "model": r.model, "memory_fraction_name": r.memory_fraction_name},
        "settings": {"command": result.settings.command(),
                     "overrides": dict(result.settings.overrides)},
        "engine_reported": {f.key: f.engine for f in result.figures},
        "planner": {f.key: f.planner for f in result.figures},
        "error_percent": {f.key: f.error_percent for f in result.figures},
        "reproduce": {"set": dict(result.reproduce), "command": result.command(),
                      "overhead_basis": result.overhead_basis,
                      "kv_cache_gib": result.reproduced_kv_gib,
                      "kv_error_percent": result.reproduced_error_percent()},
        "notes": list(result.notes),
        "warnings": list(result.warnings),
    }
