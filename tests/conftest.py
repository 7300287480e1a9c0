"""Shared helpers: catalogs written from dictionaries, the shipped catalogs, reference cases, and
the full default workbook built and recalculated once a session for the tests that only read
it."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from planner.inputs.catalog import load_gpus, load_models
from planner.inputs.entries import Catalog
from planner.inputs.scenario import Scenario
from planner.plan.calc import evaluate
from tests import engines

DATA = Path(__file__).parent / "data"
REFERENCE_CASES = yaml.safe_load((DATA / "reference-cases.yaml").read_text())["cases"]

# Fields the reference cases leave out because their figures do not depend on them.
MODEL_FILLER = {"source": "reference case", "intermediate_size": 1, "vocab_size": 1}
GPU_FILLER = {"source": "reference case", "gpus_per_node": 8, "price_per_hour_usd": 1.0,
              "price_date": "2026-01"}


def write_catalog(folder: Path, section: str, entries: dict[str, dict]) -> Path:
    path = folder / f"{section}.yaml"
    path.write_text(yaml.safe_dump({section: entries}, sort_keys=False))
    return path


def catalogs_for(folder: Path, model: dict, gpu: dict) -> tuple[Catalog, Catalog]:
    models = write_catalog(folder, "models", {"m": {**MODEL_FILLER, **model}})
    gpus = write_catalog(folder, "gpus", {"g": {**GPU_FILLER, **gpu}})
    return load_models(models), load_gpus(gpus)


@pytest.fixture(scope="session")
def default_workbook(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The full default workbook (`planner build` with the shipped catalogs), built once a
    session: tests read it, never change it."""
    from planner.build import WORKBOOK_NAME, run_build
    from planner.inputs.catalog import DEFAULT_GPUS, DEFAULT_MODELS
    from planner.inputs.grid import DEFAULT_GRID

    out = tmp_path_factory.mktemp("default-workbook")
    run_build(DEFAULT_MODELS, DEFAULT_GPUS, DEFAULT_GRID, out, {}, None)
    return out / WORKBOOK_NAME


def saved_by_openpyxl(src: Path, dst: Path) -> Path:
    """`src` loaded and saved by openpyxl, which keeps the formulas and drops every stored
    value: what a spreadsheet engine then shows, it computed from blank."""
    from openpyxl import load_workbook

    dst.parent.mkdir(parents=True, exist_ok=True)
    load_workbook(src).save(dst)
    return dst


@pytest.fixture(scope="session")
def default_cold_libreoffice(default_workbook: Path,
                             tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The default workbook with no stored values, recalculated by LibreOffice on load (once a
    session; the tests that ask for it carry @pytest.mark.libreoffice)."""
    from tests.recalc import recalculate

    folder = tmp_path_factory.mktemp("default-cold-libreoffice")
    blank = saved_by_openpyxl(default_workbook, folder / "blank" / default_workbook.name)
    return recalculate(blank, folder / "recalculated")


@pytest.fixture(scope="session")
def default_cold_gnumeric(default_workbook: Path,
                          tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The default workbook with its stored values stripped, recalculated by Gnumeric (once a
    session; the tests that ask for it carry @pytest.mark.gnumeric)."""
    from tests.recalc import recalculate_gnumeric

    return recalculate_gnumeric(default_workbook, tmp_path_factory.mktemp("default-cold-gnumeric"))


@pytest.fixture(scope="session")
def shipped() -> tuple[Catalog, Catalog]:
    return load_models(), load_gpus()


def run(shipped: tuple[Catalog, Catalog], assumptions: dict | None = None, **scenario):
    """Evaluate a configuration of the shipped catalogs."""
    models, gpus = shipped
    return evaluate(Scenario(**scenario), models, gpus, assumptions)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    engines.mark_engine_tests(items)


def pytest_runtest_setup(item: pytest.Item) -> None:
    engines.running[:] = [item]


def pytest_runtest_teardown(item: pytest.Item) -> None:
    engines.running.clear()
