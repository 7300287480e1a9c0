"""The HTML summary's headline answers: for each model at each grid context, the cheapest
configuration in the precision policy that fits the headline batch, how many configurations fit,
a cheaper quantized alternative outside the policy when there is one, and why nothing fits when
nothing does."""

from __future__ import annotations

from dataclasses import dataclass

from planner.outputs.html.formatting import (
    bare,
    config_text,
    formats_text,
    replica_text,
    scenario_key,
    text,
    tokens_label,
)
from planner.outputs.html.selection import number, picked
from planner.plan.calc import Evaluated
from planner.plan.plan import Plan
from planner.plan.summary import Pick, headline_batch


@dataclass(frozen=True)
class Answer:
    """One model at one context: the cheapest configuration that fits, or why nothing does."""

    context: str
    key: str  # Grid configuration of the row shown ("" when nothing fits)
    replica: str
    formats: str
    sequences: str
    tokens_per_second: str
    per_user: str
    cost: str
    fitting: str  # "12 of 30 configurations fit"
    nothing_fits: str  # explanation when nothing fits, else ""
    alternative: str = ""  # a cheaper quantized option outside the precision policy


@dataclass(frozen=True)
class ModelAnswers:
    id: str
    name: str
    answers: list[Answer]


def _nothing_fits(plan: Plan, rows: int, most_pick: Pick | None, batch: int,
                  context: int) -> str:
    """Why nothing fits, naming the real limit: TP, the model's context length, the weights,
    or the KV cache (memory). `rows`: how many rows there are; `most_pick`: the first with the
    most sequences."""
    text = f"Nothing in the grid fits {batch} sequences of {tokens_label(context)} tokens"
    most = picked(plan, most_pick)
    if not rows or most is None:
        return text + "; TP cannot shard the model on any GPU in the grid."
    if most.value("context_supported") is not True:
        limit = int(plan.models.entries[most.scenario.model].number("max_position_embeddings"))
        return (text + f": {tokens_label(context)} tokens is beyond the model's context limit "
                f"of {limit:,} tokens ({tokens_label(limit)}), whatever the memory.")
    if not number(most, "max_sequences") > 0:
        return text + "; the weights do not fit any configuration's memory."
    return (text + f": not enough memory for the KV cache; at most "
            f"{bare(most, 'max_sequences')} on {config_text(plan, most.scenario)}.")


def _alternative(plan: Plan, best: Evaluated | None, alt_pick: Pick | None) -> str:
    """`alt_pick`: the cheapest fitting row outside the precision policy."""
    alt = picked(plan, alt_pick)
    if alt is None or (best is not None and number(alt, "cost_per_million_tokens")
                       >= number(best, "cost_per_million_tokens")):
        return ""
    return (f"Quantized alternative (accuracy traded for memory): {formats_text(alt.scenario)} "
            f"on {replica_text(plan, alt.scenario)}, {text(alt, 'cost_per_million_tokens')}")


def answer_at(plan: Plan, model: str, context: int) -> Answer:
    """The rows of `model` at `context` and the headline batch: those in the precision policy
    when there are any (then a cheaper quantized row is named as the alternative), else all."""
    batch = headline_batch(plan.grid)
    g = plan.summary.group(model, context, batch)
    policy = g.rows_in > 0
    best = picked(plan, g.cheapest_in if policy else g.cheapest_out)
    count = f"{g.fit_in if policy else g.fit} of {g.rows_in if policy else g.rows}"
    alternative = _alternative(plan, best, g.cheapest_out) if policy else ""
    if best is None:
        return Answer(tokens_label(context), "", "", "", "", "", "", "", count,
                      _nothing_fits(plan, g.rows_in if policy else g.rows,
                                    g.most_in if policy else g.most, batch, context),
                      alternative)
    return Answer(tokens_label(context), scenario_key(best.scenario),
                  replica_text(plan, best.scenario), formats_text(best.scenario),
                  text(best, "max_sequences"),
                  text(best, "decode_tokens_per_second"),
                  text(best, "tokens_per_second_per_sequence"),
                  text(best, "cost_per_million_tokens"), count, "", alternative)


def headline_answers(plan: Plan) -> list[ModelAnswers]:
    return [ModelAnswers(m, plan.models.entries[m].name,
                         [answer_at(plan, m, c) for c in sorted(plan.grid.axes["context"])])
            for m in plan.grid.axes["models"]]
