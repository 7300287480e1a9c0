"""Wall time of the test tiers on this machine: the fast tier (``-m "not engines and not slow"``:
no spreadsheet engine, no browser, no test that needs the whole default build or sizes every
shipped workload again), what you run while working, and the whole suite (the README's test
command, as CI runs it: every test, slow and engines included). Each tier runs in its own pytest
process; the figures are printed with the CPU time the tier used (its own and its
subprocesses'), not asserted: machines here are shared and noisy, and wall time over CPU time
says how much the machine was shared. The fast tier aims at three minutes or less.

    python bench/bench_tests.py            # both tiers (the whole suite takes many minutes)
    python bench/bench_tests.py --fast     # the fast tier only
"""

from __future__ import annotations

import argparse
import re
import resource
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FAST = "not engines and not slow"
TIERS = {f"fast tier (-m '{FAST}')": ["-m", FAST], "whole suite": []}


def children_cpu() -> float:
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def run_tier(args: list[str]) -> tuple[float, float, str]:
    """Wall seconds, CPU seconds and pytest's summary line of one tier."""
    start, cpu = time.perf_counter(), children_cpu()
    result = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                             *args], cwd=ROOT, capture_output=True, text=True)
    seconds, cpu = time.perf_counter() - start, children_cpu() - cpu
    summary = [line for line in result.stdout.splitlines()
               if re.search(r"\b(passed|failed|error)", line)]
    return seconds, cpu, (summary[-1] if summary else f"exit {result.returncode}").strip("= ")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fast", action="store_true", help="run the fast tier only")
    options = parser.parse_args()
    for name, args in TIERS.items():
        if options.fast and args == []:
            continue
        seconds, cpu, summary = run_tier(args)
        print(f"{name:45} {seconds:7.1f} s wall {cpu:7.1f} s CPU   {summary}", flush=True)


if __name__ == "__main__":
    main()
