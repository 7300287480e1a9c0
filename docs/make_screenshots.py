"""Redraw the README's screenshot of the HTML summary from a fresh default build, so it shows
what the tool writes today (Chromium, headless): its first screen, 1280 x 800 pixels, which
carries the whole decision (verdict, capex, opex, TCO, the order and each workload's state).

The workbook screenshot (docs/screenshot-workbook.png) is drawn by hand in LibreOffice: its
headless converter has no working PNG or PDF export for a workbook this size here.

Run: python docs/make_screenshots.py        (needs chromium; offline)
"""

from __future__ import annotations

import subprocess
import tempfile
from pathlib import Path

from planner.build import run_build
from planner.inputs.catalog import DEFAULT_GPUS, DEFAULT_MODELS
from planner.inputs.grid import DEFAULT_GRID

DOCS = Path(__file__).parent
CHROMIUM = ["chromium", "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
            "--disable-background-networking", "--disable-component-update", "--disable-sync",
            "--hide-scrollbars", "--window-size=1280,800"]


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        run_build(DEFAULT_MODELS, DEFAULT_GPUS, DEFAULT_GRID, work, {})
        target = DOCS / "screenshot-html.png"
        subprocess.run([*CHROMIUM, f"--user-data-dir={work / 'profile'}",
                        f"--screenshot={target}", (work / "capacity-plan.html").as_uri()],
                       check=True, capture_output=True, timeout=180)
    print("wrote docs/screenshot-html.png")


if __name__ == "__main__":
    main()
