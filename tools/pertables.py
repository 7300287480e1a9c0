"""Measured per-operation tables for the planner: `catalogs/perop.yaml`, from the parquet tables
NVIDIA's `aiconfigurator-core` package ships (Apache-2.0).

The planner ships the small YAML this writes; only regenerating it needs the package
(`pip install -e .[tables]`, which pins the version below). For each GPU of the planner's
catalog that the package measured, and each engine (vLLM, SGLang, TensorRT-LLM) at the version
the package queries by default (its `query_versions.yaml` "current" slot; an op that version
lacks comes from the newest earlier version that has it, as the package's own backward fill
does), it summarises:

* GEMM, for each precision the multiplies run in (BF16, FP8 per-tensor, NVFP4): the fixed time
  of a kernel (the fastest GEMM of the table at that precision), which the planner charges apart as
  kernel_floor_us; the bandwidth one-token GEMMs stream their weights
  at, where those are at least 256 MiB (beyond any L2 cache and the fixed time), ÷ the planner
  catalog's bandwidth; and by token count M, for two shape classes of N × K (small 2^22-2^24
  elements, large 2^24-2^28; N and K at least 1,024), the achieved FLOP/s (2·M·N·K over the
  time beyond the fixed time) ÷ the catalog's peak at that precision, the median over the
  class's shapes, at most 1. A GEMM's time is first made the least over its shape's M and
  above (fewer rows never take longer: an engine could pad them), which takes out one-off slow
  paths such as vLLM's one-token FP8 GEMM on Blackwell.
* Fused MoE (routed experts), for each precision, with the experts sliced over TP 1, 2, 4 or 8 GPUs
  or spread whole over EP 2, 4 or 8: the achieved FLOP/s a GPU (2 · 3 · hidden · expert width ·
  top-k · tokens ÷ (TP × EP) over the time) ÷ the catalog's peak, by tokens per routed expert
  (tokens × top-k ÷ experts, at each M of the GEMMs' axis), the median over the expert shapes
  measured with balanced routing, each shape's fastest kernel (`moe_table`). The planner runs a
  prefill's routed-expert FLOPs at it (a layout with expert parallelism at the EP figures): an
  expert multiplies only the tokens routed to it.
* Decode attention: the bandwidth the KV-cache reads achieve ÷ the catalog's bandwidth, by
  batch, from the slope of time over context (least squares over the contexts of 1,024 tokens
  and more whose KV reaches 256 MiB, so neither the kernel's fixed time nor an L2-resident cache
  counts): GQA (head dim 128, BF16 cache, group of at most 8, no window) and MLA (DeepSeek's
  576-element latent, BF16 cache, at most 64 heads a GPU); the median over the shapes measured,
  at most 1; 0 where no point reads that much.
* All-reduce: the engine's own all-reduce (its CUDA-graph variant where both were measured) at
  TP 2, 4 and 8, its time made non-decreasing in the message size (a message takes at most what
  a larger one takes): the latency (the smallest message, µs) and the time at each message size
  of the axis, µs; the planner interpolates between them.

Each table names the package, its version, the parquet file inside the package and its sha256.

Run: python tools/pertables.py            (writes catalogs/perop.yaml)
     python tools/pertables.py --check    (exit 1 when the shipped file differs)
"""

from __future__ import annotations

import argparse
import hashlib
import math
import statistics
import sys
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from importlib import metadata
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from planner.inputs.catalog import load_gpus  # noqa: E402
from planner.model.perop import (  # noqa: E402
    ALLREDUCE_TP,
    ATTENTION_KINDS,
    GEMM_KINDS,
    MOE_KINDS,
    MOE_TP,
)
from tools.regenerate import write_or_check  # noqa: E402

TARGET = ROOT / "catalogs" / "perop.yaml"
PACKAGE, VERSION, LICENSE = "aiconfigurator-core", "0.12.0", "Apache-2.0"
MODULE = "aiconfigurator_core"
# planner GPU id -> the package's system name
SYSTEMS = {"a100-80gb-sxm": "a100_sxm", "h100-sxm": "h100_sxm", "h200-sxm": "h200_sxm",
           "b200": "b200_sxm", "b300": "b300_sxm", "gb200": "gb200", "gb300": "gb300",
           "l40s": "l40s", "rtx-pro-6000": "rtx_pro_6000_server"}
