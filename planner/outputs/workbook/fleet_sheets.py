"""The fleet sheets: Workloads, Servers and Clouds (inputs) and Fleet (one row per workload ×
candidate, every quantity a formula, each column after what it reads; what finance reads
repeated at the end of the row). The Budget,
which picks a Fleet row per workload, is budget_sheet."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

from openpyxl.formatting.rule import FormulaRule, Rule
from openpyxl.styles import Font, PatternFill
from openpyxl.styles.differential import DifferentialStyle
from openpyxl.styles.numbers import NumberFormat
from openpyxl.utils import get_column_letter

from planner.inputs.entries import Entry
from planner.inputs.fields import CLOUD_FIELDS, SERVER_FIELDS, WORKLOAD_FIELDS
from planner.inputs.scenario import SCENARIO_FIELDS
from planner.model.fleet import FLEET_QUANTITIES, FLEET_VARS
from planner.model.quantities import QUANTITY_BY_NAME, ROW_QUANTITIES
from planner.outputs.workbook import styles
from planner.outputs.workbook.catalog_sheets import Namer
from planner.outputs.workbook.cells import Cell, Formula, Input, SheetWriter, Styled
from planner.outputs.workbook.grid_sheet import CONFIG_HEADERS, LOOKUP_HEADERS, lookup_positions
from planner.outputs.workbook.layout import (
    CATALOG_FIRST_ROW,
    CLOUDS,
    FLEET,
    LOOKUPS,
    ROW_TOKEN,
    SERVERS,
    WORKLOADS,
    GridRowRenderer,
    absolute_range,
    catalog_column_range,
    left_to_right,
    table_range,
)
from planner.plan.plan import Plan
from planner.plan.sizing import FleetEnv

WORKLOAD_NUMERIC = [k for k, s in WORKLOAD_FIELDS.items() if s.kind in ("int", "number")]
WORKLOAD_COLUMNS = ["id", "name", "model", *WORKLOAD_NUMERIC, "weights", "kv", "gpus",
                    "source", "notes"]
SERVER_NUMERIC = [k for k, s in SERVER_FIELDS.items() if s.kind in ("int", "number", "bool")]
SERVER_TEXT = [k for k, s in SERVER_FIELDS.items()  # ids and choices: gpu, vendor, fabric
               if s.kind == "text" and k not in ("name", "price_date", "source", "notes")]
SERVER_COLUMNS = ["id", "name", *SERVER_TEXT, *SERVER_NUMERIC, "price_date", "source", "notes"]
UNITS = {
    "rate_rps": "requests/s", "tokens_per_day": "tokens/day", "peak_to_average": "ratio",
    "prompt_tokens": "tokens", "output_tokens": "tokens", "ttft_s": "s", "itl_s": "s",
    "spare_replicas": "replicas", "gpus_per_server": "GPUs", "scale_up_gpus": "GPUs",
    "price_usd": "USD", "power_kw": "kW", "rack_units": "U", "whole_rack": "TRUE/FALSE",
    "support_usd_per_gpu_year": "USD/GPU-year", "network_usd_per_server": "USD",
    "growth": "fraction/month", "lead_time_weeks": "weeks",
    "latency_percentile": "percentile", "model": "id", "weights": "format ids",
    "kv": "format ids", "gpus": "GPU ids", "gpu": "id", "vendor": "text", "fabric": "text",
    "price_date": "YYYY-MM",
}

# Fleet columns: workload and server, the configuration, lookups, row and fleet quantities.
FLEET_LOOKUPS = {**LOOKUPS, "workload_row": ("workload", "workload_id"),
                 "server_row": ("server", "server_id")}
# Inputs of a fleet row that no catalog holds: the measured speed error for its GPU, engine
# and model class and the engine's measured first-token error (catalogs/measured-accuracy.yaml),
# editable like any input.
FLEET_INPUTS = ("measured_speed_ratio", "measured_ttft_ratio", "cloud_offer", "cloud_row")
FLEET_QUANTITY_NAMES = [q.name for q in [*ROW_QUANTITIES, *FLEET_QUANTITIES]]
# The order a reader expects; FLEET_COLUMNS moves a column right where it reads one after it.
_CONFIG_ORDER = ("model", "gpu", "weights", "kv", "tp", "prompt", "output", "context", "batch")
assert sorted(_CONFIG_ORDER) == sorted(SCENARIO_FIELDS)
# The serving layout (planner.model.layouts) is part of the configuration: an input beside TP.
_PREFERRED = ["workload", "server", *_CONFIG_ORDER[:5], "layout", *_CONFIG_ORDER[5:],
              "workload_row", "server_row", *LOOKUPS, *FLEET_INPUTS, *FLEET_QUANTITY_NAMES]
# What finance reads of a candidate, repeated at the end of its row (each cell reads the
# quantity's own column, to its left) and all that a finance export prints of the Fleet, beside
# the workload, server and configuration (the columns it repeats on each page).
FLEET_SUMMARY = ("meets_targets", "failing_target", "choice_key", "replicas", "servers",
                 "gpus_bought", "capex_usd", "opex_usd_per_year", "tco_usd", "annual_cost_usd",
                 "cheapest_rent_usd_per_year", "verdict")
SUMMARY_SUFFIX = " (summary)"
FLEET_FIRST_ROW = 2


def workload_name(field: str) -> str:
    return f"workload_{field}"


def server_name(field: str) -> str:
    return f"server_{field}"


def cloud_name(field: str) -> str:
    return f"cloud_{field}"


class FleetRowRenderer(GridRowRenderer):
    """Fleet-row leaves: the row's own cells, catalog fields looked up once per row, and the
    workload's and server's fields through their own lookup columns."""

    LOOKUPS = FLEET_LOOKUPS
    TABLES = {"workload": ("workload_", "workload_row"), "server": ("server_", "server_row")}

    def col(self, name: str) -> str:
        return f"${FLEET_COL[name]}{self.row}"

    def ref(self, kind: str, name: str) -> str:
        if kind == "measured":
            return self.col(f"measured_{name}")
        if kind == "layout":  # tp, tp+ep, dp-attention or disaggregated: an input of the row
            return self.col("layout")
        if kind == "cloud":  # the row's cloud offer, looked up on the Clouds sheet
            if name == "offer_exists":
                return f"({self.col('cloud_row')}>0)"
            return f"INDEX({cloud_name(name)},{self.col('cloud_row')})"
        return super().ref(kind, name)


def column_formula(name: str, r: FleetRowRenderer) -> str | None:
    """The formula of a Fleet column in the renderer's row; None for an input or an id."""
    if name in FLEET_VARS:
        return FLEET_VARS[name].formula(r)
    if name == "model":
        return f"=INDEX(workload_model,{r.col('workload_row')})"
    if name == "gpu":
        return f"=INDEX(server_gpu,{r.col('server_row')})"
    if name in FLEET_LOOKUPS:
        return "=" + r.lookup(name)
    if name == "cloud_row":
        offer = r.col("cloud_offer")
        return f'=IF({offer}="",0,MATCH({offer},cloud_id,0))'
    if name in _QUANTITIES:
        return _QUANTITIES[name].expr.formula(r)
    if name.endswith(SUMMARY_SUFFIX):
        return "=" + r.col(name.removesuffix(SUMMARY_SUFFIX))
    return None


