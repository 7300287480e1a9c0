"""Shared helpers: catalogs written from dictionaries, the shipped catalogs, reference cases."""

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
