"""The Capacity view (a model and GPU chosen from drop-down lists; the context × concurrency
tables of the published analyses), the Charts sheet, and the View data sheet behind both."""

from __future__ import annotations

from dataclasses import dataclass

from openpyxl.chart import BarChart, LineChart, Reference
from openpyxl.formatting.rule import CellIsRule, FormulaRule
from openpyxl.styles import Font, PatternFill
from openpyxl.utils import get_column_letter, quote_sheetname
from openpyxl.worksheet.datavalidation import DataValidation

from planner.model.quantities import ROW_BY_NAME, ROW_QUANTITIES
from planner.outputs.workbook import styles
from planner.outputs.workbook.catalog_sheets import Namer
from planner.outputs.workbook.cells import Cell, Formula, Input, SheetWriter, Styled
from planner.outputs.workbook.chart_cache import cache_chart
from planner.outputs.workbook.grid_sheet import headers, lookup_positions, row_cells
from planner.outputs.workbook.layout import CAPACITY, GRID_COL, VIEW_DATA, absolute_cell
from planner.plan.calc import RowEnv
from planner.plan.plan import Plan

SELECTIONS = [  # (view field, label, id list for the drop-down)
    ("model", "Model", "model_id"), ("gpu", "GPU", "gpu_id"),
    ("weights", "Weight format", "weight_format_id"), ("kv", "KV-cache format", "kv_format_id"),
    ("tp", "TP degree [GPUs]", None), ("prompt", "Prompt [tokens]", None),
    ("batch", "Concurrency for the GPU comparison [sequences]", None),
    ("context", "Context for the GPU comparison [tokens]", None),
]
SELECTION_ROW0 = 4
TABLES = [  # (quantity, title) shown as context × concurrency tables
    ("decode_tokens_per_second", "Decode throughput, whole replica [tokens/s]"),
    ("fits", "Fits at this concurrency? [Yes/No]"),
    ("tokens_per_second_per_sequence", "Per-user speed [tokens/s]"),
    ("cost_per_million_tokens",
     "Cost per million output tokens, rented GPUs busy all the time (full use) [USD]"),
]


def link(sheet: str | None, cell: str) -> str:
    """A formula that shows another cell: the only formula text written outside quantities."""
    return "=" + (f"{quote_sheetname(sheet)}!{cell}" if sheet else cell)


@dataclass
class ViewLayout:
    contexts: tuple[int, ...]
    concurrency: tuple[int, ...]
    gpus: list[str]

    # Capacity sheet ----------------------------------------------------------------------
    def selection_row(self, field: str) -> int:
        return SELECTION_ROW0 + [s[0] for s in SELECTIONS].index(field)

    @property
    def table_row0(self) -> int:  # header row of the first table
        return SELECTION_ROW0 + len(SELECTIONS) + 2

    def table_header_row(self, t: int) -> int:
        return self.table_row0 + t * (len(self.contexts) + 3)

    def context_cell(self, i: int) -> str:  # the editable context of row i, first table
        return f"$A${self.table_header_row(0) + 1 + i}"

    def concurrency_cell(self, j: int) -> str:  # the editable concurrency of column j
        return f"${get_column_letter(4 + j)}${self.table_header_row(0)}"

    # View data sheet ---------------------------------------------------------------------
    def block_a(self, i: int, j: int) -> int:
        return 2 + i * len(self.concurrency) + j

    def block_b(self, g: int, i: int) -> int:
        return 2 + len(self.contexts) * len(self.concurrency) + g * len(self.contexts) + i

    def block_c(self, g: int) -> int:
        return self.block_b(len(self.gpus), 0) + g


def _layout(plan: Plan) -> ViewLayout:
    return ViewLayout(plan.view.contexts, plan.view.concurrency, list(plan.grid.axes["gpus"]))


