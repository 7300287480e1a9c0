"""Put Python's values into the formula cells of a saved workbook, so a viewer that does not
calculate (mail previews, pandas, openpyxl data_only) shows numbers while Excel and
LibreOffice still recalculate on open (fullCalcOnLoad stays set).

openpyxl writes ``<c r="A1" s="1"><f>...</f><v /></c>``; each such cell, in document order,
receives the next recorded value: numbers as ``<v>``, text as ``t="str"``, booleans as
``t="b"``, errors as ``t="e"``. Every other part of the package is copied byte for byte, except
that a sheet may have rows streamed in (``streams``): the Grid's rows are written here, straight
into the package, with their values already in place. They are written before every other
sheet, so that a value that depends on them (``Deferred``: the Checks sheet's "no error on the
Grid") is known when its own sheet is patched.
"""

from __future__ import annotations

import math
import queue
import re
import shutil
import threading
import zipfile
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import IO
from xml.sax.saxutils import escape

from planner.model.expr import Value, XlError

# openpyxl writes an empty value as <v /> (ElementTree) or <v></v> (lxml)
_FORMULA_CELL = re.compile(rb'<c r="([A-Z]+[0-9]+)"([^>]*)><f>([^<]*)</f>(?:<v ?/>|<v></v>)</c>')
_CHUNK = 8 << 20


class Deferred:
    """A cached value known only once the streamed sheets are written (the Grid's rows are
    evaluated as they are packed): resolved when its own sheet is patched, after them."""

    __slots__ = ("compute",)

    def __init__(self, compute: Callable[[], Value]) -> None:
        self.compute = compute

    def resolve(self) -> Value:
        return self.compute()


def value_text(value: Value | Deferred) -> tuple[str, str]:
    """(type attribute, <v> text) for a cached value."""
    if isinstance(value, Deferred):
        value = value.resolve()
    if isinstance(value, XlError):
        return ' t="e"', escape(value.code)
    if isinstance(value, bool):
        return ' t="b"', "1" if value else "0"
    if isinstance(value, str):
        return ' t="str"', escape(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            return ' t="e"', "#NUM!"
        return "", repr(value)
    return "", str(value)


def _value_xml(value: Value | Deferred) -> tuple[bytes, bytes]:
    t, v = value_text(value)
    return t.encode(), v.encode()


def formula_parts(cell_xml: str) -> tuple[str, str, str]:
    """A formula cell as openpyxl writes it (``<c ...><f>...</f><v></v></c>``) cut where
    ``inject`` puts a value: `head` + type attribute + `body` + value text + `tail`."""
    match = _FORMULA_CELL.fullmatch(cell_xml.encode())
    if match is None:
        raise ValueError(f"not a formula cell as openpyxl writes it: {cell_xml[:80]}")
    ref, attrs, formula = (g.decode() for g in match.groups())
    return f'<c r="{ref}"{attrs}', f"><f>{formula}</f><v>", "</v></c>"


def with_value(cell_xml: str, value: Value | Deferred) -> str:
    """A formula cell as openpyxl writes it with `value` cached in it, as ``inject`` does."""
    head, body, tail = formula_parts(cell_xml)
    t, v = value_text(value)
    return head + t + body + v + tail


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


def _patched(chunks: Iterator[bytes], values: Sequence[Value | Deferred], part: str
             ) -> Iterator[bytes]:
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


def inject(src: Path, dst: Path, cached: Mapping[str, Sequence[Value | Deferred]],
           streams: Mapping[str, Iterable[bytes]] | None = None) -> None:
    """Copy `src` to `dst`, filling the formula cells of each titled sheet in `cached`, and
    writing the rows of each titled sheet in `streams` (XML, values in place) after the rows
    it holds; the streamed sheets' parts first of all the sheets'."""
    streams = streams or {}
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, "w", zipfile.ZIP_DEFLATED) as zout:
        parts = sheet_parts(zin)
        wanted = {parts[title]: values for title, values in cached.items()}
        extra = {parts[title]: rows for title, rows in streams.items()}
        infos = zin.infolist()
        sheets = [i for i, info in enumerate(infos) if info.filename in parts.values()]
        if sheets:  # the streamed parts move to where the first sheet part was
            first = sheets[0]
            streamed = [info for info in infos if info.filename in extra]
            rest = [info for info in infos if info.filename not in extra]
            infos = rest[:first] + streamed + rest[first:]
        for info in infos:
            name = info.filename
            if name not in wanted and name not in extra:
                with zin.open(info) as fin, zout.open(info, "w") as fout:
                    shutil.copyfileobj(fin, fout, _CHUNK)
                continue
            with zin.open(info) as fin, zout.open(info, "w", force_zip64=True) as fout:
                chunks = iter(lambda: fin.read(_CHUNK), b"")
                pieces = _patched(chunks, wanted.get(name, ()), name)
                if name not in extra:
                    for piece in pieces:
                        fout.write(piece)
                    continue
                # after patching: streamed rows carry their values; compressed in a thread
                # (zlib lets other threads run) while the next rows are made
                _write_behind(fout, _spliced(pieces, extra[name], name))


_END_ROWS = b"</sheetData>"
_QUEUED = 3  # pieces (about 2 MB each) waiting to be compressed


def _write_behind(out: IO[bytes], pieces: Iterable[bytes]) -> None:
    """Write `pieces` to `out` from a second thread, so that compressing one piece overlaps
    making the next; errors on either side are raised here."""
    waiting: queue.Queue[bytes | None] = queue.Queue(_QUEUED)
    failed: list[BaseException] = []

    def drain() -> None:
        while (piece := waiting.get()) is not None:
            if not failed:
                try:
                    out.write(piece)
                except BaseException as exc:  # noqa: BLE001 (re-raised by the producer)
                    failed.append(exc)

    writer = threading.Thread(target=drain, name="write-behind", daemon=True)
    writer.start()
    try:
        for piece in pieces:
            if failed:
                break
            waiting.put(piece)
    finally:
        waiting.put(None)
        writer.join()
    if failed:
        raise failed[0]


def _spliced(chunks: Iterator[bytes], rows: Iterable[bytes], part: str) -> Iterator[bytes]:
    """The part's bytes with `rows` written just before the end of its sheet data."""
    pending = b""
    for chunk in chunks:
        pending += chunk
        cut = pending.find(_END_ROWS)
        if cut >= 0:
            yield pending[:cut]
            yield from rows
            yield pending[cut:]
            yield from chunks
            return
        keep = len(_END_ROWS) - 1
        yield pending[:-keep]
        pending = pending[-keep:]
    raise RuntimeError(f"{part}: no </sheetData> to write rows into")
