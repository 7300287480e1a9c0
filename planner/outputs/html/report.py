"""The HTML summary: one self-contained page that procurement can attach to a purchase request.

Everything a reader sees is chosen and computed here, as plain values and pre-formatted text;
the Jinja templates in ``templates/`` only lay it out (autoescaped, StrictUndefined, no
arithmetic). Every number is a quantity's Python value, the one the workbook caches, formatted
by :func:`planner.outputs.terminal.value_text`. Charts are inline SVG from
:mod:`planner.outputs.html.svgcharts`.
"""

from __future__ import annotations

import hashlib
import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from jinja2 import Environment, FileSystemLoader, StrictUndefined
from markupsafe import Markup, escape

from planner.inputs.assumptions import ASSUMPTIONS
from planner.inputs.catalog import PROJECT_ROOT
from planner.inputs.entries import Entry
from planner.inputs.grid import skip_reason
from planner.inputs.scenario import Scenario
from planner.model.expr import Value
from planner.model.fleet import FLEET_QUANTITIES
from planner.model.formats import KV_FORMATS, WEIGHT_FORMATS
from planner.model.quantities import ROW_BY_NAME, ROW_QUANTITIES, assumptions_used
from planner.model.units import GB
from planner.outputs.html.accuracy import accuracy_context
from planner.outputs.html.budget import budget_context
from planner.outputs.html.svgcharts import Band, Series, bar_chart, format_si, line_chart
from planner.outputs.method import readable_formula
from planner.outputs.terminal import value_text
from planner.plan.calc import Evaluated
from planner.plan.plan import Plan
from planner.plan.summary import (
    ANSWER_WEIGHTS,
    Pick,
    grid_prompt,
    headline_batch,
    reference_context,
)

TEMPLATE_DIR = PROJECT_ROOT / "templates"
TEMPLATE_NAME = "capacity-plan.html.j2"
MAX_CAPACITY_TABLES = 8
CHART_CONCURRENCY = tuple(2**i for i in range(10))  # 1 .. 512
MAX_COST_BARS = 16
VIEW_WHY = "the view selection in the grid file"

# --------------------------------------------------------------------------------------------
# Formatting: every number goes through value_text, so the page shows the workbook's values
# --------------------------------------------------------------------------------------------

def text(env: Evaluated, name: str) -> str:
    """A quantity's value with its unit, exactly as the terminal and the page show it."""
    return value_text(env.value(name), ROW_BY_NAME[name])


def bare(env: Evaluated, name: str) -> str:
    """The same text without the unit, for table cells whose header names the unit."""
    quantity = ROW_BY_NAME[name]
    return text(env, name).removesuffix(f" {quantity.unit}")


def tokens_label(tokens: int) -> str:
    """A context length as readers say it: 32768 -> "32K" (K = 1,024 tokens)."""
    return format_si(tokens)


def fmt_id(fmt: str) -> str:
    return fmt.upper()


def gpu_short(gpu: Entry) -> str:
    vendor = gpu.text("vendor")
    return gpu.name.removeprefix(f"{vendor} ") if vendor else gpu.name


def replica_text(plan: Plan, s: Scenario) -> str:
    return f"{s.tp} × {gpu_short(plan.gpus.entries[s.gpu])}"


def formats_text(s: Scenario) -> str:
    return f"{fmt_id(s.weights)} / {fmt_id(s.kv)}"


def config_text(plan: Plan, s: Scenario) -> str:
    return f"{replica_text(plan, s)}, {fmt_id(s.weights)} weights, {fmt_id(s.kv)} KV"


def scenario_key(s: Scenario) -> str:
    """The configuration columns of the workbook's Grid row, for tests and auditors."""
    return "|".join(str(v) for v in (s.model, s.gpu, s.weights, s.kv, s.tp, s.context,
                                      s.batch, s.prompt))


# --------------------------------------------------------------------------------------------
# Selection over the grid rows
# --------------------------------------------------------------------------------------------

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


