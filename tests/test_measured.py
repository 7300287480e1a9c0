"""The measured error keyed by GPU × engine × model class (planner.evidence.measured): worked by
hand on a small summary, so a lookup returns exactly the triple's figures, a triple with no run
returns 1.0 and says so, and a dense model never carries a figure MoE models earned."""

from __future__ import annotations

from typing import Any

import pytest

from planner.evidence.measured import (
    SpeedRatio,
    load_measured,
    speed_on,
    speed_ratio,
    speed_sentence,
)
from planner.inputs.catalog import load_models
from planner.inputs.entries import Entry
from planner.inputs.model_shape import model_class
from tests.scripts import ROOT, load_script

# MI300X with SGLang ran only MoE models (badly); with vLLM, dense models (well). The GPU-wide,
# engine-wide and GPU-and-engine figures mix them, and a lookup must not reach for them.
SUMMARY: dict[str, Any] = {
    "steady_state_by_gpu": {"mi300x": {"runs": 25, "within_25_percent": 12,
                                       "median_ratio": 1.21},
                            "h100-sxm": {"runs": 4, "within_25_percent": 4,
                                         "median_ratio": 0.95}},
    "steady_state_by_engine": {"sglang": {"runs": 15, "within_25_percent": 2,
                                          "median_ratio": 1.54},
                               "vllm": {"runs": 14, "within_25_percent": 14,
                                        "median_ratio": 1.02}},
    "steady_state_by_gpu_and_engine": {
        "mi300x": {"sglang": {"runs": 15, "within_25_percent": 2, "median_ratio": 1.54},
                   "vllm": {"runs": 10, "within_25_percent": 10, "median_ratio": 1.05}},
        "h100-sxm": {"trtllm": {"runs": 4, "within_25_percent": 4, "median_ratio": 0.95}}},
    "steady_state_by_gpu_engine_class": {
        "mi300x": {"sglang": {"moe": {"runs": 15, "within_25_percent": 2, "median_ratio": 1.54,
                                      "q1_ratio": 1.3, "q3_ratio": 1.8}},
                   "vllm": {"dense": {"runs": 10, "within_25_percent": 10,
                                      "median_ratio": 1.05, "q1_ratio": 0.98,
                                      "q3_ratio": 1.11}}},
        "h100-sxm": {"trtllm": {"dense": {"runs": 1, "within_25_percent": 1,
                                          "median_ratio": 0.95, "q1_ratio": 0.95,
                                          "q3_ratio": 0.95},
                                "moe": {"runs": 0, "within_25_percent": 0,
                                        "median_ratio": 3.0, "q1_ratio": 3.0,
                                        "q3_ratio": 3.0}}}},
}


def test_a_measured_triple_returns_exactly_its_figures() -> None:
    ratio = speed_ratio("mi300x", "sglang", "moe", SUMMARY, gpu_name="MI300X")
    assert ratio == SpeedRatio(1.54, 1.3, 1.8, 15, (
        "median planner ÷ published 1.54 over 15 runs of MoE models on the MI300X with SGLang "
        "(interquartile 1.30-1.80)"))
    dense = speed_ratio("mi300x", "vllm", "dense", SUMMARY)
    assert (dense.median, dense.q1, dense.q3, dense.runs) == (1.05, 0.98, 1.11, 10)
    assert "over 10 runs of dense models on the mi300x with vLLM" in dense.basis  # id: no name
    one = speed_ratio("h100-sxm", "trtllm", "dense", SUMMARY)
    assert (one.median, one.q1, one.q3, one.runs) == (0.95, 0.95, 0.95, 1)
    assert "over 1 run of dense models" in one.basis
    with pytest.raises(AttributeError):
        ratio.median = 1.0  # type: ignore[misc]  # frozen


def test_a_triple_with_no_run_is_1_and_says_so() -> None:
    ratio = speed_ratio("h100-sxm", "vllm", "dense", SUMMARY, gpu_name="H100 SXM")
    assert ratio == SpeedRatio(1.0, 1.0, 1.0, 0, (
        "no published run of a dense model on the H100 SXM with vLLM was compared; the model's "
        "own speed is used"))
    # a GPU nobody measured, an engine nobody measured, a summary without the breakdown
    assert speed_ratio("l4", "vllm", "dense", SUMMARY).runs == 0
    assert speed_ratio("mi300x", "trtllm", "moe", SUMMARY).median == 1.0
    old = {k: v for k, v in SUMMARY.items() if k != "steady_state_by_gpu_engine_class"}
    assert speed_ratio("mi300x", "sglang", "moe", old).median == 1.0
    # a cell that holds no run is no measurement, whatever its ratios say
    empty = speed_ratio("h100-sxm", "trtllm", "moe", SUMMARY)
    assert (empty.median, empty.runs) == (1.0, 0)
    assert "no published run of an MoE model" in empty.basis


