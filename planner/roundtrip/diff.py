"""`planner diff`: what an edited workbook changed, input by input, and every formula cell that
was overwritten or altered.

The workbook's About sheet records the catalogs (file name and sha256) and the ``--set`` values
it was built from. The same workbook is rebuilt from them into a temporary folder and compared
cell by cell: input cells (the planner_input styles) value against value, formula cells formula
against formula. Formulas are compared token by token, so that what a spreadsheet rewrites on
saving (LibreOffice drops the quotes of 'Fleet'!A1, writes 1E+15 for 1000000000000000.0 and
TRUE() for TRUE) is not a change. Grid and Fleet rows can be sorted in a spreadsheet: rows are
matched by their configuration, and a moved row's formulas by their relative references.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import math
import re
import tempfile
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from planner import __version__
from planner.errors import PlannerError

SOURCE_KINDS = ("models", "gpus", "grid", "servers", "workloads")
FILE_NAMES = {"models": "models.yaml", "gpus": "gpus.yaml", "grid": "grid.yaml",
              "servers": "servers.yaml", "workloads": "workloads.yaml"}
ABOUT_TITLE = "GPU capacity plan for LLM inference"
# About-sheet labels of the files a build read (servers and workloads when it records them).
ABOUT_FILES = {"Model catalog": "models", "GPU catalog": "gpus", "Grid": "grid",
               "Server catalog": "servers", "Workload catalog": "workloads"}
INPUT_STYLES = ("planner_input", "planner_input_text")
CATALOG_SHEETS = {"Models": "models", "GPUs": "gpus", "Workloads": "workloads",
                  "Servers": "servers"}
# Sheets whose rows a build orders by a ranking it computes (the Sensitivity sheet lists inputs
# by their swing): a rebuild from other inputs may order them otherwise, so rows are matched
# by the name in column A.
RANKED_SHEETS = ("Sensitivity",)


class WorkbookError(PlannerError):
    """A workbook that cannot be compared or imported, located by sheet, cell and name."""

    def __init__(self, workbook: Path | str, problem: str, sheet: str | None = None,
                 cell: str | None = None, name: str | None = None,
                 hint: str | None = None) -> None:
        self.workbook, self.sheet, self.cell, self.name = Path(workbook), sheet, cell, name
        self.problem, self.hint = problem, hint
        where = [str(workbook)]
        if sheet:
            where.append(f"sheet {sheet}")
        if cell:
            where.append(f"cell {cell}" + (f" ({name})" if name else ""))
        elif name:
            where.append(name)
        text = f"{', '.join(where)}: {problem}"
        if hint:
            text += f"\n  hint: {hint}"
        super().__init__(text)


# -- what the About sheet recorded -------------------------------------------------------------

@dataclass
class Recorded:
    """How a workbook was made, as its About sheet says."""

    version: str
    files: dict[str, tuple[str, str | None, str]]  # kind -> (file name, sha256, About cell)
    overrides: dict[str, float | str]
    overrides_cell: str | None = None


def _open(path: Path, read_only: bool = True):  # type: ignore[no-untyped-def]
    from openpyxl import load_workbook

    if not path.is_file():
        raise WorkbookError(path, "file not found" if not path.exists() else "is not a file",
                            hint="pass the path of a workbook written by planner build")
    try:
        return load_workbook(path, read_only=read_only)
    except (zipfile.BadZipFile, KeyError, OSError, ValueError, TypeError) as exc:
        raise WorkbookError(path, f"cannot be read as an .xlsx workbook ({exc})",
                            hint="pass the .xlsx file planner build wrote (saved as .xlsx if "
                                 "it was edited)") from None
    except Exception as exc:  # openpyxl's InvalidFileException and the like
        raise WorkbookError(path, f"cannot be read as an .xlsx workbook ({exc})") from None


def read_recorded(path: Path, wb: Any = None) -> Recorded:
    """The About sheet's record; a workbook the planner did not write is refused."""
    from planner.inputs.assumptions import parse_overrides

    own = wb is None
    wb = wb or _open(path)
    try:
        if "About" not in wb.sheetnames:
            raise WorkbookError(path, "has no About sheet: not a workbook written by the planner",
                                sheet="About", hint="pass the workbook planner build wrote")
        rows = [(i, tuple(r[:2]) + (None,) * (2 - len(r[:2])))
                for i, r in enumerate(wb["About"].iter_rows(values_only=True), start=1)]
    finally:
        if own:
            wb.close()
    if not rows or rows[0][1][0] != ABOUT_TITLE:
        raise WorkbookError(path, f"About!A1 is not '{ABOUT_TITLE}': not a workbook written by "
                            "the planner", sheet="About", cell="A1",
                            hint="pass the workbook planner build wrote")
    version, files, overrides, overrides_cell = None, {}, {}, None
    for i, (label, text) in rows:
        if not isinstance(label, str) or not isinstance(text, str):
            continue
        cell = f"B{i}"
        if label == "Generated by":
            m = re.match(r"planner (\S+) on ", text)
            version = m.group(1) if m else None
        elif label in ABOUT_FILES:
            m = re.match(r"(?P<name>.+?)\s+sha256 (?P<sha>[0-9a-f]{64})\b", text) or re.match(
                r"(?P<name>[^:]+?)(?::|$)", text)
            if m:
                sha = m.groupdict().get("sha")
                files[ABOUT_FILES[label]] = (m.group("name").strip(), sha, cell)
        elif label == "--set overrides":
            overrides_cell = cell
            if not text.startswith("none"):
                items = re.split(r", (?=[A-Za-z0-9_.\-]+=)", text)
                try:
                    overrides = parse_overrides(items)
                except PlannerError as exc:
                    raise WorkbookError(path, f"the recorded --set values cannot be read: {exc}",
                                        sheet="About", cell=cell, name="--set overrides") from None
    if version is None or "models" not in files or "gpus" not in files:
        raise WorkbookError(path, "the About sheet does not say how the workbook was made "
                            "(Generated by, Model catalog, GPU catalog): not a workbook written "
                            "by the planner, or its About sheet was edited", sheet="About")
    return Recorded(version, files, overrides, overrides_cell)


