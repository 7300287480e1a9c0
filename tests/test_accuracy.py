"""docs/accuracy.md is generated from the code and the calibration data; the figures it measured."""

from __future__ import annotations

import statistics
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
import yaml

from planner.inputs.catalog import load_gpus, load_models
from planner.inputs.entries import Catalog
from planner.plan.calibration import predict
from tests.scripts import load_script

GENERATOR = Path(__file__).parent.parent / "docs" / "generate_accuracy.py"


@pytest.fixture(scope="module")
def gen() -> ModuleType:
    return load_script("generate_accuracy", GENERATOR)


@pytest.fixture(scope="module")
def catalogs() -> tuple[Catalog, Catalog]:
    return load_models(), load_gpus()


@pytest.fixture(scope="module")
def startup(gen: ModuleType, catalogs: tuple[Catalog, Catalog]) -> dict[str, Any]:
    points, _, _ = gen.load_points()
    return {str(p["id"]): gen.startup_row(p, *catalogs) for p in points}


@pytest.fixture(scope="module")
def throughput(gen: ModuleType, catalogs: tuple[Catalog, Catalog]) -> list[Any]:
    _, entries, _ = gen.load_points()
    rows, unreadable, duplicates = gen.throughput_rows(entries, *catalogs)
    assert unreadable == []
    assert len(duplicates) == 1  # gpustack's concurrency-4 run, in both data files
    return rows


def test_accuracy_report_is_current(gen: ModuleType) -> None:
    assert gen.TARGET.read_text() == gen.report(), "run python docs/generate_accuracy.py"


def test_shipped_accuracy_summary_is_current(gen: ModuleType) -> None:
    """catalogs/measured-accuracy.yaml, which the HTML summary quotes, is today's figures."""
    assert gen.SUMMARY.read_text() == gen.summary_text(), "run python docs/generate_accuracy.py"
    data = yaml.safe_load(gen.SUMMARY.read_text())
    assert data["kv_pool"]["within_5_percent"] == 28
    assert data["throughput_steady_state"]["runs"] == sum(
        g["runs"] for g in data["steady_state_by_gpu"].values())
    # the GPU-and-engine cells split each GPU's runs, and each engine's, without loss
    pairs = data["steady_state_by_gpu_and_engine"]
    for gpu, figures in data["steady_state_by_gpu"].items():
        for key in ("runs", "within_25_percent"):
            assert figures[key] == sum(p[key] for p in pairs[gpu].values()), (gpu, key)
    for engine, figures in data["steady_state_by_engine"].items():
        assert figures["runs"] == sum(p[engine]["runs"] for p in pairs.values() if engine in p)
    # MI300X: AMD's vLLM tables and SGLang's cookbook and InferenceX runs fare differently
    assert pairs["mi300x"]["sglang"]["runs"] + pairs["mi300x"]["vllm"]["runs"] == 63 + 15
    assert pairs["mi300x"]["sglang"]["median_ratio"] > 1.5 > 1.25 > pairs["mi300x"]["vllm"][
        "median_ratio"]
    # the InferenceX runs are held out: counted apart from the evidence the model was built on
    held_out = data["steady_state_by_evidence"]["held_out"]
    assert held_out["runs"] == 118
    assert data["steady_state_by_evidence"]["used_to_build"]["runs"] + 118 == data[
        "throughput_steady_state"]["runs"]