_QUANTITIES = {name: QUANTITY_BY_NAME[name] for name in FLEET_QUANTITY_NAMES}


class _ReadsRecorder(FleetRowRenderer):
    """Records the columns of its own row a formula reads."""

    def __init__(self) -> None:
        super().__init__(FLEET_FIRST_ROW)
        self.names: set[str] = set()

    def col(self, name: str) -> str:
        self.names.add(name)
        return f"$A{self.row}"


def _reads(name: str) -> set[str]:
    recorder = _ReadsRecorder()
    column_formula(name, recorder)
    return recorder.names


# Every formula of a Fleet row reads only cells to its left (layout.left_to_right): LibreOffice's
# threaded formula groups gave Err:522 on a cold recalculation where a row's early columns read
# later ones. The batch column follows the batch chosen, the quantities that read it follow it.
FLEET_COLUMNS = [*left_to_right(_PREFERRED, {name: _reads(name) for name in _PREFERRED}),
                 *(name + SUMMARY_SUFFIX for name in FLEET_SUMMARY)]
FLEET_COL = {n: get_column_letter(i) for i, n in enumerate(FLEET_COLUMNS, start=1)}
# Repeated on each printed page of the Fleet: the candidate (workload, server and the
# configuration up to its GPU; the batch follows the batch chosen, far to the right).
FLEET_PRINT_TITLE_COLUMNS = "A:" + max((FLEET_COL[n] for n in ("workload", "server", "model",
                                                             "gpu", "weights", "kv", "tp",
                                                             "layout")),
                                       key=lambda c: (len(c), c))


