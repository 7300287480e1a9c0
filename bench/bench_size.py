"""Benchmark `planner size` over every shipped workload (target: well under 2 s on a 2-core
machine) and `planner simulate` of 10,000 requests (target: under 5 s of CPU). Prints, from one
process each: the whole command (start-up, catalogs, search) and the search alone, with the
candidate count; then the whole `planner simulate` command for the workload whose simulation takes
the most CPU, and the simulation alone (CPU seconds) for every shipped workload at 95% of a
replica's capacity.

    python bench/bench_size.py
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
REQUESTS = 10_000
UTILISATION = 0.95


def whole(*args: str) -> float:
    started = time.perf_counter()
    subprocess.run([sys.executable, "-m", "planner", *args], cwd=ROOT, check=True,
                   capture_output=True)
    return time.perf_counter() - started


def main() -> None:
    command = whole("size", "--json")

    from planner.inputs.catalog import (
        DEFAULT_SERVERS,
        DEFAULT_WORKLOADS,
        load_gpus,
        load_models,
        load_servers,
        load_workloads,
    )
    from planner.plan.simulate import simulate_replica
    from planner.plan.sizing import size_all

    models, gpus = load_models(), load_gpus()
    servers = load_servers(DEFAULT_SERVERS, gpus)
    workloads = load_workloads(DEFAULT_WORKLOADS, models, gpus)
    started = time.perf_counter()
    results = size_all(workloads, models, gpus, servers)
    search = time.perf_counter() - started
    candidates = sum(len(r.rows) for r in results)
    print(f"{'what':<58}{'seconds':>10}")
    print(f"{'planner size --json (whole command)':<58}{command:>10.3f}")
    print(f"{'search alone':<58}{search:>10.3f}   "
          f"({len(results)} workloads, {candidates} candidates, "
          f"{candidates / search:,.0f} candidates/s)")

    simulated = []
    for r in results:
        assert r.choice is not None
        started = time.process_time()
        run = simulate_replica(r.choice, REQUESTS, 0, UTILISATION)
        simulated.append((r.workload.id, time.process_time() - started, run.result.steps))
    slowest = max(simulated, key=lambda s: s[1])[0]
    command = whole("simulate", "--workload", slowest, "--requests", str(REQUESTS), "--json")
    print(f"{f'planner simulate --workload {slowest}':<58}{command:>10.3f}   (whole command)")
    for workload, cpu, steps in simulated:
        print(f"{f'  simulate {workload}':<58}{cpu:>10.3f}   (CPU: {REQUESTS:,} requests at "
              f"{UTILISATION:.0%}, {steps:,} engine steps)")


if __name__ == "__main__":
    main()
