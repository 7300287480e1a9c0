"""Recalculate a workbook with headless LibreOffice, forcing every formula to be computed, or
with Gnumeric as a second engine.

LibreOffice trusts cached values by default (OOXMLRecalcMode=1), which would only echo our own
numbers back; a private profile with OOXMLRecalcMode=0 makes it recalculate on load. Gnumeric
gets a copy without any cached formula value and recalculates it with ``ssconvert --recalc``.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
import zipfile
from pathlib import Path

import pytest

from tests.engines import require_marked

PROFILE = """<?xml version="1.0" encoding="UTF-8"?>
<oor:items xmlns:oor="http://openoffice.org/2001/registry"
 xmlns:xs="http://www.w3.org/2001/XMLSchema" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">
<item oor:path="/org.openoffice.Office.Calc/Formula/Load">
<prop oor:name="OOXMLRecalcMode" oor:op="fuse"><value>0</value></prop></item>
</oor:items>
"""


def soffice() -> str | None:
    return shutil.which("soffice") or shutil.which("libreoffice")


def require_libreoffice() -> str:
    """The soffice path; skip with a reason when missing, fail under CI=true."""
    require_marked("libreoffice")
    path = soffice()
    if path is None:
        if os.environ.get("CI") == "true":
            pytest.fail("LibreOffice (soffice) is required when CI=true; .ci/run installs "
                        "libreoffice-calc-nogui")
        pytest.skip("LibreOffice is not installed (apt-get install libreoffice-calc-nogui); "
                    "spreadsheet-engine checks skipped")
    return path


def recalculate(src: Path, out_dir: Path) -> Path:
    """Open `src` in LibreOffice, recalculate everything, save as xlsx into `out_dir`."""
    exe = require_libreoffice()
    with tempfile.TemporaryDirectory() as profile:
        user = Path(profile) / "user"
        user.mkdir()
        (user / "registrymodifications.xcu").write_text(PROFILE)
        out_dir.mkdir(parents=True, exist_ok=True)
        result = subprocess.run(
            [exe, "--headless", "--norestore", "--nologo", "--nodefault",
             f"-env:UserInstallation={Path(profile).as_uri()}", "--convert-to", "xlsx",
             "--outdir", str(out_dir), str(src)],
            capture_output=True, text=True, timeout=600)
    produced = out_dir / src.name
    if not produced.exists():  # soffice exits 0 even when it could not load the file
        raise AssertionError(f"LibreOffice did not convert {src}: {result.stdout}{result.stderr}")
    return produced


# --- Gnumeric, a second engine --------------------------------------------------------------

FORMULA_CELL = re.compile(r"<c ([^>]*)>(<f(?: [^>]*)?>[^<]*</f>)<v>[^<]*</v></c>")
CELL_TYPE = re.compile(r' t="[a-z]+"')


def ssconvert() -> str | None:
    return shutil.which("ssconvert")


def require_gnumeric() -> str:
    """The ssconvert path; skip with a reason when missing, fail under CI=true."""
    require_marked("gnumeric")
    path = ssconvert()
    if path is None:
        if os.environ.get("CI") == "true":
            pytest.fail("Gnumeric (ssconvert) is required when CI=true; .ci/run installs gnumeric")
        pytest.skip("Gnumeric is not installed (apt-get install gnumeric); second-engine "
                    "checks skipped")
    return path


def strip_cached_values(src: Path, dst: Path) -> int:
    """Copy `src` without the value cached in each worksheet formula cell (and its type), so an
    engine that reads it has nothing to echo; returns how many cells were stripped."""
    def bare(m: re.Match[str]) -> str:
        return f"<c {CELL_TYPE.sub('', m.group(1))}>{m.group(2)}</c>"

    stripped = 0
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, "w", zipfile.ZIP_DEFLATED) as zout:
        for item in zin.infolist():
            data = zin.read(item.filename)
            if item.filename.startswith("xl/worksheets/sheet"):
                text, count = FORMULA_CELL.subn(bare, data.decode())
                assert "</f><v>" not in text, f"a formula cell of {item.filename} kept its value"
                data, stripped = text.encode(), stripped + count
            zout.writestr(item, data)
    return stripped


def recalculate_gnumeric(src: Path, out_dir: Path) -> Path:
    """Strip the cached values of `src`, recalculate every cell with Gnumeric
    (``ssconvert --recalc``) and save as xlsx into `out_dir`."""
    exe = require_gnumeric()
    out_dir.mkdir(parents=True, exist_ok=True)
    bare = out_dir / f"stripped-{src.name}"
    assert strip_cached_values(src, bare) > 0, f"no formula cells in {src}"
    produced = out_dir / src.name
    result = subprocess.run([exe, "--recalc", str(bare), str(produced)], capture_output=True,
                            text=True, timeout=1200)
    if result.returncode != 0 or not produced.exists():
        raise AssertionError(f"Gnumeric did not convert {src}: {result.stdout}{result.stderr}")
    return produced


# --- a finance export: the finance sheets as a PDF --------------------------------------------

SHEET_TAG = re.compile(r'<sheet\b[^>]*\bname="([^"]+)"[^>]*/>')


def only_sheets(src: Path, dst: Path, keep: set[str]) -> None:
    """Copy `src` with every sheet not in `keep` hidden (LibreOffice prints no hidden sheet);
    the cached values stay, so nothing needs recalculating."""
    def hide(m: re.Match[str]) -> str:
        tag = m.group(0)
        if m.group(1) in keep:
            return tag
        tag = re.sub(r'\sstate="[^"]*"', "", tag)
        return tag.replace("<sheet ", '<sheet state="hidden" ', 1)

    def unprinted(text: str) -> str:
        """Without the print areas and titles of hidden sheets (LibreOffice prints a hidden
        sheet's print area)."""
        titles = [m.group(1) for m in SHEET_TAG.finditer(text)]
        hidden = {str(i) for i, title in enumerate(titles) if title not in keep}
        return re.sub(r'<definedName name="_xlnm\.Print_(?:Area|Titles)" localSheetId="(\d+)"'
                      r"[^>]*>[^<]*</definedName>",
                      lambda m: "" if m.group(1) in hidden else m.group(0), text)

    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, "w", zipfile.ZIP_DEFLATED) as zout:
        for item in zin.infolist():
            data = zin.read(item.filename)
            if item.filename == "xl/workbook.xml":
                data = SHEET_TAG.sub(hide, unprinted(data.decode())).encode()
            zout.writestr(item, data)


def export_pdf(src: Path, out_dir: Path, sheets: set[str]) -> Path:
    """The sheets of `src` named in `sheets` as one PDF, as LibreOffice prints them (their
    print areas, fit to width, header and footer)."""
    exe = require_libreoffice()
    out_dir.mkdir(parents=True, exist_ok=True)
    finance = out_dir / f"finance-{src.name}"
    only_sheets(src, finance, sheets)
    with tempfile.TemporaryDirectory() as profile:
        result = subprocess.run(
            [exe, "--headless", "--norestore", "--nologo", "--nodefault",
             f"-env:UserInstallation={Path(profile).as_uri()}", "--convert-to", "pdf",
             "--outdir", str(out_dir), str(finance)],
            capture_output=True, text=True, timeout=900)
    produced = finance.with_suffix(".pdf")
    if not produced.exists():
        raise AssertionError(f"LibreOffice did not export {src}: {result.stdout}{result.stderr}")
    return produced


def pdf_pages(pdf: Path) -> int:
    """Pages in a PDF (its page objects; LibreOffice writes them uncompressed)."""
    return len(re.findall(rb"/Type\s*/Page(?![s\w])", pdf.read_bytes()))
