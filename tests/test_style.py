"""The code stays lint-clean and type-checked (ruff and mypy, configured in the repo).

Each tool runs as a module of the Python running the tests (``python -m ruff``), so a missing
console script on PATH cannot turn the check into a skip; a missing tool skips with the reason,
and fails under CI=true.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).parent.parent


@pytest.mark.parametrize("tool,args", [
    ("ruff", ["check", "."]),
    ("mypy", ["planner"]),
], ids=["ruff", "mypy"])
def test_tool_passes(tool: str, args: list[str]) -> None:
    if importlib.util.find_spec(tool) is None:
        if os.environ.get("CI") == "true":
            pytest.fail(f"{tool} is required when CI=true (pip install -e '.[test]')")
        pytest.skip(f"{tool} is not installed (pip install -e '.[test]')")
    result = subprocess.run([sys.executable, "-m", tool, *args], cwd=ROOT, capture_output=True,
                            text=True)
    assert result.returncode == 0, result.stdout + result.stderr
