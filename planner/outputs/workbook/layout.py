"""Where things live in the workbook: sheet names, column layouts and defined names.

Renderers turn an expression's leaves into these addresses, so the formula text of every
quantity comes from its one definition (assembled in ``planner.model.quantities``).
"""

from __future__ import annotations

import heapq
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import ClassVar

from openpyxl.utils import get_column_letter, quote_sheetname

from planner.inputs.fields import GPU_FIELDS, MODEL_LAYER_COUNTS, MODEL_NUMERIC, MODEL_TEXT_INPUTS
from planner.inputs.scenario import SCENARIO_FIELDS
from planner.model.quantities import MODEL_QUANTITIES, ROW_QUANTITIES

ABOUT, ASSUMPTIONS, FORMATS, MODELS, GPUS = "About", "Assumptions", "Formats", "Models", "GPUs"
GRID, CAPACITY, CHARTS, VIEW_DATA = "Grid", "Capacity", "Charts", "View data"
METHOD = "Method"
BUDGET, FLEET, WORKLOADS, SERVERS = "Budget", "Fleet", "Workloads", "Servers"
CLOUDS = "Clouds"
SENSITIVITY, SCENARIOS = "Sensitivity", "Scenarios"
CHECKS = "Checks"

# Grid (and View data) columns: configuration, catalog lookups, then every row quantity.
CONFIG_COLUMNS = list(SCENARIO_FIELDS)
LOOKUPS = {  # lookup column -> (configuration column, id range it is matched in)
    "model_row": ("model", "model_id"),
    "gpu_row": ("gpu", "gpu_id"),
    "weights_row": ("weights", "weight_format_id"),
    "kv_row": ("kv", "kv_format_id"),
}
GRID_COLUMNS = CONFIG_COLUMNS + list(LOOKUPS) + [q.name for q in ROW_QUANTITIES]
GRID_COL = {name: get_column_letter(i) for i, name in enumerate(GRID_COLUMNS, start=1)}

# Models sheet: id, name, numeric config fields, layer counts, derived quantities, text.
MODEL_INPUTS = [f for f in MODEL_NUMERIC] + MODEL_TEXT_INPUTS + MODEL_LAYER_COUNTS
MODEL_COLUMNS = (["id", "name"] + MODEL_INPUTS + [q.name for q in MODEL_QUANTITIES]
                 + ["source", "notes"])
MODEL_COL = {name: get_column_letter(i) for i, name in enumerate(MODEL_COLUMNS, start=1)}

GPU_NUMERIC_FIELDS = [k for k, s in GPU_FIELDS.items() if s.kind in ("int", "number")]
GPU_COLUMNS = (["id", "name", "vendor"] + GPU_NUMERIC_FIELDS
               + ["price_date", "price_source", "source", "notes"])
GPU_COL = {name: get_column_letter(i) for i, name in enumerate(GPU_COLUMNS, start=1)}

CATALOG_FIRST_ROW = 2  # header in row 1


def model_name(field: str) -> str:
    return f"model_{field}"


def gpu_name(field: str) -> str:
    return f"gpu_{field}"


def left_to_right(preferred: Sequence[str], reads: Mapping[str, set[str]]) -> list[str]:
    """Columns in an order where every formula reads only cells to its left in its row: the
    preferred order, each column moved just far enough right to follow what it reads (a stable
    topological sort). LibreOffice computes long formula columns in threaded groups (several
    adjacent columns at once), and where a row's early columns read later ones its dependency
    check can see a circle that is not there (Err:522) or read cells not yet computed; a row
    that computes left to right gives it nothing to untangle, and reads as it computes."""
    position = {name: i for i, name in enumerate(preferred)}
    waiting = {name: {r for r in reads.get(name, set()) if r != name} for name in preferred}
    readers: dict[str, list[str]] = {name: [] for name in preferred}
    for name, needs in waiting.items():
        for need in needs:
            readers[need].append(name)
    ready = [position[n] for n in preferred if not waiting[n]]
    heapq.heapify(ready)
    order: list[str] = []
    while ready:
        name = preferred[heapq.heappop(ready)]
        order.append(name)
        for reader in readers[name]:
            waiting[reader].discard(name)
            if not waiting[reader]:
                heapq.heappush(ready, position[reader])
    if len(order) != len(preferred):
        circle = sorted(n for n in preferred if waiting[n])
        raise ValueError(f"columns that read each other in a circle: {', '.join(circle)}")
    return order


def absolute_range(sheet: str, column: str, first: int, last: int) -> str:
    return f"{quote_sheetname(sheet)}!${column}${first}:${column}${last}"


def table_range(sheet: str, column: str, first: int, last: int) -> str:
    """A table column as the range its name covers, for INDEX to read. A table of one entry
    also covers the empty cell below it: Gnumeric's INDEX gives #REF! on a one-cell range where
    Excel and LibreOffice give the cell. Only for tables with nothing written below them; an id
    column, which MATCH and list validation read (fine on one cell), keeps absolute_range."""
    return absolute_range(sheet, column, first, max(last, first + 1))


def catalog_column_range(field: str, sheet: str, column: str, first: int, last: int) -> str:
    """The range a catalog column's name covers: an id column as it stands (MATCH reads it),
    any other column as INDEX reads it (`table_range`)."""
    return (absolute_range if field == "id" else table_range)(sheet, column, first, last)


def absolute_cell(sheet: str, column: str, row: int) -> str:
    return f"{quote_sheetname(sheet)}!${column}${row}"


@dataclass
class ModelsRowRenderer:
    """Model-scope quantities on the Models sheet: leaves are cells of the same row."""

    row: int

    def ref(self, kind: str, name: str) -> str:
        if kind == "model":
            return f"{MODEL_COL[name]}{self.row}"
        if kind == "assume":
            return name
        raise KeyError(f"{kind}:{name} in a model quantity")


ROW_TOKEN = "\x00"  # stands for the row number in a formula template


@dataclass
class GridRowRenderer:
    """Row quantities on the Grid or View data sheet: configuration and quantities are cells of
    the same row; catalog fields are looked up once per row (the *_row columns) and read with
    INDEX; assumptions are workbook names."""

    row: int | str
    LOOKUPS: ClassVar[dict[str, tuple[str, str]]] = LOOKUPS
    TABLES: ClassVar[dict[str, tuple[str, str]]] = {}  # kind -> (name prefix, lookup column)

    def col(self, name: str) -> str:
        return f"${GRID_COL[name]}{self.row}"

    def ref(self, kind: str, name: str) -> str:
        if kind in ("var", "q"):
            return self.col(name)
        if kind in self.TABLES:
            prefix, lookup = self.TABLES[kind]
            return f"INDEX({prefix}{name},{self.col(lookup)})"
        if kind == "model":
            return f"INDEX({model_name(name)},{self.col('model_row')})"
        if kind == "gpu":
            return f"INDEX({gpu_name(name)},{self.col('gpu_row')})"
        if kind == "weights":
            return f"INDEX(weight_{name},{self.col('weights_row')})"
        if kind == "engine":
            return f"INDEX(engine_{name},engine_row)"
        if kind == "kv":
            return f"INDEX(kv_{name},{self.col('kv_row')})"
        if kind == "assume":
            return name
        raise KeyError(f"{kind}:{name}")

    def lookup(self, lookup: str) -> str:
        config, id_range = self.LOOKUPS[lookup]
        return f"MATCH({self.col(config)},{id_range},0)"
