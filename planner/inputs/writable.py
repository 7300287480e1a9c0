"""Where a command will write, checked before it does any work: `build --out DIR`,
`import --to FILE`. A folder that cannot be written (read-only, a file, /dev/null) is refused at
once with its name, instead of after a minute's build or as a failure on a temporary file."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from planner.errors import ArgumentError


def _existing_ancestor(path: Path) -> Path:
    """The path itself or its nearest ancestor that exists."""
    here = path.absolute()
    while not here.exists() and here != here.parent:
        here = here.parent
    return here


def _probe(folder: Path) -> str | None:
    """Why a file cannot be created in `folder` (its OS error), or None when it can: tried for
    real, since permission bits do not tell (root writes through them; a read-only mount
    does not say so)."""
    try:
        fd, name = tempfile.mkstemp(prefix=".planner-probe-", dir=folder)
    except OSError as exc:
        return exc.strerror or str(exc)
    os.close(fd)
    os.unlink(name)
    return None


def check_output_folder(text: str, option: str = "--out") -> Path:
    """The output folder `text` names, refused unless the planner can write into it (or create
    it: its nearest existing ancestor must be a writable folder). Nothing is created."""
    if not text.strip():
        raise ArgumentError(f"{option} '': give a folder to write into, e.g. {option} out/")
    path = Path(text)
    if path.exists() and not path.is_dir():
        raise ArgumentError(f"{option} {text}: is not a folder (it is a file or a device); give "
                            f"a folder to write into, e.g. {option} out/")
    base = _existing_ancestor(path)
    if not base.is_dir():
        raise ArgumentError(f"{option} {text}: cannot be created, {base} is a file, not a folder")
    problem = _probe(base)
    if problem:
        where = "into it" if base == path.absolute() else f"into {base} to create it"
        raise ArgumentError(f"{option} {text}: cannot write {where} ({problem}); give a folder "
                            f"you can write to, e.g. {option} out/")
    return path


def check_output_file(path: Path, option: str = "--to") -> None:
    """A file the planner will replace (via a temporary file beside it): its folder must exist
    and be writable, and the file, when it exists, be a regular file."""
    if not str(path).strip():
        raise ArgumentError(f"{option} '': give a file to write, e.g. {option} my-models.yaml")
    if path.exists() and not path.is_file():
        raise ArgumentError(f"{option} {path}: is not a regular file (a folder or a device); "
                            "give a YAML file to write")
    folder = path.absolute().parent
    if not folder.is_dir():
        raise ArgumentError(f"{option} {path}: its folder {folder} does not exist; create it "
                            "first or give another file")
    problem = _probe(folder)
    if problem:
        raise ArgumentError(f"{option} {path}: cannot write {path.name} into {folder} "
                            f"({problem}); give a file in a folder you can write to")
    if path.exists() and not os.access(path, os.W_OK):
        raise ArgumentError(f"{option} {path}: the file is read-only; make it writable or give "
                            "another file")
