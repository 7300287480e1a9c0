"""The Per-op tables sheet: the measured per-operation tables (``catalogs/perop.yaml``) for the
plan's GPUs, as inputs the speed quantities look up by formula (``planner.model.perop``).

A column beside the plan's GPUs, in the GPUs sheet's order, says which block of rows holds the
selected engine's figures for each (``gpu_perop_slot``: 0 where there is none, and the catalog's
efficiencies apply); three blocks hold the figures: GEMM (``perop_gemm``: bandwidth, then the
efficiency at each measured token count, a row per precision and shape class), fused MoE
(``perop_moe``: measured or not, then the efficiency at each number of tokens per routed expert, a
row per precision and TP), decode attention
(``perop_attention``: a row for GQA and MLA) and all-reduce (``perop_allreduce``: latency, then
µs at each measured message size, a row per TP). A GEMM's and an all-reduce's time are linear
between the measured points: each row's fixed part and slope per segment are formulas over its
figures (``perop_gemm_fixed``, ``perop_gemm_slope`` and the like). Above each block, its axis
and the lower bounds MATCH(…, 1) finds a value's segment with (``perop_gemm_tokens_from``…).
Every row names the parquet file and its sha256.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from openpyxl.utils import get_column_letter, quote_sheetname

from planner.inputs.perop import FIXED_DIGITS, OP_LABELS, PerOpTable, PerOpTables, load_perop
from planner.model.engines import ENGINES
from planner.model.perop import ALLREDUCE_TP, ATTENTION_KINDS, FAMILIES, GEMM_KINDS, MOE_KINDS
from planner.outputs.workbook import styles
from planner.outputs.workbook.catalog_sheets import Namer
from planner.outputs.workbook.cells import Cell, Formula, Input, SheetWriter, Styled
from planner.outputs.workbook.layout import table_range
from planner.plan.plan import Plan

PEROP = "Per-op tables"
LEAD = ["Block [#]", "GPU", "Engine", "Engine version", "Row"]
RATIO, MICROS = "0.000", "0.00"


def _row_range(row: int, first: int, last: int) -> str:
    return (f"{quote_sheetname(PEROP)}!${get_column_letter(first)}${row}:"
            f"${get_column_letter(last)}${row}")


def _block_range(first_col: int, last_col: int, first: int, last: int) -> str:
    return (f"{quote_sheetname(PEROP)}!${get_column_letter(first_col)}${first}:"
            f"${get_column_letter(last_col)}${max(last, first + 1)}")


def _sizes(values: Sequence[float]) -> list[str]:
    def one(b: float) -> str:
        for unit, scale in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
            if b >= scale:
                return f"{b / scale:g} {unit}"
        return f"{b:g} B"
    return [one(b) for b in values]


def _source(table: PerOpTable, op: str) -> list[Cell]:
    for s in table.sources:
        if s.op == op:
            return [Styled(f"{s.path} ({s.version})"), Styled(s.sha256)]
    return [Styled("not measured"), Styled("")]


def slots(plan: Plan, tables: PerOpTables) -> list[PerOpTable]:
    """The tables of the plan's GPUs, in the shipped order: block n is the n-th."""
    return [t for t in tables.tables if t.gpu in plan.gpus.entries]


def write_perop(w: SheetWriter, plan: Plan, name: Namer) -> None:
    tables = load_perop()
    blocks = slots(plan, tables)
    slot = {(t.gpu, t.engine): i for i, t in enumerate(blocks, start=1)}
    engine = str(plan.assumptions["engine"])
    numeric = max(1 + 3 * len(tables.axes.get("gemm_tokens", ())),
                  1 + 3 * len(tables.axes.get("allreduce_bytes", ())),
                  len(tables.axes.get("attention_batch", ())))
    w.widths([14, 16, 12, 14, 12] + [14.0] * numeric + [30, 60, 66])  # 268,435,456 B fits
    styles.print_setup(w.ws)
    w.append([Styled("Measured per-op tables: what GEMMs, fused MoE, decode attention and "
                     "all-reduces achieve on each GPU under each engine", styles.TITLE)])
    w.append([Styled(f"From {tables.package} {tables.version} ({tables.license}), NVIDIA's "
                     "measured per-operation tables, summarised by tools/pertables.py into "
                     "catalogs/perop.yaml. Inputs, not judges: docs/accuracy.md compares the "
                     "planner with published engine runs.", styles.NOTE)])
    w.append([Styled("Where the selected engine has a block for a GPU, bandwidth_efficiency and "
                     "compute_efficiency 'auto' and the all-reduce time are looked up here "
                     "(INDEX over the block, MATCH(value, axis, 1) for the column); elsewhere "
                     "the GPUs sheet's efficiencies apply. docs/engines.md says how each figure "
                     "was made.", styles.NOTE)])
    w.append([])
    _gpu_block(w, plan, slot, engine, name)
    w.append([])
    axis = _gemm_block(w, tables, blocks, name)
    w.append([])
    _moe_block(w, tables, blocks, axis, name)
    w.append([])
    _attention_block(w, tables, blocks, name)
    w.append([])
    _allreduce_block(w, tables, blocks, name)
    styles.protect(w.ws)


