"""The fleet and budget sheets: Workloads and Servers (inputs), Fleet (one row per workload ×
candidate, every quantity a formula) and Budget (per workload the lowest-TCO candidate meeting
every target, chosen by a formula, with its bill of quantities and the named totals)."""

from __future__ import annotations

from dataclasses import dataclass

from openpyxl.chart import BarChart, Reference
from openpyxl.utils import get_column_letter

from planner.inputs.entries import Entry
from planner.inputs.fields import CLOUD_FIELDS, SERVER_FIELDS, WORKLOAD_FIELDS
from planner.inputs.scenario import SCENARIO_FIELDS
from planner.model.fleet import FLEET_QUANTITIES, FLEET_VARS
from planner.model.quantities import QUANTITY_BY_NAME, ROW_QUANTITIES
from planner.outputs.workbook import styles
from planner.outputs.workbook.catalog_sheets import Namer
from planner.outputs.workbook.cells import Cell, Formula, Input, SheetWriter, Styled
from planner.outputs.workbook.chart_cache import cache_chart
from planner.outputs.workbook.grid_sheet import CONFIG_HEADERS, LOOKUP_HEADERS, lookup_positions
from planner.outputs.workbook.layout import (
    BUDGET,
    CATALOG_FIRST_ROW,
    CLOUDS,
    FLEET,
    LOOKUPS,
    SERVERS,
    WORKLOADS,
    GridRowRenderer,
    absolute_cell,
    absolute_range,
    catalog_column_range,
    table_range,
)
from planner.plan.plan import Plan
from planner.plan.sizing import FleetEnv, bought

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
}

# Fleet columns: workload and server, the configuration, lookups, row and fleet quantities.
FLEET_LOOKUPS = {**LOOKUPS, "workload_row": ("workload", "workload_id"),
                 "server_row": ("server", "server_id")}
# Inputs of a fleet row that no catalog holds: the measured speed error for its GPU, engine
# and model class (catalogs/measured-accuracy.yaml), editable like any input.
FLEET_INPUTS = ("measured_speed_ratio", "cloud_offer", "cloud_row", "layout")
FLEET_COLUMNS = (["workload", "server", *SCENARIO_FIELDS, *FLEET_LOOKUPS, *FLEET_INPUTS]
                 + [q.name for q in ROW_QUANTITIES] + [q.name for q in FLEET_QUANTITIES])
FLEET_COL = {n: get_column_letter(i) for i, n in enumerate(FLEET_COLUMNS, start=1)}
FLEET_FIRST_ROW = 2


def workload_name(field: str) -> str:
    return f"workload_{field}"


def server_name(field: str) -> str:
    return f"server_{field}"


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


def _float(value: object) -> float:
    return float(value) if isinstance(value, int | float) else 0.0


def _format(name: str) -> str:
    q = QUANTITY_BY_NAME[name]
    return styles.number_format(q.display, q.kind, q.unit)


def _header(name: str) -> str:
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
        return Input(value, '"$"#,##0')
    return Input(value, "#,##0.####" if isinstance(value, int | float) and not isinstance(
        value, bool) else "General")


def write_workloads(w: SheetWriter, plan: Plan, name: Namer) -> None:
    w.widths([24, 40, 16] + [13] * len(WORKLOAD_NUMERIC) + [14, 14, 30, 60, 60])
    styles.print_setup(w.ws, title_rows="1:1")
    w.ws.freeze_panes = "B2"
    w.append([Styled(f"{c} [{UNITS[c]}]" if c in UNITS else c, styles.HEADER)
              for c in WORKLOAD_COLUMNS])
    for entry in plan.workloads.entries.values():
        head: list[Cell] = [Styled(entry.id), Styled(entry.name)]
        w.append(head + [_entry_cell(entry, c) for c in WORKLOAD_COLUMNS[2:-2]]
                 + [Styled(entry.source), Styled(entry.text("notes"))])
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
                 + [Input(entry.text("price_date")), Styled(entry.source),
                    Styled(entry.text("notes"))])
    for i, col in enumerate(SERVER_COLUMNS, start=1):
        if col in ("name", "source", "notes", "price_date"):
            continue
        name(server_name(col), catalog_column_range(col, SERVERS, get_column_letter(i),
                                                    CATALOG_FIRST_ROW, w.row))
    styles.protect(w.ws)


