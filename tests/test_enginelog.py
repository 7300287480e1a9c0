"""The startup-log parser, on real vLLM, SGLang and TensorRT-LLM logs (tests/data/logs/SOURCES.md).

Every expected number was read by hand from the log file; ``lines`` pins where it was read.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest

from planner.errors import PlannerError
from planner.evidence.enginelog.parse import parse_log, parse_text
from planner.evidence.enginelog.report import EngineReport, LogError

LOGS = Path(__file__).parent / "data" / "logs"


def read(name: str) -> str:
    """A saved log as the parser sees it: no newline translation (some lines hold a bare CR)."""
    return (LOGS / name).read_bytes().decode("utf-8")

NONE: dict[str, Any] = {
    "engine_version": None, "engine_core": None, "model": None, "tensor_parallel_size": None,
    "gpu_memory_utilization": None, "memory_fraction_name": None, "max_model_len": None,
    "max_num_seqs": None, "max_num_batched_tokens": None, "kv_cache_dtype": None, "dtype": None,
    "quantization": None, "total_gib": None, "weights_gib": None, "activation_peak_gib": None,
    "non_torch_gib": None, "kv_cache_gib": None, "kv_cache_tokens": None, "gpu_blocks": None,
    "max_concurrency": None, "cuda_graph_gib": None, "cuda_graph_estimate_gib": None,
    "cuda_graphs_in_budget": None,
}

# file -> (every field of the report, the line each non-None field was read from)
EXPECTED: dict[str, tuple[dict[str, Any], dict[str, int]]] = {
    "vllm-v1-0.19.0-h100-llama3.1-8b-tp1.log": (
        {"engine": "vllm", "engine_version": "0.19.0", "engine_core": "V1",
         "model": "meta-llama/Llama-3.1-8B-Instruct", "tensor_parallel_size": 1,
         "gpu_memory_utilization": 0.95, "memory_fraction_name": "gpu_memory_utilization",
         "max_model_len": 8192, "max_num_seqs": 1024, "max_num_batched_tokens": 8192,
         "kv_cache_dtype": "auto", "dtype": "bfloat16", "total_gib": 79.19, "weights_gib": 14.99,
         "activation_peak_gib": 1.89, "non_torch_gib": 0.25, "kv_cache_gib": 58.11,
         "kv_cache_tokens": 476016, "gpu_blocks": 29751, "max_concurrency": 58.11,
         "cuda_graph_gib": 0.91, "cuda_graph_estimate_gib": 0.84},
        {"engine_version": 63, "engine_core": 63, "model": 63, "tensor_parallel_size": 63,
         "gpu_memory_utilization": 25, "max_model_len": 63, "max_num_seqs": 35,
         "max_num_batched_tokens": 36, "kv_cache_dtype": 63, "dtype": 63, "total_gib": 690,
         "weights_gib": 105, "activation_peak_gib": 372, "non_torch_gib": 372,
         "kv_cache_gib": 373, "kv_cache_tokens": 375, "gpu_blocks": 699, "max_concurrency": 376,
         "cuda_graph_gib": 688, "cuda_graph_estimate_gib": 369},
    ),
    "vllm-v1-0.19.0-h100-llama3.1-8b-tp4.log": (
        {"engine": "vllm", "engine_version": "0.19.0", "engine_core": "V1",
         "model": "meta-llama/Llama-3.1-8B-Instruct", "tensor_parallel_size": 4,
         "gpu_memory_utilization": 0.95, "memory_fraction_name": "gpu_memory_utilization",
         "max_model_len": 8192, "max_num_seqs": 1024, "max_num_batched_tokens": 8192,
         "kv_cache_dtype": "auto", "dtype": "bfloat16", "total_gib": 79.19, "weights_gib": 3.77,
         "activation_peak_gib": 1.89, "non_torch_gib": 2.13, "kv_cache_gib": 67.44,
         "kv_cache_tokens": 2209792, "gpu_blocks": 138112, "max_concurrency": 269.75,
         "cuda_graph_gib": 0.67, "cuda_graph_estimate_gib": 0.57},
        {"engine_version": 67, "engine_core": 67, "model": 67, "tensor_parallel_size": 67,
         "gpu_memory_utilization": 25, "max_model_len": 67, "max_num_seqs": 35,
         "max_num_batched_tokens": 37, "kv_cache_dtype": 67, "dtype": 67, "total_gib": 387,
         "weights_gib": 265, "activation_peak_gib": 348, "non_torch_gib": 348,
         "kv_cache_gib": 349, "kv_cache_tokens": 372, "gpu_blocks": 407, "max_concurrency": 373,
         "cuda_graph_gib": 385, "cuda_graph_estimate_gib": 339},
    ),
    "vllm-v1-0.11.0-l4-llama3.1-8b.log": (
        {"engine": "vllm", "engine_version": "0.11.0", "engine_core": "V1",
         "model": "meta-llama/Meta-Llama-3.1-8B-Instruct", "tensor_parallel_size": 1,
         "gpu_memory_utilization": 0.92, "memory_fraction_name": "gpu_memory_utilization",
         "max_model_len": 32000, "max_num_seqs": 128, "max_num_batched_tokens": 2048,
         "kv_cache_dtype": "auto", "dtype": "bfloat16", "weights_gib": 14.9889,
         "kv_cache_gib": 4.75, "kv_cache_tokens": 38944, "gpu_blocks": 2434,
         "max_concurrency": 1.22, "cuda_graph_gib": 0.38},
        {"engine_version": 30, "engine_core": 30, "model": 30, "tensor_parallel_size": 30,
         "gpu_memory_utilization": 14, "max_model_len": 30, "max_num_seqs": 14,
         "max_num_batched_tokens": 19, "kv_cache_dtype": 30, "dtype": 30, "weights_gib": 52,
         "kv_cache_gib": 59, "kv_cache_tokens": 60, "gpu_blocks": 66, "max_concurrency": 61,
         "cuda_graph_gib": 64},
    ),
    "vllm-v0-0.6.6.post1-l40s-internvl3-78b-tp8.log": (
        {"engine": "vllm", "engine_version": "0.6.6.post1", "engine_core": "V0",
         "model": "/models/internvl3-78b", "tensor_parallel_size": 8,
         "gpu_memory_utilization": 0.92, "memory_fraction_name": "gpu_memory_utilization",
         "max_model_len": 8192, "kv_cache_dtype": "auto", "dtype": "bfloat16",
         "total_gib": 44.39, "weights_gib": 21.6682, "activation_peak_gib": 15.73,
         "non_torch_gib": 0.36, "kv_cache_gib": 3.09, "gpu_blocks": 5065,
         "max_concurrency": 9.89, "cuda_graph_gib": 0.36},
        # the driver's lines (no worker prefix) win over the seven workers' duplicates
        {"engine_version": 3, "engine_core": 131, "model": 3, "tensor_parallel_size": 3,
         "gpu_memory_utilization": 126, "max_model_len": 3, "kv_cache_dtype": 3, "dtype": 3,
         "total_gib": 126, "weights_gib": 92, "activation_peak_gib": 110, "non_torch_gib": 110,
         "kv_cache_gib": 110, "gpu_blocks": 131, "max_concurrency": 132, "cuda_graph_gib": 147},
    ),
    "vllm-v0-0.6.x-mi300x-llama3.1-70b-fp8.log": (
        # model, TP, max_num_seqs and quantization come from the echoed `vllm serve` command;
        # the profiling line is wrapped over lines 4-6; activation = peak_torch 86.79 - 67.6979
        {"engine": "vllm", "engine_core": "V0", "model": "meta-llama/Llama-3.1-70B-Instruct",
         "tensor_parallel_size": 1, "gpu_memory_utilization": 0.98,
         "memory_fraction_name": "gpu_memory_utilization", "max_model_len": 32768,
         "max_num_seqs": 4096, "quantization": "fp8", "total_gib": 191.98,
         "weights_gib": 67.6979, "activation_peak_gib": 19.09, "non_torch_gib": 6.07,
         "kv_cache_gib": 95.28, "gpu_blocks": 19513, "max_concurrency": 9.53},
        {"engine_core": 7, "model": 1, "tensor_parallel_size": 1, "gpu_memory_utilization": 4,
         "max_model_len": 8, "max_num_seqs": 1, "quantization": 1, "total_gib": 4,
         "weights_gib": 3, "activation_peak_gib": 4, "non_torch_gib": 4, "kv_cache_gib": 4,
         "gpu_blocks": 7, "max_concurrency": 8},
    ),
    "sglang-2025-04-llama2-7b-eagle.log": (
        # the target model's lines (11, 12) come before the EAGLE draft model's (22, 23)
        {"engine": "sglang", "model": "meta-llama/Llama-2-7b-chat-hf", "tensor_parallel_size": 1,
         "gpu_memory_utilization": 0.88, "memory_fraction_name": "mem_fraction_static",
         "max_model_len": 4096, "max_num_seqs": 200, "max_num_batched_tokens": 8192,
         "kv_cache_dtype": "auto", "dtype": "float16", "weights_gib": 30.34,
         "kv_cache_gib": 10.0, "kv_cache_tokens": 20480},
        {"model": 1, "tensor_parallel_size": 1, "gpu_memory_utilization": 1, "max_model_len": 25,
         "max_num_seqs": 25, "max_num_batched_tokens": 25, "kv_cache_dtype": 1, "dtype": 11,
         "weights_gib": 11, "kv_cache_gib": 12, "kv_cache_tokens": 12},
    ),
    "sglang-2025-07-llama3.1-8b.log": (
        {"engine": "sglang", "max_model_len": 131072, "max_num_seqs": 2048,
         "max_num_batched_tokens": 2048, "dtype": "bfloat16", "weights_gib": 15.02,
         "kv_cache_gib": 4.66, "kv_cache_tokens": 38141, "cuda_graph_gib": 0.11},
        {"max_model_len": 8, "max_num_seqs": 8, "max_num_batched_tokens": 8, "dtype": 1,
         "weights_gib": 1, "kv_cache_gib": 2, "kv_cache_tokens": 2, "cuda_graph_gib": 7},
    ),
    "sglang-0.3-mi300x-llama3-8b-tp1-bench.log": (
        {"engine": "sglang", "model": "meta-llama/Meta-Llama-3-8B-Instruct", "dtype": "bfloat16",
         "kv_cache_tokens": 1256440},
        {"model": 1, "dtype": 17, "kv_cache_tokens": 20},
    ),
    "sglang-h100x4-qwen3-235b-fp8-tp4.log": (
        {"engine": "sglang", "kv_cache_gib": 16.46, "kv_cache_tokens": 367404},
        {"kv_cache_gib": 1, "kv_cache_tokens": 1},
    ),
    "trtllm-0.19.0-rtx5090-llama3.1-8b-fp8.log": (
        {"engine": "trtllm", "total_gib": 31.84, "kv_cache_gib": 16.05,
         "kv_cache_tokens": 263008, "gpu_blocks": 8219},
        {"total_gib": 1, "kv_cache_gib": 5, "kv_cache_tokens": 5, "gpu_blocks": 2},
    ),
    "trtllm-dynamo-llmapi-worker.log": (
        {"engine": "trtllm", "max_model_len": 131072, "max_num_seqs": 2048,
         "max_num_batched_tokens": 8192, "kv_cache_gib": 26.91, "kv_cache_tokens": 220480},
        {"max_model_len": 5, "max_num_seqs": 5, "max_num_batched_tokens": 5, "kv_cache_gib": 4,
         "kv_cache_tokens": 4},
    ),
}


def test_every_saved_log_is_covered_and_cited() -> None:
    logs = {path.name for path in LOGS.glob("*.log")}
    failed = {name for name in logs if ".FAILED." in name}
    assert logs - failed == set(EXPECTED)
    sources = (LOGS / "SOURCES.md").read_text(encoding="utf-8")
    for name in logs:
        assert f"`{name}`" in sources, name


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_real_log(name: str) -> None:
    fields, lines = EXPECTED[name]
    report = parse_log(LOGS / name)
    got = dataclasses.asdict(report)
    assert got.pop("lines") == lines
    assert got == {**NONE, **fields}


def test_types_are_the_reports() -> None:
    report = parse_log(LOGS / "vllm-v1-0.19.0-h100-llama3.1-8b-tp1.log")
    assert isinstance(report, EngineReport)
    assert isinstance(report.kv_cache_tokens, int) and isinstance(report.gpu_blocks, int)
    assert isinstance(report.kv_cache_gib, float) and isinstance(report.max_model_len, int)
    with pytest.raises(dataclasses.FrozenInstanceError):
        report.kv_cache_gib = 1.0  # type: ignore[misc]


def test_tensor_parallel_figures_come_from_rank_0() -> None:
    path = LOGS / "vllm-v1-0.19.0-h100-llama3.1-8b-tp4.log"
    text = read(path.name).split("\n")
    report = parse_log(path)
    for name in ("weights_gib", "activation_peak_gib", "kv_cache_gib", "cuda_graph_gib",
                 "total_gib"):
        assert text[report.lines[name] - 1].startswith("(Worker_TP0 "), name


def test_ansi_colour_codes_are_ignored() -> None:
    path = LOGS / "vllm-v1-0.11.0-l4-llama3.1-8b.log"
    raw = read(path.name)
    assert "\x1b[1;36m(EngineCore_DP0" in raw  # the file really is coloured
    assert parse_log(path) == parse_text(raw, str(path))


def test_parse_text_matches_parse_log_and_accepts_crlf() -> None:
    path = LOGS / "trtllm-0.19.0-rtx5090-llama3.1-8b-fp8.log"
    text = read(path.name)
    assert parse_text(text) == parse_log(path)
    assert parse_text(text.replace("\n", "\r\n")) == parse_log(path)


# --- errors -----------------------------------------------------------------------------------

def test_missing_file(tmp_path: Path) -> None:
    path = tmp_path / "nope.log"
    with pytest.raises(LogError) as caught:
        parse_log(path)
    assert str(caught.value).startswith(f"{path}: cannot read the log: ")
    assert isinstance(caught.value, PlannerError)


def test_directory_is_not_a_log(tmp_path: Path) -> None:
    with pytest.raises(LogError, match="cannot read the log"):
        parse_log(tmp_path)


@pytest.mark.parametrize("content", ["", "\n\n  \n"])
def test_empty_file(tmp_path: Path, content: str) -> None:
    path = tmp_path / "empty.log"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(LogError) as caught:
        parse_log(path)
    assert str(caught.value).startswith(f"{path}: the log is empty")


def test_unrelated_text_names_the_lines_it_expected(tmp_path: Path) -> None:
    path = tmp_path / "notes.txt"
    path.write_text((Path(__file__).parent.parent / "pyproject.toml").read_text(encoding="utf-8"),
                    encoding="utf-8")
    with pytest.raises(LogError) as caught:
        parse_log(path)
    message = str(caught.value)
    assert message.startswith(f"{path}: no serving-engine startup recognised: ")
    for expected in ("'GPU KV cache size: N tokens' (vLLM V1)", "'# GPU blocks: N' (vLLM V0)",
                     "'KV Cache is allocated. #tokens: N' (SGLang)",
                     "paged KV cache (N)' (TensorRT-LLM)"):
        assert expected in message
    assert "\n  hint: " in message


def test_vllm_log_without_its_kv_line_names_the_line_and_the_engine_error() -> None:
    path = LOGS / "vllm-v1-0.19.0-h100-codellama-34b-tp2.FAILED.log"
    with pytest.raises(LogError) as caught:
        parse_log(path)
    message = str(caught.value)
    assert message.startswith(
        f"{path}: a vLLM V1 log, but no 'GPU KV cache size: N tokens' or "
        "'Available KV cache memory: X GiB' line found\n  hint: ")
    assert "line 158: (Worker pid=485) ERROR" in message  # why the engine stopped
    assert "ValueError: Free memory on device cuda:1 (60.87/79.19 GiB)" in message


def test_truncated_vllm_log_says_the_log_may_end_early() -> None:
    lines = read("vllm-v1-0.19.0-h100-llama3.1-8b-tp1.log").split("\n")
    with pytest.raises(LogError) as caught:
        parse_text("\n".join(lines[:370]), "cut.log")  # stops before "Available KV cache memory"
    message = str(caught.value)
    assert message.startswith("cut.log: a vLLM V1 log, but no 'GPU KV cache size: N tokens'")
    assert "may end before the engine finished starting" in message


def test_truncated_vllm_v0_log_names_the_v0_line() -> None:
    lines = read("vllm-v0-0.6.6.post1-l40s-internvl3-78b-tp8.log").split("\n")
    with pytest.raises(LogError, match=r"^v0\.log: a vLLM V0 log, but no "
                                       r"'# GPU blocks: N, # CPU blocks: M' line found"):
        parse_text("\n".join(lines[:100]), "v0.log")


def test_truncated_sglang_log_names_the_sglang_line() -> None:
    lines = read("sglang-2025-04-llama2-7b-eagle.log").split("\n")
    with pytest.raises(LogError, match=r"^s\.log: a SGLang log, but no 'KV Cache is allocated\. "
                                       r"#tokens: N' or 'max_total_num_tokens=N' line found"):
        parse_text("\n".join(lines[:10]), "s.log")  # stops before "Load weight end"


def test_two_engines_in_one_log_are_refused() -> None:
    vllm = read("vllm-v1-0.11.0-l4-llama3.1-8b.log")
    sglang = read("sglang-2025-07-llama3.1-8b.log")
    with pytest.raises(LogError) as caught:
        parse_text(vllm + sglang, "both.log")
    assert str(caught.value).startswith(
        "both.log: the log mixes the startup of several engines (vLLM at line 59, SGLang at "
        "line 251)")


def test_undecodable_bytes_do_not_stop_the_parser(tmp_path: Path) -> None:
    source = LOGS / "sglang-2025-07-llama3.1-8b.log"
    path = tmp_path / "latin1.log"
    path.write_bytes(b"\xff\xfe garbage \x80\n" + source.read_bytes())
    report = parse_log(path)
    assert (report.kv_cache_tokens, report.kv_cache_gib) == (38141, 4.66)
    assert report.lines["kv_cache_tokens"] == 3
