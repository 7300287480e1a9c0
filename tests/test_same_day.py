"""Context at one engine build: InferenceX's same-day runs at several lengths
(tools/inferencex_same_day.py) and the report section that judges the planner's context terms
on them (docs/accuracy_same_day.py)."""

from __future__ import annotations

import copy
import hashlib
import statistics
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
import yaml

from planner.inputs.catalog import load_gpus, load_models
from planner.plan.calc import evaluate
from planner.plan.calibration import gpu_id, model_id
from tests.scripts import ROOT, load_script


@pytest.fixture(scope="module")
def tool() -> ModuleType:
    return load_script("inferencex_same_day", ROOT / "tools" / "inferencex_same_day.py")


@pytest.fixture(scope="module")
def report() -> ModuleType:
    return load_script("accuracy_same_day", ROOT / "docs" / "accuracy_same_day.py")


# Two rows of the pinned history as published (metrics trimmed to what the tool reads): MI300X,
# SGLang, FP8, TP 8, concurrency 4, 2025-12-15, at 1K/1K and 1K/8K.
BASE_ROW: dict[str, Any] = {
    "hardware": "mi300x", "framework": "sglang", "model": "dsr1", "precision": "fp8",
    "spec_method": "none", "disagg": False, "is_multinode": False, "decode_tp": 8,
    "decode_ep": 1, "decode_dp_attention": False, "isl": 1024, "osl": 1024, "conc": 4,
    "date": "2025-12-15",
    "run_url": "https://github.com/SemiAnalysisAI/InferenceX/actions/runs/1/attempts/1",
    "metrics": {"median_tpot": 0.0214, "median_ttft": 0.176, "output_tput_per_gpu": 22.5},
}
SCRIPT = """# abc123456:benchmarks/dsr1_fp8_mi300x_docker.sh
python3 -m sglang.launch_server --tensor-parallel-size=$TP --mem-fraction-static=0.8 \\
--kv-cache-dtype fp8_e4m3
"""


def _row(**changes: Any) -> dict[str, Any]:
    row = copy.deepcopy(BASE_ROW)
    metrics = changes.pop("metrics", {})
    row.update(changes)
    row["metrics"].update(metrics)
    return row


def test_one_day_of_one_configuration_becomes_one_entry(tool: ModuleType) -> None:
    rows = [
        _row(isl=1024, osl=8192, metrics={"median_tpot": 0.0216}),
        _row(),
        # another day that ran no 1K/1K: nothing to compare with, left out
        _row(date="2025-12-16", isl=8192, osl=1024),
        # speculative decoding: not a run the planner models
        _row(spec_method="mtp", isl=8192, osl=1024),
        # another concurrency on the same day, alone: left out
        _row(conc=16),
    ]
    data = tool.build(rows, lambda row: SCRIPT)
    assert [e["id"] for e in data["same_day"]] == ["2025-12-15-8xmi300x-sglang-fp8-tp8-c4"]
    entry = data["same_day"][0]
    assert entry["kv_cache_dtype"] == "fp8" and entry["memory_fraction"] == 0.8
    assert entry["script"] == "abc123456:benchmarks/dsr1_fp8_mi300x_docker.sh"
    assert [(r["isl"], r["osl"]) for r in entry["runs"]] == [(1024, 1024), (1024, 8192)]
    base, longer = entry["runs"]
    # medians in ms; output tokens/s = the per-GPU figure × 8 GPUs; mean lengths of the
    # uniform draw over [int(0.8 L), L]
    assert base["median_tpot_ms"] == 21.4 and longer["median_tpot_ms"] == 21.6
    assert base["median_ttft_ms"] == 176.0
    assert base["output_tokens_per_s"] == 180.0
    assert longer["mean_input"] == 921.5 and longer["mean_output"] == 7372.5


def test_settings_that_differ_by_length_stay_with_each_run(tool: ModuleType) -> None:
    script = """# abc:x.sh
if [[ "$ISL" == "8192" ]]; then
  MEM=0.7
else
  MEM=0.8
fi
python3 -m sglang.launch_server --mem-fraction-static=$MEM --kv-cache-dtype fp8_e4m3
"""
    data = tool.build([_row(), _row(isl=8192, osl=1024)], lambda row: script)
    entry = data["same_day"][0]
    assert "memory_fraction" not in entry
    assert [r["memory_fraction"] for r in entry["runs"]] == [0.8, 0.7]


