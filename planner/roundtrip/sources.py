"""Where the catalogs are that a workbook was built from: found by the file name and sha256
its About sheet recorded, in the shipped catalogs, the workbook's folder and the current folder,
or taken from an --against folder, with the overrides to rebuild it with.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path

from planner.roundtrip.reader import Recorded, WorkbookError

SOURCE_KINDS = ("models", "gpus", "grid", "servers", "workloads")
FILE_NAMES = {"models": "models.yaml", "gpus": "gpus.yaml", "grid": "grid.yaml",
              "servers": "servers.yaml", "workloads": "workloads.yaml"}


@dataclass
class Sources:
    """The files and overrides a comparison rebuilds from, and where each was found."""

    paths: dict[str, Path]
    overrides: dict[str, float | str]
    notes: list[str] = field(default_factory=list)
    assumptions_file: Path | None = None


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _default_paths() -> dict[str, Path]:
    from planner.inputs.catalog import (
        DEFAULT_GPUS,
        DEFAULT_MODELS,
        DEFAULT_SERVERS,
        DEFAULT_WORKLOADS,
    )
    from planner.inputs.grid import DEFAULT_GRID

    return {"models": DEFAULT_MODELS, "gpus": DEFAULT_GPUS, "grid": DEFAULT_GRID,
            "servers": DEFAULT_SERVERS, "workloads": DEFAULT_WORKLOADS}


def _canonical(path: Path) -> Path:
    """The shipped path itself when `path` is that file: the build treats it specially."""
    for default in _default_paths().values():
        if path.resolve() == default.resolve():
            return default
    return path


def resolve_sources(recorded: Recorded, workbook: Path, against: Path | None = None) -> Sources:
    """Find the catalogs a workbook was built from: by name and sha256 in the shipped catalogs,
    the workbook's folder and the current folder; `against` overrides with what it holds."""
    from planner.inputs.settings import load_assumptions_file

    defaults = _default_paths()
    shipped_dir = defaults["models"].parent
    search = [shipped_dir, workbook.parent, Path.cwd()]
    sources = Sources({}, dict(recorded.overrides))
    if against is not None and not against.is_dir():
        raise WorkbookError(workbook, f"--against {against}: not a folder",
                            hint="pass the folder holding the catalogs to compare with")
    for kind in SOURCE_KINDS:
        name, sha, cell = recorded.files.get(kind, (None, None, None))
        if against is not None:
            found = [p for p in (against / FILE_NAMES[kind], against / (name or FILE_NAMES[kind]))
                     if p.is_file()]
            if found:
                sources.paths[kind] = _canonical(found[0])
                if sha is not None and _sha256(found[0]) != sha:
                    sources.notes.append(f"{kind}: {found[0]} is not the file the workbook was "
                                         "built from (another sha256)")
                continue
        if name is None:
            sources.paths[kind] = defaults[kind]
            sources.notes.append(f"{kind}: not recorded in the workbook; compared with the "
                                 f"shipped {defaults[kind].name}")
            continue
        candidates = [d / name for d in search if (d / name).is_file()]
        match = next((p for p in candidates if sha is None or _sha256(p) == sha), None)
        if match is None:
            what = {"models": "model catalog", "gpus": "GPU catalog", "grid": "grid",
                    "servers": "server catalog", "workloads": "workload catalog"}[kind]
            if candidates:
                problem = (f"the {what} {name} it was built from has changed since "
                           f"({candidates[0]} has another sha256 than the recorded "
                           f"{(sha or '')[:12]}…)")
                hint = (f"pass --against {candidates[0].parent} to compare with the {what} as it "
                        "is now, or --against the folder holding the one it was built from")
            else:
                problem = (f"the {what} {name} it was built from is in none of "
                           f"{', '.join(str(d) for d in search)}")
                hint = ("run it from the folder holding them, or pass planner diff --against "
                        "DIR, the folder holding the catalogs to compare with")
            raise WorkbookError(workbook, problem, sheet="About", cell=cell, hint=hint)
        sources.paths[kind] = _canonical(match)
    if against is not None and (against / "assumptions.yaml").is_file():
        sources.assumptions_file = against / "assumptions.yaml"
        sources.overrides = load_assumptions_file(sources.assumptions_file)
    return sources
