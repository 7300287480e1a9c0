"""Held-out serving runs for docs/accuracy.md: `tests/data/calibration/inferencex-points.yaml`,
from SemiAnalysis InferenceX's published single-node DeepSeek-R1 results.

InferenceX runs each engine's launch script (SemiAnalysisAI/InferenceX, `benchmarks/`) on
every GPU nightly and publishes every run's `benchmark_serving.py` figures through the
InferenceX app's API. A snapshot of that API's benchmark rows is the app's end-to-end test
fixture `packages/app/cypress/fixtures/api/benchmarks.json` (pinned below by commit and
sha256; 435 rows). This tool keeps the rows the planner can be judged on and writes them in
the schema `docs/generate_accuracy.py` reads:

* one node, no disaggregated prefill, no speculative decoding (the planner models none of
  them), an engine the planner models (SGLang, TensorRT-LLM; AMD's ATOM is not one), and an
  output throughput the row prints;
* the layout the row ran (`decode_ep` = TP: expert parallelism, `tp+ep`; `decode_dp_attention`:
  DP attention), so the report compares it both as one TP group and as it ran;
* the server's memory fraction and KV-cache type read from the launch script InferenceX ran
  that day: the last commit of `SemiAnalysisAI/InferenceX` at or before the run's date that
  touched the script for that model, precision, GPU and engine (`--kv-cache-dtype fp8_e4m3`
  for SGLang, `kv_cache_config: dtype: fp8` for TensorRT-LLM; `--mem-fraction-static`,
  `free_gpu_memory_fraction`), following the script's branches on the run's TP, concurrency,
  lengths, EP size and DP attention (`tools/launch_script.py`, which reads the script and never
  runs it). A script with no KV-cache type serves the checkpoint's (BF16 for DeepSeek-R1's FP8
  release).

The workload: `benchmark_serving.py --dataset-name random --random-range-ratio 0.8
--ignore-eos --num-prompts 10 × concurrency --max-concurrency C` (InferenceX
`benchmarks/benchmark_lib.sh` and the launch scripts), whose prompt and output lengths are
drawn uniformly from [int(0.8 L), L] (`utils/bench_serving/benchmark_serving.py`
`sample_uniform`), so the mean lengths are (int(0.8 L) + L) / 2. Every figure under
`results` is the row's own but the output tokens/s, which is the row's per-GPU figure times
the GPUs the run used (labelled derived).

Run: python tools/inferencex_points.py FIXTURE INFERENCEX_GIT_DIR    (writes the YAML)
     python tools/inferencex_points.py FIXTURE INFERENCEX_GIT_DIR --check
"""

from __future__ import annotations

import re
import subprocess
import sys
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from tools.launch_script import settings  # noqa: E402
from tools.regenerate import dump_yaml, from_pinned_json  # noqa: E402

TARGET = ROOT / "tests" / "data" / "calibration" / "inferencex-points.yaml"
FIXTURE = {
    "repo": "SemiAnalysisAI/InferenceX-app",
    "path": "packages/app/cypress/fixtures/api/benchmarks.json",
    "commit": "528c4146b8f502fcbce8df7870a935a970cbae25",  # 2026-06-14, "refresh Cypress fixtures"
    "sha256": "f46823a76cb63248705329f327e1494df02b4dfa4df0898b7ee084c75c20bd52",
}
RANGE_RATIO = 0.8  # InferenceX .github/workflows/benchmark-tmpl.yml RANDOM_RANGE_RATIO
PROMPTS_PER_CONCURRENCY = 10  # the launch scripts' --num-prompts $(( CONC * 10 ))
GPUS = {"b200": "NVIDIA B200", "b300": "NVIDIA B300", "h200": "NVIDIA H200 SXM",
        "mi300x": "AMD Instinct MI300X", "mi325x": "AMD Instinct MI325X",
        "mi355x": "AMD Instinct MI355X"}
ENGINES = {"sglang": "SGLang", "trt": "TensorRT-LLM"}
# The checkpoint each (model, precision, GPU family) row served: InferenceX's configs/
# nvidia-master.yaml and amd-master.yaml `model` (AMD's MXFP4 rows also ran its -Preview and
# -v2 builds; the planner reads only the weight format).
CHECKPOINTS = {("dsr1", "fp8"): "deepseek-ai/DeepSeek-R1-0528",
               ("dsr1", "fp4", "nvidia"): "nvidia/DeepSeek-R1-0528-FP4-V2",
               ("dsr1", "fp4", "amd"): "amd/DeepSeek-R1-0528-MXFP4"}
