"""`planner build`: evaluate the grid, write the workbook and the HTML summary atomically."""

from __future__ import annotations

import time
from collections.abc import Mapping
from pathlib import Path

from planner.inputs.catalog import DEFAULT_CLOUDS, DEFAULT_SERVERS, DEFAULT_WORKLOADS
from planner.outputs.atomic import write_atomically
from planner.plan.plan import Progress, build_plan

WORKBOOK_NAME = "capacity-plan.xlsx"
HTML_NAME = "capacity-plan.html"


def run_build(models_path: Path, gpus_path: Path, grid_path: Path, out_dir: Path,
              overrides: Mapping[str, float | str], progress: Progress | None = None,
              workloads_path: Path = DEFAULT_WORKLOADS, servers_path: Path = DEFAULT_SERVERS,
              clouds_path: Path = DEFAULT_CLOUDS) -> dict[str, object]:
    from planner.outputs.html.report import write_html
    from planner.outputs.workbook import write_workbook

    started = time.perf_counter()
    plan = build_plan(models_path, gpus_path, grid_path, overrides, progress,
                      workloads_path=workloads_path, servers_path=servers_path,
                      clouds_path=clouds_path)
    counts: dict[str, int] = {}

    def workbook_writer(path: Path) -> None:
        counts["formula_cells"] = write_workbook(plan, path, progress)

    targets = {out_dir / WORKBOOK_NAME: workbook_writer,
               out_dir / HTML_NAME: lambda p: write_html(plan, p)}
    write_atomically(targets)
    formula_cells = counts["formula_cells"]
    return {
        "files": [str(p) for p in targets],
        "rows": len(plan.rows),
        "workloads": len(plan.sized),
        "fleet_rows": sum(len(s.rows) for s in plan.sized),
        "formula_cells": formula_cells,
        "skipped": plan.grid.skipped,
        "workloads_left_out": dict(plan.workloads.left_out),
        "overrides": dict(overrides),
        "seconds": round(time.perf_counter() - started, 3),
    }
