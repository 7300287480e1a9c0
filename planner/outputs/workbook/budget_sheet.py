"""The Budget sheet: the order list and the decision. Per workload, the lowest-TCO candidate that
meets every target (a MATCH over its Fleet block), then tables that read the chosen Fleet row:
the order list (server model, quantity, unit price, price date, source, extended price,
network, capex), GPUs and resilience, running cost per year, and buy or rent; then the totals of
the workloads bought, the racks packed across the fleet and the fleet's verdict.

Each number is a live formula: a value of the chosen Fleet row (INDEX at the pick), a catalog
field of the chosen server (INDEX at its Servers row), or a quantity's definition rendered over
the Budget's own cells (the extended price is the definition of server_capex_usd over the
quantity and unit price cells). Editing a price on the Servers or Clouds sheet changes the order
list, the choice and the verdict on recalculation.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from openpyxl.chart import BarChart, Reference
from openpyxl.utils import get_column_letter, quote_sheetname

from planner.model.expr import Value
from planner.model.fleet import FLEET_BY_NAME
from planner.outputs.workbook import styles
from planner.outputs.workbook.cache import Deferred
from planner.outputs.workbook.catalog_sheets import Namer
from planner.outputs.workbook.cells import Cell, Formula, SheetWriter, Styled
from planner.outputs.workbook.chart_cache import cache_chart
from planner.outputs.workbook.fleet_sheets import FleetBlock, PickedRowRenderer, server_name
from planner.outputs.workbook.layout import BUDGET, absolute_cell
from planner.plan.plan import Plan
from planner.plan.sizing import FleetEnv, bought, fleet_totals

CHECKS_ROW = 3  # the row showing checks_ok: above every range the Checks sheet sums
WRAP_WIDTH = 44


@dataclass(frozen=True)
class Column:
    key: str  # the name `planner diff` gives the cell: budget.<workload>.<key>
    header: str
    number_format: str = "General"
    width: float = 14.0


@dataclass(frozen=True)
class Table:
    key: str
    title: str
    columns: tuple[Column, ...]


USD, USD_CENTS, KW, YES_NO = styles.USD, styles.USD_CENTS, styles.KW, styles.YES_NO
WORKLOAD = Column("workload", "Workload [id]", width=44)
# The tables share the sheet's columns, so a column's width suits every table: the wide text
# (server model, price source) sits where the other tables hold short text.
TABLES = (
    Table("choice", "1. The choice: each workload's lowest-TCO candidate that meets every target", (
        WORKLOAD, Column("fleet_row", "Fleet row in its block (helper) [#]", "0", 21),
        Column("server", "Server [id]", width=30), Column("gpu", "GPU [id]"),
        Column("weights", "Weights [format]"), Column("kv", "KV cache [format]"),
        Column("tp", "TP [GPUs]", "0"),
        Column("layout", "Serving layout [tp, tp+ep, dp-attention or disaggregated]", width=15),
        Column("batch", "Batch per replica [sequences]", "#,##0"),
        Column("replicas", "Replicas incl. spares [replicas]", "#,##0", 21),
        Column("itl", "ITL at the latency percentile [s]", "0.0000"),
        Column("target_missed", "Target missed [memory, itl, ttft or none]", width=44),
        Column("ttft", "TTFT at the latency percentile [s]", "0.000", 13),
        Column("meets", "Meets every target [Yes/No]", width=12),
        Column("bought", "In the totals: meets every target [Yes/No]", YES_NO, 13))),
    Table("order", "2. Order list: the servers to buy for each workload", (
        WORKLOAD, Column("server", "Server [id]"),
        Column("servers_row", "Servers sheet row (helper) [#]", "0"),
        Column("server_model", "Server model", width=30),
        Column("quantity", "Quantity [servers]", "#,##0"),
        Column("unit_price", "Unit price [USD]", USD),
        Column("price_date", "Price date [YYYY-MM]"),
        Column("extended_price", "Servers: quantity × unit price [USD]", USD, 15),
        Column("network", "Network: quantity × network per server [USD]", USD, 15),
        Column("capex", "Capex: servers + network [USD]", USD, 15),
        Column("source", "Price source (as the Servers sheet gives it)", width=44))),
    Table("gpus", "3. GPUs bought, resilience and power", (
        WORKLOAD, Column("gpus_per_server", "GPUs per server [GPUs]", "#,##0"),
        Column("gpu", "GPU [id]"),
        Column("gpus_bought", "GPUs bought [GPUs]", "#,##0"),
        Column("gpus_running", "GPUs running the replicas [GPUs]", "#,##0"),
        Column("prefill_gpus", "Of which prefill, disaggregated [GPUs]", "#,##0"),
        Column("decode_gpus", "Of which decode, spares included, disaggregated [GPUs]", "#,##0",
               15),
        Column("idle_gpus", "GPUs bought that no replica uses [GPUs]", "#,##0"),
        Column("extra_replicas", "Extra replicas in GPUs already bought [replicas]", "#,##0",
               15),
        Column("racks_alone", "Racks, this workload alone [racks]", "#,##0", 15),
        Column("rack_share", "Share of racks, packed with the fleet [racks]", "0.00"),
        Column("it_power_kw", "IT power, maximum [kW]", KW),
        Column("survives", "Carries the peak with one server down [Yes/No]"),
        Column("facility_power_kw", "Facility power: IT × PUE [kW]", KW))),
    Table("running", "4. Running cost per year and over the amortisation period", (
        WORKLOAD, Column("energy", "Energy [USD per year]", USD),
        Column("colocation", "Colocation [USD per year]", USD),
        Column("support", "Software and support [USD per year]", USD),
        Column("opex", "Opex: energy + colocation + support [USD per year]", USD),
        Column("tco", "TCO: capex + discounted opex [USD]", USD, 15),
        Column("usd_per_m_output", "Owned cost per million output tokens [USD]", USD_CENTS,
               15),
        Column("usd_per_m_input", "Owned cost per million input tokens [USD]", USD_CENTS,
               15))),
    Table("decision", "5. Buy or rent", (
        WORKLOAD, Column("annual_cost", "Owned: capex as an annuity + opex [USD per year]", USD),
        Column("cloud_offer", "Cloud offer rented instead [id]", width=30),
        Column("rent_on_demand", "Rented on demand [USD per year]", USD),
        Column("rent_1y", "Rented 1-year reserved [USD per year]", USD),
        Column("rent_3y", "Rented 3-year reserved [USD per year]", USD),
        Column("cheapest_rent", "Cheapest rent [USD per year]", USD, 15),
        Column("break_even", "Break-even utilisation against on demand [%]", styles.PERCENT,
               15),
        Column("verdict", "Verdict", width=21),
        Column("saving", "Saving of the verdict [USD per year]", USD))),
)
TABLE_BY_KEY = {t.key: t for t in TABLES}
WIDTHS = [max((t.columns[i].width for t in TABLES if i < len(t.columns)), default=14.0)
          for i in range(max(len(t.columns) for t in TABLES))]

# Cells read from the chosen Fleet row: table key, column key -> fleet quantity.
PICKED = {
    ("choice", "server"): "server", ("choice", "gpu"): "gpu", ("choice", "weights"): "weights",
    ("choice", "kv"): "kv", ("choice", "tp"): "tp", ("choice", "layout"): "layout",
    ("choice", "batch"): "batch_chosen", ("choice", "replicas"): "replicas",
    ("choice", "itl"): "layout_itl_percentile_seconds",
    ("choice", "ttft"): "layout_ttft_percentile_seconds",
    ("choice", "target_missed"): "failing_target",
    ("order", "quantity"): "servers",
    ("gpus", "gpus_bought"): "gpus_bought", ("gpus", "gpus_running"): "gpus",
    ("gpus", "prefill_gpus"): "prefill_gpus", ("gpus", "decode_gpus"): "decode_gpus",
    ("gpus", "idle_gpus"): "idle_gpus", ("gpus", "extra_replicas"): "extra_replicas",
    ("gpus", "racks_alone"): "racks", ("gpus", "rack_share"): "rack_share",
    ("running", "energy"): "energy_usd_per_year",
    ("running", "colocation"): "colocation_usd_per_year",
    ("running", "support"): "support_usd_per_year", ("running", "tco"): "tco_usd",
    ("running", "usd_per_m_output"): "usd_per_million_output_tokens",
    ("running", "usd_per_m_input"): "usd_per_million_input_tokens",
    ("decision", "annual_cost"): "annual_cost_usd", ("decision", "cloud_offer"): "cloud_offer",
    ("decision", "rent_on_demand"): "cloud_usd_per_year",
    ("decision", "rent_1y"): "cloud_reserved_usd_per_year",
    ("decision", "rent_3y"): "cloud_reserved_3y_usd_per_year",
    ("decision", "cheapest_rent"): "cheapest_rent_usd_per_year",
    ("decision", "break_even"): "break_even_utilisation", ("decision", "verdict"): "verdict",
    ("decision", "saving"): "verdict_saving_usd_per_year",
}
# Picked booleans shown as Yes/No text; picked watts shown in kW.
YES_NO_TEXT = {("choice", "meets"): "meets_targets", ("gpus", "survives"): "survives_server_loss"}
KILOWATTS = {("gpus", "it_power_kw"): "it_power_w",
             ("gpus", "facility_power_kw"): "facility_power_w"}


@dataclass(frozen=True)
class Total:
    name: str  # the workbook name
    label: str
    number_format: str
    table: str = ""  # the column it sums (SUMPRODUCT with the Bought flag), if any
    column: str = ""
    quantity: str = ""  # the fleet quantity rendered over the totals, if any


TOTALS = (
    Total("total_gpus", "GPUs bought [GPUs]", "#,##0", "gpus", "gpus_bought"),
    Total("total_gpus_running", "GPUs running the replicas [GPUs]", "#,##0", "gpus",
          "gpus_running"),
    Total("total_idle_gpus", "GPUs bought that no replica uses [GPUs]", "#,##0", "gpus",
          "idle_gpus"),
    Total("total_servers", "Servers [servers]", "#,##0", "order", "quantity"),
    Total("total_racks", "Racks, packed across the fleet: the shares added, rounded up once "
          "[racks]", "#,##0"),
    Total("total_racks_alone", "Racks if each workload had racks of its own [racks]", "#,##0",
          "gpus", "racks_alone"),
    Total("total_it_power_kw", "IT power, maximum [kW]", KW, "gpus", "it_power_kw"),
    Total("total_facility_power_kw", "Facility power [kW]", KW, "gpus", "facility_power_kw"),
    Total("total_server_capex_usd", "Servers [USD]", USD, "order", "extended_price"),
    Total("total_network_capex_usd", "Network [USD]", USD, "order", "network"),
    Total("total_capex_usd", "Capex [USD]", USD, "order", "capex"),
    Total("total_energy_usd_per_year", "Energy [USD per year]", USD, "running", "energy"),
    Total("total_colocation_usd_per_year", "Colocation [USD per year]", USD, "running",
          "colocation"),
    Total("total_support_usd_per_year", "Software and support [USD per year]", USD, "running",
          "support"),
    Total("total_opex_usd_per_year", "Opex [USD per year]", USD, "running", "opex"),
    Total("total_tco_usd", "TCO over the amortisation period [USD]", USD, "running", "tco"),
    Total("total_annual_cost_usd", "Owned: capex as an annuity + opex [USD per year]", USD,
          "decision", "annual_cost"),
    Total("total_cloud_usd_per_year", "Rented on demand [USD per year]", USD, "decision",
          "rent_on_demand"),
    Total("total_cloud_reserved_usd_per_year", "Rented 1-year reserved [USD per year]", USD,
          "decision", "rent_1y"),
    Total("total_cloud_reserved_3y_usd_per_year", "Rented 3-year reserved [USD per year]", USD,
          "decision", "rent_3y"),
    Total("total_cheapest_rent_usd_per_year", "Cheapest rent for the whole fleet [USD per "
          "year]", USD, quantity="cheapest_rent_usd_per_year"),
    Total("fleet_verdict", "Fleet verdict: buy, or the cheapest rental term", "General",
          quantity="verdict"),
    Total("fleet_verdict_saving_usd_per_year", "Saving of the fleet verdict [USD per year]", USD,
          quantity="verdict_saving_usd_per_year"),
)
# Fleet quantities a rendered total reads, and the total that stands for each.
TOTAL_OF_QUANTITY = {"annual_cost_usd": "total_annual_cost_usd",
                     "cloud_usd_per_year": "total_cloud_usd_per_year",
                     "cloud_reserved_usd_per_year": "total_cloud_reserved_usd_per_year",
                     "cloud_reserved_3y_usd_per_year": "total_cloud_reserved_3y_usd_per_year",
                     "cheapest_rent_usd_per_year": "total_cheapest_rent_usd_per_year"}
DECISION_LINES = ("fleet_verdict", "fleet_verdict_saving_usd_per_year", "total_annual_cost_usd",
                  "total_cheapest_rent_usd_per_year", "total_capex_usd",
                  "total_opex_usd_per_year", "total_gpus", "total_servers", "total_racks")


@dataclass
class BudgetLayout:
    """Where everything sits on the Budget sheet, from the number of workloads alone (so that
    `planner diff` can name a cell without writing the sheet)."""

    workloads: list[str]
    rows: dict[tuple[str, str], int] = field(default_factory=dict)  # (table, workload) -> row
    header_rows: dict[str, int] = field(default_factory=dict)
    total_rows: dict[str, int] = field(default_factory=dict)
    decision_rows: dict[str, int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        n = len(self.workloads)
        row = CHECKS_ROW + 2  # the decision block's title
        for i, name in enumerate(DECISION_LINES):
            self.decision_rows[name] = row + 1 + i
        row += len(DECISION_LINES) + 2
        for table in TABLES:  # title, header, one row per workload, a blank row
            self.header_rows[table.key] = row + 1
            for i, wid in enumerate(self.workloads):
                self.rows[(table.key, wid)] = row + 2 + i
            row += n + 3
        self.totals_title = row
        for i, total in enumerate(TOTALS):
            self.total_rows[total.name] = row + 2 + i
        self.last_row = row + 1 + len(TOTALS)

    @property
    def picks(self) -> dict[str, int]:
        """Each workload's row whose column B holds its position in its Fleet block."""
        return {wid: self.rows[("choice", wid)] for wid in self.workloads}

    def first(self, table: str) -> int:
        return self.header_rows[table] + 1

    def last(self, table: str) -> int:
        return self.header_rows[table] + max(len(self.workloads), 1)

    def column(self, table: str, key: str) -> str:
        keys = [c.key for c in TABLE_BY_KEY[table].columns]
        return get_column_letter(keys.index(key) + 1)

    def cell(self, table: str, key: str, workload: str, sheet: bool = False) -> str:
        ref = f"${self.column(table, key)}${self.rows[(table, workload)]}"
        return f"{quote_sheetname(BUDGET)}!{ref}" if sheet else ref

    def range(self, table: str, key: str, sheet: bool = False) -> str:
        letter = self.column(table, key)
        text = f"${letter}${self.first(table)}:${letter}${self.last(table)}"
        return f"{quote_sheetname(BUDGET)}!{text}" if sheet else text

    def cell_names(self) -> dict[tuple[int, int], str]:
        """(row, column) -> the name `planner diff` gives a Budget cell."""
        out: dict[tuple[int, int], str] = {}
        for (table, wid), row in self.rows.items():
            for i, col in enumerate(TABLE_BY_KEY[table].columns, start=1):
                if col.key != "workload":
                    out[(row, i)] = f"budget.{wid}.{table}.{col.key}"
        for name, row in self.total_rows.items():
            out[(row, 2)] = name
        for name, row in self.decision_rows.items():
            out[(row, 2)] = f"budget.decision.{name}"
        out[(CHECKS_ROW, 2)] = "budget.checks"
        return out


