"""`planner import-workbook`: an edited workbook's inputs back into YAML. The inputs are read by
`planner diff`'s comparison (so a workbook the planner did not write, or one whose formulas were
overwritten, is refused with the cell to look at). Assumptions that differ from their defaults
go to ``assumptions.yaml`` (the file form of ``--set``); catalog fields are written into copies
of the catalogs the workbook was built from, each value replaced in place on its line (by
``yamltext``) so that comments and order stay; the capacity view goes to the grid file. Every
value is checked as the YAML and ``--set`` are, and the written files are loaded and built
before anything is moved into the folder. The import's text and JSON reports are here too.
"""

from __future__ import annotations

import datetime as dt
import math
import re
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from planner.errors import ArgumentError, CatalogError, Location, PlannerError
from planner.roundtrip.compare import same_value
from planner.roundtrip.diff import FormulaChange, InputCell, WorkbookDiff, diff_workbook
from planner.roundtrip.reader import WorkbookError, shown
from planner.roundtrip.sources import FILE_NAMES
from planner.roundtrip.yamltext import YamlText, key_line, scalar_text

CATALOG_SECTIONS = ("models", "gpus", "servers", "workloads")
# Prices whose edit in the workbook dates the entry's price (price_date: the month of the
# import) and says so in its source field, so that the YAML never shows a new price with an
# old date and an old source.
PRICE_FIELDS = {"servers": ("price_usd",), "gpus": ("price_usd", "price_per_hour_usd")}
PRICE_SOURCE = {"servers": "source", "gpus": "price_source"}
OUTPUT_KINDS = ("assumptions", *CATALOG_SECTIONS, "grid")
VIEW_IDS = ("model", "gpu", "weights", "kv")
VIEW_LISTS = ("contexts", "concurrency")


# -- values from cells --------------------------------------------------------------------------

@dataclass
class Written:
    """One value written: the cell it came from and where it went."""

    sheet: str
    cell: str
    name: str
    old: Any
    new: Any
    file: Path
    line: int | None
    why: str  # "edited" | "--set" (a catalog field the build had from --set) | "as built"
    #          | "price edited" (the date and source of a price edited in the workbook)


@dataclass
class ImportResult:
    workbook: Path
    folder: Path
    files: dict[str, Path]
    written: list[Written]
    assumptions: dict[str, float | str]
    dropped: list[tuple[str, str, str, str]]  # sheet, cell, name, what was dropped
    notes: list[str] = field(default_factory=list)

    def command(self) -> list[str]:
        f = self.files
        return ["planner", "build", "--assumptions", str(f["assumptions"]),
                "--models", str(f["models"]), "--gpus", str(f["gpus"]),
                "--servers", str(f["servers"]), "--workloads", str(f["workloads"]),
                "--grid", str(f["grid"])]


def _located(d: WorkbookDiff, c: InputCell, problem: str, hint: str | None = None
             ) -> WorkbookError:
    return WorkbookError(d.workbook, problem, c.sheet, c.cell, c.name, hint)


def _date_text(value: dt.date) -> str:
    if isinstance(value, dt.datetime) and value.time() != dt.time(0):
        return value.isoformat()
    return f"{value:%Y-%m}" if value.day == 1 else f"{value:%Y-%m-%d}"


def _catalog_value(d: WorkbookDiff, c: InputCell, value: Any, spec: Any) -> Any:
    """The YAML value of a catalog cell, checked as the catalog checks it; None when blank."""
    from planner.inputs.fields import check_value
    from planner.inputs.yamlsource import Node

    if value is None or (isinstance(value, str) and not value.strip()):
        if spec.required:
            raise _located(d, c, "is blank, but every entry needs this field",
                           f"type the value back: {spec.help}")
        return None
    if isinstance(value, dt.date) and spec.kind == "text":
        value = _date_text(value)
    if spec.kind == "ids":
        if not isinstance(value, str):
            raise _located(d, c, f"must be ids separated by commas, got {shown(value)}",
                           f"e.g. bf16, fp8; {spec.help}")
        node = Node([Node(v.strip(), 0, 0) for v in value.split(",") if v.strip()], 0, 0)
    else:
        if spec.kind == "number" and isinstance(value, float) and value.is_integer() \
                and abs(value) < 2 ** 53:
            value = int(value)
        node = Node(value, 0, 0)
    assert c.home is not None
    try:
        return check_value(spec, node, Location(entry=c.home.key, field=c.home.field))
    except CatalogError as exc:
        raise _located(d, c, exc.problem, exc.hint) from None


