"""The full default workbook recalculated from blank (no stored values, as after any openpyxl
save): no error cell in LibreOffice or Gnumeric, and an edit recalculated equals a rebuild with
that edit. Also the two properties of its formulas that keep it so and keep it readable: every
row computes left to right, and no formula is longer than a reader can follow.

LibreOffice 7.4 computed the default workbook of 36e2819 to Err:522 (a circular reference) in
one Fleet cell, saved as #VALUE! and spread to the Budget, every named total, Scenarios and
Sensitivity, where Gnumeric computed it correctly: its threaded formula-group calculation (off:
no error) mis-handled a Fleet row whose early columns read later ones (the batch column reads
the batch chosen 100 columns to its right). The same workbook with the Fleet's columns in
dependency order, and nothing else changed, recalculates without an error."""

from __future__ import annotations

import html
import math
import re
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from openpyxl import load_workbook
from openpyxl.utils import column_index_from_string

from planner.build import WORKBOOK_NAME, run_build
from planner.inputs.catalog import DEFAULT_GPUS, DEFAULT_MODELS, DEFAULT_SERVERS
from planner.inputs.grid import DEFAULT_GRID
from planner.outputs.workbook.cache import sheet_parts
from tests.recalc import recalculate

MAX_FORMULA_CHARS = 500
ERROR = re.compile(r"#(?:NULL!|DIV/0!|VALUE!|REF!|NAME\?|NUM!|N/A)|Err:\d+")
GNUMERIC_STYLES = "ignore:Workbook contains no default style:UserWarning"
_CELL = re.compile(r'<c r="([A-Z]+)([0-9]+)"[^>]*><f>([^<]*)</f>')
_STRING = re.compile(r'"[^"]*"')
_OTHER_SHEET = re.compile(r"(?:'[^']+'|[A-Za-z_][\w.]*)!\$?[A-Z]{1,3}\$?[0-9]+"
                          r"(?::\$?[A-Z]{1,3}\$?[0-9]+)?")
_REF = re.compile(r"(?<![\w.$])\$?([A-Z]{1,3})\$?([0-9]+)(?![\w(])")


def formulas(path: Path) -> Iterator[tuple[str, str, int, str]]:
    """(sheet, column, row, formula text without '=') of every formula cell, read from the
    package's XML (openpyxl would take minutes over the Grid)."""
    with zipfile.ZipFile(path) as zf:
        for title, part in sheet_parts(zf).items():
            for column, row, text in _CELL.findall(zf.read(part).decode()):
                yield title, column, int(row), html.unescape(text)


def same_sheet_cells(text: str) -> list[tuple[int, int]]:
    """(column number, row) of every cell of its own sheet a formula names (range ends too)."""
    bare = _OTHER_SHEET.sub("", _STRING.sub('""', text))
    return [(column_index_from_string(c), int(r)) for c, r in _REF.findall(bare)]


def error_cells(path: Path) -> list[str]:
    wb = load_workbook(path, read_only=True, data_only=True)
    out = []
    try:
        for ws in wb.worksheets:
            for r, row in enumerate(ws.iter_rows(values_only=True), start=1):
                out += [f"{ws.title}!{c}{r}={v}" for c, v in enumerate(row, start=1)
                        if isinstance(v, str) and ERROR.fullmatch(v)]
    finally:
        wb.close()  # a read-only workbook holds its file open until closed
    return out


def _same(a: object, b: object) -> bool:
    if isinstance(a, int | float) and isinstance(b, int | float) and not isinstance(a, bool):
        return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-9)
    return a == b or (a in (None, "") and b in (None, ""))


def compare_sheets(expected: Path, actual: Path, sheets: tuple[str, ...],
                   skip: frozenset[str] = frozenset()) -> list[str]:
    """Formula cells of `sheets` whose values differ between two workbooks, but those in
    `skip` ('Sheet!A1'); also a formula cell of one that is not a formula cell of the other."""
    wanted = {(s, f"{c}{r}") for s, c, r, _ in formulas(expected) if s in sheets}
    exp = load_workbook(expected, read_only=True, data_only=True)
    act = load_workbook(actual, read_only=True, data_only=True)
    try:
        return _differing(exp, act, sheets, wanted, skip)
    finally:
        exp.close()
        act.close()