ENGINES = ("vllm", "sglang", "trtllm")
GEMM_TOKENS = (1, 8, 32, 128, 512, 2048, 8192)
ATTENTION_BATCH = (1, 4, 16, 64, 256, 1024)
ALLREDUCE_BYTES = tuple(256 * 4**i for i in range(12))  # 256 B to 1 GiB
GEMM_DTYPES = {"bf16": "bfloat16", "fp8": "fp8", "fp4": "nvfp4"}  # planner precision -> table
WEIGHT_BYTES = {"bf16": 2.0, "fp8": 1.0, "fp4": 0.5625}  # per weight, NVFP4 with its scales
PEAK_FIELD = {"bf16": "bf16_tflops", "fp8": "fp8_tflops", "fp4": "fp4_tflops"}
SHAPES = {"small": (2**22, 2**24), "large": (2**24, 2**28)}  # N × K elements, [low, high)
MIN_DIM = 1024
STREAMED_BYTES = 2**28  # weights a one-token GEMM streams, beyond any L2 and the fixed time
MIN_KV_BYTES = 2**28  # KV a decode-attention point reads, beyond any L2
MIN_CONTEXT = 1024  # contexts the attention slope is fitted over
GQA_HEAD_DIM, GQA_KV_HEADS, GQA_MAX_GROUP = 128, (1, 2, 4, 8), 8
MLA_LATENT, MLA_MAX_HEADS = 576, 64
ROUND = 4  # significant digits kept
# Fused MoE: the table's dtypes for each planner precision (the first measured; DeepSeek-,
# Qwen3- and GLM-style FP8 checkpoints are 128 x 128 block-scaled), the TP sizes kept, and the
# tokens per routed expert the efficiency is given at (the GEMMs' token counts).
MOE_DTYPES = {"bf16": ("bfloat16",), "fp8": ("fp8_block", "fp8"), "fp4": ("nvfp4",)}
MOE_TOKENS = GEMM_TOKENS
# the expert layouts kept, by the name the catalog gives them: experts sliced over TP GPUs
# (tp1-tp8) or spread whole over EP GPUs (ep2-ep8), as (moe_tp_size, moe_ep_size)
MOE_LAYOUTS = {**{f"tp{tp}": (tp, 1) for tp in MOE_TP},
               **{f"ep{ep}": (1, ep) for ep in (2, 4, 8)}}


def _sig(x: float, digits: int = ROUND) -> float:
    return float(f"{x:.{digits}g}") if x else 0.0


# -- the package ----------------------------------------------------------------------------------

def package_root() -> Path:
    """The installed package's folder; an error unless it is the pinned version."""
    try:
        installed = metadata.version(PACKAGE)
    except metadata.PackageNotFoundError:
        raise SystemExit(f"{PACKAGE} is not installed: pip install -e .[tables]") from None
    if installed != VERSION:
        raise SystemExit(f"{PACKAGE} {installed} is installed; the tables pin {VERSION} "
                         f"(pip install {PACKAGE}=={VERSION})")
    import importlib.util
    spec = importlib.util.find_spec(MODULE)
    assert spec is not None and spec.origin is not None
    return Path(spec.origin).parent


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _version_key(text: str) -> Any:
    from packaging.version import Version
    return Version(text)


def current_versions(root: Path) -> dict[tuple[str, str], str]:
    """(system, engine) -> the version the package queries by default ("current")."""
    slots = yaml.safe_load((root / "systems" / "query_versions.yaml").read_text())
    out = {}
    for system in SYSTEMS.values():
        for engine in ENGINES:
            slot = (slots.get("overrides", {}).get(system, {}).get(engine)
                    or slots["defaults"][engine])
            out[(system, engine)] = str(slot["current"])
    return out


