"""The measured per-op tables (catalogs/perop.yaml): reproduced from the package they came from,
looked up by the speed quantities where a GPU and engine have one, quoted by `planner calc`, and
laid out on the workbook's Per-op tables sheet."""

from __future__ import annotations

import hashlib
import importlib.util
import json
from importlib import metadata
from pathlib import Path
from types import ModuleType

import pytest
import yaml
from click.testing import CliRunner
from openpyxl import load_workbook

from planner.cli import cli
from planner.inputs.perop import PEROP, load_perop, match
from planner.inputs.scenario import Scenario
from planner.model.quantities import ROW_BY_NAME
from planner.outputs.workbook.layout import GridRowRenderer
from planner.plan.calc import BlockEnv, evaluate
from tests.conftest import run
from tests.scripts import load_script

ROOT = Path(__file__).parent.parent
TOOL = ROOT / "tools" / "pertables.py"
SHIPPED = yaml.safe_load(PEROP.read_text(encoding="utf-8"))


def _tool() -> ModuleType:
    return load_script("pertables", TOOL)


def _table(gpu: str, engine: str) -> dict:
    return next(t for t in SHIPPED["tables"] if t["gpu"] == gpu and t["engine"] == engine)


# -- the shipped tables are what the package gives -------------------------------------------

@pytest.mark.slow  # regenerates all 27 shipped tables from the package's parquet files
def test_shipped_tables_are_reproduced_from_the_package() -> None:
    """tools/pertables.py, run on the pinned aiconfigurator-core, writes catalogs/perop.yaml
    byte for byte, from parquet files whose sha256 the YAML records."""
    pinned = SHIPPED["source"]["version"]
    if importlib.util.find_spec("aiconfigurator_core") is None:
        pytest.skip("aiconfigurator-core is not installed (pip install -e .[tables]): the "
                    "shipped tables cannot be regenerated here")
    if importlib.util.find_spec("pyarrow") is None:
        pytest.skip("pyarrow is not installed (pip install -e .[tables])")
    installed = metadata.version("aiconfigurator-core")
    if installed != pinned:
        pytest.skip(f"aiconfigurator-core {installed} is installed; the tables pin {pinned}")
    tool = _tool()
    assert tool.VERSION == pinned
    root = tool.package_root()
    for table in SHIPPED["tables"]:
        for source in table["sources"].values():
            path = root.parent / source["path"]
            assert hashlib.sha256(path.read_bytes()).hexdigest() == source["sha256"], path
    assert tool.render(tool.build(root)) == PEROP.read_text(encoding="utf-8")


def test_every_table_names_its_source() -> None:
    assert SHIPPED["source"] == {"package": "aiconfigurator-core", "version": "0.12.0",
                                 "license": "Apache-2.0", "generated_by": "tools/pertables.py"}
    tables = SHIPPED["tables"]
    assert {t["gpu"] for t in tables} == {"a100-80gb-sxm", "h100-sxm", "h200-sxm", "b200",
                                          "b300", "gb200", "gb300", "l40s", "rtx-pro-6000"}
    assert len(tables) == 27  # nine GPUs x vLLM, SGLang, TensorRT-LLM
    for t in tables:
        assert {"gemm", "gqa", "allreduce"} <= set(t["sources"]), (t["gpu"], t["engine"])
        for s in t["sources"].values():
            assert s["path"].startswith(f"aiconfigurator_core/systems/data/{t['system']}/")
            assert len(s["sha256"]) == 64


# -- looked up where a GPU and engine have a table ----------------------------------------------

