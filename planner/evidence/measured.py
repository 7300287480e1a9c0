"""How close the planner came to real engines: `catalogs/measured-accuracy.yaml`, which
`docs/generate_accuracy.py` writes with `docs/accuracy.md` from the calibration data (a test
keeps it current). The HTML summary and `planner calc` quote it."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import yaml

from planner.inputs.catalog import PROJECT_ROOT
from planner.model.engines import ENGINES

MEASURED = PROJECT_ROOT / "catalogs" / "measured-accuracy.yaml"


@cache
def load_measured(path: Path = MEASURED) -> Mapping[str, Any] | None:
    """The shipped summary, or None where a copy of the planner lacks it."""
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError):
        return None
    return data if isinstance(data, Mapping) else None


CLASS_LABELS = {"dense": "dense", "moe": "MoE"}


def speed_on(gpu: str, engine: str, data: Mapping[str, Any] | None = None,
             model_class: str | None = None) -> dict[str, object]:
    """Steady-state serving-speed figures for one GPU and one engine (None where no published
    run was compared), from the shipped summary unless `data` is given; with `model_class`
    ("dense" or "moe") also that GPU, engine and class (`gpu_engine_class`)."""
    data = load_measured() if data is None else data
    out: dict[str, object] = {"gpu": None, "engine": None, "gpu_and_engine": None}
    if data:
        out = {"gpu": data["steady_state_by_gpu"].get(gpu),
               "engine": data["steady_state_by_engine"].get(engine),
               "gpu_and_engine": data.get("steady_state_by_gpu_and_engine", {}).get(gpu, {})
               .get(engine)}
    if model_class is not None:
        out["model_class"] = model_class
        out["gpu_engine_class"] = _cell(gpu, engine, model_class, data)
    return out


def _cell(gpu: str, engine: str, model_class: str, data: Mapping[str, Any] | None
          ) -> Mapping[str, Any] | None:
    """Exactly that GPU, engine and model class, or None: never a wider group's figures."""
    by_class = ((data or {}).get("steady_state_by_gpu_engine_class") or {}).get(gpu) or {}
    cell = (by_class.get(engine) or {}).get(model_class)
    return cell if isinstance(cell, Mapping) and cell.get("runs") else None


@dataclass(frozen=True)
class SpeedRatio:
    """Planner ÷ published steady-state output tokens/s for one GPU, engine and model class:
    the median and the interquartile ratios over `runs` published runs, and how they were got.
    Above 1 the planner was optimistic. Where no run was measured for that triple every ratio
    is 1.0 and `runs` 0: no correction, and `basis` says so."""

    median: float
    q1: float
    q3: float
    runs: int
    basis: str


def _engine_label(engine: str) -> str:
    return ENGINES[engine].label.split(" (")[0] if engine in ENGINES else engine


def speed_ratio(gpu: str, engine: str, model_class: str, data: Mapping[str, Any] | None = None,
                *, gpu_name: str = "") -> SpeedRatio:
    """How far the planner's serving speed sat from published runs of this class of model
    ("dense" or "moe", `planner.inputs.model_shape.model_class`) on this GPU with this engine,
    from the shipped summary unless `data` is given. Only that triple counts: a GPU's or an
    engine's figure mixes classes (a dense 70B must not carry a ratio earned by DeepSeek-R1),
    so where the triple has no run the ratio is 1.0. `gpu_name` names the GPU in `basis`
    (its id otherwise)."""
    cell = _cell(gpu, engine, model_class, load_measured() if data is None else data)
    cls = CLASS_LABELS.get(model_class, model_class)
    where = f"on the {gpu_name or gpu} with {_engine_label(engine)}"
    if cell is None:
        article = "an" if model_class == "moe" else "a"
        return SpeedRatio(1.0, 1.0, 1.0, 0, f"no published run of {article} {cls} model {where} "
                          "was compared; the model's own speed is used")
    median = float(cell["median_ratio"])
    q1, q3 = float(cell.get("q1_ratio", median)), float(cell.get("q3_ratio", median))
    runs = int(cell["runs"])
    return SpeedRatio(median, q1, q3, runs, (
        f"median planner ÷ published {median:.2f} over {runs} run{'s' * (runs != 1)} of {cls} "
        f"models {where} (interquartile {q1:.2f}-{q3:.2f})"))


