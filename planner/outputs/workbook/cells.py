"""Writing rows to a write-only worksheet while remembering each formula's cached value.

openpyxl writes formulas with an empty value; ``cache.inject`` later fills in the values
recorded here, in the order the formula cells were written. A sheet may also take a stream of
rows as XML (``SheetWriter.stream``), written after its other rows when the package is made:
``SheetWriter.cell_xml`` gives any cell as openpyxl writes it, value cached, to build them from.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from copy import copy
from io import BytesIO
from typing import Any, Protocol

from openpyxl.cell import WriteOnlyCell
from openpyxl.cell._writer import write_cell
from openpyxl.cell.cell import Cell as OpenpyxlCell
from openpyxl.utils import get_column_letter
from openpyxl.worksheet._write_only import WriteOnlyWorksheet
from openpyxl.worksheet.hyperlink import Hyperlink
from openpyxl.xml.functions import xmlfile

from planner.model.expr import Value
from planner.outputs.workbook import styles
from planner.outputs.workbook.cache import Deferred, with_value
from planner.outputs.workbook.shown import shown_text

__all__ = ["FORMULA", "INPUT", "OTHER", "Cell", "Cells", "CellsView", "Formula", "Input", "Link",
           "SheetWriter", "Styled", "cell_text", "fitted_widths", "shown_text"]

# A sheet's cells as `planner diff` reads them back (planner.roundtrip.streamed), and as a
# SheetWriter records them when asked to (``SheetWriter(ws, record=True)``): (row, column) ->
# (value, kind); a formula's value is its text.
Cells = dict[tuple[int, int], tuple[Any, str]]
CellsView = Mapping[tuple[int, int], tuple[Any, str]]  # the same, perhaps made as looked up
FORMULA, INPUT, OTHER = "f", "i", "v"  # a formula, an input (its style says so), anything else


class Formula:
    """A formula to write with the value Python computed for it."""

    __slots__ = ("text", "cached", "number_format", "style")

    def __init__(self, text: str, cached: Value | Deferred, number_format: str = "General",
                 style: str = styles.FORMULA) -> None:
        self.text = text if text.startswith("=") else "=" + text
        self.cached = cached
        self.number_format = number_format
        self.style = style


class Input:
    """An editable value: styled as an input and unlocked."""

    __slots__ = ("value", "number_format")

    def __init__(self, value: Any, number_format: str = "General") -> None:
        self.value = value
        self.number_format = number_format


class Styled:
    """A plain value (text or number) in a given style; text is never a formula."""

    __slots__ = ("value", "style", "number_format")

    def __init__(self, value: Any, style: str = styles.TEXT, number_format: str = "General"):
        self.value = value
        self.style = style
        self.number_format = number_format


class Link:
    """Text that jumps to a place in the workbook when clicked (an internal hyperlink, no
    formula): `location` as Excel writes it, e.g. ``'Budget'!A1``."""

    __slots__ = ("text", "location", "style")

    def __init__(self, text: str, location: str, style: str = styles.NAV) -> None:
        self.text = text
        self.location = location
        self.style = style


Cell = Formula | Input | Styled | Link | str | int | float | bool | None

CONTENTS = "← Contents"  # the back link every sheet but About carries in its first row


def _text_cell(ws: WriteOnlyWorksheet, value: str, style: str) -> WriteOnlyCell:
    cell = WriteOnlyCell(ws, value=value)
    if value.startswith("="):  # catalog text is data, never a formula
        cell.data_type = "s"
        cell.quotePrefix = True
    cell.style = style
    return cell


class RowStream(Protocol):
    """Rows of a sheet as XML (``<row>`` elements, values in place), written after the rows
    appended to it; `formulas` counts the formula cells among them once they are written."""

    formulas: int
    rows: int  # rows it writes
    errors: int  # formula cells whose value is an error, once written

    def __iter__(self) -> Iterator[bytes]: ...

    def cells(self, head: Cells, first_row: int) -> CellsView:
        """The `head` cells (the rows appended before it) and every cell the stream writes from
        `first_row`, as ``SheetWriter.recorded`` holds them (nothing evaluated that the
        comparison ignores)."""
        ...


class SheetWriter:
    """Appends rows and keeps the cached values of formula cells in writing order."""

    def __init__(self, ws: WriteOnlyWorksheet, record: bool = False) -> None:
        self.ws = ws
        # With `record`, rows are kept here instead of written (a workbook compared in memory
        # by `planner diff`, never saved).
        self.recorded: Cells | None = {} if record else None
        self.cached: list[Value | Deferred] = []
        self.row = 0
        self.stream: RowStream | None = None
        self._styles: dict[tuple[str, str], Any] = {}
        self._widths: list[float] = []
        self.max_col = 0  # the widest row appended, in columns
        self.back_link: str | None = None  # where "← Contents" leads, put in the first row

    def _style(self, cell: WriteOnlyCell, style: str, number_format: str) -> None:
        """Apply a named style and number format; resolved once per combination, since
        openpyxl's own lookup per cell dominates the time of large grids."""
        key = (style, number_format)
        if key not in self._styles:
            proto = WriteOnlyCell(self.ws)
            proto.style = style
            proto.number_format = number_format
            self._styles[key] = proto._style
        cell._style = copy(self._styles[key])

    @property
    def title(self) -> str:
        return str(self.ws.title)

    def _wrapped_height(self, cells: Sequence[Cell]) -> float:
        """Points the tallest wrapped cell of a row needs at its column's width (15 a line;
        10 for the small font of long sources); 0 when every cell fits on one line."""
        height = 0.0
        for i, c in enumerate(cells):
            if isinstance(c, Styled) and c.style in (styles.HEADER, styles.WRAP,
                                                     styles.WRAP_SMALL) and isinstance(
                    c.value, str):
                text = c.value
            elif isinstance(c, Formula) and c.style in (styles.WRAP, styles.WRAP_SMALL) and (
                    isinstance(c.cached, str)):
                text = c.cached
            else:
                continue
            small = c.style == styles.WRAP_SMALL
            width = max(4, int((self._widths[i] if i < len(self._widths) else 8.43) - 1))
            if small:
                width = int(width * 1.5)  # an 8-point font fits more characters
            count, used = 1, 0
            for word in text.split():
                need = len(word) + (1 if used else 0)
                if used and used + need > width:
                    count, used = count + 1, len(word)
                else:
                    used += need
            if count > 1:
                height = max(height, (10 if small else 15) * count + 2)
        return height

    def append(self, cells: Sequence[Cell]) -> int:
        if self.row == 0 and self.back_link is not None:
            cells = self._with_back_link(cells)
        if self.recorded is not None:
            self._record(cells)
            return self.row
        height = self._wrapped_height(cells)
        if height:  # rows are written as they come: set the height before the row
            self.ws.row_dimensions[self.row + 1].height = max(height, 17)
        out: list[Any] = []
        for column, c in enumerate(cells, start=1):
            if isinstance(c, Formula):
                self.cached.append(c.cached)
            out.append(self._cell(c, column))
        self.ws.append(out)
        self.row += 1
        self.max_col = max(self.max_col, len(cells))
        return self.row

    def _record(self, cells: Sequence[Cell]) -> None:
        """Keep a row as the reader reads it back once written: formulas as their text, inputs
        (blank ones too) as inputs, other values as they are, empty cells (and empty text,
        which openpyxl does not write) left out."""
        assert self.recorded is not None
        row = self.row + 1
        for column, c in enumerate(cells, start=1):
            if isinstance(c, Formula):
                self.cached.append(c.cached)
                self.recorded[(row, column)] = (c.text, FORMULA)
            elif isinstance(c, Input):  # empty text is no value in the file
                self.recorded[(row, column)] = (None if c.value == "" else c.value, INPUT)
            else:
                value = c.text if isinstance(c, Link) else c.value if isinstance(c, Styled) else c
                if value is not None and value != "":
                    self.recorded[(row, column)] = (value, OTHER)
        self.row = row
        self.max_col = max(self.max_col, len(cells))

    def _with_back_link(self, cells: Sequence[Cell]) -> list[Cell]:
        """The first row with "← Contents" after it: after a table's header, or after a title
        where the title's text ends (a title spills over the empty cells to its right)."""
        assert self.back_link is not None
        column = len(cells) + 1
        if len(cells) == 1 and isinstance(cells[0], Styled) and isinstance(cells[0].value, str):
            needed = len(cells[0].value) * (1.4 if cells[0].style == styles.TITLE else 1.0)
            edge, column = 0.0, 1
            while edge < needed:
                edge += self._widths[column - 1] if column <= len(self._widths) else 8.43
                column += 1
        return [*cells, *([None] * (column - 1 - len(cells))), Link(CONTENTS, self.back_link)]

    def _cell(self, c: Cell, column: int = 1) -> Any:
        """The openpyxl cell (or plain value) that `append` writes for `c` in `column`."""
        if isinstance(c, Link):
            cell = _text_cell(self.ws, c.text, c.style)
            cell.hyperlink = Hyperlink(ref=f"{get_column_letter(column)}{self.row + 1}",
                                       location=c.location, display=c.text)
            return cell
        if isinstance(c, Formula):
            cell = WriteOnlyCell(self.ws, value=c.text)
            self._style(cell, c.style, c.number_format)
        elif isinstance(c, Input):
            style = styles.INPUT_TEXT if isinstance(c.value, str) else styles.INPUT
            cell = (_text_cell(self.ws, c.value, style) if isinstance(c.value, str)
                    else WriteOnlyCell(self.ws, value=c.value))
            self._style(cell, style, c.number_format)
        elif isinstance(c, Styled):
            if isinstance(c.value, str):
                cell = _text_cell(self.ws, c.value, c.style)
            else:
                cell = WriteOnlyCell(self.ws, value=c.value)
                cell.style = c.style
            cell.number_format = c.number_format
        elif isinstance(c, str):
            cell = _text_cell(self.ws, c, styles.TEXT)
        else:
            return c
        return cell

    def cell_xml(self, c: Cell, column: int, row: int, cached: bool = True) -> str:
        """`c` at (`row`, `column`) as openpyxl writes it in this sheet, with a formula's value
        cached as ``cache.inject`` puts it unless not `cached` ("" for an empty cell).
        Registers the cell's style with the workbook, as writing it would."""
        cell = self._cell(c, column)
        if not isinstance(cell, OpenpyxlCell):
            if cell is None:
                return ""
            cell = WriteOnlyCell(self.ws, value=cell)
        cell.row, cell.column = row, column
        buf = BytesIO()
        with xmlfile(buf) as xf:
            write_cell(xf, self.ws, cell, cell.has_style)
        text = buf.getvalue().decode()
        return with_value(text, c.cached) if isinstance(c, Formula) and cached else text

    def widths(self, widths: Sequence[float]) -> None:
        """Column widths; must come before the first row (write-only worksheets)."""
        self._widths = list(widths)
        for i, w in enumerate(widths, start=1):
            self.ws.column_dimensions[get_column_letter(i)].width = w


def cell_text(cell: Cell) -> str:
    if isinstance(cell, Link):
        return cell.text
    if isinstance(cell, Formula):
        cached = cell.cached.resolve() if isinstance(cell.cached, Deferred) else cell.cached
        return shown_text(cached, cell.number_format)
    if isinstance(cell, Input | Styled):
        return shown_text(cell.value, cell.number_format)
    return shown_text(cell)


def fitted_widths(header: Sequence[str], rows: Sequence[Sequence[Cell]], minimum: float = 8,
                  maximum: float = 60, header_words: bool = True) -> list[float]:
    """Column widths that show every value without '###': the widest shown value (or the
    longest header word, since headers wrap) plus a margin, within [minimum, maximum]."""
    out = []
    for i, head in enumerate(header):
        longest = max((len(cell_text(r[i])) for r in rows if i < len(r)), default=0)
        words = max((len(w) for w in head.split()), default=0) if header_words else len(head)
        out.append(float(min(maximum, max(minimum, longest + 2, words + 2))))
    return out
