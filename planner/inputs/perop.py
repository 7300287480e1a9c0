"""The measured per-operation tables the planner ships: ``catalogs/perop.yaml``, which
``tools/pertables.py`` writes from NVIDIA's aiconfigurator-core parquet tables (a test keeps it
reproducible). For a GPU and an engine it gives the GEMM efficiencies by token count, the decode
attention's achieved bandwidth by batch and the all-reduce time by message size, each with the
package version, the parquet file and its sha256 it came from; the speed quantities look them up
through ``planner.model.perop``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

import yaml

from planner.inputs.catalog import PROJECT_ROOT
from planner.model.expr import Value, XlError
from planner.model.perop import (
    ALLREDUCE_TP,
    ATTENTION_KINDS,
    FAMILIES,
    GEMM_KINDS,
    MOE_KINDS,
    MOE_LAYOUTS,
)

PEROP = PROJECT_ROOT / "catalogs" / "perop.yaml"
NOT_AVAILABLE = XlError("#N/A")
BAD_ROW = XlError("#REF!")
OP_LABELS = {"gemm": "GEMM", "moe": "fused MoE", "gqa": "decode attention",
             "mla": "MLA decode attention", "allreduce": "all-reduce"}


@dataclass(frozen=True)
class Source:
    op: str  # gemm, moe, gqa, mla, allreduce
    path: str  # the parquet file inside the package
    version: str  # the engine version it was measured with
    sha256: str


@dataclass(frozen=True)
class PerOpTable:
    """One GPU × engine: each family's rows in the order of ``planner.model.perop``."""

    gpu: str
    system: str  # the package's name for the GPU
    engine: str
    version: str  # the engine version the package queries by default
    sources: tuple[Source, ...]
    gemm: tuple[tuple[float, ...], ...]  # per GEMM kind: bandwidth, efficiency at each M
    gemm_fixed: tuple[tuple[float, ...], ...]  # per kind and segment: M ÷ efficiency at M = 0
    gemm_slope: tuple[tuple[float, ...], ...]  # … and its growth per token (see segments)
    moe: tuple[tuple[float, ...], ...]  # per MoE kind: measured (1/0), efficiency at each M
    moe_fixed: tuple[tuple[float, ...], ...]  # per kind and segment, as the GEMM's
    moe_slope: tuple[tuple[float, ...], ...]
    attention: tuple[tuple[float, ...], ...]  # per attention kind: efficiency at each batch
    allreduce: tuple[tuple[float, ...], ...]  # per TP: latency µs, µs at each size
    allreduce_fixed: tuple[tuple[float, ...], ...]  # per TP and segment: µs at 0 bytes
    allreduce_slope: tuple[tuple[float, ...], ...]  # … and µs per MB (10^6 bytes)
    kernels: Mapping[str, str] = field(default_factory=dict)

    def rows(self, family: str) -> tuple[tuple[float, ...], ...]:
        rows: tuple[tuple[float, ...], ...] = getattr(self, family)
        return rows


@dataclass(frozen=True)
class PerOpTables:
    package: str
    version: str
    license: str
    axes: Mapping[str, tuple[float, ...]]  # measured points and their lookup lower bounds
    tables: tuple[PerOpTable, ...]

    def table(self, gpu: str, engine: str) -> PerOpTable | None:
        for t in self.tables:
            if t.gpu == gpu and t.engine == engine:
                return t
        return None

    def figure(self, gpu: str, engine: str, family: str, kind: int, key: Value | None) -> Value:
        """What the workbook's INDEX(perop_<family>, row, 1 [+ MATCH(key, axis, 1)]) gives."""
        table = self.table(gpu, engine)
        if table is None:
            return BAD_ROW
        rows = table.rows(family)
        if not 0 <= kind < len(rows):
            return BAD_ROW
        row = rows[kind]
        if key is None:
            return row[0]
        _, axis, lead = FAMILIES[family]
        column = match(key, self.axes[f"{axis}_from"])
        return column if isinstance(column, XlError) else row[lead + column - 1]