def _float(value: object) -> float:
    return float(value) if isinstance(value, int | float) else 0.0


# The choice key is a TCO or, for a candidate that misses a target, a sentinel after every TCO
# (planner.model.fleet.NOT_MET): shown as words, never as money. A TTFT of 1e9 s marks a
# prefill queue that never settles.
_NO_STEADY_STATE = '[>=1E+9]"no steady state";0.000000" s"'
FORMAT_OVERRIDES = {
    "choice_key": '[>=1E+15]"misses a target";"$"#,##0',
    **dict.fromkeys(("itl_mean_at_load_seconds", "prefill_wait_at_percentile_seconds",
                     "prefill_wait_mean_seconds", "slot_wait_at_percentile_seconds",
                     "ttft_mean_seconds", "ttft_percentile_seconds",
                     "prefill_pool_ttft_percentile_seconds", "layout_ttft_percentile_seconds",
                     "layout_ttft_mean_seconds"), _NO_STEADY_STATE),
}
HEADER_OVERRIDES = {"choice_key": "Choice key: TCO, or misses a target (helper) [USD]"}


def quantity_format(name: str) -> str:
    name = name.removesuffix(SUMMARY_SUFFIX)
    if name in FORMAT_OVERRIDES:
        return FORMAT_OVERRIDES[name]
    q = QUANTITY_BY_NAME[name]
    return styles.number_format(q.display, q.kind, q.unit)


def quantity_header(name: str) -> str:
    name = name.removesuffix(SUMMARY_SUFFIX)
    if name in HEADER_OVERRIDES:
        return HEADER_OVERRIDES[name]
    q = QUANTITY_BY_NAME[name]
    if q.display == "usd" or q.unit == "USD":
        return f"{q.label} [USD]"
    return styles.header_text(q.label, q.unit, q.display, q.kind)


def _entry_cell(entry: Entry, field: str) -> Cell:
    value = entry.values.get(field)
    if isinstance(value, list):
        return Input(", ".join(value))
    if field in ("price_usd", "support_usd_per_gpu_year", "network_usd_per_server") and (
            value is not None):
        return Input(value, styles.precise_format(value, money=True))
    return Input(value, styles.precise_format(value))


def write_workloads(w: SheetWriter, plan: Plan, name: Namer) -> None:
    w.widths([26, 40, 16] + [16 if c == "tokens_per_day" else 13 for c in WORKLOAD_NUMERIC]
             + [14, 14, 30, 60, 60])
    styles.print_setup(w.ws, title_rows="1:1")
    w.ws.freeze_panes = "B2"
    w.append([Styled(f"{c} [{UNITS[c]}]" if c in UNITS else c, styles.HEADER)
              for c in WORKLOAD_COLUMNS])
    for entry in plan.workloads.entries.values():
        head: list[Cell] = [Styled(entry.id), Styled(entry.name)]
        w.append(head + [_entry_cell(entry, c) for c in WORKLOAD_COLUMNS[2:-2]]
                 + [Styled(entry.source, styles.WRAP_SMALL),
                    Styled(entry.text("notes"), styles.WRAP_SMALL)])
    for i, col in enumerate(WORKLOAD_COLUMNS, start=1):
        if col in ("name", "source", "notes"):
            continue
        name(workload_name(col), catalog_column_range(col, WORKLOADS, get_column_letter(i),
                                                      CATALOG_FIRST_ROW, w.row))
    styles.protect(w.ws)


