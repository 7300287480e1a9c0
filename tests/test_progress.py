"""The build's progress bar: rows done, rate and time left on a terminal; silent otherwise."""

from __future__ import annotations

import io

from planner.outputs.progress import ProgressBar, duration


class Terminal(io.StringIO):
    def __init__(self, tty: bool = True) -> None:
        super().__init__()
        self.tty = tty

    def isatty(self) -> bool:
        return self.tty


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def drive(stream: Terminal, seconds: float, total: int = 1_000_000) -> None:
    """A build: a step, then `total` rows at an even pace for `seconds`."""
    clock = Clock()
    bar = ProgressBar(stream, clock)
    bar("sizing workloads", 0, 1)
    steps = 100
    for i in range(1, steps + 1):
        clock.now = seconds * i / steps
        bar("writing grid", total * i // steps, total)


def test_a_long_build_shows_rows_rate_and_time_left() -> None:
    out = Terminal()
    drive(out, 400.0)
    text = out.getvalue()
    assert "\r  writing grid " in text
    assert "500,000/1,000,000 rows" in text
    assert "2,500 rows/s" in text
    assert "3 min 20 s left" in text
    assert text.endswith("1,000,000/1,000,000 rows  2,500 rows/s  in 6 min 36 s\x1b[K\n")


def test_quiet_when_stderr_is_not_a_terminal() -> None:
    out = Terminal(tty=False)
    drive(out, 400.0)
    assert out.getvalue() == ""


def test_quiet_for_a_quick_build() -> None:
    out = Terminal()
    drive(out, 2.0)
    assert out.getvalue() == ""


def test_redraws_are_throttled() -> None:
    out = Terminal()
    drive(out, 10.0)  # 100 reports in 10 s, the first 2 s silent: at most 4 a second
    assert out.getvalue().count("\r") <= 30


def test_durations_read_naturally() -> None:
    assert [duration(s) for s in (0.4, 59, 61, 3599, 3661)] == [
        "0 s", "59 s", "1 min 01 s", "59 min 59 s", "1 h 01 min"]
