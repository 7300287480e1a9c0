"""`planner diff`: what an edited workbook changed, input by input, and every formula cell that
was overwritten or altered. The same workbook is rebuilt in memory from the catalogs
(file name and sha256) and the ``--set`` values its About sheet records, found by ``sources``
(the sheet writers record their cells instead of writing a file: ``workbook_cells``), and
compared cell by cell with the edited one as ``reader`` reads it: input cells value against
value, formula cells formula against formula as ``compare``
judges them. Grid and Fleet rows can be sorted in a spreadsheet: rows are matched by their
configuration, and a moved row's formulas by their relative references. The comparison's text
and JSON reports are here too.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from planner import __version__
from planner.errors import PlannerError
from planner.outputs.workbook.cells import CellsView
from planner.plan.plan import Progress
from planner.roundtrip.compare import same_formula, same_value, shifted
from planner.roundtrip.reader import (
    CATALOG_SHEETS,
    FORMULA,
    OTHER,
    Cells,
    Home,
    Namer,
    Recorded,
    WorkbookError,
    open_workbook,
    read_recorded,
    read_sheet,
    shown,
)
from planner.roundtrip.sources import SOURCE_KINDS, Sources, resolve_sources

# Sheets whose rows a build orders by a ranking it computes (the Sensitivity sheet lists inputs
# by their swing): a rebuild from other inputs may order them otherwise, so rows are matched
# by the name in column A.
RANKED_SHEETS = ("Sensitivity",)


# -- aligning rows that a spreadsheet may have sorted -----------------------------------------

def _key_columns(sheet: str, ref: CellsView) -> list[int]:
    from planner.inputs.scenario import SCENARIO_FIELDS

    if sheet in CATALOG_SHEETS:
        return [1]
    if sheet == "Grid":
        return list(range(1, len(SCENARIO_FIELDS) + 1))
    if sheet == "Fleet":
        lead = range(1, len(SCENARIO_FIELDS) + 3)
        return [c for c in lead if ref.get((2, c), (None, OTHER))[1] != FORMULA]
    if sheet in RANKED_SHEETS:
        return [1]
    return []


def _align(ref: CellsView, ed: Cells, columns: list[int], pair_rest: bool) -> dict[int, int]:
    """Reference row -> edited row for the data rows (from row 2), by the key columns."""
    ref_rows = sorted({r for r, _ in ref if r >= 2})
    ed_rows = sorted({r for r, _ in ed if r >= 2})

    def key(cells: CellsView, r: int) -> tuple[Any, ...]:
        return tuple(cells.get((r, c), (None,))[0] for c in columns)

    ref_keys = {r: key(ref, r) for r in ref_rows}
    if all(key(ed, r) == k for r, k in ref_keys.items()):
        return {}
    by_key: dict[tuple[Any, ...], list[int]] = {}
    for r in ed_rows:
        by_key.setdefault(key(ed, r), []).append(r)
    mapping: dict[int, int] = {}
    used: set[int] = set()
    for r, k in ref_keys.items():
        if key(ed, r) == k:
            mapping[r] = r
            used.add(r)
    for r, k in ref_keys.items():
        if r not in mapping:
            for candidate in by_key.get(k, []):
                if candidate not in used:
                    mapping[r] = candidate
                    used.add(candidate)
                    break
    if pair_rest:
        free = [r for r in ed_rows if r not in used]
        for r in ref_rows:
            if r not in mapping and free:
                pick = r if r in free else free[0]
                free.remove(pick)
                mapping[r] = pick
    return mapping


# -- the comparison ----------------------------------------------------------------------------

@dataclass
class InputCell:
    """An input cell: its value in the rebuilt and in the edited workbook."""

    sheet: str
    cell: str
    name: str
    old: Any
    new: Any
    home: Home | None
    formula: bool = False  # the edited cell holds a formula instead of a value

    @property
    def changed(self) -> bool:
        return self.formula or not same_value(self.old, self.new)


@dataclass
class FormulaChange:
    sheet: str
    cell: str
    name: str
    expected: str
    found: Any
    kind: str  # "constant" (a value typed over it) | "cleared" | "altered"


@dataclass
class RowChange:
    sheet: str
    name: str
    problem: str


@dataclass
class WorkbookDiff:
    workbook: Path
    recorded: Recorded
    sources: Sources
    cells: list[InputCell]  # every input with a home, and every changed one
    formulas: list[FormulaChange]
    rows: list[RowChange]
    plan: Any  # the rebuilt Plan
    notes: list[str] = field(default_factory=list)

    @property
    def inputs(self) -> list[InputCell]:
        return [c for c in self.cells if c.changed]

    @property
    def changed(self) -> bool:
        return bool(self.inputs or self.formulas or self.rows)


def _ref(row: int, col: int) -> str:
    from openpyxl.utils import get_column_letter

    return f"{get_column_letter(col)}{row}"


def _compare_sheet(sheet: str, ref: CellsView, ed: Cells, namer: Namer, out: WorkbookDiff) -> None:
    namer.set_ids(sheet, ref)
    columns = _key_columns(sheet, ref)
    mapping = _align(ref, ed, columns, pair_rest=sheet not in CATALOG_SHEETS) if columns else {}
    if sheet in CATALOG_SHEETS and mapping:
        ref_ids = {r: v for (r, c), (v, _) in ref.items() if c == 1 and r >= 2}
        ed_ids = {v for (r, c), (v, _) in ed.items() if c == 1 and r >= 2}
        matched = {v for r, v in ref_ids.items() if r in mapping}
        section = CATALOG_SHEETS[sheet]
        for r, v in ref_ids.items():
            if r not in mapping:
                out.rows.append(RowChange(sheet, f"{section}.{v}", "in the catalog compared "
                                          "with, not in the workbook"))
        for v in sorted(ed_ids - matched, key=str):
            out.rows.append(RowChange(sheet, f"{section}.{v}", "in the workbook, not in the "
                                      "catalog compared with"))
    for (r, c), (value, kind) in ref.items():
        if kind == OTHER:
            continue
        if mapping and r >= 2 and sheet in CATALOG_SHEETS and r not in mapping:
            continue
        er = mapping.get(r, r) if r >= 2 else r
        found, found_kind = ed.get((er, c), (None, OTHER))
        found_formula = found_kind == FORMULA
        if kind == FORMULA:
            moved = er - r
            if found_formula and same_formula(value, found, moved, r):
                continue
            name, _ = namer.name(sheet, r, c)
            what = "altered" if found_formula else ("cleared" if found is None else "constant")
            out.formulas.append(FormulaChange(sheet, _ref(er, c), name, shifted(value, moved),
                                              found, what))
            continue
        name, home = namer.name(sheet, r, c)
        item = InputCell(sheet, _ref(er, c), name, value, found, home, found_formula)
        if home is not None or item.changed:
            out.cells.append(item)


def diff_workbook(workbook: Path | str, against: Path | str | None = None,
                  progress: Progress | None = None) -> WorkbookDiff:
    """Compare an edited workbook with a rebuild from what it was built from (or `against`):
    the rebuild kept in memory (``workbook_cells``), the edited workbook streamed sheet by sheet
    (reader.StreamedBook); `progress` hears of the rebuild and of each sheet compared."""
    from planner.outputs.workbook import SHEET_ORDER, workbook_cells
    from planner.plan.plan import build_plan

    workbook = Path(workbook)
    edited = open_workbook(workbook)
    try:
        recorded = read_recorded(workbook, edited)
        sources = resolve_sources(recorded, workbook, Path(against) if against else None)
        missing = [s for s in SHEET_ORDER if s not in edited.sheetnames]
        if missing:
            raise WorkbookError(workbook, f"sheet {missing[0]} was deleted or renamed",
                                sheet=missing[0], hint="the comparison goes sheet by sheet; "
                                "restore it under its name")
        p = sources.paths
        try:
            plan = build_plan(p["models"], p["gpus"], p["grid"], sources.overrides, progress,
                              workloads_path=p["workloads"], servers_path=p["servers"])
        except PlannerError as exc:
            raise WorkbookError(workbook, f"cannot rebuild it from what it was built from: "
                                f"{exc}") from None
        result = WorkbookDiff(workbook, recorded, sources, [], [], [], plan,
                              list(sources.notes))
        if recorded.version != __version__:
            result.notes.append(f"written by planner {recorded.version}, compared by "
                                f"{__version__}: formulas may differ for that reason alone")
        reference = workbook_cells(plan, progress)  # what a rebuild writes, kept in memory
        namer = Namer(reference, plan)
        for sheet in SHEET_ORDER:
            if sheet == "About":
                continue
            if progress:
                progress(f"comparing sheet {sheet}", 0, 1)
            ref = reference.sheet(sheet)
            ed = read_sheet(edited[sheet], None)
            _compare_sheet(sheet, ref, ed, namer, result)
            rows_ref = max((r for r, _ in ref), default=0)
            rows_ed = max((r for r, _ in ed), default=0)
            if sheet in ("Grid", "Fleet") and rows_ed != rows_ref:
                result.notes.append(
                    f"{sheet}: {rows_ed - 1:,} rows in the workbook, {rows_ref - 1:,} in "
                    "a build from the catalogs compared with")
            del ref, ed  # one sheet's cells at a time
    finally:
        edited.close()
    return result


# -- reports -----------------------------------------------------------------------------------

def _json_value(value: Any) -> Any:
    if value is None or isinstance(value, bool | int | float | str):
        return value
    return shown(value)


def describe_sources(d: WorkbookDiff) -> list[str]:
    out = [f"{kind}: {d.sources.paths[kind]}" for kind in SOURCE_KINDS]
    if d.sources.assumptions_file is not None:
        out.append(f"assumptions: {d.sources.assumptions_file}")
    elif d.sources.overrides:
        out.append("--set: " + ", ".join(f"{k}={v}" for k, v in d.sources.overrides.items()))
    return out


def diff_text(d: WorkbookDiff) -> str:
    lines = [f"{d.workbook} compared with a rebuild from:"]
    lines += [f"  {s}" for s in describe_sources(d)]
    lines += [f"  note: {n}" for n in d.notes]
    if not d.changed:
        lines.append("No changes: every input equals the catalogs and assumptions, every formula "
                     "is the planner's.")
        return "\n".join(lines)
    inputs = d.inputs
    if inputs:
        lines.append(f"Inputs changed ({len(inputs)}):")
        for c in inputs:
            new = f"a formula {c.new}" if c.formula else shown(c.new)
            where = "" if c.home else "  (no YAML home: import-workbook cannot keep it)"
            lines.append(f"  {c.sheet}!{c.cell}  {c.name}  {shown(c.old)} -> {new}{where}")
    if d.formulas:
        lines.append(f"Formulas overwritten or altered ({len(d.formulas)}):")
        for f in d.formulas:
            what = {"constant": f"replaced by the value {shown(f.found)}",
                    "cleared": "deleted", "altered": f"altered to {f.found}"}[f.kind]
            name = f"  {f.name}" if f.name else ""
            lines.append(f"  {f.sheet}!{f.cell}{name}  {f.expected} {what}")
    if d.rows:
        lines.append(f"Catalog entries ({len(d.rows)}):")
        lines += [f"  {r.sheet}  {r.name}: {r.problem}" for r in d.rows]
    return "\n".join(lines)


def diff_json(d: WorkbookDiff) -> dict[str, object]:
    return {
        "workbook": str(d.workbook),
        "built_by": d.recorded.version,
        "compared_with": {k: str(v) for k, v in d.sources.paths.items()}
        | {"overrides": {k: _json_value(v) for k, v in d.sources.overrides.items()}},
        "changed": d.changed,
        "inputs": [{"sheet": c.sheet, "cell": c.cell, "name": c.name,
                    "old": _json_value(c.old), "new": _json_value(c.new),
                    "new_is_formula": c.formula,
                    "home": c.home.describe() if c.home else None} for c in d.inputs],
        "formulas": [{"sheet": f.sheet, "cell": f.cell, "name": f.name, "kind": f.kind,
                      "expected": f.expected, "found": _json_value(f.found)}
                     for f in d.formulas],
        "entries": [{"sheet": r.sheet, "name": r.name, "problem": r.problem} for r in d.rows],
        "notes": d.notes,
    }