CLOUD_NUMERIC = [k for k, s in CLOUD_FIELDS.items() if s.kind in ("int", "number")]
CLOUD_COLUMNS = ["id", "provider", "instance", "gpu", *CLOUD_NUMERIC, "price_date", "source",
                 "notes"]
CLOUD_UNITS = {"gpus_per_instance": "GPUs", "on_demand_usd_per_hour": "USD/instance-hour",
               "reserved_1y_usd_per_hour": "USD/instance-hour",
               "reserved_3y_usd_per_hour": "USD/instance-hour"}


def cloud_name(field: str) -> str:
    return f"cloud_{field}"


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
        w.append(cells + [Input(entry.values.get(c), "#,##0.####") for c in CLOUD_NUMERIC]
                 + [Input(entry.text("price_date")), Styled(entry.source),
                    Styled(entry.text("notes"))])
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


def fleet_row_cells(env: FleetEnv, row: int, positions: dict[str, dict[str, int]]) -> list[Cell]:
    r = FleetRowRenderer(row)
    c = env.candidate
    cells: list[Cell] = [Styled(env.workload.id), Styled(c.server)]
    for field in SCENARIO_FIELDS:
        if field in FLEET_VARS:
            cells.append(Formula(FLEET_VARS[field].formula(r), env.lookup("var", field), "#,##0"))
        elif field == "model":
            cells.append(Formula(f"=INDEX(workload_model,{r.col('workload_row')})",
                                 env.workload.text("model")))
        elif field == "gpu":
            cells.append(Formula(f"=INDEX(server_gpu,{r.col('server_row')})", c.gpu))
        else:
            cells.append(Input(getattr(c, field)))
    for lookup, (column, _) in FLEET_LOOKUPS.items():
        key = getattr(env.scenario, column) if hasattr(env.scenario, column) else (
            env.workload.id if column == "workload" else c.server)
        cells.append(Formula("=" + r.lookup(lookup), positions[lookup][key], "0"))
    cells.append(Input(env.lookup("measured", "speed_ratio"), "0.00"))
    offer = env.offer.id if env.offer is not None else ""
    cells.append(Input(offer))
    offer_cell = r.col("cloud_offer")
    cells.append(Formula(f'=IF({offer_cell}="",0,MATCH({offer_cell},cloud_id,0))',
                         positions["cloud_row"].get(offer, 0), "0"))
    cells.append(Input(c.layout))
    for q in [*ROW_QUANTITIES, *FLEET_QUANTITIES]:
        cells.append(Formula(q.expr.formula(r), env.value(q.name), _format(q.name)))
    return cells


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
    w.widths([24, 18, 16, 12, 10, 10, 8, 10, 12, 10, 12] + [9.0] * len(FLEET_LOOKUPS)
             + [14.0] * len(FLEET_INPUTS)
             + [16.0] * (len(ROW_QUANTITIES) + len(FLEET_QUANTITIES)))
    styles.print_setup(w.ws, title_rows="1:1", fit_width=False)
    w.ws.print_title_cols = "A:B"
    w.ws.freeze_panes = "C2"
    head = ["Workload [id]", "Server [id]", *(CONFIG_HEADERS[c] for c in SCENARIO_FIELDS),
            *(LOOKUP_HEADERS.get(k, k.replace("_row", "s row [#]").capitalize())
              for k in FLEET_LOOKUPS),
            "Measured speed error (planner ÷ published) [ratio]",
            "Cloud offer rented instead [id]", "Cloud offers row [#]",
            "Layout (tp, tp+ep, dp-attention, disaggregated)",
            *(_header(q.name) for q in [*ROW_QUANTITIES, *FLEET_QUANTITIES])]
    w.append([Styled(h, styles.HEADER) for h in head])
    positions = _positions(plan)
    blocks = {}
    for sized in plan.sized:
        first = w.row + 1
        for env in sized.rows:
            w.append(fleet_row_cells(env, w.row + 1, positions))
        blocks[sized.workload.id] = FleetBlock(first, w.row)
    w.ws.auto_filter.ref = f"A1:{FLEET_COL[FLEET_COLUMNS[-1]]}{max(w.row, 2)}"
    # Not protected, like the Grid, so that it can be sorted and filtered in Excel.
    return blocks


