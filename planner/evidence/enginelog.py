"""Read a serving engine's startup log: what vLLM, SGLang or TensorRT-LLM reserved, per GPU.

``parse_log`` / ``parse_text`` recognise the engine from the text and pick its figures from
the lines it prints while starting (see shared/calibration/engine-points.md for what each one
means). The parser is pure: it reads text and returns an ``EngineReport``; it never guesses a
figure the log does not print, except where a line only makes sense combined with another
(SGLang's K + V sizes; vLLM 0.6.4's ``peak_torch_memory``, which includes the weights).

Tolerated: log prefixes (timestamps, ``(VllmWorker rank=0 pid=..)``, ``(Worker_TP0 pid=..)``,
``[... TP0]``), ANSI colour codes, progress bars written with carriage returns, and lines that a
terminal or a copy-paste hard-wrapped (a phrase that breaks off at the end of a line is joined
with the next lines). When several tensor-parallel workers print the same line, rank 0 wins,
then a line with no worker prefix (the driver), then the first one.

Sizes are GiB (2^30 bytes). vLLM's and SGLang's "GB" are also 2^30, so they are read as GiB.
"""

from __future__ import annotations

import ast
import re
import shlex
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from planner.errors import PlannerError

ENGINE_NAMES = {"vllm": "vLLM", "sglang": "SGLang", "trtllm": "TensorRT-LLM"}


class LogError(PlannerError):
    """A log file that cannot be read, or that carries no engine's KV-cache figures."""

    def __init__(self, name: str, problem: str, hint: str | None = None) -> None:
        self.name = name
        self.problem = problem
        self.hint = hint
        text = f"{name}: {problem}"
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


# ---------------------------------------------------------------------------------------------
# Line handling

_ANSI = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b[@-Z\\-_]")

# Where one log record starts: worker prefixes such as "(APIServer pid=1)", then a level word
# (vLLM), a bracketed date or time (SGLang, TensorRT-LLM), or a "[TensorRT-LLM]" tag.
_RECORD_START = re.compile(
    r"^\s*(?:\([^()]*\)\s*)*"
    r"(?:(?:INFO|WARNING|WARN|DEBUG|ERROR|CRITICAL)\b"
    r"|\[\d{4}-\d\d-\d\d|\[\d\d:\d\d:\d\d|\[\d\d/\d\d/\d{4}-"
    r"|\[TensorRT-LLM\]|\[TRT-LLM\]|\[rank\d+\])")

_MAX_JOINED = 3  # continuation lines joined to a phrase that breaks off at the end of a line

# Rank of the worker that printed a line, read from the text before the matched phrase.
_RANK_PATTERNS = (
    re.compile(r"Worker_TP(\d+)"),
    re.compile(r"\brank=(\d+)"),
    re.compile(r"\[rank(\d+)\]"),
    re.compile(r"\[[^\[\]]*\bTP(\d+)\b[^\[\]]*\]"),
)
_UNNUMBERED_WORKER = re.compile(r"\(VllmWorkerProcess\b|\(Worker\b|\(RayWorkerWrapper\b")


def _rank_order(prefix: str) -> int:
    """0 for rank 0, 1 for a line no worker printed (the driver), 2 for an unnumbered worker,
    3 for another rank: the order in which duplicates of one figure are preferred."""
    for pattern in _RANK_PATTERNS:
        found = pattern.search(prefix)
        if found:
            return 0 if int(found.group(1)) == 0 else 3
    return 2 if _UNNUMBERED_WORKER.search(prefix) else 1


def _clean(line: str) -> str:
    return _ANSI.sub("", line).rstrip("\r")


# ---------------------------------------------------------------------------------------------
# Value helpers

NUM = r"(\d+(?:\.\d+)?)"
INT = r"(\d[\d,]*)"
GIB = r"\s*Gi?B"


def _float(text: str) -> float:
    return float(text)


def _int(text: str) -> int:
    return int(text.replace(",", ""))


