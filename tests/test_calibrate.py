"""`planner calibrate`'s library: real engine logs (tests/data/logs/SOURCES.md) beside the planner.

Engine figures were read by hand from the logs; the planner's figures come from the shipped
catalogs.
"""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest
import yaml

from planner.errors import ArgumentError
from planner.evidence.enginelog.report import LogError
from planner.inputs.catalog import DEFAULT_MODELS, load_models
from planner.inputs.entries import Catalog
from planner.inputs.scenario import Scenario
from planner.inputs.settings import parse_overrides
from planner.plan.calc import evaluate
from planner.plan.calibrate import (
    CalibrationResult,
    Given,
    calibrate,
    calibration_json,
    calibration_text,
    device_name,
)
from planner.plan.calibration import kv_gib

LOGS = Path(__file__).parent / "data" / "logs"
H100_TP1 = LOGS / "vllm-v1-0.19.0-h100-llama3.1-8b-tp1.log"


@pytest.fixture(scope="module")
def h100(shipped: tuple[Catalog, Catalog]) -> CalibrationResult:
    models, gpus = shipped
    return calibrate(H100_TP1, models, gpus, gpu="h100-sxm")  # the log names no device


def printed_command(text: str) -> list[str]:
    """The `planner calc` line printed under "the --set values that reproduce the engine"."""
    section = text.split("the --set values that reproduce the engine:")[1]
    line = next(ln for ln in section.splitlines() if ln.strip().startswith("planner calc"))
    return shlex.split(line)[2:]


def run_command(words: list[str], shipped: tuple[Catalog, Catalog]) -> float:
    """What `planner calc` computes for those options: the KV cache per GPU in GiB."""
    options: dict[str, str] = {}
    sets: list[str] = []
    for flag, value in zip(words[::2], words[1::2], strict=True):
        if flag == "--set":
            sets.append(value)
        else:
            options[flag.removeprefix("--")] = value
    ints = {"tp", "context", "batch", "prompt", "output"}
    scenario = Scenario(**{k: int(v) if k in ints else v for k, v in options.items()})
    models, gpus = shipped
    return kv_gib(evaluate(scenario, models, gpus, parse_overrides(sets)))


def test_h100_engine_figures_parsed(h100: CalibrationResult) -> None:
    engine = {f.key: f.engine for f in h100.figures}
    assert engine == {"total_gib": 79.19, "weights_gib": 14.99, "activation_peak_gib": 1.89,
                      "non_torch_gib": 0.25, "kv_cache_gib": 58.11, "kv_cache_tokens": 476016,
                      "max_concurrency": 58.11}
    s = h100.settings.scenario
    assert (s.model, s.gpu, s.tp, s.weights, s.kv, s.context) == (
        "llama-3.1-8b", "h100-sxm", 1, "bf16", "bf16", 8192)  # model found by hf_id
    assert h100.settings.overrides == {"engine": "vllm", "gpu_memory_utilization": 0.95,
                                       "max_num_seqs": 1024, "max_num_batched_tokens": 8192}


def test_h100_kv_prediction_within_3_percent(h100: CalibrationResult) -> None:
    kv = h100.figure("kv_cache_gib")
    assert kv.planner == pytest.approx(58.11, rel=0.03)  # 58.19 GiB when written (+0.14 %)
    assert kv.error_percent is not None and abs(kv.error_percent) < 3
    assert h100.figure("kv_cache_tokens").planner == pytest.approx(476016, rel=0.03)


def test_h100_printed_command_reproduces_the_engine(
        h100: CalibrationResult, shipped: tuple[Catalog, Catalog]) -> None:
    text = calibration_text(h100)
    assert "--set overhead_gib_per_gpu=2.14" in text  # activation 1.89 + non-torch 0.25
    words = printed_command(text)
    assert " ".join(words) == h100.command().removeprefix("planner calc ")
    assert run_command(words, shipped) == pytest.approx(58.11, rel=0.005)


def test_h100_json(h100: CalibrationResult) -> None:
    data = calibration_json(h100)
    assert {"log", "engine", "settings", "engine_reported", "planner", "error_percent",
            "reproduce"} <= set(data)
    assert data["log"] == str(H100_TP1)
    assert data["engine_reported"]["kv_cache_gib"] == 58.11  # type: ignore[index]
    assert data["reproduce"]["set"]["overhead_gib_per_gpu"] == 2.14  # type: ignore[index]
    assert data["reproduce"]["command"] in calibration_text(h100)  # type: ignore[index]
    assert data["settings"]["command"].startswith("planner calc --model llama-3.1-8b")  # type: ignore[index]
    json.dumps(data)  # plain JSON types only


