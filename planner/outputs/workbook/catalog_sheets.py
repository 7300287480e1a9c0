"""The input sheets: Assumptions, Formats, Models and GPUs. Each input is a styled, unlocked
cell; each column a workbook name the Grid's formulas read."""

from __future__ import annotations

from collections.abc import Callable

from openpyxl.workbook.defined_name import DefinedName
from openpyxl.worksheet.datavalidation import DataValidation

from planner.inputs.assumptions import ASSUMPTIONS, Assumption
from planner.inputs.entries import Entry
from planner.inputs.fields import GPU_FIELDS, MODEL_FIELDS
from planner.model.engines import ENGINE_FIELDS, ENGINES
from planner.model.formats import COMPUTE_PRECISIONS, KV_FORMATS, WEIGHT_FORMATS
from planner.model.quantities import MODEL_BY_NAME
from planner.outputs.workbook import styles
from planner.outputs.workbook.cells import Cell, Formula, Input, SheetWriter, Styled, fitted_widths
from planner.outputs.workbook.layout import (
    ASSUMPTIONS as ASSUMPTIONS_SHEET,
)
from planner.outputs.workbook.layout import (
    CATALOG_FIRST_ROW,
    FORMATS,
    GPU_COLUMNS,
    GPUS,
    MODEL_COLUMNS,
    MODEL_INPUTS,
    MODELS,
    ModelsRowRenderer,
    absolute_cell,
    absolute_range,
    catalog_column_range,
    gpu_name,
    model_name,
    table_range,
)
from planner.plan.calc import ModelEnv
from planner.plan.plan import Plan

Namer = Callable[[str, str], None]  # (name, reference)

FIELD_UNITS = {
    "params": "params", "active_params": "params", "num_hidden_layers": "layers",
    "num_attention_heads": "heads", "num_key_value_heads": "heads", "tie_word_embeddings":
    "TRUE/FALSE", "max_position_embeddings": "tokens", "sliding_window": "tokens",
    "attention_chunk_size": "tokens", "num_local_experts": "experts", "num_experts": "experts",
    "n_routed_experts": "experts", "num_experts_per_tok": "experts", "n_shared_experts":
    "experts", "first_k_dense_replace": "layers", "interleave_moe_layer_step": "layers",
    "vocab_size": "tokens", "linear_num_value_heads": "heads", "linear_num_key_heads": "heads",
    "memory_gb": "GB", "memory_mib": "MiB", "bandwidth_tb_s": "TB/s", "bf16_tflops": "TFLOP/s",
    "fp8_tflops": "TFLOP/s", "fp4_tflops": "TFLOP/s", "gpus_per_node": "GPUs", "tdp_w": "W",
    "price_per_hour_usd": "USD per GPU-hour", "price_usd": "USD per GPU",
    "memory_engine_gib": "GiB", "scale_up_gb_s": "GB/s", "allreduce_latency_us": "µs",
    "nvls_buffer_gib": "GiB", "engine_small_defaults": "1/0",
    "bandwidth_efficiency": "fraction", "compute_efficiency": "fraction",
    "compute_efficiency_fp4": "fraction", "price_date": "YYYY-MM",
    "nvls_buffer_mib_per_rank": "MiB per rank", "compute_units": "compute units",
    "mla_decode_max_splits": "workgroups", "mla_decode_split_overhead_tokens": "tokens",
}


MONEY_FORMATS = {"price_per_hour_usd": '"$"#,##0.00', "price_usd": '"$"#,##0'}
GPU_HEADERS = {"price_per_hour_usd": "Price per GPU-hour [USD]",
               "price_usd": "Purchase price per GPU [USD]"}


def _unit(field: str) -> str:
    if field in FIELD_UNITS:
        return FIELD_UNITS[field]
    if field.endswith("_layers"):
        return "layers"
    return "elements"


# Finance's inputs first, each block with its title; the engine's internals after.
GROUP_TITLES = {
    "finance": "Finance: amortisation, discounting and cloud commitments",
    "site": "Site: power, space, headroom and redundancy",
    "engine": "The serving engine and its memory policy",
    "speed": "Speed: achieved efficiencies and fixed costs",
}
FINANCE_GROUPS = ("finance", "site")
PERCENT_UNITS = {"fraction": "%", "fraction per year": "% per year"}


