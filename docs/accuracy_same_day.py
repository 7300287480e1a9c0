"""docs/accuracy.md, "Context at one engine build": how the time per output token grows with
length when nothing else changes, published against the planner.

`tests/data/calibration/inferencex-same-day.yaml` (written by `tools/inferencex_same_day.py`)
holds InferenceX's nightly DeepSeek-R1 runs of one configuration at 1K/1K and at 1K/8K or 8K/1K
on the same day, so from one launch script and container image. For each day the growth is the
median time per output token at the longer length ÷ at 1K/1K, published and planner (the
planner's `tpot_seconds` at the runs' mean lengths, as one TP group, with the day's KV cache and
memory fraction); their quotient is 1 where the planner's context terms (attention bytes, MLA
decode occupancy, the prefills interleaved into decoding) grow as the engine's step did. The
same runs' 1K/1K level, published ÷ planner by day, shows how far the engine image alone moves
a GPU's step.
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from planner.evidence.measured import MIN_TTFT_RUNS
from planner.inputs.entries import Catalog
from planner.inputs.model_shape import model_class
from planner.inputs.scenario import Scenario
from planner.plan.calibration import Settings, gpu_id, model_id, predict

DATA = (Path(__file__).resolve().parent.parent / "tests" / "data" / "calibration"
        / "inferencex-same-day.yaml")
MODEL = "deepseek-ai/DeepSeek-R1"
ENGINES = {"SGLang": "sglang", "TensorRT-LLM": "trtllm"}
BASE = (1024, 1024)
LONGER = ((1024, 8192), (8192, 1024))


@dataclass(frozen=True)
class Length:
    """One length of a day's group: published and planner time per output token, ms."""

    isl: int
    osl: int
    published_ms: float
    planner_ms: float
    # median time to first token as published, and the planner's prefill_seconds (no queue)
    ttft_ms: float = 0.0
    prefill_ms: float = 0.0


@dataclass(frozen=True)
class Day:
    """One configuration's runs on one day."""

    id: str
    date: str
    gpu: str  # the planner's GPU id
    engine: str
    precision: str
    concurrency: int
    lengths: dict[tuple[int, int], Length]

    def growth(self, length: tuple[int, int]) -> tuple[float, float] | None:
        """Published and planner time per output token at `length` ÷ at 1K/1K."""
        if length not in self.lengths:
            return None
        base, longer = self.lengths[BASE], self.lengths[length]
        return (longer.published_ms / base.published_ms, longer.planner_ms / base.planner_ms)

    @property
    def level(self) -> float:
        """Published ÷ planner time per output token at 1K/1K."""
        base = self.lengths[BASE]
        return base.published_ms / base.planner_ms


def load(path: Path = DATA) -> list[Mapping[str, Any]]:
    return list((yaml.safe_load(path.read_text(encoding="utf-8")) or {}).get("same_day") or [])


def day_of(group: Mapping[str, Any], models: Catalog, gpus: Catalog) -> Day:
    """A group's planner time per output token at each of its lengths."""
    mid, gid = model_id(MODEL, models), gpu_id(str(group["gpu"]), gpus)
    if mid is None or gid is None:
        raise ValueError(f"{group['id']}: {MODEL} or {group['gpu']} is not in the catalogs")
    engine = ENGINES[str(group["engine"])]
    lengths = {}
    for run in group["runs"]:
        kv = run.get("kv_cache_dtype", group.get("kv_cache_dtype"))
        fraction = run.get("memory_fraction", group.get("memory_fraction"))
        overrides: dict[str, float | str] = {"engine": engine}
        if fraction is not None:
            overrides["gpu_memory_utilization"] = float(fraction)
        prompt, output = round(run["mean_input"]), round(run["mean_output"])
        scenario = Scenario(mid, gid, str(group["precision"]), str(kv),
                            int(group["tensor_parallel_size"]), prompt + output,
                            int(group["concurrency"]), prompt, output)
        env = predict(Settings(scenario, overrides), models, gpus)
        key = (int(run["isl"]), int(run["osl"]))
        lengths[key] = Length(key[0], key[1], float(run["median_tpot_ms"]),
                              float(env.value("tpot_seconds")) * 1000,  # type: ignore[arg-type]
                              float(run.get("median_ttft_ms") or 0.0),
                              float(env.value("prefill_seconds")) * 1000)  # type: ignore[arg-type]
    return Day(str(group["id"]), str(group["date"]), gid, engine, str(group["precision"]),
               int(group["concurrency"]), lengths)


def days(models: Catalog, gpus: Catalog, path: Path = DATA) -> list[Day]:
    return [day_of(g, models, gpus) for g in load(path)]


