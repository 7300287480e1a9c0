"""The sensitivity table and tornado: each bar is the total recomputed with one input at its
low or high value, the same figure `planner size --set` gives."""

from __future__ import annotations

import functools
import json

import pytest
from click.testing import CliRunner

from planner.cli import cli
from planner.inputs.settings import resolve
from planner.plan.plan import Plan
from planner.plan.sensitivity import DRIVERS, base_totals


@pytest.fixture(scope="module")
def swings(default_plan: Plan):  # type: ignore[no-untyped-def]
    """The shipped workloads sized and their sensitivity, as the default build has them
    (tests/conftest.py's default_plan: computed once a session)."""
    return default_plan.sized, default_plan.swings


@functools.cache
def size_with(*settings: str) -> tuple[float, list[object]]:
    """`planner size --json --set ...`: its total TCO and each workload's choice (the same
    settings give the same answer, so each is run once: the base is asked for by every bar)."""
    args = ["size", "--json"] + [x for s in settings for x in ("--set", s)]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    out = json.loads(result.output)
    return float(out["totals"]["tco_usd"]), [w["choice"] for w in out["workloads"]]


def held_or_cheaper(held: float, *settings: str) -> None:
    """A bar holds what the budget bought; `planner size --set` searches again. Where it keeps
    every choice the totals are equal; where it changes one, it changed to something cheaper."""
    total, choices = size_with(*settings)
    _, base_choices = size_with()
    if choices == base_choices:
        assert held == pytest.approx(total)
    else:
        assert total < held


def test_every_driver_is_ranked_by_swing(swings) -> None:
    _, rows = swings
    assert [s.driver.name for s in rows] != []
    assert {s.driver.name for s in rows} == {d.name for d in DRIVERS}
    spans = [s.swing("tco_usd") for s in rows]
    assert spans == sorted(spans, reverse=True)


@pytest.mark.slow  # `planner size --set` sizes every shipped workload at the low and the high
@pytest.mark.parametrize("name", ["electricity_usd_per_kwh", "pue", "discount_rate"])
def test_a_bar_is_the_total_with_that_input_moved(swings, name: str) -> None:
    """A bar is the budget's own configurations with one input moved. A finance input can
    still change what the search would buy (cheap power favours a hungrier GPU), so `planner
    size --set` gives the bar's total where it buys the same and less where it buys otherwise;
    the re-sized figures of the largest swings are exactly `planner size --set`."""
    sized, rows = swings
    swing = next(s for s in rows if s.driver.name == name)
    low, high = f"{name}={swing.driver.low}", f"{name}={swing.driver.high}"
    held_or_cheaper(swing.low["tco_usd"], low)
    held_or_cheaper(swing.high["tco_usd"], high)
    if swing.resized_low:
        assert swing.resized_low["tco_usd"] == pytest.approx(size_with(low)[0])
        assert swing.resized_high["tco_usd"] == pytest.approx(size_with(high)[0])
    base = base_totals(sized)["tco_usd"]
    assert min(swing.low["tco_usd"], swing.high["tco_usd"]) <= base <= max(
        swing.low["tco_usd"], swing.high["tco_usd"])


def test_server_prices_move_capex_in_proportion(swings) -> None:
    sized, rows = swings
    swing = next(s for s in rows if s.driver.name == "server_price_factor")
    # the factor prices the servers; the network per server is its own line
    capex = sum(float(s.choice.value("server_capex_usd")) for s in sized)
    assert swing.high["tco_usd"] - swing.low["tco_usd"] == pytest.approx(capex * (1.3 - 0.8))


@pytest.mark.slow  # `planner size --set` sizes every shipped workload with the changes
def test_a_scenario_total_is_the_plan_with_its_changes(swings) -> None:
    from planner.plan.scenarios import load_scenarios, scenario_totals

    sized, _ = swings
    scenarios = {s.name: s for s in load_scenarios()}
    cheap = scenarios["cheap-power"]
    [totals] = scenario_totals(sized, resolve(), [cheap])
    held_or_cheaper(totals["tco_usd"], *(f"{k}={v}" for k, v in cheap.changes.items()))
    [base] = scenario_totals(sized, resolve(), [scenarios["base"]])
    assert base == pytest.approx(base_totals(sized))


@pytest.mark.parametrize("changes,message", [
    ("{electricty_usd_per_kwh: 0.1}", "did you mean 'electricity_usd_per_kwh'"),
    ("{pue: 0.5}", "out of range"),
    ("{server_price_factor: -1}", "positive multiplier"),
    ("{engine: sglang}", "not an input a scenario can change"),
])
def test_bad_scenarios_get_located_errors(tmp_path, changes: str, message: str) -> None:
    from planner.errors import CatalogError
    from planner.plan.scenarios import load_scenarios

    path = tmp_path / "scenarios.yaml"
    path.write_text(f"scenarios:\n  s:\n    description: x\n    changes: {changes}\n")
    with pytest.raises(CatalogError, match=message) as caught:
        load_scenarios(path)
    assert "scenarios.yaml" in str(caught.value)


@pytest.mark.parametrize("driver,value", [("server_price_factor", 1.3), ("pue", 1.6),
                                          ("target_utilisation", 0.65)])
def test_a_resizing_that_copies_what_the_input_does_not_reach_equals_one_from_scratch(
        default_plan: Plan, driver: str, value: float) -> None:
    """The sensitivity re-sizes the whole search for its largest swings, copying from the
    base sizing every quantity that does not read the moved input (sizing.Reuse): every value
    of every candidate of one workload, and the choice, equal those of a sizing from scratch
    (target_utilisation moves the batch and replicas, the others only costs)."""
    from planner.plan.sensitivity import DRIVER_BY_NAME, _scaled, driver_leaf, settings
    from planner.plan.sizing import Reuse, size_all

    p = default_plan
    name = "code-completion-7b"
    values, factor = settings(DRIVER_BY_NAME[driver], value, p.assumptions)
    servers = p.servers if factor == 1.0 else _scaled(p.servers, factor)
    base = [s for s in p.sized if s.workload.id == name]
    reuse = Reuse(base, [driver_leaf(driver)])
    copied = size_all(p.workloads, p.models, p.gpus, servers, values, [name], p.clouds, reuse)[0]
    fresh = size_all(p.workloads, p.models, p.gpus, servers, values, [name], p.clouds)[0]
    assert copied.choice and fresh.choice and copied.choice.candidate == fresh.choice.candidate
    moved = 0
    for a, b in zip(fresh.rows, copied.rows, strict=True):
        for key, expected in a.cache.items():
            got = b.value(key)
            assert got == expected or got != got and expected != expected, (key, a.candidate)
        before = next(e for e in base[0].rows if e.candidate == a.candidate)
        moved += a.value("tco_usd") != before.value("tco_usd")
    assert moved > 0  # the input did move the costs: the copy is not the base sizing's