def assumption_format(a: Assumption, value: object) -> str:
    """Shows the value as it is stored (0.0826 as $0.0826), shares as percent."""
    if isinstance(value, str):
        return "General"
    return styles.precise_format(value, percent=a.unit in PERCENT_UNITS,
                                 money=a.unit.startswith("USD"))


def write_assumptions(w: SheetWriter, plan: Plan, name: Namer) -> None:
    w.widths([46, 14, 16, 14, 32, 80, 80])
    styles.print_setup(w.ws)  # before the first row
    w.append([Styled("Assumptions: edit the blue cells; every formula reads them by name",
                     styles.TITLE)])
    w.append([Styled("Site and finance inputs first, then the engine's. Each value is a workbook "
                     "name equal to its `planner --set` name, e.g. =electricity_usd_per_kwh; "
                     "shares are shown as percent (type 8% or 0.08). 'auto' lets the planner "
                     "model the value.", styles.NOTE)])
    for group, title in GROUP_TITLES.items():
        if group == "engine":
            w.append([])
            w.append([Styled("Engine internals: how the planner models the serving engine",
                             styles.TITLE)])
        w.append([])
        w.append([Styled(title, styles.TITLE)])
        w.append([Styled(h, styles.HEADER) for h in
                  ("Input", "Value", "Unit", "Default", "Workbook name (--set)",
                   "Why this default", "Source: the evidence")])
        for a in ASSUMPTIONS.values():
            if a.group != group:
                continue
            row = w.row + 1
            value = plan.assumptions[a.name]
            unit = PERCENT_UNITS.get(a.unit, a.unit)
            label = a.label if a.choices or not unit else f"{a.label} [{unit}]"
            w.append([Styled(label, styles.WRAP), Input(value, assumption_format(a, value)),
                      Styled(PERCENT_UNITS.get(a.unit, a.unit)),
                      Styled(a.default, styles.TEXT, assumption_format(a, a.default)),
                      Styled(a.name), Styled(a.reason, styles.WRAP),
                      Styled(a.source, styles.WRAP)])
            name(a.name, absolute_cell(ASSUMPTIONS_SHEET, "B", row))
            _assumption_validation(w, a, row)
    write_engine_table(w, name)
    styles.protect(w.ws)


def _assumption_validation(w: SheetWriter, a: Assumption, row: int) -> None:
    if a.choices:
        dv = DataValidation(type="list", formula1='"' + ",".join(a.choices) + '"',
                            allow_blank=False, showErrorMessage=True,
                            error=f"Choose {' or '.join(a.choices)}")
    elif a.auto:
        dv = DataValidation(type="custom", showErrorMessage=True,
                            formula1=f'OR(B{row}="auto",AND(ISNUMBER(B{row}),B{row}>={a.minimum},'
                                     f'B{row}<={a.maximum}))',
                            error=f"Enter auto or a number between {a.minimum:g} and "
                                  f"{a.maximum:g}")
    else:
        dv = DataValidation(type="decimal", operator="between", formula1=str(a.minimum),
                            formula2=str(a.maximum), showErrorMessage=True,
                            error=f"Enter a number between {a.minimum:g} and {a.maximum:g}")
    dv.add(f"B{row}")
    w.ws.data_validations.append(dv)


ENGINE_HEADERS = {
    "fraction_after_weights": "Fraction applies after weights [1/0]",
    "fraction_after_runtime": "Fraction applies after runtime [1/0]",
    "charges_runtime": "Runtime memory charged [1/0]",
    "profiles_activation": "Profile-run activation reserved [1/0]",
    "weights_as_loaded": "Weights as loaded (per component) [1/0]",
    "window_tail": "Window pages + batched tokens [1/0]",
    "pads_layer_groups": "Pads hybrid layer groups [1/0]",
    "max_num_seqs_large": "Default max_num_seqs, ≥ 70 GiB [sequences]",
    "max_num_seqs_small": "Default max_num_seqs, < 70 GiB [sequences]",
    "max_num_batched_tokens_large": "Default max_num_batched_tokens, ≥ 70 GiB [tokens]",
    "max_num_batched_tokens_small": "Default max_num_batched_tokens, < 70 GiB [tokens]",
    "us_per_sequence": "Time per running sequence per step [µs]",
    "non_torch_gib": "Non-torch memory at TP 1 [GiB]",
    "mixes_prefill": "Prompts ride in decode steps [1/0]",
    "eager_prefill": "Prefill passes launched eagerly (no CUDA graph) [1/0]",
}


