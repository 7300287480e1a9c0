"""The purchase schedule: a worked example by hand over four quarters, invariants over every
shipped workload (capacity covers each quarter's peak, nothing is bought earlier than a lead
time before it is needed, zero growth is the single-period plan), the located errors of growth,
schedule and lead time, `planner size --horizon` and `--json`, and the Schedule sheet live in
LibreOffice: editing a growth rate there gives the schedule a rebuild gives."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner
from openpyxl import load_workbook

from planner.build import WORKBOOK_NAME, run_build
from planner.cli import cli
from planner.errors import CatalogError
from planner.inputs.catalog import (
    DEFAULT_SERVERS,
    DEFAULT_WORKLOADS,
    load_gpus,
    load_models,
    load_servers,
    load_workloads,
)
from planner.inputs.overrides import apply
from planner.plan.schedule import WorkloadSchedule, evaluate_schedule, plan_schedules
from planner.plan.sizing import Sized, size_all
from tests.recalc import recalculate

# The small world of tests/test_sizing.py (engine none, marketed memory, one 8-GPU server of
# 10 kW at $200,000, no cloud offer for its GPU), under n+1 redundancy.
MODEL = {"source": "worked example", "params": 1e9, "num_hidden_layers": 10,
         "hidden_size": 1024, "num_attention_heads": 8, "num_key_value_heads": 8,
         "head_dim": 128, "intermediate_size": 4096, "vocab_size": 1000,
         "tie_word_embeddings": True}
GPU = {"source": "worked example", "memory_gb": 80, "bandwidth_tb_s": 2.0, "bf16_tflops": 1000,
       "gpus_per_node": 8, "price_per_hour_usd": 2.0, "price_date": "2026-01",
       "scale_up_gb_s": 400, "allreduce_latency_us": 10}
SERVER = {"gpu": "g", "gpus_per_server": 8, "price_usd": 200000, "power_kw": 10,
          "rack_units": 8, "price_date": "2026-01", "lead_time_weeks": 13,
          "source": "worked example"}
DOUBLING = 2 ** (1 / 3) - 1  # a month's growth that doubles the peak rate every quarter
WORKLOAD = {"model": "m", "rate_rps": 500, "growth": DOUBLING, "prompt_tokens": 1000,
            "output_tokens": 200, "ttft_s": 1.0, "itl_s": 0.02, "weights": ["bf16"],
            "kv": ["bf16"], "gpus": ["g"], "spare_replicas": 1, "source": "worked example"}
ASSUMPTIONS = {"engine": "none", "memory_basis": "marketed", "overhead_gib_per_gpu": 0.0,
               "gpu_memory_utilization": 0.9, "bandwidth_efficiency": 0.8,
               "compute_efficiency": 0.5, "kernel_floor_us": 3.0,
               "max_num_seqs": 256.0, "target_utilisation": 0.8, "pue": 1.25,
               "electricity_usd_per_kwh": 0.08, "average_power_share": 0.75,
               "rack_power_kw": 40.8, "rack_units_per_rack": 42.0,
               "colocation_usd_per_kw_month": 180.0, "amortisation_years": 5.0,
               "discount_rate": 0.08, "reserved_discount": 0.41, "redundancy": "n+1",
               "horizon_quarters": 4.0}


def world(tmp_path: Path, workload: dict | None = None, server: dict | None = None):  # type: ignore[no-untyped-def]
    entry = {k: v for k, v in {**WORKLOAD, **(workload or {})}.items() if v is not None}
    srv = {k: v for k, v in {**SERVER, **(server or {})}.items() if v is not None}
    files = {"models": {"m": MODEL}, "gpus": {"g": GPU}, "servers": {"s": srv},
             "workloads": {"w": entry}}
    paths = {}
    for section, entries in files.items():
        paths[section] = tmp_path / f"{section}.yaml"
        paths[section].write_text(yaml.safe_dump({section: entries}, sort_keys=False))
    models, gpus = load_models(paths["models"]), load_gpus(paths["gpus"])
    servers = load_servers(paths["servers"], gpus)
    workloads = load_workloads(paths["workloads"], models, gpus)
    return models, gpus, servers, workloads, paths


def schedule_of(tmp_path: Path, workload: dict | None = None, server: dict | None = None,
                assumptions: dict | None = None) -> WorkloadSchedule:
    models, gpus, servers, workloads, _ = world(tmp_path, workload, server)
    [sized] = size_all(workloads, models, gpus, servers, {**ASSUMPTIONS, **(assumptions or {})})
    [schedule] = plan_schedules([sized])
    return schedule


def test_worked_example_by_hand(tmp_path: Path) -> None:
    s = schedule_of(tmp_path)
    env = s.env
    assert env.candidate.tp == 1 and s.horizon == 4
    # Per replica (the fleet's own figure, worked by hand in tests/test_sizing.py): batch 256 /
    # (200 output tokens × 13.9 ms a token) = 92.05 requests/s; 8 replicas a server (TP 1).
    per = env.number("requests_per_second_per_replica")
    assert per == pytest.approx(92.05, rel=1e-3)
    assert env.value("replicas_per_server") == 8
    # Rates: 500 requests/s, doubling each quarter ((1 + growth)^3 = 2).
    assert s.row("rate_requests_per_second") == pytest.approx([500, 1000, 2000, 4000])
    # Replicas for the rate: rate / (92.05 × 0.8) rounded up = 7, 14, 28, 55 (6.79, 13.58,
    # 27.16, 54.32); the TTFT and ITL limits need fewer; + 1 spare.
    serving = [math.ceil(r / (per * 0.8)) for r in (500, 1000, 2000, 4000)]
    assert serving == [7, 14, 28, 55]
    assert s.row("replicas_for_ttft") <= serving and s.row("replicas_for_itl_tail") == [0] * 4
    assert s.row("serving_replicas") == serving
    assert s.row("replicas") == [8, 15, 29, 56]
    assert s.row("gpus") == [8, 15, 29, 56]
    # Servers: replicas / 8 rounded up = 1, 2, 4, 7; n+1: serving / 8 rounded up + 1 = 2, 3,
    # 5, 8; the larger.
    assert s.row("servers") == [2, 3, 5, 8]
    # Lead time 13 weeks = 1 quarter: quarter q orders what quarter q + 1 needs (the last
    # quarter's beyond the horizon): 3, 5, 8, 8 to date; bought 3, 2, 3, 0.
    assert s.constants["lead_quarters"] == 1
    assert s.row("servers_ordered") == [3, 5, 8, 8]
    assert s.row("servers_bought") == [3, 2, 3, 0]
    assert s.row("servers_installed") == [0, 3, 5, 8]
    # The bridge: nothing is installed in the first quarter, so its 8 replicas are rented; the
    # GPU has no cloud offer, so 8 GPUs at the GPU's $2/hour, 2,190 hours a quarter.
    assert s.row("replicas_rented") == [8, 0, 0, 0]
    assert s.row("gpus_rented") == [8, 0, 0, 0]
    assert s.row("rent_usd") == pytest.approx([8 * 2.0 * 2190, 0, 0, 0])  # $35,040
    # Capex: servers bought × ($200,000 + $1,600 network), paid when ordered.
    unit = 200000 + 1600
    capex = [3 * unit, 2 * unit, 3 * unit, 0]
    assert s.row("capex_usd") == pytest.approx(capex)  # $604,800, $403,200, $604,800, 0
    # Depreciation: straight line over 5 × 4 = 20 quarters from delivery (a quarter later).
    delivered = [0, 3 * unit, 5 * unit, 8 * unit]
    assert s.row("capex_in_service_usd") == pytest.approx(delivered)
    assert s.row("depreciation_usd") == pytest.approx([d / 20 for d in delivered])
    assert s.row("depreciation_usd")[3] == pytest.approx(80640)
    # Opex of what is installed, per server and quarter: energy 10 kW × 0.75 × 1.25 × 8,760 h
    # × $0.08 = $6,570, colocation 10 kW × $180 × 12 = $21,600, support 8 GPUs × $4,500 =
    # $36,000: $64,170 a year, $16,042.50 a quarter; plus the rent.
    per_server = (10 * 0.75 * 1.25 * 8760 * 0.08 + 10 * 180 * 12 + 8 * 4500) / 4
    assert per_server == pytest.approx(16042.5)
    opex = [35040, 3 * per_server, 5 * per_server, 8 * per_server]
    assert s.row("opex_usd") == pytest.approx(opex)
    # Cash, money out negative: -639,840; -1,091,167.50; -1,776,180; -1,904,520.
    cash = [-(capex[0] + opex[0])]
    for c, o in zip(capex[1:], opex[1:], strict=True):
        cash.append(cash[-1] - c - o)
    assert cash == pytest.approx([-639840, -1091167.5, -1776180, -1904520])
    assert s.row("cash_usd") == pytest.approx(cash)
    # NPV at 8 % a year, each quarter's flow at its end.
    npv = sum(-(c + o) * 1.08 ** (-q / 4)
              for q, (c, o) in enumerate(zip(capex, opex, strict=True), start=1))
    assert s.npv_usd == pytest.approx(npv)


def test_a_given_schedule_sets_the_quarters_after_the_first_and_its_last_holds(
        tmp_path: Path) -> None:
    s = schedule_of(tmp_path, {"growth": None, "schedule": [800, 300]},
                    assumptions={"horizon_quarters": 5.0})
    assert s.row("rate_requests_per_second") == pytest.approx([500, 800, 300, 300, 300])
    # Demand falls in the third quarter; servers are never sold, so installed never falls.
    installed = s.row("servers_installed")
    assert installed == sorted(installed)
    assert s.row("servers_bought")[2:] == [0, 0, 0]


def test_a_longer_lead_time_rents_longer_and_buys_earlier(tmp_path: Path) -> None:
    s = schedule_of(tmp_path, server={"lead_time_weeks": 26})  # 2 quarters
    assert s.constants["lead_quarters"] == 2
    # Quarter 1 orders for quarter 3 (5 servers), quarter 2 for quarter 4 (8).
    assert s.row("servers_bought") == [5, 3, 0, 0]
    assert s.row("servers_installed") == [0, 0, 5, 8]
    assert s.row("gpus_rented") == [8, 15, 0, 0]


def test_a_server_without_a_lead_time_takes_the_assumption(tmp_path: Path) -> None:
    s = schedule_of(tmp_path, server={"lead_time_weeks": None},
                    assumptions={"lead_time_weeks": 0.0})
    assert s.constants["lead_time_weeks_used"] == 0
    assert s.row("servers_installed") == s.row("servers")  # in stock: no bridge
    assert s.row("gpus_rented") == [0, 0, 0, 0]


def test_zero_growth_is_the_single_period_plan(tmp_path: Path) -> None:
    for lead in (None, 13, 40):
        s = schedule_of(tmp_path, {"growth": 0}, {"lead_time_weeks": lead},
                        assumptions={"horizon_quarters": 6.0})
        single_period(s)


def single_period(s: WorkloadSchedule) -> None:
    """A flat schedule is the plan: every quarter needs the plan's GPUs and servers, the
    servers bought are the plan's, paid once, and owned opex is the plan's per quarter."""
    env, h = s.env, s.horizon
    lead = int(s.constants["lead_quarters"])  # type: ignore[arg-type]
    assert s.row("rate_requests_per_second") == [env.number("rate_requests_per_second")] * h
    assert s.row("gpus") == [env.number("gpus")] * h
    assert s.row("servers") == [env.number("servers")] * h
    assert sum(s.row("servers_bought")) == env.number("servers")
    assert sum(s.row("capex_usd")) == pytest.approx(env.number("capex_usd"))
    after = [q for q in range(1, h + 1) if q > lead]
    for q in after:
        assert s.number("servers_installed", q) == env.number("servers")
        assert s.number("opex_usd", q) == pytest.approx(env.number("opex_usd_per_year") / 4)
        assert s.number("depreciation_usd", q) == pytest.approx(
            env.number("capex_usd") / (float(env.assumptions["amortisation_years"]) * 4))
    for q in range(1, min(lead, h) + 1):  # before the first delivery: rented, as the fleet's
        assert s.number("gpus_rented", q) == (  # own cloud_instances would rent
            env.number("cloud_instances") * env.offer.number("gpus_per_instance")
            if env.offer is not None and env.number("cloud_instances") else env.number("gpus"))


@pytest.fixture(scope="module")
def shipped() -> tuple:  # type: ignore[type-arg]
    models, gpus = load_models(), load_gpus()
    servers = load_servers(DEFAULT_SERVERS, gpus)
    workloads = load_workloads(DEFAULT_WORKLOADS, models, gpus)
    return models, gpus, servers, workloads


def _sized(shipped: tuple, changes: dict) -> list[Sized]:  # type: ignore[type-arg]
    models, gpus, servers, workloads = shipped
    return size_all(apply(workloads, "workloads", changes), models, gpus, servers,
                    {"horizon_quarters": 8.0})


def test_every_shipped_workload_flat_is_its_single_period_plan(shipped) -> None:  # type: ignore[no-untyped-def]
    schedules = plan_schedules(_sized(shipped, {}))
    assert len(schedules) == 5
    for s in schedules:
        single_period(s)


@pytest.mark.parametrize("demand", ["growth", "schedule", "decline"])
def test_invariants_over_every_shipped_workload(shipped, demand: str) -> None:  # type: ignore[no-untyped-def]
    changes: dict[str, float | str] = {}
    for wid in shipped[3].entries:
        if demand == "growth":
            changes[f"workloads.{wid}.growth"] = 0.12
        elif demand == "decline":
            changes[f"workloads.{wid}.growth"] = -0.1
        else:
            changes[f"workloads.{wid}.schedule"] = "[40, 5, 90]"
    for s in plan_schedules(_sized(shipped, changes)):
        env, h = s.env, s.horizon
        lead = int(s.constants["lead_quarters"])  # type: ignore[arg-type]
        per_server = env.number("replicas_per_server")
        per_replica = env.number("requests_per_second_per_replica")
        needed = s.row("servers")
        for q in range(1, h + 1):
            # Installed and rented capacity carries the quarter's peak (with its spares).
            rented = s.number("replicas_rented", q)
            held = s.number("servers_installed", q) * per_server + rented
            assert held >= s.number("replicas", q)
            assert held * per_replica >= s.number("rate_requests_per_second", q)
            if env.offer is not None and env.number("cloud_replicas_per_instance") > 0:
                assert (s.number("cloud_instances", q)
                        * env.number("cloud_replicas_per_instance") >= rented)
            # Once the first delivery has come, the servers needed are installed: no rent.
            if q > lead:
                assert s.number("servers_installed", q) >= needed[q - 1]
                assert s.number("gpus_rented", q) == 0
            # No server is bought earlier than a lead time before it is needed: what is
            # ordered to date is at most the most any quarter up to q + lead needs.
            assert s.number("servers_ordered", q) <= max(needed[:min(q + lead, h)])
            assert s.number("servers_bought", q) >= 0
        assert sum(s.row("capex_usd")) == pytest.approx(
            sum(s.row("servers_bought")) * env.number("capex_usd") / env.number("servers"))
        if demand == "growth":
            rates = s.row("rate_requests_per_second")
            assert rates[-1] == pytest.approx(rates[0] * 1.12 ** (3 * (h - 1)))


def test_bad_growth_schedule_and_lead_time_get_located_errors(tmp_path: Path) -> None:
    def error(workload: dict | None = None, server: dict | None = None) -> CatalogError:
        with pytest.raises(CatalogError) as caught:
            world(tmp_path, workload, server)
        return caught.value

    e = error({"growth": -1.5})
    assert "must be at least -1, got -1.5" in str(e) and e.location.field == "growth"
    assert e.location.line is not None
    flat = {k: v for k, v in WORKLOAD.items() if k != "growth"}
    text = yaml.safe_dump({"workloads": {"w": flat}}, sort_keys=False)
    text = text.replace("    spare_replicas: 1\n",
                        "    spare_replicas: 1\n    schedule:\n    - 600\n    - 0\n")
    models, gpus, *_ = world(tmp_path)
    path = tmp_path / "bad.yaml"
    path.write_text(text)
    with pytest.raises(CatalogError) as caught:
        load_workloads(path, models, gpus)
    assert "entry 2 must be greater than 0, got 0" in str(caught.value)
    assert caught.value.location.line == text.splitlines().index("    - 0") + 1
    assert "must be a non-empty list of numbers" in str(error({"growth": None,
                                                               "schedule": []}))
    assert "entry 1 must be a number" in str(error({"growth": None, "schedule": ["fast"]}))
    both = error({"schedule": [600]})
    assert "give growth or schedule, not both" in str(both)
    assert both.location.field == "schedule"
    assert "must be greater than 0" in str(error(server={"lead_time_weeks": 0}))


def test_a_horizon_that_is_not_whole_quarters_is_refused(tmp_path: Path) -> None:
    models, gpus, servers, workloads, paths = world(tmp_path)
    result = CliRunner().invoke(cli, [
        "size", "--workloads", str(paths["workloads"]), "--servers", str(paths["servers"]),
        "--models", str(paths["models"]), "--gpus", str(paths["gpus"]), "--json",
        "--set", "horizon_quarters=2.5"])
    assert result.exit_code != 0
    assert "must be a whole number of quarters" in result.output + str(result.exception)


def test_size_horizon_prints_a_table_per_workload_and_json_a_schedule(tmp_path: Path) -> None:
    *_, paths = world(tmp_path)
    options = ["size", "--workloads", str(paths["workloads"]), "--servers",
               str(paths["servers"]), "--models", str(paths["models"]), "--gpus",
               str(paths["gpus"])] + [f"--set={k}={v}" for k, v in ASSUMPTIONS.items()
                                       if k != "horizon_quarters"]
    text = CliRunner().invoke(cli, [*options, "--horizon", "4"])
    assert text.exit_code == 0, text.output
    assert "Schedule over 4 quarters" in text.output
    assert "lead time 13 weeks = 1 quarter" in text.output
    lines = text.output.splitlines()
    assert any(line.split()[:2] == ["Servers", "bought"] and line.split()[2:] == [
        "3", "2", "3", "0"] for line in lines)
    assert any(line.split()[:2] == ["GPUs", "rented"] and line.split()[2:] == [
        "8", "0", "0", "0"] for line in lines)
    plain = CliRunner().invoke(cli, options)
    assert "Schedule over" not in plain.output  # the text shows it only when asked
    out = json.loads(CliRunner().invoke(cli, [*options, "--horizon", "4", "--json"]).output)
    [w] = out["workloads"]
    keys = {"quarter", "peak_rate_rps", "gpus_needed", "servers_bought", "servers_installed",
            "gpus_rented", "capex_usd", "depreciation_usd", "opex_usd", "cash_usd"}
    assert [e["quarter"] for e in w["schedule"]] == [1, 2, 3, 4]
    assert all(keys <= set(e) for e in w["schedule"])
    assert [e["servers_bought"] for e in w["schedule"]] == [3, 2, 3, 0]
    assert w["schedule"][3]["cash_usd"] == pytest.approx(-1904520)
    assert w["lead_quarters"] == 1 and w["schedule_npv_usd"] < 0
    totals = out["totals"]
    assert totals["horizon_quarters"] == 4
    assert [e["capex_usd"] for e in totals["schedule"]] == [e["capex_usd"] for e in
                                                             w["schedule"]]
    assert totals["schedule_npv_usd"] == pytest.approx(w["schedule_npv_usd"])
    default = json.loads(CliRunner().invoke(cli, [*options, "--json"]).output)
    assert len(default["workloads"][0]["schedule"]) == 8  # the horizon_quarters default


def test_the_schedule_sheet_renders_the_definitions(tmp_path: Path) -> None:
    """The Schedule sheet's cached values are the plan's, its quarters are the horizon's and
    its inputs (the schedule's rates) are unlocked."""
    run_build(Path("tests/data/small-models.yaml"), Path("tests/data/small-gpus.yaml"),
              Path("tests/data/golden-grid.yaml"), tmp_path / "out",
              {"workloads.rag-8b-long-context.schedule": "[30, 45]", "horizon_quarters": 5})
    wb = load_workbook(tmp_path / "out" / WORKBOOK_NAME)
    ws = wb["Schedule"]
    assert wb.sheetnames.index("Schedule") == wb.sheetnames.index("Scenarios") + 1
    rows = {ws.cell(r, 1).value: r for r in range(1, ws.max_row + 1)}
    given = rows["Peak rate the schedule gives [requests/s]"]
    assert [ws.cell(given, c).value for c in range(4, 8)] == [30, 45, None, None]
    assert not ws.cell(given, 6).protection.locked
    values = load_workbook(tmp_path / "out" / WORKBOOK_NAME, data_only=True)["Schedule"]
    rate = rows["Peak rate [requests/s]"]
    assert [values.cell(rate, c).value for c in range(3, 8)] == pytest.approx(
        [25, 30, 45, 45, 45])
    assert ws.cell(rate, 8).value.startswith("first quarter:")  # five quarters: C to G


# --- live in LibreOffice ----------------------------------------------------------------------

SMALL = {"models_path": Path("tests/data/small-models.yaml"),
         "gpus_path": Path("tests/data/small-gpus.yaml"),
         "grid_path": Path("tests/data/golden-grid.yaml")}
LIVE_WORKLOAD = {"model": "llama-3.1-8b", "rate_rps": 30, "growth": 0.05,
                 "prompt_tokens": 2000, "output_tokens": 300, "ttft_s": 1.0, "itl_s": 0.05,
                 "spare_replicas": 1, "source": "test"}
LIVE_SERVERS = {
    "hgx-h100": {"gpu": "h100-sxm", "gpus_per_server": 8, "price_usd": 250000,
                 "power_kw": 10.2, "rack_units": 8, "price_date": "2026-01",
                 "lead_time_weeks": 20, "source": "test"},
}


def live_build(folder: Path, growth: float) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "servers.yaml").write_text(yaml.safe_dump({"servers": LIVE_SERVERS}))
    (folder / "workloads.yaml").write_text(yaml.safe_dump(
        {"workloads": {"chat": {**LIVE_WORKLOAD, "growth": growth}}}))
    run_build(SMALL["models_path"], SMALL["gpus_path"], SMALL["grid_path"], folder / "out",
              {"horizon_quarters": 6}, None, servers_path=folder / "servers.yaml",
              workloads_path=folder / "workloads.yaml")
    return folder / "out" / WORKBOOK_NAME


