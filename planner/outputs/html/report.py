"""The HTML summary: one self-contained page that procurement can attach to a purchase request.
This module assembles the template context from the page's sections (decision, the first
screen; budget, the workload cards; prices; glossary; answers, capacity, charts, sources,
accuracy: the modules beside it, where everything a reader sees is chosen and computed as plain
values and pre-formatted text) and renders it; the Jinja templates in
``templates/`` only lay it out (autoescaped, StrictUndefined, no arithmetic). Every number is a
quantity's Python value, the one the workbook caches, formatted by
:func:`planner.outputs.terminal.value_text`; charts are inline SVG from
:mod:`planner.outputs.html.svgcharts`."""

from __future__ import annotations

from pathlib import Path

from jinja2 import Environment, FileSystemLoader, StrictUndefined

from planner.inputs.catalog import PROJECT_ROOT
from planner.outputs.html.accuracy import accuracy_context
from planner.outputs.html.answers import headline_answers
from planner.outputs.html.budget import budget_context
from planner.outputs.html.capacity import (
    capacity_intro,
    capacity_tables,
    featured_note,
    fit_matrix,
    sequences_table,
)
from planner.outputs.html.charts import charts
from planner.outputs.html.decision import decision_context
from planner.outputs.html.formatting import fmt_id, tokens_label
from planner.outputs.html.glossary import TERMS, Linker
from planner.outputs.html.prices import cloud_rows, server_rows
from planner.outputs.html.schedule import schedule_context
from planner.outputs.html.sources import assumption_rows, catalog_rows, metadata, method_rows
from planner.plan.plan import Plan
from planner.plan.summary import ANSWER_WEIGHTS, grid_prompt, headline_batch, reference_context

TEMPLATE_DIR = PROJECT_ROOT / "templates"
TEMPLATE_NAME = "capacity-plan.html.j2"


def summary_line(plan: Plan) -> str:
    return (f"{len(plan.grid.axes['models'])} models × {len(plan.grid.axes['gpus'])} GPUs, "
            f"{len(plan.rows):,} configurations evaluated, generated {plan.generated} by "
            f"planner {plan.version}")


def build_context(plan: Plan) -> dict[str, object]:
    link = Linker()  # links each glossary term's first use: sections built in page order
    decision = decision_context(plan, link)
    budget = budget_context(plan, link)
    fit_headers, fit_rows = fit_matrix(plan)
    models, gpus = catalog_rows(plan)
    tables = capacity_tables(plan)
    return {
        "title": "GPU capacity plan for LLM inference",
        "summary": summary_line(plan),
        "summary_grid": (f"{len(plan.grid.axes['models'])} models × "
                         f"{len(plan.grid.axes['gpus'])} GPUs"),
        **decision,
        **budget,
        "server_prices": server_rows(plan),
        "cloud_offers": cloud_rows(plan),
        "glossary": TERMS,
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
        **schedule_context(plan),
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
