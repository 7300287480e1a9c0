"""`planner diff` and `import-workbook` stream the workbooks they read: the streamed reader
gives, cell for cell, what openpyxl's reader gave (values, formulas, dates, booleans, shared
strings and formulas, input styles), by its text scan or, for cells written otherwise, lxml;
and a diff reports its progress."""

from __future__ import annotations

import datetime as dt
import re
import zipfile
from pathlib import Path

import pytest
from openpyxl import Workbook, load_workbook

from planner.build import WORKBOOK_NAME, run_build
from planner.roundtrip.diff import diff_workbook
from planner.roundtrip.reader import open_workbook, read_recorded, read_sheet, sheet_styles
from planner.roundtrip.streamed import StreamedBook, _Unusual

DATA = Path(__file__).parent / "data"
SMALL = (DATA / "small-models.yaml", DATA / "small-gpus.yaml", DATA / "small-grid.yaml")


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Path:  # type: ignore[no-untyped-def]
    out = tmp_path_factory.mktemp("built")
    copies = []
    for path in SMALL:  # beside the workbook, where diff finds what it was built from
        copies.append(out / path.name)
        copies[-1].write_bytes(path.read_bytes())
    run_build(*copies, out, {}, None)
    return out / WORKBOOK_NAME


def _same_as_openpyxl(path: Path) -> int:
    """Every sheet read both ways, as the reference (styles) and as the edited workbook."""
    old, new = load_workbook(path, read_only=True), open_workbook(path)
    try:
        cells = 0
        assert new.sheetnames == old.sheetnames
        for name in old.sheetnames:
            old[name].reset_dimensions()  # every cell, not only the <dimension> the file states
            for styles in (sheet_styles(old), None):
                expected = read_sheet(old[name], styles)
                got = read_sheet(new[name], sheet_styles(new) if styles else None)
                assert got == expected, name
                cells += len(got)
        return cells
    finally:
        old.close()
        new.close()


def test_a_planner_workbook_reads_as_openpyxl_read_it(built: Path) -> None:
    assert _same_as_openpyxl(built) > 10_000
    book = open_workbook(built)
    old = load_workbook(built, read_only=True)
    try:
        assert read_recorded(built, book) == read_recorded(built, old)
    finally:
        old.close()  # a read-only workbook holds its file open until closed
    assert {n: d.attr_text for n, d in book.defined_names.items()} == {
        n: d.attr_text for n, d in load_workbook(built).defined_names.items()}


def _other_writer(path: Path) -> None:
    """What Excel-like writers put in a sheet: shared strings, dates, booleans, errors,
    formulas shared over a range (as LibreOffice saves a filled column), escaped text."""
    wb = Workbook()
    ws = wb.active
    ws.title = "Data"
    ws.append(["id", "price", "date", "ok", "text"])
    for i in range(1, 6):
        ws.append([f"gpu-{i}", 1.5 * i, dt.datetime(2026, i, 1), i % 2 == 0, "a < b & 'c'"])
    ws["F1"] = "=SUM(B2:B6)"
    ws["G1"] = "=TRUE()"
    wb.save(path)
    with zipfile.ZipFile(path) as z:
        parts = {n: z.read(n) for n in z.namelist()}
    sheet = parts["xl/worksheets/sheet1.xml"].decode()
    shared = ('<c r="H2"><f t="shared" ref="H2:H4" si="0">B2*2</f><v>3</v></c>'
              '<c r="I2" t="e"><v>#DIV/0!</v></c>')
    sheet = sheet.replace('</row><row r="3"', shared + '</row><row r="3"', 1)
    for r in (3, 4):
        sheet = sheet.replace(f'</row><row r="{r + 1}"',
                              f'<c r="H{r}"><f t="shared" si="0"/><v>0</v></c></row>'
                              f'<row r="{r + 1}"', 1)
    parts["xl/worksheets/sheet1.xml"] = sheet.encode()
    with zipfile.ZipFile(path, "w") as z:
        for name, data in parts.items():
            z.writestr(name, data)


def test_another_writers_workbook_reads_as_openpyxl_read_it(tmp_path: Path) -> None:
    path = tmp_path / "other.xlsx"
    _other_writer(path)
    assert _same_as_openpyxl(path) > 30
    cells = read_sheet(open_workbook(path)["Data"], None)
    assert cells[(2, 3)] == (dt.datetime(2026, 1, 1), "i")
    assert cells[(3, 4)] == (True, "i") and cells[(1, 7)] == (True, "i")  # =TRUE() a value
    assert cells[(2, 5)] == ("a < b & 'c'", "i")
    assert cells[(4, 8)] == ("=B4*2", "f")  # the shared formula, moved to its row
    assert cells[(2, 9)] == ("#DIV/0!", "i")


def test_cells_written_otherwise_are_read_by_lxml(tmp_path: Path) -> None:
    """Attributes in another order: the text scan gives up on the sheet, lxml reads it."""
    path = tmp_path / "reordered.xlsx"
    _other_writer(path)
    with zipfile.ZipFile(path) as z:
        parts = {n: z.read(n) for n in z.namelist()}
    sheet = parts["xl/worksheets/sheet1.xml"].decode()
    sheet = re.sub(r'<c r="([A-Z]+\d+)" t="(\w+)"', r'<c t="\2" r="\1"', sheet)
    parts["xl/worksheets/sheet1.xml"] = sheet.encode()
    with zipfile.ZipFile(path, "w") as z:
        for name, data in parts.items():
            z.writestr(name, data)
    with pytest.raises(_Unusual):
        list(StreamedBook(path)["Data"]._scan_text())
    assert _same_as_openpyxl(path) > 30


def test_diff_reports_its_progress(built: Path) -> None:
    heard: list[str] = []
    result = diff_workbook(built, progress=lambda stage, done, total: heard.append(stage))
    assert not result.changed
    assert "sizing workloads" in heard and "rebuilding the workbook in memory" in heard
    assert "saving workbook" not in heard  # the rebuild is compared in memory, never written
    assert "comparing sheet Grid" in heard and "comparing sheet Fleet" in heard
