"""Evaluate the quantities for one configuration: the pure library behind every output."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict
from typing import Protocol

from planner.errors import ArgumentError
from planner.evidence.measured import speed_on, ttft_figures
from planner.inputs.entries import Catalog, Entry
from planner.inputs.fields import MODEL_TEXT_INPUTS
from planner.inputs.model_shape import model_class
from planner.inputs.perop import load_perop, source_json
from planner.inputs.scenario import Scenario, check_scenario
from planner.inputs.settings import resolve
from planner.model.columns import Column, Memo, Same, classify, evaluate_column
from planner.model.engines import ENGINES
from planner.model.expr import BinOp, Expr, Func, Neg, Value
from planner.model.fleet import FLEET_BY_NAME
from planner.model.formats import KV_FORMATS, WEIGHT_FORMATS
from planner.model.layouts import CALC_LAYOUTS, CALC_QUANTITIES
from planner.model.quantities import MODEL_BY_NAME, ROW_BY_NAME, ROW_QUANTITIES
from planner.model.quantity import Quantity


class ModelEnv:
    """Resolves a model's catalog fields and model-scope quantities (memoised)."""

    def __init__(self, model: Entry, assumptions: Mapping[str, float | str] | None = None) -> None:
        self.model = model
        self.assumptions = resolve(assumptions) if assumptions is None else assumptions
        self.cache: dict[str, Value] = {}

    def value(self, name: str) -> Value:
        if name not in self.cache:
            quantity = MODEL_BY_NAME.get(name)
            if quantity:
                self.cache[name] = quantity.expr.evaluate(self)
            elif name in MODEL_TEXT_INPUTS:
                self.cache[name] = self.model.text(name)
            else:
                self.cache[name] = self.model.number(name)
        return self.cache[name]

    def lookup(self, kind: str, name: str) -> Value:
        if kind == "assume":
            return self.assumptions[name]
        if kind != "model":
            raise KeyError(f"a model quantity cannot read {kind}:{name}")
        return self.value(name)


class RowEnv:
    """Resolves every leaf of a row quantity for one scenario."""

    def __init__(self, scenario: Scenario, model: ModelEnv, gpu: Entry,
                 assumptions: Mapping[str, float | str]) -> None:
        self.scenario = scenario
        self.model = model
        self.gpu = gpu
        self.assumptions = assumptions
        self.cache: dict[str, Value] = {}

    def lookup(self, kind: str, name: str) -> Value:
        if kind == "q":
            return self.value(name)
        if kind == "var":
            value: Value = getattr(self.scenario, name)
            return value
        if kind == "model":
            return self.model.value(name)
        if kind == "gpu":
            return self.gpu.number(name)
        if kind == "assume":
            return self.assumptions[name]
        if kind == "weights":
            fmt = WEIGHT_FORMATS[self.scenario.weights]
            if name == "bytes_per_param":
                return self.assumptions[fmt.setting]
            value = getattr(fmt, name)
            return value
        if kind == "engine":
            engine = ENGINES[str(self.assumptions["engine"])]
            number: Value = getattr(engine, name)
            return number
        if kind == "kv":
            return self.assumptions[KV_FORMATS[self.scenario.kv].setting]
        raise KeyError(f"{kind}:{name}")

    def value(self, name: str) -> Value:
        if name not in self.cache:
            self.cache[name] = ROW_BY_NAME[name].expr.evaluate(self)
        return self.cache[name]

    def has_perop(self) -> bool:
        """Whether the GPU and the engine have measured per-op tables (planner.model.perop)."""
        return load_perop().table(self.gpu.id, str(self.assumptions["engine"])) is not None

    def perop(self, family: str, kind: int, key: Value | None) -> Value:
        return load_perop().figure(self.gpu.id, str(self.assumptions["engine"]), family, kind,
                                   key)

    def all(self) -> dict[str, Value]:
        return {q.name: self.value(q.name) for q in ROW_QUANTITIES}