def test_vllm_v0_log_is_noted_and_blocks_give_tokens(shipped: tuple[Catalog, Catalog]) -> None:
    models, gpus = shipped
    result = calibrate(LOGS / "vllm-v0-0.6.x-mi300x-llama3.1-70b-fp8.log", models, gpus,
                       gpu="mi300x")
    assert result.settings.scenario.model == "llama-3.1-70b"
    assert result.settings.scenario.weights == "fp8"  # --quantization="fp8" on the command line
    assert result.figure("kv_cache_tokens").engine == 19513 * 16
    text = calibration_text(result)
    assert "vLLM V0" in text and "the planner models V1" in text
    # The printed activation peak + non-torch (19.09 + 6.07) reproduces V0's pool all the same.
    assert result.reproduce["overhead_gib_per_gpu"] == 25.16
    assert result.reproduced_kv_gib == pytest.approx(95.28, rel=0.005)


def test_unprinted_figures_are_said(shipped: tuple[Catalog, Catalog]) -> None:
    models, gpus = shipped
    result = calibrate(LOGS / "sglang-0.3-mi300x-llama3-8b-tp1-bench.log", models, gpus,
                       model="llama-3.1-8b", gpu="mi300x")
    data = calibration_json(result)
    assert data["engine_reported"]["kv_cache_gib"] is None  # type: ignore[index]
    assert data["error_percent"]["kv_cache_gib"] is None  # type: ignore[index]
    assert data["engine_reported"]["kv_cache_tokens"] == 1256440  # type: ignore[index]
    text = calibration_text(result)
    assert "not printed by the log: GPU memory, weights" in text
    assert "does not print mem_fraction_static" in text


def test_model_not_in_catalog_asks_for_model(tmp_path: Path,
                                             shipped: tuple[Catalog, Catalog]) -> None:
    # A catalog that surely lacks the log's Llama-2-7b-chat, whatever the shipped one gains.
    entry = yaml.safe_load(DEFAULT_MODELS.read_text())["models"]["llama-3.1-8b"]
    path = tmp_path / "models.yaml"
    path.write_text(yaml.safe_dump({"models": {"llama-3.1-8b": entry}}))
    log = LOGS / "sglang-2025-04-llama2-7b-eagle.log"
    with pytest.raises(ArgumentError) as caught:
        calibrate(log, load_models(path), shipped[1], gpu="h100-sxm")
    message = str(caught.value)
    assert str(log) in message and "meta-llama/Llama-2-7b-chat-hf" in message
    assert "--model ID" in message and "llama-3.1-8b" in message
    assert "planner list models" in message


def test_unknown_gpu_asks_for_gpu(shipped: tuple[Catalog, Catalog]) -> None:
    models, gpus = shipped
    with pytest.raises(ArgumentError) as caught:
        calibrate(H100_TP1, models, gpus)
    message = str(caught.value)
    assert "--gpu ID" in message and "planner list gpus" in message
    assert "it saw 79.19 GiB" in message and "h100-sxm" in message
    assert "--model" not in message  # the model was found by hf_id


@pytest.mark.parametrize("path", [LOGS / "SOURCES.md", LOGS / "no-such.log"],
                         ids=["not-a-log", "missing"])
def test_non_log_file_is_a_log_error(path: Path, shipped: tuple[Catalog, Catalog]) -> None:
    models, gpus = shipped
    with pytest.raises(LogError) as caught:
        calibrate(path, models, gpus, model="llama-3.1-8b", gpu="h100-sxm")
    assert str(path) in str(caught.value)


def test_device_name(shipped: tuple[Catalog, Catalog]) -> None:
    gpus = shipped[1]
    # vLLM's MoE-config line names the device the way torch.cuda.get_device_name() does.
    moe = ("INFO [fused_moe.py:720] Using default MoE config. Config file not found at "
           "['/vllm/configs/E=8,N=14336,device_name=NVIDIA_H100_80GB_HBM3.json']")
    assert device_name(moe, gpus) == ("h100-sxm", "NVIDIA H100 80GB HBM3")
    smi = "|   0  NVIDIA L40S                    On  |   00000000:38:00.0 Off |"
    assert device_name(smi, gpus) == ("l40s", "NVIDIA L40S")
    assert device_name("NVIDIA_VISIBLE_DEVICES=all nvidia/Llama-3.1-Nemotron", gpus) is None