def write_servers(w: SheetWriter, plan: Plan, name: Namer) -> None:
    w.widths([22, 44] + [14] * len(SERVER_TEXT) + [14] * len(SERVER_NUMERIC) + [12, 70, 60])
    styles.print_setup(w.ws, title_rows="1:1")
    w.ws.freeze_panes = "B2"
    heads = {"price_usd": "Price [USD]"}
    w.append([Styled(heads.get(c) or (f"{c} [{UNITS[c]}]" if c in UNITS else c), styles.HEADER)
              for c in SERVER_COLUMNS])
    for entry in plan.servers.entries.values():
        cells: list[Cell] = [Styled(entry.id), Styled(entry.name)]
        cells += [Input(entry.text(c) or None) for c in SERVER_TEXT]
        w.append(cells + [_entry_cell(entry, c) for c in SERVER_NUMERIC]
                 + [Input(entry.text("price_date")), Styled(entry.source, styles.WRAP_SMALL),
                    Styled(entry.text("notes"), styles.WRAP_SMALL)])
    for i, col in enumerate(SERVER_COLUMNS, start=1):
        if col == "notes":  # the Budget's order list reads name, price date and source
            continue
        name(server_name(col), catalog_column_range(col, SERVERS, get_column_letter(i),
                                                    CATALOG_FIRST_ROW, w.row))
    styles.protect(w.ws)


CLOUD_NUMERIC = [k for k, s in CLOUD_FIELDS.items() if s.kind in ("int", "number")]
CLOUD_COLUMNS = ["id", "provider", "instance", "gpu", *CLOUD_NUMERIC, "price_date", "source",
                 "notes"]
CLOUD_UNITS = {"gpus_per_instance": "GPUs", "on_demand_usd_per_hour": "USD/instance-hour",
               "gpu": "id", "provider": "text", "instance": "text", "price_date": "YYYY-MM",
               "reserved_1y_usd_per_hour": "USD/instance-hour",
               "reserved_3y_usd_per_hour": "USD/instance-hour"}


def write_clouds(w: SheetWriter, plan: Plan, name: Namer) -> None:
    """The cloud offers a fleet row may rent instead of buying (catalogs/clouds.yaml)."""
    w.widths([26, 12, 26, 14] + [16] * len(CLOUD_NUMERIC) + [12, 70, 60])
    styles.print_setup(w.ws, title_rows="1:1")
    w.ws.freeze_panes = "B2"
    w.append([Styled(f"{c} [{CLOUD_UNITS[c]}]" if c in CLOUD_UNITS else c, styles.HEADER)
              for c in CLOUD_COLUMNS])
    for entry in plan.clouds.entries.values():
        cells: list[Cell] = [Styled(entry.id), Input(entry.text("provider")),
                             Input(entry.text("instance")), Input(entry.text("gpu"))]
        w.append(cells + [Input(entry.values.get(c), styles.precise_format(
            entry.values.get(c), money=c.endswith("_usd_per_hour"))) for c in CLOUD_NUMERIC]
                 + [Input(entry.text("price_date")), Styled(entry.source, styles.WRAP_SMALL),
                    Styled(entry.text("notes"), styles.WRAP_SMALL)])
    last = max(w.row, CATALOG_FIRST_ROW)
    for i, col in enumerate(CLOUD_COLUMNS, start=1):
        if col in ("source", "notes", "price_date", "provider", "instance"):
            continue
        name(cloud_name(col), catalog_column_range(col, CLOUDS, get_column_letter(i),
                                                   CATALOG_FIRST_ROW, last))
    styles.protect(w.ws)


