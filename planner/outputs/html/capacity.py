"""The HTML summary's tables: which GPU × TP configurations fit each model (the fit matrix), decode
throughput and per-user speed over context × concurrency for the view's configuration and a
spread of models' reference configurations (the capacity tables, with the note on why they show
what they show), and how many sequences fit at each context (the sequences table)."""

from __future__ import annotations

from dataclasses import dataclass

from planner.inputs.scenario import Scenario
from planner.outputs.html.formatting import (
    bare,
    config_text,
    fmt_id,
    gpu_short,
    scenario_key,
    text,
    tokens_label,
)
from planner.outputs.html.selection import as_float, reference_row, valid_env, with_load
from planner.outputs.html.sources import shown_path
from planner.plan.plan import Plan

MAX_CAPACITY_TABLES = 8
VIEW_WHY = "the view selection in the grid file"

# --------------------------------------------------------------------------------------------
# Which GPU configurations fit
# --------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class FitCell:
    text: str
    status: str  # "fits" | "nofit" | "skipped"


@dataclass(frozen=True)
class FitRow:
    id: str
    name: str
    cells: list[FitCell]


def gpu_columns(plan: Plan) -> list[tuple[str, int]]:
    """(GPU, TP) pairs of the grid that at least one row uses."""
    used = plan.summary.replicas_used
    return [(g, tp) for g in plan.grid.axes["gpus"] for tp in sorted(plan.grid.axes["tp"])
            if (g, tp) in used]


def fit_cell(plan: Plan, model: str, gpu: str, tp: int) -> FitCell:
    """The longest context at which a row fits at the headline batch, with the first weight
    format (in grid order) that fits there."""
    summary = plan.summary
    if (model, gpu, tp) not in summary.fit_present:
        return FitCell("TP does not shard", "skipped")
    for context in sorted(plan.grid.axes["context"], reverse=True):
        order = summary.fit_weights.get((model, gpu, tp, context))
        if order is not None:
            weights = plan.grid.axes["weights"][order]
            return FitCell(f"{tokens_label(context)} · {fmt_id(weights)}", "fits")
    return FitCell("does not fit", "nofit")


def fit_matrix(plan: Plan) -> tuple[list[str], list[FitRow]]:
    columns = gpu_columns(plan)
    headers = [f"{tp} × {gpu_short(plan.gpus.entries[g])}" for g, tp in columns]
    rows = [FitRow(m, plan.models.entries[m].name, [fit_cell(plan, m, g, tp) for g, tp in columns])
            for m in plan.grid.axes["models"]]
    return headers, rows


# --------------------------------------------------------------------------------------------
# Capacity tables (context × concurrency) and sequences that fit
# --------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class CapacityCell:
    tokens_per_second: str
    per_user: str
    fits: bool


@dataclass(frozen=True)
class CapacityRow:
    context: str
    sequences: str
    cells: list[CapacityCell]


@dataclass(frozen=True)
class CapacityTable:
    id: str
    name: str
    config: str
    why: str
    concurrency: list[str]
    rows: list[CapacityRow]


def capacity_row(plan: Plan, base: Scenario, context: int) -> CapacityRow:
    envs = [plan.row_env(with_load(base, context, b)) for b in plan.view.concurrency]
    cells = [CapacityCell(bare(e, "decode_tokens_per_second"),
                          bare(e, "tokens_per_second_per_sequence"), e.value("fits") is True)
             for e in envs]
    return CapacityRow(tokens_label(context), bare(envs[0], "max_sequences"), cells)


def capacity_table(plan: Plan, base: Scenario, why: str) -> CapacityTable:
    return CapacityTable(base.model, plan.models.entries[base.model].name,
                         config_text(plan, base), why,
                         [str(b) for b in plan.view.concurrency],
                         [capacity_row(plan, base, c) for c in plan.view.contexts])


def spread_by_size(plan: Plan, models: list[str], count: int) -> list[str]:
    """`count` models evenly spaced by total parameters, smallest to largest."""
    if len(models) <= count:
        return models
    sized = sorted(models, key=lambda m: as_float(
        plan.row_env(Scenario(m, plan.view.gpu)).model.value("params_total")))
    step = (len(sized) - 1) / max(count - 1, 1)
    return [sized[round(i * step)] for i in range(count)]


def capacity_intro(tables: list[CapacityTable]) -> str:
    has_view = bool(tables) and tables[0].why == VIEW_WHY
    others = len(tables) - has_view
    spread = f"{others} model{'s' * (others != 1)} spanning the catalog's sizes"
    lead = f"Shown for the view's model and {spread}" if has_view else f"Shown for {spread}"
    return lead + "; the next table covers every model."


def featured_note(plan: Plan) -> str:
    """Why the charts and the first capacity table show the configuration they show, and how it
    relates to the model's answer above."""
    v = plan.view
    featured = valid_env(plan, v.scenario())
    if featured is None:
        return ""
    reference = reference_row(plan, v.model)
    shown = config_text(plan, featured.scenario)
    text = (f"The charts and the first table feature {plan.models.entries[v.model].name} on "
            f"{shown}: the view selection of the grid file ({shown_path(plan.grid.path)}, "
            "`view:`), which the workbook's Capacity sheet opens on and where it can be changed.")
    if reference is not None and scenario_key(reference.env.scenario) != scenario_key(
            featured.scenario):
        text += (f" It is not the answer above ({config_text(plan, reference.env.scenario)}, "
                 f"the {reference.why}): the view shows a configuration to study, the answer "
                 "the cheapest one.")
    return text


def capacity_tables(plan: Plan) -> list[CapacityTable]:
    tables: list[CapacityTable] = []
    view_env = valid_env(plan, plan.view.scenario())
    if view_env is not None:
        tables.append(capacity_table(plan, view_env.scenario, VIEW_WHY))
    references = {m: reference_row(plan, m) for m in plan.grid.axes["models"]
                  if m != plan.view.model or view_env is None}
    found = {m: r for m, r in references.items() if r is not None}
    for m in spread_by_size(plan, list(found), MAX_CAPACITY_TABLES - len(tables)):
        tables.append(capacity_table(plan, found[m].env.scenario, found[m].why))
    return tables


@dataclass(frozen=True)
class SequencesCell:
    text: str
    fits: bool


@dataclass(frozen=True)
class SequencesRow:
    id: str
    name: str
    config: str
    note: str  # says so when the configuration is a fallback
    sequences: list[SequencesCell]
    crossover: str


def sequences_row(plan: Plan, model: str) -> SequencesRow:
    ref = reference_row(plan, model)
    name = plan.models.entries[model].name
    if ref is None:
        return SequencesRow(model, name, "nothing in the grid fits", "",
                            [SequencesCell("—", False) for _ in plan.view.contexts], "")
    envs = [plan.row_env(with_load(ref.env.scenario, c, 1)) for c in plan.view.contexts]
    cells = [SequencesCell(bare(e, "max_sequences"), e.value("fits") is True) for e in envs]
    note = ref.why if "nothing fits" in ref.why else ""
    return SequencesRow(model, name, config_text(plan, ref.env.scenario), note, cells,
                        text(ref.env, "crossover_tokens"))


def sequences_table(plan: Plan) -> list[SequencesRow]:
    return [sequences_row(plan, m) for m in plan.grid.axes["models"]]