# --------------------------------------------------------------------------------------------
# Headline answers
# --------------------------------------------------------------------------------------------

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
    """`rows`: how many rows there are; `most_pick`: the first with the most sequences."""
    text = f"Nothing in the grid fits {batch} sequences of {tokens_label(context)} tokens"
    most = picked(plan, most_pick)
    if not rows or most is None:
        return text + "; TP cannot shard the model on any GPU in the grid."
    if not number(most, "max_sequences") > 0:
        return text + "; the weights do not fit any configuration."
    return (text + f"; at most {bare(most, 'max_sequences')} on "
            f"{config_text(plan, most.scenario)}.")


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


# --------------------------------------------------------------------------------------------
# Charts (inline SVG; they escape their own text)
# --------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Chart:
    svg: Markup
    caption: str


def sequences_chart(plan: Plan) -> Chart:
    """Sequences that fit vs context, one line per grid GPU, at the view's model and formats."""
    series, left_out = [], []
    for gpu in plan.grid.axes["gpus"]:
        envs = [valid_env(plan, plan.view.scenario(gpu=gpu, context=c, batch=1))
                for c in plan.view.contexts]
        if any(e is None for e in envs):
            left_out.append(gpu_short(plan.gpus.entries[gpu]))
            continue
        points = [(float(c), _positive(number(e, "max_sequences")))
                  for c, e in zip(plan.view.contexts, envs, strict=True) if e is not None]
        series.append(Series(gpu_short(plan.gpus.entries[gpu]), points))
    v = plan.view
    setup = (f"{v.tp} GPUs per replica, {fmt_id(v.weights)} weights, {fmt_id(v.kv)} KV cache, "
             "one line per GPU.")
    svg = line_chart(f"Sequences that fit vs context: {plan.models.entries[v.model].name}",
                     "Context length [tokens]", "Sequences that fit [sequences]", series,
                     log_x=True, log_y=True, x_ticks=[float(c) for c in v.contexts],
                     description=f"How many sequences of each length the KV pool holds; {setup}")
    caption = (f"{setup} A missing point means not even one sequence fits. "
               + (f"Left out because {v.tp} GPUs exceed their scale-up domain or cannot shard "
                  f"the model: {', '.join(left_out)}." if left_out else ""))
    return Chart(Markup(svg), caption.strip())


def _positive(value: float) -> float | None:
    """A value a log axis can show, else None (a gap)."""
    return value if value > 0 else None


def bound_bands(envs: Sequence[Evaluated], xs: Sequence[int]) -> list[Band]:
    """Shaded regions where decode is memory-bound or compute-bound, split halfway (in log
    terms) between neighbouring concurrencies."""
    bands: list[Band] = []
    for i, (env, x) in enumerate(zip(envs, xs, strict=True)):
        bound = str(env.value("decode_bound"))
        lo = xs[0] if i == 0 else (xs[i - 1] * x) ** 0.5
        hi = xs[-1] if i == len(xs) - 1 else (xs[i + 1] * x) ** 0.5
        if bands and bands[-1].label.startswith(bound):
            bands[-1] = Band(bands[-1].x_from, hi, bands[-1].label, bands[-1].shade)
        else:
            bands.append(Band(lo, hi, f"{bound}-bound", "a" if bound == "memory" else "b"))
    return bands


def _fit_split(envs: Sequence[Evaluated], quantity: str) -> tuple[Series, Series]:
    """The points where the batch fits, and those (dashed) where it does not: every point is
    in exactly one series, so a marker never says "does not fit" where the batch fits."""
    fits: list[tuple[float, float | None]] = []
    over: list[tuple[float, float | None]] = []
    for env in envs:
        point = (float(env.scenario.batch), _positive(number(env, quantity)))
        (fits if env.value("fits") is True else over).append(point)
    return Series("fits in memory", fits), Series("does not fit (KV cache exceeds the pool)", over)


