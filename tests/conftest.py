"""Shared helpers: catalogs written from dictionaries, the shipped catalogs, reference cases,
and what the shipped catalogs give, computed once per session: the default build (and its cold
recalculation, for the tests that only read it), its plan and `planner size --json` (each takes
seconds; the tests that read them do not change them)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from planner.build import HTML_NAME, WORKBOOK_NAME, run_build
from planner.cli import cli
from planner.inputs.catalog import (
    DEFAULT_GPUS,
    DEFAULT_MODELS,
    DEFAULT_WORKLOADS,
    load_gpus,
    load_models,
)
from planner.inputs.entries import Catalog
from planner.inputs.grid import DEFAULT_GRID
from planner.inputs.scenario import Scenario
from planner.plan.calc import evaluate
from planner.plan.plan import Plan, build_plan
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


def one_workload(folder: Path, workload: str) -> Path:
    """A workloads catalog holding one shipped workload: a build or plan of the shipped
    catalogs then sizes that one, not all five with their sensitivity (seconds each time),
    where a test's point is not the sizing."""
    shipped = yaml.safe_load(DEFAULT_WORKLOADS.read_text())["workloads"]
    return write_catalog(folder, "workloads", {workload: shipped[workload]})


def catalogs_for(folder: Path, model: dict, gpu: dict) -> tuple[Catalog, Catalog]:
    models = write_catalog(folder, "models", {"m": {**MODEL_FILLER, **model}})
    gpus = write_catalog(folder, "gpus", {"g": {**GPU_FILLER, **gpu}})
    return load_models(models), load_gpus(gpus)


@pytest.fixture(scope="session")
def default_workbook(default_build: Path) -> Path:
    """The full default workbook (`planner build` with the shipped catalogs), built once a
    session with the HTML page (default_build): tests read it, never change it."""
    return default_build / WORKBOOK_NAME


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


@pytest.fixture(scope="session")
def default_build(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The folder `planner build` writes with every default: the workbook and the HTML page.
    Read it; write anything else to a test's own tmp_path."""
    out = tmp_path_factory.mktemp("default-build")
    result = run_build(DEFAULT_MODELS, DEFAULT_GPUS, DEFAULT_GRID, out, {}, None)
    assert result["files"] == [str(out / WORKBOOK_NAME), str(out / HTML_NAME)]
    return out


@pytest.fixture(scope="session")
def default_plan() -> Plan:
    """The plan of the default build (the shipped catalogs and grid). Its rows are evaluated
    whenever read and its caches hold the same values whoever fills them; build your own
    plan to patch or change one."""
    return build_plan(DEFAULT_MODELS, DEFAULT_GPUS, DEFAULT_GRID)


@pytest.fixture(scope="session")
def sized_json() -> dict:
    """What `planner size --json` prints for the shipped catalogs."""
    result = CliRunner().invoke(cli, ["size", "--json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


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