def _label(length: tuple[int, int]) -> str:
    return f"{length[0] // 1024}K/{length[1] // 1024}K"


def growth_cells(all_days: Sequence[Day]) -> dict[tuple[str, str, str, tuple[int, int]],
                                                  list[tuple[float, float]]]:
    """(GPU, engine, precision, length) -> each day's (published, planner) growth."""
    cells: dict[tuple[str, str, str, tuple[int, int]], list[tuple[float, float]]] = \
        defaultdict(list)
    for day in all_days:
        for length in LONGER:
            found = day.growth(length)
            if found:
                cells[(day.gpu, day.engine, day.precision, length)].append(found)
    return dict(cells)


# Concurrency splits the 8K/1K growth: the more sequences decode together, the more 8K-token
# prefills each decode step shares the GPUs with, and the planner's prefill is a lower bound
# (docs/accuracy.md, the time to first token with no queue).
LOADS: tuple[tuple[str, Callable[[Day], bool]], ...] = (
    ("below concurrency 32", lambda day: day.concurrency < 32),
    ("at 32 and above", lambda day: day.concurrency >= 32))


def _quotients(all_days: Sequence[Day], length: tuple[int, int],
               keep: Callable[[Day], bool]) -> list[float]:
    """Published ÷ planner growth to `length` on each kept day that ran it."""
    out = []
    for day in all_days:
        found = day.growth(length)
        if found and keep(day):
            out.append(found[0] / found[1])
    return out


def _within(values: Sequence[float], band: float) -> int:
    return sum(1 for v in values if 1 / (1 + band) <= v <= 1 + band)


def section(models: Catalog, gpus: Catalog, path: Path = DATA) -> list[str]:
    all_days = days(models, gpus, path)
    if not all_days:
        return []
    cells = growth_cells(all_days)
    lines = ["## Context at one engine build", "",
             "InferenceX ran each configuration nightly at 1K/1K, 1K/8K and 8K/1K from one "
             "launch script and container image (`inferencex-same-day.yaml`, "
             f"{len(all_days)} configuration-days of DeepSeek-R1 from its run history, written "
             "by `tools/inferencex_same_day.py`; medians, as the history prints). Within a day "
             "only the lengths differ, so the growth of the time per output token from 1K/1K "
             "is the engine's growth with context at one build. Growth: the longer length's "
             "time per output token ÷ 1K/1K's; published ÷ planner growth above 1: the "
             "engine's step grew faster than the planner's. These runs judge the context "
             "terms only and count in no total above.", ""]
    for length in LONGER:
        quotients = _quotients(all_days, length, lambda day: True)
        if not quotients:
            continue
        by_load = [(label, _quotients(all_days, length, test)) for label, test in LOADS]
        lines.append(f"- {_label(length)} against 1K/1K, {len(quotients)} days: published "
                     f"÷ planner growth median {statistics.median(quotients):.2f}, within "
                     f"±10% on {_within(quotients, 0.10)}; "
                     + "; ".join(f"{label} {statistics.median(q):.2f} ({len(q)} days)"
                                 for label, q in by_load if q) + ".")
    lines += ["", "| GPU | Engine | Weights | Length | Days | Published growth | Planner growth "
              "| Published ÷ planner growth |", "|---|---|---|---|---|---|---|---|"]
    for (gpu, engine, precision, length), pairs in sorted(cells.items()):
        quotient = [p / q for p, q in pairs]
        lines.append(
            f"| {gpu} | {engine} | {precision} | {_label(length)} | {len(pairs)} | "
            f"{statistics.median(p for p, _ in pairs):.2f} | "
            f"{statistics.median(q for _, q in pairs):.2f} | "
            f"{statistics.median(quotient):.2f} ({min(quotient):.2f}-{max(quotient):.2f}) |")
    levels: dict[tuple[str, str, str], list[Day]] = defaultdict(list)
    for day in all_days:
        levels[(day.gpu, day.engine, day.precision)].append(day)
    lines += ["", "The same days' 1K/1K level, published ÷ planner time per output token (above "
              "1: the planner is optimistic), moves with the engine image far more than the "
              "growth does; the lowest and highest day of each configuration:", "",
              "| GPU | Engine | Weights | Days | Median | Lowest (day) | Highest (day) |",
              "|---|---|---|---|---|---|---|"]
    for (gpu, engine, precision), group in sorted(levels.items()):
        low = min(group, key=lambda d: d.level)
        high = max(group, key=lambda d: d.level)
        lines.append(f"| {gpu} | {engine} | {precision} | {len(group)} | "
                     f"{statistics.median(d.level for d in group):.2f} | "
                     f"{low.level:.2f} ({low.date}, c{low.concurrency}) | "
                     f"{high.level:.2f} ({high.date}, c{high.concurrency}) |")
    return lines + first_token_lines(all_days) + [""]