SHAPES = {"dsr1": "deepseek-ai/DeepSeek-R1"}
Row = Mapping[str, Any]
Script = Callable[[Row], str]


def mean_length(nominal: int) -> float:
    """The mean of integers drawn uniformly from [int(ratio × L), L]."""
    return (int(nominal * RANGE_RATIO) + nominal) / 2


def skip_reason(row: Row) -> str | None:
    """Why a row is not a run the planner can be judged on, or None."""
    if row.get("disagg") or row.get("is_multinode"):
        return "disaggregated or multi-node"
    if row.get("spec_method") not in (None, "none"):
        return "speculative decoding"
    if row.get("framework") not in ENGINES:
        return f"engine {row.get('framework')} not modelled"
    if row.get("model") not in SHAPES:
        return f"model {row.get('model')} not in this tool's table"
    if "output_tput_per_gpu" not in (row.get("metrics") or {}):
        return "no output throughput printed"
    return None


def layout_of(row: Row) -> tuple[str, str] | None:
    """The layout beyond one TP group a row ran, with why, or None."""
    tp, ep = int(row["decode_tp"]), int(row["decode_ep"])
    if row.get("decode_dp_attention"):
        return ("dp-attention", f"InferenceX row: decode_dp_attention true, decode_ep {ep}, "
                f"decode_tp {tp} (attention data-parallel over the {tp} GPUs, experts spread)")
    if ep > 1 and ep == tp:
        return ("tp+ep", f"InferenceX row: decode_ep {ep} = decode_tp {tp} (experts spread "
                "over the GPUs instead of each sliced)")
    return None


def run_env(row: Row) -> dict[str, str]:
    """The run parameters a launch script branches on, as InferenceX's workflow sets them."""
    return {"TP": str(row["decode_tp"]), "CONC": str(row["conc"]), "ISL": str(row["isl"]),
            "OSL": str(row["osl"]), "EP_SIZE": str(row["decode_ep"]),
            "DP_ATTENTION": "true" if row.get("decode_dp_attention") else "false"}


def script_paths(row: Row) -> list[str]:
    """Where InferenceX kept the launch script of a row's model, precision, GPU and engine."""
    stem = f"{row['model']}_{row['precision']}_{row['hardware']}"
    stem += "_trt" if row["framework"] == "trt" else ""
    return [f"benchmarks/single_node/fixed_seq_len/{stem}.sh", f"benchmarks/single_node/{stem}.sh",
            f"benchmarks/{stem}.sh", f"benchmarks/{stem}_docker.sh", f"benchmarks/{stem}_slurm.sh"]


def git_script(git_dir: str) -> Script:
    """The launch script text InferenceX ran for a row on its date (the last commit at or
    before it that has one of the row's script paths)."""
    def read(row: Row) -> str:
        paths = script_paths(row)
        commit = subprocess.run(
            ["git", "--git-dir", git_dir, "log", "-1", "--format=%H",
             f"--before={row['date']} 23:59:59", "--", *paths],
            check=True, capture_output=True, text=True).stdout.strip()
        for path in paths:
            shown = subprocess.run(["git", "--git-dir", git_dir, "show", f"{commit}:{path}"],
                                   capture_output=True, text=True)
            if shown.returncode == 0:
                return f"# {commit[:9]}:{path}\n" + shown.stdout
        return ""
    return read


def engine_build(row: Row) -> str:
    """The engine and version a row's container image names ('SGLang 0.5.12'), or the month
    it ran where the row does not record its image."""
    found = re.search(r"(?:sglang:v|release:)([0-9][0-9a-z.]*?)(?:-|$)", row.get("image") or "")
    name = ENGINES[row["framework"]]
    if found:
        return f"{name} {found.group(1)}"
    return f"{name}, image not recorded ({row['date'][:7]})"


