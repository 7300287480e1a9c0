"""Wall time of the test tiers on this machine: the fast tier (``-m "not engines"``: no
spreadsheet engine, no browser), what you run while working, and the whole suite (the README's
test command, as CI runs it). Each tier runs in its own pytest process; the figures are printed,
not asserted (machines here are shared and noisy; the fast tier aims at three minutes or less).

    python bench/bench_tests.py            # both tiers (the whole suite takes many minutes)
    python bench/bench_tests.py --fast     # the fast tier only
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TIERS = {"fast tier (-m 'not engines')": ["-m", "not engines"], "whole suite": []}


def run_tier(args: list[str]) -> tuple[float, str]:
    start = time.perf_counter()
    result = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                             *args], cwd=ROOT, capture_output=True, text=True)
    seconds = time.perf_counter() - start
    summary = [line for line in result.stdout.splitlines()
               if re.search(r"\b(passed|failed|error)", line)]
    return seconds, (summary[-1] if summary else f"exit {result.returncode}").strip("= ")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fast", action="store_true", help="run the fast tier only")
    options = parser.parse_args()
    for name, args in TIERS.items():
        if options.fast and args == []:
            continue
        seconds, summary = run_tier(args)
        print(f"{name:32} {seconds:7.1f} s wall   {summary}", flush=True)


if __name__ == "__main__":
    main()