_CALC_BY_NAME = {q.name: q for q in CALC_QUANTITIES}
LAYOUT_REPORTED = [*(FLEET_BY_NAME[name] for name in (
    "layout_max_sequences", "layout_max_num_seqs", "layout_weight_bytes_per_gpu",
    "layout_kv_pool_bytes_per_gpu", "a2a_fixed_seconds", "a2a_seconds_per_sequence",
    "layout_step_delta_seconds")), *CALC_QUANTITIES]


class LayoutEnv(RowEnv):
    """One configuration served in a layout beyond one TP group (``tp+ep``, ``dp-attention``):
    the row quantities at the batch the layout holds, and the layout's step quantities
    (``planner.model.layouts``, the same the Fleet sheet evaluates) over them."""

    def __init__(self, scenario: Scenario, model: ModelEnv, gpu: Entry,
                 assumptions: Mapping[str, float | str], layout: str) -> None:
        super().__init__(scenario, model, gpu, assumptions)
        self.layout = layout

    def lookup(self, kind: str, name: str) -> Value:
        if kind == "var" and name == "batch":
            return self.value("batch_chosen")
        if kind == "calc":
            return self.scenario.batch
        if kind == "layout":
            return self.layout
        if kind == "workload":
            return {"prompt_tokens": self.scenario.prompt,
                    "output_tokens": self.scenario.output}[name]
        return super().lookup(kind, name)

    def value(self, name: str) -> Value:
        if name not in self.cache:
            quantity = _CALC_BY_NAME.get(name) or FLEET_BY_NAME.get(name) or ROW_BY_NAME[name]
            self.cache[name] = quantity.expr.evaluate(self)
        return self.cache[name]


class Evaluated(Protocol):
    """What outputs read of a configuration: its scenario and its quantities' values."""

    @property
    def scenario(self) -> Scenario: ...

    def value(self, name: str) -> Value: ...


_ROW_INDEX = {q.name: i for i, q in enumerate(ROW_QUANTITIES)}


class EvaluatedRow:
    """A configuration's quantities, kept compactly once evaluated (large grids hold
    hundreds of thousands of these)."""

    __slots__ = ("scenario", "values")

    def __init__(self, env: RowEnv) -> None:
        self.scenario = env.scenario
        self.values = tuple(env.value(q.name) for q in ROW_QUANTITIES)

    def value(self, name: str) -> Value:
        return self.values[_ROW_INDEX[name]]


_VARYING = ("tp", "context", "batch", "prompt", "output")  # scenario numbers (columns)
MEMO_KEYS = 256  # values a memo keeps per subexpression before it starts again


def _depends(e: Expr, found: dict[str, frozenset[str]]) -> frozenset[str]:
    """The scenario fields an expression's value depends on (through other quantities)."""
    out: set[str] = set()
    for kind, name in e.refs():
        if kind == "q":
            if name not in found:
                found[name] = _depends(ROW_BY_NAME[name].expr, found)
            out |= found[name]
        elif kind == "var":
            out.add(name)
        elif kind in ("model", "gpu", "weights", "kv"):  # the scenario's choice of each
            out.add(kind)
    return frozenset(out)  # assumptions and the engine are the same throughout a plan


def _hoisted(e: Expr, found: dict[str, frozenset[str]]) -> Expr:
    """`e` with each largest subexpression that does not depend on context or batch wrapped in
    a Memo (nested: inside one that depends on prompt or output, those that do not)."""
    if not isinstance(e, BinOp | Neg | Func):
        return e
    deps = _depends(e, found)
    if not deps & {"context", "batch", "prompt", "output"}:
        return Memo(e, tuple(sorted(deps)))
    if isinstance(e, BinOp):
        inner: Expr = BinOp(e.op, _hoisted(e.left, found), _hoisted(e.right, found))
    elif isinstance(e, Neg):
        inner = Neg(_hoisted(e.operand, found))
    else:
        inner = Func(e.name, tuple(_hoisted(a, found) for a in e.args))
    if not deps & {"context", "batch"}:
        return Memo(inner, tuple(sorted(deps)))
    return inner


