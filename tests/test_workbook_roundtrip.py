"""Finance's edits come back: `planner diff` finds every edited input and every overwritten
formula (and nothing in an untouched workbook), `planner import-workbook` writes the inputs back
as YAML, and a build from those files gives every number of the edited workbook as LibreOffice
recalculated it. `--assumptions FILE` is the file form of `--set`."""

from __future__ import annotations

import datetime as dt
import difflib
import json
import shutil
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner
from openpyxl import Workbook, load_workbook
from openpyxl.formula.translate import Translator

from planner.build import WORKBOOK_NAME, run_build
from planner.cli import cli
from planner.errors import PlannerError
from planner.outputs.workbook.fleet_sheets import SERVER_COLUMNS, WORKLOAD_COLUMNS
from planner.outputs.workbook.layout import GPU_COLUMNS, MODEL_COLUMNS
from planner.roundtrip.diff import RANKED_SHEETS, diff_workbook
from planner.roundtrip.importing import import_workbook
from tests.recalc import recalculate
from tests.test_workbook import compare, formula_cells, same

DATA = Path(__file__).parent / "data"
SMALL = {"models_path": DATA / "small-models.yaml", "gpus_path": DATA / "small-gpus.yaml",
         "grid_path": DATA / "small-grid.yaml"}
COLUMNS = {"Models": MODEL_COLUMNS, "GPUs": GPU_COLUMNS, "Servers": SERVER_COLUMNS,
           "Workloads": WORKLOAD_COLUMNS}

# Ten edits across the input sheets: (sheet, name or (entry id, field), new value). The small
# build holds the shipped servers and workloads of its two GPUs and three models.
TEN_EDITS = [
    ("Assumptions", "gpu_memory_utilization", 0.85),
    ("Assumptions", "electricity_usd_per_kwh", 0.12),
    ("Assumptions", "max_num_seqs", 512),  # 'auto' -> a number
    ("Formats", "bytes_per_param_fp8", 1.05),
    ("GPUs", ("h100-sxm", "price_per_hour_usd"), 3.1),
    ("GPUs", ("mi300x", "bandwidth_tb_s"), 5.0),
    ("Models", ("llama-3.1-8b", "max_position_embeddings"), 100000),
    ("Models", ("deepseek-v3", "draft_layers"), 1),  # a blank field filled in: a new YAML line
    ("Servers", ("hgx-h100-8", "price_usd"), 300000),
    ("Workloads", ("rag-8b-long-context", "rate_rps"), 30),
    ("Capacity", "view_gpu", "mi300x"),
]


def named_cell(wb, name: str):  # type: ignore[no-untyped-def]
    sheet, coord = wb.defined_names[name].attr_text.replace("$", "").split("!")
    return wb[sheet.strip("'")][coord]


def catalog_cell(wb, sheet: str, entry: str, field: str):  # type: ignore[no-untyped-def]
    ws = wb[sheet]
    row = next(r for r in range(2, ws.max_row + 1) if ws.cell(r, 1).value == entry)
    return ws.cell(row, COLUMNS[sheet].index(field) + 1)


def edit(wb, edits=TEN_EDITS) -> set[tuple[str, str]]:  # type: ignore[no-untyped-def]
    """Apply edits; the (sheet, cell) of each."""
    cells = set()
    for sheet, where, value in edits:
        cell = named_cell(wb, where) if isinstance(where, str) else catalog_cell(wb, sheet, *where)
        assert cell.parent.title == sheet
        assert cell.value != value
        cell.value = value
        cells.add((sheet, cell.coordinate))
    return cells


def compare_matched(expected: Path, actual: Path) -> list[str]:
    """Formula cells whose values differ (tests/test_workbook.py's compare), the rows of a sheet
    the build orders by a ranking (Sensitivity, by swing) matched by their name in column A:
    a rebuild from edited inputs may rank them otherwise."""
    exp, act = load_workbook(expected, data_only=True), load_workbook(actual, data_only=True)
    rows: dict[str, dict[object, int]] = {}
    for sheet in RANKED_SHEETS:
        if sheet in act.sheetnames:
            ws = act[sheet]
            rows[sheet] = {}
            for r in range(1, ws.max_row + 1):
                rows[sheet].setdefault(ws.cell(r, 1).value, r)
    bad = []
    for sheet, coord, formula in formula_cells(expected):
        cell = exp[sheet][coord]
        row = cell.row
        if sheet in rows:
            row = rows[sheet].get(exp[sheet].cell(cell.row, 1).value, cell.row)
        a, b = cell.value, act[sheet].cell(row, cell.column).value
        if not same(a, b):
            bad.append(f"{sheet}!{coord} (row {row} there) {formula[:80]}: {a!r} vs {b!r}")
    return bad