def view_envs(plan: Plan) -> dict[str, dict]:
    """The configurations the views show, evaluated in Python for the cached values."""
    lay = _layout(plan)
    a = {(i, j): plan.row_env(plan.view.scenario(context=c, batch=b))
         for i, c in enumerate(lay.contexts) for j, b in enumerate(lay.concurrency)}
    b = {(g, i): plan.row_env(plan.view.scenario(gpu=gpu, context=c, batch=1))
         for g, gpu in enumerate(lay.gpus) for i, c in enumerate(lay.contexts)}
    c = {g: plan.row_env(plan.view.scenario(gpu=gpu)) for g, gpu in enumerate(lay.gpus)}
    return {"a": a, "b": b, "c": c}


def _linked(sheet: str | None, cell: str, cached: object, fmt: str = "General") -> Formula:
    return Formula(link(sheet, cell), cached, fmt, styles.LINK)  # type: ignore[arg-type]


def _yes_no(sheet: str, cell: str, cached: object) -> Formula:
    """A TRUE/FALSE of another sheet shown to readers as Yes or No."""
    return Formula(f'=IF({quote_sheetname(sheet)}!{cell},"Yes","No")',
                   "Yes" if cached is True else "No", "General", styles.LINK)


def write_view_data(w: SheetWriter, plan: Plan, envs: dict[str, dict]) -> None:
    lay = _layout(plan)
    w.widths([20, 14, 10, 10, 8, 11, 12, 10, 12] + [9] * 4 + [16] * len(ROW_QUANTITIES))
    styles.print_setup(w.ws)  # before the first row
    w.ws.freeze_panes = "C2"
    w.append(headers())
    positions = lookup_positions(plan)
    v = plan.view

    def selected(field: str) -> Formula:
        return _linked(None, f"view_{field}", getattr(v, field))

    def config(env: RowEnv, gpu: Cell, context: Cell, batch: Cell) -> list[Cell]:
        return [selected("model"), gpu, selected("weights"), selected("kv"), selected("tp"),
                context, batch, selected("prompt"), Input(env.scenario.output, "#,##0")]

    for (i, j), env in envs["a"].items():
        row = lay.block_a(i, j)
        cfg = config(env, selected("gpu"),
                     _linked(CAPACITY, lay.context_cell(i), lay.contexts[i]),
                     _linked(CAPACITY, lay.concurrency_cell(j), lay.concurrency[j]))
        w.append(row_cells(env, row, cfg, positions))
    for (g, i), env in envs["b"].items():
        row = lay.block_b(g, i)
        cfg = config(env, Input(lay.gpus[g]),
                     _linked(CAPACITY, lay.context_cell(i), lay.contexts[i]), Input(1))
        w.append(row_cells(env, row, cfg, positions))
    for g, env in envs["c"].items():
        row = lay.block_c(g)
        cfg = config(env, Input(lay.gpus[g]), selected("context"), selected("batch"))
        w.append(row_cells(env, row, cfg, positions))
    styles.protect(w.ws)


