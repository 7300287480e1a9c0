"""The workbook: every derived number a live formula, with Python's value cached in it.

One function per sheet; ``write_workbook`` creates them in reading order, names the inputs,
saves with openpyxl's write-only writer and injects the cached values; the Grid's rows are
evaluated and streamed into the package at that point (``grid_sheet.GridStream``).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from openpyxl import Workbook
from openpyxl.utils import get_column_letter, quote_sheetname

from planner.outputs.atomic import temp_folder
from planner.outputs.workbook import styles
from planner.outputs.workbook.about_sheet import write_about
from planner.outputs.workbook.budget_sheet import CHECKS_ROW, write_budget
from planner.outputs.workbook.cache import inject
from planner.outputs.workbook.catalog_sheets import (
    define,
    write_assumptions,
    write_formats,
    write_gpus,
    write_models,
)
from planner.outputs.workbook.cells import CellsView, SheetWriter
from planner.outputs.workbook.checks_sheet import (
    CATALOG_ID_NAMES,
    Outcome,
    UsedRange,
    error_count,
    write_checks,
)
from planner.outputs.workbook.fleet_sheets import (
    fleet_print_area,
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
    CHECKS,
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
from planner.outputs.workbook.perop_sheet import PEROP, write_perop
from planner.outputs.workbook.scenarios_sheet import write_scenarios
from planner.outputs.workbook.schedule_sheet import SCHEDULE, write_schedule
from planner.outputs.workbook.sensitivity_sheet import write_sensitivity
from planner.outputs.workbook.view_sheets import (
    view_envs,
    write_capacity,
    write_charts,
    write_view_data,
)
from planner.plan.plan import Plan

SHEET_ORDER = [ABOUT, BUDGET, CHECKS, SCENARIOS, SCHEDULE, SENSITIVITY, CAPACITY, CHARTS, GRID,
               FLEET, WORKLOADS, SERVERS, CLOUDS, ASSUMPTIONS, FORMATS, MODELS, GPUS, PEROP,
               METHOD, VIEW_DATA]
# What a finance export prints, each with its header rows repeated on every page.
FINANCE_SHEETS = {ABOUT: None, BUDGET: "1:1", FLEET: "1:1", WORKLOADS: "1:1", SERVERS: "1:1",
                  CLOUDS: "1:1", ASSUMPTIONS: "1:1", SCENARIOS: "1:1", SENSITIVITY: "1:1",
                  CHECKS: "1:1", SCHEDULE: None}
TITLE = "GPU capacity plan for LLM inference"


def write_workbook(plan: Plan, path: Path,
                   progress: Callable[[str, int, int], None] | None = None) -> int:
    """Write the workbook to `path` (callers make it atomic); returns the formula-cell count."""
    wb, writers = _write_sheets(plan, progress, record=False)
    wb.calculation.fullCalcOnLoad = True
    with temp_folder(path) as tmp:  # beside the output, swept if a build is killed
        bare = Path(tmp) / "formulas-only.xlsx"
        if progress:
            progress("saving workbook", 0, 1)
        wb.save(bare)
        if progress:
            progress("caching values", 0, 1)
        inject(bare, path, {t: w.cached for t, w in writers.items() if w.cached},
               {t: w.stream for t, w in writers.items() if w.stream is not None})
    return sum(len(w.cached) + (w.stream.formulas if w.stream else 0) for w in writers.values())


@dataclass
class WorkbookCells:
    """What `write_workbook` would write, kept in memory: each sheet's cells as the reader
    reads them back from the file (``planner diff`` compares an edited workbook with these),
    and the workbook's defined names."""

    writers: dict[str, SheetWriter]  # each sheet's, having recorded its rows
    defined_names: Any

    def sheet(self, title: str) -> CellsView:
        """A sheet's cells; a streamed sheet's rows (the Grid's, most of a default workbook's
        cells) are made as they are looked up."""
        w = self.writers[title]
        cells = w.recorded if w.recorded is not None else {}
        if w.stream is None:
            return cells
        return w.stream.cells(cells, w.row + 1)


def workbook_cells(plan: Plan, progress: Callable[[str, int, int], None] | None = None
                   ) -> WorkbookCells:
    """Every cell of the workbook `plan` makes, written nowhere: the same sheet writers, each
    recording its rows; the Grid's formulas are its templates at each row (no value is
    evaluated or cached)."""
    if progress:
        progress("rebuilding the workbook in memory", 0, 1)
    wb, writers = _write_sheets(plan, progress, record=True)
    return WorkbookCells(writers, wb.defined_names)