def _assumption_value(d: WorkbookDiff, c: InputCell, value: Any) -> float | str:
    from planner.inputs.settings import parse_overrides

    assert c.home is not None
    name = c.home.key
    if value is None or isinstance(value, bool) or not isinstance(value, int | float | str):
        raise _located(d, c, f"must be a number or a word, got {shown(value)}",
                       "type the value; `planner list assumptions` shows its unit and range")
    text = value if isinstance(value, str) else repr(value)
    try:
        return parse_overrides([f"{name}={text}"])[name]
    except ArgumentError as exc:  # "--set NAME=TEXT: problem" -> "problem"
        raise _located(d, c, str(exc).split(": ", 1)[-1]) from None


def _view_value(d: WorkbookDiff, c: InputCell, value: Any) -> Any:
    assert c.home is not None
    if c.home.key in VIEW_IDS:
        if not isinstance(value, str) or not value.strip():
            raise _located(d, c, f"must be an id, got {shown(value)}",
                           "choose one from the cell's drop-down list")
        return value.strip()
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise _located(d, c, f"must be a whole number greater than 0, got {shown(value)}")
    return value


def _same_yaml(raw: Any, value: Any) -> bool:
    if isinstance(raw, dt.date):
        raw = _date_text(raw) if isinstance(value, str) and len(value) == 7 else raw.isoformat()
    if isinstance(raw, list) and isinstance(value, list):
        return raw == value
    if raw is None or value is None:
        return raw is value
    return same_value(raw, value)


# -- the import -----------------------------------------------------------------------------------

def _parse_cell(text: str, sheets: Sequence[str]) -> tuple[str, str]:
    m = re.fullmatch(r"(?:'((?:[^']|'')+)'|([^!']+))!\$?([A-Za-z]{1,3})\$?(\d+)", text.strip())
    titles = {s.lower(): s for s in sheets}
    sheet = ((m.group(1) or "").replace("''", "'") or m.group(2)).strip() if m else ""
    if not m or sheet.lower() not in titles:
        raise ArgumentError(f"--accept-overwritten {text}: expected SHEET!CELL with a sheet of "
                            "the workbook, e.g. Grid!M5 or 'View data'!B2")
    return titles[sheet.lower()], f"{m.group(3).upper()}{m.group(4)}"


def _refuse(d: WorkbookDiff, formulas: list[FormulaChange], inputs: list[InputCell]) -> None:
    lines = []
    for f in formulas:
        what = {"constant": f"replaced by the value {shown(f.found)}", "cleared": "deleted",
                "altered": f"altered to {f.found}"}[f.kind]
        name = f" ({f.name})" if f.name else ""
        lines.append(f"  {f.sheet}!{f.cell}{name}: the formula {f.expected} was {what}")
    for c in inputs:
        if c.formula:
            lines.append(f"  {c.sheet}!{c.cell} ({c.name}): the input holds the formula {c.new}; "
                         "YAML takes values")
        else:
            lines.append(f"  {c.sheet}!{c.cell} ({c.name}): edited {shown(c.old)} -> "
                         f"{shown(c.new)}, but no YAML file holds this input")
    places = [(f.sheet, f.cell) for f in formulas] + [(c.sheet, c.cell) for c in inputs]
    cells = ",".join(f"'{sheet}'!{cell}" if " " in sheet else f"{sheet}!{cell}"
                     for sheet, cell in places)
    problem = "cannot be imported as it is:\n" + "\n".join(lines)
    hint = ("restore these cells (planner diff shows what they held), type values into inputs "
            f"that hold formulas, or pass --accept-overwritten {cells} to drop them (a rebuild "
            "writes the planner's formulas and values there again)")
    raise WorkbookError(d.workbook, problem, hint=hint)