def _gpu_block(w: SheetWriter, plan: Plan, slot: dict[tuple[str, str], int], engine: str,
               name: Namer) -> None:
    w.append([Styled("Blocks by GPU (in the GPUs sheet's order) and engine; 0: no table",
                     styles.TITLE)])
    w.append([Styled(h, styles.HEADER) for h in
              ["GPU", *(f"{e.label} [block]" for e in ENGINES.values()),
               "Selected engine's block [#]"]])
    first = w.row + 1
    last_engine = get_column_letter(1 + len(ENGINES))
    for gpu in plan.gpus.entries:
        r = w.row + 1
        w.append([Styled(gpu), *(Input(slot.get((gpu, e), 0), "0") for e in ENGINES),
                  Formula(f"INDEX($B{r}:${last_engine}{r},1,engine_row)",
                          slot.get((gpu, engine), 0), "0")])
    name("gpu_perop_slot", table_range(PEROP, get_column_letter(2 + len(ENGINES)), first,
                                       w.row))


def _axis_rows(w: SheetWriter, label: str, points: Sequence[float], lower: Sequence[float],
               first_col: int, axis: str, name: Namer, number_format: str = "#,##0") -> int:
    """The measured points (returned: their row) and the lower bounds MATCH(…, 1) reads."""
    pad = [None] * (first_col - 2)
    w.append([Styled(label, styles.HEADER), *pad, *(Input(p, number_format) for p in points)])
    row = w.row
    w.append([Styled("lookup: from", styles.TEXT), *pad, *(Input(x, number_format)
                                                            for x in lower)])
    name(f"perop_{axis}_from", _row_range(w.row, first_col, first_col + len(lower) - 1))
    return row


def _segment_formulas(r: int, axis: int, first: int, n: int, fixed: Sequence[float],
                      slope: Sequence[float], time: Callable[[str, str], str],
                      point: Callable[[str], str], last: Callable[[str, str], str],
                      guard: str) -> tuple[list[Cell], list[Cell]]:
    """The fixed part and the slope of a time linear between measured points, as formulas over
    the row's figures (columns first … first + n − 1) and the axis row, in the order
    planner.inputs.perop.segments computes them; the slopes sit right of the figures and the
    fixed parts right of the slopes (a row computes left to right, as the Fleet's do, so that
    LibreOffice's threaded calculation has no circle to imagine): `time(figure, point)` is a
    point's time,
    `point(cell)` its position, `last(figure, previous slope)` the slope past the last point.
    `guard` is the cell that is 0 in a row that was not measured (zeros everywhere). The fixed
    parts are rounded as ``planner.inputs.perop.segments`` rounds them."""
    cols = [get_column_letter(first + i) for i in range(n)]
    slope_cols = [get_column_letter(first + n + i) for i in range(n)]
    fixed_cells: list[Cell] = []
    slope_cells: list[Cell] = []
    for i, c in enumerate(cols):
        t, at = time(f"{c}{r}", f"{c}${axis}"), point(f"{c}${axis}")
        if i + 1 < n:
            d = cols[i + 1]
            t2, at2 = time(f"{d}{r}", f"{d}${axis}"), point(f"{d}${axis}")
            b = f"MAX(0,({t2}-{t})/({at2}-{at}))"
        else:
            b = last(f"{c}{r}", f"{slope_cols[i - 1]}{r}")
        fixed_cells.append(Formula(
            f"IF({guard}>0,ROUND({t}-{slope_cols[i]}{r}*{at},{FIXED_DIGITS}),0)", fixed[i],
            "0.000"))
        slope_cells.append(Formula(f"IF({guard}>0,{b},0)", slope[i], "0.000"))
    return fixed_cells, slope_cells