def test_a_dense_lookup_never_returns_the_moe_figures() -> None:
    """MI300X with SGLang: only MoE models ran. A dense 70B there gets 1.0, not the MoE 1.54,
    nor the GPU's 1.21 nor the engine's 1.54 nor the GPU-and-engine 1.54."""
    dense = speed_ratio("mi300x", "sglang", "dense", SUMMARY)
    assert (dense.median, dense.q1, dense.q3, dense.runs) == (1.0, 1.0, 1.0, 0)
    assert "1.54" not in dense.basis and "1.21" not in dense.basis
    moe = speed_ratio("mi300x", "vllm", "moe", SUMMARY)  # and the other way round
    assert (moe.median, moe.runs) == (1.0, 0)
    figures = speed_on("mi300x", "sglang", SUMMARY, model_class="dense")
    assert figures["model_class"] == "dense" and figures["gpu_engine_class"] is None
    assert figures["gpu_and_engine"] == SUMMARY["steady_state_by_gpu_and_engine"]["mi300x"][
        "sglang"]  # the wider figures stay, under their own keys
    assert speed_on("mi300x", "sglang", SUMMARY, model_class="moe")["gpu_engine_class"] == \
        SUMMARY["steady_state_by_gpu_engine_class"]["mi300x"]["sglang"]["moe"]
    assert "model_class" not in speed_on("mi300x", "sglang", SUMMARY)


def test_the_sentence_is_keyed_by_gpu_engine_and_class() -> None:
    moe = speed_sentence("mi300x", "AMD Instinct MI300X", "sglang", "moe", SUMMARY)
    assert moe == (
        "Measured: serving speed on the AMD Instinct MI300X with SGLang, MoE models: median "
        "planner ÷ published 1.54 over 15 steady-state runs (interquartile 1.30-1.80), 2 of them "
        "within ±25%; every engine and model on this GPU: 12 of 25 within ±25%, median 1.21 "
        "(docs/accuracy.md).")
    dense = speed_sentence("mi300x", "AMD Instinct MI300X", "sglang", "dense", SUMMARY)
    assert dense == (
        "Measured: serving speed on the AMD Instinct MI300X with SGLang, dense models: no "
        "published run compared (the planner's own speed stands); every engine and model on "
        "this GPU: 12 of 25 within ±25%, median 1.21 (docs/accuracy.md).")
    # the triple is every run on the GPU: nothing more to add
    h100 = speed_sentence("h100-sxm", "H100", "trtllm", "dense", {
        **SUMMARY, "steady_state_by_gpu": {"h100-sxm": {"runs": 1, "within_25_percent": 1,
                                                        "median_ratio": 0.95}}})
    assert h100.endswith("1 of them within ±25% (docs/accuracy.md).")
    assert "over 1 steady-state run " in h100
    assert speed_sentence("l4", "L4", "vllm", "dense", SUMMARY) == (
        "Measured: no published serving run on the L4 has been compared yet (docs/accuracy.md).")


def test_model_class_reads_the_routed_expert_fields() -> None:
    models = load_models()
    assert model_class(models.entries["llama-3.1-70b"]) == "dense"
    assert model_class(models.entries["mixtral-8x7b"]) == "moe"  # num_local_experts
    assert model_class(models.entries["qwen3-30b-a3b"]) == "moe"  # num_experts
    assert model_class(models.entries["deepseek-v3"]) == "moe"  # n_routed_experts

    def entry(**values: object) -> Entry:
        return Entry("m", values, {}, 1, models.path)

    assert model_class(entry(num_experts=0, hidden_size=4096)) == "dense"
    assert model_class(entry(n_routed_experts=64)) == "moe"


def test_the_shipped_summary_answers_by_class() -> None:
    """The shipped figures: MoE models on MI300X with SGLang carry their own ratio, and a dense
    model there carries none (only MoE models ran with SGLang on it)."""
    data = load_measured()
    assert data is not None
    cell = data["steady_state_by_gpu_engine_class"]["mi300x"]["sglang"]["moe"]
    moe = speed_ratio("mi300x", "sglang", "moe")
    assert (moe.median, moe.q1, moe.q3, moe.runs) == (
        cell["median_ratio"], cell["q1_ratio"], cell["q3_ratio"], cell["runs"])
    assert moe.q1 <= moe.median <= moe.q3
    assert speed_ratio("mi300x", "sglang", "dense").runs == 0


