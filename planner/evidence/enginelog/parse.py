"""Scan a startup log with every engine's rules and build the ``EngineReport`` of the one it is.

``parse_log`` / ``parse_text`` clean each line (ANSI codes, carriage returns), try every rule of
vLLM, SGLang and TensorRT-LLM in that order, join phrases a terminal hard-wrapped, prefer rank 0
over the driver over other workers when several print one figure, pick the engine whose KV-cache
line the log carries, and raise ``LogError`` naming what is missing when there is none.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from planner.evidence.enginelog.report import ENGINE_NAMES, EngineReport, LogError
from planner.evidence.enginelog.rules import BadFigure, Rule
from planner.evidence.enginelog.sglang import SGLANG_RULES
from planner.evidence.enginelog.trtllm import TRTLLM_RULES
from planner.evidence.enginelog.vllm import VLLM_RULES

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


# Every engine's rules in the order they are tried (it breaks ties between equal sources).
_RULES: tuple[Rule, ...] = VLLM_RULES + SGLANG_RULES + TRTLLM_RULES

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


def _scan(lines: list[str], name: str = "<log>") -> list[_Hit]:
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
            try:
                extracted = rule.extract(match)
            except BadFigure as bad:
                raise LogError(name, f"{bad} ({ENGINE_NAMES[rule.engine]} printed "
                               f"'{match.group(0).strip()}')",
                               "the log is corrupt or was edited here; pass the log as the "
                               "engine wrote it", index + 1, line.strip()) from None
            for field_name, value in extracted.items():
                hits.append(_Hit(rule.engine, field_name, value, index + 1,
                                 rule.source_of(field_name), rank))
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
    hits = _scan(lines, name)
    engine = _pick_engine(name, hits)
    return _report(name, engine, hits, lines)


def parse_log(path: Path) -> EngineReport:
    """``parse_text`` on a file; a file that cannot be read is a ``LogError`` naming it."""
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise LogError(str(path), f"cannot read the log: {exc.strerror or exc}") from None
    return parse_text(data.decode("utf-8", errors="replace"), str(path))
