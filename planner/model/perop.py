"""Measured per-operation tables as leaves of the speed quantities: what GEMMs, decode attention
and all-reduces achieve on a GPU under an engine (``catalogs/perop.yaml``, written by
``tools/pertables.py`` from NVIDIA's aiconfigurator-core tables; loaded by
``planner.inputs.perop``).

Two leaves, each giving the Python value and the workbook formula from one definition:

* ``HasTable()``: whether the configuration's GPU and the selected engine have a table;
* ``Measured(family, kind, key)``: a figure of that table (``FAMILIES``). ``kind`` (an
  expression) picks the row within the GPU × engine's block (``GEMM_KINDS``, ``MOE_KINDS``,
  ``ATTENTION_KINDS``, ``ALLREDUCE_TP``); ``key`` (an expression, or None for the row's first
  column: a GEMM's bandwidth, a fused MoE's measured flag, an all-reduce's latency) is looked
  up in the family's axis with MATCH(key, axis, 1), the largest lower bound at or below it. A
  GEMM's, a fused MoE's and an all-reduce's time are linear between measured points: a fixed
  part and a slope per segment.

In the workbook each family is one block of rows on the Per-op sheet, a GPU × engine's rows
together, and ``gpu_perop_slot`` (a column beside the GPUs in catalog order) says which block
the selected engine's figures are for (0: none). A lookup is then one INDEX over that block:
``INDEX(perop_gemm_slope,(INDEX(gpu_perop_slot,gpu row)-1)*6+kind+1,MATCH(tokens,
perop_gemm_tokens_from,1))``: two INDEX and one MATCH over seven cells, whatever the grid's size.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol, cast

from planner.model.columns import Column, ColumnEnv, Same, classify, evaluate_column
from planner.model.expr import Env, Expr, Func, Renderer, Value, XlError

GEMM_KINDS = ("bf16_small", "bf16_large", "fp8_small", "fp8_large", "fp4_small", "fp4_large")
MOE_TP = (1, 2, 4, 8)
MOE_LAYOUTS = (*(f"tp{tp}" for tp in MOE_TP), "ep2", "ep4", "ep8")  # sliced, or spread whole
MOE_KINDS = tuple(f"{p}_{layout}" for p in ("bf16", "fp8", "fp4") for layout in MOE_LAYOUTS)
ATTENTION_KINDS = ("gqa", "mla")
ALLREDUCE_TP = (2, 4, 8)
# family -> (rows per GPU × engine, the axis its keys are looked up in, columns before the
# axis's: a GEMM's bandwidth, whether a fused MoE was measured (1) or not (0), an all-reduce's
# latency). A fused MoE's efficiency is by tokens per routed expert, on the GEMMs' axis. A
# GEMM's, a fused MoE's and an all-reduce's time are interpolated linearly between the measured
# points: ``*_fixed`` + key × ``*_slope`` on the
# segment the key falls in.
FAMILIES = {"gemm": (len(GEMM_KINDS), "gemm_tokens", 1),
            "gemm_fixed": (len(GEMM_KINDS), "gemm_tokens", 0),
            "gemm_slope": (len(GEMM_KINDS), "gemm_tokens", 0),
            "moe": (len(MOE_KINDS), "gemm_tokens", 1),
            "moe_fixed": (len(MOE_KINDS), "gemm_tokens", 0),
            "moe_slope": (len(MOE_KINDS), "gemm_tokens", 0),
            "attention": (len(ATTENTION_KINDS), "attention_batch", 0),
            "allreduce": (len(ALLREDUCE_TP), "allreduce_bytes", 1),
            "allreduce_fixed": (len(ALLREDUCE_TP), "allreduce_bytes", 0),
            "allreduce_slope": (len(ALLREDUCE_TP), "allreduce_bytes", 0)}
SLOT = ("gpu", "perop_slot")  # the GPU's block for the selected engine (workbook name gpu_…)
ENGINE = ("assume", "engine")


class PerOpEnv(Protocol):
    """What an environment gives the per-op leaves: the tables of its GPU and engine."""

    def has_perop(self) -> bool: ...

    def perop(self, family: str, kind: int, key: Value | None) -> Value: ...


@dataclass(frozen=True, eq=False)
class HasTable(Expr):
    """TRUE where the configuration's GPU and engine have measured per-op tables."""

    def evaluate(self, env: Env) -> Value:
        return cast(PerOpEnv, env).has_perop()

    def render(self, r: Renderer) -> str:
        return f"({r.ref(*SLOT)}>0)"

    def refs(self) -> set[tuple[str, str]]:
        return {SLOT, ENGINE}

    @property
    def compound(self) -> bool:
        return False

    def column(self, env: ColumnEnv, rows: list[int] | None) -> Column:
        return Same(cast(PerOpEnv, env).has_perop())


@dataclass(frozen=True, eq=False)
class Measured(Expr):
    """A figure of the GPU × engine's per-op table (evaluate only where ``HasTable``)."""

    family: str
    kind: Expr
    key: Expr | None = None

    def evaluate(self, env: Env) -> Value:
        kind = self.kind.evaluate(env)
        key = None if self.key is None else self.key.evaluate(env)
        return _figure(cast(PerOpEnv, env), self.family, kind, key)

    def render(self, r: Renderer) -> str:
        rows, axis, lead = FAMILIES[self.family]
        row = f"({r.ref(*SLOT)}-1)*{rows}+{_operand(self.kind, r)}+1"
        found = "" if self.key is None else f"MATCH({self.key.render(r)},perop_{axis}_from,1)"
        column = "1" if not found else f"{lead}+{found}" if lead else found
        return f"INDEX(perop_{self.family},{row},{column})"

    def refs(self) -> set[tuple[str, str]]:
        return {SLOT, ENGINE} | super().refs()

    def children(self) -> Sequence[Expr]:
        return (self.kind,) if self.key is None else (self.kind, self.key)

    @property
    def compound(self) -> bool:
        return False

    def column(self, env: ColumnEnv, rows: list[int] | None) -> Column:
        n = env.size if rows is None else len(rows)
        kinds = evaluate_column(self.kind, env, rows)
        keys: Column = (Same(None) if self.key is None  # type: ignore[arg-type]
                        else evaluate_column(self.key, env, rows))
        penv = cast(PerOpEnv, env)
        if isinstance(kinds, Same) and isinstance(keys, Same):
            return Same(_figure(penv, self.family, kinds.value, keys.value))
        seen: dict[tuple[object, object], Value] = {}
        out = []
        for kind, key in zip(_each(kinds, n), _each(keys, n), strict=True):
            k = (kind, key)
            if k not in seen:
                seen[k] = _figure(penv, self.family, kind, key)
            out.append(seen[k])
        return classify(out)


def _each(col: Column, n: int) -> list[Value]:
    return [col.value] * n if isinstance(col, Same) else list(col)


def _figure(env: PerOpEnv, family: str, kind: Value, key: Value | None) -> Value:
    if isinstance(kind, XlError):
        return kind
    if isinstance(key, XlError):
        return key
    return env.perop(family, int(float(kind)), key)  # INDEX truncates a row number


def _operand(e: Expr, r: Renderer) -> str:
    text = e.render(r)
    return f"({text})" if e.compound and not isinstance(e, Func) else text