def _differing(exp, act, sheets: tuple[str, ...], wanted: set[tuple[str, str]],  # type: ignore[no-untyped-def]
               skip: frozenset[str]) -> list[str]:
    bad = []
    for sheet in sheets:
        rows_e = exp[sheet].iter_rows()
        rows_a = act[sheet].iter_rows()
        for row_e in rows_e:
            row_a = next(rows_a, ())
            values_a = {getattr(c, "coordinate", None): c.value for c in row_a}
            for cell in row_e:
                where = getattr(cell, "coordinate", None)
                if (sheet, where) not in wanted or f"{sheet}!{where}" in skip:
                    continue
                if not _same(cell.value, values_a.get(where)):
                    bad.append(f"{sheet}!{where}: {cell.value!r} vs {values_a.get(where)!r}")
    return bad


# --- the formulas: left to right, short enough to read --------------------------------------

@pytest.mark.slow  # reads every formula of the default workbook
def test_every_row_computes_left_to_right(default_workbook: Path) -> None:
    """No formula reads a cell to its right in its own row: a row computes in reading order,
    and LibreOffice's threaded formula groups have no circle to imagine (module docstring)."""
    rightward = [f"{sheet}!{column}{row} reads {_letter(c)}{row}"
                 for sheet, column, row, text in formulas(default_workbook)
                 for c, r in same_sheet_cells(text)
                 if r == row and c > column_index_from_string(column)]
    assert rightward == [], rightward[:10]


def _letter(column: int) -> str:
    from openpyxl.utils import get_column_letter

    return get_column_letter(column)


@pytest.mark.slow  # reads every formula of the default workbook
def test_no_formula_is_longer_than_a_reader_can_follow(default_workbook: Path) -> None:
    lengths = sorted(((len(text) + 1, f"{sheet}!{column}{row}")
                      for sheet, column, row, text in formulas(default_workbook)), reverse=True)
    assert lengths[0][0] > 100  # the check reads real formulas
    long = [f"{where}: {n} characters" for n, where in lengths if n > MAX_FORMULA_CHARS]
    assert long == [], long[:10]


# --- recalculated from blank: no error cell ---------------------------------------------------

@pytest.mark.libreoffice
def test_libreoffice_recalculates_the_default_workbook_from_blank_without_an_error(
        default_cold_libreoffice: Path) -> None:
    assert error_cells(default_cold_libreoffice) == []


@pytest.mark.gnumeric
@pytest.mark.filterwarnings(GNUMERIC_STYLES)
def test_gnumeric_recalculates_the_default_workbook_from_blank_without_an_error(
        default_cold_gnumeric: Path) -> None:
    assert error_cells(default_cold_gnumeric) == []


# --- an edit, recalculated from blank, equals a rebuild with the edit --------------------------

COMPARED = ("Budget", "Fleet", "Scenarios", "Sensitivity")


def _named_cell(wb, name: str):  # type: ignore[no-untyped-def]
    sheet, coord = wb.defined_names[name].attr_text.replace("$", "").split("!")
    return wb[sheet.strip("'")][coord]


def _edit_server_price(wb, folder: Path, values) -> dict:  # type: ignore[no-untyped-def]
    """The first workload's chosen server three times dearer, in the workbook and in a copy of
    the servers catalog: the Budget must choose again."""
    budget = values["Budget"]
    header = next(c for row in budget.iter_rows() for c in row if c.value == "Server [id]")
    chosen = budget.cell(header.row + 1, header.column).value  # the first workload's choice
    ws = wb["Servers"]
    column = [c.value for c in ws[1]].index("Price [USD]") + 1
    row = next(r for r in range(2, ws.max_row + 1) if ws.cell(r, 1).value == chosen)
    price = ws.cell(row, column).value * 3
    ws.cell(row, column).value = price
    catalog = yaml.safe_load(DEFAULT_SERVERS.read_text())
    catalog["servers"][chosen]["price_usd"] = price
    servers = folder / "servers.yaml"
    servers.write_text(yaml.safe_dump(catalog, sort_keys=False))
    return {"servers_path": servers}


def _edit_electricity(wb, folder: Path, values) -> dict:  # type: ignore[no-untyped-def]
    _named_cell(wb, "electricity_usd_per_kwh").value = 0.31
    return {"overrides": {"electricity_usd_per_kwh": 0.31}}


EDITS = {"server price": _edit_server_price, "electricity rate": _edit_electricity}