# -- where the catalogs are -------------------------------------------------------------------

@dataclass
class Sources:
    """The files and overrides a comparison rebuilds from, and where each was found."""

    paths: dict[str, Path]
    overrides: dict[str, float | str]
    notes: list[str] = field(default_factory=list)
    assumptions_file: Path | None = None


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _default_paths() -> dict[str, Path]:
    from planner.inputs.catalog import (
        DEFAULT_GPUS,
        DEFAULT_MODELS,
        DEFAULT_SERVERS,
        DEFAULT_WORKLOADS,
    )
    from planner.inputs.grid import DEFAULT_GRID

    return {"models": DEFAULT_MODELS, "gpus": DEFAULT_GPUS, "grid": DEFAULT_GRID,
            "servers": DEFAULT_SERVERS, "workloads": DEFAULT_WORKLOADS}


def _canonical(path: Path) -> Path:
    """The shipped path itself when `path` is that file: the build treats it specially."""
    for default in _default_paths().values():
        if path.resolve() == default.resolve():
            return default
    return path


def resolve_sources(recorded: Recorded, workbook: Path, against: Path | None = None) -> Sources:
    """Find the catalogs a workbook was built from: by name and sha256 in the shipped catalogs,
    the workbook's folder and the current folder; `against` overrides with what it holds."""
    from planner.inputs.assumptions import load_assumptions_file

    defaults = _default_paths()
    shipped_dir = defaults["models"].parent
    search = [shipped_dir, workbook.parent, Path.cwd()]
    sources = Sources({}, dict(recorded.overrides))
    if against is not None and not against.is_dir():
        raise WorkbookError(workbook, f"--against {against}: not a folder",
                            hint="pass the folder holding the catalogs to compare with")
    for kind in SOURCE_KINDS:
        name, sha, cell = recorded.files.get(kind, (None, None, None))
        if against is not None:
            found = [p for p in (against / FILE_NAMES[kind], against / (name or FILE_NAMES[kind]))
                     if p.is_file()]
            if found:
                sources.paths[kind] = _canonical(found[0])
                if sha is not None and _sha256(found[0]) != sha:
                    sources.notes.append(f"{kind}: {found[0]} is not the file the workbook was "
                                         "built from (another sha256)")
                continue
        if name is None:
            sources.paths[kind] = defaults[kind]
            sources.notes.append(f"{kind}: not recorded in the workbook; compared with the "
                                 f"shipped {defaults[kind].name}")
            continue
        candidates = [d / name for d in search if (d / name).is_file()]
        match = next((p for p in candidates if sha is None or _sha256(p) == sha), None)
        if match is None:
            what = {"models": "model catalog", "gpus": "GPU catalog", "grid": "grid",
                    "servers": "server catalog", "workloads": "workload catalog"}[kind]
            if candidates:
                problem = (f"the {what} {name} it was built from has changed since "
                           f"({candidates[0]} has another sha256 than the recorded "
                           f"{(sha or '')[:12]}…)")
                hint = (f"pass --against {candidates[0].parent} to compare with the {what} as it "
                        "is now, or --against the folder holding the one it was built from")
            else:
                problem = (f"the {what} {name} it was built from is in none of "
                           f"{', '.join(str(d) for d in search)}")
                hint = ("run it from the folder holding them, or pass planner diff --against "
                        "DIR, the folder holding the catalogs to compare with")
            raise WorkbookError(workbook, problem, sheet="About", cell=cell, hint=hint)
        sources.paths[kind] = _canonical(match)
    if against is not None and (against / "assumptions.yaml").is_file():
        sources.assumptions_file = against / "assumptions.yaml"
        sources.overrides = load_assumptions_file(sources.assumptions_file)
    return sources