def _curve_rows(w: SheetWriter, blocks: Sequence[PerOpTable], family: str,
                kinds: Sequence[str], axis: int, n: int, lead_format: str, guard: str,
                name: Namer) -> None:
    """A family whose time in units of tokens ÷ efficiency is linear between the measured
    token counts (GEMM, fused MoE): per GPU × engine and kind, the lead figure (in column F),
    the efficiencies, their slopes and fixed parts as formulas, the kernel and the source; then
    the block's names. `guard` is the column that is 0 in a row not measured."""
    table = {"gemm": lambda t: (t.gemm, t.gemm_fixed, t.gemm_slope),
             "moe": lambda t: (t.moe, t.moe_fixed, t.moe_slope)}[family]
    first = w.row + 1
    for k, t in enumerate(blocks, start=1):
        figures, fixed_parts, slopes = table(t)
        for i, kind in enumerate(kinds):
            r = w.row + 1
            fixed, slope = _segment_formulas(
                r, axis, 7, n, fixed_parts[i], slopes[i], time=lambda v, p: f"{p}/{v}",
                point=lambda p: p, last=lambda v, _: f"1/{v}", guard=f"${guard}{r}")
            kernel = t.kernels.get(f"{family} {kind.split('_')[0]}", "not measured")
            w.append([Styled(k), Styled(t.gpu), Styled(t.engine), Styled(t.version),
                      Styled(kind), Input(figures[i][0], lead_format),
                      *(Input(x, RATIO) for x in figures[i][1:]), *slope, *fixed,
                      Styled(kernel), *_source(t, family)])
    _placeholder(w, blocks, FAMILIES[family][0], 1 + 3 * n)
    name(f"perop_{family}", _block_range(6, 6 + n, first, w.row))
    name(f"perop_{family}_slope", _block_range(7 + n, 6 + 2 * n, first, w.row))
    name(f"perop_{family}_fixed", _block_range(7 + 2 * n, 6 + 3 * n, first, w.row))


def _gemm_block(w: SheetWriter, tables: PerOpTables, blocks: Sequence[PerOpTable],
                name: Namer) -> int:
    """The GEMM rows; returns the row of their token axis (the fused MoE's too)."""
    tokens = tables.axes.get("gemm_tokens", ())
    n = len(tokens)
    w.append([Styled("GEMM: bandwidth one-token GEMMs stream weights at, and achieved FLOP/s "
                     "beyond a kernel's fixed time, both ÷ the GPUs sheet's peak; the time "
                     "(tokens ÷ efficiency) is linear between the measured token counts M",
                     styles.TITLE)])
    axis = _axis_rows(w, "M (tokens)", tokens, tables.axes.get("gemm_tokens_from", ()), 7,
                      "gemm_tokens", name)
    w.append([Styled(h, styles.HEADER) for h in
              [*LEAD, "Bandwidth ÷ peak", *(f"Efficiency at M = {t:,.0f}" for t in tokens),
               *(f"From M = {t:,.0f}: time per token [÷ efficiency]" for t in tokens),
               *(f"From M = {t:,.0f}: time at 0 [tokens ÷ efficiency]" for t in tokens),
               "Kernel", "Source (package file, engine version)", "sha256"]])
    _curve_rows(w, blocks, "gemm", GEMM_KINDS, axis, n, RATIO, "G", name)
    return axis


def _moe_block(w: SheetWriter, tables: PerOpTables, blocks: Sequence[PerOpTable], axis: int,
               name: Namer) -> None:
    """The fused MoE rows, on the GEMMs' token axis (tokens per routed expert)."""
    tokens = tables.axes.get("gemm_tokens", ())
    w.append([Styled("Fused MoE (routed experts, sliced over TP GPUs or spread whole over EP): "
                     "achieved FLOP/s ÷ the GPUs sheet's peak by tokens per routed expert (the "
                     "GEMMs' M axis above); a prefill's routed-expert FLOPs run at it",
                     styles.TITLE)])
    w.append([Styled(h, styles.HEADER) for h in
              [*LEAD, "Measured [1/0]",
               *(f"Efficiency at {t:,.0f} tokens an expert" for t in tokens),
               *(f"From {t:,.0f}: time per token [÷ efficiency]" for t in tokens),
               *(f"From {t:,.0f}: time at 0 [tokens ÷ efficiency]" for t in tokens),
               "Kernels", "Source (package file, engine version)", "sha256"]])
    _curve_rows(w, blocks, "moe", MOE_KINDS, axis, len(tokens), "0", "F", name)


