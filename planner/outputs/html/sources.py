"""The HTML summary's evidence sections: the assumptions with their values, defaults, reasons and
sources; the method (each quantity's formula and the assumptions it rests on); the sources of the
catalog entries this plan evaluated, their web addresses as links; and the build's metadata (the
catalogs and grid it read, with their sha256, and the overrides)."""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from pathlib import Path

from markupsafe import Markup, escape

from planner.inputs.assumptions import ASSUMPTIONS
from planner.inputs.catalog import PROJECT_ROOT
from planner.model.fleet import FLEET_QUANTITIES
from planner.model.formats import KV_FORMATS, WEIGHT_FORMATS
from planner.model.quantities import ROW_QUANTITIES, assumptions_used
from planner.outputs.html.formatting import fmt_id
from planner.outputs.method import readable_formula
from planner.plan.plan import Plan


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
    printed: bool = True  # the print keeps the entries the workloads use


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
    sized_models = {s.workload.text("model") for s in plan.sized}
    sized_gpus = {s.choice.candidate.gpu for s in plan.sized if s.choice is not None}
    used_models = set(plan.grid.axes["models"]) | sized_models
    used_gpus = set(plan.grid.axes["gpus"]) | {e.candidate.gpu for s in plan.sized
                                               for e in s.rows}
    models = [SourceRow(e.id, e.name, linked(e.source), linked(e.text("notes")),
                        e.id in sized_models or not sized_models)
              for e in plan.models.entries.values() if e.id in used_models]
    gpus = [SourceRow(e.id, e.name, linked(e.source), linked("; ".join(
        t for t in (f"prices {e.text('price_date')}", e.text("price_source")) if t.strip())),
        e.id in sized_gpus or not sized_gpus)
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