def test_the_class_cells_split_each_gpu_and_engine(gen: ModuleType) -> None:
    """Each GPU-and-engine cell of the shipped summary splits into dense and MoE cells whose
    runs and runs within ±25% add up to it, and no triple lies outside a GPU-and-engine cell."""
    data = yaml.safe_load(gen.SUMMARY.read_text())
    pairs, triples = data["steady_state_by_gpu_and_engine"], data[
        "steady_state_by_gpu_engine_class"]
    assert {(g, e) for g in triples for e in triples[g]} == {(g, e) for g in pairs
                                                           for e in pairs[g]}
    for gpu, engines in pairs.items():
        for engine, figures in engines.items():
            classes = triples[gpu][engine]
            assert set(classes) <= {"dense", "moe"}, (gpu, engine)
            for key in ("runs", "within_25_percent"):
                assert figures[key] == sum(c[key] for c in classes.values()), (gpu, engine, key)
            if len(classes) == 1:  # one class: its median is the pair's
                assert next(iter(classes.values()))["median_ratio"] == figures["median_ratio"]
            for cell in classes.values():
                assert cell["runs"] > 0
                assert cell["q1_ratio"] <= cell["median_ratio"] <= cell["q3_ratio"]
                if cell["runs"] == 1:
                    assert cell["q1_ratio"] == cell["median_ratio"] == cell["q3_ratio"]
    # SGLang's MI300X runs are the cookbook's MoE models; AMD's vLLM tables are mostly dense
    assert set(triples["mi300x"]["sglang"]) == {"moe"}
    assert triples["mi300x"]["vllm"]["dense"]["median_ratio"] < 1.25 < triples["mi300x"][
        "vllm"]["moe"]["median_ratio"]


def test_the_interquartile_ratios_by_hand(gen: ModuleType) -> None:
    """Inclusive quartiles interpolate between the runs: over 1.0, 1.2, 1.6, 2.0 the first
    quartile sits 3/4 of the way from 1.0 to 1.2, the third 1/4 of the way from 1.6 to 2.0."""
    assert gen._spread_summary([2.0, 1.0, 1.6, 1.2]) == {
        "runs": 4, "within_25_percent": 2, "median_ratio": 1.4, "q1_ratio": 1.15,
        "q3_ratio": 1.7}
    assert gen._spread_summary([1.37]) == {"runs": 1, "within_25_percent": 0,
                                           "median_ratio": 1.37, "q1_ratio": 1.37,
                                           "q3_ratio": 1.37}


def test_report_is_deterministic_and_reads_both_files(gen: ModuleType) -> None:
    text = gen.report()
    assert text == gen.report()
    assert "Data files not read" not in text
    assert text.index("## Method") < text.index("## Startup") < text.index("## Throughput")


def test_startup_points_compared(gen: ModuleType, startup: dict[str, Any]) -> None:
    rows = list(startup.values())
    compared = [r for r in rows if r.error is not None]
    assert len(rows) == 39
    assert len(compared) == 31
    errors = [abs(r.error) for r in compared]
    # Floors at today's measured figures (28/31 within 5 %, 29/31 within 10 %, median 0.4 %):
    # a change to the engine model may improve them, never quietly worsen them.
    assert sum(e <= 5 for e in errors) >= 28
    assert sum(e <= 10 for e in errors) >= 29
    assert statistics.median(errors) <= 1.0
    built = [r for r in compared if gen.role_of(r.point) == gen.BUILT]
    assert len(built) == 26 and sum(abs(r.error) <= 5 for r in built) >= 24
    judged = [r for r in rows if r.planner_fits is not None]
    assert all(r.engine_fits == r.planner_fits for r in judged if gen.role_of(r.point) == gen.BUILT)
    # Held out: the one verdict the planner gets wrong is gpt-oss-120b on one H100, where a vLLM
    # release before 0.17 loaded 64.38 GiB of weights; the planner pads MXFP4 experts as vLLM
    # 0.19 does at TP 2 (both widths to 3,072), 68.9 GiB, which leaves no room.
    wrong = [r.point["id"] for r in judged if r.engine_fits != r.planner_fits]
    assert wrong == ["llmdbench-h100-gpt-oss-120b-tp1-16k"]


def test_every_point_is_either_built_from_or_held_out(gen: ModuleType) -> None:
    """Each data file is evidence the mechanisms were built from or evidence held out from
    them; the report and the shipped summary split their figures so."""
    assert set(gen.EVIDENCE_ROLES) == set(gen.FILES)
    assert set(gen.EVIDENCE_ROLES.values()) == {gen.BUILT, gen.HELD_OUT}
    text = gen.report()
    assert "| Evidence, engine |" in text and "| Evidence | GPU | Engine |" in text
    summary = gen.summary()
    assert set(summary["kv_pool_by_evidence"]) == {"used_to_build", "held_out"}
    kv = summary["kv_pool_by_evidence"]
    assert sum(v["points"] for v in kv.values()) == summary["kv_pool"]["points"]
    steady = summary["steady_state_by_evidence"]
    assert sum(v["runs"] for v in steady.values()) == summary["throughput_steady_state"]["runs"]