def write_engine_table(w: SheetWriter, name: Namer) -> None:
    """The engine table: each engine's memory policy as inputs the quantities read by name."""
    from openpyxl.utils import get_column_letter

    w.append([])
    w.append([Styled("Engines: how each turns memory into a KV pool (the 'engine' assumption "
                     "picks a row)", styles.TITLE)])
    w.append([Styled(h, styles.HEADER) for h in
              ["Engine", *ENGINE_HEADERS.values(), "Its memory fraction", "Source"]])
    first = w.row + 1
    for engine in ENGINES.values():
        w.append([Styled(engine.id), *(Input(getattr(engine, f),
                                             "0.00" if f == "non_torch_gib" else "#,##0")
                                       for f in ENGINE_FIELDS),
                  engine.fraction_setting, engine.source])
    name("engine_id", absolute_range(ASSUMPTIONS_SHEET, "A", first, w.row))
    name("engine_row", "MATCH(engine,engine_id,0)")  # the selected engine's row, found once
    for i, field in enumerate(ENGINE_FIELDS, start=2):
        name(f"engine_{field}", table_range(ASSUMPTIONS_SHEET, get_column_letter(i), first,
                                            w.row))


def write_formats(w: SheetWriter, plan: Plan, name: Namer) -> None:
    w.widths([12, 18, 22, 90, 70, 18, 18, 18])
    styles.print_setup(w.ws)  # before the first row
    w.append([Styled("Weight formats: bytes per parameter, scales included", styles.TITLE)])
    w.append([Styled(h, styles.HEADER) for h in (
        "Format", "Bytes per parameter [bytes]", "Multiplies in (bf16/fp8/fp4)", "What it is",
        "Source", "Embeddings kept 16-bit [TRUE/FALSE]", "Experts only [TRUE/FALSE]",
        "MoE kernel padding [elements]")])
    first = w.row + 1
    for f in WEIGHT_FORMATS.values():
        row = w.row + 1
        w.append([Styled(f.id), Input(plan.assumptions[f.setting], "0.000000"),
                  Input(f.compute), f.description, f.source, Input(f.embeddings_16bit),
                  Input(f.experts_only), Input(f.expert_pad, "#,##0")])
        name(f.setting, absolute_cell(FORMATS, "B", row))
    last = w.row
    name("weight_format_id", absolute_range(FORMATS, "A", first, last))
    name("weight_bytes_per_param", table_range(FORMATS, "B", first, last))
    name("weight_compute", table_range(FORMATS, "C", first, last))
    name("weight_embeddings_16bit", table_range(FORMATS, "F", first, last))
    name("weight_experts_only", table_range(FORMATS, "G", first, last))
    name("weight_expert_pad", table_range(FORMATS, "H", first, last))
    dv = DataValidation(type="list", formula1='"' + ",".join(COMPUTE_PRECISIONS) + '"')
    dv.add(f"C{first}:C{last}")
    w.ws.data_validations.append(dv)
    w.append([])
    w.append([Styled("KV-cache formats: bytes per cached element", styles.TITLE)])
    w.append([Styled(h, styles.HEADER) for h in (
        "Format", "Bytes per element [bytes]", "", "What it is", "Source")])
    first = w.row + 1
    for k in KV_FORMATS.values():
        row = w.row + 1
        w.append([Styled(k.id), Input(plan.assumptions[k.setting],
                                      "0.000000"), None, k.description, k.source])
        name(k.setting, absolute_cell(FORMATS, "B", row))
    name("kv_format_id", absolute_range(FORMATS, "A", first, w.row))
    name("kv_bytes_per_element", table_range(FORMATS, "B", first, w.row))
    styles.protect(w.ws)


