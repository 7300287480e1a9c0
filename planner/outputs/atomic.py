"""Atomic outputs: write every file to a temporary name beside its target, then rename them
all, so a failed build leaves the output folder exactly as it was.

Temporary files are named ``.NAME.PID.XXXXXXXX.partial`` (the workbook also uses a folder
``.planner-PID-XXXXXXXX.partial`` beside it). They are removed when a writer fails, on Ctrl-C,
and on SIGTERM (turned into an interruption while files are written, so the clean-up runs); a
build also sweeps those a killed build (SIGKILL, power loss) left, once their process is gone.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import tempfile
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

from planner.errors import PlannerError

Writer = Callable[[Path], None]

TEMP_FOLDER_PREFIX = ".planner-"  # + PID- ; the workbook's scratch folder beside its target
_PARTIAL = re.compile(r"^\.(?P<name>.+?)\.(?:(?P<pid>\d+)\.)?[\w-]{6,}\.partial$")
_FOLDER = re.compile(r"^\.planner-(?P<pid>\d+)-[\w-]{6,}\.partial$")


class Terminated(KeyboardInterrupt):
    """SIGTERM while files are being written: raised like Ctrl-C so every clean-up runs."""

    signal_number = signal.SIGTERM


def temp_folder(beside: Path) -> tempfile.TemporaryDirectory[str]:
    """A scratch folder beside `beside` that a later build can tell as its own and sweep."""
    return tempfile.TemporaryDirectory(prefix=f"{TEMP_FOLDER_PREFIX}{os.getpid()}-",
                                       suffix=".partial", dir=beside.parent)


@contextlib.contextmanager
def terminate_as_interrupt() -> Iterator[None]:
    """SIGTERM raises Terminated inside the block (the default would kill the process with its
    temporary files in place); the previous handler is restored after. Only the main thread
    can set handlers: elsewhere the block runs as it is."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(signum: int, frame: object) -> None:
        raise Terminated()

    previous = signal.signal(signal.SIGTERM, handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def _alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True  # exists, owned by someone else
    return True


def sweep(folder: Path, names: set[str]) -> list[Path]:
    """Remove what an earlier build into `folder` left when it was killed: ``.NAME.*.partial``
    files of the outputs `names` and ``.planner-*.partial`` scratch folders, whose process is
    gone (a build running beside this one keeps its own). Returns what was removed."""
    removed: list[Path] = []
    if not folder.is_dir():
        return removed
    for path in folder.iterdir():
        partial, scratch = _PARTIAL.match(path.name), _FOLDER.match(path.name)
        if partial and partial["name"] in names and path.is_file():
            if partial["pid"] is None or not _alive(int(partial["pid"])):
                with contextlib.suppress(OSError):
                    path.unlink()
                    removed.append(path)
        elif scratch and path.is_dir() and not _alive(int(scratch["pid"])):
            shutil.rmtree(path, ignore_errors=True)
            if not path.exists():
                removed.append(path)
    return removed


def write_atomically(targets: dict[Path, Writer]) -> None:
    """Run each writer into a temporary file, then move all of them into place."""
    temps: dict[Path, Path] = {}
    for folder in {target.parent for target in targets}:
        sweep(folder, {target.name for target in targets if target.parent == folder})
    try:
        with terminate_as_interrupt():
            for target, writer in targets.items():
                target.parent.mkdir(parents=True, exist_ok=True)
                fd, name = tempfile.mkstemp(prefix=f".{target.name}.{os.getpid()}.",
                                            suffix=".partial", dir=target.parent)
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
