"""The Quantity record and the leaves every quantity's expression is built from.

A ``Quantity`` pairs a name, header label, unit and description with one expression
(``planner.model.expr``), which gives both the Python value and the Excel formula. The leaf
constructors name what an expression reads: ``m`` a model field or model quantity, ``g`` a GPU
field, ``v`` a scenario value, ``a`` an assumption, ``q`` another row quantity, ``e`` the selected
engine's figure. ``layer_tokens`` and ``engine_default`` are the row-scope building blocks that
both the memory quantities and the speed quantities use.
"""

from __future__ import annotations

from dataclasses import dataclass

from planner.model.expr import IF, MIN, Expr, Ref


@dataclass(frozen=True)
class Quantity:
    name: str  # JSON key and column id
    label: str  # header text, without unit
    unit: str  # base unit shown in headers: "B", "s", "FLOP", "tokens", ...
    expr: Expr
    description: str  # the definition in words
    kind: str = "number"  # number | int | bool | text
    spec: bool = False  # one of SPEC §3's JSON keys
    display: str = "plain"  # number-format family: bytes | seconds | rate | usd | plain | ratio


def m(name: str) -> Ref:
    return Ref("model", name)


def g(name: str) -> Ref:
    return Ref("gpu", name)


def v(name: str) -> Ref:
    return Ref("var", name)


def a(name: str) -> Ref:
    return Ref("assume", name)


def q(name: str) -> Ref:
    return Ref("q", name)


def e(name: str) -> Ref:
    """A field of the selected engine's row in the engine table (planner.model.engines)."""
    return Ref("engine", name)


def layer_tokens(tokens: Expr, engine_pages: bool) -> Expr:
    """Layer-tokens one sequence of `tokens` keeps (engine_pages: as the engine allocates them,
    with window tails and padded layer groups) or reads (windows capped at the window)."""
    if not engine_pages:
        return ((m("full_attention_layers") + m("draft_layers")) * tokens
                + m("sliding_attention_layers") * MIN(tokens, m("sliding_window"))
                + m("chunked_attention_layers") * MIN(tokens, m("attention_chunk_size")))
    tail = e("window_tail") * (q("max_num_batched_tokens_effective") - 1)
    return (q("full_layers_paged") * tokens
            + q("sliding_layers_paged") * MIN(tokens, m("sliding_window") + tail)
            + q("chunked_layers_paged") * MIN(tokens, m("attention_chunk_size") + tail))


def engine_default(assumption: str, field: str) -> Expr:
    """An assumption that defaults ('auto') to the selected engine's figure."""
    return IF(a(assumption).eq("auto"), e(field), a(assumption))