def _positions(plan: Plan) -> dict[str, dict[str, int]]:
    out = lookup_positions(plan)
    out["workload_row"] = {k: i for i, k in enumerate(plan.workloads.entries, start=1)}
    out["server_row"] = {k: i for i, k in enumerate(plan.servers.entries, start=1)}
    out["cloud_row"] = {k: i for i, k in enumerate(plan.clouds.entries, start=1)}
    return out


@cache
def _templates() -> dict[str, str | None]:
    """Each Fleet column's formula with ROW_TOKEN for its row (rows differ in nothing else):
    rendered once, not once a row."""
    r = FleetRowRenderer(ROW_TOKEN)
    return {name: column_formula(name, r) for name in FLEET_COLUMNS}


def fleet_row_cells(env: FleetEnv, row: int, positions: dict[str, dict[str, int]]) -> list[Cell]:
    """The row's cells in FLEET_COLUMNS order."""
    c = env.candidate
    offer = env.offer.id if env.offer is not None else ""
    cells: list[Cell] = []
    number = str(row)
    for name, template in _templates().items():
        text = None if template is None else template.replace(ROW_TOKEN, number)
        if name == "workload":
            cells.append(Styled(env.workload.id))
        elif name == "server":
            cells.append(Styled(c.server))
        elif name in ("measured_speed_ratio", "measured_ttft_ratio"):
            cells.append(Input(env.lookup("measured", name.removeprefix("measured_")), "0.00"))
        elif name == "cloud_offer":
            cells.append(Input(offer))
        elif text is None:  # weights, kv, tp, layout: the candidate's configuration
            cells.append(Input(getattr(c, name)))
        elif name in FLEET_VARS:
            cells.append(Formula(text, env.lookup("var", name), "#,##0"))
        elif name == "model":
            cells.append(Formula(text, env.workload.text("model")))
        elif name == "gpu":
            cells.append(Formula(text, c.gpu))
        elif name in FLEET_LOOKUPS:
            column = FLEET_LOOKUPS[name][0]
            key = getattr(env.scenario, column) if hasattr(env.scenario, column) else (
                env.workload.id if column == "workload" else c.server)
            cells.append(Formula(text, positions[name][key], "0"))
        elif name == "cloud_row":
            cells.append(Formula(text, positions["cloud_row"].get(offer, 0), "0"))
        else:
            cells.append(Formula(text, env.value(name.removesuffix(SUMMARY_SUFFIX)),
                                 quantity_format(name)))
    return cells


FLEET_HEADERS = {
    "workload": "Workload [id]", "server": "Server [id]", **CONFIG_HEADERS,
    **{k: LOOKUP_HEADERS.get(k, k.replace("_row", "s row [#]").capitalize())
       for k in FLEET_LOOKUPS},
    "measured_speed_ratio": "Measured speed error (planner ÷ published) [ratio]",
    "measured_ttft_ratio": "Measured first-token error (published ÷ planner) [ratio]",
    "cloud_offer": "Cloud offer rented instead [id]", "cloud_row": "Cloud offers row [#]",
    "layout": "Serving layout [tp, tp+ep, dp-attention or disaggregated]",
}
FLEET_WIDTHS = {"workload": 26, "server": 18, "model": 16, "gpu": 12, "weights": 10, "kv": 10,
                "tp": 8, "layout": 13, "context": 10, "batch": 12, "prompt": 10, "output": 12,
                **{n + s: width for n, width in (("failing_target", 10), ("choice_key", 17),
                                                 ("verdict", 21)) for s in ("", SUMMARY_SUFFIX)},
                **dict.fromkeys(FLEET_LOOKUPS, 9.0), **dict.fromkeys(FLEET_INPUTS, 14.0)}