def schedule_values(path: Path) -> list[list[object]]:
    ws = load_workbook(path, data_only=True)["Schedule"]
    return [[c.value for c in row] for row in ws.iter_rows(min_row=4)]


def same(a: list[list[object]], b: list[list[object]]) -> list[str]:
    bad = []
    for i, (ra, rb) in enumerate(zip(a, b, strict=True)):
        for j, (x, y) in enumerate(zip(ra, rb, strict=True)):
            if isinstance(x, int | float) and isinstance(y, int | float) and not isinstance(
                    x, bool):
                if not math.isclose(x, y, rel_tol=1e-9, abs_tol=1e-6):
                    bad.append(f"row {i + 4} column {j + 1}: {x!r} vs {y!r}")
            elif x != y:
                bad.append(f"row {i + 4} column {j + 1}: {x!r} vs {y!r}")
    return bad


@pytest.mark.libreoffice
def test_editing_the_growth_rate_in_the_workbook_equals_rebuilding(tmp_path: Path) -> None:
    base = live_build(tmp_path / "base", 0.05)
    wb = load_workbook(base)
    ws = wb["Workloads"]
    header = [c.value for c in ws[1]]
    column = header.index("growth [fraction/month]") + 1
    assert ws.cell(2, 1).value == "chat" and ws.cell(2, column).value == 0.05
    ws.cell(2, column).value = 0.15
    edited = tmp_path / "edited" / WORKBOOK_NAME
    edited.parent.mkdir()
    wb.save(edited)
    recalculated = recalculate(edited, tmp_path / "recalculated")
    rebuilt = live_build(tmp_path / "rebuilt", 0.15)
    assert same(schedule_values(recalculated), schedule_values(rebuilt)) == []
    assert same(schedule_values(base), schedule_values(rebuilt)) != []  # the plan changed
    # and the rebuild is the Python plan's own schedule
    [s] = plan_schedules(size_all(
        load_workloads(tmp_path / "rebuilt" / "workloads.yaml", load_models(SMALL["models_path"]),
                       load_gpus(SMALL["gpus_path"])),
        load_models(SMALL["models_path"]), load_gpus(SMALL["gpus_path"]),
        load_servers(tmp_path / "rebuilt" / "servers.yaml", load_gpus(SMALL["gpus_path"])),
        {"horizon_quarters": 6}))
    assert s.row("servers_bought")[0] > 0 and sum(s.row("servers_bought")[1:]) > 0
    assert evaluate_schedule(s.env, 6).row("cash_usd") == s.row("cash_usd")