def op_file(root: Path, system: str, op: str, engine: str, version: str,
            names: Sequence[str]) -> tuple[str, Path] | None:
    """The first of `names` in the newest version folder at or before `version` that has one."""
    base = root / "systems" / "data" / system / op / engine
    if not base.is_dir():
        return None
    found = sorted((v.name for v in base.iterdir() if v.is_dir()
                    and _version_key(v.name) <= _version_key(version)
                    and any((v / n).is_file() for n in names)), key=_version_key)
    if not found:
        return None
    folder = base / found[-1]
    name = next(n for n in names if (folder / n).is_file())
    return found[-1], folder / name


def read(path: Path, columns: Sequence[str]) -> dict[str, list[Any]]:
    import pyarrow.parquet as pq
    table = pq.read_table(path)
    return {c: table.column(c).to_pylist() for c in columns if c in table.column_names}


def _rows(data: Mapping[str, list[Any]]) -> Iterable[dict[str, Any]]:
    keys = list(data)
    for values in zip(*(data[k] for k in keys), strict=True):
        yield dict(zip(keys, values, strict=True))


def _main_kernel(rows: Sequence[Mapping[str, Any]]) -> str:
    """The kernel with the most measurements (ties: first by name)."""
    count: dict[str, int] = defaultdict(int)
    for r in rows:
        count[str(r["kernel_source"])] += 1
    return sorted(count, key=lambda k: (-count[k], k))[0]


# -- GEMM -----------------------------------------------------------------------------------------

def _padded(times: dict[tuple[int, int, int], float]) -> None:
    """A GEMM of M rows takes at most what one of more rows takes (it could be padded): each
    time becomes the least over the same shape's M and above, which takes out noise and
    one-off slow paths."""
    by_shape: dict[tuple[int, int], list[int]] = defaultdict(list)
    for n, k, m in times:
        by_shape[(n, k)].append(m)
    for (n, k), ms in by_shape.items():
        best = math.inf
        for m in sorted(ms, reverse=True):
            best = times[(n, k, m)] = min(best, times[(n, k, m)])


def gemm_table(path: Path, gpu: Mapping[str, float]) -> dict[str, Any]:
    data = read(path, ["gemm_dtype", "kernel_source", "m", "n", "k", "latency"])
    by_dtype: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in _rows(data):
        by_dtype[str(r["gemm_dtype"])].append(r)
    out: dict[str, Any] = {}
    for precision, dtype in GEMM_DTYPES.items():
        peak = gpu.get(PEAK_FIELD[precision], 0)
        if not peak:
            continue  # the GPU has no such tensor units: the planner multiplies at BF16
        rows = by_dtype.get(dtype)
        if not rows:
            raise SystemExit(f"{path}: no {dtype} GEMMs, yet the catalog gives "
                             f"{PEAK_FIELD[precision]}")
        kernel = _main_kernel(rows)
        times: dict[tuple[int, int, int], float] = {}
        for r in rows:
            if r["kernel_source"] == kernel and r["latency"] > 0:
                times[(r["n"], r["k"], r["m"])] = r["latency"] * 1e-3
        _padded(times)
        one = {(n, k): t for (n, k, m), t in times.items() if m == 1}
        fixed = min(times.values())
        weights = {(n, k): n * k * WEIGHT_BYTES[precision] for n, k in one}
        streamed = [(weights[nk] + 2 * sum(nk)) / t for nk, t in one.items()
                    if weights[nk] >= STREAMED_BYTES]
        if not streamed:
            raise SystemExit(f"{path}: no {dtype} GEMM of {STREAMED_BYTES} bytes at M = 1")
        entry: dict[str, Any] = {
            "bandwidth": _sig(statistics.median(streamed) / (gpu["bandwidth_tb_s"] * 1e12)),
            "fixed_us": _sig(fixed * 1e6), "kernel": kernel, "shapes": {}}
        for shape, (low, high) in SHAPES.items():
            nks = sorted({(n, k) for n, k, _ in times
                          if n >= MIN_DIM and k >= MIN_DIM and low <= n * k < high})
            effs = []
            for m in GEMM_TOKENS:
                e = [min(1.0, 2 * m * n * k / max(times[(n, k, m)] - fixed, 1e-12)
                         / (peak * 1e12)) for n, k in nks if (n, k, m) in times]
                if not e:
                    raise SystemExit(f"{path}: no {dtype} {shape} GEMM at M = {m}")
                effs.append(_sig(statistics.median(e)))
            entry[shape] = effs
            entry["shapes"][shape] = len(nks)
        out[precision] = entry
    return out