def test_a_log_that_reserves_cuda_graphs_first(
        tmp_path: Path, h100: CalibrationResult, shipped: tuple[Catalog, Catalog]) -> None:
    """vLLM 0.21 and later print their CUDA-graph estimate and deduct it before the KV pool:
    calibrate carries both into the settings, and the planner's pool shrinks by exactly it."""
    lines = H100_TP1.read_text().splitlines()
    at = next(i for i, line in enumerate(lines) if "Available KV cache memory" in line)
    prefix = "(EngineCore pid=242) INFO 04-22 00:04:20 [v1/worker/gpu_worker.py:481] "
    lines[at + 1:at + 1] = [
        "(EngineCore pid=242) INFO 04-22 00:04:19 [gpu_model_runner.py:6365] "
        "Estimated CUDA graph memory: 0.84 GiB total",
        prefix + "CUDA graph memory profiling is enabled (default since v0.21.0). The current "
        "--gpu-memory-utilization=0.9500 is equivalent to --gpu-memory-utilization=0.9394 "
        "without CUDA graph memory profiling."]
    log = tmp_path / "vllm-0.22.log"
    log.write_text("\n".join(lines) + "\n")
    models, gpus = shipped
    result = calibrate(log, models, gpus, gpu="h100-sxm")
    assert result.settings.overrides["cuda_graphs_in_budget"] == 1.0
    assert result.settings.overrides["cuda_graph_gib_per_gpu"] == 0.84
    before = h100.figure("kv_cache_gib").planner
    after = result.figure("kv_cache_gib").planner
    assert before is not None and after is not None
    assert before - after == pytest.approx(0.84, abs=1e-9)


# A one-line SGLang log (its KV pool only) from the Qwen3-235B-A22B-FP8 run on 4 × H100 at TP 4,
# mem_fraction_static 0.93 (tests/data/logs/SOURCES.md): everything else comes from the options.
SGLANG_ONE_LINE = LOGS / "sglang-h100x4-qwen3-235b-fp8-tp4.log"


def test_options_supply_what_the_log_does_not_print(shipped: tuple[Catalog, Catalog]) -> None:
    models, gpus = shipped
    result = calibrate(SGLANG_ONE_LINE, models, gpus, model="qwen3-235b-a22b", gpu="h100-sxm",
                       given=Given(tp=4, weights="fp8", context=8192,
                                   overrides={"gpu_memory_utilization": 0.93}))
    s = result.settings.scenario
    assert (s.tp, s.weights, s.kv, s.context) == (4, "fp8", "bf16", 8192)
    assert result.settings.overrides["gpu_memory_utilization"] == 0.93
    # By hand: 94 layers × 4 KV heads × 128 × (K, V) × 2 bytes = 192,512 B a token; TP 4 over
    # 4 KV heads leaves one head, 48,128 B, per GPU. The pool holds whole tokens of that size.
    kv = result.figure("kv_cache_gib")
    tokens = result.figure("kv_cache_tokens")
    assert tokens.planner == int(kv.planner * 2**30 // 48128)
    assert (kv.engine, tokens.engine) == (16.46, 367404)
    assert abs(kv.error_percent or 99) < 2  # the same point docs/accuracy.md compares: +1.3 %
    assert not any("does not print" in note for note in result.notes)


def test_options_that_differ_from_the_log_are_noted(shipped: tuple[Catalog, Catalog]) -> None:
    models, gpus = shipped
    log = LOGS / "vllm-v1-0.19.0-h100-llama3.1-8b-tp4.log"
    result = calibrate(log, models, gpus, gpu="h100-sxm", given=Given(tp=2))
    assert result.settings.scenario.tp == 2
    assert "--tp 2 used where the log printed 4" in result.notes


def test_settings_whose_weights_cannot_fit_are_an_error(shipped: tuple[Catalog, Catalog]
                                                        ) -> None:
    """Read as TP 1 in BF16 (the log prints neither), Qwen3-235B needs 437.89 GiB a GPU: the
    engine that printed a KV pool cannot have run so, and the error says what to pass."""
    models, gpus = shipped
    with pytest.raises(ArgumentError) as caught:
        calibrate(SGLANG_ONE_LINE, models, gpus, model="qwen3-235b-a22b", gpu="h100-sxm")
    message = str(caught.value)
    assert str(SGLANG_ONE_LINE) in message and "at TP 1 in bf16" in message
    assert "437.89 GiB of weights per GPU" in message and "KV cache of 16.46 GiB" in message
    assert message.endswith("--tp N, --weights FORMAT and --set gpu_memory_utilization=F "
                            "(the engine's mem_fraction_static)")
    with pytest.raises(ArgumentError) as caught:  # given the format, only TP is left to ask for
        calibrate(SGLANG_ONE_LINE, models, gpus, model="qwen3-235b-a22b", gpu="h100-sxm",
                  given=Given(weights="fp8", overrides={"gpu_memory_utilization": 0.93}))
    assert str(caught.value).endswith("as the engine ran: --tp N")


L40S_V0 = LOGS / "vllm-v0-0.6.6.post1-l40s-internvl3-78b-tp8.log"  # names no device: 44.39 GiB
RTX5090 = LOGS / "trtllm-0.19.0-rtx5090-llama3.1-8b-fp8.log"  # no device, no model: 31.84 GiB


def test_gpu_is_inferred_from_a_device_total_only_one_catalog_gpu_has(
        shipped: tuple[Catalog, Catalog]) -> None:
    """A log that names no device but prints its memory total: the one catalog GPU an engine
    sees as that total ran it (44.39 GiB: l40s; 31.84 GiB: rtx-5090); the model by hf_id."""
    models, gpus = shipped
    result = calibrate(L40S_V0, models, gpus)
    assert result.settings.scenario.gpu == "l40s"
    assert result.settings.scenario.model == "internvl3-78b"  # the log names its checkpoint
    assert any("GPU l40s: the only catalog GPU whose memory_engine_gib is the 44.39 GiB"
               in note for note in result.notes), result.notes
    assert calibrate(RTX5090, models, gpus, model="llama-3.1-8b").settings.scenario.gpu \
        == "rtx-5090"


def test_a_device_total_several_gpus_share_still_asks_for_gpu(
        shipped: tuple[Catalog, Catalog]) -> None:
    """79.19 GiB is an H100 SXM and an H100 PCIe alike: the planner does not guess."""
    models, gpus = shipped
    with pytest.raises(ArgumentError) as caught:
        calibrate(H100_TP1, models, gpus)
    message = str(caught.value)
    assert "cannot tell which GPU ran this log" in message
    assert "it saw 79.19 GiB, as a100-80gb-sxm, h100-sxm, h100-pcie report" in message


def test_gpu_option_that_contradicts_the_device_total_warns(
        shipped: tuple[Catalog, Catalog]) -> None:
    models, gpus = shipped
    result = calibrate(H100_TP1, models, gpus, gpu="h200-sxm")
    assert result.settings.scenario.gpu == "h200-sxm"  # as asked
    [warning] = result.warnings
    assert warning.startswith("--gpu h200-sxm: the log's device reports 79.19 GiB (line 690), "
                              "but h200-sxm reports 139.81 GiB to an engine; h100-sxm, "
                              "h100-pcie report that")
    assert calibration_json(result)["warnings"] == [warning]
    assert calibrate(H100_TP1, models, gpus, gpu="h100-sxm").warnings == []


def test_gpu_contradiction_is_warned_on_stderr() -> None:
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-m", "planner", "calibrate", str(H100_TP1), "--gpu",
                           "h200-sxm"], capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stderr.startswith("Warning: --gpu h200-sxm: the log's device reports 79.19 GiB")
    assert "Warning" not in done.stdout and "per GPU" in done.stdout