def _write_sheets(plan: Plan, progress: Callable[[str, int, int], None] | None,
                  record: bool) -> tuple[Workbook, dict[str, SheetWriter]]:
    """Every sheet written (or, with `record`, recorded) in reading order, names defined and
    print set up; the Grid's rows wait in its stream."""
    wb = Workbook(write_only=True)
    styles.register(wb)
    writers = {title: SheetWriter(wb.create_sheet(title), record) for title in SHEET_ORDER}
    for title, writer in writers.items():
        if title != ABOUT:
            writer.back_link = f"{quote_sheetname(ABOUT)}!A1"
    name = define(wb)
    outcome = Outcome()
    try:
        envs = view_envs(plan)
        write_assumptions(writers[ASSUMPTIONS], plan, name)
        write_formats(writers[FORMATS], plan, name)
        write_models(writers[MODELS], plan, name)
        write_gpus(writers[GPUS], plan, name)
        write_perop(writers[PEROP], plan, name)
        write_capacity(writers[CAPACITY], plan, envs, name)
        write_view_data(writers[VIEW_DATA], plan, envs)
        write_charts(writers[CHARTS], plan, envs)
        write_grid(writers[GRID], plan, progress)
        write_workloads(writers[WORKLOADS], plan, name)
        write_servers(writers[SERVERS], plan, name)
        write_clouds(writers[CLOUDS], plan, name)
        blocks = write_fleet(writers[FLEET], plan)
        budget = write_budget(writers[BUDGET], plan, blocks, name, outcome.passed)
        write_sensitivity(writers[SENSITIVITY], plan, blocks, budget.picks)
        write_scenarios(writers[SCENARIOS], plan, blocks, budget.picks)
        write_schedule(writers[SCHEDULE], plan, blocks, budget.picks, name)
        write_method(writers[METHOD])
        write_checks(writers[CHECKS], plan, blocks, budget, _used_ranges(writers),
                     {s: CATALOG_ID_NAMES[s] for s in CATALOG_ID_NAMES}, name, outcome)
        write_about(writers[ABOUT], plan, SHEET_ORDER, outcome.passed)
        _print_setup(writers, plan)
    except BaseException:
        for w in writers.values():  # finish openpyxl's streams quietly before re-raising
            if w.recorded is None:
                with contextlib.suppress(Exception):
                    w.ws.close()
        raise
    return wb, writers


def _used_ranges(writers: dict[str, SheetWriter]) -> list[UsedRange]:
    """Each sheet the Checks sheet looks for errors in, and where its values are; About and
    Checks show the master check, and the Budget's rows above its tables do too."""
    out = []
    for title, w in writers.items():
        if title in (ABOUT, CHECKS, METHOD):
            continue
        first = CHECKS_ROW + 1 if title == BUDGET else 1
        rows = w.row + (w.stream.rows if w.stream is not None else 0)
        out.append(UsedRange(title, first, rows, w.max_col, _errors(w)))
    return out


def _errors(w: SheetWriter) -> Callable[[], int]:
    """Python's count of error values on a sheet, streamed rows included once written."""
    def count() -> int:
        return error_count(w.cached) + (w.stream.errors if w.stream is not None else 0)

    return count


def _print_setup(writers: dict[str, SheetWriter], plan: Plan) -> None:
    """Print areas, repeated header rows, header and footer of the sheets a finance export
    prints; the Grid and View data print their header row only (thousands of rows)."""
    for title, rows in FINANCE_SHEETS.items():
        w = writers[title]
        last_col = get_column_letter(max(w.max_col, 1))
        area = (fleet_print_area(w.row) if title == FLEET else f"A1:{last_col}{max(w.row, 1)}")
        styles.finance_print(w.ws, area, rows, TITLE, plan.generated)
    for title in (GRID, VIEW_DATA):
        w = writers[title]
        w.ws.print_area = f"A1:{get_column_letter(max(w.max_col, 1))}1"
        w.ws.oddHeader.left.text = (f"{title}: only the header row is printed; clear the print "
                                    "area (Page Layout) to print every row")