class BudgetRenderer(PickedRowRenderer):
    """A quantity's definition over a Budget row: a quantity or server field the Budget holds
    is its cell; any other quantity is the chosen Fleet row's (INDEX at the pick), any other
    server field the chosen server's (INDEX at its Servers row)."""

    def __init__(self, block: FleetBlock, pick: str, cells: dict[tuple[str, str], str]) -> None:
        super().__init__(block, pick)
        self.cells = cells

    def ref(self, kind: str, name: str) -> str:
        if (kind, name) in self.cells:
            return self.cells[(kind, name)]
        return super().ref(kind, name)


class TotalsRenderer:
    """A fleet quantity's definition over the totals: each quantity it reads is the named
    total of the workloads bought."""

    def ref(self, kind: str, name: str) -> str:
        if kind == "q" and name in TOTAL_OF_QUANTITY:
            return TOTAL_OF_QUANTITY[name]
        raise KeyError(f"{kind}:{name} has no fleet total")


def _float(value: Value) -> float:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else 0.0


def _yes_no(value: Value) -> str:
    return "Yes" if value is True else "No"


class _Row:
    """The cells of one workload's row of one table, with their formulas and values."""

    def __init__(self, layout: BudgetLayout, table: Table, env: FleetEnv, block: FleetBlock,
                 met: bool, server_row: int, position: int) -> None:
        self.layout, self.table, self.env, self.block = layout, table, env, block
        self.wid = env.workload.id
        self.met, self.server_row, self.position = met, server_row, position
        self.pick = layout.cell("choice", "fleet_row", self.wid)
        self.picked = PickedRowRenderer(block, self.pick)

    def here(self, key: str) -> str:
        return self.layout.cell(self.table.key, key, self.wid)

    def renderer(self, cells: dict[tuple[str, str], str]) -> BudgetRenderer:
        return BudgetRenderer(self.block, self.pick, cells)

    def rendered(self, quantity: str, cells: dict[tuple[str, str], str], fmt: str) -> Formula:
        expr = FLEET_BY_NAME[quantity].expr
        return Formula(expr.formula(self.renderer(cells)), self.env.value(quantity), fmt)

    def cells(self) -> list[Cell]:
        out: list[Cell] = []
        for col in self.table.columns:
            out.append(self.cell(col))
        return out

    def cell(self, col: Column) -> Cell:
        key, t, env = col.key, self.table.key, self.env
        c = env.candidate
        if key == "workload":
            return Styled(self.wid)
        if (t, key) in PICKED:
            name = PICKED[(t, key)]
            value: Value = (getattr(c, name) if name in ("server", "gpu", "weights", "kv", "tp",
                                                         "layout")
                            else env.offer.id if name == "cloud_offer" and env.offer
                            else "" if name == "cloud_offer" else env.value(name))
            return Formula("=" + self.picked.col(name), value, col.number_format)
        if (t, key) in YES_NO_TEXT:
            name = YES_NO_TEXT[(t, key)]
            return Formula(f'=IF({self.picked.col(name)},"Yes","No")', _yes_no(env.value(name)))
        if (t, key) in KILOWATTS:
            name = KILOWATTS[(t, key)]
            return Formula(f"={self.picked.col(name)}/1000", _float(env.value(name)) / 1000,
                           col.number_format)
        return getattr(self, f"_{t}_{key}")(col)

    # -- the choice ---------------------------------------------------------------------------
    def _choice_fleet_row(self, col: Column) -> Cell:
        key = self.block.range("choice_key")
        return Formula(f"=MATCH(MIN({key}),{key},0)", self.position, col.number_format)

    def _choice_bought(self, col: Column) -> Cell:
        return Formula(f"=IF({self.picked.col('meets_targets')},1,0)", int(self.met),
                       col.number_format)

    # -- the order list -----------------------------------------------------------------------
    def _server_field(self, field_name: str) -> str:
        return f"INDEX({server_name(field_name)},{self.here('servers_row')})"

    def _order_server(self, col: Column) -> Cell:
        return Formula(f"={self.layout.cell('choice', 'server', self.wid)}",
                       self.env.candidate.server)

    def _order_servers_row(self, col: Column) -> Cell:
        return Formula(f"=MATCH({self.here('server')},server_id,0)", self.server_row,
                       col.number_format)

    def _order_server_model(self, col: Column) -> Cell:
        return Formula(f"={self._server_field('name')}", self.env.server.name, "General",
                       styles.WRAP)

    def _order_unit_price(self, col: Column) -> Cell:
        return Formula(f"={self._server_field('price_usd')}", self.env.server.number("price_usd"),
                       col.number_format)

    def _order_price_date(self, col: Column) -> Cell:
        return Formula(f"={self._server_field('price_date')}",
                       self.env.server.text("price_date"))

    def _order_source(self, col: Column) -> Cell:
        return Formula(f"={self._server_field('source')}", self.env.server.source, "General",
                       styles.WRAP_SMALL)

    def _order_extended_price(self, col: Column) -> Cell:
        return self.rendered("server_capex_usd", {("q", "servers"): self.here("quantity"),
                                                  ("server", "price_usd"): self.here(
                                                      "unit_price")}, col.number_format)

    def _order_network(self, col: Column) -> Cell:
        return self.rendered("network_capex_usd", {
            ("q", "servers"): self.here("quantity"),
            ("server", "network_usd_per_server"): self._server_field("network_usd_per_server")},
            col.number_format)

    def _order_capex(self, col: Column) -> Cell:
        return self.rendered("capex_usd", {("q", "server_capex_usd"): self.here("extended_price"),
                                           ("q", "network_capex_usd"): self.here("network")},
                             col.number_format)

    # -- GPUs -----------------------------------------------------------------------------------
    def _gpus_gpu(self, col: Column) -> Cell:
        return Formula(f"={self.layout.cell('choice', 'gpu', self.wid)}", self.env.candidate.gpu)

    def _gpus_gpus_per_server(self, col: Column) -> Cell:
        row = self.layout.cell("order", "servers_row", self.wid)
        return Formula(f"=INDEX(server_gpus_per_server,{row})",
                       self.env.server.number("gpus_per_server"), col.number_format)

    # -- running cost ---------------------------------------------------------------------------
    def _running_opex(self, col: Column) -> Cell:
        return self.rendered("opex_usd_per_year", {
            ("q", "energy_usd_per_year"): self.here("energy"),
            ("q", "colocation_usd_per_year"): self.here("colocation"),
            ("q", "support_usd_per_year"): self.here("support")}, col.number_format)