# -- routed experts (fused MoE) -------------------------------------------------------------------

def _interpolate(points: Sequence[tuple[float, float]], x: float) -> float | None:
    """The time at x, linear between the measured (x, time) points; None outside them."""
    for (x0, t0), (x1, t1) in zip(points, points[1:], strict=False):
        if x0 <= x <= x1:
            return t0 + (t1 - t0) * (x - x0) / (x1 - x0) if x1 > x0 else t0
    return None


def moe_table(path: Path, gpu: Mapping[str, float]) -> dict[str, Any]:
    """Per precision and expert layout (sliced over TP 1-8 GPUs, or spread whole over EP 2-8), the
    fused MoE layer's achieved FLOP/s a GPU (÷ TP × EP) ÷ the catalog's peak at each of MOE_TOKENS
    tokens per routed expert (tokens × top-k ÷ experts): for every expert shape measured with
    balanced routing in that layout, the fastest kernel's time at each token count, made the least
    over that count and above (as the GEMMs'), read linearly at the token count that gives the
    point; the median over the shapes that reach it, at most 1. A point no shape reaches keeps the
    previous point's figure."""
    data = read(path, ["moe_dtype", "kernel_source", "num_tokens", "hidden_size", "inter_size",
                       "topk", "num_experts", "moe_tp_size", "moe_ep_size", "distribution",
                       "latency"])
    return moe_summary(list(_rows(data)), gpu)


def moe_summary(measured: Sequence[Mapping[str, Any]], gpu: Mapping[str, float]
                ) -> dict[str, Any]:
    """`moe_table` over rows already read (latency in ms, as the package stores it)."""
    rows = [r for r in measured if r["distribution"] == "balanced" and r["latency"] > 0
            and (r["moe_tp_size"], r["moe_ep_size"]) in MOE_LAYOUTS.values()]
    out: dict[str, Any] = {}
    for precision, dtypes in MOE_DTYPES.items():
        peak = gpu.get(PEAK_FIELD[precision], 0)
        dtype = next((d for d in dtypes if any(r["moe_dtype"] == d for r in rows)), None)
        if not peak or dtype is None:
            continue
        mine = [r for r in rows if r["moe_dtype"] == dtype]
        entry: dict[str, Any] = {"dtype": dtype, "kernels": sorted({str(r["kernel_source"])
                                                                    for r in mine})}
        for layout, (tp, ep) in MOE_LAYOUTS.items():
            times: dict[tuple[int, int, int, int], dict[int, float]] = defaultdict(dict)
            for r in mine:
                if r["moe_tp_size"] == tp and r["moe_ep_size"] == ep:
                    shape = (r["hidden_size"], r["inter_size"], r["topk"], r["num_experts"])
                    n = int(r["num_tokens"])
                    times[shape][n] = min(times[shape].get(n, math.inf), r["latency"] * 1e-3)
            effs: list[float] = []
            for m in MOE_TOKENS:
                found = []
                for (hidden, inter, topk, experts), by_n in sorted(times.items()):
                    best, points = math.inf, []
                    for n in sorted(by_n, reverse=True):
                        best = min(best, by_n[n])
                        points.append((float(n), best))
                    tokens = m * experts / topk
                    t = _interpolate(points[::-1], tokens)
                    if t:
                        flops = 2 * 3 * hidden * inter * topk * tokens / (tp * ep)
                        found.append(min(1.0, flops / t / (peak * 1e12)))
                effs.append(_sig(statistics.median(found)) if found else (effs[-1] if effs
                                                                          else 0.0))
            if any(effs):  # a layout nothing was measured in is left out, not written as 0
                entry[layout] = effs
        if any(layout in entry for layout in MOE_LAYOUTS):
            out[precision] = entry
    return out


