"""The test tiers: tests that run a spreadsheet engine or a browser carry its mark
(``libreoffice``, ``gnumeric``, ``chromium``), and each of those implies ``engines``; tests that
need the whole default build or size every shipped workload again are marked ``slow``. So
``pytest -m "not engines and not slow"`` is the fast tier, and the whole suite (no ``-m``) runs
everything. A test that calls an engine without its mark fails with a message naming the mark,
so the fast tier cannot quietly start running engines."""

from __future__ import annotations

import pytest

ENGINE_MARKS = ("libreoffice", "gnumeric", "chromium")

running: list[pytest.Item] = []  # the test being set up or run (conftest keeps it)


def mark_engine_tests(items: list[pytest.Item]) -> None:
    for item in items:
        if any(item.get_closest_marker(m) for m in ENGINE_MARKS):
            item.add_marker(pytest.mark.engines)


def require_marked(engine: str) -> None:
    """Fail the running test unless it carries the engine's mark."""
    if running and running[-1].get_closest_marker(engine) is None:
        pytest.fail(f"{running[-1].nodeid} runs {engine} but is not marked "
                    f"@pytest.mark.{engine}; mark it so the fast tier "
                    "(-m 'not engines and not slow') leaves it out")