def write_capacity(w: SheetWriter, plan: Plan, envs: dict[str, dict], name: Namer) -> None:
    lay = _layout(plan)
    ws = w.ws
    w.widths([44, 20, 26] + [16] * len(lay.concurrency))
    styles.print_setup(w.ws)  # before the first row
    w.append([Styled("Capacity view: pick a model, GPU and formats; edit the blue cells",
                     styles.TITLE)])
    w.append([Styled("Every number below is a formula over the View data sheet, which uses the "
                     "same formulas as the Grid. Red cells do not fit.", styles.NOTE)])
    w.append([])
    v = plan.view
    for field, label, id_range in SELECTIONS:
        row = w.row + 1
        w.append([Styled(label, styles.TEXT), Input(getattr(v, field))])
        name(f"view_{field}", absolute_cell(CAPACITY, "B", row))
        dv = (DataValidation(type="list", formula1=id_range, showErrorMessage=True)
              if id_range else DataValidation(type="whole", operator="greaterThan",
                                              formula1="0", showErrorMessage=True))
        dv.add(f"B{row}")
        ws.data_validations.append(dv)
    w.append([])
    while w.row < lay.table_row0 - 2:
        w.append([])
    bad = PatternFill("solid", fgColor=styles.BAD_FILL, bgColor=styles.BAD_FILL)
    for t, (qname, title) in enumerate(TABLES):
        qty = ROW_BY_NAME[qname]
        fmt = styles.number_format(qty.display, qty.kind, qty.unit)
        header_row = lay.table_header_row(t)
        w.append([Styled(title, styles.TITLE), None, None,
                  Styled("at concurrency [sequences] →", styles.NOTE)])
        assert w.row + 1 == header_row
        head: list[Cell] = [Styled("Context [tokens]", styles.HEADER),
                            Styled("Sequences that fit [sequences]", styles.HEADER),
                            Styled("KV cache per sequence [bytes, shown in GB]", styles.HEADER)]
        for j, c in enumerate(lay.concurrency):
            head.append(Input(c, "#,##0") if t == 0 else
                        _linked(None, lay.concurrency_cell(j), c, "#,##0"))
        w.append(head)
        for i, ctx in enumerate(lay.contexts):
            first = envs["a"][(i, 0)]
            data_row = lay.block_a(i, 0)
            cells: list[Cell] = [
                Input(ctx, "#,##0") if t == 0 else _linked(None, lay.context_cell(i), ctx,
                                                           "#,##0"),
                _linked(VIEW_DATA, f"${GRID_COL['max_sequences']}${data_row}",
                        first.value("max_sequences"), "#,##0"),
                _linked(VIEW_DATA, f"${GRID_COL['kv_bytes_per_sequence']}${data_row}",
                        first.value("kv_bytes_per_sequence"), styles.NUMBER_FORMATS["bytes"]),
            ]
            for j in range(len(lay.concurrency)):
                env = envs["a"][(i, j)]
                cell = f"${GRID_COL[qname]}${lay.block_a(i, j)}"
                cells.append(_yes_no(VIEW_DATA, cell, env.value(qname)) if qname == "fits"
                             else _linked(VIEW_DATA, cell, env.value(qname), fmt))
            w.append(cells)
        w.append([])
        first_row, last_row = header_row + 1, header_row + len(lay.contexts)
        last_col = get_column_letter(3 + len(lay.concurrency))
        area = f"D{first_row}:{last_col}{last_row}"
        if qname == "fits":
            ws.conditional_formatting.add(area, CellIsRule(operator="equal",
                                                           formula=['"No"'], fill=bad))
        else:
            fits_first = lay.table_header_row(1) + 1
            ws.conditional_formatting.add(area, FormulaRule(
                formula=[f'D{fits_first}="No"'], fill=bad,
                font=Font(color="9C0006", strike=True)))
    styles.protect(ws)


