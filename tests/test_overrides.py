"""`--set SECTION.ID.FIELD=VALUE` changes one catalog field, checked like the YAML value, and
every figure follows."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from planner.cli import cli


def calc(*extra: str) -> dict:
    result = CliRunner().invoke(cli, ["calc", "--model", "llama-3.1-8b", "--gpu", "mi300x",
                                      "--batch", "8", "--json", *extra])
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


def test_a_gpu_price_override_scales_the_cost_and_is_listed() -> None:
    base = calc()
    dearer = calc("--set", "gpus.mi300x.price_per_hour_usd=3.70")
    assert dearer["cost_per_million_tokens"] == pytest.approx(
        base["cost_per_million_tokens"] * 3.70 / 1.85)
    assert dearer["assumptions"]["gpus.mi300x.price_per_hour_usd"] == "3.70"


def test_a_server_price_override_moves_the_budget() -> None:
    def tco(*extra: str) -> float:
        result = CliRunner().invoke(cli, ["size", "--workload", "rag-8b-long-context",
                                          "--json", *extra])
        assert result.exit_code == 0, result.output
        return float(json.loads(result.output)["totals"]["tco_usd"])

    chosen = json.loads(CliRunner().invoke(cli, ["size", "--workload", "rag-8b-long-context",
                                                 "--json"]).output)
    server = chosen["workloads"][0]["choice"]["server"]
    assert tco("--set", f"servers.{server}.price_usd=10000000") > tco()


@pytest.mark.parametrize("setting,message", [
    ("gpus.mi300x.price_per_hour_us=2", "did you mean 'price_per_hour_usd'"),
    ("gpus.mi300y.price_per_hour_usd=2", "did you mean 'mi300x'"),
    ("gpu.mi300x.price_per_hour_usd=2", "did you mean 'gpus'"),
    ("gpus.mi300x.price_per_hour_usd=-1", "must not be negative"),
    ("gpus.mi300x.price_per_hour_usd=cheap", "must be a number"),
])
def test_bad_catalog_overrides_are_explained(setting: str, message: str) -> None:
    result = CliRunner().invoke(cli, ["calc", "--model", "llama-3.1-8b", "--gpu", "mi300x",
                                      "--set", setting])
    assert result.exit_code != 0
    assert message in str(result.exception)