def speed_sentence(gpu: str, gpu_name: str, engine: str, model_class: str,
                   data: Mapping[str, Any] | None = None) -> str:
    """One line for `planner calc` and `size`: how the planner's serving speed compared with
    published runs of this class of model ("dense" or "moe") on this GPU with this engine, the
    figure a margin rests on, then this GPU's runs across engines and models for context, which
    can differ (docs/accuracy.md). From the shipped summary unless `data` is given."""
    data = load_measured() if data is None else data
    if not data:
        return "Measured: this copy of the planner carries no accuracy summary."
    measured = speed_on(gpu, engine, data, model_class)
    figures, cell = measured["gpu"], measured["gpu_engine_class"]
    if not isinstance(figures, Mapping):
        return (f"Measured: no published serving run on the {gpu_name} has been compared yet "
                "(docs/accuracy.md).")
    text = (f"Measured: serving speed on the {gpu_name} with {_engine_label(engine)}, "
            f"{CLASS_LABELS.get(model_class, model_class)} models: ")
    if isinstance(cell, Mapping):
        ratio = speed_ratio(gpu, engine, model_class, data)
        text += (f"median planner ÷ published {ratio.median:.2f} over {ratio.runs} steady-state "
                 f"run{'s' * (ratio.runs != 1)} (interquartile {ratio.q1:.2f}-{ratio.q3:.2f}), "
                 f"{cell['within_25_percent']} of them within ±25%")
        held_out = int(cell.get("held_out_runs", 0))
        if held_out:  # runs gathered after the mechanisms were built (docs/accuracy.md)
            share = ("held out" if ratio.runs == 1 else "all of them held out"
                     if held_out == ratio.runs else f"{held_out} of them held out")
            text += f", {share} (gathered after the model was built)"
        if cell["runs"] == figures["runs"]:
            return text + _image_clause(gpu, engine, data) + " (docs/accuracy.md)."
    else:
        text += "no published run compared (the planner's own speed stands)"
    return (f"{text}; every engine and model on this GPU: {figures['within_25_percent']} of "
            f"{figures['runs']} within ±25%, median {figures['median_ratio']:.2f}"
            + _image_clause(gpu, engine, data) + " (docs/accuracy.md).")


def _image_clause(gpu: str, engine: str, data: Mapping[str, Any]) -> str:
    """How far the engine image alone moved one configuration on this GPU and engine, where
    one configuration was compared on several days (`level_by_image`), else ''."""
    moved = (data.get("level_by_image") or {}).get(gpu, {}).get(engine)
    if not isinstance(moved, Mapping) or not moved.get("configurations"):
        return ""
    return (f"; from one engine image to the next the same DeepSeek-R1 configuration's time "
            f"per output token here moved by up to {float(moved['most_moved']):.2f}× (median "
            f"{float(moved['median_moved']):.2f}× over {int(moved['configurations'])} "
            "configurations run on several days), which no GPU property carries")


LAYOUT_NAMES = {"tp+ep": "expert parallelism", "dp-attention": "DP attention with expert "
                "parallelism"}


def layout_sentence(layout: str, data: Mapping[str, Any] | None = None) -> str:
    """One line where a layout beyond one TP group is shown (`calc --layout`, `size`, the HTML
    summary): how its step model compared with published runs served that way, or that none
    has been compared; "" for one TP group."""
    if layout not in LAYOUT_NAMES:
        return ""
    data = load_measured() if data is None else data
    figures = ((data or {}).get("layouts_as_ran") or {}).get(layout)
    name = LAYOUT_NAMES[layout]
    if not isinstance(figures, Mapping) or not figures.get("runs"):
        return (f"Measured: no published run served with {name} has been compared; the "
                "layout's step rests on the model alone (docs/layouts.md).")
    tp = figures["as_one_tp_group"]
    engines = ", ".join(ENGINES[e].label if e in ENGINES else e for e in figures["engines"])
    return (f"Measured: {figures['runs']} published runs served with {name} ({engines}; "
            f"{', '.join(figures['models'])}), evaluated that way: {figures['within_25_percent']} "
            f"within ±25%, median planner ÷ published {figures['median_ratio']:.2f} (as one TP "
            f"group: {tp['within_25_percent']}, median {tp['median_ratio']:.2f}; "
            "docs/accuracy.md).")