def _input_or_blank(entry: Entry, field: str) -> Input | None:
    value = entry.values.get(field)
    return Input(value, "#,##0" if isinstance(value, int) else "General") \
        if value is not None else Input(None)


def write_table(w: SheetWriter, header: list[str], rows: list[list[Cell]]) -> None:
    """A catalog table: columns as wide as their widest value, printed at full size with the
    header row and the two id columns repeated, frozen at the first data cell."""
    w.widths(fitted_widths(header, rows))  # widths and print setup precede the first row
    styles.print_setup(w.ws, title_rows="1:1", fit_width=False)
    w.ws.print_title_cols = "A:B"
    w.ws.freeze_panes = "C2"
    w.append([Styled(h, styles.HEADER) for h in header])
    for cells in rows:
        w.append(cells)


def write_models(w: SheetWriter, plan: Plan, name: Namer) -> None:
    header = []
    for col in MODEL_COLUMNS:
        if col in MODEL_BY_NAME:
            qty = MODEL_BY_NAME[col]
            header.append(styles.header_text(qty.label, qty.unit))
        elif col in MODEL_FIELDS or col in MODEL_INPUTS:
            header.append(f"{col} [{_unit(col)}]" if col not in ("name", "source", "notes")
                          else col)
        else:
            header.append(col)
    rows = []
    for row, entry in enumerate(plan.models.entries.values(), start=CATALOG_FIRST_ROW):
        env = plan.model_envs.get(entry.id) or ModelEnv(entry, plan.assumptions)
        renderer = ModelsRowRenderer(row)
        cells: list = [Styled(entry.id), Styled(entry.name)]
        for field in MODEL_INPUTS:
            if field in MODEL_FIELDS:
                cells.append(_input_or_blank(entry, field))
            else:  # layer counts, counted from layer_types
                cells.append(Input(entry.number(field), "#,##0"))
        for qty in MODEL_BY_NAME.values():
            fmt = styles.number_format("plain", qty.kind, qty.unit)
            cells.append(Formula(qty.expr.formula(renderer), env.value(qty.name), fmt))
        cells += [Styled(entry.source), Styled(entry.text("notes"))]
        rows.append(cells)
    write_table(w, header, rows)
    first, last = CATALOG_FIRST_ROW, w.row
    for i, col in enumerate(MODEL_COLUMNS):
        if col in ("name", "source", "notes"):
            continue
        from openpyxl.utils import get_column_letter

        name(model_name(col), catalog_column_range(col, MODELS, get_column_letter(i + 1), first,
                                                   last))
    styles.protect(w.ws)


def write_gpus(w: SheetWriter, plan: Plan, name: Namer) -> None:
    from openpyxl.utils import get_column_letter

    header = [GPU_HEADERS.get(c) or (f"{c} [{_unit(c)}]" if (GPU_FIELDS.get(c) and GPU_FIELDS[
        c].kind in ("int", "number")) or c == "price_date" else c) for c in GPU_COLUMNS]
    rows = []
    for entry in plan.gpus.entries.values():
        cells: list = []
        for col in GPU_COLUMNS:
            spec = GPU_FIELDS.get(col)
            if col == "id":
                cells.append(Styled(entry.id))
            elif col in MONEY_FORMATS:
                cells.append(Input(entry.values.get(col), MONEY_FORMATS[col]))
            elif spec is not None and spec.kind in ("int", "number"):
                cells.append(_input_or_blank(entry, col))
            elif col == "price_date":
                cells.append(Input(entry.text(col)))
            else:
                cells.append(Styled(entry.text(col, entry.id if col == "name" else "")))
        rows.append(cells)
    write_table(w, header, rows)
    for i, col in enumerate(GPU_COLUMNS):
        if col == "id" or (GPU_FIELDS.get(col) and GPU_FIELDS[col].kind in ("int", "number")):
            name(gpu_name(col), catalog_column_range(col, GPUS, get_column_letter(i + 1),
                                                     CATALOG_FIRST_ROW, w.row))
    styles.protect(w.ws)


def define(wb) -> Namer:  # type: ignore[no-untyped-def]
    def namer(name: str, reference: str) -> None:
        wb.defined_names[name] = DefinedName(name, attr_text=reference)

    return namer
