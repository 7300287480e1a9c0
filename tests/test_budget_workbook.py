"""The Budget sheet's choice is a live formula: editing a server price, a cloud price or the
electricity rate in the workbook, recalculated by LibreOffice, gives the Budget a rebuild from
the edited YAML gives, including when the recommended configuration, the order list or the
verdict changes."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from openpyxl import load_workbook

from planner.build import WORKBOOK_NAME, run_build
from planner.inputs.catalog import DEFAULT_CLOUDS
from planner.outputs.workbook.budget_sheet import BudgetLayout
from tests.recalc import recalculate

DATA = Path(__file__).parent / "data"
SMALL = {"models_path": DATA / "small-models.yaml", "gpus_path": DATA / "small-gpus.yaml",
         "grid_path": DATA / "golden-grid.yaml"}
SERVERS = {
    "hgx-h100": {"gpu": "h100-sxm", "gpus_per_server": 8, "price_usd": 250000,
                 "power_kw": 10.2, "rack_units": 8, "price_date": "2026-01", "source": "test"},
    "mi300x-8": {"gpu": "mi300x", "gpus_per_server": 8, "price_usd": 200000,
                 "power_kw": 10.8, "rack_units": 8, "price_date": "2026-01", "source": "test"},
}
WORKLOADS = {"chat": {"model": "llama-3.1-8b", "rate_rps": 30, "prompt_tokens": 2000,
                      "output_tokens": 300, "ttft_s": 1.0, "itl_s": 0.05,
                      "spare_replicas": 1, "source": "test"}}
pytestmark = pytest.mark.libreoffice


def write(folder: Path, servers: dict) -> dict[str, Path]:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "servers.yaml").write_text(yaml.safe_dump({"servers": servers}))
    (folder / "workloads.yaml").write_text(yaml.safe_dump({"workloads": WORKLOADS}))
    return {"servers_path": folder / "servers.yaml", "workloads_path": folder / "workloads.yaml"}


def build(folder: Path, servers: dict, overrides: dict | None = None,
          clouds: Path = DEFAULT_CLOUDS) -> Path:
    paths = write(folder / "in", servers)
    run_build(SMALL["models_path"], SMALL["gpus_path"], SMALL["grid_path"], folder / "out",
              overrides or {}, None, **paths, clouds_path=clouds)
    return folder / "out" / WORKBOOK_NAME


LAYOUT = BudgetLayout(list(WORKLOADS))


def budget(path: Path) -> list[list[object]]:
    """Every row of the Budget below the checks line: the decision, each table, the totals."""
    ws = load_workbook(path, data_only=True)["Budget"]
    return [[c.value for c in row] for row in ws.iter_rows(min_row=4, max_row=LAYOUT.last_row)]


def value(path: Path, table: str, key: str, workload: str = "chat") -> object:
    ws = load_workbook(path, data_only=True)["Budget"]
    return ws[LAYOUT.cell(table, key, workload).replace("$", "")].value


def same_rows(a: list[list[object]], b: list[list[object]]) -> bool:
    for ra, rb in zip(a, b, strict=True):
        for x, y in zip(ra, rb, strict=True):
            numbers = (int, float)
            if isinstance(x, numbers) and isinstance(y, numbers) and not isinstance(x, bool):
                if abs(x - y) > 1e-9 * max(1.0, abs(x)):
                    return False
            elif x != y:
                return False
    return True


def servers_row(wb, server_id: str) -> int:  # type: ignore[no-untyped-def]
    ws = wb["Servers"]
    return next(r for r in range(2, ws.max_row + 1) if ws.cell(r, 1).value == server_id)


def test_editing_a_server_price_changes_the_choice_as_a_rebuild_does(tmp_path) -> None:
    base = build(tmp_path / "base", SERVERS)
    chosen = value(base, "choice", "server")
    assert chosen in SERVERS and value(base, "order", "server") == chosen
    dearer = {k: dict(v) for k, v in SERVERS.items()}
    dearer[chosen]["price_usd"] = 5_000_000
    wb = load_workbook(base)
    ws = wb["Servers"]
    header = [c.value for c in ws[1]]
    ws.cell(servers_row(wb, chosen), header.index("Price [USD]") + 1).value = 5_000_000
    edited = tmp_path / "edited" / WORKBOOK_NAME
    edited.parent.mkdir()
    wb.save(edited)
    recalculated = recalculate(edited, tmp_path / "recalculated")
    rebuilt = build(tmp_path / "rebuilt", dearer)
    assert same_rows(budget(recalculated), budget(rebuilt))
    assert value(rebuilt, "choice", "server") != chosen  # the recommendation really changed
    # and the order list follows: another server, its own unit price, quantity × unit price
    assert value(recalculated, "order", "server") != chosen
    quantity = value(recalculated, "order", "quantity")
    unit = value(recalculated, "order", "unit_price")
    assert unit == SERVERS[value(recalculated, "order", "server")]["price_usd"]
    assert value(recalculated, "order", "extended_price") == quantity * unit  # type: ignore[operator]


def test_editing_a_server_price_changes_the_order_list_as_a_rebuild_does(tmp_path) -> None:
    """A price edited on the Servers sheet, the choice unchanged: the order list's unit price,
    extended price, capex and the totals follow."""
    base = build(tmp_path / "base", SERVERS)
    chosen = value(base, "choice", "server")
    cheaper = {k: dict(v) for k, v in SERVERS.items()}
    cheaper[chosen]["price_usd"] = SERVERS[chosen]["price_usd"] - 10_000
    wb = load_workbook(base)
    ws = wb["Servers"]
    header = [c.value for c in ws[1]]
    ws.cell(servers_row(wb, chosen), header.index("Price [USD]") + 1).value = \
        cheaper[chosen]["price_usd"]
    edited = tmp_path / "edited" / WORKBOOK_NAME
    edited.parent.mkdir()
    wb.save(edited)
    recalculated = recalculate(edited, tmp_path / "recalculated")
    rebuilt = build(tmp_path / "rebuilt", cheaper)
    assert same_rows(budget(recalculated), budget(rebuilt))
    assert value(recalculated, "order", "unit_price") == cheaper[chosen]["price_usd"]
    assert value(recalculated, "order", "capex") < value(base, "order", "capex")  # type: ignore[operator]


PRICES = ("on_demand_usd_per_hour", "reserved_1y_usd_per_hour", "reserved_3y_usd_per_hour")


def small_clouds(folder: Path, gpu: str = "", factor: float = 1.0) -> Path:
    """The shipped cloud offers for the small GPUs (as the default build keeps them), the
    prices of every offer for `gpu` times `factor` (so the cheapest offer stays the cheapest)."""
    gpus = yaml.safe_load(SMALL["gpus_path"].read_text())["gpus"]
    catalog = yaml.safe_load(DEFAULT_CLOUDS.read_text())
    catalog["clouds"] = {k: ({**c, **{p: c[p] * factor for p in PRICES}} if c["gpu"] == gpu
                             else c)
                         for k, c in catalog["clouds"].items() if c["gpu"] in gpus}
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "clouds.yaml"
    path.write_text(yaml.safe_dump(catalog, sort_keys=False))
    return path


def test_editing_cloud_prices_flips_the_verdict_as_a_rebuild_does(tmp_path) -> None:
    base = build(tmp_path / "base", SERVERS, clouds=small_clouds(tmp_path / "clouds"))
    gpu, verdict = value(base, "choice", "gpu"), value(base, "decision", "verdict")
    offer = value(base, "decision", "cloud_offer")
    assert offer
    factor = 100.0 if verdict != "buy" else 0.001  # renting made dear where it won, or cheap
    wb = load_workbook(base)
    ws = wb["Clouds"]
    header = [str(c.value) for c in ws[1]]
    columns = [next(i for i, h in enumerate(header, 1) if h.startswith(p)) for p in PRICES]
    for row in range(2, ws.max_row + 1):
        if ws.cell(row, header.index("gpu [id]") + 1).value == gpu:
            for column in columns:
                ws.cell(row, column).value = ws.cell(row, column).value * factor
    edited = tmp_path / "edited" / WORKBOOK_NAME
    edited.parent.mkdir()
    wb.save(edited)
    recalculated = recalculate(edited, tmp_path / "recalculated")
    rebuilt = build(tmp_path / "rebuilt", SERVERS,
                    clouds=small_clouds(tmp_path / "edited-clouds", str(gpu), factor))
    assert same_rows(budget(recalculated), budget(rebuilt))
    flipped = value(recalculated, "decision", "verdict")
    assert flipped != verdict and (flipped == "buy") == (verdict != "buy")
    assert value(recalculated, "decision", "cloud_offer") == offer


def test_editing_the_electricity_rate_equals_rebuilding_with_set(tmp_path) -> None:
    base = build(tmp_path / "base", SERVERS)
    wb = load_workbook(base)
    sheet, coord = wb.defined_names["electricity_usd_per_kwh"].attr_text.replace(
        "$", "").split("!")
    wb[sheet.strip("'")][coord].value = 0.3
    edited = tmp_path / "edited" / WORKBOOK_NAME
    edited.parent.mkdir()
    wb.save(edited)
    recalculated = recalculate(edited, tmp_path / "recalculated")
    rebuilt = build(tmp_path / "rebuilt", SERVERS, {"electricity_usd_per_kwh": 0.3})
    assert same_rows(budget(recalculated), budget(rebuilt))
    assert not same_rows(budget(base), budget(rebuilt))