def test_a_layout_quotes_the_runs_served_that_way() -> None:
    """A layout beyond one TP group quotes its own as-ran figures, and says when none was
    compared; one TP group quotes nothing more."""
    from planner.evidence.measured import layout_sentence

    data = {"layouts_as_ran": {"dp-attention": {
        "runs": 27, "within_25_percent": 15, "median_ratio": 1.22,
        "as_one_tp_group": {"runs": 27, "within_25_percent": 17, "median_ratio": 0.84},
        "engines": ["trtllm"], "models": ["qwen3-235b-a22b"]}}}
    assert layout_sentence("dp-attention", data) == (
        "Measured: 27 published runs served with DP attention with expert parallelism "
        "(TensorRT-LLM; qwen3-235b-a22b), evaluated that way: 15 within ±25%, median planner "
        "÷ published 1.22 (as one TP group: 17, median 0.84; docs/accuracy.md).")
    assert layout_sentence("tp+ep", data).startswith(
        "Measured: no published run served with expert parallelism has been compared")
    assert layout_sentence("tp", data) == layout_sentence("disaggregated", data) == ""
    shipped = load_measured()
    assert shipped is not None and "dp-attention" in shipped["layouts_as_ran"]


def test_the_sentence_says_how_many_runs_were_held_out() -> None:
    """A cell's runs gathered after the model was built are named: a figure earned on evidence
    the mechanisms were chosen from reads better than one the model had never seen."""
    def with_held_out(n: int) -> dict[str, Any]:
        cells = SUMMARY["steady_state_by_gpu_engine_class"]
        moe = {**cells["mi300x"]["sglang"]["moe"], "held_out_runs": n}
        return {**SUMMARY, "steady_state_by_gpu_engine_class": {
            **cells, "mi300x": {**cells["mi300x"], "sglang": {"moe": moe}}}}

    def sentence(n: int) -> str:
        return speed_sentence("mi300x", "MI300X", "sglang", "moe", with_held_out(n))
    assert "within ±25%, 6 of them held out (gathered after the model was built); every" in (
        sentence(6))
    assert "within ±25%, all of them held out (gathered after" in sentence(15)
    assert "held out" not in sentence(0)
    one = speed_sentence("h100-sxm", "H100", "trtllm", "dense", {
        **SUMMARY, "steady_state_by_gpu_engine_class": {"h100-sxm": {"trtllm": {"dense": {
            "runs": 1, "within_25_percent": 1, "median_ratio": 0.95, "q1_ratio": 0.95,
            "q3_ratio": 0.95, "held_out_runs": 1}}}}})
    assert "1 of them within ±25%, held out (gathered after the model was built)" in one


def test_the_sentence_says_how_far_the_engine_image_alone_moved_a_configuration() -> None:
    """Where one configuration ran on several days (one engine image each), the sentence says
    how far its time per output token moved against the planner's: the spread a margin from
    the measured median cannot promise away. Absent where nothing was run twice."""
    moved = {"mi300x": {"sglang": {"configurations": 3, "median_moved": 1.81,
                                   "most_moved": 1.81}}}
    text = speed_sentence("mi300x", "MI300X", "sglang", "moe",
                          {**SUMMARY, "level_by_image": moved})
    assert text.endswith(
        "from one engine image to the next the same DeepSeek-R1 configuration's time per output "
        "token here moved by up to 1.81× (median 1.81× over 3 configurations run on several "
        "days), which no GPU property carries (docs/accuracy.md).")
    assert "engine image" not in speed_sentence("mi300x", "MI300X", "vllm", "moe",
                                                {**SUMMARY, "level_by_image": moved})
    assert "engine image" not in speed_sentence("mi300x", "MI300X", "sglang", "moe",
                                                {**SUMMARY, "level_by_image": {}})


def test_the_image_spread_is_within_one_configuration() -> None:
    """A configuration's level (published ÷ planner time per output token at 1K/1K) on two
    days gives their quotient; two configurations on one day each give nothing."""
    report = load_script("accuracy_same_day", ROOT / "docs" / "accuracy_same_day.py")

    def day(date: str, conc: int, published: float) -> Any:
        base = report.Length(1024, 1024, published, 10.0)
        return report.Day(f"{date}-8xmi300x-sglang-fp8-tp8-c{conc}", date, "mi300x", "sglang",
                          "fp8", conc, {(1024, 1024): base})

    spread = report.image_spread([day("2026-01-01", 4, 20.0), day("2026-02-01", 4, 12.5),
                                  day("2026-01-01", 64, 40.0), day("2026-01-02", 16, 11.0)])
    assert spread == {"mi300x": {"sglang": {"configurations": 1, "median_moved": 1.6,
                                            "most_moved": 1.6}}}