def import_workbook(workbook: Path | str, to: Path | str | None = None,
                    accept: Sequence[str] = (), progress: Any = None) -> ImportResult:
    from planner.outputs.workbook import SHEET_ORDER

    workbook = Path(workbook)
    d = diff_workbook(workbook, progress=progress)
    folder = Path(to) if to is not None else workbook.parent / "imported"
    accepted = {_parse_cell(text, SHEET_ORDER): text for text in accept}
    used: set[tuple[str, str]] = set()
    dropped: list[tuple[str, str, str, str]] = []
    bad_formulas, bad_inputs = [], []
    for f in d.formulas:
        if (f.sheet, f.cell) in accepted:
            used.add((f.sheet, f.cell))
            dropped.append((f.sheet, f.cell, f.name, f"{shown(f.found)} over {f.expected}"))
        else:
            bad_formulas.append(f)
    keep_old: set[tuple[str, str]] = set()
    for c in d.inputs:
        if not (c.formula or c.home is None):
            continue
        if (c.sheet, c.cell) in accepted:
            used.add((c.sheet, c.cell))
            keep_old.add((c.sheet, c.cell))
            dropped.append((c.sheet, c.cell, c.name, f"{shown(c.new)} (kept {shown(c.old)})"))
        else:
            bad_inputs.append(c)
    if d.rows:
        raise WorkbookError(d.workbook, "its catalog entries differ from the catalogs it was "
                            "built from: " + "; ".join(f"{r.sheet} {r.name}: {r.problem}"
                                                        for r in d.rows),
                            hint="import a workbook whose catalog rows are as planner build "
                                 "wrote them")
    if bad_formulas or bad_inputs:
        _refuse(d, bad_formulas, bad_inputs)
    for key, text in accepted.items():
        if key not in used:
            raise ArgumentError(f"--accept-overwritten {text}: that cell holds neither an "
                                "overwritten formula nor an edit that cannot be imported; "
                                "planner diff lists those")

    def value(c: InputCell) -> Any:
        return c.old if (c.sheet, c.cell) in keep_old else c.new

    result = ImportResult(workbook, folder, {k: folder / (f"{k}.yaml") for k in OUTPUT_KINDS},
                          [], {}, dropped)
    texts: dict[str, str] = {}
    texts["assumptions"] = _assumptions(d, result, value)
    for section in CATALOG_SECTIONS:
        texts[section] = _catalog(d, result, section, value)
    texts["grid"] = _grid(d, result, value)
    if any((c.sheet, c.cell) not in keep_old for c in d.inputs):
        _validate(d, result, texts)  # else they are the inputs the diff just rebuilt from
    from planner.outputs.atomic import write_atomically

    def writer(text: str) -> Callable[[Path], None]:
        def write(path: Path) -> None:
            path.write_text(text, encoding="utf-8")

        return write

    write_atomically({result.files[k]: writer(texts[k]) for k in OUTPUT_KINDS})
    return result


def _assumptions(d: WorkbookDiff, result: ImportResult,
                 value: Callable[[InputCell], Any]) -> str:
    from planner.inputs.settings import defaults

    base = defaults()
    lines = []
    for c in d.cells:
        if c.home is None or c.home.section != "assumptions":
            continue
        parsed = _assumption_value(d, c, value(c))
        name = c.home.key
        if c.changed:
            result.written.append(Written(c.sheet, c.cell, c.name, c.old, parsed,
                                          result.files["assumptions"], None, "edited"))
        if not same_value(parsed, base[name]) and name not in result.assumptions:
            result.assumptions[name] = parsed
            number = isinstance(parsed, float) and parsed.is_integer() and abs(parsed) < 2 ** 53
            lines.append(f"  {name}: {scalar_text(int(parsed) if number else parsed)}")
    head = (f"# Assumptions of {d.workbook.name}, written by planner import-workbook on "
            f"{dt.date.today().isoformat()}: every value that differs from its default.\n"
            "# The file form of --set: planner build --assumptions THIS_FILE\n")
    text = head + ("assumptions:\n" + "\n".join(lines) + "\n" if lines else "assumptions: {}\n")
    for w in result.written:
        if w.file == result.files["assumptions"]:
            w.line = key_line(text, ["assumptions", w.name])
    return text


