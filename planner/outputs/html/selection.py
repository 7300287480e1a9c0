"""Selection over the grid's rows for the HTML summary: which rows fit, which are in the precision
policy, the cheapest, the configurations the grid would accept, and each model's reference
configuration (the cheapest that fits the headline load, with its fallbacks when nothing does).
The picks come from the streamed ``Plan.summary``; the rows they name are evaluated again."""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, replace

from planner.inputs.grid import skip_reason
from planner.inputs.scenario import Scenario
from planner.model.expr import Value
from planner.outputs.html.formatting import tokens_label
from planner.plan.calc import Evaluated
from planner.plan.plan import Plan
from planner.plan.summary import ANSWER_WEIGHTS, Pick, headline_batch, reference_context


def as_float(value: Value) -> float:
    """A value as a float; NaN for a spreadsheet error or text."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return math.nan
    return float(value)


def number(env: Evaluated, name: str) -> float:
    return as_float(env.value(name))


def fitting(rows: Iterable[Evaluated]) -> list[Evaluated]:
    return [env for env in rows if env.value("fits") is True
            and math.isfinite(number(env, "cost_per_million_tokens"))]


def in_policy(rows: Iterable[Evaluated]) -> list[Evaluated]:
    return [e for e in rows if e.scenario.weights in ANSWER_WEIGHTS]


def out_of_policy(rows: Iterable[Evaluated]) -> list[Evaluated]:
    return [e for e in rows if e.scenario.weights not in ANSWER_WEIGHTS]


def cheapest(rows: Iterable[Evaluated]) -> Evaluated | None:
    """The fitting row with the lowest cost per million tokens (fewest GPUs on a tie)."""
    candidates = fitting(rows)
    if not candidates:
        return None
    return min(candidates, key=lambda e: (number(e, "cost_per_million_tokens"), e.scenario.tp))


def picked(plan: Plan, pick: Pick | None) -> Evaluated | None:
    """The row a selection over the grid picked (``Plan.summary``), evaluated again."""
    return None if pick is None else plan.row_env(pick.scenario)


@dataclass(frozen=True)
class Reference:
    """A model's headline configuration and how it was chosen."""

    env: Evaluated
    why: str


def reference_row(plan: Plan, model: str) -> Reference | None:
    """The cheapest configuration that fits the grid's largest batch at the reference context;
    failing that, the largest batch that fits at the reference context, then at the longest
    other context where anything fits; None when nothing in the grid fits."""
    ref, batch = reference_context(plan.grid, plan.view), headline_batch(plan.grid)
    others = sorted((c for c in plan.grid.axes["context"] if c != ref), reverse=True)
    for context in [ref, *others]:
        for b in sorted(plan.grid.axes["batch"], reverse=True):
            group = plan.summary.group(model, context, b)  # cheapest(in_policy(rows) or rows)
            best = picked(plan, group.cheapest_in if group.rows_in else group.cheapest_out)
            if best is not None:
                why = f"cheapest that fits {b} sequences of {tokens_label(context)} tokens"
                if (b, context) != (batch, ref):
                    why += f" (nothing fits {batch} of {tokens_label(ref)})"
                return Reference(best, why)
    return None


def valid_env(plan: Plan, s: Scenario) -> Evaluated | None:
    """Evaluate a configuration the grid would accept; None when TP cannot shard the model or
    exceeds the GPU's scale-up domain."""
    if skip_reason(plan.models, plan.gpus, s.model, s.gpu, s.tp):
        return None
    return plan.row_env(s)


def with_load(s: Scenario, context: int, batch: int) -> Scenario:
    return replace(s, context=context, batch=batch)
