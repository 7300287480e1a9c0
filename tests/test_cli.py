"""The command line as users meet it: help with examples, version, tables with units."""

from __future__ import annotations

import json
import subprocess
import sys

from click.testing import CliRunner

from planner import __version__
from planner.cli import cli


def invoke(*args: str):  # type: ignore[no-untyped-def]
    return CliRunner().invoke(cli, list(args))


def test_version() -> None:
    result = invoke("--version")
    assert result.exit_code == 0 and __version__ in result.output


def test_every_command_has_help_with_an_example() -> None:
    for command in cli.commands:
        result = invoke(command, "-h")
        assert result.exit_code == 0, command
        assert "Example" in result.output, command
    assert "Examples:" in invoke("--help").output


def test_python_dash_m_planner_runs() -> None:
    out = subprocess.run([sys.executable, "-m", "planner", "--version"], capture_output=True,
                         text=True, check=True)
    assert __version__ in out.stdout


def test_calc_table_labels_units_and_bound() -> None:
    result = invoke("calc", "--model", "llama-3.1-70b", "--gpu", "h200-sxm", "--tp", "8",
                    "--context", "32768", "--batch", "32")
    assert result.exit_code == 0, result.output
    assert "GB (" in result.output and "GiB)" in result.output
    assert "FITS: 32 of at most" in result.output
    assert "memory-bound" in result.output
    assert "GB = 10^9 bytes, GiB = 2^30 bytes" in result.output


def test_calc_says_why_weights_do_not_fit() -> None:
    result = invoke("calc", "--model", "llama-3.1-405b", "--gpu", "h100-sxm")
    assert result.exit_code == 0
    assert "DOES NOT FIT: weights need 811.70 GB" in result.output
    assert "raise --tp" in result.output


def test_calc_says_when_the_batch_does_not_fit() -> None:
    result = invoke("calc", "--model", "llama-3.1-70b", "--gpu", "h200-sxm", "--tp", "8",
                    "--context", "131072", "--batch", "64")
    assert "DOES NOT FIT: batch 64 needs more KV cache" in result.output


def test_set_changes_the_answer() -> None:
    base = json.loads(invoke("calc", "--model", "llama-3.1-8b", "--gpu", "h100-sxm",
                             "--json").output)
    low = json.loads(invoke("calc", "--model", "llama-3.1-8b", "--gpu", "h100-sxm", "--json",
                            "--set", "gpu_memory_utilization=0.5",
                            "--set", "memory_basis=marketed").output)
    assert low["assumptions"]["gpu_memory_utilization"] == 0.5
    assert low["gpu_memory_bytes"] == 80e9
    assert low["kv_pool_bytes"] < base["kv_pool_bytes"]


def test_list_commands() -> None:
    models = json.loads(invoke("list", "models", "--json").output)
    assert {m["id"] for m in models} >= {"llama-3.1-8b", "deepseek-v3", "qwen3-next-80b-a3b"}
    gpus = invoke("list", "gpus").output
    assert "h100-sxm" in gpus and "mi300x" in gpus and "gaudi3" in gpus
    assert "gpu_memory_utilization" in invoke("list", "assumptions").output
    assert "nvfp4" in invoke("list", "formats").output


def test_build_json_reports_what_it_wrote(tmp_path) -> None:
    from tests.test_workbook import SMALL

    result = invoke("build", "--out", str(tmp_path), "--models", str(SMALL["models_path"]),
                    "--gpus", str(SMALL["gpus_path"]), "--grid", str(SMALL["grid_path"]),
                    "--json")
    out = json.loads(result.output)
    assert out["rows"] == 96
    assert out["formula_cells"] > 96 * 40
    assert all((tmp_path / name).exists() for name in ("capacity-plan.xlsx",))


