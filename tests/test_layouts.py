"""Serving layouts (planner/model/layouts.py): worked examples by hand, the invariants, the
JSON keys, and docs/layouts.md generated from the planner."""

from __future__ import annotations

import importlib.util
import math
from pathlib import Path

import pytest

from planner.inputs.catalog import (
    DEFAULT_GPUS,
    DEFAULT_MODELS,
    DEFAULT_SERVERS,
    load_gpus,
    load_models,
    load_servers,
)
from planner.inputs.workloads import adhoc_workloads
from planner.plan.sizing import Sized, layouts_for, size_all, size_json

ROOT = Path(__file__).parent.parent


def _size(model: str, gpu: str, rate: float, p: int, o: int, ttft: float, itl: float,
          overrides: dict[str, float | str] | None = None) -> Sized:
    models, gpus = load_models(DEFAULT_MODELS), load_gpus(DEFAULT_GPUS)
    servers = load_servers(DEFAULT_SERVERS, gpus)
    wl = adhoc_workloads(model, rate, p, o, ttft, itl, ("fp8",), (gpu,), 0, models, gpus)
    return size_all(wl, models, gpus, servers, overrides or {})[0]


@pytest.fixture(scope="module")
def deepseek() -> Sized:
    return _size("deepseek-r1", "h200-sxm", 5.0, 1000, 2000, 3.0, 0.06)


def _row(sized: Sized, layout: str, tp: int = 8, kv: str = "fp8"):  # type: ignore[no-untyped-def]
    return next(e for e in sized.rows if e.candidate.layout == layout
                and e.candidate.tp == tp and e.candidate.kv == kv)