def test_vllm_keeps_small_defaults_on_the_a100(
        startup: dict[str, Any], catalogs: tuple[Catalog, Catalog]) -> None:
    """vLLM picks 1,024 sequences on GPUs of 70 GiB or more, except the A100 (256): its
    sampler profile is then 256 x 128,256 x 15 B = 0.46 GiB, not 1.84, which the log shows."""
    row = startup["repo-a100-80-llama31-8b-v0171-32k"]
    assert "max_num_seqs" not in row.settings.overrides  # the log leaves it to the engine
    env = predict(row.settings, *catalogs)
    assert env.value("max_num_seqs_effective") == 256
    assert env.value("sampler_bytes_per_gpu") == 256 * 128256 * 15
    assert row.error is not None and abs(row.error) < 1  # -0.4 %: was -2.9 % at 1,024


def test_llama_8b_on_h100_within_two_percent(startup: dict[str, Any]) -> None:
    row = startup["llmd-h100-llama31-8b-bf16-tp1"]
    assert row.settings.command() == (
        "planner calc --model llama-3.1-8b --gpu h100-sxm --tp 1 --weights bf16 --kv bf16 "
        "--context 8192 --set engine=vllm --set gpu_memory_utilization=0.95 "
        "--set max_num_batched_tokens=8192.0")
    assert abs(row.error) < 2
    assert abs(row.token_error) < 2
    assert row.engine_kv == 58.11


def test_points_outside_the_catalogs_are_listed_not_compared(
        gen: ModuleType, startup: dict[str, Any], catalogs: tuple[Catalog, Catalog]) -> None:
    unknown = startup["repo-rocm-qwen25-7b-fp16-v0170"]
    assert unknown.settings is None
    assert ("GPU 'AMD Instinct GPU, model not printed (ROCm)' not in the catalogs"
            in unknown.reason)
    fake = {"id": "fake", "model_id": "acme/NoSuchModel-7B", "gpu": {"type": "NVIDIA H100"},
            "reported": {"kv_cache_gib": 1.0}}
    row = gen.startup_row(fake, *catalogs)
    assert row.reason == "model `acme/NoSuchModel-7B` not in the catalogs"
    assert f"- fake: {row.reason}." in "\n".join(gen.startup_section([fake], *catalogs))


def test_a_refused_start_is_a_does_not_fit_verdict(gen: ModuleType) -> None:
    point = {"id": "oom", "reported": {"outcome": "refused: not enough KV cache memory"}}
    assert gen.refused(point)
    assert not gen.engine_verdict(point, 8192)
    started = {"id": "ok", "reported": {"kv_cache_gib": 3.8, "max_concurrency": 1.56}}
    assert gen.engine_verdict(started, 20000)


