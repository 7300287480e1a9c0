"""An .xlsx workbook streamed for `planner diff` and `planner import-workbook`: the workbook
part, styles and shared strings at once, each sheet's cells only when asked for, in one pass
over its XML (a regular expression over the text where cells are written the usual way, lxml
otherwise), as plain values: no openpyxl cell objects and no full load, which parsed every
sheet once to size it and once more to read it.
"""

from __future__ import annotations

import datetime as dt
import html
import re
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from planner.outputs.workbook.cells import FORMULA, INPUT, OTHER, Cells, CellsView  # noqa: F401

INPUT_STYLES = ("planner_input", "planner_input_text")
LO_BOOLEANS = {"=TRUE()": True, "=FALSE()": False}  # LibreOffice saves booleans as formulas

_MAIN = "{http://schemas.openxmlformats.org/spreadsheetml/2006/main}"
_DOC_REL = "{http://schemas.openxmlformats.org/officeDocument/2006/relationships}"
_C, _V, _F, _IS, _ROW = _MAIN + "c", _MAIN + "v", _MAIN + "f", _MAIN + "is", _MAIN + "row"


_CHUNK = 8 << 20  # bytes of sheet XML read at a time
# A cell as the planner (openpyxl), LibreOffice and Excel write it: r, then s and t if any.
_CELL = re.compile(r'<c r="([A-Z]{1,3})(\d+)"(?: s="(\d+)")?(?: t="(\w+)")?\s*(?:/>|>(.*?)</c>)',
                   re.S)
_FORMULA = re.compile(r'<f(?: t="(\w+)")?(?: ref="[^"]*")?(?: si="(\d+)")?\s*(?:/>|>(.*?)</f>)',
                      re.S)
_INLINE_TEXT = re.compile(r"<t(?: [^>]*)?>(.*?)</t>", re.S)


class _Unusual(Exception):
    """A sheet written in a way the text scan does not read: read it with lxml instead."""


def _unescape(text: str) -> str:
    return html.unescape(text) if "&" in text else text


@dataclass(frozen=True)
class _DefinedName:
    attr_text: str


def _xml(archive: zipfile.ZipFile, part: str) -> Any:
    from lxml import etree

    with archive.open(part) as handle:
        return etree.parse(handle, etree.XMLParser(huge_tree=True, resolve_entities=False)
                           ).getroot()


def _cell_ref(ref: str) -> tuple[int, int]:
    """(row, column) of an A1 reference."""
    col, i = 0, 0
    while i < len(ref) and ref[i].isalpha():
        col = col * 26 + ord(ref[i].upper()) - 64
        i += 1
    return int(ref[i:]), col


def _number(raw: str) -> int | float:
    """As openpyxl reads a number: an int unless it has a point or an exponent."""
    return float(raw) if any(ch in raw for ch in ".eE") or raw in ("inf", "nan") else int(raw)


