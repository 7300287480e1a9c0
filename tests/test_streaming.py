"""The grid streamed: rows evaluated by blocks (columns of values) equal the row-by-row values
exactly, the aggregates the HTML shows equal its selections over every row, and the Grid sheet
streamed as XML is byte for byte what openpyxl writes for the same cells."""

from __future__ import annotations

import math
import zipfile
from pathlib import Path

import pytest
from openpyxl import Workbook, load_workbook

from planner.inputs.catalog import DEFAULT_GPUS, DEFAULT_MODELS
from planner.inputs.grid import expand
from planner.model.columns import Same, compare_fast, int_fast
from planner.model.expr import XlError
from planner.model.quantities import ROW_QUANTITIES
from planner.outputs.html import answers as ans
from planner.outputs.html import capacity as cap
from planner.outputs.html import formatting as fm
from planner.outputs.html import selection as sel
from planner.outputs.html.report import write_html
from planner.outputs.workbook import styles
from planner.outputs.workbook.cache import inject, sheet_parts
from planner.outputs.workbook.cells import SheetWriter
from planner.outputs.workbook.grid_sheet import (
    input_config,
    lookup_positions,
    row_cells,
    write_grid,
)
from planner.outputs.workbook.layout import CONFIG_COLUMNS, LOOKUPS
from planner.plan.calc import BlockEnv
from planner.plan.plan import Plan, build_plan, scenario_blocks
from planner.plan.summary import grid_prompt, headline_batch, reference_context
from tests.conftest import one_workload

DATA = Path(__file__).parent / "data"
SMALL = (DATA / "small-models.yaml", DATA / "small-gpus.yaml", DATA / "small-grid.yaml")

# Duplicated axis values, several prompts and outputs (the view's prompt not among them), a
# TP the GPUs cannot hold, and models that fit nowhere at some contexts.
MIXED_GRID = """
grid:
  models: [llama-3.1-8b, deepseek-v3, gpt-oss-120b]
  gpus: [l40s, mi300x]
  weights: [int4, bf16, int4]
  kv: [bf16, fp8]
  context: [4096, 1048576, 32768]
  batch: [1, 256, 256]
  tp: [1, 8, 16]
  prompt: [1024, 2048]
  output: [128, 512]
view:
  model: deepseek-v3
  gpu: mi300x
  weights: fp8
  kv: bf16
  tp: 8
  batch: 32
  context: 65536
  prompt: 4096
"""