def test_deepseek_kv_capacity_tp8_against_dp_attention_by_hand(deepseek: Sized) -> None:
    tp, dp = _row(deepseek, "tp"), _row(deepseek, "dp-attention")
    per_seq = tp.number("kv_bytes_per_sequence")
    # under TP the MLA latent is on every GPU: a GPU's pool holds whole sequences' KV
    assert tp.number("kv_bytes_per_sequence_per_gpu") == pytest.approx(per_seq)
    assert tp.number("layout_max_sequences") == int(tp.number("kv_pool_bytes_per_gpu") // per_seq)
    assert 400 <= tp.number("layout_max_sequences") <= 450  # "about 410" before this change
    # DP attention: attention weights replicated (7/8 more of them), each GPU its own sequences
    extra = dp.number("attention_weight_bytes") * 7 / 8
    assert dp.number("layout_weight_bytes_per_gpu") == pytest.approx(
        tp.number("weight_bytes_per_gpu") + extra)
    pool = tp.number("kv_pool_bytes_per_gpu") - extra
    assert dp.number("layout_max_sequences") == 8 * int(pool // per_seq)
    assert dp.number("layout_max_sequences") > 5 * tp.number("layout_max_sequences")
    assert dp.number("layout_max_num_seqs") == 8 * tp.number("max_num_seqs_effective")


def test_deepseek_step_time_under_dp_attention_by_hand(deepseek: Sized) -> None:
    dp = _row(deepseek, "dp-attention")
    moe = dp.model.value("moe_layers")
    assert moe == 58
    assert dp.number("a2a_fixed_seconds") == pytest.approx(
        2 * 58 * dp.number("allreduce_latency_seconds"))
    a2a = (58 * 7168 * 8 * 3 * 1.2 / 8 / dp.number("scale_up_bytes_per_second"))
    assert dp.number("a2a_seconds_per_sequence") == pytest.approx(a2a)
    # attention: each GPU reads only its own sequences' latent (÷ 8), never below the FLOPs
    assert dp.number("layout_attention_seconds_per_sequence") <= \
        dp.number("serving_attention_seconds_per_sequence") / 8 + 1e-12 or \
        dp.number("layout_attention_seconds_per_sequence") == pytest.approx(
            dp.number("serving_attention_flops_per_sequence") / 8 / dp.number("compute_achieved"))
    assert dp.number("itl_seconds") == pytest.approx(
        (dp.number("tpot_seconds") + dp.number("layout_step_delta_seconds"))
        * dp.number("speed_ratio_applied"))


def test_dp_attention_never_lowers_an_mla_models_kv_capacity(deepseek: Sized) -> None:
    lite = _size("deepseek-v2-lite", "h100-sxm", 5.0, 4000, 1000, 3.0, 0.05)
    pairs = 0
    for sized in (deepseek, lite):
        for env in sized.rows:
            c = env.candidate
            if c.layout != "dp-attention":
                continue
            base = next(e for e in sized.rows if e.candidate.layout == "tp"
                        and (e.candidate.server, e.candidate.weights, e.candidate.kv,
                             e.candidate.tp) == (c.server, c.weights, c.kv, c.tp))
            assert env.number("layout_max_sequences") >= base.number("layout_max_sequences")
            pairs += 1
    assert pairs > 4


def test_a_disaggregated_decode_pool_has_no_prompt_carrying_step(deepseek: Sized) -> None:
    for env in deepseek.rows:
        if env.candidate.layout != "disaggregated" or env.value("fits_workload") is not True:
            continue
        assert env.number("layout_itl_percentile_seconds") == env.number("itl_seconds")
        no_prompt = (env.number("tpot_seconds") - env.number("prefill_per_step_seconds")) \
            * env.number("speed_ratio_applied")
        assert env.number("itl_seconds") == pytest.approx(no_prompt, rel=1e-9)


def test_disaggregated_sizing_by_hand(deepseek: Sized) -> None:
    d = _row(deepseek, "disaggregated")
    moved = 1000 * d.number("kv_bytes_per_token")
    assert d.number("kv_transfer_bytes") == pytest.approx(moved)
    assert d.number("kv_transfer_seconds") == pytest.approx(moved / (8 * 50e9 * 0.87))
    tau = d.number("prefill_pool_service_seconds")
    prefill = max(1, math.ceil(5.0 * tau / d.number("prefill_pool_load_limit")))
    assert d.number("prefill_replicas") == prefill
    assert d.number("decode_replicas") == d.number("replicas_for_rate")
    assert d.number("prefill_gpus") == 8 * prefill
    assert d.number("gpus") == d.number("prefill_gpus") + d.number("decode_gpus")


def test_the_chosen_layout_meets_every_target() -> None:
    for args in [("llama-3.1-8b", "h100-sxm", 50.0, 4000, 300, 1.0, 0.03),
                 ("qwen3-235b-a22b", "h200-sxm", 5.0, 1000, 2000, 3.0, 0.06)]:
        sized = _size(*args)
        c = sized.choice
        assert sized.met and c is not None
        assert c.number("layout_itl_percentile_seconds") <= args[6]
        assert c.number("layout_ttft_percentile_seconds") <= args[5]
        met = [e for e in sized.rows if e.value("meets_targets") is True]
        assert c.number("tco_usd") == min(e.number("tco_usd") for e in met)


def test_size_json_names_the_layout_and_the_best_of_each(deepseek: Sized) -> None:
    out = size_json([deepseek])["workloads"][0]  # type: ignore[index]
    assert out["layout"] in ("tp", "tp+ep", "dp-attention", "disaggregated")
    assert {"prefill_gpus", "decode_gpus"} <= set(out)
    best = out["best_per_layout"]
    assert set(best) == {"tp", "tp+ep", "dp-attention", "disaggregated"}
    for b in best.values():
        assert {"gpus", "tco_usd", "met"} <= set(b)


def test_layouts_follow_the_engine_and_the_model() -> None:
    models = load_models(DEFAULT_MODELS)
    assert layouts_for(models.entries["llama-3.1-70b"], 8, "vllm") == ["tp", "disaggregated"]
    assert layouts_for(models.entries["deepseek-r1"], 1, "sglang") == ["tp", "disaggregated"]
    assert layouts_for(models.entries["deepseek-r1"], 8, "none") == ["tp"]


def test_layouts_doc_is_generated() -> None:
    path = ROOT / "docs" / "generate_layouts.py"
    spec = importlib.util.spec_from_file_location("generate_layouts", path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert module.TARGET.read_text() == module.document(), "run python docs/generate_layouts.py"