def write_budget(w: SheetWriter, plan: Plan, blocks: dict[str, FleetBlock], name: Namer,
                 passed: Callable[[], bool] = lambda: True) -> BudgetLayout:
    """The Budget sheet; its layout says where each workload's pick and every total is."""
    layout = BudgetLayout([s.workload.id for s in plan.sized])
    w.widths(WIDTHS)
    styles.print_setup(w.ws)
    w.append([Styled("Budget: the order list and the decision", styles.TITLE)])
    w.append([Styled("Each workload's choice is a formula: the lowest TCO among its Fleet rows "
                     "that meet every target. Edit a server price (Servers), a cloud price "
                     "(Clouds), a rate or an assumption and the choice, the order list and the "
                     "verdict follow on recalculation. Totals count the workloads whose choice "
                     "meets every target.", styles.NOTE)])
    assert w.row + 1 == CHECKS_ROW
    w.append([Styled("Checks", styles.HEADER), Formula(
        '=IF(checks_ok,"All checks pass","FAIL: see the Checks sheet")',
        Deferred(lambda: "All checks pass" if passed() else "FAIL: see the Checks sheet"))])
    w.append([])
    totals = totals_of(plan)
    w.append([Styled("The decision for the workloads bought", styles.TITLE)])
    for line in DECISION_LINES:
        total = next(t for t in TOTALS if t.name == line)
        w.append([Styled(total.label, styles.WRAP),
                  Formula(f"={line}", totals[line], total.number_format)])
    w.append([])
    server_rows = {k: i for i, k in enumerate(plan.servers.entries, start=1)}
    for table in TABLES:
        w.append([Styled(table.title, styles.TITLE)])
        assert w.row + 1 == layout.header_rows[table.key]
        w.append([Styled(c.header, styles.HEADER) for c in table.columns])
        for sized in plan.sized:
            env = sized.choice
            assert env is not None
            row = _Row(layout, table, env, blocks[sized.workload.id], sized.met,
                       server_rows[env.candidate.server], sized.rows.index(env) + 1)
            assert w.row + 1 == layout.rows[(table.key, sized.workload.id)]
            w.append(row.cells())
        w.append([])
    assert w.row + 1 == layout.totals_title
    w.append([Styled("6. Fleet totals of the workloads bought (racks packed across the fleet)",
                     styles.TITLE)])
    w.append([Styled(h, styles.HEADER) for h in ("Total", "Value", "Workbook name")])
    for total in TOTALS:
        assert w.row + 1 == layout.total_rows[total.name]
        w.append([Styled(total.label, styles.WRAP),
                  Formula(_total_formula(layout, total), totals[total.name],
                          total.number_format), Styled(total.name)])
        name(total.name, absolute_cell(BUDGET, "B", w.row))
    name("budget_checks", absolute_cell(BUDGET, "B", CHECKS_ROW))
    if plan.sized:
        _cost_chart(w, plan, layout)
    styles.protect(w.ws)
    return layout