BUDGET_FIELDS = [  # (fleet column, header, number format)
    ("server", "Server [id]", "General"), ("gpu", "GPU [id]", "General"),
    ("weights", "Weights [format]", "General"), ("kv", "KV cache [format]", "General"),
    ("tp", "TP [GPUs]", "0"), ("layout", "Layout", "General"),
    ("prefill_gpus", "Prefill GPUs (disaggregated) [GPUs]", "#,##0"),
    ("decode_gpus", "Decode GPUs (disaggregated) [GPUs]", "#,##0"),
    ("batch_chosen", "Batch per replica [sequences]", "#,##0"),
    ("replicas", "Replicas incl. spares [replicas]", "#,##0"),
    ("gpus", "GPUs [GPUs]", "#,##0"), ("servers", "Servers [servers]", "#,##0"),
    ("racks", "Racks [racks]", "#,##0"), ("it_power_w", "IT power [W]", "#,##0"),
    ("facility_power_w", "Facility power [W]", "#,##0"),
    ("capex_usd", "Capex [USD]", '"$"#,##0'),
    ("opex_usd_per_year", "Opex per year [USD]", '"$"#,##0'),
    ("tco_usd", "TCO [USD]", '"$"#,##0'),
    ("usd_per_million_output_tokens", "Owned per M output tokens [USD]", '"$"#,##0.00'),
    ("usd_per_million_input_tokens", "Owned per M input tokens [USD]", '"$"#,##0.00'),
    ("cloud_usd_per_year", "Rented on demand per year [USD]", '"$"#,##0'),
    ("cloud_reserved_usd_per_year", "Rented reserved per year [USD]", '"$"#,##0'),
    ("itl_seconds", "ITL [s]", "0.0000"),
    ("layout_ttft_percentile_seconds", "TTFT [s]", "0.000"),
    ("meets_targets", "Meets every target [TRUE/FALSE]", "General"),
    ("failing_target", "Target missed", "General"),
    ("bought", "Bought: counted in the totals [1/0]", "0"),
]
BUDGET_COLUMNS = [c for c, _, _ in BUDGET_FIELDS]
TOTALS = {"gpus": "total_gpus", "servers": "total_servers", "racks": "total_racks",
          "it_power_w": "total_it_power_w", "capex_usd": "total_capex_usd",
          "opex_usd_per_year": "total_opex_usd_per_year", "tco_usd": "total_tco_usd"}


