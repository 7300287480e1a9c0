"""How close the planner came to real engines: `catalogs/measured-accuracy.yaml`, which
`docs/generate_accuracy.py` writes with `docs/accuracy.md` from the calibration data (a test
keeps it current). The HTML summary and `planner calc` quote it."""

from __future__ import annotations

from collections.abc import Mapping
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


def speed_on(gpu: str, engine: str, data: Mapping[str, Any] | None = None
             ) -> dict[str, object]:
    """Steady-state serving-speed figures for one GPU and one engine (None where no published
    run was compared), from the shipped summary unless `data` is given."""
    data = load_measured() if data is None else data
    if not data:
        return {"gpu": None, "engine": None, "gpu_and_engine": None}
    return {"gpu": data["steady_state_by_gpu"].get(gpu),
            "engine": data["steady_state_by_engine"].get(engine),
            "gpu_and_engine": data.get("steady_state_by_gpu_and_engine", {}).get(gpu, {})
            .get(engine)}


def _figures(f: Mapping[str, Any]) -> str:
    return (f"{f['within_25_percent']} of {f['runs']}, median planner ÷ published "
            f"{f['median_ratio']:.2f}")


def speed_sentence(gpu: str, gpu_name: str, engine: str) -> str:
    """One line for `planner calc` and `size`: how this GPU's serving speed compared with
    published engine runs, and how it did with this engine on this GPU, which can differ
    (docs/accuracy.md)."""
    measured = speed_on(gpu, engine)
    figures, pair = measured["gpu"], measured["gpu_and_engine"]
    if load_measured() is None:
        return "Measured: this copy of the planner carries no accuracy summary."
    if not isinstance(figures, Mapping):
        return (f"Measured: no published serving run on the {gpu_name} has been compared yet "
                "(docs/accuracy.md).")
    text = (f"Measured: serving speed on the {gpu_name} came within ±25% of published engine "
            f"runs on {figures['within_25_percent']} of {figures['runs']} steady-state runs, "
            f"median planner ÷ published {figures['median_ratio']:.2f}")
    label = ENGINES[engine].label if engine in ENGINES else engine
    if not isinstance(pair, Mapping):
        text += f"; none of them with {label}"
    elif pair["runs"] != figures["runs"]:
        text += f"; with {label}: {_figures(pair)}"
    return text + " (docs/accuracy.md)."


def ttft_figures(data: Mapping[str, Any] | None = None) -> Mapping[str, Any] | None:
    """Published ÷ planner time to first token with no queue (runs, median_ratio, lowest,
    highest), or None where no run was compared; `measured_ttft` in the JSON outputs."""
    data = load_measured() if data is None else data
    figures = (data or {}).get("ttft_no_queue")
    return figures if isinstance(figures, Mapping) else None


def ttft_sentence(data: Mapping[str, Any] | None = None) -> str:
    """One line for `planner calc`, `size` and the HTML summary: how the planner's time to first
    token (the prefill roofline) compared with engines' first tokens when nothing queued."""
    figures = ttft_figures(data)
    if figures is None:
        return ""
    engines = ", ".join(ENGINES[e].label if e in ENGINES else e
                        for e in figures.get("engines") or [])
    return (f"Measured: with no queue, the engine's first token came a median "
            f"{figures['median_ratio']:.1f}× ({figures['lowest']:.1f}-{figures['highest']:.1f}×, "
            f"{figures['runs']} runs{' with ' + engines if engines else ''}) later than the "
            f"planner's prefill: read time to first "
            f"token, and fleets sized against a TTFT target, as a lower bound "
            f"(docs/accuracy.md).")
