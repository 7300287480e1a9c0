"""The data and captions of the HTML summary's charts: sequences that fit vs context, decode
throughput and per-user speed vs concurrency with their memory- and compute-bound regions, cost
per million tokens by GPU × TP, and KV cache vs weights. The inline SVG is drawn by
:mod:`planner.outputs.html.svgcharts`, which escapes its own text."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from markupsafe import Markup

from planner.model.quantities import ROW_BY_NAME
from planner.model.units import GB
from planner.outputs.html.formatting import (
    config_text,
    fmt_id,
    formats_text,
    gpu_short,
    replica_text,
    text,
    tokens_label,
)
from planner.outputs.html.selection import number, valid_env, with_load
from planner.outputs.html.svgcharts import (
    NARROW,
    WIDTH,
    Band,
    Series,
    bar_chart,
    format_si,
    line_chart,
)
from planner.outputs.terminal import value_text
from planner.plan.calc import Evaluated
from planner.plan.plan import Plan
from planner.plan.summary import ANSWER_WEIGHTS, headline_batch, reference_context

CHART_CONCURRENCY = tuple(2**i for i in range(10))  # 1 .. 512
MAX_COST_BARS = 16


@dataclass(frozen=True)
class Chart:
    svg: Markup
    caption: str
    narrow: Markup  # the same chart drawn for a phone's width


def chart(draw: Callable[[float], str], caption: str) -> Chart:
    """A chart drawn at the page's width and again at a phone's, so its text stays legible
    there rather than shrinking with it."""
    return Chart(Markup(draw(WIDTH)), caption, Markup(draw(NARROW)))


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

    def draw(width: float) -> str:
        return line_chart(
            f"Sequences that fit vs context: {plan.models.entries[v.model].name}",
            "Context length [tokens]", "Sequences that fit [sequences]", series, log_x=True,
            log_y=True, x_ticks=[float(c) for c in v.contexts], width=width,
            description=f"How many sequences of each length the KV pool holds; {setup}")

    caption = (f"{setup} A missing point means not even one sequence fits. "
               + (f"Left out because {v.tp} GPUs exceed their scale-up domain or cannot shard "
                  f"the model: {', '.join(left_out)}." if left_out else ""))
    return chart(draw, caption.strip())


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

    def draw(width: float) -> str:
        return line_chart(f"{title}: {plan.models.entries[base.scenario.model].name}",
                          "Concurrency [sequences]", y_label, series, log_x=True, log_y=True,
                          bands=bands, x_ticks=[float(b) for b in CHART_CONCURRENCY],
                          description=setup, width=width)

    regions = "; ".join(f"{b.label} from {format_si(b.x_from)} to {format_si(b.x_to)} "
                        "sequences" for b in bands)
    caption = (f"{setup} Shaded: {regions}. At most {text(envs[0], 'max_sequences')} fit; "
               "beyond that the line is dashed.")
    return chart(draw, caption)


def policy_cheapest(plan: Plan) -> dict[tuple[str, int], Evaluated]:
    """For each GPU × TP of the cost chart, its cheapest fitting row in the Answers table's
    precision policy (``ANSWER_WEIGHTS``; every format when the grid has none in it), at the
    reference context and the headline batch, first of equals in grid order as the Answers
    table picks."""
    summary, grid = plan.summary, plan.grid
    context, batch = reference_context(grid, plan.view), headline_batch(grid)
    weights = [w for w in grid.axes["weights"] if w in ANSWER_WEIGHTS] or grid.axes["weights"]
    base = plan.view.scenario(context=context, batch=batch, prompt=summary.prompt,
                              output=grid.axes.get("output", [0])[0])
    best: dict[tuple[str, int], Evaluated] = {}
    for gpu, tp in summary.cost_replicas:
        for w in weights:
            for kv in grid.axes["kv"]:
                env = plan.row_env(replace(base, gpu=gpu, tp=tp, weights=w, kv=kv))
                key = (number(env, "cost_per_million_tokens"), tp)
                if (env.value("fits") is True and math.isfinite(key[0])
                        and ((gpu, tp) not in best or key < (
                            number(best[gpu, tp], "cost_per_million_tokens"), tp))):
                    best[gpu, tp] = env
    return best


def cost_chart(plan: Plan) -> Chart:
    """Cost per million tokens, rented at the GPU-hour price, of each GPU × TP (its cheapest
    fitting format in the precision policy) for the view model: the cheapest bar is the
    Answers table's answer at the same context."""
    context, batch = reference_context(plan.grid, plan.view), headline_batch(plan.grid)
    summary = plan.summary
    found = policy_cheapest(plan)
    ranked = sorted(found.values(), key=lambda e: (number(e, "cost_per_million_tokens"),
                                                   e.scenario.tp))
    bars = [(f"{replica_text(plan, e.scenario)} · {formats_text(e.scenario)}",
             number(e, "cost_per_million_tokens")) for e in ranked[:MAX_COST_BARS]]
    highlight = {bars[0][0]} if bars else set()
    quantized = not bars and bool(summary.cost_cheapest)
    if quantized:  # nothing fits in full quality: the quantized options, none the answer
        picks = sorted(summary.cost_cheapest.values(), key=lambda p: p.number)
        bars = [(f"{replica_text(plan, p.scenario)} · {formats_text(p.scenario)} (quantized)",
                 p.number) for p in picks[:MAX_COST_BARS]]
    quantity = ROW_BY_NAME["cost_per_million_tokens"]
    setup = (f"At {batch} sequences of {tokens_label(context)} tokens of context "
             f"({summary.prompt:,}-token prompts), rented GPUs busy all the time, output "
             "tokens only; each GPU × TP with its cheapest full-quality weight / KV format "
             "that fits.")
    name = plan.models.entries[plan.view.model].name

    def draw(width: float) -> str:
        return bar_chart(f"Cost per million tokens, rented: {name} at "
                         f"{tokens_label(context)} tokens of context",
                         "Cost per million tokens, rented at the GPU-hour price [USD]", bars,
                         highlight=highlight, value_format=lambda v: value_text(v, quantity),
                         description=f"{setup} The cheapest configuration is highlighted.",
                         highlight_label="cheapest, as in the Answers table (orange bar, bold "
                                         "label)", width=width)

    cheaper = [p for key, p in summary.cost_cheapest.items()
               if p.scenario.weights not in ANSWER_WEIGHTS and key in found
               and p.number < number(found[key], "cost_per_million_tokens")]
    replicas = len(summary.cost_replicas)
    shown = f" (the {MAX_COST_BARS} cheapest shown)" if len(ranked) > MAX_COST_BARS else ""
    caption = (f"{setup} {len(ranked)} of {replicas} GPU × TP configurations fit{shown}. The "
               "highlighted bar is the Answers table's cheapest at this context.")
    if quantized:
        caption = (f"{setup} None fits in a full-quality format, so the Answers table says "
                   "nothing fits; shown instead, labelled, the quantized formats that do: they "
                   "trade accuracy for memory, and none is the answer.")
    only = [p for key, p in summary.cost_cheapest.items() if key not in found]
    if only and not quantized:
        caption += (f" {len(only)} more fit only with a quantized format "
                    f"({', '.join(sorted({fmt_id(p.scenario.weights) for p in only}))}).")
    if cheaper:
        formats = ", ".join(sorted({fmt_id(p.scenario.weights) for p in cheaper}))
        caption += (f" A quantized format ({formats}) would cost less on {len(cheaper)} of "
                    "them; as in the Answers table it trades accuracy for memory, so it is not "
                    "counted as the cheapest.")
    return chart(draw, caption)


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

    def draw(width: float) -> str:
        return line_chart(f"KV cache vs weights: {name}", "Context length [tokens]",
                          "Memory, whole replica [GB = 10^9 bytes]", series, log_x=True,
                          log_y=True, x_ticks=[float(c) for c in contexts], width=width,
                          description=f"{setup} Where a KV line crosses the weights, the "
                                      "cache weighs more than the model.")

    caption = (f"{setup} The KV cache weighs as much as the weights at "
               f"{text(base, 'crossover_tokens')} in total over all sequences: "
               f"{text(base, 'weight_bytes')} of weights, {text(base, 'kv_bytes_per_token')} "
               "of KV cache per token.")
    return chart(draw, caption)


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
