"""Benchmark `planner diff` and `planner import-workbook` on the default workbook against
`planner build`, each in its own process (so its peak memory, ru_maxrss, is its own), in one
run of this script (the machines are shared: read the ratios, not the seconds).

* build: `planner build` of the shipped catalogs and grid (every sheet, the HTML);
* diff: `planner diff` of that workbook, untouched (the rebuild compared in memory, the
  workbook streamed sheet by sheet);
* import-workbook: the same workbook imported into a temporary folder, untouched and with one
  input edited (the electricity price, changed in the sheet's XML as a spreadsheet would save
  it), which the import checks by building what it writes.

Prints seconds (wall and CPU), peak memory and each command's time over the build's: issue
26 holds diff and import-workbook to at most a build's time.

    python bench/bench_roundtrip.py
    python bench/bench_roundtrip.py --repeat 3   # the median of three runs of each
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import subprocess
import sys
import tempfile
import textwrap
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

CHILD = textwrap.dedent("""
    import json, resource, sys, time
    from click.testing import CliRunner
    from planner.cli import cli
    args = json.loads(sys.argv[1])
    t = time.perf_counter()
    result = CliRunner().invoke(cli, args)
    seconds = time.perf_counter() - t
    if result.exit_code != 0:
        raise SystemExit(f"planner {' '.join(args)} exited {result.exit_code}: {result.output}")
    usage = resource.getrusage(resource.RUSAGE_SELF)
    print(json.dumps({"seconds": seconds, "cpu_seconds": usage.ru_utime + usage.ru_stime,
                      "peak_kib": usage.ru_maxrss}))
""")


def run(*args: str) -> dict:
    out = subprocess.run([sys.executable, "-c", CHILD, json.dumps(list(args))],
                         capture_output=True, text=True, cwd=ROOT)
    if out.returncode != 0:
        raise SystemExit(out.stderr or out.stdout)
    return json.loads(out.stdout.strip().splitlines()[-1])


def edited_copy(workbook: Path, name: str, value: float) -> Path:
    """The workbook with the input cell `name` (a defined name) set to `value`."""
    from planner.roundtrip.streamed import StreamedBook

    book = StreamedBook(workbook)
    sheet, ref = book.defined_names[name].attr_text.replace("$", "").split("!")
    part = book[sheet.strip("'")].part
    book.close()
    out = workbook.with_name("edited.xlsx")
    with zipfile.ZipFile(workbook) as src, zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as dst:
        for item in src.infolist():
            data = src.read(item.filename)
            if item.filename == part:
                text, n = re.subn(rf'(<c r="{ref}"[^>]*>)<v>[^<]*</v>', rf"\g<1><v>{value}</v>",
                                  data.decode())
                assert n == 1, f"{name} ({ref}) not found as a value cell in {part}"
                data = text.encode()
            dst.writestr(item, data)
    return out


def median_of(runs: list[dict]) -> dict:
    return {k: statistics.median(r[k] for r in runs) for k in runs[0]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=1, help="runs of each command (median)")
    repeat = parser.parse_args().repeat
    with tempfile.TemporaryDirectory(prefix="bench-roundtrip-") as tmp:
        out = Path(tmp) / "out"
        workbook = out / "capacity-plan.xlsx"
        results: dict[str, list[dict]] = {"build": [], "diff": [], "import-workbook": [],
                                          "import, one edit": []}
        for i in range(repeat):  # interleaved, so a busy minute weighs on each alike
            results["build"].append(run("build", "--out", str(out)))
            edited = edited_copy(workbook, "electricity_usd_per_kwh", 0.11)
            results["diff"].append(run("diff", str(workbook)))
            results["import-workbook"].append(
                run("import-workbook", str(workbook), "--to", str(Path(tmp) / f"imported{i}")))
            results["import, one edit"].append(
                run("import-workbook", str(edited), "--to", str(Path(tmp) / f"edited{i}")))
    figures = {k: median_of(v) for k, v in results.items()}
    build = figures["build"]["seconds"]
    print(f"{'command':<18}{'wall s':>8}{'CPU s':>8}{'peak MiB':>10}{'÷ build':>9}")
    for name, f in figures.items():
        print(f"{name:<18}{f['seconds']:>8.1f}{f['cpu_seconds']:>8.1f}"
              f"{f['peak_kib'] / 1024:>10.0f}{f['seconds'] / build:>9.2f}")
    print(json.dumps({k: {m: round(v, 2) for m, v in f.items()} for k, f in figures.items()}))


if __name__ == "__main__":
    main()