def test_throughput_runs(gen: ModuleType, throughput: list[Any]) -> None:
    compared = [r for r in throughput if r.ratio is not None]
    ratios = [r.ratio for r in compared]
    assert len(throughput) == 422 + 118  # + InferenceX's held-out DeepSeek-R1 runs
    assert len(ratios) == 375 + 118
    within = sum(abs(x - 1) <= gen.THROUGHPUT_BAND for x in ratios)
    # Floors at today's measured figures (222/375 within ±25 %, median ratio 1.11; steady
    # state 204/301, median 1.08): a change may improve them, never quietly worsen them. (224
    # and 205 before issue 27: NCCL's NVLS buffers at TP 8 are 0.25 GiB, not 2.25, which lets
    # TP 8 runs at max load or in bursts (TensorRT-LLM's Llama 3.1 405B, gpustack's Qwen3-235B
    # on vLLM) hold more sequences and read more optimistic.)
    # throughput-points.yaml, gathered after the model was built, reads 1.34x optimistic;
    # cookbook-points.yaml, the same source's other pages recorded later, 1.37x.
    # The measured per-op tables (catalogs/perop.yaml) moved them on purpose, not quietly: steady
    # state 204 -> 209 of 301 (median 1.08 -> 1.06), every run 222 -> 220 of 375, because bursts
    # of prompts sent at once went 18 -> 11 of 72: their prefill now runs at the GEMM table's
    # efficiency at the engine's step (0.78-0.87 on A100 and H100 BF16) where the catalog's 0.5
    # stood for a whole forward pass (docs/accuracy.md, docs/engines.md).
    # InferenceX's 118 held-out runs (tests/test_inferencex.py) were added at 83 within ±25%.
    assert within >= 220 + 83
    assert 0.85 <= statistics.median(ratios) <= 1.15
    steady = gen.steady_ratios(compared)
    assert len(steady) == 301 + 118
    assert sum(abs(x - 1) <= gen.THROUGHPUT_BAND for x in steady) >= 209 + 83
    assert 0.85 <= statistics.median(steady) <= 1.15


def test_a_burst_is_its_prompts_at_once(throughput: list[Any]) -> None:
    """`vllm bench serve --num-prompts 1000 --request-rate inf`: at most 1,000 run together."""
    row = next(r for r in throughput
               if r.run.entry["id"] == "gpustack-qwen3-14b-h100-maxload" and r.run.case == "vllm")
    assert row.run.kind == "burst of 1000"
    assert row.run.batch == 1000
    assert row.serving_batch is not None and row.serving_batch <= 1000


def test_a_warm_up_is_not_a_steady_state(throughput: list[Any]) -> None:
    """SGLang's Llama 4 Maverick run at concurrency 1 on 8 x MI300X: 10 prompts, a mean first
    token of 4,296.56 ms against 421 later tokens at 5.95 ms (2,505 ms). With no queue the
    wait is start-up work, so the run stays in every total but not in the steady state; its
    own time per output token is what the planner's step is checked against."""
    warm = [r for r in throughput if r.run.warm_up]
    assert [(r.run.entry["id"], r.run.batch) for r in warm] == [
        ("sglcookbook-8xmi300x-llama4-maverick-1000-1000-c1", 1),
        ("sglcookbook-8xmi300x-llama4-scout-1000-1000-c1", 1)]
    maverick = warm[0]
    assert maverick.run.ttft_ms == 4296.56 and maverick.run.tpot_ms == 5.95
    assert maverick.run.osl == 422 and 5.95 * 421 == pytest.approx(2504.95)
    assert not maverick.run.steady
    assert maverick.ratio == pytest.approx(2.87, abs=0.01)  # 62 tok/s published, 178 planned
    assert maverick.tpot_ratio == pytest.approx(5.95 / 5.62, abs=0.01)
    # The same sweep at concurrency 16 waited 259 ms for its first token: a steady state.
    c16 = next(r for r in throughput
               if r.run.entry["id"] == "sglcookbook-8xmi300x-llama4-maverick-1000-1000-c16")
    assert c16.run.ttft_ms == 259.3 and c16.run.steady


def test_time_per_output_token_where_the_source_prints_it(throughput: list[Any]) -> None:
    """A Poisson run's mean TPOT is read per rate; a run that prints none has no TPOT ratio."""
    row = next(r for r in throughput
               if r.run.entry["id"] == "iog-h100pcie-llama3-8b-qps-sweep"
               and r.run.case == "32 req/s")
    assert row.run.tpot_ms is not None and row.planner_tpot_ms is not None
    assert row.tpot_ratio == pytest.approx(row.run.tpot_ms / row.planner_tpot_ms)
    static = next(r for r in throughput
                  if r.run.entry["id"] == "amd-rocm-vllm-8xmi300x-llama31-70b-fp8-latency")
    assert static.run.tpot_ms is None and static.tpot_ratio is None