def _opt_int(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and re.fullmatch(r"\d[\d,]*", value.strip()):
        return _int(value.strip())
    return None


def _opt_float(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, str) and re.fullmatch(NUM, value.strip()):
        return float(value)
    return None


def _opt_str(value: Any) -> str | None:
    if value is None:
        return None
    text = str(value).strip().strip("'\"")
    if text in ("", "None", "none", "null"):
        return None
    return text.removeprefix("torch.")


def _pick_keys(text: str, keys: dict[str, str]) -> dict[str, Any]:
    """``key=value`` pairs of a config repr (``model='x', tp_size=2, dtype=torch.bfloat16``);
    ``keys`` maps the log's key to a report field. Quoted values keep their text."""
    out: dict[str, Any] = {}
    for key, name in keys.items():
        found = re.search(rf"(?<![\w.]){re.escape(key)}=('[^']*'|\"[^\"]*\"|[^,)\s]+)", text)
        if found:
            out[name] = found.group(1)
    return out


# ---------------------------------------------------------------------------------------------
# Rules: a phrase an engine prints, and the figures it carries

Extract = Callable[[re.Match[str]], dict[str, Any]]


@dataclass(frozen=True)
class _Rule:
    engine: str
    pattern: re.Pattern[str]
    extract: Extract
    source: int = 0                          # lower wins when two wordings give one figure
    anchor: re.Pattern[str] | None = None    # phrase start: join wrapped lines when it matches
    sources: tuple[tuple[str, int], ...] = ()  # a weaker (or stronger) source for some fields

    def source_of(self, name: str) -> int:
        return dict(self.sources).get(name, self.source)


def _rule(engine: str, pattern: str, extract: Extract, source: int = 0,
          anchor: str | None = None, sources: dict[str, int] | None = None) -> _Rule:
    return _Rule(engine, re.compile(pattern), extract, source,
                 re.compile(anchor) if anchor else None, tuple((sources or {}).items()))


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
        out.update(_typed(_pick_keys(match.group(2), _VLLM_CONFIG_KEYS)))
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
    return _typed(values)


_INT_FIELDS = ("tensor_parallel_size", "max_model_len", "max_num_seqs", "max_num_batched_tokens")
_STR_FIELDS = ("model", "dtype", "kv_cache_dtype", "quantization")


def _typed(values: dict[str, Any]) -> dict[str, Any]:
    """Config values converted to the report's types; a value of the wrong kind is dropped,
    an explicit None (``quantization=None``) is kept."""
    out: dict[str, Any] = {}
    for name, value in values.items():
        if name in _INT_FIELDS:
            number = _opt_int(value)
            if number is not None:
                out[name] = number
        elif name == "gpu_memory_utilization":
            fraction = _opt_float(value)
            if fraction is not None:
                out[name] = fraction
        elif name in _STR_FIELDS:
            out[name] = _opt_str(value)
    return out


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


_CMD_VALUE = re.compile(r"^--?[\w-]+$")

_VLLM_FLAGS = {
    "--model": "model", "--tensor-parallel-size": "tensor_parallel_size",
    "-tp": "tensor_parallel_size", "--gpu-memory-utilization": "gpu_memory_utilization",
    "--max-model-len": "max_model_len", "--max-num-seqs": "max_num_seqs",
    "--max-num-batched-tokens": "max_num_batched_tokens", "--kv-cache-dtype": "kv_cache_dtype",
    "--dtype": "dtype", "--quantization": "quantization", "-q": "quantization",
}
_SGLANG_FLAGS = {
    "--model-path": "model", "--model": "model", "--tp-size": "tensor_parallel_size",
    "--tp": "tensor_parallel_size", "--mem-fraction-static": "gpu_memory_utilization",
    "--context-length": "max_model_len", "--max-running-requests": "max_num_seqs",
    "--chunked-prefill-size": "max_num_batched_tokens", "--kv-cache-dtype": "kv_cache_dtype",
    "--dtype": "dtype", "--quantization": "quantization",
}


def _command(flags: dict[str, str], positional_model: bool) -> Extract:
    """A launch command echoed into the log (``vllm serve MODEL --max-model-len 8192``): the
    weakest source, used only for what no engine line states."""

    def extract(match: re.Match[str]) -> dict[str, Any]:
        text = match.group(1)
        try:
            tokens = shlex.split(text)
        except ValueError:
            tokens = text.split()
        values: dict[str, Any] = {}
        index = 0
        unknown_seen = False
        while index < len(tokens):
            token = tokens[index]
            if token.startswith("-"):
                name, _, inline = token.partition("=")
                name = name.replace("_", "-") if name.startswith("--") else name
                target = flags.get(name)
                if target is None:
                    unknown_seen = True
                    index += 1
                    continue
                if inline:
                    values.setdefault(target, inline)
                    index += 1
                elif index + 1 < len(tokens) and not _CMD_VALUE.match(tokens[index + 1]):
                    values.setdefault(target, tokens[index + 1])
                    index += 2
                else:
                    index += 1
                continue
            if positional_model and not unknown_seen:
                values.setdefault("model", token)
            unknown_seen = True  # only the first bare word can be the model
            index += 1
        return _typed(values)

    return extract


_CORE_HINT = {"engine_core": 1}  # a line only one vLLM core prints: weaker than its banner

_RULES: tuple[_Rule, ...] = (
    # --- vLLM: configuration
    _rule("vllm", r"Initializing a V1 LLM engine \(v([^)\s]+)\) with config: (.*)",
          _vllm_config("V1")),
    _rule("vllm", r"Initializing an LLM engine \(v([^)\s]+)\) with config: (.*)",
          _vllm_config("V0"), sources={"engine_core": 2}),
    _rule("vllm", r"vLLM API server version (\S+)", lambda m: {"engine_version": m.group(1)}, 1),
    _rule("vllm", r"non-default args: (\{.*\})", _vllm_non_default, 1),
    _rule("vllm", r"Chunked prefill is enabled with max_num_batched_tokens=" + INT,
          lambda m: {"max_num_batched_tokens": _int(m.group(1))}),
    _rule("vllm", r"Using max model len " + INT, lambda m: {"max_model_len": _int(m.group(1))}, 1),
    _rule("vllm", r"Defaulting max_num_seqs to " + INT + r" for ",
          lambda m: {"max_num_seqs": _int(m.group(1))}, 1),
    _rule("vllm", r"Defaulting max_num_batched_tokens to " + INT + r" for ",
          lambda m: {"max_num_batched_tokens": _int(m.group(1))}, 1),
    _rule("vllm", r"(?:^|[\s;&|])vllm serve\s+(.*)", _command(_VLLM_FLAGS, True), 5),
    _rule("vllm", r"-m vllm\.entrypoints\.openai\.api_server\s+(.*)",
          _command(_VLLM_FLAGS, False), 5),
    # --- vLLM: memory
    _rule("vllm", r"Model loading took " + NUM + GIB,
          lambda m: {"weights_gib": _float(m.group(1))}),
    _rule("vllm", r"Loading model weights took " + NUM + GIB,
          lambda m: {"weights_gib": _float(m.group(1))}),
    _rule("vllm", r"total_gpu_memory\s*\(\s*" + NUM + GIB + r"\s*\)\s*x\s*gpu_memory_utilization"
          r"\s*\(\s*" + NUM + r"\s*\)",
          lambda m: {"total_gib": _float(m.group(1)),
                     "gpu_memory_utilization": _float(m.group(2))}, 1, r"total_gpu_memory\s*\("),
    _rule("vllm", r"model\s+weights\s+take\s*" + NUM + GIB,
          lambda m: {"weights_gib": _float(m.group(1))}, 1, r"model\s+weights\s+take"),
    _rule("vllm", r"non_torch_memory\s+takes\s*" + NUM + GIB,
          lambda m: {"non_torch_gib": _float(m.group(1))}, 0, r"non_torch_memory\s+takes"),
    _rule("vllm", r"PyTorch\s+activation\s+peak\s+memory\s+takes\s*" + NUM + GIB,
          lambda m: {"activation_peak_gib": _float(m.group(1))}, 0,
          r"PyTorch\s+activation\s+peak"),
    _rule("vllm", r"the\s+rest\s+of\s+the\s+memory\s+reserved\s+for\s+KV\s+Cache\s+is\s*"
          + NUM + GIB, lambda m: {"kv_cache_gib": _float(m.group(1))}, 1,
          r"the\s+rest\s+of\s+the\s+memory"),
    _rule("vllm", r"Memory profiling results:(.*\bgpu_memory_utilization=\d+(?:\.\d+)?)(?!\d)",
          _vllm_profile_results, 1, r"Memory profiling results:"),
    _rule("vllm", r"torch peak memory increase: " + NUM + GIB,
          lambda m: {"activation_peak_gib": _float(m.group(1))}),
    _rule("vllm", r"non-torch forward increase memory: " + NUM + GIB,
          lambda m: {"non_torch_gib": _float(m.group(1))}),
    _rule("vllm", r"; weights memory: " + NUM + GIB,
          lambda m: {"weights_gib": _float(m.group(1))}, 1),
    _rule("vllm", r"Free memory on device (?:\S+ )?\(" + NUM + "/" + NUM + r" GiB\) on startup"
          r"(?:\.|,?) (?:is less than )?[Dd]esired GPU memory utilization (?:is )?\(" + NUM,
          lambda m: {"total_gib": _float(m.group(2)),
                     "gpu_memory_utilization": _float(m.group(3))}, 2),
    _rule("vllm", r"Actual usage is " + NUM + r" GiB for weight, " + NUM + r" GiB for peak "
          r"activation, " + NUM + r" GiB for non-torch memory",
          lambda m: {"weights_gib": _float(m.group(1)),
                     "activation_peak_gib": _float(m.group(2)),
                     "non_torch_gib": _float(m.group(3))}, 2),
    _rule("vllm", r"worker init memory snapshot: .*\btotal_memory=" + NUM + GIB,
          lambda m: {"total_gib": _float(m.group(1))}, 3),
    # --- vLLM: the KV cache
    _rule("vllm", r"Available KV cache memory: " + NUM + GIB,
          lambda m: {"kv_cache_gib": _float(m.group(1)), "engine_core": "V1"},
          sources=_CORE_HINT),
    _rule("vllm", r"GPU KV cache size: " + INT + r" tokens",
          lambda m: {"kv_cache_tokens": _int(m.group(1)), "engine_core": "V1"},
          sources=_CORE_HINT),
    _rule("vllm", r"Maximum concurrency for " + INT + r" tokens per request: " + NUM + r"x",
          lambda m: {"max_concurrency": _float(m.group(2)), "max_model_len": _int(m.group(1))},
          sources={"max_model_len": 2}),
    _rule("vllm", r"# (?:GPU|CUDA) blocks: " + INT + r", # CPU blocks: " + INT,
          lambda m: {"gpu_blocks": _int(m.group(1)), "engine_core": "V0"},
          sources=_CORE_HINT),
    _rule("vllm", r"# GPU blocks: " + INT + r"\s*$",
          lambda m: {"gpu_blocks": _int(m.group(1)), "engine_core": "V1"},
          sources=_CORE_HINT),
    _rule("vllm", r"initialization after num_gpu_blocks is: " + INT,
          lambda m: {"gpu_blocks": _int(m.group(1)), "engine_core": "V1"},
          sources=_CORE_HINT),
    _rule("vllm", r"Graph capturing finished in \d+ secs?, took " + NUM + GIB,
          lambda m: {"cuda_graph_gib": _float(m.group(1))}),
    _rule("vllm", r"CUDA graph pool memory: " + NUM + r" GiB \(actual\)",
          lambda m: {"cuda_graph_gib": _float(m.group(1))}, 1),
    _rule("vllm", r"Estimated CUDA graph memory: " + NUM + r" GiB total",
          lambda m: {"cuda_graph_estimate_gib": _float(m.group(1))}),
    _rule("vllm", r"CUDA graph memory profiling is enabled",
          lambda m: {"cuda_graphs_in_budget": True}),
    # --- SGLang
    _rule("sglang", r"server_args=ServerArgs\((.*)\)", lambda m: _sglang_args(m.group(1)),
          sources={"max_model_len": 1, "max_num_seqs": 1, "max_num_batched_tokens": 1,
                   "dtype": 1, "kv_cache_dtype": 1, "quantization": 1}),
    _rule("sglang", r"-m sglang\.[\w.]+\s+(.*)", _command(_SGLANG_FLAGS, False), 5),
    _rule("sglang", r"Load weight end\..*?\bmem usage=" + NUM + GIB,
          lambda m: {"weights_gib": _float(m.group(1))}),
    _rule("sglang", r"Load weight end\..*?\bdtype=torch\.(\w+)", lambda m: {"dtype": m.group(1)}),
    _rule("sglang", r"Load weight end\..*?\bquant=(\w+)", lambda m: {"quantization": m.group(1)}),
    _rule("sglang", r"Using KV cache dtype: torch\.(\w+)",
          lambda m: {"kv_cache_dtype": m.group(1)}),
    _rule("sglang", r"KV Cache is allocated\. #tokens: " + INT + r", K size: " + NUM + GIB
          + r", V size: " + NUM + GIB,
          lambda m: {"kv_cache_tokens": _int(m.group(1)),
                     "kv_cache_gib": round(_float(m.group(2)) + _float(m.group(3)), 2)}),
    _rule("sglang", r"KV Cache is allocated\. #tokens: " + INT + r", KV size: " + NUM + GIB,
          lambda m: {"kv_cache_tokens": _int(m.group(1)), "kv_cache_gib": _float(m.group(2))}),
    _rule("sglang", r"KV Cache is allocated\. K size: " + NUM + GIB + r", V size: " + NUM + GIB,
          lambda m: {"kv_cache_gib": round(_float(m.group(1)) + _float(m.group(2)), 2)}),
    _rule("sglang", r"max_total_num_tokens=" + INT, lambda m: _sglang_totals(m),
          sources={"kv_cache_tokens": 1}),
    _rule("sglang", r"Capture cuda graph end\. Time elapsed: [\d.]+ s\. mem usage=" + NUM + GIB,
          lambda m: {"cuda_graph_gib": _float(m.group(1))}),
    # --- TensorRT-LLM
    _rule("trtllm", r"TensorRT-LLM version: (\S+)", lambda m: {"engine_version": m.group(1)}),
    _rule("trtllm", r"Allocated " + NUM + r" GiB for max tokens in paged KV cache \(" + INT
          + r"\)", lambda m: {"kv_cache_gib": _float(m.group(1)),
                              "kv_cache_tokens": _int(m.group(2))}),
    _rule("trtllm", r"Memory usage when calculating max tokens in paged kv cache: total: " + NUM
          + r" GiB", lambda m: {"total_gib": _float(m.group(1))}),
    _rule("trtllm", r"Number of blocks in KV cache primary pool: " + INT,
          lambda m: {"gpu_blocks": _int(m.group(1))}),
    _rule("trtllm", r"\bprimary blocks=" + INT, lambda m: {"gpu_blocks": _int(m.group(1))}, 1),
    _rule("trtllm", r"\bmax_seq_len=" + INT + r", max_num_requests=" + INT
          + r", max_num_tokens=" + INT,
          lambda m: {"max_model_len": _int(m.group(1)), "max_num_seqs": _int(m.group(2)),
                     "max_num_batched_tokens": _int(m.group(3))}),
    _rule("trtllm", r"Memory used after loading model weights \(inside torch\) in memory usage "
          r"profiling: " + NUM + GIB, lambda m: {"weights_gib": _float(m.group(1))}),
    _rule("trtllm", r"kv_cache_free_gpu_mem(?:ory)?_fraction[:=]\s*" + NUM,
          lambda m: {"gpu_memory_utilization": _float(m.group(1))}),
    _rule("trtllm", r"\bfree_gpu_memory_fraction=" + NUM,
          lambda m: {"gpu_memory_utilization": _float(m.group(1))}, 1),
)

_SGLANG_ARG_KEYS = {
    "model_path": "model", "tp_size": "tensor_parallel_size",
    "mem_fraction_static": "gpu_memory_utilization", "context_length": "max_model_len",
    "max_running_requests": "max_num_seqs", "chunked_prefill_size": "max_num_batched_tokens",
    "kv_cache_dtype": "kv_cache_dtype", "dtype": "dtype", "quantization": "quantization",
}


def _sglang_args(text: str) -> dict[str, Any]:
    """The request: ``None`` means "not set" (dropped, except quantization), and a dtype of
    "auto" is kept as the log says it; what the engine resolved, printed later, wins."""
    values = _typed(_pick_keys(text, _SGLANG_ARG_KEYS))
    return {k: v for k, v in values.items() if v is not None or k == "quantization"}


def _sglang_totals(match: re.Match[str]) -> dict[str, Any]:
    """What the scheduler settled on: ``max_total_num_tokens=N, chunked_prefill_size=..,
    max_running_requests=.., context_len=..`` (older logs print no other token count)."""
    text = match.string[match.start():]
    out: dict[str, Any] = {"kv_cache_tokens": _int(match.group(1))}
    for key, name in (("chunked_prefill_size", "max_num_batched_tokens"),
                      ("max_running_requests", "max_num_seqs"), ("context_len", "max_model_len")):
        found = re.search(rf"\b{key}=(\d+)", text)
        if found:
            out[name] = int(found.group(1))
    return out


# What each engine's KV line looks like, for the messages.
_KV_LINES = {
    ("vllm", "V1"): "'GPU KV cache size: N tokens' or 'Available KV cache memory: X GiB'",
    ("vllm", "V0"): "'# GPU blocks: N, # CPU blocks: M'",
    ("vllm", None): "'GPU KV cache size: N tokens' (vLLM V1) or '# GPU blocks: N' (vLLM V0)",
    ("sglang", None): "'KV Cache is allocated. #tokens: N' or 'max_total_num_tokens=N'",
    ("trtllm", None): "'[MemUsageChange] Allocated X GiB for max tokens in paged KV cache (N)'",
}
_ANY_KV_LINE = ("no 'GPU KV cache size: N tokens' (vLLM V1), '# GPU blocks: N' (vLLM V0), "
                "'KV Cache is allocated. #tokens: N' (SGLang) or 'Allocated X GiB for max tokens "
                "in paged KV cache (N)' (TensorRT-LLM) line found")
_KV_FIELDS = ("kv_cache_tokens", "kv_cache_gib", "gpu_blocks")
_FAILURE = re.compile(r"\b(?:\w*Error|\w*Exception|CUDA out of memory)\b:?\s")


# ---------------------------------------------------------------------------------------------
# Scanning

@dataclass(frozen=True)
class _Hit:
    engine: str
    name: str
    value: Any
    line: int
    source: int
    rank: int

    def order(self) -> tuple[int, int, int]:
        return (self.source, self.rank, self.line)


def _scan(lines: list[str]) -> list[_Hit]:
    hits: list[_Hit] = []
    for index, line in enumerate(lines):
        if not line.strip():
            continue
        for rule in _RULES:
            match = rule.pattern.search(line)
            text = line
            if match is None and rule.anchor is not None and rule.anchor.search(line):
                text, match = _join(lines, index, rule.pattern)
            if match is None:
                continue
            rank = _rank_order(text[:match.start()])
            for name, value in rule.extract(match).items():
                hits.append(_Hit(rule.engine, name, value, index + 1, rule.source_of(name),
                                 rank))
    return hits


def _join(lines: list[str], index: int,
          pattern: re.Pattern[str]) -> tuple[str, re.Match[str] | None]:
    """The phrase at ``lines[index]`` continued over hard-wrapped lines (joined as they are:
    a terminal wraps mid-word, so nothing is inserted between them)."""
    text = lines[index]
    for following in lines[index + 1:index + 1 + _MAX_JOINED]:
        if not following.strip() or _RECORD_START.match(following):
            break
        text += following
        match = pattern.search(text)
        if match:
            return text, match
    return text, None


def _best(hits: list[_Hit], name: str) -> _Hit | None:
    candidates = [hit for hit in hits if hit.name == name]
    return min(candidates, key=_Hit.order) if candidates else None


def _pick_engine(name: str, hits: list[_Hit]) -> str:
    with_kv: dict[str, int] = {}
    for hit in hits:
        if hit.name in _KV_FIELDS and hit.engine not in with_kv:
            with_kv[hit.engine] = hit.line
    if len(with_kv) > 1:
        found = ", ".join(f"{ENGINE_NAMES[e]} at line {n}" for e, n in sorted(
            with_kv.items(), key=lambda item: item[1]))
        raise LogError(name, f"the log mixes the startup of several engines ({found})",
                       "give planner calibrate one engine's log at a time")
    if with_kv:
        return next(iter(with_kv))
    counts: dict[str, int] = {}
    for hit in hits:
        counts[hit.engine] = counts.get(hit.engine, 0) + 1
    if not counts:
        raise LogError(name, "no serving-engine startup recognised: " + _ANY_KV_LINE,
                       "pass the log a vLLM, SGLang or TensorRT-LLM server prints while it "
                       "starts (its stdout/stderr, or the container's log)")
    return max(counts, key=lambda engine: counts[engine])


def _missing_kv(name: str, engine: str, core: str | None, lines: list[str]) -> LogError:
    expected = _KV_LINES.get((engine, core)) or _KV_LINES[(engine, None)]
    failure = next(((number, text.strip()) for number, text in enumerate(lines, 1)
                    if _FAILURE.search(text)), None)
    if failure:
        number, text = failure
        shown = text if len(text) <= 200 else text[:197] + "..."
        hint = (f"the engine seems to have stopped before sizing its KV cache; line {number}: "
                f"{shown}")
    else:
        hint = ("the log may end before the engine finished starting; capture it until the "
                "server reports it is ready")
    what = ENGINE_NAMES[engine] + (f" {core}" if core else "")
    return LogError(name, f"a {what} log, but no {expected} line found", hint)


def _report(name: str, engine: str, hits: list[_Hit], lines: list[str]) -> EngineReport:
    own = [hit for hit in hits if hit.engine == engine]
    values: dict[str, Any] = {}
    where: dict[str, int] = {}

    def take(field_name: str) -> Any:
        hit = _best(own, field_name)
        if hit is None:
            return None
        if hit.value is not None:
            where[field_name] = hit.line
        return hit.value

    for field_name in ("engine_version", "engine_core", "model", "tensor_parallel_size",
                       "gpu_memory_utilization", "max_model_len", "max_num_seqs",
                       "max_num_batched_tokens", "kv_cache_dtype", "dtype", "quantization",
                       "total_gib", "weights_gib", "activation_peak_gib", "non_torch_gib",
                       "kv_cache_gib", "kv_cache_tokens", "gpu_blocks", "max_concurrency",
                       "cuda_graph_gib", "cuda_graph_estimate_gib", "cuda_graphs_in_budget"):
        values[field_name] = take(field_name)

    if values["activation_peak_gib"] is None and values["weights_gib"] is not None:
        peak = _best(own, "_peak_torch_gib")  # vLLM 0.6.4: peak_torch_memory includes weights
        if peak is not None:
            values["activation_peak_gib"] = round(peak.value - values["weights_gib"], 2)
            where["activation_peak_gib"] = peak.line
    if engine != "vllm":
        values["engine_core"] = None
        where.pop("engine_core", None)

    if all(values[key] is None for key in _KV_FIELDS):
        raise _missing_kv(name, engine, values["engine_core"], lines)

    fraction = None
    if values["gpu_memory_utilization"] is not None:
        fraction = {"vllm": "gpu_memory_utilization", "sglang": "mem_fraction_static",
                    "trtllm": "kv_cache_free_gpu_mem_fraction"}[engine]
    return EngineReport(engine=engine, memory_fraction_name=fraction, lines=where, **values)


def parse_text(text: str, name: str = "<log>") -> EngineReport:
    """The engine's startup figures in ``text``; ``name`` names the log in error messages."""
    if not text.strip():
        raise LogError(name, "the log is empty",
                       "pass the log a vLLM, SGLang or TensorRT-LLM server prints while it starts")
    lines = [_clean(line) for line in text.lstrip("\ufeff").split("\n")]
    hits = _scan(lines)
    engine = _pick_engine(name, hits)
    return _report(name, engine, hits, lines)


def parse_log(path: Path) -> EngineReport:
    """``parse_text`` on a file; a file that cannot be read is a ``LogError`` naming it."""
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise LogError(str(path), f"cannot read the log: {exc.strerror or exc}") from None
    return parse_text(data.decode("utf-8", errors="replace"), str(path))
