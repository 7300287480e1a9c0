"""Benchmark `planner size` over every shipped workload (target: well under 2 s on a 2-core
machine). Prints, from one process each: the whole command (start-up, catalogs, search) and
the search alone, with the candidate count.

    python bench/bench_size.py
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def main() -> None:
    started = time.perf_counter()
    subprocess.run([sys.executable, "-m", "planner", "size", "--json"], cwd=ROOT, check=True,
                   capture_output=True)
    command = time.perf_counter() - started

    from planner.inputs.catalog import (
        DEFAULT_SERVERS,
        DEFAULT_WORKLOADS,
        load_gpus,
        load_models,
        load_servers,
        load_workloads,
    )
    from planner.plan.sizing import size_all

    models, gpus = load_models(), load_gpus()
    servers = load_servers(DEFAULT_SERVERS, gpus)
    workloads = load_workloads(DEFAULT_WORKLOADS, models, gpus)
    started = time.perf_counter()
    results = size_all(workloads, models, gpus, servers)
    search = time.perf_counter() - started
    candidates = sum(len(r.rows) for r in results)
    print(f"{'what':<34}{'seconds':>10}")
    print(f"{'planner size --json (whole command)':<34}{command:>10.3f}")
    print(f"{'search alone':<34}{search:>10.3f}   "
          f"({len(results)} workloads, {candidates} candidates, "
          f"{candidates / search:,.0f} candidates/s)")


if __name__ == "__main__":
    main()