def test_a_max_load_run_uses_the_engine_caps(throughput: list[Any]) -> None:
    row = next(r for r in throughput
               if r.run.entry["id"] == "trtllm-perf-overview-llama31-8b-fp8"
               and r.run.case == "H100 SXM 80GB TP1 128/128")
    assert row.settings.command() == (
        "planner calc --model llama-3.1-8b --gpu h100-sxm --tp 1 --weights fp8 --kv fp8 "
        "--context 256 --batch 4096 --prompt 128 --output 128 --set engine=trtllm "
        "--set gpu_memory_utilization=0.9")
    assert row.run.published == 28312
    assert row.serving_batch == 2048  # TensorRT-LLM's max_batch_size
    # By hand, with the measured per-op tables of H100 x TensorRT-LLM 1.3.0rc20 (FP8, the large
    # N x K class: 8.03e9 / 32 layers / 4 = 63M weights a GEMM): 32 layers x 10 kernels x 5 µs
    # (1.6 ms) + 2,048 x 10 µs + the GEMMs (compute-bound: 2,048 x 2 x 8.03e9 FLOPs at 0.5938
    # of 1,979 TFLOP/s, the table's efficiency at M = 2,048, 28.0 ms) + attention (2,048
    # sequences each reading 192 tokens x 64 KiB of FP8 KV at 0.8934 x 3.35 TB/s, the table's
    # decode attention at batch 1,024, the nearest measured, 8.6 ms) + 2,048 / 128 prompts of
    # 128 tokens interleaved (at 0.6002, the GEMM efficiency at the engine's 8,192-token step,
    # 27.7 ms) = 86.4 ms a step: 23,704 tokens/s against 28,312 (20,853 with the catalog's 0.5
    # and 0.8).
    assert row.planner == pytest.approx(23704, rel=0.002)
    assert row.ratio == pytest.approx(0.84, abs=0.01)


def test_total_tokens_are_converted_to_output_tokens(throughput: list[Any]) -> None:
    row = next(r for r in throughput
               if r.run.entry["id"] == "gpustack-qwen3-14b-h100-maxload"
               and r.run.case.startswith("random medium"))
    assert row.run.basis != "output"
    assert row.run.published == pytest.approx(10597.19 * 100 / 2100)


def test_weight_formats_from_precision_text(gen: ModuleType) -> None:
    assert gen.weights_of("fp4") == "nvfp4"
    assert gen.weights_of("mxfp4 experts / bf16 attention") == "mxfp4"
    assert gen.weights_of("fp16 (README example)") == "fp16"
    assert gen.weights_of("nvidia/Llama-3.1-8B-Instruct-FP8") == "fp8"
    assert gen.weights_of("bf16") == "bf16"


def test_readme_quotes_todays_figures(
        gen: ModuleType, startup: dict[str, Any], throughput: list[Any]) -> None:
    """The README's accuracy sentence says what docs/accuracy.md measures."""
    import re

    readme = " ".join((Path(__file__).parent.parent / "README.md").read_text().split())
    compared = [r for r in startup.values() if r.error is not None]
    within = sum(abs(r.error) <= 5 for r in compared)
    judged = [r for r in startup.values() if r.planner_fits is not None]
    agree = sum(r.engine_fits == r.planner_fits for r in judged)
    rows = [r for r in throughput if r.ratio is not None]
    steady = gen.steady_ratios(rows)
    ok = sum(abs(x - 1) <= gen.THROUGHPUT_BAND for x in steady)
    ok_all = sum(abs(r.ratio - 1) <= gen.THROUGHPUT_BAND for r in rows)
    expected = (f"within ±5% of the engine on {within} of {len(compared)} startup points "
                f"(fits verdict {agree}/{len(judged)}), and serving throughput within ±25% on "
                f"{ok} of {len(steady)} steady-state runs ({ok_all} of {len(rows)} counting")
    assert expected in readme, re.sub(r"\s+", " ", expected)


