"""The standard normal quantile and tail the latency percentiles use, as formulas (Abramowitz &
Stegun 26.2.23 and 26.2.17), against the values any table gives."""

from __future__ import annotations

import pytest

from planner.model.expr import DictEnv
from planner.model.normal import normal_quantile, normal_tail
from planner.model.quantity import q


def _evaluate(quantities, given: float) -> float:  # type: ignore[no-untyped-def]
    values = {("q", "x"): given}
    for quantity in quantities:
        values[("q", quantity.name)] = quantity.expr.evaluate(DictEnv(values))
    return float(values[("q", quantities[-1].name)])


@pytest.mark.parametrize("level,z", [(0.95, 1.644854), (0.99, 2.326348), (0.5, 0.0),
                                     (0.05, -1.644854), (0.8413447, 1.0)])
def test_the_quantile_is_the_tables_within_its_stated_error(level: float, z: float) -> None:
    assert _evaluate(normal_quantile("z", "z", q("x"), "x"), level) == pytest.approx(z, abs=4.5e-4)


@pytest.mark.parametrize("z,tail", [(1.959964, 0.025), (0.0, 0.5), (-1.0, 0.8413447),
                                    (3.0, 0.0013499), (40.0, 0.0), (-40.0, 1.0)])
def test_the_tail_is_the_tables_within_its_stated_error(z: float, tail: float) -> None:
    assert _evaluate(normal_tail("p", "p", q("x"), "x"), z) == pytest.approx(tail, abs=1e-7)
