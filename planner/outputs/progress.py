"""A progress bar on stderr for long builds: rows done, rate and time left, redrawn in place.

Nothing is drawn when stderr is not a terminal (logs, pipes, CI) or while the build is younger
than a few seconds, so quick builds stay silent; ``planner build -q`` passes no progress at all.
Stages report ``(stage, done, total)``; a total above 1 counts rows (or another ``unit``, such
as the requests `planner simulate` runs), else the stage is a step.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import TextIO

DELAY = 2.0  # seconds a build (diff, import-workbook) runs before anything is drawn
INTERVAL = 0.25  # least seconds between redraws
WIDTH = 24  # characters of the bar


def duration(seconds: float) -> str:
    """12 s, 3 min 05 s, 1 h 02 min."""
    s = max(0, round(seconds))
    if s < 60:
        return f"{s} s"
    if s < 3600:
        return f"{s // 60} min {s % 60:02d} s"
    return f"{s // 3600} h {s % 3600 // 60:02d} min"


class ProgressBar:
    def __init__(self, stream: TextIO | None = None, clock: Callable[[], float] = time.monotonic,
                 delay: float = DELAY, interval: float = INTERVAL) -> None:
        self.stream = stream
        self.clock = clock
        self.delay = delay
        self.interval = interval
        self.started: float | None = None
        self.stage = ""
        self.stage_started = 0.0
        self.stage_done = 0  # rows done when the stage first reported
        self.drawn = 0.0
        self.open = False  # a line is drawn without its newline

    def __call__(self, stage: str, done: int, total: int, unit: str = "rows") -> None:
        stream = self.stream or sys.stderr
        if not stream.isatty():
            return
        now = self.clock()
        if self.started is None:
            self.started = now
        if stage != self.stage:
            self.stage, self.stage_started, self.stage_done, self.drawn = stage, now, done, 0.0
        finished = total > 1 and done >= total
        if now - self.started <= self.delay and not (finished and self.open):
            return
        if not finished and self.drawn and now - self.drawn < self.interval:
            return
        self.drawn = now
        line = self.line(stage, done, total, now - self.stage_started, done - self.stage_done,
                         unit)
        stream.write(f"\r{line}\x1b[K" + ("\n" if finished else ""))
        stream.flush()
        self.open = not finished

    @staticmethod
    def line(stage: str, done: int, total: int, elapsed: float, counted: int,
             unit: str = "rows") -> str:
        """The bar; the rate is of the `counted` rows done in the `elapsed` seconds."""
        if total <= 1:
            return f"  {stage}…"
        share = min(1.0, done / total)
        filled = int(share * WIDTH)
        bar = "█" * filled + "░" * (WIDTH - filled)
        text = f"  {stage} {bar} {100 * share:3.0f}%  {done:,}/{total:,} {unit}"
        if elapsed > 0 and counted > 0:
            rate = counted / elapsed
            text += f"  {rate:,.0f} {unit}/s"
            text += (f"  {duration((total - done) / rate)} left" if done < total
                     else f"  in {duration(elapsed)}")
        return text


_BAR = ProgressBar()


def report(stage: str, done: int, total: int, unit: str = "rows") -> None:
    """The build's progress on stderr (one bar per process)."""
    _BAR(stage, done, total, unit)