def test_a_static_batch_is_its_output_over_its_latency(throughput: list[Any]) -> None:
    """AMD's vLLM latency table: 64 prompts of 128 tokens, 2,048 out each, in 33.287 s."""
    row = next(r for r in throughput
               if r.run.entry["id"] == "amd-rocm-vllm-8xmi300x-llama31-70b-fp8-latency"
               and r.run.case == "bs64 128/2048")
    assert row.run.kind == "concurrency 64 (static batch)"
    assert row.run.batch == 64 and (row.run.isl, row.run.osl) == (128, 2048)
    assert row.run.published == pytest.approx(64 * 2048 / 33.287)


def test_time_to_first_token_with_no_queue(gen: ModuleType, throughput: list[Any],
                                           catalogs: tuple[Catalog, Catalog]) -> None:
    """SGLang's DeepSeek-R1 on 8 x B200 at concurrency 1: a mean first token of 153.0 ms for a
    610-token prompt, against the planner's prefill_seconds for the same command. Only runs at
    concurrency 1 (nothing queued) that print their mean are compared, warm-ups left out."""
    row = next(r for r in throughput
               if r.run.entry["id"] == "sglcookbook-8xb200-deepseek-r1-0528-1000-1000-c1")
    assert row.run.ttft_ms == 153.0 and row.run.batch == 1
    env = predict(row.settings, *catalogs)
    assert row.planner_ttft_ms == pytest.approx(float(env.value("prefill_seconds")) * 1000)
    compared = [r for r in throughput if r.ratio is not None]
    ratios = gen.ttft_ratios(compared)
    assert 153.0 / row.planner_ttft_ms in ratios
    alone = gen.no_queue_rows(compared)
    assert len(alone) == len(ratios)
    assert all(r.run.batch == 1 and not r.run.warm_up for r in alone)
    summary = gen.summary(*catalogs)["ttft_no_queue"]
    assert summary["runs"] == len(ratios)
    assert summary["median_ratio"] == round(statistics.median(ratios), 1)
    assert (summary["lowest"], summary["highest"]) == (round(ratios[0], 1), round(ratios[-1], 1))
    assert summary["engines"] == sorted({r.run.engine for r in alone})


def test_the_ttft_sentence_reads_the_summary() -> None:
    from planner.evidence.measured import ttft_sentence

    data = {"ttft_no_queue": {"runs": 22, "median_ratio": 7.0, "lowest": 0.7, "highest": 18.7,
                              "engines": ["sglang"]}}
    assert ttft_sentence(data) == (
        "Measured: with no queue, the engine's first token came a median 7.0× (0.7-18.7×, 22 "
        "runs with SGLang) later than the planner's prefill; fleets sized against a TTFT "
        "target carry that excess as a margin beyond the measured speed error "
        "(docs/latency.md, docs/accuracy.md).")
    assert ttft_sentence({"ttft_no_queue": None}) == ""


def test_an_engine_takes_its_own_first_token_error_only_from_enough_runs() -> None:
    from planner.evidence.measured import MIN_TTFT_RUNS, ttft_ratio

    assert MIN_TTFT_RUNS == 10
    data = {"ttft_no_queue": {"runs": 34, "median_ratio": 1.5, "lowest": 0.7, "highest": 10.1,
                              "engines": ["sglang", "vllm"],
                              "by_engine": {"sglang": {"runs": 10, "median_ratio": 1.43},
                                            "vllm": {"runs": 9, "median_ratio": 6.83}}}}
    own = ttft_ratio("sglang", data=data)
    assert (own.median, own.runs) == (1.43, 10)
    assert own.basis == ("median published ÷ planner 1.43 over 10 first tokens with no queue "
                         "of SGLang")
    few = ttft_ratio("vllm", data=data)  # 9 short prompts on small models: the server's fixed time
    assert (few.median, few.runs) == (1.5, 34)
    assert few.basis.endswith("of every engine; vLLM has 9, fewer than 10")
    assert ttft_ratio("trtllm", data=data).median == 1.5  # none of its own
    assert ttft_ratio("sglang", data={"ttft_no_queue": None}).median == 1.0