def test_a_decode_step_on_h100_with_vllm_by_hand(shipped) -> None:
    """Llama 3.3 70B at TP 8 on H100 SXM under vLLM 0.24.0, 64 sequences, by hand from the table.

    A layer's mean GEMM holds 70.55e9 / 80 layers / 8 / 4 = 27.6M weights, at least 2^24: the
    large class, BF16, row 1. Its efficiency is measured at M = 32 (0.09338) and M = 128
    (0.3489); the GEMM's time, in units of M ÷ efficiency, is linear between them: 342.7 at 32,
    366.9 at 128, so 350.8 at 64, an efficiency of 64 / 350.8 = 0.1825 (the time barely grows:
    the GEMM is still reading its weights). Prefill and the roofline take M = 8,192, vLLM's step
    on an 80 GB GPU: 0.7844. Weights stream at 0.8978 of 3.35 TB/s. Decode attention at batch 64
    (a measured batch): 0.9518. The all-reduce at TP 8: 4.608 µs for the smallest message, and
    64 × 8,192 × 2 = 1,048,576 bytes is a measured size, 14.97 µs: 2 × 80 layers × 14.97 µs =
    2.395 ms.
    """
    env = run(shipped, model="llama-3.3-70b", gpu="h100-sxm", tp=8, batch=64, context=4096,
              prompt=2048)
    t = _table("h100-sxm", "vllm")
    large = t["gemm"]["bf16"]["large"]
    assert (t["version"], large[2], large[3], large[6]) == ("0.24.0", 0.09338, 0.3489, 0.7844)
    assert (t["allreduce"][8]["latency_us"], t["allreduce"][8]["us"][6]) == (4.608, 14.97)
    assert env.value("gemm_table_kind") == 1
    time = 32 / 0.09338 + (64 - 32) * (128 / 0.3489 - 32 / 0.09338) / (128 - 32)
    assert env.value("decode_gemm_efficiency") == pytest.approx(64 / time)
    assert env.value("decode_gemm_efficiency") == pytest.approx(0.1825, abs=1e-4)
    assert env.value("compute_efficiency_used") == pytest.approx(0.7844)
    assert env.value("bandwidth_efficiency_used") == 0.8978
    assert env.value("attention_measured_efficiency") == 0.9518
    assert env.value("attention_bandwidth_efficiency") == 0.9518
    assert env.value("allreduce_latency_seconds") == pytest.approx(4.608e-6)
    assert env.value("decode_allreduce_seconds") == pytest.approx(2 * 80 * 14.97e-6)
    flops = 64 * 2 * 70.55e9 / 8
    assert env.value("serving_compute_seconds") == pytest.approx(
        flops / (989e12 * 64 / time))


def test_time_grows_with_the_batch(shipped) -> None:
    """Linear between measured points, a step never gets faster with more sequences (the
    fleet's batch search relies on it), where a lookup by bucket would jump at each edge."""
    steps = [run(shipped, model="llama-3.3-70b", gpu="h100-sxm", weights="fp8", tp=8, batch=b,
                 prompt=1000, output=200).value("tpot_seconds") for b in range(1, 700, 7)]
    assert steps == sorted(steps)


def test_a_gpu_without_a_table_keeps_the_catalog(shipped) -> None:
    """MI300X (AMD) has no table: its catalog efficiencies and all-reduce latency apply."""
    env = run(shipped, model="llama-3.3-70b", gpu="mi300x", tp=8, batch=64, prompt=2048)
    assert env.has_perop() is False
    assert env.value("bandwidth_efficiency_used") == 0.7
    assert env.value("compute_efficiency_used") == 0.35
    assert env.value("decode_gemm_efficiency") == 0.35
    assert env.value("attention_measured_efficiency") == 0
    assert env.value("attention_bandwidth_efficiency") == 0.7
    assert env.value("allreduce_measured_latency_seconds") == 0


def test_a_number_set_by_hand_wins_over_the_table(shipped) -> None:
    env = run(shipped, {"bandwidth_efficiency": 0.6, "compute_efficiency": 0.4},
              model="llama-3.1-8b", gpu="h100-sxm", batch=64)
    for name in ("bandwidth_efficiency_used", "attention_bandwidth_efficiency"):
        assert env.value(name) == 0.6
    assert env.value("compute_efficiency_used") == env.value("decode_gemm_efficiency") == 0.4


