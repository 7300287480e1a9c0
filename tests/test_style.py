"""The code stays lint-clean and type-checked (ruff and mypy, configured in the repo)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).parent.parent


@pytest.mark.parametrize("command", [
    ["ruff", "check", "planner", "tests", "bench"],
    [sys.executable, "-m", "mypy", "planner"],
], ids=["ruff", "mypy"])
def test_tool_passes(command: list[str]) -> None:
    if command[0] == "ruff" and shutil.which("ruff") is None:
        pytest.skip("ruff is not installed (pip install -e '.[test]')")
    result = subprocess.run(command, cwd=ROOT, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