def concurrency_chart(plan: Plan, quantity: str, title: str, y_label: str) -> Chart | None:
    base = valid_env(plan, plan.view.scenario())
    if base is None:
        return None
    envs = [plan.row_env(with_load(base.scenario, plan.view.context, b))
            for b in CHART_CONCURRENCY]
    series = [s for s in _fit_split(envs, quantity) if s.points]
    bands = bound_bands(envs, CHART_CONCURRENCY)
    setup = (f"{config_text(plan, base.scenario)}, {tokens_label(plan.view.context)} "
             "tokens of context.")
    svg = line_chart(f"{title}: {plan.models.entries[base.scenario.model].name}",
                     "Concurrency [sequences]", y_label, series, log_x=True, log_y=True,
                     bands=bands, x_ticks=[float(b) for b in CHART_CONCURRENCY],
                     description=setup)
    regions = "; ".join(f"{b.label} from {format_si(b.x_from)} to {format_si(b.x_to)} "
                        "sequences" for b in bands)
    caption = (f"{setup} Shaded: {regions}. At most {text(envs[0], 'max_sequences')} fit; "
               "beyond that the line is dashed.")
    return Chart(Markup(svg), caption)


def cost_chart(plan: Plan) -> Chart:
    """Cost per million tokens of each GPU × TP (cheapest fitting format) for the view model."""
    context, batch = reference_context(plan.grid, plan.view), headline_batch(plan.grid)
    summary = plan.summary  # each GPU × TP's cheapest fitting row, in order of the first
    ranked = sorted(summary.cost_cheapest.values(), key=lambda p: p.number)
    bars = [(f"{replica_text(plan, p.scenario)} · {formats_text(p.scenario)}", p.number)
            for p in ranked[:MAX_COST_BARS]]
    quantity = ROW_BY_NAME["cost_per_million_tokens"]
    setup = (f"{batch} sequences of {tokens_label(context)} tokens; each GPU × TP with its "
             "cheapest weight / KV format that fits.")
    svg = bar_chart(f"Cost per million tokens: {plan.models.entries[plan.view.model].name}",
                    "Cost per million tokens [USD]", bars,
                    highlight={bars[0][0]} if bars else set(),
                    value_format=lambda v: value_text(v, quantity),
                    description=f"{setup} The cheapest configuration is highlighted.",
                    highlight_label="cheapest (orange bar, bold label)")
    replicas = len(summary.cost_replicas)
    shown = f" (the {MAX_COST_BARS} cheapest shown)" if len(ranked) > MAX_COST_BARS else ""
    caption = f"{setup} {len(ranked)} of {replicas} GPU × TP configurations fit{shown}."
    return Chart(Markup(svg), caption)


def kv_chart(plan: Plan) -> Chart | None:
    """Where the KV cache outgrows the weights: KV of 1, 8 and `batch` sequences vs weights."""
    base = valid_env(plan, plan.view.scenario())
    if base is None:
        return None
    contexts = sorted(set(plan.view.contexts))
    batches = sorted({1, 8, plan.view.batch})
    envs = {(c, b): plan.row_env(with_load(base.scenario, c, b)) for c in contexts
            for b in batches}
    gb = GB
    series = [Series(f"KV cache, {b} sequence{'s' * (b != 1)}",
                     [(float(c), number(envs[c, b], "kv_bytes_in_use") / gb)
                      for c in contexts]) for b in batches]
    weights = number(base, "weight_bytes") / gb
    series.append(Series(f"Weights ({fmt_id(base.scenario.weights)})",
                         [(float(c), weights) for c in contexts]))
    name = plan.models.entries[base.scenario.model].name
    setup = f"{fmt_id(base.scenario.weights)} weights, {fmt_id(base.scenario.kv)} KV cache."
    svg = line_chart(f"KV cache vs weights: {name}",
                     "Context length [tokens]", "Memory, whole replica [GB = 10^9 bytes]", series,
                     log_x=True, log_y=True, x_ticks=[float(c) for c in contexts],
                     description=f"{setup} Where a KV line crosses the weights, the cache "
                                 "weighs more than the model.")
    caption = (f"{setup} The KV cache weighs as much as the weights at "
               f"{text(base, 'crossover_tokens')} in total over all sequences: "
               f"{text(base, 'weight_bytes')} of weights, {text(base, 'kv_bytes_per_token')} "
               "of KV cache per token.")
    return Chart(Markup(svg), caption)