_BLOCK_EXPRS: dict[str, Expr] = {}


def _block_exprs() -> dict[str, Expr]:
    """Each row quantity's expression as blocks evaluate it (Memo-wrapped, same values)."""
    if not _BLOCK_EXPRS:
        found: dict[str, frozenset[str]] = {}
        _BLOCK_EXPRS.update({q.name: _hoisted(q.expr, found) for q in ROW_QUANTITIES})
    return _BLOCK_EXPRS


class BlockEnv:
    """Every row quantity over a block of configurations at once, as columns: one list of
    values per quantity (or one value when every row has the same). The block's rows share
    what ``RowEnv`` looks up outside the scenario's numbers (model, GPU, formats), so those
    leaves are looked up once; each value equals ``RowEnv.value`` for its row exactly."""

    def __init__(self, scenarios: Sequence[Scenario], model: ModelEnv, gpu: Entry,
                 assumptions: Mapping[str, float | str],
                 memos: dict[int, dict[tuple[object, ...], Column]] | None = None) -> None:
        first = scenarios[0]
        for s in scenarios:
            if (s.model, s.gpu, s.weights, s.kv) != (first.model, first.gpu, first.weights,
                                                     first.kv):
                raise ValueError("a block's configurations share model, GPU and formats")
        self.scenarios = scenarios
        self.size = len(scenarios)
        self.first = RowEnv(first, model, gpu, assumptions)
        self.columns: dict[str, Column] = {}
        self.leaves: dict[tuple[str, str], Column] = {}
        self.memos = memos  # shared by the blocks of one plan (same catalogs and assumptions)

    def column(self, kind: str, name: str) -> Column:
        if kind == "q":
            return self.quantity(name)
        key = (kind, name)
        col = self.leaves.get(key)
        if col is None:
            if kind == "var":
                values = [getattr(s, name) for s in self.scenarios]
                head = values[0]
                if all(v == head and type(v) is type(head) for v in values):
                    col = Same(head)
                else:
                    col = classify(values)
            else:
                col = Same(self.first.lookup(kind, name))
            self.leaves[key] = col
        return col

    def quantity(self, name: str) -> Column:
        col = self.columns.get(name)
        if col is None:
            col = self.columns[name] = evaluate_column(_block_exprs()[name], self)
        return col

    def memo(self, e: Memo, rows: list[int] | None) -> Column:
        """A subexpression's column, reused from an earlier block of the same evaluator when
        the scenario fields it depends on are the same in both (and in every row of each)."""
        if self.memos is None or not all(isinstance(self.column("var", f), Same)
                                         for f in e.fields if f in _VARYING):
            return evaluate_column(e.expr, self, rows)
        first = self.first.scenario
        key = tuple(getattr(first, f) for f in e.fields)
        seen = self.memos.get(id(e))
        if seen is None:
            seen = self.memos[id(e)] = {}
        col = seen.get(key)
        if col is None:
            if len(seen) >= MEMO_KEYS:
                seen.clear()
            col = seen[key] = evaluate_column(e.expr, self)
        return col

    def has_perop(self) -> bool:
        return self.first.has_perop()

    def perop(self, family: str, kind: int, key: Value | None) -> Value:
        return self.first.perop(family, kind, key)

    def all(self) -> list[Column]:
        """Every row quantity's column, in ``ROW_QUANTITIES`` order."""
        return [self.quantity(q.name) for q in ROW_QUANTITIES]

    def value(self, name: str, row: int) -> Value:
        col = self.quantity(name)
        return col.value if isinstance(col, Same) else col[row]