# -- reading cells ---------------------------------------------------------------------------

Cells = dict[tuple[int, int], tuple[Any, str]]  # (row, column) -> (value, kind)
FORMULA, INPUT, OTHER = "f", "i", "v"
_LO_BOOLEANS = {"=TRUE()": True, "=FALSE()": False}


def _value(cell: Any) -> tuple[Any, bool]:
    """(value, is a formula); TRUE() and FALSE(), as LibreOffice saves booleans, are values."""
    value = cell.value
    if cell.data_type == "f":
        text = value if isinstance(value, str) else str(getattr(value, "text", value))
        text = text if text.startswith("=") else "=" + text
        if text.upper() in _LO_BOOLEANS:
            return _LO_BOOLEANS[text.upper()], False
        return text, True
    if isinstance(value, str) and value == "":
        return None, False
    return value, False


def _read_sheet(ws: Any, styles: list[str] | None) -> Cells:
    """Every non-empty cell; with `styles` (the reference), which are inputs."""
    out: Cells = {}
    if styles is None and hasattr(ws, "reset_dimensions"):
        ws.reset_dimensions()  # read every cell, whatever size the file says the sheet has
    for row in ws.iter_rows():
        for cell in row:
            if getattr(cell, "row", None) is None:
                continue
            value, formula = _value(cell)
            if formula:
                out[(cell.row, cell.column)] = (value, FORMULA)
                continue
            kind = OTHER
            if styles is not None and cell.has_style:
                xf = cell.style_array.xfId
                if xf < len(styles) and styles[xf] in INPUT_STYLES:
                    kind = INPUT
            elif styles is None:
                kind = INPUT  # the edited workbook: a value, whatever its style
            if value is None and kind != INPUT:
                continue
            out[(cell.row, cell.column)] = (value, kind)
    return out


# -- comparing formulas ------------------------------------------------------------------------

_CELL_REF = re.compile(r"^(\$?)([A-Z]{1,3})(\$?)(\d+)$")


def _shift_ref(ref: str, rows: int, own_row: int | None = None) -> str:
    """A1 reference with its relative row moved by `rows` (as a spreadsheet moves a sorted
    row's formulas), and an absolute reference to the formula's `own_row` too (a row the
    planner places by a ranking); other absolute rows and names stay."""
    parts = []
    for part in ref.split(":"):
        m = _CELL_REF.match(part.upper())
        if m and (not m.group(3) or int(m.group(4)) == own_row):
            part = f"{m.group(1)}{m.group(2)}{m.group(3)}{int(m.group(4)) + rows}"
        parts.append(part)
    return ":".join(parts)