def _catalog(d: WorkbookDiff, result: ImportResult, section: str,
             value: Callable[[InputCell], Any]) -> str:
    from planner.inputs.fields import GPU_FIELDS, MODEL_FIELDS, SERVER_FIELDS, WORKLOAD_FIELDS

    fields = {"models": MODEL_FIELDS, "gpus": GPU_FIELDS, "servers": SERVER_FIELDS,
              "workloads": WORKLOAD_FIELDS}[section]
    source = d.sources.paths[section]
    doc = YamlText(source.read_text(encoding="utf-8"), source)
    raw = (yaml.safe_load(doc.text) or {}).get(section) or {}
    kept = getattr(d.plan, section).entries
    left_out = [entry for entry in raw if entry not in kept]
    for entry in left_out:
        doc.remove([section], entry)
    if left_out:
        result.notes.append(f"{FILE_NAMES[section]}: left out {len(left_out)} entries the "
                            f"workbook does not hold ({', '.join(left_out[:4])}"
                            f"{', ...' if len(left_out) > 4 else ''}): the build it came from "
                            "skipped them, since the catalogs it was given lack their model or "
                            "GPU")
    recorded = d.recorded.overrides
    changes: list[tuple[Written, list[str]]] = []
    for c in d.cells:
        home = c.home
        if home is None or home.section != section or home.key not in raw:
            continue
        spec = fields[home.field]
        new = _catalog_value(d, c, value(c), spec)
        current = raw[home.key].get(home.field) if isinstance(raw[home.key], dict) else None
        if _same_yaml(current, new):
            continue
        keys = [section, home.key]
        if new is None:
            doc.remove(keys, home.field)
        else:
            node = doc.node([*keys, home.field])
            written = doc.text[node.start_mark.index:node.end_mark.index] if node else None
            text = scalar_text(new, written)
            if doc.has(keys, home.field):
                doc.set(keys, home.field, text)
            else:
                doc.add(keys, home.field, text)
        why = "edited" if c.changed else (
            "--set" if home.describe() in recorded else "as built")
        changes.append((Written(c.sheet, c.cell, c.name, current if why != "edited" else c.old,
                                new, result.files[section], None, why), [*keys, home.field]))
    changes += _price_audit(d, section, doc, raw, changes, result)
    text = doc.result()
    for w, keys in changes:
        w.line = key_line(text, keys) if w.new is not None else None
        result.written.append(w)
    return text