def test_calc_says_when_parameters_are_derived_from_shape() -> None:
    result = invoke("calc", "--model", "phi-4", "--gpu", "h100-sxm")
    assert "derived from its shape" in result.output
    out = json.loads(invoke("calc", "--model", "phi-4", "--gpu", "h100-sxm", "--json").output)
    assert out["model"]["params_basis"] == "derived from shape"
    assert out["model"]["params_total"] == 14_659_092_480


def test_calc_quotes_the_measured_speed_of_its_gpu() -> None:
    """`planner calc` says how the serving speed of its class of model on its GPU with its
    engine compared with published engine runs, and its GPU's figure across engines and models,
    the same figures the HTML summary quotes (catalogs/measured-accuracy.yaml)."""
    from planner.evidence.measured import load_measured

    data = load_measured()
    assert data is not None
    h100 = data["steady_state_by_gpu"]["h100-sxm"]
    cell = data["steady_state_by_gpu_engine_class"]["h100-sxm"]["vllm"]["dense"]
    text = CliRunner().invoke(cli, ["calc", "--model", "llama-3.1-8b", "--gpu", "h100-sxm"])
    assert text.exit_code == 0, text.output
    assert (f"Measured: serving speed on the NVIDIA H100 SXM 80GB with vLLM, dense models: "
            f"median planner ÷ published {cell['median_ratio']:.2f} over {cell['runs']} "
            f"steady-state runs (interquartile {cell['q1_ratio']:.2f}-{cell['q3_ratio']:.2f}), "
            f"{cell['within_25_percent']} of them within ±25%; every engine and model on this "
            f"GPU: {h100['within_25_percent']} of {h100['runs']} within ±25%, median "
            f"{h100['median_ratio']:.2f} (docs/accuracy.md).") in text.output
    out = CliRunner().invoke(cli, ["calc", "--model", "llama-3.1-8b", "--gpu", "l4", "--json"])
    measured = json.loads(out.output)["measured_speed"]
    assert measured["gpu"] is None  # no published L4 run compared yet
    assert measured["engine"] == data["steady_state_by_engine"]["vllm"]
    assert measured["gpu_and_engine"] is None
    assert measured["model_class"] == "dense" and measured["gpu_engine_class"] is None
    ttft = data["ttft_no_queue"]
    assert json.loads(out.output)["measured_ttft"] == ttft
    # the first-token figure a vLLM fleet on it would carry: every engine's (vLLM's own runs
    # are fewer than 10), the same the size margin and the HTML cards quote
    vllm_runs = ttft["by_engine"]["vllm"]["runs"]
    assert vllm_runs < 10
    assert (f"Measured first token: median published ÷ planner {ttft['median_ratio']:.2f} over "
            f"{ttft['runs']} first tokens with no queue of every engine; vLLM has {vllm_runs}, "
            f"fewer than 10; a fleet sized against a TTFT target carries what exceeds the "
            f"measured speed error as a margin (docs/latency.md).") in text.output


def test_calc_quotes_the_first_token_error_of_its_gpu_engine_and_class() -> None:
    """An MoE model on the MI300X with SGLang: the GPU and engine's own first tokens at low
    load; a dense model there: SGLang's no-queue figure (the low-load runs are MoE runs)."""
    from planner.evidence.measured import load_measured

    data = load_measured()
    assert data is not None
    cell = data["ttft_low_load"]["by_gpu_engine"]["mi300x"]["sglang"]
    sglang = data["ttft_no_queue"]["by_engine"]["sglang"]
    moe = CliRunner().invoke(cli, ["calc", "--model", "deepseek-r1", "--gpu", "mi300x", "--tp",
                                   "8", "--weights", "fp8", "--set", "engine=sglang"])
    assert (f"Measured first token: median published ÷ planner {cell['median_ratio']:.2f} over "
            f"{cell['runs']} first tokens of MoE models at concurrency 4 or below on the AMD "
            f"Instinct MI300X with SGLang;") in moe.output
    dense = CliRunner().invoke(cli, ["calc", "--model", "llama-3.1-70b", "--gpu", "mi300x",
                                     "--set", "engine=sglang"])
    assert (f"Measured first token: median published ÷ planner {sglang['median_ratio']:.2f} "
            f"over {sglang['runs']} first tokens with no queue of SGLang;") in dense.output


