"""Cell styles and number formats: inputs look like inputs (finance convention: blue text on
a light fill, unlocked), formulas are black, links to other sheets are green."""

from __future__ import annotations

from openpyxl import Workbook
from openpyxl.styles import Alignment, Border, Font, NamedStyle, PatternFill, Protection, Side

INPUT = "planner_input"
INPUT_TEXT = "planner_input_text"
FORMULA = "planner_formula"
LINK = "planner_link"
HEADER = "planner_header"
TEXT = "planner_text"
TITLE = "planner_title"
NOTE = "planner_note"
WRAP = "planner_wrap"
WRAP_SMALL = "planner_wrap_small"  # long provenance text (sources) in a smaller font
NAV = "planner_nav"  # a hyperlink within the workbook (Contents, back links)
BUILD_TIME = "planner_build_time"  # a value computed when the workbook was built: no formula

INPUT_FILL = "FFF2CC"
BAD_FILL = "F8CBAD"
BUILD_TIME_FILL = "E7E6E6"
COMPUTE_FILL = "FCE4D6"
MEMORY_FILL = "DDEBF7"

# Number formats by Quantity.display; bytes stay bytes in the cell and show as decimal GB
# (each trailing comma divides the display by 1000).
NUMBER_FORMATS = {
    "bytes": '#,##0.00,,," GB"',
    "seconds": '0.000000" s"',
    "usd": '"$"#,##0.00',
    "rate": "0.00E+00",
    "ratio": "0.000",
    "plain": "#,##0.00",
    "int": "#,##0",
    "flop": "0.00E+00",
}


# Finance formats: whole dollars, kW to one decimal, shares as percent; Yes/No for a 1/0 flag
# (text through a number format, so the cell stays a number that totals can use).
USD = '"$"#,##0'
USD_CENTS = '"$"#,##0.00'
KW = '#,##0.0'
PERCENT = "0.0%"
YES_NO = '"Yes";"Yes";"No"'
OK_FAIL = '"FAIL";"FAIL";"OK"'  # a check: 0 errors shows OK


def number_format(display: str, kind: str, unit: str) -> str:
    if kind == "int":
        return NUMBER_FORMATS["int"]
    if kind in ("bool", "text"):
        return "General"
    if unit in ("FLOP", "FLOP/s", "B/s"):
        return NUMBER_FORMATS["flop"]
    return NUMBER_FORMATS.get(display, NUMBER_FORMATS["plain"])


def header_text(label: str, unit: str, display: str = "plain", kind: str = "number") -> str:
    if not unit and kind == "bool":
        unit = "TRUE/FALSE"
    elif not unit and kind == "text":
        unit = "text"
    if display == "bytes":
        return f"{label} [bytes, shown in GB]"
    return f"{label} [{unit}]" if unit else label


def register(wb: Workbook) -> None:
    thin = Side(style="thin", color="BFBFBF")
    styles = [
        NamedStyle(INPUT, font=Font(color="0000FF"), fill=PatternFill("solid", fgColor=INPUT_FILL),
                   border=Border(bottom=thin, top=thin, left=thin, right=thin),
                   alignment=Alignment(vertical="top"), protection=Protection(locked=False)),
        NamedStyle(INPUT_TEXT, font=Font(color="0000FF"),
                   fill=PatternFill("solid", fgColor=INPUT_FILL),
                   border=Border(bottom=thin, top=thin, left=thin, right=thin),
                   alignment=Alignment(wrap_text=False, vertical="top"),
                   protection=Protection(locked=False)),
        NamedStyle(FORMULA, font=Font(color="000000"), alignment=Alignment(vertical="top")),
        NamedStyle(LINK, font=Font(color="00804D"), alignment=Alignment(vertical="top")),
        NamedStyle(HEADER, font=Font(bold=True, color="FFFFFF"),
                   fill=PatternFill("solid", fgColor="305496"),
                   alignment=Alignment(wrap_text=True, vertical="top")),
        NamedStyle(TEXT, alignment=Alignment(wrap_text=False, vertical="top")),
        NamedStyle(WRAP, alignment=Alignment(wrap_text=True, vertical="top")),
        NamedStyle(WRAP_SMALL, font=Font(size=8, color="404040"),
                   alignment=Alignment(wrap_text=True, vertical="top")),
        NamedStyle(TITLE, font=Font(bold=True, size=14, color="1F3864")),
        NamedStyle(NOTE, font=Font(italic=True, color="595959"),
                   alignment=Alignment(wrap_text=False)),
        NamedStyle(NAV, font=Font(color="0563C1", underline="single"),
                   alignment=Alignment(vertical="top")),
        NamedStyle(BUILD_TIME, font=Font(italic=True, color="7F7F7F"),
                   fill=PatternFill("solid", fgColor=BUILD_TIME_FILL),
                   alignment=Alignment(vertical="top")),
    ]
    for style in styles:
        wb.add_named_style(style)


def print_setup(ws, landscape: bool = True, title_rows: str | None = None,  # type: ignore[no-untyped-def]
                fit_width: bool = True) -> None:
    """Fit the sheet's width to the page so it prints (and previews as PDF) readably; wide
    tables (fit_width=False) print at full size across pages, their titles repeated."""
    ws.page_setup.orientation = "landscape" if landscape else "portrait"
    ws.page_setup.paperSize = "9"  # A4
    if fit_width:
        ws.page_setup.fitToWidth = 1
        ws.page_setup.fitToHeight = 0
        ws.sheet_properties.pageSetUpPr.fitToPage = True
    if title_rows:
        ws.print_title_rows = title_rows


def protect(ws) -> None:  # type: ignore[no-untyped-def]
    """Lock formulas against accidental typing, never against ordinary work: columns and rows
    can be resized and cells formatted (protection without a password)."""
    ws.protection.sheet = True
    ws.protection.formatColumns = False
    ws.protection.formatRows = False
    ws.protection.formatCells = False


def precise_format(value: object, percent: bool = False, money: bool = False) -> str:
    """A number format that shows `value` as it is stored (0.0826 as 0.0826, not 0.08):
    grouped thousands and as many decimals as the value has (at most 6); percent for shares."""
    if not isinstance(value, int | float) or isinstance(value, bool):
        return "General"
    shown = float(value) * (100 if percent else 1)
    text = f"{shown:.6f}".rstrip("0").rstrip(".")
    decimals = len(text.partition(".")[2])
    if money and decimals:
        decimals = max(decimals, 2)
    body = "#,##0" + ("." + "0" * decimals if decimals else "")
    return ('"$"' if money else "") + body + ("%" if percent else "")


def _escape(text: str) -> str:
    return text.replace("&", "&&")


def finance_print(ws, area: str, title_rows: str | None, title: str,  # type: ignore[no-untyped-def]
                  built: str) -> None:
    """What a finance export prints of a sheet: its area, fitted to the page width (set before
    the first row by print_setup), its header rows on every page, and on each page the plan's
    title and the sheet (header), the build date and the page (footer)."""
    ws.print_area = area
    if title_rows:
        ws.print_title_rows = title_rows
    ws.oddHeader.left.text = _escape(title)
    ws.oddHeader.right.text = "&A"
    ws.oddFooter.left.text = _escape(f"Built {built}")
    ws.oddFooter.right.text = "Page &P of &N"
    ws.print_options.gridLines = False