def test_a_gpu_and_engine_take_their_own_first_token_error_from_enough_runs() -> None:
    from planner.evidence.measured import ttft_ratio

    no_queue = {"runs": 34, "median_ratio": 1.5, "lowest": 0.7, "highest": 10.1,
                "engines": ["sglang"], "by_engine": {"sglang": {"runs": 30, "median_ratio": 1.43}}}
    low = {"model_class": "moe", "concurrency_at_most": 4, "runs": 39, "median_ratio": 1.8,
           "by_gpu_engine": {"mi300x": {"sglang": {"runs": 29, "median_ratio": 1.98}},
                             "h200-sxm": {"sglang": {"runs": 9, "median_ratio": 1.27}}}}
    data = {"ttft_no_queue": no_queue, "ttft_low_load": low}
    own = ttft_ratio("sglang", "mi300x", "moe", data, gpu_name="AMD Instinct MI300X")
    assert (own.median, own.runs) == (1.98, 29)
    assert own.basis == ("median published ÷ planner 1.98 over 29 first tokens of MoE models "
                         "at concurrency 4 or below on the AMD Instinct MI300X with SGLang")
    # a dense model keeps the engine's figure, as its speed margin keeps to its class
    assert ttft_ratio("sglang", "mi300x", "dense", data).median == 1.43
    # 9 runs are too few: the engine's no-queue figure; another engine or GPU: the same rule
    assert ttft_ratio("sglang", "h200-sxm", "moe", data).median == 1.43
    assert ttft_ratio("sglang", "a100-80gb-sxm", "moe", data).median == 1.43
    assert ttft_ratio("trtllm", "mi300x", "moe", data).median == 1.5
    assert ttft_ratio("sglang", "mi300x", "moe", {"ttft_no_queue": no_queue}).median == 1.43


def test_the_summary_gives_each_engines_first_token_error(
        gen: ModuleType, throughput: list[Any], catalogs: tuple[Catalog, Catalog]) -> None:
    alone = gen.no_queue_rows([r for r in throughput if r.ratio is not None])
    by_engine = gen.summary(*catalogs)["ttft_no_queue"]["by_engine"]
    for engine, figures in by_engine.items():
        mine = [r.run.ttft_ms / r.planner_ttft_ms for r in alone if r.run.engine == engine]
        assert figures == {"runs": len(mine),
                           "median_ratio": round(statistics.median(mine), 2)}
    assert sum(f["runs"] for f in by_engine.values()) == len(alone)


def test_a_run_served_with_dp_attention_is_judged_as_it_ran(
        gen: ModuleType, throughput: list[Any], catalogs: tuple[Catalog, Catalog]) -> None:
    """TensorRT-LLM's Qwen3-235B max-load run on 8 x H200 (1,000/1,000) was served with DP
    attention and expert parallelism: its ratio, the one every total counts, is `planner calc
    --layout dp-attention`'s layout_output_tokens_per_second over the published 23,789 tokens/s;
    as one TP group it is kept apart. A run its source served as one TP group keeps that."""
    from planner.plan.calc import evaluate

    row = next(r for r in throughput
               if r.run.entry["id"] == "trtllm-perf-overview-qwen3-235b-a22b"
               and "H200" in r.run.gpu and (r.run.isl, r.run.osl) == (1000, 1000))
    assert row.run.entry["layout"] == "dp-attention" and row.run.published == 23789
    ran = evaluate(row.settings.scenario, *catalogs, row.settings.overrides, "dp-attention")
    as_ran = float(ran.value("layout_output_tokens_per_second"))
    assert row.ratio == pytest.approx(as_ran / 23789)
    assert row.tp_ratio == pytest.approx(row.planner / 23789) != row.ratio
    assert row.command.endswith(" --layout dp-attention")
    assert row.planner_tpot_ms == pytest.approx(float(ran.value("layout_tpot_seconds")) * 1000)
    steady = gen.steady_rows([r for r in throughput if r.ratio is not None])
    assert row in steady and row.ratio in gen.steady_ratios(steady)
    one = next(r for r in throughput if r.ratio is not None and r.as_ran is None)
    assert one.ratio == one.tp_ratio and " --layout" not in one.command
