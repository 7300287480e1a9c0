"""Put Python's values into the formula cells of a saved workbook, so a viewer that does not
calculate (mail previews, pandas, openpyxl data_only) shows numbers while Excel and
LibreOffice still recalculate on open (fullCalcOnLoad stays set).

openpyxl writes ``<c r="A1" s="1"><f>...</f><v /></c>``; each such cell, in document order,
receives the next recorded value: numbers as ``<v>``, text as ``t="str"``, booleans as
``t="b"``, errors as ``t="e"``. Every other part of the package is copied byte for byte.
"""

from __future__ import annotations

import math
import re
import shutil
import zipfile
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from xml.sax.saxutils import escape

from planner.expr import Value, XlError

# openpyxl writes an empty value as <v /> (ElementTree) or <v></v> (lxml)
_FORMULA_CELL = re.compile(rb'<c r="([A-Z]+[0-9]+)"([^>]*)><f>([^<]*)</f>(?:<v ?/>|<v></v>)</c>')
_CHUNK = 8 << 20


def _value_xml(value: Value) -> tuple[bytes, bytes]:
    """(type attribute, <v> text) for a cached value."""
    if isinstance(value, XlError):
        return b' t="e"', escape(value.code).encode()
    if isinstance(value, bool):
        return b' t="b"', b"1" if value else b"0"
    if isinstance(value, str):
        return b' t="str"', escape(value).encode()
    if isinstance(value, float):
        if not math.isfinite(value):
            return b' t="e"', b"#NUM!"
        return b"", repr(value).encode()
    return b"", str(value).encode()


def sheet_parts(zf: zipfile.ZipFile) -> dict[str, str]:
    """Sheet title -> part name, read from the workbook and its relationships."""
    workbook = zf.read("xl/workbook.xml").decode()
    rels = zf.read("xl/_rels/workbook.xml.rels").decode()
    targets: dict[str, str] = {}
    for rel in re.findall(r"<Relationship\b[^>]*>", rels):
        rel_id = re.search(r'\bId="([^"]+)"', rel)
        rel_target = re.search(r'\bTarget="([^"]+)"', rel)
        if rel_id and rel_target:
            targets[rel_id.group(1)] = rel_target.group(1)
    out: dict[str, str] = {}
    for sheet in re.findall(r"<sheet\b[^>]*>", workbook):
        name_match = re.search(r'\bname="([^"]+)"', sheet)
        rid_match = re.search(r'\br:id="([^"]+)"', sheet)
        if not (name_match and rid_match):
            continue
        part = targets[rid_match.group(1)].lstrip("/")
        out[_unescape(name_match.group(1))] = part if part.startswith("xl/") else "xl/" + part
    return out


def _unescape(text: str) -> str:
    return (text.replace("&lt;", "<").replace("&gt;", ">").replace("&quot;", '"')
            .replace("&apos;", "'").replace("&amp;", "&"))


def _patched(chunks: Iterator[bytes], values: Sequence[Value], part: str) -> Iterator[bytes]:
    position = 0
    pending = b""

    def replace(match: re.Match[bytes]) -> bytes:
        nonlocal position
        if position >= len(values):
            raise RuntimeError(f"{part}: more formula cells than cached values")
        t, v = _value_xml(values[position])
        position += 1
        return (b'<c r="' + match.group(1) + b'"' + match.group(2) + t + b"><f>"
                + match.group(3) + b"</f><v>" + v + b"</v></c>")

    for chunk in chunks:
        pending += chunk
        cut = pending.rfind(b"</c>")
        if cut < 0:
            continue
        cut += 4
        yield _FORMULA_CELL.sub(replace, pending[:cut])
        pending = pending[cut:]
    yield _FORMULA_CELL.sub(replace, pending)
    if position != len(values):
        raise RuntimeError(f"{part}: {len(values)} cached values for {position} formula cells")


def inject(src: Path, dst: Path, cached: Mapping[str, Sequence[Value]]) -> None:
    """Copy `src` to `dst`, filling the formula cells of each titled sheet in `cached`."""
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, "w", zipfile.ZIP_DEFLATED) as zout:
        parts = sheet_parts(zin)
        wanted = {parts[title]: values for title, values in cached.items()}
        for info in zin.infolist():
            if info.filename not in wanted:
                with zin.open(info) as fin, zout.open(info, "w") as fout:
                    shutil.copyfileobj(fin, fout, _CHUNK)
                continue
            with zin.open(info) as fin, zout.open(info, "w", force_zip64=True) as fout:
                chunks = iter(lambda: fin.read(_CHUNK), b"")
                for piece in _patched(chunks, wanted[info.filename], info.filename):
                    fout.write(piece)