def match(key: Value, lower: Sequence[float]) -> int | XlError:
    """MATCH(key, lower, 1): the 1-based position of the largest bound at or below key."""
    if isinstance(key, XlError):
        return key
    if isinstance(key, bool) or not isinstance(key, int | float):
        return NOT_AVAILABLE
    found = 0
    for i, bound in enumerate(lower, start=1):
        if bound <= key:
            found = i
    return found or NOT_AVAILABLE


# The fixed parts are rounded to 10^-9 of their unit (tokens ÷ efficiency, µs), as the Per-op
# sheet's ROUND does: a segment through the origin (equal efficiencies at both ends, as where a
# fused-MoE point keeps the previous one's) is then exactly 0 in Python and in every spreadsheet
# engine, not ±1e-16 of floating-point cancellation that differs between them.
FIXED_DIGITS = 9


def segments(points: Sequence[float], times: Sequence[float], last_slope: float | None
             ) -> tuple[tuple[float, ...], tuple[float, ...]]:
    """A time linear between measured points: for the segment from each point to the next,
    time = fixed + x × slope (slope at least 0), in the order the workbook's formulas compute
    it; past the last point `last_slope`, or the last segment's slope."""
    slopes = [max(0.0, (times[i + 1] - times[i]) / (points[i + 1] - points[i]))
              for i in range(len(points) - 1)]
    slopes.append(slopes[-1] if last_slope is None else last_slope)
    return (tuple(round(t - b * p, FIXED_DIGITS)
                  for p, t, b in zip(points, times, slopes, strict=True)), tuple(slopes))


def gemm_segments(points: Sequence[float], efficiency: Sequence[float]
                  ) -> tuple[tuple[float, ...], tuple[float, ...]]:
    """A GEMM's time in units of M ÷ efficiency (zero rows for a precision not measured); past
    the largest M the efficiency stays."""
    if not all(e > 0 for e in efficiency):
        return (0.0,) * len(points), (0.0,) * len(points)
    times = [p / e for p, e in zip(points, efficiency, strict=True)]
    return segments(points, times, 1 / efficiency[-1])


def allreduce_segments(points: Sequence[float], us: Sequence[float]
                       ) -> tuple[tuple[float, ...], tuple[float, ...]]:
    """An all-reduce's µs by message size, the slope in µs per MB (10^6 bytes)."""
    if not any(us):
        return (0.0,) * len(points), (0.0,) * len(points)
    mb = [p / 1e6 for p in points]
    return segments(mb, us, None)


def _floats(values: Sequence[Any], n: int) -> tuple[float, ...]:
    out = tuple(float(v) for v in values)
    if len(out) != n:
        raise ValueError(f"expected {n} figures, found {len(out)}")
    return out


def _table(entry: Mapping[str, Any], axes: Mapping[str, tuple[float, ...]]) -> PerOpTable:
    tokens, batch, sizes = (len(axes[k]) for k in
                            ("gemm_tokens", "attention_batch", "allreduce_bytes"))
    gemm = entry.get("gemm") or {}
    attention = entry.get("attention") or {}
    allreduce = {int(k): v for k, v in (entry.get("allreduce") or {}).items()}
    kernels = {f"gemm {k}": str(v["kernel"]) for k, v in gemm.items()}
    kinds = {f"{p}_{shape}": ((float(v["bandwidth"]),) + _floats(v[shape], tokens))
             for p, v in gemm.items() for shape in ("small", "large")}
    gemm_rows = tuple(kinds.get(k, (0.0,) * (tokens + 1)) for k in GEMM_KINDS)
    gemm_parts = [gemm_segments(axes["gemm_tokens"], row[1:]) for row in gemm_rows]
    moe = entry.get("moe") or {}
    kernels |= {f"moe {p}": ", ".join(v["kernels"]) for p, v in moe.items()}
    moe_kinds = {f"{p}_{layout}": (1.0,) + _floats(v[layout], tokens)
                 for p, v in moe.items() for layout in MOE_LAYOUTS if layout in v}
    moe_rows = tuple(moe_kinds.get(k, (0.0,) * (tokens + 1)) for k in MOE_KINDS)
    moe_parts = [gemm_segments(axes["gemm_tokens"], row[1:]) for row in moe_rows]
    ar_rows = tuple(((float(allreduce[tp]["latency_us"]),) + _floats(allreduce[tp]["us"], sizes))
                    if tp in allreduce else (0.0,) * (sizes + 1) for tp in ALLREDUCE_TP)
    ar_parts = [allreduce_segments(axes["allreduce_bytes"], row[1:]) for row in ar_rows]
    kernels |= {f"attention {k}": str(v["kernel"]) for k, v in attention.items()}
    return PerOpTable(
        gpu=str(entry["gpu"]), system=str(entry["system"]), engine=str(entry["engine"]),
        version=str(entry["version"]),
        sources=tuple(Source(op, str(s["path"]), str(s["version"]), str(s["sha256"]))
                      for op, s in entry["sources"].items()),
        gemm=gemm_rows,
        gemm_fixed=tuple(f for f, _ in gemm_parts), gemm_slope=tuple(b for _, b in gemm_parts),
        moe=moe_rows,
        moe_fixed=tuple(f for f, _ in moe_parts), moe_slope=tuple(b for _, b in moe_parts),
        attention=tuple(_floats(attention[k]["bandwidth"], batch) if k in attention
                        else (0.0,) * batch for k in ATTENTION_KINDS),
        allreduce=ar_rows,
        allreduce_fixed=tuple(f for f, _ in ar_parts),
        allreduce_slope=tuple(b for _, b in ar_parts),
        kernels=kernels)