class StreamedBook:
    """An .xlsx read for what diff and import-workbook need, without openpyxl's full load
    (which parses every sheet once to size it and again to read it): the workbook part (sheet
    names, global defined names, the 1904 date system), the styles (each cell format's named
    style and whether it shows a date), the shared strings. A sheet's cells are parsed with lxml
    in one streaming pass when it is asked for, as plain values, no cell objects."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.archive = zipfile.ZipFile(path)
        try:
            book = _xml(self.archive, "xl/workbook.xml")
            rels = {r.get("Id"): r.get("Target")
                    for r in _xml(self.archive, "xl/_rels/workbook.xml.rels")}
            self.parts: dict[str, str] = {}
            for sheet in book.iter(_MAIN + "sheet"):
                target = str(rels[sheet.get(_DOC_REL + "id")])
                part = target.lstrip("/") if target.startswith("/") else "xl/" + target
                self.parts[str(sheet.get("name"))] = re.sub(r"[^/]+/\.\./", "", part)
            self.defined_names = {str(d.get("name")): _DefinedName(d.text or "")
                                  for d in book.iter(_MAIN + "definedName")
                                  if d.get("localSheetId") is None}
            pr = book.find(_MAIN + "workbookPr")
            self.date1904 = pr is not None and pr.get("date1904") in ("1", "true")
            self.strings = self._strings()
            self.style_names, self.dates = self._styles()
        except BaseException:
            self.archive.close()
            raise

    @property
    def sheetnames(self) -> list[str]:
        return list(self.parts)

    def __getitem__(self, name: str) -> StreamedSheet:
        return StreamedSheet(self, name, self.parts[name])

    def close(self) -> None:
        self.archive.close()

    def _strings(self) -> list[str]:
        if "xl/sharedStrings.xml" not in self.archive.namelist():
            return []
        root = _xml(self.archive, "xl/sharedStrings.xml")
        return ["".join(t.text or "" for t in si.iter(_MAIN + "t"))
                for si in root.iter(_MAIN + "si")]

    def _styles(self) -> tuple[list[str], set[int]]:
        """(the named style of each cell format, the cell formats that show dates)."""
        from openpyxl.styles.numbers import BUILTIN_FORMATS, is_date_format

        if "xl/styles.xml" not in self.archive.namelist():
            return [], set()
        root = _xml(self.archive, "xl/styles.xml")
        named = {int(s.get("xfId", 0)): str(s.get("name")) for s in root.iter(_MAIN + "cellStyle")}
        codes: dict[int, str] = dict(BUILTIN_FORMATS)
        codes.update({int(n.get("numFmtId")): str(n.get("formatCode"))
                      for n in root.iter(_MAIN + "numFmt")})
        names, dates = [], set()
        xfs = root.find(_MAIN + "cellXfs")
        for i, xf in enumerate(xfs if xfs is not None else []):
            names.append(named.get(int(xf.get("xfId", 0)), ""))
            code = codes.get(int(xf.get("numFmtId", 0)))
            if code and is_date_format(code):
                dates.add(i)
        return names, dates


class StreamedSheet:
    """One sheet of a StreamedBook: its cells in one pass, or its rows of values."""

    def __init__(self, book: StreamedBook, title: str, part: str) -> None:
        self.book, self.title, self.part = book, title, part

    def cells(self, styles: list[str] | None) -> Cells:
        """As read_sheet gives them: with `styles`, styled input cells (even blank) are INPUT and
        other values OTHER; without, every cell present is INPUT; formulas are FORMULA."""
        from lxml import etree

        try:  # kept as they are scanned: a sheet's cells are held once, not twice
            return self._kept(self._scan_text(), styles)
        except _Unusual:
            return self._kept(self._scan_xml(etree), styles)

    @staticmethod
    def _kept(scanned: Iterator[tuple[int, int, Any, bool, int]], styles: list[str] | None
              ) -> Cells:
        out: Cells = {}
        for row, col, value, formula, style in scanned:
            if formula:
                out[(row, col)] = (value, FORMULA)
                continue
            if styles is None:
                kind = INPUT
            else:
                kind = INPUT if style < len(styles) and styles[style] in INPUT_STYLES else OTHER
            if value is None and kind != INPUT:
                continue
            out[(row, col)] = (value, kind)
        return out

    def iter_rows(self, values_only: bool = True) -> Iterator[tuple[Any, ...]]:
        """Rows 1 to the last, each a tuple of its values from column A (None where empty)."""
        from lxml import etree

        cells = {(row, col): value for row, col, value, _, _ in self._scan(etree)}
        last_row = max((r for r, _ in cells), default=0)
        last_col = max((c for _, c in cells), default=0)
        for r in range(1, last_row + 1):
            yield tuple(cells.get((r, c)) for c in range(1, last_col + 1))

    def _scan(self, etree: Any) -> Iterator[tuple[int, int, Any, bool, int]]:
        """(row, column, value, is a formula, cell format) of each cell element: by the plain
        text scan where every cell is written the usual way (the planner's, LibreOffice's and
        Excel's files), else by lxml."""
        try:
            cells = list(self._scan_text())
        except _Unusual:
            cells = list(self._scan_xml(etree))
        return iter(cells)

    def _scan_text(self) -> Iterator[tuple[int, int, Any, bool, int]]:
        """The cells read from the sheet's text in chunks ending at a row's end, each `<c>` by
        one regular expression; a cell written otherwise (attributes in another order, a
        namespace prefix) raises _Unusual."""
        shared: dict[str, tuple[str, str]] = {}
        columns: dict[str, int] = {}
        with self.book.archive.open(self.part) as handle:
            rest = ""
            while True:
                block = handle.read(_CHUNK)
                text = rest + block.decode("utf-8", errors="strict") if block else rest
                if block:
                    end = text.rfind("</row>")
                    if end < 0:
                        rest = text
                        continue
                    text, rest = text[:end + 6], text[end + 6:]
                found = 0
                for m in _CELL.finditer(text):
                    found += 1
                    letters, row = m.group(1), int(m.group(2))
                    col = columns.get(letters)
                    if col is None:
                        col = columns[letters] = _cell_ref(letters + "1")[1]
                    style, kind, inner = int(m.group(3) or 0), m.group(4) or "n", m.group(5)
                    if not inner:
                        yield row, col, None, False, style
                        continue
                    if inner.startswith("<f"):
                        fm = _FORMULA.match(inner)
                        if fm is None:
                            raise _Unusual
                        f_text = _unescape(fm.group(3) or "")
                        if fm.group(1) == "shared":
                            formula = self._shared(fm.group(2), f_text, row, col, shared)
                        else:
                            formula = "=" + f_text
                        if formula.upper() in LO_BOOLEANS:
                            yield row, col, LO_BOOLEANS[formula.upper()], False, style
                        else:
                            yield row, col, formula, True, style
                        continue
                    if inner.startswith("<v>"):
                        raw = _unescape(inner[3:inner.index("</v>")])
                        yield row, col, self._value(kind, raw, None, style), False, style
                        continue
                    if inner.startswith("<is>"):
                        inline = "".join(_unescape(x) for x in _INLINE_TEXT.findall(inner))
                        yield row, col, self._value(kind, None, inline, style), False, style
                        continue
                    raise _Unusual
                if found != text.count("<c ") + text.count("<c>"):
                    raise _Unusual  # a cell the expression did not read
                if not block:
                    return

    def _shared(self, si: str | None, text: str, row: int, col: int,
                shared: dict[str, tuple[str, str]]) -> str:
        from openpyxl.formula.translate import Translator
        from openpyxl.utils import get_column_letter

        key, here = str(si), f"{get_column_letter(col)}{row}"
        if text:
            shared[key] = (here, text)
        elif key in shared:
            origin, master = shared[key]
            return Translator("=" + master, origin=origin).translate_formula(here)
        return "=" + text

    def _scan_xml(self, etree: Any) -> Iterator[tuple[int, int, Any, bool, int]]:
        """(row, column, value, is a formula, cell format) of each cell element, streamed."""
        book = self.book
        shared: dict[str, tuple[str, str]] = {}  # shared formula id -> (its cell, its text)
        row, col = 0, 0
        with book.archive.open(self.part) as handle:
            for _, el in etree.iterparse(handle, events=("end",), tag=(_C, _ROW),
                                         huge_tree=True, resolve_entities=False):
                if el.tag == _ROW:
                    el.clear()
                    while el.getprevious() is not None:
                        del el.getparent()[0]
                    continue
                ref = el.get("r")
                if ref is not None:
                    row, col = _cell_ref(ref)
                else:
                    parent_row = int(el.getparent().get("r") or row or 1)
                    col = col + 1 if parent_row == row else 1
                    row = parent_row
                kind, style = el.get("t", "n"), int(el.get("s", 0))
                raw, formula, inline = None, None, None
                for child in el:
                    if child.tag == _V:
                        raw = child.text
                    elif child.tag == _F:
                        formula = self._formula(child, row, col, shared)
                    elif child.tag == _IS:
                        inline = "".join(t.text or "" for t in child.iter(_MAIN + "t"))
                el.clear()
                if formula is not None:
                    if formula.upper() in LO_BOOLEANS:
                        yield row, col, LO_BOOLEANS[formula.upper()], False, style
                    else:
                        yield row, col, formula, True, style
                    continue
                yield row, col, self._value(kind, raw, inline, style), False, style

    def _formula(self, f: Any, row: int, col: int, shared: dict[str, tuple[str, str]]) -> str:
        text = f.text or ""
        if f.get("t") == "shared":
            return self._shared(f.get("si"), text, row, col, shared)
        return "=" + text

    def _value(self, kind: str, raw: str | None, inline: str | None, style: int) -> Any:
        if kind == "inlineStr":
            value: Any = inline
        elif raw is None:
            return None
        elif kind == "s":
            value = self.book.strings[int(raw)]
        elif kind == "b":
            value = raw.strip() in ("1", "true")
        elif kind in ("str", "e"):
            value = raw
        elif kind == "d":
            value = dt.datetime.fromisoformat(raw)
        else:
            value = _number(raw)
            if style in self.book.dates:
                from openpyxl.utils.datetime import (
                    CALENDAR_MAC_1904,
                    CALENDAR_WINDOWS_1900,
                    from_excel,
                )

                epoch = CALENDAR_MAC_1904 if self.book.date1904 else CALENDAR_WINDOWS_1900
                value = from_excel(value, epoch)
        return None if value == "" else value
