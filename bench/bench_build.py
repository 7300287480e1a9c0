"""Benchmark `planner build` against the bare openpyxl writer writing as many cells.

Each measurement runs in its own process so its peak memory (ru_maxrss) is its own. Prints a
table: rows, cells, seconds, cells/s, peak RSS, and the ratio to bare openpyxl.

    python bench/bench_build.py              # default grid + a 200,000-row grid
    python bench/bench_build.py --rows 20000 # a smaller large grid, for a quick look
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

CHILD_BUILD = textwrap.dedent("""
    import json, resource, sys, time
    from pathlib import Path
    from planner.build import run_build
    from planner.catalog import DEFAULT_GPUS, DEFAULT_MODELS
    t = time.perf_counter()
    result = run_build(DEFAULT_MODELS, DEFAULT_GPUS, Path(sys.argv[1]), Path(sys.argv[2]), {})
    seconds = time.perf_counter() - t
    size = (Path(sys.argv[2]) / "capacity-plan.xlsx").stat().st_size
    print(json.dumps({"rows": result["rows"], "formula_cells": result["formula_cells"],
                      "seconds": seconds, "bytes": size,
                      "peak_kib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}))
""")

CHILD_BARE = textwrap.dedent("""
    import json, resource, sys, time
    from openpyxl import Workbook
    rows, cols, out = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
    t = time.perf_counter()
    wb = Workbook(write_only=True)
    ws = wb.create_sheet("Grid")
    for r in range(1, rows + 1):
        ws.append([f"=A{r}*{c}+1" for c in range(cols)])
    wb.save(out)
    seconds = time.perf_counter() - t
    print(json.dumps({"seconds": seconds,
                      "peak_kib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}))
""")


ROWS_PER_UNIT = 14_032  # valid (model, GPU, TP) triples of the shipped catalogs x 8 formats


def large_grid(path: Path, rows: int) -> None:
    """Every shipped model and GPU in 8 format pairs, widened on context and batch until the
    grid has at least `rows` rows (one context x batch pair adds about 14,000)."""
    units = -(-rows // ROWS_PER_UNIT)
    n_ctx = min(8, units)
    n_batch = -(-units // n_ctx)
    contexts = [1024 * 2**i for i in range(n_ctx)]
    batches = [2**i for i in range(n_batch)]
    text = textwrap.dedent(f"""
        grid:
          models: all
          gpus: all
          weights: [bf16, fp8, int4, nvfp4]
          kv: [bf16, fp8]
          context: {contexts}
          batch: {batches}
          tp: [1, 2, 4, 8]
        """)
    path.write_text(text)


def run(code: str, *args: str) -> dict:
    out = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True,
                         cwd=ROOT, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def measure(name: str, grid: Path, tmp: Path) -> dict:
    built = run(CHILD_BUILD, str(grid), str(tmp / name))
    columns = round(built["formula_cells"] / max(built["rows"], 1)) + 8  # + config inputs
    cells = built["rows"] * columns
    bare = run(CHILD_BARE, str(built["rows"]), str(columns), str(tmp / f"{name}-bare.xlsx"))
    return {"name": name, "rows": built["rows"], "cells": cells, "planner_s": built["seconds"],
            "bare_s": bare["seconds"], "planner_mib": built["peak_kib"] / 1024,
            "bare_mib": bare["peak_kib"] / 1024, "file_mb": built["bytes"] / 1e6}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=200_000, help="rows of the large grid")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        big = tmp / "large-grid.yaml"
        large_grid(big, args.rows)
        results = [measure("default", ROOT / "catalogs" / "grid.yaml", tmp),
                   measure("large", big, tmp)]
    print(f"{'grid':8} {'rows':>9} {'cells':>11} {'planner s':>10} {'bare s':>8} "
          f"{'ratio':>6} {'planner cells/s':>16} {'bare cells/s':>13} {'planner MiB':>12} "
          f"{'bare MiB':>9} {'file MB':>8}")
    for r in results:
        print(f"{r['name']:8} {r['rows']:>9,} {r['cells']:>11,} {r['planner_s']:>10.1f} "
              f"{r['bare_s']:>8.1f} {r['planner_s'] / r['bare_s']:>6.2f} "
              f"{r['cells'] / r['planner_s']:>16,.0f} {r['cells'] / r['bare_s']:>13,.0f} "
              f"{r['planner_mib']:>12.0f} {r['bare_mib']:>9.0f} {r['file_mb']:>8.1f}")


if __name__ == "__main__":
    main()