def test_calc_quotes_the_measured_speed_of_its_model_class_with_its_engine_on_its_gpu() -> None:
    """A GPU's figure mixes engines and models; `planner calc` quotes the runs of its class of
    model (dense or MoE) with its engine on that GPU, or says there were none: a dense 70B on
    the MI300X with SGLang, where only MoE models ran, carries no MoE figure."""
    from planner.evidence.measured import load_measured

    data = load_measured()
    assert data is not None
    moe = data["steady_state_by_gpu_engine_class"]["mi300x"]["sglang"]["moe"]
    args = ["--gpu", "mi300x", "--tp", "8", "--set", "engine=sglang"]
    deepseek = ["calc", "--model", "deepseek-v3", "--weights", "fp8", *args]
    text = CliRunner().invoke(cli, deepseek).output
    assert (f"with SGLang, MoE models: median planner ÷ published {moe['median_ratio']:.2f} "
            f"over {moe['runs']} steady-state runs") in text
    out = json.loads(CliRunner().invoke(cli, [*deepseek, "--json"]).output)
    assert out["measured_speed"]["gpu_engine_class"] == moe
    assert out["measured_speed"]["gpu_and_engine"] == data["steady_state_by_gpu_and_engine"][
        "mi300x"]["sglang"]
    dense = CliRunner().invoke(cli, ["calc", "--model", "llama-3.1-70b", *args]).output
    line = next(t for t in dense.splitlines() if t.startswith("Measured: serving"))
    assert line.startswith("Measured: serving speed on the AMD Instinct MI300X with SGLang, "
                           "dense models: no published run compared (the planner's own speed "
                           "stands); every engine and model on this GPU")
    assert f"{moe['median_ratio']:.2f}" not in line
    rtx = CliRunner().invoke(cli, ["calc", "--model", "llama-3.1-8b", "--gpu", "rtx-4090"])
    assert "every engine and model" not in rtx.output  # dense models with vLLM ran all


def test_calc_prints_the_verdict_first_and_the_details_after() -> None:
    """The answer leads: fits or not, max sequences, decode and serving speed, first token and
    cost, before any detail; the rest of the table only with --verbose; --json unchanged."""
    from planner.model.quantities import ROW_QUANTITIES

    args = ["calc", "--model", "llama-3.1-70b", "--gpu", "h200-sxm", "--tp", "8", "--context",
            "32768", "--batch", "32"]
    lines = invoke(*args).output.splitlines()
    data = json.loads(invoke(*args, "--json").output)
    most = data["max_sequences"]
    assert lines[2].startswith(f"FITS: 32 of at most {most} sequences; decode is memory-bound")
    assert [line.split()[0] for line in lines[3:8]] == ["Max", "Decode", "Serving", "First",
                                                        "Cost"]
    assert lines[3] == f"  Max sequences  {most} of 32,768 tokens (KV cache)"
    decode = round(data["decode_tokens_per_second"])
    assert lines[4].startswith(f"  Decode speed   {decode:,} tokens/s at batch 32")
    assert "output tokens/s" in lines[5] and "per million output tokens" in lines[7]
    assert lines.index("Details:") == 9
    text = "\n".join(lines)
    assert "Profile run: sampler" not in text and "Assumptions: engine=vllm" not in text
    assert "--verbose shows every quantity" in text
    verbose = invoke(*args, "--verbose").output
    assert verbose.splitlines()[:8] == lines[:8]
    assert all(f"  {q.label} " in verbose for q in ROW_QUANTITIES)
    assert "Assumptions: engine=vllm" in verbose
    as_json = invoke(*args, "--json").output
    assert invoke(*args, "--json", "--verbose").output == as_json
    assert json.loads(as_json)["max_sequences"] == most
