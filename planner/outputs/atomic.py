"""Atomic outputs: write every file to a temporary name beside its target, then rename them
all, so a failed build leaves the output folder exactly as it was."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable
from pathlib import Path

from planner.errors import PlannerError

Writer = Callable[[Path], None]


def write_atomically(targets: dict[Path, Writer]) -> None:
    """Run each writer into a temporary file, then move all of them into place."""
    temps: dict[Path, Path] = {}
    try:
        for target, writer in targets.items():
            target.parent.mkdir(parents=True, exist_ok=True)
            fd, name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".partial",
                                        dir=target.parent)
            os.close(fd)
            temps[target] = Path(name)
            writer(temps[target])
        umask = os.umask(0)
        os.umask(umask)
        for target, temp in temps.items():
            os.chmod(temp, 0o666 & ~umask)  # mkstemp makes owner-only files
            os.replace(temp, target)
    except OSError as exc:
        raise PlannerError(f"cannot write {exc.filename or 'output'}: {exc.strerror}") from None
    finally:
        for temp in temps.values():
            if temp.exists():
                temp.unlink()