# A first token at this concurrency or below rarely waits on another prompt: a new prompt
# every output-length / concurrency steps, each prefill a small share of that (docs/latency.md).
LOW_LOAD = 4


def first_token_cells(all_days: Sequence[Day], most: int = LOW_LOAD
                      ) -> dict[str, dict[str, list[float]]]:
    """Per GPU and engine, each run's published median time to first token ÷ the planner's
    `prefill_seconds`, over the days run at concurrency `most` or below, every length. At that
    load the published first token also holds, now and then, part of a decode step or of
    another prompt's prefill, which the planner's queue model adds apart: so the ratio leans
    high, the safe side for a margin."""
    cells: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for day in all_days:
        if day.concurrency > most:
            continue
        for length in day.lengths.values():
            if length.ttft_ms > 0 and length.prefill_ms > 0:
                cells[day.gpu][day.engine].append(length.ttft_ms / length.prefill_ms)
    return {gpu: {engine: sorted(v) for engine, v in sorted(engines.items())}
            for gpu, engines in sorted(cells.items())}


def first_token_summary(all_days: Sequence[Day], models: Catalog) -> dict[str, object] | None:
    """What catalogs/measured-accuracy.yaml ships as `ttft_low_load`: the model class the runs
    are of (DeepSeek-R1: MoE), and per GPU and engine the runs and median first-token ratio
    (planner.evidence.measured.ttft_ratio applies a cell that rests on enough runs, to a model
    of that class), or None without a run."""
    cells = first_token_cells(all_days)
    mid = model_id(MODEL, models)
    if not cells or mid is None:
        return None
    every = [r for engines in cells.values() for v in engines.values() for r in v]
    return {"model_class": model_class(models.entries[mid]),
            "concurrency_at_most": LOW_LOAD, "runs": len(every),
            "median_ratio": round(statistics.median(every), 2),
            "by_gpu_engine": {gpu: {engine: {"runs": len(v),
                                             "median_ratio": round(statistics.median(v), 2)}
                                    for engine, v in engines.items()}
                              for gpu, engines in cells.items()}}


def first_token_lines(all_days: Sequence[Day]) -> list[str]:
    """The report's table of first tokens at low load, by GPU and engine."""
    cells = first_token_cells(all_days)
    if not cells:
        return []
    lines = ["", f"The same runs at concurrency {LOW_LOAD} or below give each GPU and engine's "
             "first token: the published median time to first token ÷ the planner's "
             "`prefill_seconds` (no queue; above 1 the planner's first token comes too early). "
             "At that load a first token seldom waits on another prompt, so the ratio leans "
             "high. `planner size` applies a cell of at least "
             f"{MIN_TTFT_RUNS} runs as the first-token margin for an MoE model on that GPU "
             "with that engine (`ttft_margin_ratio`, docs/latency.md), before the engine's "
             "no-queue figure above; a dense model keeps the engine's figure, as its speed "
             "margin keeps to its class:", "",
             "| GPU | Engine | Runs | Median | Lowest | Highest |", "|---|---|---|---|---|---|"]
    for gpu, engines in cells.items():
        for engine, v in engines.items():
            lines.append(f"| {gpu} | {engine} | {len(v)} | {statistics.median(v):.2f} | "
                         f"{v[0]:.2f} | {v[-1]:.2f} |")
    return lines


def image_spread(all_days: Sequence[Day]) -> dict[str, dict[str, dict[str, object]]]:
    """Per GPU and engine, how far one configuration's 1K/1K level (published ÷ planner time
    per output token) moved from one day to another, i.e. with the engine image alone: each
    configuration run on two days or more gives its highest level ÷ its lowest, and the GPU and
    engine the median and largest of those. What `planner calc` and `size` quote beside the
    measured ratio (catalogs/measured-accuracy.yaml)."""
    levels: dict[tuple[str, str, str], list[float]] = defaultdict(list)
    for day in all_days:
        configuration = day.id.removeprefix(f"{day.date}-")
        levels[(day.gpu, day.engine, configuration)].append(day.level)
    moved: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for (gpu, engine, _), found in levels.items():
        if len(found) > 1:
            moved[gpu][engine].append(max(found) / min(found))
    return {gpu: {engine: {"configurations": len(v), "median_moved": round(statistics.median(v), 2),
                           "most_moved": round(max(v), 2)}
                  for engine, v in sorted(engines.items())}
            for gpu, engines in sorted(moved.items())}