def _canon_range(value: str, rows: int, own_row: int | None = None) -> str:
    sheet, bang, ref = value.rpartition("!")
    if bang:
        sheet = sheet.strip()
        if len(sheet) > 1 and sheet[0] == sheet[-1] == "'":
            sheet = sheet[1:-1].replace("''", "'")
        sheet = sheet.lower() + "!"
    ref = _shift_ref(ref, rows, None if bang else own_row) if rows else ref
    return sheet + ref.upper()


def canonical_formula(formula: str, rows: int = 0,
                      own_row: int | None = None) -> tuple[str, ...]:
    """Tokens that two spreadsheets writing the same formula agree on: no spaces, upper-case
    functions and references, unquoted sheet names, numbers as numbers; written `rows` rows
    further down when given (references to its `own_row` follow it)."""
    from openpyxl.formula.tokenizer import Token, Tokenizer

    try:
        items = Tokenizer(formula).items
    except Exception:  # not a formula openpyxl can read: compare the text
        return (formula,)
    out = []
    for t in items:
        if t.type == Token.WSPACE:
            continue
        if t.type == Token.OPERAND and t.subtype == Token.NUMBER:
            try:
                out.append(repr(float(t.value)))
            except ValueError:
                out.append(t.value)
        elif t.type == Token.OPERAND and t.subtype == Token.RANGE:
            out.append(_canon_range(t.value, rows, own_row))
        elif t.type == Token.OPERAND and t.subtype == Token.LOGICAL:
            out.append(t.value.upper())
        elif t.type == Token.FUNC:
            out.append(t.value.upper().removeprefix("_XLFN."))
        else:
            out.append(t.value)
    return tuple(out)


def same_formula(expected: str, found: str, rows: int = 0, own_row: int | None = None) -> bool:
    """Whether `found` is `expected` (from row `own_row`, now `rows` rows further down) as a
    spreadsheet saves it."""
    if rows == 0 and expected == found:
        return True
    return canonical_formula(expected, rows, own_row) == canonical_formula(found)


def shifted(formula: str, rows: int) -> str:
    """The formula as it reads after its row moved by `rows` (for messages)."""
    if not rows:
        return formula
    from openpyxl.formula.translate import Translator

    try:
        return str(Translator(formula, origin="A1000000").translate_formula(
            row_delta=rows, col_delta=0))
    except Exception:
        return formula


def same_value(a: Any, b: Any) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, int | float) and isinstance(b, int | float):
        return math.isclose(a, b, rel_tol=1e-12, abs_tol=0.0)
    return bool(a == b)


# -- names and homes of cells -----------------------------------------------------------------

@dataclass(frozen=True)
class Home:
    """Where an input lives outside the workbook: an assumption, a catalog field, or the
    capacity view of the grid file. Cells without one (engine table, grid rows...) have none."""

    section: str  # "assumptions" | "models" | "gpus" | "servers" | "workloads" | "view"
    key: str  # assumption name, entry id or view setting
    field: str = ""  # catalog field
    index: int | None = None  # position in the view's contexts or concurrency list

    def describe(self) -> str:
        if self.section == "assumptions":
            return self.key
        if self.section == "view":
            return f"view.{self.key}" + (f"[{self.index}]" if self.index is not None else "")
        return f"{self.section}.{self.key}.{self.field}"


def _sheet_columns() -> dict[str, list[str]]:
    from planner.outputs.workbook.fleet_sheets import (
        FLEET_COLUMNS,
        SERVER_COLUMNS,
        WORKLOAD_COLUMNS,
    )
    from planner.outputs.workbook.layout import GPU_COLUMNS, GRID_COLUMNS, MODEL_COLUMNS

    return {"Models": MODEL_COLUMNS, "GPUs": GPU_COLUMNS, "Workloads": WORKLOAD_COLUMNS,
            "Servers": SERVER_COLUMNS, "Grid": GRID_COLUMNS, "View data": GRID_COLUMNS,
            "Fleet": FLEET_COLUMNS}


