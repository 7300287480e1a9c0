"""Where the shipped catalogs and templates are.

The repository's top-level ``catalogs/`` and ``templates/`` are the one copy kept in git, edited
in place: running from a checkout (the README's editable install) reads them there. A wheel
carries a copy of both as package data under ``planner/_data/``, made when the wheel is built
(``setup.py``), and an installed planner reads that copy through :mod:`importlib.resources`.
"""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path

DATA_FOLDERS = ("catalogs", "templates")
_CHECKOUT = Path(__file__).resolve().parents[2]


def data_root() -> Path:
    """The folder holding ``catalogs/`` and ``templates/``: the checkout, else the package's
    own copy."""
    if (_CHECKOUT / "setup.cfg").is_file() and all(
            (_CHECKOUT / folder).is_dir() for folder in DATA_FOLDERS):
        return _CHECKOUT
    return Path(str(files("planner").joinpath("_data")))


DATA_ROOT = data_root()