@pytest.fixture(scope="module")
def mixed_grid(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("mixed") / "grid.yaml"
    path.write_text(MIXED_GRID)
    return path


@pytest.fixture(scope="module")
def plans(mixed_grid: Path) -> list[Plan]:
    """The small grid, the mixed grid, and the small grid where nothing fits (errors), built
    once for the module: the tests read their rows, which are evaluated whenever read. The
    mixed grid's plan sizes one shipped workload (the grid's rows do not depend on it)."""
    one = one_workload(mixed_grid.parent, "rag-8b-long-context")
    return [build_plan(*SMALL),
            build_plan(DEFAULT_MODELS, DEFAULT_GPUS, mixed_grid, workloads_path=one),
            build_plan(*SMALL, {"gpu_memory_utilization": 0.02, "overhead_gib_per_gpu": 0,
                                "bytes_per_kv_element_bf16": 0})]


def test_blocks_are_the_expanded_grid_in_order(plans: list[Plan]) -> None:
    for plan in plans:
        expected = list(expand(plan.grid, plan.models, plan.gpus))
        skipped = dict(plan.grid.skipped)
        assert [s for b in scenario_blocks(plan.grid, plan.models, plan.gpus, 7) for s in b] \
            == expected
        assert [r.scenario for r in plan.rows] == expected
        assert len(plan.rows) == len(expected)
        fresh = build_plan(plan.models.path, plan.gpus.path, plan.grid.path, plan.overrides,
                           workloads_path=plan.workloads.path)
        assert fresh.grid.skipped == skipped  # counted without expanding


def same_value(a: object, b: object) -> bool:
    """Equal in value and type (1, 1.0 and True differ; NaN equals NaN)."""
    return type(a) is type(b) and repr(a) == repr(b)


@pytest.mark.parametrize("which", [  # default: every quantity of the 6,498 default rows
    pytest.param("default", marks=pytest.mark.slow), "mixed", "errors"])
def test_columns_equal_row_by_row_evaluation(which: str, plans: list[Plan],
                                             default_plan: Plan) -> None:
    """Every value of every row, evaluated by blocks, equals RowEnv's exactly (value and type),
    including spreadsheet errors and text."""
    if which == "default":
        plan = default_plan
    else:
        plan = plans[1 if which == "mixed" else 2]
    rows = errors = 0
    for block in plan.rows.blocks():
        for i, s in enumerate(block.scenarios):
            env = plan.row_env(s)
            for q in ROW_QUANTITIES:
                expected = env.value(q.name)
                assert same_value(block.value(q.name, i), expected), (s, q.name)
                errors += isinstance(expected, XlError)
            rows += 1
    assert rows == len(plan.rows)
    if which == "errors":
        assert errors > 0  # the case exercises errors


def test_a_block_reuses_what_does_not_change_and_nothing_else() -> None:
    """Blocks of one plan share values that depend only on what the blocks share (memos);
    evaluating without them gives the same columns."""
    plan = build_plan(*SMALL)
    memos: dict = {}
    for scenarios in scenario_blocks(plan.grid, plan.models, plan.gpus):
        first = plan.row_env(scenarios[0])
        shared = BlockEnv(scenarios, first.model, first.gpu, plan.assumptions, memos)
        alone = BlockEnv(scenarios, first.model, first.gpu, plan.assumptions)
        for a, b in zip(shared.all(), alone.all(), strict=True):
            if isinstance(a, Same):
                assert isinstance(b, Same) and same_value(a.value, b.value)
            else:
                assert all(same_value(x, y) for x, y in zip(a, b, strict=True))
    assert memos


@pytest.mark.parametrize("a,b", [(1, 1), (10**15, 10**15 + 1), (0.1 + 0.2, 0.3), (1e-300, 0.0),
                                 (5, 5.000000000000001), (2.0, 1.9999999999999), (-3, 2.5),
                                 (float("inf"), 1.0), (float("nan"), 1.0), (0, -0.0),
                                 (123456789012345.6, 123456789012345.7), (10**400, 1)])
def test_fast_comparisons_round_as_spreadsheets_do(a: object, b: object) -> None:
    from planner.model.expr import compare

    for op in ("=", "<>", "<", "<=", ">", ">="):
        for x, y in ((a, b), (b, a)):
            assert same_value(outcome(compare_fast, op, x, y), outcome(compare, op, x, y))


def outcome(fn, *args):  # type: ignore[no-untyped-def]
    """What `fn` returns, or the type of what it raises."""
    try:
        return fn(*args)
    except (OverflowError, ValueError) as exc:
        return type(exc)


@pytest.mark.parametrize("x", [0.0, -0.0, 2.9999999999999996, 3.0000000000000004, -2.5, 1e-14,
                               -1e-14, 0.5, 4.999999999999999, 123456789012345.9, 1e15 + 0.5,
                               -1e16, 7, -7, 10**15, float("inf"), float("nan"), True, "a"])
def test_fast_int_floors_at_15_digits(x: object) -> None:
    from planner.model.expr import excel_int

    assert same_value(outcome(int_fast, x), outcome(excel_int, x))


# -- the HTML's selections, over every row (as it made them before streaming) -----------------

def rows_where(plan: Plan, rows: list, model: str, **fields: object) -> list:
    prompt = grid_prompt(plan.grid, plan.view)
    return [env for env in rows if env.scenario.model == model and env.scenario.prompt == prompt
            and all(getattr(env.scenario, k) == v for k, v in fields.items())]


def reference_over_rows(plan: Plan, rows: list, model: str) -> tuple[object, str] | None:
    ref, batch = reference_context(plan.grid, plan.view), headline_batch(plan.grid)
    others = sorted((c for c in plan.grid.axes["context"] if c != ref), reverse=True)
    for context in [ref, *others]:
        for b in sorted(plan.grid.axes["batch"], reverse=True):
            found = rows_where(plan, rows, model, batch=b, context=context)
            best = sel.cheapest(sel.in_policy(found) or found)
            if best is not None:
                why = f"cheapest that fits {b} sequences of {fm.tokens_label(context)} tokens"
                if (b, context) != (batch, ref):
                    why += f" (nothing fits {batch} of {fm.tokens_label(ref)})"
                return best.scenario, why
    return None


def answer_over_rows(plan: Plan, rows: list, model: str, context: int) -> ans.Answer:
    batch = headline_batch(plan.grid)
    every = rows_where(plan, rows, model, batch=batch, context=context)
    chosen = sel.in_policy(every) or every
    best = sel.cheapest(chosen)
    count = f"{len(sel.fitting(chosen))} of {len(chosen)}"
    alternative = ""
    if chosen is not every:
        alt = sel.cheapest(sel.out_of_policy(every))
        if alt is not None and not (best is not None and sel.number(alt, "cost_per_million_tokens")
                                    >= sel.number(best, "cost_per_million_tokens")):
            alternative = (f"Quantized alternative (accuracy traded for memory): "
                           f"{fm.formats_text(alt.scenario)} on "
                           f"{fm.replica_text(plan, alt.scenario)}, "
                           f"{fm.text(alt, 'cost_per_million_tokens')}")
    if best is None:
        note = f"Nothing in the grid fits {batch} sequences of {fm.tokens_label(context)} tokens"
        if not chosen:
            note += "; TP cannot shard the model on any GPU in the grid."
        else:
            most = max(chosen, key=lambda e: sel.number(e, "max_sequences"))
            limit = int(plan.models.entries[model].number("max_position_embeddings"))
            if most.value("context_supported") is not True:
                note += (f": {fm.tokens_label(context)} tokens is beyond the model's context "
                         f"limit of {limit:,} tokens ({fm.tokens_label(limit)}), whatever the "
                         "memory.")
            elif not sel.number(most, "max_sequences") > 0:
                note += "; the weights do not fit any configuration's memory."
            else:
                note += (f": not enough memory for the KV cache; at most "
                         f"{fm.bare(most, 'max_sequences')} on "
                         f"{fm.config_text(plan, most.scenario)}.")
        return ans.Answer(fm.tokens_label(context), "", "", "", "", "", "", "", count, note,
                          alternative)
    return ans.Answer(fm.tokens_label(context), fm.scenario_key(best.scenario),
                      fm.replica_text(plan, best.scenario), fm.formats_text(best.scenario),
                      fm.text(best, "max_sequences"), fm.text(best, "decode_tokens_per_second"),
                      fm.text(best, "tokens_per_second_per_sequence"),
                      fm.text(best, "cost_per_million_tokens"), count, "", alternative)


def fit_cell_over_rows(plan: Plan, rows: list, model: str, gpu: str, tp: int) -> cap.FitCell:
    found = rows_where(plan, rows, model, gpu=gpu, tp=tp, batch=headline_batch(plan.grid))
    if not found:
        return cap.FitCell("TP does not shard", "skipped")
    for context in sorted(plan.grid.axes["context"], reverse=True):
        fits = [e for e in sel.fitting(found) if e.scenario.context == context]
        if fits:
            order = {w: i for i, w in enumerate(plan.grid.axes["weights"])}
            first = min(fits, key=lambda e: order[e.scenario.weights])
            return cap.FitCell(f"{fm.tokens_label(context)} · {fm.fmt_id(first.scenario.weights)}",
                               "fits")
    return cap.FitCell("does not fit", "nofit")


def cost_bars_over_rows(plan: Plan, rows: list) -> tuple[list, int]:
    context = reference_context(plan.grid, plan.view)
    found = rows_where(plan, rows, plan.view.model, context=context,
                       batch=headline_batch(plan.grid))
    best: dict = {}
    for env in sel.fitting(found):
        key = (env.scenario.gpu, env.scenario.tp)
        best[key] = sel.cheapest([best.get(key, env), env]) or env
    ranked = sorted(best.values(), key=lambda e: sel.number(e, "cost_per_million_tokens"))
    return ([(e.scenario, sel.number(e, "cost_per_million_tokens")) for e in ranked],
            len({(e.scenario.gpu, e.scenario.tp) for e in found}))


def test_html_selections_equal_those_over_every_row(plans: list[Plan],
                                                    default_plan: Plan) -> None:
    for plan in [*plans, default_plan]:
        rows = list(plan.rows)  # every row kept, as before streaming
        for model in plan.grid.axes["models"]:
            ref = sel.reference_row(plan, model)
            expected = reference_over_rows(plan, rows, model)
            assert (None if ref is None else (ref.env.scenario, ref.why)) == expected
            for context in plan.grid.axes["context"]:
                assert ans.answer_at(plan, model, context) == answer_over_rows(plan, rows, model,
                                                                                context)
        used = {(r.scenario.gpu, r.scenario.tp) for r in rows}
        assert cap.gpu_columns(plan) == [(g, tp) for g in plan.grid.axes["gpus"]
                                         for tp in sorted(plan.grid.axes["tp"]) if (g, tp) in used]
        for model in plan.grid.axes["models"]:
            for gpu, tp in cap.gpu_columns(plan):
                assert cap.fit_cell(plan, model, gpu, tp) == fit_cell_over_rows(plan, rows, model,
                                                                                 gpu, tp)
        bars, replicas = cost_bars_over_rows(plan, rows)
        s = plan.summary
        assert [(p.scenario, p.number) for p in sorted(s.cost_cheapest.values(),
                                                        key=lambda p: p.number)] == bars
        assert len(s.cost_replicas) == replicas
        assert s.rows == len(rows)


def test_the_html_reads_the_grid_once_and_keeps_no_row(tmp_path: Path) -> None:
    plan = build_plan(*SMALL)
    passes = []
    blocks = plan.rows.blocks

    def counted():  # type: ignore[no-untyped-def]
        passes.append(1)
        return blocks()

    plan.rows.blocks = counted  # type: ignore[method-assign]
    write_html(plan, tmp_path / "a.html")
    write_html(plan, tmp_path / "b.html")
    assert len(passes) == 1
    assert (tmp_path / "a.html").read_text() == (tmp_path / "b.html").read_text()
    kept = [v for v in vars(plan.summary).values() if isinstance(v, dict)]
    assert sum(map(len, kept)) < len(plan.rows)


# -- the Grid sheet streamed as XML -------------------------------------------------------------

def grid_part(plan: Plan, folder: Path, streamed: bool) -> bytes:
    """The Grid sheet's XML as the build writes it (rows streamed into the package), or with
    every row appended through openpyxl's writer as ``row_cells`` gives it."""
    wb = Workbook(write_only=True)
    styles.register(wb)
    w = SheetWriter(wb.create_sheet("Grid"))
    write_grid(w, plan)
    if not streamed:
        w.stream = None
        positions = lookup_positions(plan)
        for env in plan.rows:
            w.append(row_cells(env, w.row + 1, input_config(env), positions))
    folder.mkdir(parents=True, exist_ok=True)
    bare, out = folder / "bare.xlsx", folder / "out.xlsx"
    wb.save(bare)
    inject(bare, out, {"Grid": w.cached} if w.cached else {},
           {"Grid": w.stream} if w.stream else {})
    with zipfile.ZipFile(out) as z:
        return z.read(sheet_parts(z)["Grid"])


def test_streamed_grid_is_what_openpyxl_writes(tmp_path: Path, plans: list[Plan]) -> None:
    for i, plan in enumerate(plans):
        streamed = grid_part(plan, tmp_path / f"s{i}", True)
        assert streamed == grid_part(plan, tmp_path / f"o{i}", False)
        assert streamed.count(b"<row ") == len(plan.rows) + 1


def test_streamed_grid_reads_back_with_its_values(tmp_path: Path) -> None:
    """openpyxl reads the streamed rows' formulas and cached values (in both of its modes)."""
    from planner.build import WORKBOOK_NAME, run_build

    result = run_build(*SMALL, tmp_path, {})
    path = tmp_path / WORKBOOK_NAME
    formulas = load_workbook(path)["Grid"]
    values = load_workbook(path, data_only=True)["Grid"]
    plan = build_plan(*SMALL)
    first_quantity = len(CONFIG_COLUMNS) + len(LOOKUPS)
    count = 0
    for r, env in enumerate(plan.rows, start=2):
        assert formulas.cell(r, 1).value == env.scenario.model
        for j, q in enumerate(ROW_QUANTITIES, start=first_quantity + 1):
            assert str(formulas.cell(r, j).value).startswith("=")
            expected = env.value(q.name)
            got = values.cell(r, j).value
            if isinstance(expected, XlError):
                assert got == expected.code
            elif isinstance(expected, float) and math.isfinite(expected):
                assert got == pytest.approx(expected, rel=1e-15)
            else:
                assert got == expected
            count += 1
    assert formulas.max_row == len(plan.rows) + 1
    assert count == len(plan.rows) * len(ROW_QUANTITIES)
    assert result["rows"] == len(plan.rows)