class Namer:
    """Names a cell of the reference workbook the way a reader looks it up: an assumption or
    view name, SECTION.ID.FIELD for catalog fields (as --set spells them), a quantity and row
    for Grid and Fleet, a named range with its row id for other tables."""

    def __init__(self, wb: Any, plan: Any) -> None:
        from planner.inputs.assumptions import defaults
        from planner.inputs.fields import GPU_FIELDS, MODEL_FIELDS, SERVER_FIELDS, WORKLOAD_FIELDS
        from planner.outputs.workbook.view_sheets import ViewLayout

        self.columns = _sheet_columns()
        self.fields = {"models": MODEL_FIELDS, "gpus": GPU_FIELDS, "servers": SERVER_FIELDS,
                       "workloads": WORKLOAD_FIELDS}
        self.cell_names: dict[tuple[str, str], str] = {}
        self.ranges: list[tuple[str, str, int, int, int]] = []  # sheet, name, col, rows
        known = set(defaults())
        for name, dn in wb.defined_names.items():
            for sheet, ref in _destinations(dn.attr_text):
                if ":" in ref:
                    (c0, r0), (c1, r1) = (_coords(p) for p in ref.split(":"))
                    if c0 == c1:
                        self.ranges.append((sheet, name, c0, r0, r1))
                else:
                    self.cell_names[(sheet, ref)] = name
        self.homes: dict[tuple[str, str], Home] = {}
        for (sheet, ref), name in self.cell_names.items():
            if name in known:
                self.homes[(sheet, ref)] = Home("assumptions", name)
            elif name.startswith("view_"):
                self.homes[(sheet, ref)] = Home("view", name.removeprefix("view_"))
        view = plan.view
        lay = ViewLayout(view.contexts, view.concurrency, list(plan.grid.axes["gpus"]))
        for i in range(len(view.contexts)):
            self.homes[("Capacity", lay.context_cell(i).replace("$", ""))] = Home(
                "view", "contexts", index=i)
        for j in range(len(view.concurrency)):
            self.homes[("Capacity", lay.concurrency_cell(j).replace("$", ""))] = Home(
                "view", "concurrency", index=j)
        self.ids: dict[str, dict[int, Any]] = {}

    def set_ids(self, sheet: str, cells: Cells) -> None:
        """Column A of a sheet: the id each row's cells belong to."""
        self.ids[sheet] = {r: v for (r, c), (v, _) in cells.items() if c == 1}

    def name(self, sheet: str, row: int, col: int) -> tuple[str, Home | None]:
        from openpyxl.utils import get_column_letter

        ref = f"{get_column_letter(col)}{row}"
        home = self.homes.get((sheet, ref))
        if home is not None:
            return home.describe(), home
        if (sheet, ref) in self.cell_names:
            return self.cell_names[(sheet, ref)], None
        columns = self.columns.get(sheet)
        if columns and row >= 2 and col <= len(columns):
            column = columns[col - 1]
            section = CATALOG_SHEETS.get(sheet)
            if section is not None:
                entry = self.ids.get(sheet, {}).get(row)
                spec = self.fields[section].get(column)
                if spec is not None and spec.kind != "layers" and entry is not None:
                    home = Home(section, str(entry), column)
                    return home.describe(), home
                return f"{section}.{entry}.{column}", None
            return f"{column}, row {row}", None
        if sheet == "Budget" and col >= 2 and row in self.ids.get(sheet, {}):
            from planner.outputs.workbook.fleet_sheets import BUDGET_FIELDS

            entry = self.ids[sheet][row]
            if col == 2:
                return f"budget.{entry}.fleet_row", None
            if col - 3 < len(BUDGET_FIELDS):
                return f"budget.{entry}.{BUDGET_FIELDS[col - 3][0]}", None
        for rs, name, c, r0, r1 in self.ranges:
            if rs == sheet and c == col and r0 <= row <= r1:
                entry = self.ids.get(sheet, {}).get(row)
                label = entry if entry is not None else row - r0 + 1
                return f"{name}[{label}]", None
        return "", None