# Where a candidate cannot hold one sequence, its costs are not shown (a conditional number
# format says so instead): they would price a fleet that cannot serve the workload.
COST_COLUMNS = [name for name in FLEET_COLUMNS
                if (q := QUANTITY_BY_NAME.get(name.removesuffix(SUMMARY_SUFFIX))) is not None
                and q.display == "usd" and q.name != "choice_key"
                and q.name not in [x.name for x in ROW_QUANTITIES]]
NOT_FITTING_FORMAT = NumberFormat(numFmtId=400, formatCode='"does not fit"')


@dataclass
class FleetBlock:
    """Where one workload's candidate rows sit on the Fleet sheet."""

    first: int
    last: int

    def range(self, column: str) -> str:
        return absolute_range(FLEET, FLEET_COL[column], self.first, self.last)

    def index_range(self, column: str) -> str:
        """The block's column as INDEX reads it (`table_range`): a block of one row also covers
        the row below it, which the position, picked within the block, never reaches."""
        return table_range(FLEET, FLEET_COL[column], self.first, self.last)


def write_fleet(w: SheetWriter, plan: Plan) -> dict[str, FleetBlock]:
    w.widths([FLEET_WIDTHS.get(name, 16.0) for name in FLEET_COLUMNS])
    styles.print_setup(w.ws, title_rows="1:1")  # fitted to the width of what it prints
    w.ws.print_title_cols = FLEET_PRINT_TITLE_COLUMNS
    w.ws.freeze_panes = "C2"
    w.append([Styled(FLEET_HEADERS.get(name) or quantity_header(name), styles.HEADER)
              for name in FLEET_COLUMNS])
    positions = _positions(plan)
    blocks = {}
    for sized in plan.sized:
        first = w.row + 1
        for env in sized.rows:
            w.append(fleet_row_cells(env, w.row + 1, positions))
        blocks[sized.workload.id] = FleetBlock(first, w.row)
    last = max(w.row, 2)
    w.ws.auto_filter.ref = f"A1:{FLEET_COL[FLEET_COLUMNS[-1]]}{last}"
    fits = FLEET_COL["fits_workload"]
    w.ws.conditional_formatting.add(
        " ".join(f"{FLEET_COL[c]}2:{FLEET_COL[c]}{last}" for c in COST_COLUMNS),
        Rule(type="expression", formula=[f"NOT(${fits}2)"],
             dxf=DifferentialStyle(numFmt=NOT_FITTING_FORMAT, font=Font(color="9C0006"))))
    bad = styles.BAD_FILL
    for meets in ("meets_targets", "meets_targets" + SUMMARY_SUFFIX):
        w.ws.conditional_formatting.add(
            f"{FLEET_COL[meets]}2:{FLEET_COL[meets]}{last}",
            FormulaRule(formula=[f"NOT(${FLEET_COL[meets]}2)"], font=Font(color="9C0006"),
                        fill=PatternFill("solid", fgColor=bad, bgColor=bad)))
    # Not protected, like the Grid, so that it can be sorted and filtered in Excel.
    return blocks


def fleet_print_area(last_row: int) -> str:
    """What a finance export prints of the Fleet: each candidate's summary, beside its
    workload, server and configuration (the print title columns)."""
    first = FLEET_COL[FLEET_SUMMARY[0] + SUMMARY_SUFFIX]
    return f"{first}1:{FLEET_COL[FLEET_SUMMARY[-1] + SUMMARY_SUFFIX]}{max(last_row, 2)}"


class PickedRowRenderer(FleetRowRenderer):
    """The Fleet row a Budget cell picks: every leaf read with INDEX over the workload's block
    at the picked position, so formulas follow the choice when it changes."""

    def __init__(self, block: FleetBlock, pick: str) -> None:
        super().__init__(0)
        self.block = block
        self.pick = pick  # the Budget cell holding the position, e.g. 'Budget'!$B$5

    def col(self, name: str) -> str:
        return f"INDEX({self.block.index_range(name)},{self.pick})"