# -- decode attention -----------------------------------------------------------------------------

def _slope(points: Sequence[tuple[float, float]]) -> float:
    """Least-squares slope of time over context."""
    n = len(points)
    mx = sum(x for x, _ in points) / n
    my = sum(y for _, y in points) / n
    sxx = sum((x - mx) ** 2 for x, _ in points)
    return sum((x - mx) * (y - my) for x, y in points) / sxx if sxx else math.nan


def _bandwidth_by_batch(groups: Mapping[tuple[Any, ...], list[tuple[float, float]]],
                        bytes_per_token: Mapping[tuple[Any, ...], float],
                        bandwidth: float) -> list[float]:
    """Median over shapes of bytes per context token ÷ slope ÷ bandwidth, per batch bucket."""
    per_batch: dict[int, list[float]] = defaultdict(list)
    for key, points in groups.items():
        points = [p for p in points
                  if p[0] >= MIN_CONTEXT and p[0] * bytes_per_token[key] >= MIN_KV_BYTES]
        if len({x for x, _ in points}) < 2:
            continue
        slope = _slope(points)
        if slope > 0:
            per_batch[key[-1]].append(min(1.0, bytes_per_token[key] / slope / bandwidth))
    return [_sig(statistics.median(per_batch[b])) if per_batch.get(b) else 0.0
            for b in ATTENTION_BATCH]