def _total_formula(layout: BudgetLayout, total: Total) -> str:
    bought = layout.range("choice", "bought")
    if total.name == "total_racks":  # rounded before rounding up: shares in thirds add to 1
        return f"=-INT(-ROUND(SUMPRODUCT({bought},{layout.range('gpus', 'rack_share')}),6))"
    if total.quantity:
        return FLEET_BY_NAME[total.quantity].expr.formula(TotalsRenderer())
    return f"=SUMPRODUCT({bought},{layout.range(total.table, total.column)})"


# Each total's value as Python computes it (planner.plan.sizing.fleet_totals).
FLEET_TOTAL_KEYS = {
    "total_gpus": "gpus_bought", "total_gpus_running": "gpus", "total_idle_gpus": "idle_gpus",
    "total_servers": "servers", "total_racks": "racks_packed", "total_racks_alone": "racks",
    "total_server_capex_usd": "server_capex_usd",
    "total_network_capex_usd": "network_capex_usd", "total_capex_usd": "capex_usd",
    "total_energy_usd_per_year": "energy_usd_per_year",
    "total_colocation_usd_per_year": "colocation_usd_per_year",
    "total_support_usd_per_year": "support_usd_per_year",
    "total_opex_usd_per_year": "opex_usd_per_year", "total_tco_usd": "tco_usd",
    "total_annual_cost_usd": "annual_cost_usd", "total_cloud_usd_per_year": "cloud_usd_per_year",
    "total_cloud_reserved_usd_per_year": "cloud_reserved_usd_per_year",
    "total_cloud_reserved_3y_usd_per_year": "cloud_reserved_3y_usd_per_year",
    "total_cheapest_rent_usd_per_year": "cheapest_rent_usd_per_year",
    "fleet_verdict": "verdict", "fleet_verdict_saving_usd_per_year": "verdict_saving_usd_per_year",
}