def test_segments_follow_match_with_a_lower_bound() -> None:
    lower = load_perop().axes["gemm_tokens_from"]
    assert [match(x, lower) for x in (1, 2, 8, 9, 64, 128, 129, 8192, 10**6)] == [
        1, 1, 2, 2, 3, 4, 4, 7, 7]
    assert str(match(-1, lower)) == "#N/A"


def test_blocks_of_rows_agree_with_one_row_at_a_time(shipped) -> None:
    """The Grid's columnar evaluation gives each row what `planner calc` gives it."""
    from dataclasses import replace

    first = run(shipped, model="llama-3.3-70b", gpu="h100-sxm", tp=8, batch=1, prompt=1000,
                output=200)
    scenarios = [replace(first.scenario, batch=b) for b in (1, 7, 64, 300, 2048)]
    block = BlockEnv(scenarios, first.model, first.gpu, first.assumptions)
    for i, s in enumerate(scenarios):
        row = run(shipped, model=s.model, gpu=s.gpu, tp=s.tp, batch=s.batch, prompt=s.prompt,
                  output=s.output)
        for name in ("decode_gemm_efficiency", "attention_bandwidth_efficiency",
                     "decode_allreduce_seconds", "prefill_interleaved_seconds", "tpot_seconds"):
            assert block.value(name, i) == row.value(name), (s.batch, name)


def test_the_lookup_formula_is_short() -> None:
    """INDEX and MATCH over a row of at most twelve cells: cheap for every Grid row."""
    text = ROW_BY_NAME["decode_gemm_efficiency"].expr.render(GridRowRenderer(5))
    assert "INDEX(perop_gemm_slope,(INDEX(gpu_perop_slot,$" in text
    assert text.count("MATCH(") == 2 and text.count(",perop_gemm_tokens_from,1)") == 2
    assert len(text) < 400


# -- quoted by planner calc -----------------------------------------------------------------------

def test_calc_quotes_the_tables_source_on_a_line_of_its_own() -> None:
    t = _table("h100-sxm", "vllm")
    out = CliRunner().invoke(cli, ["calc", "--model", "llama-3.1-8b", "--gpu", "h100-sxm"])
    assert out.exit_code == 0, out.output
    line = next(x for x in out.output.splitlines() if x.startswith("Measured per-op tables"))
    assert "aiconfigurator-core 0.12.0" in line and "h100_sxm × vllm 0.24.0" in line
    assert "h100_sxm/gemm/vllm/0.24.0/gemm_perf.parquet" in line
    assert t["sources"]["gemm"]["sha256"][:12] in line
    assert "h100_sxm/moe/vllm/0.24.0/moe_perf.parquet" in line
    assert "the routed experts' prefill efficiency" in line
    # vLLM 0.14 on A100 has no fused-MoE measurement: the line does not claim one
    a100 = CliRunner().invoke(cli, ["calc", "--model", "llama-3.1-8b", "--gpu", "a100-80gb-sxm"])
    line = next(x for x in a100.output.splitlines() if x.startswith("Measured per-op tables"))
    assert "a100_sxm × vllm" in line and "routed experts" not in line
    amd = CliRunner().invoke(cli, ["calc", "--model", "llama-3.1-8b", "--gpu", "mi300x"])
    line = next(x for x in amd.output.splitlines() if x.startswith("Measured per-op tables"))
    assert line.startswith("Measured per-op tables: none") and "GPU catalog" in line


def test_calc_json_names_the_tables() -> None:
    t = _table("b200", "trtllm")
    out = CliRunner().invoke(cli, ["calc", "--model", "llama-3.1-8b", "--gpu", "b200", "--set",
                                   "engine=trtllm", "--json"])
    perop = json.loads(out.output)["perop_tables"]
    assert perop["package"] == "aiconfigurator-core" and perop["package_version"] == "0.12.0"
    assert perop["engine_version"] == t["version"] == "1.3.0rc20"
    assert perop["sources"]["gemm"] == {"path": t["sources"]["gemm"]["path"],
                                        "engine_version": "1.3.0rc20",
                                        "sha256": t["sources"]["gemm"]["sha256"]}
    none = CliRunner().invoke(cli, ["calc", "--model", "llama-3.1-8b", "--gpu", "rtx-4090",
                                    "--json"])
    assert json.loads(none.output)["perop_tables"]["table"] is None