def test_a_history_whose_checksum_differs_is_refused(tool: ModuleType, tmp_path: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    history = tmp_path / "benchmarks-history.json"
    history.write_text("[]")
    assert tool.main([str(history), str(tmp_path), "--check"]) == 1
    err = capsys.readouterr().err
    assert hashlib.sha256(b"[]").hexdigest() in err and tool.HISTORY["sha256"] in err


def test_the_shipped_file_holds_the_days_as_published() -> None:
    data = yaml.safe_load((ROOT / "tests" / "data" / "calibration"
                           / "inferencex-same-day.yaml").read_text())
    days = {e["id"]: e for e in data["same_day"]}
    assert len(days) == 241
    day = days["2025-12-15-8xmi300x-sglang-fp8-tp8-c4"]
    assert [r["median_tpot_ms"] for r in day["runs"]] == pytest.approx([21.444, 21.571, 23.147],
                                                                         abs=1e-9)


def test_growth_is_the_planners_own_tpot_at_each_length(report: ModuleType) -> None:
    """One day by hand: the planner's growth is calc's time per output token at the 1K/8K mean
    lengths ÷ at 1K/1K's, with the day's KV cache (BF16: that day's script gave no
    --kv-cache-dtype) and memory fraction."""
    models, gpus = load_models(), load_gpus()
    groups = {g["id"]: g for g in report.load()}
    day = report.day_of(groups["2025-12-15-8xmi300x-sglang-fp8-tp8-c4"], models, gpus)
    mid, gid = model_id(report.MODEL, models), gpu_id("AMD Instinct MI300X", gpus)
    assert (mid, gid) == ("deepseek-r1", "mi300x")

    def tpot(prompt: int, output: int) -> float:
        from planner.inputs.scenario import Scenario
        env = evaluate(Scenario(mid, gid, "fp8", "bf16", 8, prompt + output, 4, prompt, output),
                       models, gpus, {"engine": "sglang", "gpu_memory_utilization": 0.8})
        return float(env.value("tpot_seconds")) * 1000

    published, planner = day.growth((1024, 8192))
    assert published == pytest.approx(21.571 / 21.444, rel=1e-9)
    assert planner == pytest.approx(tpot(922, 7372) / tpot(922, 922), rel=1e-9)
    assert day.growth((8192, 1024))[0] == pytest.approx(23.147 / 21.444, rel=1e-9)


def test_cdna3_steps_grow_with_context_as_the_planners_do(report: ModuleType) -> None:
    """Issue 27 read MI300X's and MI325X's step as growing with context 1.5-2.2× faster than the
    planner's, from runs of different engine images. At one image the growth from 1K/1K to
    1K/8K agrees within 5% (median over the days), as it does on H200; no context term beyond
    the attention bytes, the MLA decode occupancy and the interleaved prefills is needed."""
    models, gpus = load_models(), load_gpus()
    cells = report.growth_cells(report.days(models, gpus))
    for gpu in ("mi300x", "mi325x", "h200-sxm"):
        pairs = cells[(gpu, "sglang", "fp8", (1024, 8192))]
        assert len(pairs) >= 20
        assert statistics.median(p / q for p, q in pairs) == pytest.approx(1.0, abs=0.05)


def test_a_first_token_at_low_load_is_judged_against_calcs_prefill(report: ModuleType) -> None:
    """One day by hand: MI300X, SGLang, concurrency 4, 2025-12-15. Each length's published
    median first token ÷ calc's `prefill_seconds` at the run's mean lengths enters the MI300X
    SGLang cell; a day above concurrency 4 enters none."""
    models, gpus = load_models(), load_gpus()
    groups = {g["id"]: g for g in report.load()}
    day = report.day_of(groups["2025-12-15-8xmi300x-sglang-fp8-tp8-c4"], models, gpus)

    def prefill_ms(prompt: int, output: int) -> float:
        from planner.inputs.scenario import Scenario
        env = evaluate(Scenario("deepseek-r1", "mi300x", "fp8", "bf16", 8, prompt + output, 4,
                                prompt, output),
                       models, gpus, {"engine": "sglang", "gpu_memory_utilization": 0.8})
        return float(env.value("prefill_seconds")) * 1000

    cells = report.first_token_cells([day])
    assert list(cells) == ["mi300x"] and list(cells["mi300x"]) == ["sglang"]
    runs = groups["2025-12-15-8xmi300x-sglang-fp8-tp8-c4"]["runs"]
    expected = sorted(r["median_ttft_ms"] / prefill_ms(round(r["mean_input"]),
                                                       round(r["mean_output"])) for r in runs)
    assert cells["mi300x"]["sglang"] == pytest.approx(expected, rel=1e-9)
    assert len(expected) >= 2 and expected[0] > 1.5  # the planner's first token is too early
    busier = report.day_of(groups["2025-12-08-8xh200-trt-fp8-tp8-ep8-c16"], models, gpus)
    assert report.first_token_cells([busier]) == {}
    summary = report.first_token_summary([day, busier], models)
    assert (summary["model_class"], summary["concurrency_at_most"]) == ("moe", 4)
    assert summary["by_gpu_engine"]["mi300x"]["sglang"]["runs"] == len(day.lengths)
