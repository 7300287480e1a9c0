"""tools/inferencex_points.py: InferenceX's published runs become held-out evidence the report
reads as they ran (lengths, concurrency, layout, KV cache, memory fraction)."""

from __future__ import annotations

from types import ModuleType
from typing import Any

import pytest
import yaml

from tests.scripts import ROOT, load_script


@pytest.fixture(scope="module")
def tool() -> ModuleType:
    return load_script("inferencex_points", ROOT / "tools" / "inferencex_points.py")


@pytest.fixture(scope="module")
def gen() -> ModuleType:
    return load_script("generate_accuracy", ROOT / "docs" / "generate_accuracy.py")


# One row of the pinned fixture as published (metrics trimmed to what the tool reads).
ROW: dict[str, Any] = {
    "hardware": "mi300x", "framework": "sglang", "model": "dsr1", "precision": "fp8",
    "spec_method": "none", "disagg": False, "is_multinode": False, "decode_tp": 8,
    "decode_ep": 1, "decode_dp_attention": False, "isl": 1024, "osl": 1024, "conc": 4,
    "image": "lmsysorg/sglang:v0.5.12-rocm700-mi30x", "date": "2026-05-18",
    "run_url": "https://github.com/SemiAnalysisAI/InferenceX/actions/runs/26008678094/attempts/1",
    "metrics": {"mean_tpot": 0.014861576351782951, "mean_ttft": 0.44955046186223624,
                "output_tput_per_gpu": 31.64334900447029},
}
SGLANG_SCRIPT = """# 1b234994f:benchmarks/single_node/fixed_seq_len/dsr1_fp8_mi300x.sh
python3 -m sglang.launch_server \\
--tensor-parallel-size=$TP \\
--mem-fraction-static=0.8 \\
--kv-cache-dtype fp8_e4m3 \\
--attention-backend aiter
"""
TRT_SCRIPT = """cat > config.yml << EOF
enable_attention_dp: $DP_ATTENTION
kv_cache_config:
    dtype: fp8
    free_gpu_memory_fraction: 0.75
    enable_block_reuse: false
EOF
"""


def test_mean_lengths_of_the_uniform_draw(tool: ModuleType) -> None:
    # lengths drawn uniformly from [int(0.8 L), L]: (819 + 1024) / 2 and (6553 + 8192) / 2
    assert tool.mean_length(1024) == 921.5
    assert tool.mean_length(8192) == 7372.5


def test_server_settings_from_either_engine_script(tool: ModuleType) -> None:
    env = tool.run_env(ROW)
    assert env == {"TP": "8", "CONC": "4", "ISL": "1024", "OSL": "1024", "EP_SIZE": "1",
                   "DP_ATTENTION": "false"}
    assert tool.settings(SGLANG_SCRIPT, env) == {"kv": "fp8_e4m3", "fraction": "0.8"}
    assert tool.settings(TRT_SCRIPT, env) == {"kv": "fp8", "fraction": "0.75"}
    assert tool.settings("python3 -m sglang.launch_server --tp 8", env) == {}


# The shape of InferenceX's B200 SGLang script: the fraction chosen in branches on TP and the
# lengths, passed as a variable; a one-line `if` and a scheduler test that must not count.
BRANCHED = """if [[ -n "$SLURM_JOB_ID" ]]; then
  MEM_FRAC_STATIC=0.1
fi
if [[ "$MODEL" != /* ]]; then hf download "$MODEL"; fi
MEM_FRAC_STATIC=0.5
if [[ $TP -eq 8 ]]; then
  if [[ $CONC -ge 16 ]]; then
    SCHEDULER_RECV_INTERVAL=30
  else
    SCHEDULER_RECV_INTERVAL=10
  fi
  MEM_FRAC_STATIC=0.82
elif [[ $TP -eq 4 ]]; then
  if [[ $ISL -ne 8192 ]] || [[ $OSL -ne 1024 ]]; then
    echo "TP=4 not yet supported"
    exit 1
  fi
  MEM_FRAC_STATIC=0.95
else
  MEM_FRAC_STATIC=0.7
fi
python3 -m sglang.launch_server --tensor-parallel-size=$TP \\
--mem-fraction-static $MEM_FRAC_STATIC --kv-cache-dtype fp8_e4m3 \\
"""
TRT_BRANCHED = """KV_CACHE_FREE_MEM_FRACTION=0.8
if [[ "$ISL" == "8192" && "$OSL" == "1024" ]]; then
    if [[ "$TP" == "4" ]]; then
        KV_CACHE_FREE_MEM_FRACTION=0.75
    fi
fi
cat > config.yml << EOF
dtype: auto
kv_cache_config:
    dtype: fp8
    free_gpu_memory_fraction: $KV_CACHE_FREE_MEM_FRACTION
moe_config:
    dtype: bf16
EOF
"""


def test_settings_follow_the_scripts_branches(tool: ModuleType) -> None:
    """By hand: TP 8 takes the first branch (0.82), TP 4 the second (0.95), TP 2 the else
    (0.7), and no run is a scheduler job (0.1 never applies); the TensorRT-LLM fraction is 0.75
    only for TP 4 at 8K/1K, and the KV type is the one under kv_cache_config, not the model's
    or the MoE's dtype."""
    def run(**changes: str) -> dict[str, str]:
        return {**tool.run_env(ROW), **changes}
    assert tool.settings(BRANCHED, run(TP="8")) == {"kv": "fp8_e4m3", "fraction": "0.82"}
    assert tool.settings(BRANCHED, run(TP="4", ISL="8192", OSL="1024"))["fraction"] == "0.95"
    assert tool.settings(BRANCHED, run(TP="2"))["fraction"] == "0.7"
    assert tool.settings(TRT_BRANCHED, run(TP="4", ISL="8192", OSL="1024")) == {
        "kv": "fp8", "fraction": "0.75"}
    assert tool.settings(TRT_BRANCHED, run(TP="8", ISL="8192", OSL="1024")) == {
        "kv": "fp8", "fraction": "0.8"}
    assert tool.settings(TRT_BRANCHED, run(TP="4")) == {"kv": "fp8", "fraction": "0.8"}