def _attention_block(w: SheetWriter, tables: PerOpTables, blocks: Sequence[PerOpTable],
                     name: Namer) -> None:
    batch = tables.axes.get("attention_batch", ())
    w.append([Styled("Decode attention: KV bandwidth achieved beyond the kernel's fixed time "
                     "÷ the GPUs sheet's bandwidth, by batch (the nearest measured; 0: not "
                     "measured)", styles.TITLE)])
    _axis_rows(w, "Batch (sequences)", batch, tables.axes.get("attention_batch_from", ()), 6,
               "attention_batch", name)
    w.append([Styled(h, styles.HEADER) for h in
              [*LEAD, *(f"Efficiency at batch {b:,.0f}" for b in batch), "Kernel",
               "Source (package file, engine version)", "sha256"]])
    first = w.row + 1
    for k, t in enumerate(blocks, start=1):
        for kind, row in zip(ATTENTION_KINDS, t.attention, strict=True):
            w.append([Styled(k), Styled(t.gpu), Styled(t.engine), Styled(t.version),
                      Styled(OP_LABELS[kind]), *(Input(x, RATIO) for x in row),
                      Styled(t.kernels.get(f"attention {kind}", "not measured")),
                      *_source(t, kind)])
    _placeholder(w, blocks, FAMILIES["attention"][0], len(batch))
    name("perop_attention", _block_range(6, 5 + len(batch), first, w.row))


def _allreduce_block(w: SheetWriter, tables: PerOpTables, blocks: Sequence[PerOpTable],
                     name: Namer) -> None:
    sizes = tables.axes.get("allreduce_bytes", ())
    n = len(sizes)
    labels = _sizes(sizes)
    w.append([Styled("All-reduce: the engine's own, its latency and its time by message size "
                     "(µs), linear between the measured sizes", styles.TITLE)])
    axis = _axis_rows(w, "Message [bytes]", sizes, tables.axes.get("allreduce_bytes_from", ()),
                      7, "allreduce_bytes", name)
    w.append([Styled(h, styles.HEADER) for h in
              [*LEAD[:4], "TP [GPUs]", "Latency [µs]", *(f"{s} [µs]" for s in labels),
               *(f"From {s}: time per MB [µs]" for s in labels),
               *(f"From {s}: time at 0 [µs]" for s in labels),
               "Source (package file, engine version)", "sha256"]])
    first = w.row + 1
    for k, t in enumerate(blocks, start=1):
        for i, tp in enumerate(ALLREDUCE_TP):
            r = w.row + 1
            fixed, slope = _segment_formulas(
                r, axis, 7, n, t.allreduce_fixed[i], t.allreduce_slope[i],
                time=lambda v, p: v, point=lambda p: f"({p}/1000000)",
                last=lambda _, previous: previous, guard=f"$F{r}")
            w.append([Styled(k), Styled(t.gpu), Styled(t.engine), Styled(t.version),
                      Styled(tp), *(Input(x, MICROS) for x in t.allreduce[i]), *slope, *fixed,
                      *_source(t, "allreduce")])
    _placeholder(w, blocks, FAMILIES["allreduce"][0], 1 + 3 * n)
    name("perop_allreduce", _block_range(6, 6 + n, first, w.row))
    name("perop_allreduce_slope", _block_range(7 + n, 6 + 2 * n, first, w.row))
    name("perop_allreduce_fixed", _block_range(7 + 2 * n, 6 + 3 * n, first, w.row))


def _placeholder(w: SheetWriter, blocks: Sequence[PerOpTable], rows: int, columns: int) -> None:
    """No GPU of the plan has a table: one row of zeros keeps the names the formulas read
    defined (they are never evaluated, every lookup first asks for a block)."""
    if not blocks:
        for _ in range(rows):
            w.append([Styled(0), Styled("none"), None, None, None,
                      *(Input(0.0, RATIO) for _ in range(columns))])