def save(wb, path: Path) -> Path:  # type: ignore[no-untyped-def]
    path.parent.mkdir(parents=True, exist_ok=True)
    wb.save(path)
    return path


@pytest.fixture(autouse=True)
def beside_the_small_catalogs(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """The workbooks are built from tests/data: run where they are found by name and sha256."""
    monkeypatch.chdir(DATA)


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("built")
    run_build(SMALL["models_path"], SMALL["gpus_path"], SMALL["grid_path"], out, {}, None)
    return out / WORKBOOK_NAME


def invoke(*args: object):  # type: ignore[no-untyped-def]
    return CliRunner().invoke(cli, [str(a) for a in args])


def said(result) -> str:  # type: ignore[no-untyped-def]
    """What the user reads: the output, and the message of a PlannerError (main prints it)."""
    error = result.exception
    return result.output + (str(error) if isinstance(error, PlannerError) else "")


# --- the round trip ------------------------------------------------------------------------

@pytest.mark.libreoffice
def test_import_then_rebuild_gives_every_number_of_the_edited_workbook(built, tmp_path) -> None:
    wb = load_workbook(built)
    edit(wb)
    edited = save(wb, tmp_path / "edited" / WORKBOOK_NAME)
    recalculated = recalculate(edited, tmp_path / "recalculated")  # as finance saves it
    folder = tmp_path / "imported"
    result = invoke("import-workbook", recalculated, "--to", folder)
    assert result.exit_code == 0, result.output
    assert "Rebuild it with:" in result.output
    args = ["build", "--out", tmp_path / "rebuilt", "-q"]
    args += [x for kind in ("assumptions", "models", "gpus", "servers", "workloads", "grid")
             for x in (f"--{kind}", folder / f"{kind}.yaml")]
    assert invoke(*args).exit_code == 0
    rebuilt = tmp_path / "rebuilt" / WORKBOOK_NAME
    assert sum(1 for _ in formula_cells(rebuilt)) > 5000
    # the order list shows the price date the import set for the prices edited (this month)
    mismatches = [m for m in compare_matched(rebuilt, recalculated)
                  if "INDEX(server_price_date," not in m]
    assert mismatches == [], "\n".join(mismatches[:20])
    assert compare(built, rebuilt) != []  # the edits really moved the numbers
    # and the files written hold every edit: nothing differs from them but the dates of the
    # prices edited, which the workbook still shows as they were
    d = diff_workbook(recalculated, folder)
    assert not d.formulas and not d.rows
    assert {c.name for c in d.inputs} == {"servers.hgx-h100-8.price_date",
                                          "gpus.h100-sxm.price_date"}


def test_import_keeps_comments_and_order_and_edits_values_in_place(built, tmp_path) -> None:
    wb = load_workbook(built)
    edit(wb)
    folder = tmp_path / "imported"
    result = import_workbook(save(wb, tmp_path / "edited.xlsx"), folder)
    assert {(w.sheet, w.name) for w in result.written if w.why == "edited"} == {
        (sheet, where if isinstance(where, str) and sheet in ("Assumptions", "Formats")
         else f"view.{where.removeprefix('view_')}" if isinstance(where, str)
         else f"{sheet.lower()}.{where[0]}.{where[1]}") for sheet, where, _ in TEN_EDITS}
    for name, source, changed, added in (("gpus.yaml", SMALL["gpus_path"], 2, 0),
                                         ("models.yaml", SMALL["models_path"], 1, 1),
                                         ("grid.yaml", SMALL["grid_path"], 1, 0)):
        old = without_price_audit(source.read_text()).splitlines()
        new = without_price_audit((folder / name).read_text()).splitlines()
        removed = [x for x in difflib.ndiff(old, new) if x.startswith("- ")]
        inserted = [x for x in difflib.ndiff(old, new) if x.startswith("+ ")]
        assert len(removed) == changed and len(inserted) == changed + added, name
        assert old[0].startswith("#") and new[0] == old[0]  # the header comment stays
    models = (folder / "models.yaml").read_text()
    assert "    max_position_embeddings: 100000\n" in models
    assert "    draft_layers: 1\n" in models
    assumptions = (folder / "assumptions.yaml").read_text()
    assert "  max_num_seqs: 512\n" in assumptions and "  bytes_per_param_fp8: 1.05\n" in assumptions
    # the shipped servers and workloads are copied with the entries the build kept
    servers = (folder / "servers.yaml").read_text()
    assert "    price_usd: 300000" in servers and "hgx-b200-8:" not in servers
    assert servers.startswith("# Server catalog for the capacity planner")


def without_price_audit(text: str) -> str:
    """A catalog's text without the fields an edited price dates and sources (a value may run
    on over indented lines)."""
    out, skipping = [], False
    for line in text.splitlines():
        key = line.strip().split(":")[0]
        if line.startswith("    ") and not line.startswith("     ") and key in (
                "price_date", "price_source", "source"):
            skipping = True
            continue
        if skipping and line.startswith("      "):
            continue
        skipping = False
        out.append(line)
    return "\n".join(out)


def test_an_edited_price_is_dated_and_sourced_as_edited_in_the_workbook(built, tmp_path) -> None:
    """Audit trail: a price typed into the workbook comes back with this month as its price date
    and a source that says it was edited in the workbook, when, and from what."""
    wb = load_workbook(built)
    edit(wb, [("Servers", ("hgx-h100-8", "price_usd"), 300000),
              ("GPUs", ("h100-sxm", "price_per_hour_usd"), 3.1),
              ("GPUs", ("mi300x", "bandwidth_tb_s"), 5.0)])  # not a price: no audit
    result = import_workbook(save(wb, tmp_path / "priced.xlsx"), tmp_path / "out")
    month, day = dt.date.today().strftime("%Y-%m"), dt.date.today().isoformat()
    servers = yaml.safe_load((tmp_path / "out" / "servers.yaml").read_text())["servers"]
    gpus = yaml.safe_load((tmp_path / "out" / "gpus.yaml").read_text())["gpus"]
    shipped = yaml.safe_load(SMALL["gpus_path"].read_text())["gpus"]
    server = servers["hgx-h100-8"]
    assert (server["price_usd"], str(server["price_date"])) == (300000, month)
    assert server["source"].endswith(
        f"; edited in the workbook priced.xlsx on {day} (price_usd 360800 -> 300000)")
    gpu = gpus["h100-sxm"]
    assert (gpu["price_per_hour_usd"], str(gpu["price_date"])) == (3.1, month)
    assert gpu["price_source"].startswith(shipped["h100-sxm"]["price_source"])
    assert "edited in the workbook priced.xlsx" in gpu["price_source"]
    assert gpus["mi300x"]["price_date"] == shipped["mi300x"]["price_date"]  # no price edited
    assert gpus["mi300x"].get("price_source") == shipped["mi300x"].get("price_source")
    audit = {w.name for w in result.written if w.why == "price edited"}
    assert audit == {"servers.hgx-h100-8.price_date", "servers.hgx-h100-8.source",
                     "gpus.h100-sxm.price_date", "gpus.h100-sxm.price_source"}


def test_set_values_the_build_recorded_are_baked_in(tmp_path) -> None:
    out = tmp_path / "out"
    run_build(SMALL["models_path"], SMALL["gpus_path"], SMALL["grid_path"], out,
              {"pue": 1.4, "gpus.mi300x.price_per_hour_usd": "2.2"}, None)
    folder = tmp_path / "imported"
    result = import_workbook(out / WORKBOOK_NAME, folder)
    assert [(w.name, w.why) for w in result.written] == [
        ("gpus.mi300x.price_per_hour_usd", "--set")]
    assert result.assumptions == {"pue": 1.4}
    assert "    price_per_hour_usd: 2.2\n" in (folder / "gpus.yaml").read_text()
    assert not diff_workbook(out / WORKBOOK_NAME, folder).changed


# --- diff -----------------------------------------------------------------------------------

PLANTED_FORMULAS = [("Grid", "M5", 123), ("Budget", "G22", "=1+1"), ("Models", "BC3", None),
                    ("Fleet", "AB3", 0.5)]


def test_diff_finds_every_edited_input_and_every_overwritten_formula(built, tmp_path) -> None:
    wb = load_workbook(built)
    inputs = edit(wb)
    for sheet, coord, value in PLANTED_FORMULAS:
        assert wb[sheet][coord].data_type == "f"
        wb[sheet][coord].value = value
    planted = save(wb, tmp_path / "planted.xlsx")
    d = diff_workbook(planted)
    assert {(c.sheet, c.cell) for c in d.inputs} == inputs
    assert {(f.sheet, f.cell) for f in d.formulas} == {(s, c) for s, c, _ in PLANTED_FORMULAS}
    assert {f.kind for f in d.formulas} == {"constant", "altered", "cleared"}
    gmu = next(c for c in d.inputs if c.name == "gpu_memory_utilization")
    assert (gmu.sheet, gmu.old, gmu.new) == ("Assumptions", 0.9, 0.85)
    result = invoke("diff", planted, "--json")
    assert result.exit_code == 1
    report = json.loads(result.output)
    assert len(report["inputs"]) == len(TEN_EDITS) and len(report["formulas"]) == 4
    text = invoke("diff", planted).output
    assert f"Assumptions!{gmu.cell}  gpu_memory_utilization  0.9 -> 0.85" in text
    assert gmu.cell == named_cell(load_workbook(built), "gpu_memory_utilization").coordinate
    assert "Grid!M5" in text and "replaced by the value 123" in text


def test_diff_reports_nothing_for_an_untouched_workbook(built) -> None:
    result = invoke("diff", built)
    assert result.exit_code == 0, result.output
    assert "No changes" in result.output
    assert json.loads(invoke("diff", built, "--json").output)["changed"] is False


@pytest.mark.libreoffice
def test_diff_reports_nothing_for_a_workbook_libreoffice_saved(built, tmp_path) -> None:
    """LibreOffice rewrites formulas ('Fleet'!A1 -> Fleet!A1, 1E+15, TRUE()) when it saves."""
    saved = recalculate(built, tmp_path / "saved")
    d = diff_workbook(saved)
    assert not d.changed, [(c.sheet, c.cell) for c in d.inputs] + [
        (f.sheet, f.cell, f.found) for f in d.formulas]


def test_diff_matches_sorted_grid_and_fleet_rows(built, tmp_path) -> None:
    wb = load_workbook(built)
    for sheet, a, b in (("Grid", 2, 40), ("Fleet", 3, 7)):  # swapped as a sort moves rows
        ws = wb[sheet]
        ra, rb = [c.value for c in ws[a]], [c.value for c in ws[b]]
        for i, (x, y) in enumerate(zip(ra, rb, strict=True), start=1):
            ws.cell(a, i).value = moved(y, b, a)
            ws.cell(b, i).value = moved(x, a, b)
    d = diff_workbook(save(wb, tmp_path / "sorted.xlsx"))
    assert not d.changed, [(f.sheet, f.cell) for f in d.formulas]


def moved(value, src: int, dst: int):  # type: ignore[no-untyped-def]
    if isinstance(value, str) and value.startswith("="):
        return Translator(value, origin=f"A{src}").translate_formula(f"A{dst}")
    return value


def test_diff_exit_status_2_when_it_cannot_compare(tmp_path) -> None:
    plain = tmp_path / "plain.xlsx"
    Workbook().save(plain)
    result = invoke("diff", plain)
    assert result.exit_code == 2
    assert "not a workbook written by the planner" in result.output
    assert invoke("diff", tmp_path / "missing.xlsx").exit_code == 2


def test_diff_says_where_the_catalogs_it_was_built_from_are_missing(built, tmp_path,
                                                                    monkeypatch) -> None:
    moved_away = tmp_path / "elsewhere" / WORKBOOK_NAME
    moved_away.parent.mkdir()
    shutil.copy(built, moved_away)
    monkeypatch.chdir(tmp_path)
    result = invoke("diff", moved_away)
    assert result.exit_code == 2
    assert "small-models.yaml" in result.output and "--against" in result.output
    assert invoke("diff", moved_away, "--against", DATA).exit_code == 0


# --- import refuses, and says where ----------------------------------------------------------

def test_import_refuses_a_workbook_the_planner_did_not_write(tmp_path) -> None:
    plain = tmp_path / "plain.xlsx"
    Workbook().save(plain)
    with pytest.raises(PlannerError, match="not a workbook written by the planner"):
        import_workbook(plain, tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_import_refuses_overwritten_formulas_unless_accepted(built, tmp_path) -> None:
    wb = load_workbook(built)
    edit(wb, TEN_EDITS[:1])
    wb["Grid"]["M5"].value = 123
    planted = save(wb, tmp_path / "planted.xlsx")
    result = invoke("import-workbook", planted, "--to", tmp_path / "refused")
    assert result.exit_code == 1
    assert "Grid!M5 (kv_row, row 5): the formula =MATCH($D5,kv_format_id,0) was replaced by " \
           "the value 123" in said(result)
    assert "--accept-overwritten Grid!M5" in said(result)
    assert not (tmp_path / "refused").exists()
    result = invoke("import-workbook", planted, "--to", tmp_path / "ok",
                    "--accept-overwritten", "grid!M5")
    assert result.exit_code == 0, result.output
    assert "dropped Grid!M5" in result.output
    assert "gpu_memory_utilization: 0.85" in (tmp_path / "ok" / "assumptions.yaml").read_text()
    wrong = invoke("import-workbook", planted, "--to", tmp_path / "x",
                   "--accept-overwritten", "Grid!M5,Grid!M6")
    assert wrong.exit_code == 1 and "Grid!M6" in said(wrong)


@pytest.mark.parametrize(("sheet", "where", "value", "message"), [
    ("Assumptions", "gpu_memory_utilization", 1.5,
     "cell {cell} (gpu_memory_utilization): out of range; expected fraction between 0.05 and 1"),
    ("Assumptions", "engine", "vllm2", "cell {cell} (engine): must be one of vllm, sglang"),
    ("Models", ("llama-3.1-8b", "hidden_size"), 4096.5,
     "(models.llama-3.1-8b.hidden_size): must be a whole number, got 4096.5"),
    ("GPUs", ("h100-sxm", "price_per_hour_usd"), "cheap",
     "(gpus.h100-sxm.price_per_hour_usd): must be a number, got 'cheap'"),
    ("GPUs", ("h100-sxm", "memory_gb"), None,
     "(gpus.h100-sxm.memory_gb): is blank, but every entry needs this field"),
    ("Models", ("llama-3.1-8b", "num_key_value_heads"), 7,
     "(models.llama-3.1-8b.num_key_value_heads): 32 attention heads are not divisible by 7"),
    ("Capacity", "view_tp", 0, "(view.tp): must be a whole number greater than 0"),
])
def test_import_refuses_wrong_values_at_their_cell(built, tmp_path, sheet, where, value,
                                                   message) -> None:
    wb = load_workbook(built)
    cell = named_cell(wb, where) if isinstance(where, str) else catalog_cell(wb, sheet, *where)
    cell.value = value
    message = message.format(cell=cell.coordinate)  # where the workbook put the named input
    result = invoke("import-workbook", save(wb, tmp_path / "bad.xlsx"), "--to", tmp_path / "out")
    assert result.exit_code == 1
    assert f"sheet {sheet}, " in said(result) and message in said(result), said(result)
    assert not (tmp_path / "out").exists()


def test_import_refuses_edits_no_yaml_file_holds(built, tmp_path) -> None:
    wb = load_workbook(built)
    wb["Grid"]["F2"].value = 4096  # a grid row's context: the grid file holds axes, not rows
    result = invoke("import-workbook", save(wb, tmp_path / "row.xlsx"), "--to", tmp_path / "o")
    assert result.exit_code == 1
    assert "Grid!F2 (context, row 2): edited 8192 -> 4096, but no YAML file holds" in \
        said(result)


# --- --assumptions FILE ------------------------------------------------------------------------

def test_assumptions_file_is_the_file_form_of_set(tmp_path) -> None:
    path = tmp_path / "assumptions.yaml"
    path.write_text("# ours\nassumptions:\n  gpu_memory_utilization: 0.85\n  engine: sglang\n"
                    "  gpus.h100-sxm.price_per_hour_usd: 3.5\n")
    calc = ["calc", "--model", "llama-3.1-8b", "--gpu", "h100-sxm", "--json"]
    from_file = json.loads(invoke(*calc, "--assumptions", path).output)
    from_set = json.loads(invoke(*calc, "--set", "gpu_memory_utilization=0.85", "--set",
                                 "engine=sglang", "--set",
                                 "gpus.h100-sxm.price_per_hour_usd=3.5").output)
    assert from_file == from_set
    wins = json.loads(invoke(*calc, "--assumptions", path, "--set",
                             "gpu_memory_utilization=0.8").output)
    assert wins["assumptions"]["gpu_memory_utilization"] == 0.8
    assert wins["assumptions"]["engine"] == "sglang"
    sized = invoke("size", "--assumptions", path, "--set", "pue=1.5", "--json")
    assert sized.exit_code == 0, sized.output


def test_assumptions_file_errors_name_the_file_and_line(tmp_path) -> None:
    path = tmp_path / "bad.yaml"
    for body, message in (("  pue: 7\n", "out of range"),
                          ("  pues: 1.3\n", "unknown assumption (did you mean 'pue'?)"),
                          ("  gpus.h100-sxm.price_per_hour_usd: -1\n", "must not be negative")):
        path.write_text("assumptions:\n" + body)
        result = invoke("build", "--assumptions", path, "--out", tmp_path / "out", "-q")
        assert result.exit_code == 1
        assert f"{path}, line 2" in str(result.exception) and message in str(result.exception)
    assert not (tmp_path / "out").exists()


def test_a_build_from_an_assumptions_file_diffs_clean(tmp_path) -> None:
    path = tmp_path / "assumptions.yaml"
    path.write_text("assumptions:\n  pue: 1.4\n  max_num_seqs: 256\n")
    out = tmp_path / "out"
    args = ["build", "--models", SMALL["models_path"], "--gpus", SMALL["gpus_path"],
            "--grid", SMALL["grid_path"], "--assumptions", path, "--out", out, "-q"]
    assert invoke(*args).exit_code == 0
    about = load_workbook(out / WORKBOOK_NAME)["About"]
    assert any(r[1] == "pue=1.4, max_num_seqs=256.0" for r in about.iter_rows(values_only=True))
    assert invoke("diff", out / WORKBOOK_NAME).exit_code == 0


def kept_in_memory_against_the_file(workbook: Path) -> tuple[list[str], int]:
    """Every cell `workbook_cells` keeps for a rebuild of `workbook` (what `planner diff`
    compares with, no file written) against the file read back as diff reads it: the cells
    that differ (the About sheet's build time aside) and how many were compared."""
    from planner.outputs.workbook import SHEET_ORDER, workbook_cells
    from planner.plan.plan import build_plan
    from planner.roundtrip.compare import same_value
    from planner.roundtrip.reader import open_workbook, read_recorded, read_sheet, sheet_styles
    from planner.roundtrip.sources import resolve_sources

    book = open_workbook(workbook)
    sources = resolve_sources(read_recorded(workbook, book), workbook, None)
    p = sources.paths
    plan = build_plan(p["models"], p["gpus"], p["grid"], sources.overrides,
                      workloads_path=p["workloads"], servers_path=p["servers"])
    stamp = f"planner {plan.version} on "
    plan.generated = next(v for v, _ in read_sheet(book["About"], None).values()
                          if isinstance(v, str) and v.startswith(stamp)).removeprefix(stamp)
    kept = workbook_cells(plan)
    styles = sheet_styles(book)
    bad, count = [], 0
    assert sorted(kept.defined_names.keys()) == sorted(book.defined_names.keys())
    for sheet in SHEET_ORDER:
        read, memory = read_sheet(book[sheet], styles), kept.sheet(sheet)
        for key in sorted(set(read) | set(memory)):
            a, b = read.get(key), memory.get(key)
            count += 1
            if a is None or b is None or a[1] != b[1] or not same_value(a[0], b[0]):
                bad.append(f"{sheet} {key}: file {a!r}, memory {b!r}")
    book.close()
    return bad, count


def test_the_rebuild_diff_keeps_in_memory_is_the_workbook_read_back(built) -> None:
    """`planner diff` no longer writes and re-reads the rebuild: each sheet writer records its
    cells and the Grid's rows come from their templates. Every cell, its kind (formula, input,
    other) and its value or formula text equal the written workbook read back."""
    bad, count = kept_in_memory_against_the_file(built)
    assert not bad, bad[:10]
    assert count > 10_000


@pytest.mark.slow
def test_the_default_rebuild_in_memory_is_the_default_workbook_read_back(
        default_workbook: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.chdir(default_workbook.parent)
    bad, count = kept_in_memory_against_the_file(default_workbook)
    assert not bad, bad[:10]
    assert count > 1_000_000
