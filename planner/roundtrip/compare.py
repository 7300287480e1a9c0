"""Whether a cell of an edited workbook holds what the planner wrote there. Formulas are compared
token by token, so that what a spreadsheet rewrites on saving (LibreOffice drops the quotes of
'Fleet'!A1, writes 1E+15 for 1000000000000000.0 and TRUE() for TRUE) is not a change; a formula
whose row was moved (a sorted Grid or Fleet row) is compared by its relative references, shifted
by as many rows; numbers are equal within rounding.
"""

from __future__ import annotations

import math
from typing import Any

from planner.roundtrip.reader import CELL_REF


def _shift_ref(ref: str, rows: int, own_row: int | None = None) -> str:
    """A1 reference with its relative row moved by `rows` (as a spreadsheet moves a sorted
    row's formulas), and an absolute reference to the formula's `own_row` too (a row the
    planner places by a ranking); other absolute rows and names stay."""
    parts = []
    for part in ref.split(":"):
        m = CELL_REF.match(part.upper())
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