def entry(row: Row, script: str) -> dict[str, Any]:
    """One row as a throughput-points entry."""
    hw, fw, prec = row["hardware"], row["framework"], row["precision"]
    tp, conc, isl, osl = int(row["decode_tp"]), int(row["conc"]), int(row["isl"]), int(row["osl"])
    metrics = row["metrics"]
    vendor = "amd" if hw.startswith("mi") else "nvidia"
    checkpoint = CHECKPOINTS.get((row["model"], prec)) or CHECKPOINTS[(row["model"], prec, vendor)]
    precision = prec if prec != "fp4" else ("mxfp4" if vendor == "amd" else "nvfp4")
    flags = settings(script, run_env(row))
    origin = script.splitlines()[0][2:] if script.startswith("# ") else "no script found"
    kv = "fp8" if flags.get("kv", "").startswith("fp8") else "bf16"
    fraction = ""
    if "fraction" in flags:
        name = ("--mem-fraction-static" if fw == "sglang"
                else "--kv_cache_free_gpu_memory_fraction")
        fraction = f" {name} {flags['fraction']}"
    image = row.get("image") or "image not recorded"
    layout = layout_of(row)
    lid = f"-ep{row['decode_ep']}" if int(row["decode_ep"]) > 1 else ""
    lid += "-dpa" if row.get("decode_dp_attention") else ""
    mean_in, mean_out = mean_length(isl), mean_length(osl)
    kv_given = (f"--kv-cache-dtype / kv_cache_config dtype {flags['kv']}" if "kv" in flags
                else "no KV-cache type given: the checkpoint's dtype")
    out: dict[str, Any] = {
        "id": f"inferencex-{tp}x{hw}-{fw}-{row['model']}-{prec}-tp{tp}{lid}-{isl}-{osl}-c{conc}",
        "source": {
            "kind": "benchmark results (InferenceX nightly runs, benchmark_serving.py)",
            "repo": FIXTURE["repo"],
            "ref": f"{FIXTURE['path']} @ {FIXTURE['commit']}",
            "url": str(row["run_url"]),
        },
        "date": str(row["date"]),
        "engine": f"{ENGINES[fw]} ({image}; --tp {tp}{fraction}, KV cache {kv})",
        "engine_build": engine_build(row),
        "model_id": checkpoint,
        "shape_ref": SHAPES[row["model"]],
        "gpu": {"type": GPUS[hw], "count": tp},
        "tensor_parallel_size": tp,
        "precision": precision,
        "kv_cache_dtype": kv,
        "config": (f"benchmark_serving.py --dataset-name random, lengths uniform in "
                   f"[int(0.8 L), L] for L = {isl} input and {osl} output (--random-range-ratio "
                   f"0.8 --ignore-eos): {round(mean_in)} input / {round(mean_out)} output "
                   f"tokens on average ({mean_in:g} and {mean_out:g}); "
                   f"{PROMPTS_PER_CONCURRENCY * conc} prompts, --max-concurrency {conc}, "
                   "request rate inf"),
        "metric": ("output_tokens_per_s = the row's output_tput_per_gpu × the GPUs (derived); "
                   "TTFT/TPOT means in ms"),
        "results": {
            "output_tokens_per_s": round(float(metrics["output_tput_per_gpu"]) * tp, 2),
            "mean_ttft_ms": round(float(metrics["mean_ttft"]) * 1000, 2),
            "mean_tpot_ms": round(float(metrics["mean_tpot"]) * 1000, 3),
        },
        "notes": (f"Server settings from InferenceX's launch script at the run's date "
                  f"({origin}). The KV cache {kv} ({kv_given})."),
    }
    if layout:
        out["layout"], out["layout_why"] = layout
    return out


def build(rows: Sequence[Row], script: Script) -> dict[str, Any]:
    """The data file: the kept rows as entries and the count of rows left out, by reason."""
    kept, skipped = [], Counter[str]()
    for row in rows:
        reason = skip_reason(row)
        if reason:
            skipped[reason] += 1
            continue
        kept.append(entry(row, script(row)))
    kept.sort(key=lambda e: e["id"])
    return {
        "title": "InferenceX single-node DeepSeek-R1 runs (held out: gathered after every "
                 "mechanism of issue 27 was built; see docs/generate_accuracy.py EVIDENCE_ROLES)",
        "relation": (f"Generated by tools/inferencex_points.py from {FIXTURE['repo']} "
                     f"{FIXTURE['path']} @ {FIXTURE['commit']} (sha256 {FIXTURE['sha256']}); "
                     "server settings from SemiAnalysisAI/InferenceX's launch scripts at each "
                     "run's date. Do not edit by hand."),
        "skipped": dict(sorted(skipped.items())),
        "throughput_points": kept,
    }


def main(argv: Sequence[str] | None = None) -> int:
    return from_pinned_json(argv, (__doc__ or "").splitlines()[0], TARGET, FIXTURE,
                            lambda rows, git_dir: dump_yaml(build(rows, git_script(git_dir))))


if __name__ == "__main__":
    raise SystemExit(main())
