"""The grid of configurations to expand, read from YAML: models × GPUs × formats × context ×
concurrency × TP, plus the selection the workbook's capacity view opens on."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from planner.errors import CatalogError, Location
from planner.inputs.catalog import PROJECT_ROOT
from planner.inputs.entries import Catalog
from planner.inputs.scenario import Scenario, tp_problem
from planner.inputs.yamlsource import Node, load_yaml
from planner.model.formats import KV_FORMATS, WEIGHT_FORMATS

DEFAULT_GRID = PROJECT_ROOT / "catalogs" / "grid.yaml"
EXCEL_MAX_ROWS = 1_048_576

AXES = ("models", "gpus", "weights", "kv", "context", "batch", "tp", "prompt", "output")
VIEW_KEYS = ("model", "gpu", "weights", "kv", "tp", "batch", "prompt", "context", "contexts",
             "concurrency")


@dataclass(frozen=True)
class View:
    """What the capacity view and charts show when the workbook opens (editable there)."""

    model: str
    gpu: str
    weights: str
    kv: str
    tp: int
    batch: int
    prompt: int
    context: int
    contexts: tuple[int, ...]
    concurrency: tuple[int, ...]

    def scenario(self, **changes: Any) -> Scenario:
        """The selected configuration, with any field replaced (a GPU, a context...)."""
        base = Scenario(self.model, self.gpu, self.weights, self.kv, self.tp, self.context,
                        self.batch, self.prompt)
        return replace(base, **changes)


@dataclass
class Grid:
    path: Path
    axes: dict[str, list]
    view: View
    skipped: dict[str, int] = field(default_factory=dict)
    lines: dict[str, int] = field(default_factory=dict)  # axis -> its line in the file

    def size(self) -> int:
        n = 1
        for values in self.axes.values():
            n *= len(values)
        return n


def _ids(node: Node, path: Path, axis: str, known: list[str]) -> list[str]:
    loc = Location(path, node.line, entry="grid", field=axis)
    if node.value == "all":
        return list(known)
    values = node.value if isinstance(node.value, list) else None
    if not values:
        raise CatalogError(loc, "must be a non-empty list or 'all'",
                           f"e.g. {axis}: [{', '.join(known[:2])}]")
    out = []
    for item in values:
        if not isinstance(item.value, str) or item.value not in known:
            import difflib

            close = difflib.get_close_matches(str(item.value), known, n=1)
            hint = f"did you mean '{close[0]}'?" if close else f"known: {', '.join(known)}"
            if axis in ("models", "gpus"):
                hint += (f"; with your own --{axis} catalog, pass a --grid that names its ids "
                         f"(or {axis}: all)")
            raise CatalogError(Location(path, item.line, entry="grid", field=axis),
                               f"unknown id {item.value!r}", hint)
        out.append(item.value)
    return out


def _positive_ints(node: Node, path: Path, axis: str, entry: str = "grid") -> list[int]:
    loc = Location(path, node.line, entry=entry, field=axis)
    raw = node.value if isinstance(node.value, list) else [node]
    if not raw:
        raise CatalogError(loc, "must not be empty", f"e.g. {axis}: [1, 8]")
    out = []
    for item in raw:
        v = item.value
        if isinstance(v, bool) or not isinstance(v, int) or v <= 0:
            raise CatalogError(Location(path, item.line, entry=entry, field=axis),
                               f"must be whole numbers greater than 0, got {v!r}")
        out.append(v)
    return out


def load_grid(path: Path | str, models: Catalog, gpus: Catalog) -> Grid:
    path = Path(path)
    root = load_yaml(path, "a grid file with a top-level 'grid:' mapping")
    if not isinstance(root.value, dict) or "grid" not in root.value:
        raise CatalogError(Location(path, root.line), "expected a top-level 'grid:' mapping",
                           "see catalogs/grid.yaml for the shape")
    for key in root.value:
        if key not in ("grid", "view"):
            raise CatalogError(Location(path, root.value[key].line, field=key),
                               "unknown top-level key", "expected 'grid' and optionally 'view'")
    body = root.value["grid"]
    if not isinstance(body.value, dict):
        raise CatalogError(Location(path, body.line, field="grid"), "must be a mapping of axes")
    for key, node in body.value.items():
        if key not in AXES:
            import difflib

            close = difflib.get_close_matches(key, AXES, n=1)
            raise CatalogError(Location(path, node.line, entry="grid", field=key), "unknown axis",
                               f"did you mean '{close[0]}'?" if close else
                               f"axes: {', '.join(AXES)}")
    for key in AXES:
        if key not in body.value and key not in ("prompt", "output"):
            raise CatalogError(Location(path, body.line, entry="grid", field=key),
                               "axis is missing", f"add {key}: [...]")
    b = body.value
    axes: dict[str, list] = {
        "models": _ids(b["models"], path, "models", list(models.entries)),
        "gpus": _ids(b["gpus"], path, "gpus", list(gpus.entries)),
        "weights": _ids(b["weights"], path, "weights", list(WEIGHT_FORMATS)),
        "kv": _ids(b["kv"], path, "kv", list(KV_FORMATS)),
        "context": _positive_ints(b["context"], path, "context"),
        "batch": _positive_ints(b["batch"], path, "batch"),
        "tp": _positive_ints(b["tp"], path, "tp"),
        "prompt": _positive_ints(b["prompt"], path, "prompt") if "prompt" in b else [2048],
        "output": _positive_ints(b["output"], path, "output") if "output" in b else [512],
    }
    lines = {"grid": body.line, **{key: node.line for key, node in b.items()}}
    check_not_empty(Grid(path, axes, None, lines=lines), models, gpus)  # type: ignore[arg-type]
    view = _load_view(root.value.get("view"), path, axes, models, gpus)
    return Grid(path, axes, view, lines=lines)


def check_not_empty(grid: Grid, models: Catalog, gpus: Catalog) -> None:
    """Refuse a grid every configuration of which is left out (say tp: [3], which no model's
    heads split): there would be nothing to build. Says why each model × GPU × TP goes."""
    a = grid.axes
    if count_valid(grid, models, gpus):
        return
    why = []
    for model_id, gpu_id, tp in itertools.product(a["models"], a["gpus"], a["tp"]):
        problem = tp_problem(models.entries[model_id], tp)
        if problem is None:
            per_node = int(gpus.entries[gpu_id].number("gpus_per_node"))
            problem = f"TP {tp} exceeds the {per_node} GPUs per node of {gpu_id}"
        why.append(problem)
    shown = sorted(set(why))
    more = f"; and {len(shown) - 3} more" if len(shown) > 3 else ""
    raise CatalogError(Location(grid.path, grid.lines.get("tp", grid.lines.get("grid")),
                                entry="grid", field="tp"),
                       f"the grid yields no configuration, so there is nothing to build: every "
                       f"model × GPU × TP is left out ({'; '.join(shown[:3])}{more})",
                       "use TP degrees that divide the models' attention heads and fit the "
                       "GPUs per node, e.g. tp: [1, 8]")


def _load_view(node: Node | None, path: Path, axes: dict[str, list], models: Catalog,
               gpus: Catalog) -> View:
    defaults = {
        "model": axes["models"][0], "gpu": axes["gpus"][0], "weights": axes["weights"][0],
        "kv": axes["kv"][0], "tp": max([tp for tp in axes["tp"] if skip_reason(
            models, gpus, axes["models"][0], axes["gpus"][0], tp) is None] or [1]),
        "batch": max(axes["batch"]),
        "prompt": axes["prompt"][0], "context": axes["context"][0],
        "contexts": sorted(set(axes["context"]) | {4096, 8192, 32768, 131072}),
        "concurrency": [1, 4, 16, 64, 256],
    }
    if node is None:
        return _view(defaults)
    if not isinstance(node.value, dict):
        raise CatalogError(Location(path, node.line, field="view"), "must be a mapping")
    known = {"model": list(models.entries), "gpu": list(gpus.entries),
             "weights": list(WEIGHT_FORMATS), "kv": list(KV_FORMATS)}
    values = dict(defaults)
    for key, child in node.value.items():
        loc = Location(path, child.line, entry="view", field=key)
        if key not in VIEW_KEYS:
            raise CatalogError(loc, "unknown view setting", f"known: {', '.join(VIEW_KEYS)}")
        if key in known:
            if child.value not in known[key]:
                raise CatalogError(loc, f"unknown id {child.value!r}",
                                   f"known: {', '.join(known[key])}; the view must name ids "
                                   "of the catalogs in use")
            values[key] = child.value
        elif key in ("contexts", "concurrency"):
            values[key] = _positive_ints(child, path, key, "view")
        else:
            values[key] = _positive_ints(child, path, key, "view")[0]
    if "tp" in node.value:
        problem = tp_problem(models.entries[str(values["model"])], int(values["tp"]))  # type: ignore[call-overload]
        if problem:
            raise CatalogError(Location(path, node.value["tp"].line, entry="view", field="tp"),
                               problem)
    return _view(values)


def _view(values: dict[str, object]) -> View:
    fields = {k: tuple(v) if isinstance(v, list) else v for k, v in values.items()}
    return View(**fields)  # type: ignore[arg-type]


def skip_reason(models: Catalog, gpus: Catalog, model_id: str, gpu_id: str,
                tp: int) -> str | None:
    """Why a grid leaves out this (model, GPU, TP), or None when it keeps it."""
    if tp_problem(models.entries[model_id], tp):
        return "TP does not shard the model"
    if tp > gpus.entries[gpu_id].number("gpus_per_node"):
        return "TP exceeds GPUs per node"
    return None


def count_valid(grid: Grid, models: Catalog, gpus: Catalog) -> int:
    """Rows `expand` yields, counted without expanding (validity depends on model, GPU, TP)."""
    a = grid.axes
    per_triple = (len(a["weights"]) * len(a["kv"]) * len(a["context"]) * len(a["batch"])
                  * len(a["prompt"]) * len(a["output"]))
    triples = sum(1 for m, g, tp in itertools.product(a["models"], a["gpus"], a["tp"])
                  if skip_reason(models, gpus, m, g, tp) is None)
    return triples * per_triple


def expand(grid: Grid, models: Catalog, gpus: Catalog) -> Iterator[Scenario]:
    """Every valid configuration, in a stable order; counts what it skips and why."""
    grid.skipped = {"TP does not shard the model": 0, "TP exceeds GPUs per node": 0}
    a = grid.axes
    for model_id, gpu_id, weights, kv, tp, context, batch, prompt, output in itertools.product(
            a["models"], a["gpus"], a["weights"], a["kv"], a["tp"], a["context"], a["batch"],
            a["prompt"], a["output"]):
        reason = skip_reason(models, gpus, model_id, gpu_id, tp)
        if reason:
            grid.skipped[reason] += 1
            continue
        yield Scenario(model_id, gpu_id, weights, kv, tp, context, batch, prompt, output)


def grid_for(path: Path | str, models: Catalog, gpus: Catalog, own_catalogs: bool) -> Grid:
    """The grid to expand. The shipped grid names shipped ids; beside a user's own catalogs
    (and no --grid of theirs) its axes are kept but every model and GPU of the catalogs given
    is taken, and the featured configuration is one that exists in them."""
    path = Path(path)
    if not own_catalogs or path != DEFAULT_GRID:
        return load_grid(path, models, gpus)
    shipped = load_yaml(path, "the shipped grid").value["grid"].value
    axes: dict[str, list] = {"models": list(models.entries), "gpus": list(gpus.entries)}
    for axis in AXES[2:]:
        node = shipped.get(axis)
        axes[axis] = [n.value for n in node.value] if node is not None else (
            [2048] if axis == "prompt" else [512])
    model, gpu = axes["models"][0], axes["gpus"][0]
    tps = [tp for tp in sorted(set(axes["tp"]) | {1}) if skip_reason(models, gpus, model, gpu,
                                                                      tp) is None]
    view = _view({
        "model": model, "gpu": gpu, "weights": axes["weights"][0], "kv": axes["kv"][0],
        "tp": max(tps or [1]), "batch": max(axes["batch"]), "prompt": axes["prompt"][0],
        "context": axes["context"][0],
        "contexts": sorted(set(axes["context"]) | {4096, 8192, 32768, 131072}),
        "concurrency": [1, 4, 16, 64, 256]})
    return Grid(path, axes, view)