def write_budget(w: SheetWriter, plan: Plan, blocks: dict[str, FleetBlock], name: Namer
                 ) -> dict[str, int]:
    """The Budget sheet; returns each workload's row (its column B picks the Fleet row)."""
    w.widths([28, 12] + [16.0] * len(BUDGET_FIELDS))
    styles.print_setup(w.ws)
    w.append([Styled("Budget: what to buy for each workload, and what it costs", styles.TITLE)])
    w.append([Styled("Each workload's choice is a formula: the lowest TCO among its Fleet rows "
                     "that meet every target. Edit a price, a rate or an assumption and the "
                     "choice follows on recalculation.", styles.NOTE)])
    w.append([])
    header_row = w.row + 1
    w.append([Styled(h, styles.HEADER) for h in
              ["Workload [id]", "Fleet row [#]", *(h for _, h, _ in BUDGET_FIELDS)]])
    first = w.row + 1
    picks: dict[str, int] = {}
    for sized in plan.sized:
        block = blocks[sized.workload.id]
        env = sized.choice
        assert env is not None
        row = w.row + 1
        key = block.range("choice_key")
        pick = Formula(f"=MATCH(MIN({key}),{key},0)", sized.rows.index(env) + 1, "0")
        picks[sized.workload.id] = row
        cells: list[Cell] = [Styled(sized.workload.id), pick]
        for column, _, fmt in BUDGET_FIELDS:
            if column == "bought":  # a workload no candidate meets is not bought
                meets = get_column_letter(3 + BUDGET_COLUMNS.index("meets_targets"))
                cells.append(Formula(f"=IF({meets}{row},1,0)", int(sized.met), fmt))
                continue
            cached = (env.value(column) if column in QUANTITY_BY_NAME else
                      (env.candidate.server if column == "server" else
                       env.candidate.layout if column == "layout" else
                       getattr(env.scenario, column)))
            cells.append(Formula(f"=INDEX({block.index_range(column)},$B{row})", cached,
                                 fmt))
        w.append(cells)
    last = w.row
    w.append([])
    w.append([Styled("Totals of the workloads bought (each workload's fleet in racks of its "
                     "own)", styles.TITLE)])
    bought_col = get_column_letter(3 + BUDGET_COLUMNS.index("bought"))
    for column, total in TOTALS.items():
        i = BUDGET_COLUMNS.index(column)
        letter = get_column_letter(3 + i)
        value = sum(_float(e.value(column)) for e in bought(plan.sized))
        row = w.row + 1
        fmt = BUDGET_FIELDS[i][2]
        w.append([Styled(f"{total}"), Formula(
            f"=SUMPRODUCT({bought_col}{first}:{bought_col}{last},{letter}{first}:{letter}{last})",
            value, fmt)])
        name(total, absolute_cell(BUDGET, "B", row))
    if plan.sized:
        _cost_chart(w, plan, header_row, first, last)
    styles.protect(w.ws)
    return picks


def _cost_chart(w: SheetWriter, plan: Plan, header_row: int, first: int, last: int) -> None:
    chart = BarChart()
    chart.type = "bar"
    chart.grouping = "stacked"
    chart.overlap = 100
    chart.title = "Capex and opex per year by workload [USD]"
    cols = [c for c, _, _ in BUDGET_FIELDS]
    capex = 3 + cols.index("capex_usd")
    opex = 3 + cols.index("opex_usd_per_year")
    for col in (capex, opex):
        chart.add_data(Reference(w.ws, min_col=col, min_row=header_row, max_row=last),
                       titles_from_data=True)
    chart.set_categories(Reference(w.ws, min_col=1, min_row=first, max_row=last))
    chart.height, chart.width = 9, 22
    labels = [s.workload.id for s in plan.sized]
    series = [[_float(s.choice.value(k)) for s in plan.sized if s.choice]
              for k in ("capex_usd", "opex_usd_per_year")]
    cache_chart(chart, ["Capex [USD]", "Opex per year [USD]"], labels, series)
    w.ws.add_chart(chart, f"A{w.row + 3}")



class PickedRowRenderer(FleetRowRenderer):
    """The Fleet row a Budget cell picks: every leaf read with INDEX over the workload's block
    at the picked position, so formulas follow the choice when it changes."""

    def __init__(self, block: FleetBlock, pick: str) -> None:
        super().__init__(0)
        self.block = block
        self.pick = pick  # the Budget cell holding the position, e.g. 'Budget'!$B$5

    def col(self, name: str) -> str:
        return f"INDEX({self.block.index_range(name)},{self.pick})"