# -- the workbook's sheet ------------------------------------------------------------------------

def test_a_plan_without_a_table_still_defines_the_names(tmp_path) -> None:
    """The lookups' names exist even where no GPU of the plan has a table (never evaluated)."""
    from tests.test_workbook import DATA, build

    gpus = yaml.safe_load((DATA / "small-gpus.yaml").read_text())
    gpus["gpus"] = {"mi300x": gpus["gpus"]["mi300x"]}
    path = tmp_path / "gpus.yaml"
    path.write_text(yaml.safe_dump(gpus))
    grid = yaml.safe_load((DATA / "small-grid.yaml").read_text())
    grid["view"]["gpu"] = "mi300x"
    (tmp_path / "grid.yaml").write_text(yaml.safe_dump(grid))
    wb = load_workbook(build(tmp_path / "out", DATA / "small-models.yaml", path,
                             tmp_path / "grid.yaml"))
    names = set(wb.defined_names)
    assert {"gpu_perop_slot", "perop_gemm", "perop_gemm_fixed", "perop_gemm_slope",
            "perop_gemm_tokens_from", "perop_attention", "perop_attention_batch_from",
            "perop_allreduce", "perop_allreduce_fixed", "perop_allreduce_slope",
            "perop_allreduce_bytes_from"} <= names
    sheet = wb["Per-op tables"]
    assert [c.value for c in sheet[7]][:6] == ["mi300x", 0, 0, 0, 0,
                                               "=INDEX($B7:$E7,1,engine_row)"]


def test_the_traffic_one_sequence_adds_is_averaged_over_the_reference_batch(shipped) -> None:
    """The fleet's linear step (its batch search, the latency block, a layout's removed
    all-reduces) charges each sequence a fixed all-reduce time above the latency. Without a
    table it is the ring traffic, by hand: MI300X, Llama 3.3 70B at TP 8, 2 × 80 layers × 2 ×
    7/8 × 8,192 × 2 bytes / 448 GB/s = 20.5 µs. From a measured table it is the time above the
    latency averaged over the reference batch (sequences that fit, at most max_num_seqs): the
    linear step equals the measured all-reduces there. The table's slope at a one-token
    message, used before, is the small-message algorithm's (37 µs a sequence on B200 with
    TensorRT-LLM, 0 on H200), not the traffic's; below the reference batch the measured curve
    rises faster than its average (small messages cost more a byte), which the linear step
    understates by less than a millisecond a step at batches of 64-229 (Llama 3.1 70B, 8 ×
    H200): the fleet then checks the chosen batch's exact step against the target."""
    ring = run(shipped, model="llama-3.3-70b", gpu="mi300x", tp=8, batch=64, context=4096,
               prompt=2048)
    assert ring.value("allreduce_measured_latency_seconds") == 0
    assert ring.value("allreduce_traffic_seconds_per_sequence") == pytest.approx(
        2 * 80 * 2 * 7 / 8 * 8192 * 2 / 448e9)
    for gpu, weights, micros in (("b200", "nvfp4", 7.3), ("h200-sxm", "fp8", 10.9),
                                 ("h100-sxm", "fp8", 14.25)):
        env = run(shipped, {"engine": "trtllm"}, model="qwen3-235b-a22b", gpu=gpu,
                  weights=weights, kv="fp8", tp=8, batch=4096, prompt=1000, output=1000,
                  context=2000)
        r = env.value("allreduce_reference_batch")
        assert r == min(env.value("max_sequences"), env.value("max_num_seqs_effective"))
        assert env.value("serving_batch") == r  # the calc batch is capped there too
        latency = 2 * 94 * env.value("allreduce_latency_seconds")
        per = env.value("allreduce_traffic_seconds_per_sequence")
        assert latency + r * per == pytest.approx(env.value("decode_allreduce_seconds"))
        assert per == pytest.approx(micros * 1e-6, abs=0.05e-6), gpu