class BlockRow:
    """One row of an evaluated block, read like an ``EvaluatedRow``."""

    __slots__ = ("scenario", "block", "index")

    def __init__(self, block: BlockEnv, index: int) -> None:
        self.scenario = block.scenarios[index]
        self.block = block
        self.index = index

    def value(self, name: str) -> Value:
        return self.block.value(name, self.index)


def layouts_for(model: Entry, tp: int, engine: str) -> list[str]:
    """The serving layouts a candidate may take: those the engine runs (the engine table's
    ``layouts``) that mean something for this model at this TP: expert parallelism for MoE
    models and DP attention for MoE or MLA models, both only over two GPUs or more."""
    moe = model_class(model) == "moe"
    mla = model.number("kv_lora_rank") > 0
    useful = {"tp": True, "tp+ep": moe and tp > 1, "dp-attention": (moe or mla) and tp > 1,
              "disaggregated": True}
    return [x for x in ENGINES[engine].layouts if useful.get(x, False)]


def evaluate(s: Scenario, models: Catalog, gpus: Catalog,
             assumptions: Mapping[str, float | str] | None = None,
             layout: str = "tp") -> RowEnv:
    """A configuration's quantities; with a ``layout`` other than ``tp`` (one of
    ``CALC_LAYOUTS``) also the layout's batch, step and throughput (``LayoutEnv``)."""
    model, gpu = check_scenario(s, models, gpus)
    values = resolve(assumptions)
    if layout == "tp":
        return RowEnv(s, ModelEnv(model, values), gpu, values)
    engine = str(values["engine"])
    if layout not in CALC_LAYOUTS:
        raise ArgumentError(f"--layout {layout}: not a layout calc evaluates; choose one of "
                            f"{', '.join(CALC_LAYOUTS)} (a disaggregated layout needs a request "
                            "rate: planner size)")
    if layout not in layouts_for(model, s.tp, engine):
        raise ArgumentError(f"--layout {layout}: not a layout engine {engine} runs "
                            f"{model.id} in at TP {s.tp}; expert parallelism needs a MoE model "
                            "and DP attention a MoE or MLA model, both over two GPUs or more "
                            "(--tp 2 or more), and an engine that runs them (--set engine=vllm, "
                            "sglang or trtllm)")
    if s.output <= 0:
        raise ArgumentError(f"--layout {layout}: give --output (tokens per request): a "
                            "layout's step spreads each prompt's prefill over its output tokens")
    return LayoutEnv(s, ModelEnv(model, values), gpu, values, layout)


def model_quantities(model: Entry) -> dict[str, Value]:
    env = ModelEnv(model)
    return {q.name: env.value(q.name) for q in MODEL_BY_NAME.values()}


def to_json(env: RowEnv) -> dict[str, object]:
    """SPEC §3's JSON object: every quantity in base units, plus the inputs."""
    values = env.all()
    return {
        "inputs": asdict(env.scenario),
        "assumptions": dict(env.assumptions),
        **{q.name: _plain(values[q.name], q) for q in ROW_QUANTITIES if q.spec},
        "details": {q.name: _plain(values[q.name], q) for q in ROW_QUANTITIES if not q.spec},
        "model": {q.name: _plain(env.model.value(q.name), q) for q in MODEL_BY_NAME.values()},
        "measured_speed": speed_on(env.gpu.id, str(env.assumptions["engine"]),
                                   model_class=model_class(env.model.model)),
        "measured_ttft": ttft_figures(),
        "perop_tables": source_json(env.gpu.id, str(env.assumptions["engine"])),
        **({"layout": {"layout": env.layout,
                       **{q.name: _plain(env.value(q.name), q) for q in LAYOUT_REPORTED}}}
           if isinstance(env, LayoutEnv) else {}),
    }


def _plain(value: Value, quantity: Quantity) -> object:
    if isinstance(value, str | bool):
        return value
    if isinstance(value, int | float):
        return int(value) if quantity.kind == "int" else float(value)
    return str(value)
