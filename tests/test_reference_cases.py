"""Every published figure of reference-cases.yaml, through `planner calc --json`."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from planner.cli import cli
from tests.conftest import GPU_FILLER, MODEL_FILLER, REFERENCE_CASES, write_catalog


@pytest.mark.parametrize("case", REFERENCE_CASES, ids=[c["id"] for c in REFERENCE_CASES])
def test_reference_case(case: dict, tmp_path) -> None:
    models = write_catalog(tmp_path, "models", {"m": {**MODEL_FILLER, **case["model"]}})
    gpus = write_catalog(tmp_path, "gpus", {"g": {**GPU_FILLER, **case["gpu"]}})
    sc = case["scenario"]
    args = ["calc", "--model", "m", "--gpu", "g", "--models", str(models), "--gpus", str(gpus),
            "--tp", str(sc["tp"]), "--weights", sc["weights"], "--kv", sc["kv"],
            "--context", str(sc["context"]), "--json"]
    for key in ("batch", "prompt"):
        if key in sc:
            args += [f"--{key}", str(sc[key])]
    # engine=none: the model's own need, which is what the published figures describe
    for name, value in {**case["assumptions"], "engine": "none"}.items():
        args += ["--set", f"{name}={value}"]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    out = json.loads(result.output)
    assert out["inputs"]["tp"] == sc["tp"]
    for key, expected in case["expect"].items():
        got = out[key]
        if isinstance(expected, bool) or key in ("max_sequences", "kv_pool_tokens"):
            assert got == expected, key
        else:
            assert got == pytest.approx(expected, rel=case["tolerance"]), key


def test_json_holds_every_spec_key(tmp_path) -> None:
    from planner.model.quantities import SPEC_KEYS

    result = CliRunner().invoke(cli, ["calc", "--model", "llama-3.1-8b", "--gpu", "h100-sxm",
                                      "--json"])
    out = json.loads(result.output)
    spec_keys = {"weight_bytes", "weight_bytes_per_gpu", "kv_bytes_per_token",
                 "kv_bytes_per_token_per_gpu", "gpu_memory_bytes", "usable_bytes_per_gpu",
                 "kv_pool_bytes", "kv_pool_tokens", "kv_bytes_per_sequence", "max_sequences",
                 "fits", "crossover_tokens", "decode_bytes_per_step", "decode_flops_per_step",
                 "decode_step_seconds", "decode_tokens_per_second",
                 "tokens_per_second_per_sequence", "decode_intensity", "attention_intensity",
                 "ridge_intensity", "prefill_flops", "ttft_seconds", "cost_per_million_tokens",
                 "tpot_seconds", "serving_output_tokens_per_second"}
    assert spec_keys == set(SPEC_KEYS)
    assert spec_keys <= set(out)
    assert out["inputs"] == {"model": "llama-3.1-8b", "gpu": "h100-sxm", "weights": "bf16",
                             "kv": "bf16", "tp": 1, "context": 8192, "batch": 1, "prompt": 2048,
                             "output": 0}
    # The default basis is what CUDA reports to the engine: 79.19 GiB on an H100.
    assert out["gpu_memory_bytes"] == pytest.approx(79.19 * 2**30)