def test_every_grid_formula_is_short_without_a_build() -> None:
    """The fast tier's guard on the rule the full workbook is checked against (at most 500
    characters a formula, tests/test_cold_recalc.py): every Grid row quantity rendered at a
    five-digit row (the default grid has 6,500 rows)."""
    long = {q.name: n for q in ROW_BY_NAME.values()
            if (n := len(q.expr.render(GridRowRenderer(99999))) + 1) > 500}
    assert long == {}


# -- the fused MoE: a prefill's routed experts at the tokens each one multiplies -----------------

def test_the_fused_moe_summary_by_hand() -> None:
    """One expert shape (hidden 1,024, width 512, top 2 of 8 experts) at TP 1 on a GPU of 100
    TFLOP/s: the efficiency at M tokens per expert is read at 4 M tokens, at the fastest kernel
    and never slower than a larger count (the 64-token run, 0.011 ms, bounds the 32-token one);
    a routing other than balanced and a layout nothing was measured in are left out."""
    def row(n: int, ms: float, kernel: str = "a", distribution: str = "balanced",
            tp: int = 1) -> dict[str, object]:
        return {"moe_dtype": "bfloat16", "kernel_source": kernel, "num_tokens": n,
                "hidden_size": 1024, "inter_size": 512, "topk": 2, "num_experts": 8,
                "moe_tp_size": tp, "moe_ep_size": 1, "distribution": distribution,
                "latency": ms}
    rows = [row(n, ms) for n, ms in [(4, 0.010), (32, 0.012), (64, 0.011), (128, 0.020),
                                     (512, 0.050), (2048, 0.150), (8192, 0.550), (32768, 2.1)]]
    rows += [row(128, 0.018, kernel="b"), row(4, 0.001, distribution="power_law_1.01")]
    found = _tool().moe_summary(rows, {"bf16_tflops": 100.0})
    assert set(found) == {"bf16"} and set(found["bf16"]) == {"dtype", "kernels", "tp1"}
    assert found["bf16"]["kernels"] == ["a", "b"]

    def eff(tokens: int, ms: float) -> float:
        return 2 * 3 * 1024 * 512 * 2 * tokens / (ms * 1e-3) / 100e12
    expected = [eff(4, 0.010), eff(32, 0.011), eff(128, 0.018), eff(512, 0.050),
                eff(2048, 0.150), eff(8192, 0.550), eff(32768, 2.1)]
    assert found["bf16"]["tp1"] == pytest.approx(expected, rel=1e-3)


