"""Interrupted builds leave nothing behind: SIGTERM and Ctrl-C mid-build remove the temporary
files, and a build sweeps what a killed one (SIGKILL) left in its output folder."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from planner.outputs.atomic import sweep, write_atomically
from tests.conftest import one_workload


def _dead_pid() -> int:
    done = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)
    return int(done.stdout)


@pytest.mark.parametrize("signum, code", [(signal.SIGTERM, 143), (signal.SIGINT, 130)],
                         ids=["sigterm", "sigint"])
def test_a_build_stopped_mid_write_leaves_nothing(tmp_path: Path, signum: int,
                                                  code: int) -> None:
    """The build is signalled once its temporary workbook exists; the output folder is then
    empty as before (no .partial file, no scratch folder), and the exit says it was stopped.
    The default grid (seconds of writing to interrupt), one shipped workload (sizing all five
    would only add seconds before the writing starts)."""
    out = tmp_path / "out"
    out.mkdir()
    workloads = one_workload(tmp_path, "code-completion-7b")
    env = {k: v for k, v in os.environ.items() if k != "PLANNER_DEBUG"}
    build = subprocess.Popen([sys.executable, "-m", "planner", "build", "--workloads",
                              str(workloads), "--out", str(out), "-q"],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    deadline = time.monotonic() + 240
    try:
        while not any(p.name.endswith(".partial") for p in out.iterdir()):
            assert build.poll() is None, build.communicate()
            assert time.monotonic() < deadline, "the build never started writing"
            time.sleep(0.02)
        time.sleep(0.3)  # well inside the workbook's writing (seconds)
        build.send_signal(signum)
        _, stderr = build.communicate(timeout=120)
    finally:
        if build.poll() is None:
            build.kill()
    assert build.returncode == code, stderr
    assert "Interrupted." in stderr and "Traceback" not in stderr
    assert list(out.iterdir()) == []


def test_a_build_sweeps_what_a_killed_build_left(tmp_path: Path) -> None:
    dead, alive = _dead_pid(), os.getppid()
    stale = [tmp_path / f".capacity-plan.xlsx.{dead}.k2j4h5g6.partial",
             tmp_path / ".capacity-plan.html.abcd1234.partial"]  # written before names had a PID
    for path in stale:
        path.write_text("half a file")
    scratch = tmp_path / f".planner-{dead}-x1y2z3w4.partial"
    scratch.mkdir()
    (scratch / "formulas-only.xlsx").write_text("half a workbook")
    running = tmp_path / f".capacity-plan.xlsx.{alive}.q1w2e3r4.partial"  # a live build's
    running.write_text("being written")
    kept = [tmp_path / ".other.xlsx.1.abcdefgh.partial", tmp_path / "notes.txt",
            tmp_path / f".planner-{alive}-abcdefgh.partial"]
    kept[0].write_text("not ours")
    kept[1].write_text("the user's")
    kept[2].mkdir()
    write_atomically({tmp_path / "capacity-plan.xlsx": lambda p: p.write_text("workbook"),
                      tmp_path / "capacity-plan.html": lambda p: p.write_text("page")})
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        ["capacity-plan.xlsx", "capacity-plan.html", running.name, *(p.name for p in kept)])
    assert sweep(tmp_path, {"capacity-plan.xlsx"}) == []


def test_a_failing_writer_leaves_the_folder_as_it_was(tmp_path: Path) -> None:
    (tmp_path / "capacity-plan.html").write_text("yesterday's")

    def fail(path: Path) -> None:
        path.write_text("half")
        raise RuntimeError("boom")

    with pytest.raises(RuntimeError):
        write_atomically({tmp_path / "capacity-plan.html": lambda p: p.write_text("today's"),
                          tmp_path / "capacity-plan.xlsx": fail})
    assert [p.name for p in tmp_path.iterdir()] == ["capacity-plan.html"]
    assert (tmp_path / "capacity-plan.html").read_text() == "yesterday's"