def test_rows_the_planner_cannot_be_judged_on_are_left_out(tool: ModuleType) -> None:
    assert tool.skip_reason(ROW) is None
    assert tool.skip_reason({**ROW, "disagg": True}) == "disaggregated or multi-node"
    assert tool.skip_reason({**ROW, "spec_method": "mtp"}) == "speculative decoding"
    assert tool.skip_reason({**ROW, "framework": "atom"}) == "engine atom not modelled"
    assert tool.skip_reason({**ROW, "metrics": {"mean_tpot": 0.01}}) == (
        "no output throughput printed")


def test_the_layout_a_row_ran(tool: ModuleType) -> None:
    assert tool.layout_of(ROW) is None
    assert tool.layout_of({**ROW, "decode_ep": 8})[0] == "tp+ep"
    assert tool.layout_of({**ROW, "decode_ep": 8, "decode_dp_attention": True})[0] == (
        "dp-attention")


def test_a_row_becomes_an_entry_by_hand(tool: ModuleType, gen: ModuleType) -> None:
    """The MI300X row: 31.643 output tokens/s a GPU × 8 GPUs = 253.15; the report reads it as
    922 prompt and 922 output tokens (the rounded means) at concurrency 4, with the FP8 cache
    and the 0.8 memory fraction its script gave the server."""
    entry = tool.entry(ROW, SGLANG_SCRIPT)
    assert entry["id"] == "inferencex-8xmi300x-sglang-dsr1-fp8-tp8-1024-1024-c4"
    assert entry["results"] == {"output_tokens_per_s": 253.15, "mean_ttft_ms": 449.55,
                                "mean_tpot_ms": 14.862}
    assert entry["kv_cache_dtype"] == "fp8" and "layout" not in entry
    assert "1b234994f" in entry["notes"]
    (run,) = gen.runs_of(entry)
    assert (run.isl, run.osl, run.batch, run.tp, run.weights) == (922, 922, 4, 8, "fp8")
    assert run.published == 253.15 and run.tpot_ms == 14.862 and run.steady
    assert run.overrides == {"engine": "sglang", "gpu_memory_utilization": 0.8}
    assert gen.kv_of(run) == "fp8"
    trt = tool.entry({**ROW, "framework": "trt", "hardware": "h200",
                      "image": "nvcr.io/nvidia/tensorrt-llm/release:1.3.0rc14"}, TRT_SCRIPT)
    (trt_run,) = gen.runs_of(trt)
    assert trt_run.overrides == {"engine": "trtllm", "gpu_memory_utilization": 0.75}
    bare = tool.entry({**ROW, "hardware": "h200"}, "python3 -m sglang.launch_server")
    assert bare["kv_cache_dtype"] == "bf16"  # no KV type given: the checkpoint's


def test_the_shipped_file_is_read_whole(gen: ModuleType) -> None:
    """Every shipped entry is one steady-state run the report compares; none is left unread."""
    data = yaml.safe_load((ROOT / "tests" / "data" / "calibration" /
                           "inferencex-points.yaml").read_text())
    entries = data["throughput_points"]
    assert len(entries) == 118
    assert sum(data["skipped"].values()) + 118 == 435  # every row of the pinned fixture
    for entry in entries:
        runs = gen.runs_of(entry)
        assert isinstance(runs, list) and len(runs) == 1, entry["id"]
        assert runs[0].steady and runs[0].batch == int(entry["id"].rsplit("-c", 1)[1])
        assert entry["source"]["url"].startswith("https://github.com/SemiAnalysisAI/InferenceX/")
    assert gen.EVIDENCE_ROLES["inferencex-points.yaml"] == gen.HELD_OUT


def test_the_engine_build_a_row_ran(tool: ModuleType) -> None:
    assert tool.engine_build(ROW) == "SGLang 0.5.12"
    trt = {**ROW, "framework": "trt", "image": "nvcr.io/nvidia/tensorrt-llm/release:1.3.0rc14"}
    assert tool.engine_build(trt) == "TensorRT-LLM 1.3.0rc14"
    assert tool.engine_build({**ROW, "image": None}) == "SGLang, image not recorded (2026-05)"


def test_runs_by_engine_build(gen: ModuleType) -> None:
    """The report's build table splits every held-out run by GPU and engine build, versions in
    release order; on MI300X SGLang 0.5.9 reads further from the engine than 0.5.12."""
    from planner.inputs.catalog import load_gpus, load_models

    _, entries, _ = gen.load_points(("inferencex-points.yaml",))
    rows, _, _ = gen.throughput_rows(entries, load_models(), load_gpus())
    table = gen._build_table(gen.steady_rows([r for r in rows if r.ratio is not None]))
    cells = {tuple(c.strip() for c in line.strip("|").split("|")[:2]):
             line.strip("|").split("|") for line in table[2:]}
    assert sum(int(c[2]) for c in cells.values()) == 118
    order = [build for gpu, build in cells if gpu == "mi300x"]
    assert order == ["SGLang 0.5.9", "SGLang 0.5.12"]
    assert float(cells[("mi300x", "SGLang 0.5.9")][4]) > float(
        cells[("mi300x", "SGLang 0.5.12")][4]) > 1.2