def write_charts(w: SheetWriter, plan: Plan, envs: dict[str, dict]) -> None:
    lay = _layout(plan)
    ws = w.ws
    w.widths([22] + [14] * max(len(lay.gpus), 4))
    styles.print_setup(w.ws)  # before the first row
    w.append([Styled("Charts: live over the Capacity selection", styles.TITLE)])
    w.append([Styled("Change the model, GPU, formats or TP on the Capacity sheet and these "
                     "charts follow.", styles.NOTE)])
    w.append([])
    # Table 1: sequences that fit vs context, per GPU (batch 1) ---------------------------
    t1 = w.row + 1
    w.append([Styled("Context [tokens]", styles.HEADER)] + [
        _linked(VIEW_DATA, f"$B${lay.block_b(g, 0)}", gpu) for g, gpu in enumerate(lay.gpus)])
    for i, ctx in enumerate(lay.contexts):
        w.append([_linked(CAPACITY, lay.context_cell(i), ctx, "#,##0")] + [
            _linked(VIEW_DATA, f"${GRID_COL['max_sequences']}${lay.block_b(g, i)}",
                    envs["b"][(g, i)].value("max_sequences"), "#,##0")
            for g in range(len(lay.gpus))])
    w.append([])
    # Table 2: cost per million tokens by GPU -------------------------------------------
    t2 = w.row + 1
    w.append([Styled(h, styles.HEADER) for h in (
        "GPU [id]", "Cost per million output tokens, rented at full use [USD]",
        "Decode throughput [tokens/s]", "Fits [Yes/No]")])
    for g, gpu in enumerate(lay.gpus):
        env, row = envs["c"][g], lay.block_c(g)
        w.append([_linked(VIEW_DATA, f"$B${row}", gpu),
                  _linked(VIEW_DATA, f"${GRID_COL['cost_per_million_tokens']}${row}",
                          env.value("cost_per_million_tokens"), '"$"#,##0.00'),
                  _linked(VIEW_DATA, f"${GRID_COL['decode_tokens_per_second']}${row}",
                          env.value("decode_tokens_per_second"), "#,##0"),
                  _yes_no(VIEW_DATA, f"${GRID_COL['fits']}${row}", env.value("fits"))])
    w.append([])
    # Table 3: decode throughput by concurrency, one row per context ----------------------
    t3 = w.row + 1
    w.append([Styled("Context [tokens]", styles.HEADER)] + [
        _linked(CAPACITY, lay.concurrency_cell(j), c, "#,##0")
        for j, c in enumerate(lay.concurrency)])
    for i, ctx in enumerate(lay.contexts):
        w.append([_linked(CAPACITY, lay.context_cell(i), ctx, "#,##0")] + [
            _linked(VIEW_DATA, f"${GRID_COL['decode_tokens_per_second']}${lay.block_a(i, j)}",
                    envs["a"][(i, j)].value("decode_tokens_per_second"), "#,##0")
            for j in range(len(lay.concurrency))])
    n_ctx, n_gpu, n_conc = len(lay.contexts), len(lay.gpus), len(lay.concurrency)

    chart1 = LineChart()
    chart1.title = "Sequences that fit vs context, per GPU (Capacity selection, batch 1)"
    chart1.x_axis.title = "Context [tokens]"
    chart1.y_axis.title = "Sequences that fit [sequences]"
    chart1.add_data(Reference(ws, min_col=2, max_col=1 + n_gpu, min_row=t1, max_row=t1 + n_ctx),
                    titles_from_data=True)
    chart1.set_categories(Reference(ws, min_col=1, min_row=t1 + 1, max_row=t1 + n_ctx))
    cache_chart(chart1, lay.gpus, lay.contexts,
                [[envs["b"][(g, i)].value("max_sequences") for i in range(n_ctx)]
                 for g in range(n_gpu)])
    chart1.width, chart1.height = 18, 9
    ws.add_chart(chart1, "H3")

    chart2 = LineChart()
    chart2.title = "Decode throughput vs concurrency, one line per context [tokens]"
    chart2.x_axis.title = "Concurrency [sequences]"
    chart2.y_axis.title = "Decode throughput [tokens/s]"
    chart2.add_data(Reference(ws, min_col=1, max_col=1 + n_conc, min_row=t3 + 1,
                              max_row=t3 + n_ctx), from_rows=True, titles_from_data=True)
    chart2.set_categories(Reference(ws, min_col=2, max_col=1 + n_conc, min_row=t3,
                                    max_row=t3))
    cache_chart(chart2, lay.contexts, lay.concurrency,
                [[envs["a"][(i, j)].value("decode_tokens_per_second")
                  for j in range(n_conc)] for i in range(n_ctx)])
    chart2.width, chart2.height = 18, 9
    ws.add_chart(chart2, "H22")

    chart3 = BarChart()
    chart3.type = "bar"
    chart3.title = "Cost per million output tokens by GPU, rented at full use (Capacity selection)"
    chart3.x_axis.title = "GPU"
    chart3.y_axis.title = "Cost per million output tokens, rented at full use [USD]"
    chart3.add_data(Reference(ws, min_col=2, min_row=t2, max_row=t2 + n_gpu),
                    titles_from_data=True)
    chart3.set_categories(Reference(ws, min_col=1, min_row=t2 + 1, max_row=t2 + n_gpu))
    cache_chart(chart3, ["Cost per million output tokens, rented at full use [USD]"], lay.gpus,
                [[envs["c"][g].value("cost_per_million_tokens") for g in range(n_gpu)]])
    chart3.width, chart3.height = 18, 9
    ws.add_chart(chart3, "H41")
    styles.protect(ws)
