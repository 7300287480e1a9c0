"""What the per-engine patterns are built from: value helpers, config readers, the rule type.

A ``Rule`` is a phrase an engine prints (a regular expression) and the report fields it carries;
``rule`` builds one. Shared by the vLLM, SGLang and TensorRT-LLM pattern modules: the number
patterns (``NUM``, ``INT``, ``GIB``) and converters, ``pick_keys`` for ``key=value`` config
reprs, ``typed`` to convert config values to the report's types, and ``command`` to read a
launch command echoed into the log.
"""

from __future__ import annotations

import math
import re
import shlex
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

# ---------------------------------------------------------------------------------------------
# Value helpers

# The patterns take a sign, an exponent and a fraction too, so that a negative or garbled figure
# ("GPU KV cache size: -476,016 tokens") is read and refused with its line rather than skipped.
NUM = r"(-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?)"
INT = r"(-?\d[\d,]*(?:\.\d+)?(?:[eE][-+]?\d+)?)"
GIB = r"\s*Gi?B"
_GROUPED = re.compile(r"\d+|\d{1,3}(?:,\d{3})+")


class BadFigure(ValueError):
    """A figure the engine cannot have meant: negative, not finite, or garbled; the scanner
    reports it with the log's line."""


def as_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise BadFigure(f"the figure {text} is not a finite number")
    if value < 0:
        raise BadFigure(f"the figure {text} is negative; a size or fraction is 0 or more")
    return value


def as_int(text: str) -> int:
    text = text.rstrip(",")
    if text.startswith("-"):
        raise BadFigure(f"the figure {text} is negative; a count is a whole number, 0 or more")
    if not _GROUPED.fullmatch(text):
        raise BadFigure(f"the figure {text} is not a whole number as an engine prints one "
                        "(digits, optionally grouped in threes by commas: 476,016)")
    return int(text.replace(",", ""))


def _opt_int(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        if value < 0:
            raise BadFigure(f"the setting {value} is negative")
        return value
    if isinstance(value, str) and re.fullmatch(INT, value.strip()):
        return as_int(value.strip())
    return None


def _opt_float(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return as_float(repr(value))
    if isinstance(value, str) and re.fullmatch(NUM, value.strip()):
        return as_float(value.strip())
    return None


def _opt_str(value: Any) -> str | None:
    if value is None:
        return None
    text = str(value).strip().strip("'\"")
    if text in ("", "None", "none", "null"):
        return None
    return text.removeprefix("torch.")


def pick_keys(text: str, keys: dict[str, str]) -> dict[str, Any]:
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
class Rule:
    engine: str
    pattern: re.Pattern[str]
    extract: Extract
    source: int = 0                          # lower wins when two wordings give one figure
    anchor: re.Pattern[str] | None = None    # phrase start: join wrapped lines when it matches
    sources: tuple[tuple[str, int], ...] = ()  # a weaker (or stronger) source for some fields

    def source_of(self, name: str) -> int:
        return dict(self.sources).get(name, self.source)


def rule(engine: str, pattern: str, extract: Extract, source: int = 0,
         anchor: str | None = None, sources: dict[str, int] | None = None) -> Rule:
    return Rule(engine, re.compile(pattern), extract, source,
                re.compile(anchor) if anchor else None, tuple((sources or {}).items()))


_INT_FIELDS = ("tensor_parallel_size", "max_model_len", "max_num_seqs", "max_num_batched_tokens")
_STR_FIELDS = ("model", "dtype", "kv_cache_dtype", "quantization")


def typed(values: dict[str, Any]) -> dict[str, Any]:
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


_CMD_VALUE = re.compile(r"^--?[\w-]+$")


def command(flags: dict[str, str], positional_model: bool) -> Extract:
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
        return typed(values)

    return extract