def gqa_table(path: Path, bandwidth: float) -> tuple[list[float], str]:
    data = read(path, ["kernel_source", "batch_size", "isl", "num_heads", "num_key_value_heads",
                       "head_dim", "beam_width", "kv_cache_dtype", "step", "window_size",
                       "latency"])
    rows = [r for r in _rows(data) if r["kv_cache_dtype"] == "bfloat16"
            and r.get("window_size", 0) == 0 and r.get("beam_width", 1) == 1
            and r["head_dim"] == GQA_HEAD_DIM and r["num_key_value_heads"] in GQA_KV_HEADS
            and r["num_heads"] % r["num_key_value_heads"] == 0
            and r["num_heads"] // r["num_key_value_heads"] <= GQA_MAX_GROUP]
    kernel = _main_kernel(rows)
    groups: dict[tuple[Any, ...], list[tuple[float, float]]] = defaultdict(list)
    size: dict[tuple[Any, ...], float] = {}
    for r in rows:
        if r["kernel_source"] != kernel or r["batch_size"] not in ATTENTION_BATCH:
            continue
        key = (r["num_heads"], r["num_key_value_heads"], r["batch_size"])
        groups[key].append((r["isl"] + r["step"], r["latency"] * 1e-3))
        size[key] = 2 * r["num_key_value_heads"] * GQA_HEAD_DIM * 2 * r["batch_size"]
    return _bandwidth_by_batch(groups, size, bandwidth), kernel


def mla_table(path: Path, bandwidth: float) -> tuple[list[float], str]:
    data = read(path, ["kernel_source", "kv_cache_dtype", "gemm_type", "num_heads", "batch_size",
                       "isl", "step", "latency"])
    rows = [r for r in _rows(data) if r["kv_cache_dtype"] == "bfloat16"
            and r.get("gemm_type", "bfloat16") == "bfloat16" and r["num_heads"] <= MLA_MAX_HEADS]
    kernel = _main_kernel(rows)
    groups: dict[tuple[Any, ...], list[tuple[float, float]]] = defaultdict(list)
    size: dict[tuple[Any, ...], float] = {}
    for r in rows:
        if r["kernel_source"] != kernel or r["batch_size"] not in ATTENTION_BATCH:
            continue
        key = (r["num_heads"], r["batch_size"])
        groups[key].append((r["isl"] + r["step"], r["latency"] * 1e-3))
        size[key] = MLA_LATENT * 2 * r["batch_size"]
    return _bandwidth_by_batch(groups, size, bandwidth), kernel


# -- all-reduce -----------------------------------------------------------------------------------

def allreduce_table(path: Path) -> dict[int, Any]:
    data = read(path, ["kernel_source", "allreduce_dtype", "num_gpus", "message_size", "latency"])
    rows = [r for r in _rows(data) if r["allreduce_dtype"] == "bfloat16"]
    out: dict[int, Any] = {}
    for tp in ALLREDUCE_TP:
        mine = [r for r in rows if r["num_gpus"] == tp]
        if any("graph" in str(r["kernel_source"]).lower() for r in mine):
            mine = [r for r in mine if "graph" in str(r["kernel_source"]).lower()]
        if not mine:
            continue
        us: dict[int, float] = {}
        for r in mine:  # bytes (BF16 elements × 2) -> the fastest kernel's µs
            b = 2 * int(r["message_size"])
            us[b] = min(us.get(b, math.inf), r["latency"] * 1e3)
        sizes = sorted(us)
        for a, b in zip(sizes[-2::-1], sizes[:0:-1], strict=True):
            us[a] = min(us[a], us[b])  # never slower than a larger message: noise out
        latency = us[sizes[0]]
        if any(b not in us for b in ALLREDUCE_BYTES):
            raise SystemExit(f"{path}: TP {tp} lacks a message of {ALLREDUCE_BYTES} bytes")
        out[tp] = {"latency_us": _sig(latency),
                   "us": [_sig(us[b]) for b in ALLREDUCE_BYTES],
                   "kernel": sorted({str(r["kernel_source"]) for r in mine})}
    return out


# -- the catalog ----------------------------------------------------------------------------------

def _source(root: Path, version: str, path: Path) -> dict[str, str]:
    return {"path": f"{MODULE}/{path.relative_to(root).as_posix()}", "version": version,
            "sha256": sha256(path)}


def build(root: Path | None = None) -> dict[str, Any]:
    """Every table, as `catalogs/perop.yaml` holds them."""
    root = package_root() if root is None else root
    gpus = load_gpus()
    versions = current_versions(root)
    tables = []
    for gpu_id, system in SYSTEMS.items():
        gpu = {f: gpu_entry_number(gpus, gpu_id, f) for f in
               ("bandwidth_tb_s", "bf16_tflops", "fp8_tflops", "fp4_tflops")}
        bandwidth = gpu["bandwidth_tb_s"] * 1e12
        for engine in ENGINES:
            version = versions[(system, engine)]
            gemm = op_file(root, system, "gemm", engine, version, ["gemm_perf.parquet"])
            if gemm is None:
                continue
            entry: dict[str, Any] = {"gpu": gpu_id, "system": system, "engine": engine,
                                     "version": version, "sources": {}}
            entry["sources"]["gemm"] = _source(root, *gemm)
            entry["gemm"] = gemm_table(gemm[1], gpu)
            entry["attention"] = {}
            gqa = op_file(root, system, "attention", engine, version,
                          ["generation_attention_perf.parquet"])
            if gqa is not None:
                entry["sources"]["gqa"] = _source(root, *gqa)
                values, kernel = gqa_table(gqa[1], bandwidth)
                entry["attention"]["gqa"] = {"bandwidth": values, "kernel": kernel}
            mla = op_file(root, system, "mla", engine, version,
                          ["generation_mla_perf.parquet", "mla_generation_module_perf.parquet"])
            if mla is not None:
                entry["sources"]["mla"] = _source(root, *mla)
                values, kernel = mla_table(mla[1], bandwidth)
                entry["attention"]["mla"] = {"bandwidth": values, "kernel": kernel}
            moe = op_file(root, system, "moe", engine, version, ["moe_perf.parquet"])
            if moe is not None:
                found = moe_table(moe[1], gpu)
                if found:
                    entry["sources"]["moe"] = _source(root, *moe)
                    entry["moe"] = found
            ar = op_file(root, system, "comm", engine, version, ["custom_allreduce_perf.parquet"])
            if ar is not None:
                entry["sources"]["allreduce"] = _source(root, *ar)
                entry["allreduce"] = allreduce_table(ar[1])
            tables.append(entry)
    return {
        "source": {"package": PACKAGE, "version": VERSION, "license": LICENSE,
                   "generated_by": "tools/pertables.py"},
        "axes": {
            "gemm_tokens": list(GEMM_TOKENS),
            "gemm_tokens_from": [0, *GEMM_TOKENS[1:]],
            "attention_batch": list(ATTENTION_BATCH),
            "attention_batch_from": _log_midpoints(ATTENTION_BATCH),
            "allreduce_bytes": list(ALLREDUCE_BYTES),
            "allreduce_bytes_from": [0, *ALLREDUCE_BYTES[1:]],
            "gemm_kinds": list(GEMM_KINDS),
            "moe_kinds": list(MOE_KINDS),
            "attention_kinds": list(ATTENTION_KINDS),
            "allreduce_tp": list(ALLREDUCE_TP),
        },
        "tables": tables,
    }


def gpu_entry_number(gpus: Any, gpu_id: str, field: str) -> float:
    return float(gpus.entries[gpu_id].number(field))


def _log_midpoints(points: Sequence[int]) -> list[int]:
    """Lower bounds that send a value to the nearest point on a log scale."""
    return [0] + [round(math.sqrt(a * b)) for a, b in zip(points, points[1:], strict=False)]


HEADER = f"""\
# Measured per-operation tables: what GEMMs, fused MoE, decode attention and all-reduces achieve
# on each GPU under each engine, from NVIDIA's {PACKAGE} {VERSION} ({LICENSE}) parquet tables.
# Generated by tools/pertables.py; do not edit by hand (tests/test_perop.py reproduces it).
# The planner reads it for bandwidth_efficiency, compute_efficiency and the all-reduce time
# where a GPU x engine has a table (docs/engines.md, "Measured per-op tables").
#   gemm.<precision>.fixed_us           the fastest GEMM, µs (the planner charges
#                                       kernel_floor_us for it)
#   gemm.<precision>.bandwidth          bytes one-token GEMMs of >= 256 MiB stream / time /
#                                       bandwidth_tb_s
#   gemm.<precision>.<small|large>      achieved FLOP/s beyond the fixed time / the catalog's peak,
#                                       at each of axes.gemm_tokens (M); the planner interpolates
#                                       the GEMM's time linearly in M between them (the segment
#                                       a value falls in: axes.gemm_tokens_from)
#   moe.<precision>.<tpN|epN>           fused MoE: achieved FLOP/s a GPU / the catalog's peak at
#                                       each of axes.gemm_tokens tokens per routed expert, experts
#                                       sliced over N GPUs (tpN) or spread whole (epN); the planner
#                                       interpolates the time linearly
#   attention.<gqa|mla>.bandwidth        KV bytes per context token / the slope of time over
#                                        context / bandwidth_tb_s, at each of axes.attention_batch
#                                        (nearest on a log scale: axes.attention_batch_from); 0:
#                                        not measured
#   allreduce.<tp>.latency_us            the smallest messages' time, µs
#   allreduce.<tp>.us                    the time of a message of each of axes.allreduce_bytes, µs;
#                                        the planner interpolates linearly between them (segment:
#                                        axes.allreduce_bytes_from)
"""


class _Dumper(yaml.SafeDumper):
    pass


def _flow_list(dumper: yaml.SafeDumper, data: list[Any]) -> yaml.Node:
    flow = all(isinstance(x, int | float | str) for x in data)
    return dumper.represent_sequence("tag:yaml.org,2002:seq", data, flow_style=flow)


_Dumper.add_representer(list, _flow_list)


def render(tables: Mapping[str, Any]) -> str:
    return HEADER + yaml.dump(dict(tables), Dumper=_Dumper, sort_keys=False, width=100,
                              allow_unicode=True)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true",
                        help="exit 1 when catalogs/perop.yaml differs from what the package gives")
    args = parser.parse_args(argv)
    return write_or_check(TARGET, render(build()), args.check)


if __name__ == "__main__":
    raise SystemExit(main())
