"""Benchmark `planner build` on the default grid and on a grid of Excel's row limit, against
bare openpyxl writing the same Grid cells.

Each measurement runs in its own process, so its peak memory (ru_maxrss) is its own:

* default: `planner build` of the shipped grid (every sheet, the HTML);
* large: the same build of a grid of the shipped catalogs with `--rows` rows (default
  1,048,575, Excel's limit; every model and GPU, formats, TP, contexts and concurrencies chosen
  so the grid has exactly that many rows when it can, else the most rows below it);
* bare: openpyxl's write-only writer writing the large grid's Grid cells (the configuration
  values and every formula, as the planner writes them) without styles or cached values.

Prints them side by side with the ratios the planner is held to: the large build in at most the
bare writer's time, and its peak memory within 1.2x of the default build's and below 300 MiB.

    python bench/bench_build.py                # 1,048,575 rows: many minutes
    python bench/bench_build.py --rows 50000   # a quick look
    python bench/bench_build.py --rows 0       # the default build alone: the README's time
"""

from __future__ import annotations

import argparse
import bisect
import itertools
import json
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
EXCEL_ROWS = 1_048_575

CHILD_BUILD = textwrap.dedent("""
    import json, resource, sys, time
    from pathlib import Path
    from planner.build import run_build
    from planner.inputs.catalog import DEFAULT_GPUS, DEFAULT_MODELS
    t = time.perf_counter()
    result = run_build(DEFAULT_MODELS, DEFAULT_GPUS, Path(sys.argv[1]), Path(sys.argv[2]), {})
    seconds = time.perf_counter() - t
    size = (Path(sys.argv[2]) / "capacity-plan.xlsx").stat().st_size
    usage = resource.getrusage(resource.RUSAGE_SELF)
    print(json.dumps({"rows": result["rows"], "formula_cells": result["formula_cells"],
                      "seconds": seconds, "bytes": size,
                      "cpu_seconds": usage.ru_utime + usage.ru_stime,
                      "peak_kib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}))
""")

# The Grid's cells as the planner writes them (configuration values, then the formulas of the
# lookups and quantities, rendered from the same templates), written by openpyxl alone.
CHILD_BARE = textwrap.dedent("""
    import json, resource, sys, time
    from pathlib import Path
    from openpyxl import Workbook
    from planner.inputs.catalog import load_gpus, load_models
    from planner.inputs.grid import load_grid
    from planner.plan.plan import scenario_blocks
    from planner.outputs.workbook.grid_sheet import LOOKUP_TEMPLATES, QUANTITY_TEMPLATES
    from planner.outputs.workbook.layout import CONFIG_COLUMNS, ROW_TOKEN
    grid_path, out = Path(sys.argv[1]), sys.argv[2]
    models, gpus = load_models(), load_gpus()
    grid = load_grid(grid_path, models, gpus)
    templates = list(LOOKUP_TEMPLATES.values()) + list(QUANTITY_TEMPLATES.values())
    t = time.perf_counter()
    wb = Workbook(write_only=True)
    ws = wb.create_sheet("Grid")
    ws.append(["header"] * (len(CONFIG_COLUMNS) + len(templates)))
    rows = cells = 0
    for block in scenario_blocks(grid, models, gpus):
        for s in block:
            r = str(rows + 2)
            row = [getattr(s, c) for c in CONFIG_COLUMNS]
            row += [f.replace(ROW_TOKEN, r) for f in templates]
            ws.append(row)
            rows += 1
            cells += len(row)
    wb.save(out)
    seconds = time.perf_counter() - t
    print(json.dumps({"rows": rows, "cells": cells, "seconds": seconds,
                      "bytes": Path(out).stat().st_size,
                      "peak_kib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}))
""")