def _price_audit(d: WorkbookDiff, section: str, doc: YamlText, raw: dict[str, Any],
                 changes: list[tuple[Written, list[str]]], result: ImportResult
                 ) -> list[tuple[Written, list[str]]]:
    """For each entry whose price was edited in the workbook: price_date becomes this month
    (unless the edit set a date too), and the price's source says it was edited in the
    workbook, on which day, and what the price was."""
    fields = PRICE_FIELDS.get(section, ())
    edited: dict[str, list[tuple[str, Written]]] = {}  # entry -> (field, what was written)
    for w, (_, entry, field_name) in changes:
        if w.why == "edited" and field_name in fields:
            edited.setdefault(entry, []).append((field_name, w))
    dated = {keys[1] for w, keys in changes if w.why == "edited" and keys[-1] == "price_date"}
    today = dt.date.today()
    out: list[tuple[Written, list[str]]] = []
    for entry, prices in edited.items():
        keys = [section, entry]
        what = ", ".join(f"{f} {shown(w.old)} -> {shown(w.new)}" for f, w in prices)
        updates = {}
        if entry not in dated:
            updates["price_date"] = f"{today:%Y-%m}"
        old_source = str(raw[entry].get(PRICE_SOURCE[section]) or "").strip()
        note = f"edited in the workbook {d.workbook.name} on {today.isoformat()} ({what})"
        updates[PRICE_SOURCE[section]] = f"{old_source}; {note}" if old_source else note
        for field_name, value in updates.items():
            old = raw[entry].get(field_name)
            node = doc.node([*keys, field_name])
            written = doc.text[node.start_mark.index:node.end_mark.index] if node else None
            text = scalar_text(value, written)
            if doc.has(keys, field_name):
                doc.set(keys, field_name, text)
            else:
                doc.add(keys, field_name, text)
            first = prices[0][1]
            out.append((Written(first.sheet, first.cell,
                                f"{section}.{entry}.{field_name}", old, value,
                                result.files[section], None, "price edited"),
                        [*keys, field_name]))
    return out


def _grid(d: WorkbookDiff, result: ImportResult, value: Callable[[InputCell], Any]) -> str:
    from planner.inputs.catalog import DEFAULT_GPUS, DEFAULT_MODELS
    from planner.inputs.grid import AXES, DEFAULT_GRID, VIEW_KEYS

    plan = d.plan
    view = {k: getattr(plan.view, k) for k in VIEW_KEYS}
    final = {k: list(v) if isinstance(v, tuple) else v for k, v in view.items()}
    cells: dict[str, InputCell] = {}
    for c in d.cells:
        if c.home is None or c.home.section != "view":
            continue
        new = _view_value(d, c, value(c))
        cells.setdefault(c.home.key, c)
        if c.home.index is not None:
            final[c.home.key][c.home.index] = new
        else:
            final[c.home.key] = new
    changed = [k for k in VIEW_KEYS if final[k] != (list(view[k]) if isinstance(
        view[k], tuple) else view[k])]
    paths = d.sources.paths
    derived = paths["grid"] == DEFAULT_GRID and (
        paths["models"] != DEFAULT_MODELS or paths["gpus"] != DEFAULT_GPUS)
    if derived:  # the build took the shipped grid's axes over the catalogs given: write them
        axes = "".join(f"  {axis}: {scalar_text(plan.grid.axes[axis])}\n" for axis in AXES)
        views = "".join(f"  {k}: {scalar_text(final[k])}\n" for k in VIEW_KEYS)
        text = (f"# The grid of {d.workbook.name}, written by planner import-workbook: the axes "
                "its build expanded.\ngrid:\n" + axes + "view:\n" + views)
    else:
        source = paths["grid"]
        doc = YamlText(source.read_text(encoding="utf-8"), source)
        if changed and doc.node(["view"]) is None:
            doc.append("view:\n" + "".join(f"  {k}: {scalar_text(final[k])}\n" for k in changed))
        else:
            for k in changed:
                if doc.has(["view"], k):
                    doc.set(["view"], k, scalar_text(final[k]))
                else:
                    doc.add(["view"], k, scalar_text(final[k]))
        text = doc.result()
    for c in d.cells:
        if c.home is not None and c.home.section == "view" and c.changed:
            result.written.append(Written(c.sheet, c.cell, c.name, c.old, value(c),
                                          result.files["grid"],
                                          key_line(text, ["view", c.home.key]), "edited"))
    return text