def test_a_prefill_runs_its_routed_experts_at_the_moe_table(shipped) -> None:
    """DeepSeek-R1 FP8 at TP 8 on H200 with SGLang 0.5.14, an 8K prompt (7,372 tokens), by hand.

    Each routed expert multiplies 7,372 × 8 / 256 = 230.4 tokens. The fused-MoE table (FP8
    block-scale, experts sliced over 8 GPUs) measures 0.179 of the FP8 peak at 128 tokens an
    expert and 0.1997 at 512; the time, in units of tokens ÷ efficiency, is linear between them,
    0.1907 at 230.4. The routed experts' FLOPs, 2 × 653.9e9 × 8 / 256 per token, run at it; the
    rest of the prefill at the dense GEMM's 0.5773. Under DP attention the experts are spread
    whole over the 8 GPUs: the EP row, 0.133 and 0.1561."""
    env = run(shipped, {"engine": "sglang"}, model="deepseek-r1", gpu="h200-sxm", weights="fp8",
              kv="fp8", tp=8, context=8294, batch=4, prompt=7372, output=922)
    moe = _table("h200-sxm", "sglang")["moe"]["fp8"]
    assert (moe["tp8"][3], moe["tp8"][4], moe["ep8"][3], moe["ep8"][4]) == (
        0.179, 0.1997, 0.133, 0.1561)

    def at(low: float, high: float, tokens: float) -> float:
        t128, t512 = 128 / low, 512 / high
        return tokens / (t128 + (tokens - 128) * (t512 - t128) / (512 - 128))
    tokens = 7372 * 8 / 256
    assert env.value("prefill_expert_tokens") == pytest.approx(tokens)
    assert env.value("prefill_expert_efficiency") == pytest.approx(at(0.179, 0.1997, tokens))
    assert env.value("prefill_expert_efficiency") == pytest.approx(0.1907, abs=1e-4)
    assert env.value("prefill_expert_efficiency_ep") == pytest.approx(at(0.133, 0.1561, tokens))
    experts = 2 * 653_908_770_816 * 8 / 256 * 7372
    assert env.value("prefill_expert_flops") == pytest.approx(experts)
    rest = float(env.value("prefill_flops")) - experts
    peak = 8 * 1979e12
    assert env.value("compute_efficiency_used") == pytest.approx(0.5773)
    assert env.value("prefill_gemm_seconds") == pytest.approx(
        (rest / 0.5773 + experts / at(0.179, 0.1997, tokens)) / peak)

    models, gpus = shipped
    dp = evaluate(Scenario(model="deepseek-r1", gpu="h200-sxm", weights="fp8", kv="fp8", tp=8,
                           context=8294, batch=4, prompt=7372, output=922), models, gpus,
                  {"engine": "sglang"}, "dp-attention")
    assert dp.value("layout_prefill_interleaved_seconds") == pytest.approx(
        float(env.value("prefill_interleaved_seconds"))
        - experts / peak * (1 / at(0.179, 0.1997, tokens) - 1 / at(0.133, 0.1561, tokens)))


def test_a_dense_model_or_a_gpu_without_a_moe_table_keeps_one_efficiency(shipped) -> None:
    dense = run(shipped, {"engine": "sglang"}, model="llama-3.1-70b", gpu="h200-sxm",
                weights="fp8", kv="fp8", tp=8, context=8294, batch=4, prompt=7372, output=922)
    assert dense.value("prefill_expert_flops") == 0
    assert dense.value("prefill_gemm_seconds") == pytest.approx(
        float(dense.value("prefill_flops")) / (8 * 1979e12 * 0.5773))
    amd = run(shipped, {"engine": "sglang"}, model="deepseek-r1", gpu="mi300x", weights="fp8",
              kv="fp8", tp=8, context=8294, batch=4, prompt=7372, output=922)
    assert amd.value("prefill_expert_efficiency") == amd.value("compute_efficiency_used") == 0.35