def ttft_figures(data: Mapping[str, Any] | None = None) -> Mapping[str, Any] | None:
    """Published ÷ planner time to first token with no queue (runs, median_ratio, lowest,
    highest), or None where no run was compared; `measured_ttft` in the JSON outputs."""
    data = load_measured() if data is None else data
    figures = (data or {}).get("ttft_no_queue")
    return figures if isinstance(figures, Mapping) else None


# An engine's own no-queue TTFT median is applied where it rests on at least this many runs;
# below, the median over every engine (a handful of short prompts on small models reads the
# server's fixed time, not the prefill a sizing needs).
MIN_TTFT_RUNS = 10


@dataclass(frozen=True)
class TtftRatio:
    """Published ÷ planner time to first token with no queue that a fleet applies for one
    engine: the median over `runs` published runs, and how it was got. 1.0 with `runs` 0
    where nothing was compared."""

    median: float
    runs: int
    basis: str


def ttft_ratio(engine: str, gpu: str = "", model_class: str = "",
               data: Mapping[str, Any] | None = None, *, gpu_name: str = "") -> TtftRatio:
    """The measured first-token error for `engine` on `gpu` for a model of `model_class`: the
    GPU and engine's own median at low load (InferenceX's same-day runs, `ttft_low_load`)
    where at least MIN_TTFT_RUNS runs of that class were compared, else the engine's no-queue
    median on the same terms, else the median over every engine's no-queue runs, else 1.
    `gpu_name` names the GPU in `basis`."""
    data = load_measured() if data is None else data
    label = _engine_label(engine)
    low = (data or {}).get("ttft_low_load")
    low = low if isinstance(low, Mapping) else {}
    cells = low.get("by_gpu_engine")
    same_class = bool(model_class) and model_class == low.get("model_class")
    cell = ((cells or {}).get(gpu) or {}).get(engine) if gpu and same_class else None
    if isinstance(cell, Mapping) and int(cell.get("runs", 0)) >= MIN_TTFT_RUNS:
        median, runs = float(cell["median_ratio"]), int(cell["runs"])
        return TtftRatio(median, runs, f"median published ÷ planner {median:.2f} over {runs} "
                         f"first tokens of {CLASS_LABELS.get(model_class, model_class)} models at "
                         f"concurrency {low['concurrency_at_most']} or below on the "
                         f"{gpu_name or gpu} with {label}")
    figures = ttft_figures(data)
    if figures is None or not figures.get("runs"):
        return TtftRatio(1.0, 0, "no published first token was compared; the model's own "
                         "time to first token is used")
    own = (figures.get("by_engine") or {}).get(engine)
    if isinstance(own, Mapping) and int(own.get("runs", 0)) >= MIN_TTFT_RUNS:
        median, runs = float(own["median_ratio"]), int(own["runs"])
        where = f"of {label}"
    else:
        median, runs = float(figures["median_ratio"]), int(figures["runs"])
        mine = int(own.get("runs", 0)) if isinstance(own, Mapping) else 0
        where = f"of every engine; {label} has {mine}, fewer than {MIN_TTFT_RUNS}"
    return TtftRatio(median, runs, f"median published ÷ planner {median:.2f} over {runs} "
                     f"first tokens with no queue {where}")


def first_token_sentence(ratio: TtftRatio) -> str:
    """One line for `planner calc`, `size` and the HTML budget cards: the measured first-token
    error that applies to a GPU, engine and class of model (`ttft_ratio`), which a fleet
    carries as a margin, so the three say the figure the plan applies."""
    return (f"Measured first token: {ratio.basis}; a fleet sized against a TTFT target carries "
            f"what exceeds the measured speed error as a margin (docs/latency.md).")


def ttft_sentence(data: Mapping[str, Any] | None = None) -> str:
    """One line for the HTML summary's accuracy section: how the planner's time to first token
    (the prefill roofline) compared with engines' first tokens when nothing queued."""
    figures = ttft_figures(data)
    if figures is None:
        return ""
    engines = ", ".join(ENGINES[e].label if e in ENGINES else e
                        for e in figures.get("engines") or [])
    return (f"Measured: with no queue, the engine's first token came a median "
            f"{figures['median_ratio']:.1f}× ({figures['lowest']:.1f}-{figures['highest']:.1f}×, "
            f"{figures['runs']} runs{' with ' + engines if engines else ''}) later than the "
            f"planner's prefill; fleets sized against a TTFT target carry that excess as a "
            f"margin beyond the measured speed error (docs/latency.md, docs/accuracy.md).")
