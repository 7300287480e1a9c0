"""Loading the project's scripts (docs/generate_*.py, tools/*.py), which are not packages, as
modules the tests can call."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parent.parent


def load_script(name: str, path: Path) -> ModuleType:
    """The script at `path` imported as module `name` (registered in sys.modules, so its
    dataclasses resolve their annotations through it)."""
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module
