"""The HTML summary's measured-accuracy section: how close the planner's KV pool and serving
speed came to real engines, overall and for the GPUs and engine of this plan
(`planner.evidence.measured`)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from planner.evidence.measured import load_measured, ttft_sentence
from planner.plan.plan import Plan


@dataclass(frozen=True)
class Measured:
    label: str
    runs: int
    within: int
    median: float | None

    @property
    def share(self) -> str:
        return f"{self.within} of {self.runs}" if self.runs else "no published run compared"

    @property
    def median_text(self) -> str:
        return "—" if self.median is None else f"{self.median:.2f}"


def _row(label: str, figures: Mapping[str, Any] | None) -> Measured:
    if not figures:
        return Measured(label, 0, 0, None)
    return Measured(label, int(figures["runs"]), int(figures["within_25_percent"]),
                    float(figures["median_ratio"]))


def _gpu_rows(name: str, engine: str, figures: Mapping[str, Any] | None,
              pair: Mapping[str, Any]) -> list[Measured]:
    """A GPU's row, then, where other engines ran on it too, its runs with the plan's engine:
    a GPU's figure mixes engines that fare differently on it."""
    rows = [_row(name, figures)]
    if figures and (pair.get(engine) or {}).get("runs") != figures["runs"]:
        rows.append(_row(f"{name} with {engine}", pair.get(engine)))
    return rows


def plan_gpus(plan: Plan) -> list[str]:
    """The plan's GPUs: the grid's, then any the budget chose besides."""
    gpus = list(plan.grid.axes["gpus"])
    for sized in plan.sized:
        if sized.choice is not None and sized.choice.candidate.gpu not in gpus:
            gpus.append(sized.choice.candidate.gpu)
    return gpus


def accuracy_context(plan: Plan, data: Mapping[str, Any] | None = None) -> dict[str, object]:
    data = load_measured() if data is None else data
    if not data:
        return {"accuracy": None}
    kv, steady = data["kv_pool"], data["throughput_steady_state"]
    by_gpu, by_engine = data["steady_state_by_gpu"], data["steady_state_by_engine"]
    by_pair = data.get("steady_state_by_gpu_and_engine", {})
    engine = str(plan.assumptions.get("engine", "vllm"))
    gpu_names = {g: plan.gpus.entries[g].name if g in plan.gpus.entries else g
                 for g in plan_gpus(plan)}
    return {"accuracy": {
        "kv": f"{kv['within_5_percent']} of {kv['points']}",
        "verdict": f"{kv['fits_verdict_agrees']} of {kv['fits_verdicts']}",
        "steady": _row("All steady-state runs", steady),
        "ttft": ttft_sentence(data).removeprefix("Measured: "),
        "rows": [_row("All steady-state runs", steady),
                 _row(f"Engine of this plan ({engine})", by_engine.get(engine)),
                 *(row for g, name in gpu_names.items()
                   for row in _gpu_rows(name, engine, by_gpu.get(g), by_pair.get(g, {})))],
    }}