def _validate(d: WorkbookDiff, result: ImportResult, texts: dict[str, str]) -> None:
    """Load and build what would be written; a problem is said at the workbook cell."""
    from planner.inputs.settings import load_assumptions_file
    from planner.plan.plan import build_plan

    with tempfile.TemporaryDirectory(prefix="planner-import-") as tmp:
        paths = {k: Path(tmp) / f"{k}.yaml" for k in OUTPUT_KINDS}
        for kind, path in paths.items():
            path.write_text(texts[kind], encoding="utf-8")
        try:
            build_plan(paths["models"], paths["gpus"], paths["grid"],
                       load_assumptions_file(paths["assumptions"]),
                       workloads_path=paths["workloads"], servers_path=paths["servers"],
                       check_only=True)
        except CatalogError as exc:
            raise _translate(d, result, exc, paths) from None
        except PlannerError as exc:
            raise WorkbookError(d.workbook, f"the imported inputs do not build: {exc}") from None


def _translate(d: WorkbookDiff, result: ImportResult, exc: CatalogError,
               paths: dict[str, Path]) -> WorkbookError:
    loc = exc.location
    kind = next((k for k, p in paths.items() if loc.path is not None and Path(loc.path) == p),
                None)
    section = "view" if kind == "grid" else kind
    cells = [c for c in d.cells if c.home is not None and c.home.section == section
             and (c.home.key == loc.entry or (section == "view" and c.home.key == loc.field))]
    exact = [c for c in cells if section == "view" or c.home is None
             or c.home.field == loc.field]
    edited = [c for c in cells if c.changed]
    target = exact[0] if exact else (edited[0] if edited else None)
    where = result.files[kind].name if kind else "the imported files"
    line = f" line {loc.line}" if loc.line else ""
    problem = f"{exc.problem} (as {where}{line} would say)"
    if target is None:
        return WorkbookError(d.workbook, problem, hint=exc.hint)
    if not exact and len(edited) > 1:
        problem += "; edited in this entry: " + ", ".join(
            f"{c.sheet}!{c.cell} ({c.name})" for c in edited)
    return WorkbookError(d.workbook, problem, target.sheet, target.cell, target.name, exc.hint)


# -- reports ----------------------------------------------------------------------------------

def import_text(r: ImportResult) -> str:
    edited = [w for w in r.written if w.why == "edited"]
    lines = [f"Imported {len(edited)} edited input(s) of {r.workbook} into {r.folder}/:"]
    for w in r.written:
        at = f"{w.file.name}" + (f" line {w.line}" if w.line else "")
        why = {"edited": "", "--set": "  (--set when built)",
               "as built": "  (as the build read it)",
               "price edited": "  (its price was edited in the workbook)"}[w.why]
        old, new = shown(w.old), shown(w.new)
        if w.why == "price edited" and new.startswith(old) and len(new) > len(old):
            old, new = "...", "..." + new[len(old):]  # a source: what was added to it
        lines.append(f"  {w.sheet}!{w.cell}  {w.name}  {old} -> {new}  -> {at}{why}")
    if not r.written:
        lines.append("  nothing was edited: the files are copies of what it was built from")
    for sheet, cell, name, what in r.dropped:
        lines.append(f"  dropped {sheet}!{cell} ({name}): {what}")
    lines += [f"  note: {n}" for n in r.notes]
    lines.append("Rebuild it with:")
    command = r.command()
    lines.append("  " + " ".join(command[:4]) + " \\")
    lines.append("    " + " ".join(command[4:8]) + " \\")
    lines.append("    " + " ".join(command[8:]))
    return "\n".join(lines)


def import_json(r: ImportResult) -> dict[str, object]:
    def plain(v: Any) -> Any:
        if v is None or isinstance(v, bool | int | str) or (
                isinstance(v, float) and math.isfinite(v)):
            return v
        return v if isinstance(v, list) else shown(v)

    return {
        "workbook": str(r.workbook),
        "files": {k: str(v) for k, v in r.files.items()},
        "written": [{"sheet": w.sheet, "cell": w.cell, "name": w.name, "old": plain(w.old),
                     "new": plain(w.new), "file": str(w.file), "line": w.line, "why": w.why}
                    for w in r.written],
        "assumptions": r.assumptions,
        "dropped": [{"sheet": s, "cell": c, "name": n, "what": w} for s, c, n, w in r.dropped],
        "notes": r.notes,
        "command": r.command(),
    }
