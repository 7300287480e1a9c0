"""What the HTML summary reads of the grid, gathered block by block as the grid is evaluated,
so a build keeps aggregates the size of the grid's axes rather than its rows.

The HTML picks rows by model, context and concurrency at the grid's prompt: the cheapest row that
fits (in and out of the precision policy), how many rows there are and fit, the row with the most
sequences; for the fit matrix, the first weight format that fits per model, GPU, TP and context;
for the cost chart, the cheapest fitting row per GPU and TP of the featured model. Each is kept
as the scenario of the row it would pick, with the numbers its choice compares, and ties resolve
as ``min``/``max`` over the rows in grid order resolve them (the first one wins). The HTML
evaluates the few rows it shows again (``Plan.row_env``), which gives the same values.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field

from planner.inputs.grid import Grid, View
from planner.inputs.scenario import Scenario
from planner.model.columns import Column, Same
from planner.model.expr import Value
from planner.plan.calc import BlockEnv


def as_float(value: Value) -> float:
    """A value as a float; NaN for a spreadsheet error, text or a boolean."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return math.nan
    return float(value)


# The precision policy of the answers: full-quality formats. Quantized formats below 8 bits
# trade accuracy for memory, so they are shown as a labelled alternative, never the answer.
ANSWER_WEIGHTS = ("bf16", "fp16", "fp8")


def grid_prompt(grid: Grid, view: View) -> int:
    """The prompt length the HTML's answers are read at: the view's, else the grid's first."""
    prompts = grid.axes["prompt"]
    return view.prompt if view.prompt in prompts else prompts[0]


def headline_batch(grid: Grid) -> int:
    """The concurrency the HTML's answers are read at: the grid's largest."""
    return max(grid.axes["batch"])


def reference_context(grid: Grid, view: View) -> int:
    """The grid context the per-model answers are chosen at: the view's, else the nearest."""
    contexts = grid.axes["context"]
    return min(contexts, key=lambda c: (abs(c - view.context), c))


@dataclass
class Pick:
    """A row a selection would show: its configuration and the number it was chosen by."""

    scenario: Scenario
    number: float


@dataclass
class Group:
    """The rows of one model at one context and concurrency (at the grid's prompt)."""

    rows: int = 0  # every row
    rows_in: int = 0  # rows in the precision policy
    fit: int = 0  # rows that fit (with a finite cost)
    fit_in: int = 0
    cheapest_in: Pick | None = None  # lowest (cost, TP) among fitting rows in the policy
    cheapest_out: Pick | None = None  # ... outside it
    most: Pick | None = None  # most sequences that fit, every row
    most_in: Pick | None = None  # ... rows in the policy


@dataclass
class GridSummary:
    prompt: int  # the prompt the HTML compares at
    headline_batch: int
    reference_context: int
    view_model: str
    weight_order: Mapping[str, int]
    answer_weights: Collection[str]
    rows: int = 0
    replicas_used: dict[tuple[str, int], None] = field(default_factory=dict)  # (GPU, TP)
    groups: dict[tuple[str, int, int], Group] = field(default_factory=dict)
    # at the headline batch: (model, GPU, TP) present; (model, GPU, TP, context) -> first
    # weight format (grid order) among the fitting rows
    fit_present: dict[tuple[str, str, int], None] = field(default_factory=dict)
    fit_weights: dict[tuple[str, str, int, int], int] = field(default_factory=dict)
    # the view's model at the reference context and headline batch, per (GPU, TP)
    cost_replicas: dict[tuple[str, int], None] = field(default_factory=dict)
    cost_cheapest: dict[tuple[str, int], Pick] = field(default_factory=dict)

    def add(self, block: BlockEnv) -> None:
        """Count and compare the rows of one evaluated block, in grid order."""
        n = block.size
        fits = _values(block.quantity("fits"), n)
        costs = _values(block.quantity("cost_per_million_tokens"), n)
        sequences = _values(block.quantity("max_sequences"), n)
        self.rows += n
        for i, s in enumerate(block.scenarios):
            self.replicas_used[s.gpu, s.tp] = None
            if s.prompt != self.prompt:
                continue
            cost = as_float(costs[i])
            fit = fits[i] is True and math.isfinite(cost)
            most = as_float(sequences[i])
            policy = s.weights in self.answer_weights
            g = self.groups.get((s.model, s.context, s.batch))
            if g is None:
                g = self.groups[s.model, s.context, s.batch] = Group()
            g.rows += 1
            if g.most is None or most > g.most.number:
                g.most = Pick(s, most)
            if policy:
                g.rows_in += 1
                if g.most_in is None or most > g.most_in.number:
                    g.most_in = Pick(s, most)
            if fit:
                g.fit += 1
                if policy:
                    g.fit_in += 1
                    if _cheaper(cost, s, g.cheapest_in):
                        g.cheapest_in = Pick(s, cost)
                elif _cheaper(cost, s, g.cheapest_out):
                    g.cheapest_out = Pick(s, cost)
            if s.batch != self.headline_batch:
                continue
            self.fit_present[s.model, s.gpu, s.tp] = None
            if fit:
                key = (s.model, s.gpu, s.tp, s.context)
                order = self.weight_order[s.weights]
                if order < self.fit_weights.get(key, order + 1):
                    self.fit_weights[key] = order
            if s.model == self.view_model and s.context == self.reference_context:
                self.cost_replicas[s.gpu, s.tp] = None
                if fit and _cheaper(cost, s, self.cost_cheapest.get((s.gpu, s.tp))):
                    self.cost_cheapest[s.gpu, s.tp] = Pick(s, cost)

    def group(self, model: str, context: int, batch: int) -> Group:
        return self.groups.get((model, context, batch)) or Group()


def _values(col: Column, n: int) -> Sequence[Value]:
    return [col.value] * n if isinstance(col, Same) else col


def _cheaper(cost: float, s: Scenario, best: Pick | None) -> bool:
    """Whether a row beats `best` by (cost, TP), as ``min`` keeps the first of equals."""
    return best is None or (cost, s.tp) < (best.number, best.scenario.tp)
