"""Same-day runs at several lengths, for docs/accuracy.md's "Context at one engine build":
`tests/data/calibration/inferencex-same-day.yaml`, from SemiAnalysis InferenceX's run history.

Issue 27 read MI300X's and MI325X's DeepSeek-R1 step as growing with context faster than the
attention bytes: 1.15-1.3× optimistic at 1K/1K, 1.5-2.2× at 1K/8K and 8K/1K. Those runs came
from different days, and so from different engine images. InferenceX runs every configuration
nightly, each length of one configuration from the same launch script and container image on
the same day; the app's history fixture `packages/app/cypress/fixtures/api/benchmarks-history.json`
(pinned below by commit and sha256; 1,462 rows from 2025-12-05 to 2026-06-11) keeps those
nightly rows. Runs of one GPU, engine, precision, TP, layout and concurrency on one day differ
only in their lengths, so the growth of their time per output token from 1K/1K to 1K/8K and to
8K/1K is the engine's own growth with context at one build: the figure a context mechanism must
reproduce.

This keeps the single-node DeepSeek-R1 rows the planner models (no disaggregated prefill, no
speculative decoding, SGLang or TensorRT-LLM; `tools/inferencex_points.py` `skip_reason`) and
groups them by that key; a group is kept where the day ran 1K/1K and at least one other length.
The history rows print medians, not means: each run keeps its median time per output token, its
median time to first token and its output tokens/s (the per-GPU figure × the GPUs, derived). The
KV-cache type and memory fraction come from the launch script of that day, as for
`inferencex-points.yaml`. These runs are not throughput evidence (the report's totals never
count them): they judge how the step grows with length, not its level.

Run: python tools/inferencex_same_day.py HISTORY INFERENCEX_GIT_DIR    (writes the YAML)
     python tools/inferencex_same_day.py HISTORY INFERENCEX_GIT_DIR --check
"""

from __future__ import annotations

import sys
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from tools.inferencex_points import (  # noqa: E402
    ENGINES,
    FIXTURE,
    GPUS,
    Row,
    Script,
    git_script,
    layout_of,
    mean_length,
    run_env,
    skip_reason,
)
from tools.launch_script import settings  # noqa: E402
from tools.regenerate import dump_yaml, from_pinned_json  # noqa: E402

TARGET = ROOT / "tests" / "data" / "calibration" / "inferencex-same-day.yaml"
HISTORY = {
    "repo": FIXTURE["repo"],
    "path": "packages/app/cypress/fixtures/api/benchmarks-history.json",
    "commit": FIXTURE["commit"],
    "sha256": "9e7efc17d018d25acd13095ac0c33ed3c20aaf0d86c225792c0a73bde8e12d15",
}
BASE = (1024, 1024)  # the length every kept day ran; the others are compared with it
LENGTHS = (BASE, (1024, 8192), (8192, 1024))


def group_key(row: Row) -> tuple[Any, ...]:
    """What a day's runs share but their lengths."""
    return (row["hardware"], row["framework"], row["precision"], int(row["decode_tp"]),
            int(row["decode_ep"]), bool(row.get("decode_dp_attention")), int(row["conc"]),
            str(row["date"]))


def precision_of(row: Row) -> str:
    """The planner's weight format of a row (InferenceX's fp4 is NVFP4 on NVIDIA, MXFP4 on AMD)."""
    if row["precision"] != "fp4":
        return str(row["precision"])
    return "mxfp4" if str(row["hardware"]).startswith("mi") else "nvfp4"


def flags_of(row: Row, script: str) -> dict[str, Any]:
    """The KV-cache type and memory fraction the day's launch script gives a row."""
    flags = settings(script, run_env(row))
    out: dict[str, Any] = {"kv_cache_dtype": "fp8" if flags.get("kv", "").startswith("fp8")
                           else "bf16"}
    if "fraction" in flags:
        out["memory_fraction"] = float(flags["fraction"])
    return out


def run(row: Row) -> dict[str, Any]:
    """One length of a day's group: its lengths and the row's medians."""
    metrics = row["metrics"]
    isl, osl = int(row["isl"]), int(row["osl"])
    return {"isl": isl, "osl": osl,
            "mean_input": mean_length(isl), "mean_output": mean_length(osl),
            "median_tpot_ms": round(float(metrics["median_tpot"]) * 1000, 3),
            "median_ttft_ms": round(float(metrics["median_ttft"]) * 1000, 2),
            "output_tokens_per_s": round(float(metrics["output_tput_per_gpu"])
                                         * int(row["decode_tp"]), 2),
            "url": str(row["run_url"])}


def group(rows: Sequence[Row], script: str) -> dict[str, Any]:
    """A day's runs of one configuration as one entry."""
    first = rows[0]
    hw, fw, tp, conc = first["hardware"], first["framework"], int(first["decode_tp"]), first["conc"]
    layout = layout_of(first)
    lid = f"-ep{first['decode_ep']}" if int(first["decode_ep"]) > 1 else ""
    lid += "-dpa" if first.get("decode_dp_attention") else ""
    out: dict[str, Any] = {
        "id": f"{first['date']}-{tp}x{hw}-{fw}-{first['precision']}-tp{tp}{lid}-c{conc}",
        "date": str(first["date"]),
        "gpu": GPUS[hw],
        "engine": ENGINES[fw],
        "precision": precision_of(first),
        "tensor_parallel_size": tp,
        "concurrency": int(conc),
        "script": script.splitlines()[0][2:] if script.startswith("# ") else "no script found",
    }
    if layout:
        out["layout"] = layout[0]
    order = {length: i for i, length in enumerate(LENGTHS)}
    ordered = sorted(rows, key=lambda r: order[(r["isl"], r["osl"])])
    flags = [flags_of(r, script) for r in ordered]
    if all(f == flags[0] for f in flags):  # the script's branches on length gave one setting
        out.update(flags[0])
        out["runs"] = [run(r) for r in ordered]
    else:
        out["runs"] = [{**run(r), **f} for r, f in zip(ordered, flags, strict=True)]
    return out


def build(rows: Sequence[Row], script: Script) -> dict[str, Any]:
    """The data file: every kept day's group, by date and id."""
    groups: dict[tuple[Any, ...], dict[tuple[int, int], Row]] = defaultdict(dict)
    for row in rows:
        if skip_reason(row) or row["hardware"] not in GPUS:
            continue
        if (int(row["isl"]), int(row["osl"])) in LENGTHS:
            groups[group_key(row)][(int(row["isl"]), int(row["osl"]))] = row
    kept = [group(list(g.values()), script(next(iter(g.values()))))
            for g in groups.values() if BASE in g and len(g) > 1]
    kept.sort(key=lambda e: e["id"])
    return {
        "title": "InferenceX single-node DeepSeek-R1 runs of one configuration at several lengths "
                 "on one day (one engine build): how the step grows with context",
        "relation": (f"Generated by tools/inferencex_same_day.py from {HISTORY['repo']} "
                     f"{HISTORY['path']} @ {HISTORY['commit']} (sha256 {HISTORY['sha256']}); "
                     "server settings from SemiAnalysisAI/InferenceX's launch scripts at each "
                     "day. Medians, as the history prints. Not throughput evidence: "
                     "docs/generate_accuracy.py compares growth with length only. Do not edit "
                     "by hand."),
        "same_day": kept,
    }


def main(argv: Sequence[str] | None = None) -> int:
    return from_pinned_json(argv, (__doc__ or "").splitlines()[0], TARGET, HISTORY,
                            lambda rows, git_dir: dump_yaml(build(rows, git_script(git_dir))))


if __name__ == "__main__":
    raise SystemExit(main())
