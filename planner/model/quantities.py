"""Every derived quantity, defined once (SPEC §3), assembled in workbook order.

Two scopes:

* ``MODEL_QUANTITIES`` depend only on a model's catalog fields (head_dim, KV elements per token,
  parameter counts): ``planner.model.shape_quantities``. They become derived columns of the
  workbook's Models sheet.
* ``ROW_QUANTITIES`` depend on one configuration (model, GPU, formats, TP, context, batch,
  prompt) and the assumptions: ``planner.model.memory_quantities`` then
  ``planner.model.speed_quantities``. They become the columns of the Grid sheet, the
  ``planner calc`` output and the HTML summary's numbers.

Leaves (``planner.model.quantity``): ``var`` scenario values, ``model``/``gpu`` catalog fields or
model quantities, ``weights``/``kv`` format fields, ``assume`` assumptions, ``q`` another row
quantity. The order of the lists below is the order of the workbook's columns.
"""

from __future__ import annotations

from functools import cache

from planner.model.expr import Expr
from planner.model.memory_quantities import MEMORY_QUANTITIES
from planner.model.quantity import Quantity
from planner.model.shape_quantities import SHAPE_QUANTITIES
from planner.model.speed_quantities import SPEED_QUANTITIES

MODEL_QUANTITIES: list[Quantity] = list(SHAPE_QUANTITIES)
ROW_QUANTITIES: list[Quantity] = MEMORY_QUANTITIES + SPEED_QUANTITIES

MODEL_BY_NAME = {x.name: x for x in MODEL_QUANTITIES}
ROW_BY_NAME = {x.name: x for x in ROW_QUANTITIES}
QUANTITY_BY_NAME: dict[str, Quantity] = dict(ROW_BY_NAME)  # fleet quantities register here
SPEC_KEYS = [x.name for x in ROW_QUANTITIES if x.spec]


def assumptions_used(quantity: Quantity) -> list[str]:
    """The assumptions a quantity depends on, through every quantity it reads: what an
    estimate must say it rests on. Format sizes appear as bytes_per_param / bytes_per_kv_element
    (the chosen format's), catalog prices as price_per_hour_usd."""
    return sorted(_leaves(quantity.expr))


def _leaves(expr: Expr) -> frozenset[str]:
    found: set[str] = set()
    for kind, name in expr.refs():
        if kind == "assume":
            found.add(name)
        elif kind == "weights" and name == "bytes_per_param":
            found.add("bytes_per_param")
        elif kind == "kv":
            found.add("bytes_per_kv_element")
        elif kind == "engine":
            found.add("engine")
        elif kind == "server" and name == "price_usd":
            found.add("server price_usd")
        elif kind == "gpu" and name == "price_per_hour_usd":
            found.add("price_per_hour_usd")
        elif kind == "q" or kind == "model" and name in MODEL_BY_NAME:
            found |= _read_leaves(kind, name)
    return frozenset(found)


@cache
def _read_leaves(kind: str, name: str) -> frozenset[str]:
    """What a quantity read by name rests on: worked out once per quantity (every build's
    Method sheet and HTML ask for each)."""
    return _leaves((QUANTITY_BY_NAME[name] if kind == "q" else MODEL_BY_NAME[name]).expr)