def totals_of(plan: Plan) -> dict[str, Value]:
    """Python's value of every total: the plan's fleet totals (kilowatts added per workload,
    as the sheet adds them)."""
    fleet = fleet_totals(plan.sized)
    out: dict[str, Value] = {name: fleet[key] for name, key in FLEET_TOTAL_KEYS.items()}
    chosen = bought(plan.sized)
    out["total_it_power_kw"] = sum(_float(e.value("it_power_w")) / 1000 for e in chosen)
    out["total_facility_power_kw"] = sum(_float(e.value("facility_power_w")) / 1000
                                         for e in chosen)
    return out


def _cost_chart(w: SheetWriter, plan: Plan, layout: BudgetLayout) -> None:
    chart = BarChart()
    chart.type = "bar"
    chart.grouping = "stacked"
    chart.overlap = 100
    chart.title = "Capex and opex per year by workload [USD]"
    for table, key in (("order", "capex"), ("running", "opex")):
        col = [c.key for c in TABLE_BY_KEY[table].columns].index(key) + 1
        chart.add_data(Reference(w.ws, min_col=col, min_row=layout.header_rows[table],
                                 max_row=layout.last(table)), titles_from_data=True)
    chart.set_categories(Reference(w.ws, min_col=1, min_row=layout.first("order"),
                                   max_row=layout.last("order")))
    chart.height, chart.width = 9, 22
    labels = [s.workload.id for s in plan.sized]
    series = [[_float(s.choice.value(k)) for s in plan.sized if s.choice]
              for k in ("capex_usd", "opex_usd_per_year")]
    cache_chart(chart, ["Capex: servers + network [USD]",
                        "Opex: energy + colocation + support [USD per year]"], labels, series)
    w.ws.add_chart(chart, f"A{w.row + 3}")