@pytest.fixture(scope="module", params=list(EDITS))
def edited(request, default_workbook: Path, tmp_path_factory) -> tuple[Path, Path]:  # type: ignore[no-untyped-def]
    """(the default workbook edited and recalculated from blank by LibreOffice, a rebuild from
    the edited inputs)."""
    folder = tmp_path_factory.mktemp(request.param.replace(" ", "-"))
    wb = load_workbook(default_workbook)
    values = load_workbook(default_workbook, read_only=True, data_only=True)
    try:
        rebuild = EDITS[request.param](wb, folder, values)
    finally:
        values.close()
    edited = folder / "edited" / WORKBOOK_NAME
    edited.parent.mkdir()
    wb.save(edited)
    recalculated = recalculate(edited, folder / "recalculated")
    run_build(DEFAULT_MODELS, DEFAULT_GPUS, DEFAULT_GRID, folder / "rebuilt",
              rebuild.get("overrides", {}), None,
              **{k: v for k, v in rebuild.items() if k != "overrides"})
    return recalculated, folder / "rebuilt" / WORKBOOK_NAME


def _sheet_cells(path: Path, sheet: str) -> dict[str, object]:
    wb = load_workbook(path, read_only=True, data_only=True)
    try:
        return {c.coordinate: c.value for row in wb[sheet].iter_rows() for c in row
                if getattr(c, "coordinate", None)}
    finally:
        wb.close()  # a read-only workbook holds its file open until closed


def _labelled(cells: dict[str, object], key: str, column: str = "C") -> str:
    """The cell in `column` of the row whose column A holds `key`."""
    row = next(c[1:] for c, v in cells.items() if c.startswith("A") and v == key)
    return f"{column}{row}"


def _red_when_stale(path: Path) -> str:
    """The cells the Sensitivity sheet's stale check colours, after checking that its
    condition compares the live base totals with the build's (stale_condition)."""
    from planner.outputs.workbook.sensitivity_sheet import stale_condition

    with zipfile.ZipFile(path) as zf:
        xml = zf.read(sheet_parts(zf)["Sensitivity"]).decode()
    sqref, formula = re.search(r'<conditionalFormatting sqref="([^"]+)">.*?<formula>([^<]+)'
                               r"</formula>", xml).groups()  # type: ignore[union-attr]
    cells = _sheet_cells(path, "Sensitivity")
    at = [_labelled(cells, key).replace("C", "$C$") for key in (
        "base_total_tco", "built_total_tco", "base_usd_per_million_output",
        "built_usd_per_million_output")]
    assert html.unescape(formula) == stale_condition(*at)
    return sqref


def _stale(path: Path) -> bool:
    """The stale check's condition on the workbook's values: a live base total differs from
    the build's."""
    cells = _sheet_cells(path, "Sensitivity")
    value = {key: cells[_labelled(cells, key)] for key in (
        "base_total_tco", "built_total_tco", "base_usd_per_million_output",
        "built_usd_per_million_output")}
    return any(abs(value[f"base_{k}"] - value[f"built_{k}"])  # type: ignore[operator]
               > 1e-9 * max(1, abs(value[f"built_{k}"]))  # type: ignore[arg-type]
               for k in ("total_tco", "usd_per_million_output"))


@pytest.mark.libreoffice
def test_an_edit_recalculated_from_blank_equals_a_rebuild(edited, default_workbook) -> None:  # type: ignore[no-untyped-def]
    recalculated, rebuilt = edited
    assert error_cells(recalculated) == []
    assert compare_sheets(rebuilt, recalculated, COMPARED) == []
    assert compare_sheets(default_workbook, rebuilt, ("Budget",)) != []  # the edit moved it
    # the build-time figures are the build's, which the edit made stale: they show red there,
    # and not in the rebuild, whose figures are current
    assert (_stale(recalculated), _stale(rebuilt)) == (True, False)
    assert "M5:N12" in _red_when_stale(rebuilt).split()  # the re-sized columns


@pytest.mark.libreoffice
def test_a_sensitivity_total_after_an_edit_equals_the_rebuilds(edited, default_workbook) -> None:  # type: ignore[no-untyped-def]
    """The live totals, not build-time numbers: the base total TCO and every input's low and
    high totals follow the edit as a rebuild computes them, and the tornado's ranking too."""
    recalculated, rebuilt = edited
    ours, theirs, before = (_sheet_cells(p, "Sensitivity")
                            for p in (recalculated, rebuilt, default_workbook))
    base = _labelled(ours, "base_total_tco")
    assert ours[base] == pytest.approx(theirs[base], rel=1e-9)
    assert ours[base] != pytest.approx(before[base], rel=1e-6)
    totals = [f"{c}{r}" for r in range(5, 13) for c in "FGKL"]
    assert [ours[t] for t in totals] == pytest.approx([theirs[t] for t in totals], rel=1e-9)
    ranked = [ours[_labelled(ours, f"rank {k}")] for k in range(1, 9)]
    assert ranked == [theirs[_labelled(theirs, f"rank {k}")] for k in range(1, 9)]