def charts(plan: Plan) -> list[Chart]:
    found = [
        sequences_chart(plan),
        concurrency_chart(plan, "decode_tokens_per_second", "Decode throughput vs concurrency",
                          "Decode throughput, whole replica [tokens/s]"),
        concurrency_chart(plan, "tokens_per_second_per_sequence",
                          "Per-user speed vs concurrency", "Per-user speed [tokens/s]"),
        cost_chart(plan),
        kv_chart(plan),
    ]
    return [c for c in found if c is not None]


# --------------------------------------------------------------------------------------------
# Evidence: assumptions, method, catalogs, metadata
# --------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class AssumptionRow:
    name: str
    label: str
    value: str
    unit: str
    default: str
    reason: str
    source: str
    overridden: bool


def value_str(value: float | str) -> str:
    return value if isinstance(value, str) else f"{value:.10g}"


def assumption_rows(plan: Plan) -> list[AssumptionRow]:
    rows = [AssumptionRow(a.name, a.label, value_str(plan.assumptions[a.name]),
                          a.unit.replace("|", " or "),
                          value_str(a.default), a.reason, a.source, a.name in plan.overrides)
            for a in ASSUMPTIONS.values()]
    formats = [(f"Bytes per parameter, {fmt_id(w.id)} weights", w.setting, w.bytes_per_param,
                 w.description, w.source) for w in WEIGHT_FORMATS.values()]
    formats += [(f"Bytes per KV element, {fmt_id(k.id)} cache", k.setting, k.bytes_per_element,
                 k.description, k.source) for k in KV_FORMATS.values()]
    for label, name, default, description, source in formats:
        rows.append(AssumptionRow(name, label, value_str(plan.assumptions[name]), "bytes",
                                  value_str(default), description, source,
                                  name in plan.overrides))
    return rows


@dataclass(frozen=True)
class MethodRow:
    name: str
    label: str
    unit: str
    description: str
    formula: str
    rests_on: str


def method_rows() -> list[MethodRow]:
    return [MethodRow(q.name, q.label, q.unit or "—", q.description, readable_formula(q.expr),
                      ", ".join(assumptions_used(q)) or "exact (shape and specs only)")
            for q in [*ROW_QUANTITIES, *FLEET_QUANTITIES]]


@dataclass(frozen=True)
class SourceRow:
    id: str
    name: str
    source: Markup
    extra: Markup


URL = re.compile(r"(https://[^\s;,)\]]+|\b(?:[a-z0-9-]+\.)+(?:com|org|io|ai|net|dev|co)"
                 r"(?:/[^\s;,)\]]*)?)")


def linked(text: str) -> Markup:
    """Catalog text with its web addresses as links (the page fetches nothing: links only)."""
    out, last = [], 0
    for match in URL.finditer(text):
        out.append(str(escape(text[last:match.start()])))
        address = match.group(0).rstrip(".")
        href = address if address.startswith("http") else "https://" + address
        out.append(f'<a href="{escape(href)}">{escape(address)}</a>')
        out.append(str(escape(match.group(0)[len(address):])))
        last = match.end()
    out.append(str(escape(text[last:])))
    return Markup("".join(out))


def catalog_rows(plan: Plan) -> tuple[list[SourceRow], list[SourceRow]]:
    """Sources of what this plan evaluated: the grid's models and GPUs and the workloads'."""
    used_models = set(plan.grid.axes["models"]) | {s.workload.text("model") for s in plan.sized}
    used_gpus = set(plan.grid.axes["gpus"]) | {e.candidate.gpu for s in plan.sized
                                               for e in s.rows}
    models = [SourceRow(e.id, e.name, linked(e.source), linked(e.text("notes")))
              for e in plan.models.entries.values() if e.id in used_models]
    gpus = [SourceRow(e.id, e.name, linked(e.source), linked("; ".join(
        t for t in (f"prices {e.text('price_date')}", e.text("price_source")) if t.strip())))
        for e in plan.gpus.entries.values() if e.id in used_gpus]
    return models, gpus


