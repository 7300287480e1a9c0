"""Pages of a finance export: the finance sheets of a workbook (About, Budget, Checks,
Scenarios, Sensitivity, Fleet, Workloads, Servers, Clouds, Assumptions) exported to PDF by
headless LibreOffice, as they print (print areas, fit to width, header and footer), with the
pages of each sheet (read from each page's header, where pdftotext is installed). The figures
are printed, not asserted; tests/test_workbook.py keeps the default workbook at 30 pages or
fewer.

    python bench/bench_pdf.py                    # builds the default workbook first
    python bench/bench_pdf.py capacity-plan.xlsx
"""

from __future__ import annotations

import argparse
import collections
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from planner.build import WORKBOOK_NAME, run_build  # noqa: E402
from planner.inputs.catalog import DEFAULT_GPUS, DEFAULT_MODELS  # noqa: E402
from planner.inputs.grid import DEFAULT_GRID  # noqa: E402
from planner.outputs.workbook import FINANCE_SHEETS  # noqa: E402
from tests.recalc import export_pdf, pdf_pages  # noqa: E402


def pages_by_sheet(pdf: Path) -> dict[str, int]:
    """Pages per sheet: the sheet each page's header names (the header's right part)."""
    if shutil.which("pdftotext") is None:
        return {}
    text = subprocess.run(["pdftotext", "-layout", str(pdf), "-"], capture_output=True,
                          text=True, check=True).stdout
    counts: collections.Counter[str] = collections.Counter()
    for page in text.split("\f"):
        lines = [line for line in page.splitlines() if line.strip()]
        if lines:
            counts[lines[0].split("  ")[-1].strip()] += 1
    return dict(counts)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("workbook", nargs="?", type=Path,
                        help="a workbook planner build wrote (default: build the default one)")
    options = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-pdf-") as tmp:
        workbook = options.workbook
        if workbook is None:
            run_build(DEFAULT_MODELS, DEFAULT_GPUS, DEFAULT_GRID, Path(tmp), {}, None)
            workbook = Path(tmp) / WORKBOOK_NAME
        start = time.perf_counter()
        pdf = export_pdf(workbook, Path(tmp) / "pdf", set(FINANCE_SHEETS))
        seconds = time.perf_counter() - start
        print(f"finance export of {workbook.name}: {pdf_pages(pdf)} pages "
              f"({seconds:.1f} s in LibreOffice)")
        for sheet, pages in pages_by_sheet(pdf).items():
            print(f"  {sheet:12} {pages:3} page(s)")


if __name__ == "__main__":
    main()
