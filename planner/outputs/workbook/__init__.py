"""The workbook: every derived number a live formula, with Python's value cached in it.

One function per sheet; ``write_workbook`` creates them in reading order, names the inputs,
saves with openpyxl's write-only writer and injects the cached values; the Grid's rows are
evaluated and streamed into the package at that point (``grid_sheet.GridStream``).
"""

from __future__ import annotations

import contextlib
import tempfile
from collections.abc import Callable
from pathlib import Path

from openpyxl import Workbook

from planner.outputs.workbook import styles
from planner.outputs.workbook.about_sheet import write_about
from planner.outputs.workbook.cache import inject
from planner.outputs.workbook.catalog_sheets import (
    define,
    write_assumptions,
    write_formats,
    write_gpus,
    write_models,
)
from planner.outputs.workbook.cells import SheetWriter
from planner.outputs.workbook.fleet_sheets import (
    write_budget,
    write_clouds,
    write_fleet,
    write_servers,
    write_workloads,
)
from planner.outputs.workbook.grid_sheet import write_grid
from planner.outputs.workbook.layout import (
    ABOUT,
    ASSUMPTIONS,
    BUDGET,
    CAPACITY,
    CHARTS,
    CLOUDS,
    FLEET,
    FORMATS,
    GPUS,
    GRID,
    METHOD,
    MODELS,
    SCENARIOS,
    SENSITIVITY,
    SERVERS,
    VIEW_DATA,
    WORKLOADS,
)
from planner.outputs.workbook.method_sheet import write_method
from planner.outputs.workbook.scenarios_sheet import write_scenarios
from planner.outputs.workbook.sensitivity_sheet import write_sensitivity
from planner.outputs.workbook.view_sheets import (
    view_envs,
    write_capacity,
    write_charts,
    write_view_data,
)
from planner.plan.plan import Plan

SHEET_ORDER = [ABOUT, BUDGET, SCENARIOS, SENSITIVITY, CAPACITY, CHARTS, GRID, FLEET, WORKLOADS,
               SERVERS, CLOUDS, ASSUMPTIONS, FORMATS, MODELS, GPUS, METHOD, VIEW_DATA]


def write_workbook(plan: Plan, path: Path,
                   progress: Callable[[str, int, int], None] | None = None) -> int:
    """Write the workbook to `path` (callers make it atomic); returns the formula-cell count."""
    wb = Workbook(write_only=True)
    styles.register(wb)
    writers = {title: SheetWriter(wb.create_sheet(title)) for title in SHEET_ORDER}
    name = define(wb)
    try:
        envs = view_envs(plan)
        write_assumptions(writers[ASSUMPTIONS], plan, name)
        write_formats(writers[FORMATS], plan, name)
        write_models(writers[MODELS], plan, name)
        write_gpus(writers[GPUS], plan, name)
        write_capacity(writers[CAPACITY], plan, envs, name)
        write_view_data(writers[VIEW_DATA], plan, envs)
        write_charts(writers[CHARTS], plan, envs)
        write_grid(writers[GRID], plan, progress)
        write_workloads(writers[WORKLOADS], plan, name)
        write_servers(writers[SERVERS], plan, name)
        write_clouds(writers[CLOUDS], plan, name)
        blocks = write_fleet(writers[FLEET], plan)
        picks = write_budget(writers[BUDGET], plan, blocks, name)
        write_sensitivity(writers[SENSITIVITY], plan, blocks, picks)
        write_scenarios(writers[SCENARIOS], plan, blocks, picks)
        write_method(writers[METHOD])
        write_about(writers[ABOUT], plan)
    except BaseException:
        for w in writers.values():  # finish openpyxl's streams quietly before re-raising
            with contextlib.suppress(Exception):
                w.ws.close()
        raise
    wb.calculation.fullCalcOnLoad = True
    with tempfile.TemporaryDirectory(dir=path.parent) as tmp:
        bare = Path(tmp) / "formulas-only.xlsx"
        if progress:
            progress("saving workbook", 0, 1)
        wb.save(bare)
        if progress:
            progress("caching values", 0, 1)
        inject(bare, path, {t: w.cached for t, w in writers.items() if w.cached},
               {t: w.stream for t, w in writers.items() if w.stream is not None})
    return sum(len(w.cached) + (w.stream.formulas if w.stream else 0) for w in writers.values())