@pytest.mark.parametrize("log, old, new, line, expect", [
    (H100_TP1, "GPU KV cache size: 476,016 tokens", "GPU KV cache size: -476,016 tokens", 375,
     "the figure -476,016 is negative"),
    (H100_TP1, "GPU KV cache size: 476,016 tokens", "GPU KV cache size: 4,76,016 tokens", 375,
     "the figure 4,76,016 is not a whole number as an engine prints one"),
    (H100_TP1, "GPU KV cache size: 476,016 tokens", "GPU KV cache size: 476,016.5 tokens", 375,
     "the figure 476,016.5 is not a whole number"),
    (H100_TP1, "Available KV cache memory: 58.11 GiB", "Available KV cache memory: -58.11 GiB",
     373, "the figure -58.11 is negative"),
    (H100_TP1, "Model loading took 14.99 GiB", "Model loading took 1e999 GiB", 105,
     "the figure 1e999 is not a finite number"),
    (SGLANG_ONE_LINE, "#tokens: 367404,", "#tokens: -367404,", 1,
     "the figure -367404 is negative"),
    (RTX5090, "Allocated 16.05 GiB", "Allocated -16.05 GiB", 5, "the figure -16.05 is negative"),
], ids=["vllm-negative-tokens", "vllm-garbled-commas", "vllm-fractional-tokens",
        "vllm-negative-gib", "vllm-infinite-gib", "sglang-negative-tokens", "trtllm-negative-gib"])
def test_negative_or_garbled_figures_are_located(tmp_path: Path, shipped: tuple[Catalog, Catalog],
                                                 log: Path, old: str, new: str, line: int,
                                                 expect: str) -> None:
    """A figure no engine prints (negative, not finite, garbled) is refused at its line rather
    than skipped (which used to read as 'no KV cache line found') or used."""
    text = log.read_bytes()  # as bytes: the logs' lone carriage returns are not new lines
    assert text.count(old.encode()) == 1, old
    path = tmp_path / log.name
    path.write_bytes(text.replace(old.encode(), new.encode()))
    with pytest.raises(LogError) as caught:
        calibrate(path, *shipped, model="llama-3.1-8b", gpu="h100-sxm")
    message = str(caught.value)
    assert message.startswith(f"{path}, line {line}: {expect}"), message
    assert f"\n  {line:>4} | " in message and new in message
    assert "hint: the log is corrupt or was edited here" in message