def grid_axes(rows: int) -> tuple[dict[str, list], int]:
    """Axes of a grid of the shipped catalogs with exactly `rows` rows if a choice of models
    (the first k of the catalog), GPUs (any of them), TP degrees, formats, contexts,
    concurrencies, prompts and outputs gives it, else the most rows below; among equals, the
    most model x GPU pairs."""
    sys.path.insert(0, str(ROOT))
    from planner.inputs.catalog import load_gpus, load_models
    from planner.inputs.grid import skip_reason
    from planner.model.formats import KV_FORMATS, WEIGHT_FORMATS

    models, gpus = load_models(), load_gpus()
    m_ids, g_ids = list(models.entries), list(gpus.entries)
    tp_sets = [[1], [1, 8], [1, 2, 4, 8], [1, 2, 4, 8, 16]]
    valid = {tp: [[skip_reason(models, gpus, m, g, tp) is None for g in g_ids] for m in m_ids]
             for tp in (1, 2, 4, 8, 16)}
    # triples (model, GPU, TP) -> the choice with the most model x GPU pairs giving that many
    triples: dict[int, tuple[int, int, int, tuple[int, ...]]] = {}
    for t, tps in enumerate(tp_sets):
        for k in range(len(m_ids) // 2, len(m_ids) + 1):
            per_gpu = [sum(valid[tp][m][g] for tp in tps for m in range(k))
                       for g in range(len(g_ids))]
            reach: dict[int, tuple[int, ...]] = {0: ()}  # subset sums over the GPUs
            for g, n in enumerate(per_gpu):
                for total, chosen in list(reach.items()):
                    new = total + n
                    if n and (new not in reach or len(reach[new]) < len(chosen) + 1):
                        reach[new] = (*chosen, g)
            for total, chosen in reach.items():
                pairs = k * len(chosen)
                if total and (total not in triples or pairs > triples[total][0]):
                    triples[total] = (pairs, k, t, chosen)
    loads: dict[int, tuple[int, ...]] = {}  # rows per triple -> (W, K, C, B, P, O)
    for shape in itertools.product(range(1, len(WEIGHT_FORMATS) + 1), range(1, len(KV_FORMATS)
                                   + 1), range(1, 12), range(1, 15), range(1, 3), range(1, 3)):
        n = 1
        for x in shape:
            n *= x
        if n not in loads or min(shape[:4]) > min(loads[n][:4]):
            loads[n] = shape
    per_triple = sorted(loads)
    best = (0, 0, 0)
    for n, (pairs, *_) in triples.items():
        i = bisect.bisect_right(per_triple, rows // n) - 1
        if i >= 0:
            best = max(best, (n * per_triple[i], pairs, n))
    total, _, n = best
    _, k, t, chosen = triples[n]
    w, kv, c, b, p, o = loads[total // n]
    axes = {"models": m_ids[:k], "gpus": [g_ids[g] for g in chosen],
            "weights": list(WEIGHT_FORMATS)[:w], "kv": list(KV_FORMATS)[:kv],
            "context": [1024 * 2**i for i in range(c)], "batch": [2**i for i in range(b)],
            "tp": tp_sets[t], "prompt": [2048, 512][:p], "output": [512, 128][:o]}
    return axes, total


def write_grid(path: Path, axes: dict[str, list]) -> None:
    path.write_text("grid:\n" + "".join(f"  {k}: {json.dumps(v)}\n" for k, v in axes.items()))


def run(code: str, *args: str) -> dict:
    out = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True,
                         cwd=ROOT, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=EXCEL_ROWS,
                        help="rows of the large grid (default %(default)s, Excel's limit; "
                             "0: time the default build alone)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        if args.rows == 0:
            default = run(CHILD_BUILD, str(ROOT / "catalogs" / "grid.yaml"), str(tmp / "default"))
            print(f"default build: {default['seconds']:.1f} s ({default['cpu_seconds']:.1f} s "
                  "of CPU, the figure a busy machine does not inflate; "
                  f"{default['rows']:,} rows, "
                  f"{default['formula_cells']:,} formula cells, peak "
                  f"{default['peak_kib'] / 1024:.0f} MiB, {default['bytes'] / 1e6:.1f} MB)")
            return
        big = tmp / "large-grid.yaml"
        axes, expected = grid_axes(args.rows)
        write_grid(big, axes)
        print(f"large grid: {expected:,} rows: " + ", ".join(
            f"{k} {len(v)}" for k, v in axes.items()), flush=True)
        default = run(CHILD_BUILD, str(ROOT / "catalogs" / "grid.yaml"), str(tmp / "default"))
        print(f"default build: {default['seconds']:.1f} s", flush=True)
        large = run(CHILD_BUILD, str(big), str(tmp / "large"))
        print(f"large build: {large['seconds']:.1f} s", flush=True)
        (tmp / "large" / "capacity-plan.xlsx").unlink()  # disk: the bare file is as large
        bare = run(CHILD_BARE, str(big), str(tmp / "bare.xlsx"))
        print(f"bare openpyxl: {bare['seconds']:.1f} s", flush=True)
    assert large["rows"] == bare["rows"] == expected, (large["rows"], bare["rows"], expected)
    mib = 1024
    print()
    print(f"{'':28} {'rows':>10} {'seconds':>9} {'Grid cells/s':>13} {'peak MiB':>9} "
          f"{'file MB':>8}")
    lines = [("planner build, default grid", default, None),
             ("planner build, large grid", large, bare["cells"]),
             ("bare openpyxl, same cells", bare, bare["cells"])]
    for name, r, cells in lines:
        rate = f"{cells / r['seconds']:>13,.0f}" if cells else f"{'':>13}"
        print(f"{name:28} {r['rows']:>10,} {r['seconds']:>9.1f} {rate} "
              f"{r['peak_kib'] / mib:>9.0f} {r['bytes'] / 1e6:>8.1f}")
    ratio = large["seconds"] / bare["seconds"]
    growth = large["peak_kib"] / default["peak_kib"]
    print()
    print(f"large build / bare openpyxl time: {ratio:.2f}x (target <= 1.0)")
    print(f"peak RSS large / default: {growth:.2f}x (target <= 1.2); large "
          f"{large['peak_kib'] / mib:.0f} MiB (target < 300)")
    print(f"default build: {default['seconds']:.1f} s")


if __name__ == "__main__":
    main()