@cache
def load_perop(path: Path = PEROP) -> PerOpTables:
    """The shipped tables; none where a copy of the planner lacks the file."""
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except OSError:
        data = None
    if not isinstance(data, Mapping):
        return PerOpTables("", "", "", {}, ())
    axes = {k: tuple(float(x) for x in v) for k, v in data["axes"].items()
            if all(isinstance(x, int | float) for x in v)}
    source = data["source"]
    return PerOpTables(str(source["package"]), str(source["version"]), str(source["license"]),
                       axes, tuple(_table(t, axes) for t in data["tables"]))


def _short(path: str) -> str:
    return path.split("/systems/data/", 1)[-1]


def source_line(gpu: str, engine: str, tables: PerOpTables | None = None) -> str:
    """The sentence `planner calc` prints about the measured tables behind its speed."""
    tables = load_perop() if tables is None else tables
    table = tables.table(gpu, engine)
    if table is None:
        why = ("engine=none models no engine" if engine == "none" else
               f"{tables.package or 'aiconfigurator-core'} has no {gpu} × {engine} table; it "
               "measures NVIDIA data-centre GPUs only")
        return (f"Measured per-op tables: none ({why}). bandwidth_efficiency and "
                "compute_efficiency 'auto' come from the GPU catalog, the all-reduce from "
                "allreduce_latency_us and scale_up_gb_s.")
    files = "; ".join(f"{OP_LABELS[s.op]} {_short(s.path)} (sha256 {s.sha256[:12]}…)"
                      for s in table.sources)
    experts = (", the routed experts' prefill efficiency" if any(s.op == "moe"
                                                                for s in table.sources) else "")
    return (f"Measured per-op tables: {tables.package} {tables.version} ({tables.license}), "
            f"{table.system} × {table.engine} {table.version}: {files}. bandwidth_efficiency "
            f"and compute_efficiency 'auto'{experts} and the all-reduce time are looked up in "
            "them (catalogs/perop.yaml).")


def source_json(gpu: str, engine: str, tables: PerOpTables | None = None) -> dict[str, object]:
    """What `planner calc --json` says of the measured tables: their source, or why none."""
    tables = load_perop() if tables is None else tables
    table = tables.table(gpu, engine)
    out: dict[str, object] = {"package": tables.package or None,
                              "package_version": tables.version or None}
    if table is None:
        return {**out, "table": None, "reason": source_line(gpu, engine, tables)}
    return {**out, "table": f"{table.system} × {table.engine}",
            "engine_version": table.version,
            "sources": {s.op: {"path": s.path, "engine_version": s.version, "sha256": s.sha256}
                        for s in table.sources},
            "kernels": dict(table.kernels)}
