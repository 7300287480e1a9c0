"""A readable text dump of a workbook (cell, formula or value, cached value, number format,
defined names) for golden-file comparison; generated parts (dates, hashes) are left out."""

from __future__ import annotations

from pathlib import Path

from openpyxl import load_workbook

SKIP_SHEETS = {"About"}  # generation date and catalog hashes


def dump(path: Path) -> str:
    formulas = load_workbook(path)
    values = load_workbook(path, data_only=True)
    lines = ["# defined names"]
    for name, dn in sorted(formulas.defined_names.items()):
        lines.append(f"{name} = {dn.attr_text}")
    for ws in formulas.worksheets:
        if ws.title in SKIP_SHEETS:
            continue
        lines.append(f"# sheet {ws.title}")
        for row in ws.iter_rows():
            for cell in row:
                if cell.value is None:
                    continue
                fmt = "" if cell.number_format == "General" else f"  [{cell.number_format}]"
                if cell.data_type == "f":
                    cached = values[ws.title][cell.coordinate].value
                    lines.append(f"{cell.coordinate} {cell.value}  -> {cached!r}{fmt}")
                else:
                    lines.append(f"{cell.coordinate} {cell.value!r}{fmt}")
    return "\n".join(lines) + "\n"