def test_a_serving_step_batches_the_prompts_that_arrive_together(shipped) -> None:
    """Qwen3-235B-A22B FP8 at TP 8 on H200, 128-token prompts and 128-token outputs, by hand.

    With TensorRT-LLM 2,048 sequences decode (max_num_seqs); each ends, and a new prompt
    starts, once every 128 steps: 16 prompts a step, 2,048 prompt tokens, which ride in the
    step with the 2,048 decoding tokens. One grouped GEMM multiplies them all: each routed
    expert sees 4,096 × 8 / 128 = 256 tokens, where the fused-MoE table (FP8, TP 8) reads
    0.0713 at 128 and 0.07548 at 512, so 0.07403 at 256 (time linear between them), against
    0.01946 at the 8 tokens a 128-token prompt gives each expert alone. SGLang runs prefill as
    a pass of its own: no decoding tokens in it (1,024 sequences, 8 prompts, 64 tokens an
    expert). Seen failing with the prompt's own efficiency in the serving step."""
    models, gpus = shipped
    scenario = Scenario(model="qwen3-235b-a22b", gpu="h200-sxm", weights="fp8", kv="fp8", tp=8,
                        context=256, batch=2048, prompt=128, output=128)
    trt = evaluate(scenario, models, gpus, {"engine": "trtllm"}, "tp")
    assert (trt.value("serving_batch"), trt.value("prefills_per_step")) == (2048, 16)
    assert trt.value("prefill_step_tokens") == 2048
    assert trt.value("serving_expert_tokens") == 256

    def at(low: float, high: float, tokens: float) -> float:
        t128, t512 = 128 / low, 512 / high
        return tokens / (t128 + (tokens - 128) * (t512 - t128) / (512 - 128))
    serving = at(0.0713, 0.07548, 256)
    assert serving == pytest.approx(0.07403, abs=1e-5)
    assert trt.value("serving_expert_efficiency") == pytest.approx(serving)
    assert trt.value("prefill_expert_efficiency") == pytest.approx(0.01946)
    experts = float(trt.value("prefill_expert_flops"))
    routed = 94 * 128 * 3 * 4096 * 1536  # 94 MoE layers of 128 experts, gate, up and down
    assert experts == pytest.approx(2 * routed * 8 / 128 * 128)
    alone = float(trt.value("prefill_interleaved_seconds"))
    assert trt.value("prefill_serving_seconds") == pytest.approx(
        alone - experts / (8 * 1979e12) * (1 / 0.01946 - 1 / serving))
    assert trt.value("prefill_per_step_seconds") == pytest.approx(
        16 * float(trt.value("prefill_serving_seconds")))

    sgl = evaluate(scenario, models, gpus, {"engine": "sglang"}, "tp")
    assert (sgl.value("serving_batch"), sgl.value("prefill_step_tokens")) == (1024, 1024)
    assert sgl.value("serving_expert_tokens") == 1024 * 8 / 128

    # longer prompts: the step holds at most the engine's 8,192 batched tokens, and a step
    # that starts less than one prompt still multiplies the whole prompt
    many = evaluate(Scenario(model="qwen3-235b-a22b", gpu="h200-sxm", weights="fp8", kv="fp8",
                             tp=8, context=1100, batch=2048, prompt=1000, output=100),
                    models, gpus, {"engine": "trtllm"}, "tp")
    assert many.value("prefill_step_tokens") == 8192
    few = evaluate(Scenario(model="qwen3-235b-a22b", gpu="h200-sxm", weights="fp8", kv="fp8",
                            tp=8, context=9000, batch=4, prompt=8000, output=1000),
                   models, gpus, {"engine": "trtllm"}, "tp")
    assert few.value("prefill_step_tokens") == 8000
    assert few.value("serving_expert_tokens") == pytest.approx((8000 + 4) * 8 / 128)


def test_a_layout_serves_its_own_batch_of_prompts(shipped) -> None:
    """DP attention holds 4,096 of the sequences above where the TP group holds 2,048: every
    one's prompt is prefilled as the layout's serving step batches it, with the experts spread
    whole (the EP row), in place of the TP group's prefill and of the one-prompt bound the
    sequences beyond its caps carry in their per-sequence time."""
    models, gpus = shipped
    scenario = Scenario(model="qwen3-235b-a22b", gpu="h200-sxm", weights="fp8", kv="fp8", tp=8,
                        context=256, batch=4096, prompt=128, output=128)
    dp = evaluate(scenario, models, gpus, {"engine": "trtllm"}, "dp-attention")
    assert (dp.value("serving_batch"), dp.value("batch_chosen")) == (2048, 4096)
    experts = float(dp.value("prefill_expert_flops")) / (8 * 1979e12)
    ep = float(dp.value("serving_expert_efficiency_ep"))
    assert dp.value("layout_prefill_serving_seconds") == pytest.approx(
        float(dp.value("prefill_serving_seconds"))
        - experts * (1 / float(dp.value("serving_expert_efficiency")) - 1 / ep))
    assert dp.value("layout_prefill_delta_seconds") == pytest.approx(
        4096 / 128 * float(dp.value("layout_prefill_serving_seconds"))
        - 16 * float(dp.value("prefill_serving_seconds"))
        - 2048 / 128 * float(dp.value("layout_prefill_interleaved_seconds")))
    assert dp.value("layout_tpot_seconds") == pytest.approx(
        float(dp.value("tpot_seconds")) + float(dp.value("layout_step_delta_seconds")))