def _coords(ref: str) -> tuple[int, int]:
    from openpyxl.utils import column_index_from_string

    m = _CELL_REF.match(ref.replace("$", "").upper())
    if not m:
        return (0, 0)
    return column_index_from_string(m.group(2)), int(m.group(4))


def _destinations(text: str) -> Iterator[tuple[str, str]]:
    """(sheet, A1 or A1:A9 without $) of a defined name that points at cells."""
    m = re.fullmatch(r"(?:'((?:[^']|'')+)'|([^'!]+))!(\$?[A-Z]+\$?\d+(?::\$?[A-Z]+\$?\d+)?)",
                     text.strip())
    if m:
        sheet = (m.group(1) or "").replace("''", "'") or m.group(2)
        yield sheet, m.group(3).replace("$", "")


# -- aligning rows that a spreadsheet may have sorted -----------------------------------------

def _key_columns(sheet: str, ref: Cells) -> list[int]:
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


def _align(ref: Cells, ed: Cells, columns: list[int], pair_rest: bool) -> dict[int, int]:
    """Reference row -> edited row for the data rows (from row 2), by the key columns."""
    ref_rows = sorted({r for r, _ in ref if r >= 2})
    ed_rows = sorted({r for r, _ in ed if r >= 2})

    def key(cells: Cells, r: int) -> tuple[Any, ...]:
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


def _compare_sheet(sheet: str, ref: Cells, ed: Cells, namer: Namer, out: WorkbookDiff) -> None:
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


def _sheet_styles(wb: Any) -> list[str]:
    try:
        return [str(s) for s in wb._named_styles.names]
    except AttributeError:  # pragma: no cover - openpyxl internals
        return []


def diff_workbook(workbook: Path | str, against: Path | str | None = None) -> WorkbookDiff:
    """Compare an edited workbook with a rebuild from what it was built from (or `against`)."""
    from planner.outputs.workbook import SHEET_ORDER, write_workbook
    from planner.plan.plan import build_plan

    workbook = Path(workbook)
    edited = _open(workbook)
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
            plan = build_plan(p["models"], p["gpus"], p["grid"], sources.overrides,
                              workloads_path=p["workloads"], servers_path=p["servers"])
        except PlannerError as exc:
            raise WorkbookError(workbook, f"cannot rebuild it from what it was built from: "
                                f"{exc}") from None
        result = WorkbookDiff(workbook, recorded, sources, [], [], [], plan,
                              list(sources.notes))
        if recorded.version != __version__:
            result.notes.append(f"written by planner {recorded.version}, compared by "
                                f"{__version__}: formulas may differ for that reason alone")
        with tempfile.TemporaryDirectory(prefix="planner-diff-") as tmp:
            rebuilt = Path(tmp) / "rebuilt.xlsx"
            write_workbook(plan, rebuilt)
            reference = _open(rebuilt)
            try:
                styles = _sheet_styles(reference)
                namer = Namer(reference, plan)
                for sheet in SHEET_ORDER:
                    if sheet == "About":
                        continue
                    ref = _read_sheet(reference[sheet], styles)
                    ed = _read_sheet(edited[sheet], None)
                    _compare_sheet(sheet, ref, ed, namer, result)
                    rows_ref = max((r for r, _ in ref), default=0)
                    rows_ed = max((r for r, _ in ed), default=0)
                    if sheet in ("Grid", "Fleet") and rows_ed != rows_ref:
                        result.notes.append(
                            f"{sheet}: {rows_ed - 1:,} rows in the workbook, {rows_ref - 1:,} in "
                            "a build from the catalogs compared with")
            finally:
                reference.close()
    finally:
        edited.close()
    return result


# -- reports -----------------------------------------------------------------------------------

def shown(value: Any) -> str:
    """A cell value as a reader would type it."""
    if value is None:
        return "(blank)"
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, float):
        return f"{value:.15g}"
    if isinstance(value, dt.datetime | dt.date):
        return value.isoformat()
    return str(value)


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