def shown_path(path: Path) -> str:
    try:
        return str(Path(path).resolve().relative_to(PROJECT_ROOT))
    except ValueError:
        return str(path)


def file_sha256(path: Path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def metadata(plan: Plan) -> list[tuple[str, str]]:
    skipped = ", ".join(f"{n:,} ({why})" for why, n in plan.grid.skipped.items()) or "none"
    overrides = ", ".join(f"{k}={value_str(v)}" for k, v in plan.overrides.items())
    return [
        ("Generated by", f"planner {plan.version}"),
        ("Date", plan.generated),
        ("Model catalog", f"{shown_path(plan.models.path)}, sha256 {plan.models.sha256}"),
        ("GPU catalog", f"{shown_path(plan.gpus.path)}, sha256 {plan.gpus.sha256}"),
        ("Grid", f"{shown_path(plan.grid.path)}, sha256 {file_sha256(plan.grid.path)}"),
        ("Server catalog", f"{shown_path(plan.servers.path)}, sha256 {plan.servers.sha256}"),
        ("Workload catalog",
         f"{shown_path(plan.workloads.path)}, sha256 {plan.workloads.sha256}"),
        ("Configurations", f"{len(plan.rows):,} evaluated; skipped: {skipped}"),
        ("--set overrides", overrides or "none (all assumptions at their defaults)"),
        ("Workbook", "capacity-plan.xlsx, written by the same build: every number here is a "
                     "value its formulas cache"),
    ]


# --------------------------------------------------------------------------------------------
# The page
# --------------------------------------------------------------------------------------------

def summary_line(plan: Plan) -> str:
    return (f"{len(plan.grid.axes['models'])} models × {len(plan.grid.axes['gpus'])} GPUs, "
            f"{len(plan.rows):,} configurations evaluated, generated {plan.generated} by "
            f"planner {plan.version}")


def build_context(plan: Plan) -> dict[str, object]:
    fit_headers, fit_rows = fit_matrix(plan)
    models, gpus = catalog_rows(plan)
    tables = capacity_tables(plan)
    return {
        "title": "GPU capacity plan for LLM inference",
        "summary": summary_line(plan),
        "batch": headline_batch(plan.grid),
        "reference_context": tokens_label(reference_context(plan.grid, plan.view)),
        "grid_contexts": [tokens_label(c) for c in sorted(plan.grid.axes["context"])],
        "prompt": f"{grid_prompt(plan.grid, plan.view):,}",
        "grid_weights": ", ".join(fmt_id(w) for w in plan.grid.axes["weights"]
                                  if w in ANSWER_WEIGHTS) or "all",
        "quantized_weights": ", ".join(fmt_id(w) for w in plan.grid.axes["weights"]
                                       if w not in ANSWER_WEIGHTS),
        "answers": headline_answers(plan),
        "fit_headers": fit_headers,
        "fit_rows": fit_rows,
        "capacity_tables": tables,
        "capacity_intro": capacity_intro(tables),
        "featured_note": featured_note(plan),
        "view_contexts": [tokens_label(c) for c in plan.view.contexts],
        "sequences": sequences_table(plan),
        "charts": charts(plan),
        "assumptions": assumption_rows(plan),
        "overrides": bool(plan.overrides),
        "method": method_rows(),
        "model_sources": models,
        "gpu_sources": gpus,
        "metadata": metadata(plan),
        **budget_context(plan),
        **accuracy_context(plan),
    }


def environment() -> Environment:
    return Environment(loader=FileSystemLoader(TEMPLATE_DIR), autoescape=True,
                       undefined=StrictUndefined, trim_blocks=True, lstrip_blocks=True,
                       keep_trailing_newline=True)


def render_html(plan: Plan) -> str:
    return environment().get_template(TEMPLATE_NAME).render(build_context(plan))


def write_html(plan: Plan, path: Path) -> None:
    Path(path).write_text(render_html(plan), encoding="utf-8")
