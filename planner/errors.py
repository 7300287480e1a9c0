"""Errors written for the user: each names the file, line, entry and field at fault."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


class PlannerError(Exception):
    """Base of every error the CLI reports as a message instead of a traceback."""


@dataclass
class Location:
    """Where a value came from: a file and line, and the catalog entry and field it belongs to."""

    path: Path | str | None = None
    line: int | None = None  # 1-based
    column: int | None = None  # 1-based
    entry: str | None = None
    field: str | None = None

    def describe(self) -> str:
        parts: list[str] = []
        if self.path is not None:
            parts.append(str(self.path))
        if self.line is not None:
            parts.append(f"line {self.line}" + (f", column {self.column}" if self.column else ""))
        if self.entry is not None:
            parts.append(f"entry '{self.entry}'")
        if self.field is not None:
            parts.append(f"field '{self.field}'")
        return ", ".join(parts)


class LocatedError(PlannerError):
    """A problem at a known place in an input file, shown with the offending line."""

    def __init__(self, location: Location, problem: str, hint: str | None = None) -> None:
        self.location = location
        self.problem = problem
        self.hint = hint
        super().__init__(self.render())

    def source_line(self) -> str | None:
        loc = self.location
        if loc.path is None or loc.line is None:
            return None
        try:
            lines = Path(loc.path).read_text(encoding="utf-8", errors="replace").splitlines()
        except OSError:
            return None
        if 1 <= loc.line <= len(lines):
            return f"  {loc.line:>4} | {lines[loc.line - 1]}"
        return None

    def render(self) -> str:
        where = self.location.describe()
        text = f"{where}: {self.problem}" if where else self.problem
        shown = self.source_line()
        if shown:
            text += "\n" + shown
        if self.hint:
            text += f"\n  hint: {self.hint}"
        return text


class CatalogError(LocatedError):
    """A model, GPU or grid file that cannot be used as it is."""


class ArgumentError(PlannerError):
    """A command-line value that cannot be used (unknown id, out-of-range number...)."""


class GridTooLargeError(PlannerError):
    """The grid expands to more rows than a worksheet can hold."""


# The third-party packages the planner imports, by top-level module: the package pip installs.
DEPENDENCIES = {"click": "click", "yaml": "PyYAML", "openpyxl": "openpyxl", "jinja2": "Jinja2",
                "markupsafe": "MarkupSafe", "lxml": "lxml", "et_xmlfile": "et_xmlfile"}


class MissingDependencyError(PlannerError):
    """A package the planner needs is not installed (or is too old to have what it uses)."""

    @classmethod
    def from_import_error(cls, exc: ImportError) -> MissingDependencyError | None:
        """The error to show for `exc` when it is a dependency's fault; None when the module
        that failed is the planner's own (a bug) or unknown."""
        name = (exc.name or "").split(".")[0]
        if name not in DEPENDENCIES:
            return None
        package = DEPENDENCIES[name]
        if isinstance(exc, ModuleNotFoundError):
            problem = f"the planner needs the Python package {package}, which is not installed"
        else:
            problem = (f"the planner needs a newer {package} than the one installed ({exc}); "
                       "see setup.cfg for the versions it supports")
        return cls(f"{problem}.\n  hint: install the planner with its dependencies: "
                   f"pip install -e .  (or pip install '{package}')")
