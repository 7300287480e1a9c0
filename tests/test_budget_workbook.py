"""The Budget sheet's choice is a live formula: editing a server price or the electricity rate
in the workbook, recalculated by LibreOffice, gives the Budget a rebuild from the edited YAML
gives, including when the recommended configuration changes."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from openpyxl import load_workbook

from planner.build import WORKBOOK_NAME, run_build
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


def build(folder: Path, servers: dict, overrides: dict | None = None) -> Path:
    paths = write(folder / "in", servers)
    run_build(SMALL["models_path"], SMALL["gpus_path"], SMALL["grid_path"], folder / "out",
              overrides or {}, None, **paths)
    return folder / "out" / WORKBOOK_NAME


def budget(path: Path) -> list[list[object]]:
    ws = load_workbook(path, data_only=True)["Budget"]
    return [[c.value for c in row] for row in ws.iter_rows(min_row=5, max_row=5)]


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
    chosen = budget(base)[0][2]
    assert chosen in SERVERS
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
    assert budget(rebuilt)[0][2] != chosen  # the recommendation really changed


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
