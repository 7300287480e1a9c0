"""`planner simulate`: a seeded simulation of one replica checks the closed-form latencies.

Worked examples small enough to follow by hand, determinism, and the agreement of the simulated
p95 ITL and TTFT with the closed forms for every shipped workload's plan at 50%, 80% and 95% of
a replica's capacity (the choice, or where it is disaggregated the best aggregated candidate, so
that every workload checks the aggregated closed forms), and, for each disaggregated choice,
of its prefill and decode pools simulated as a pair.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable

import pytest
from click.testing import CliRunner

from planner.cli import cli
from planner.errors import ArgumentError, PlannerError
from planner.inputs.catalog import (
    DEFAULT_SERVERS,
    DEFAULT_WORKLOADS,
    load_gpus,
    load_models,
    load_servers,
    load_workloads,
)
from planner.plan.simulate import (
    SimulationRun,
    StepTimes,
    Traffic,
    percentile_of,
    simulate,
    simulate_replica,
    step_times,
)
from planner.plan.simulate_pair import prefill_ttfts, simulate_row
from planner.plan.sizing import FleetEnv, Sized, size_all

# A toy engine: a decode step of 10 ms + 1 ms per sequence decoding, 0.1 ms of prefill per
# prompt token, 20 ms for a pass with nothing decoding, 1,000 prompt tokens a step, 4 sequences.
FIXED, PER_TOKEN = 0.02, 0.0001


def aggregated_choice(sized: Sized) -> FleetEnv:
    """The plan's choice, or where it is disaggregated the best aggregated row by the same rule:
    one aggregated replica whose closed forms the agreement tests check for every workload (a
    disaggregated choice itself runs as a pair, ``planner.plan.simulate_pair``)."""
    env = sized.choice
    assert env is not None
    if env.candidate.layout != "disaggregated":
        return env
    rows = [e for e in sized.rows if e.candidate.layout != "disaggregated"]
    return min(rows, key=lambda e: float(e.number("choice_key")))


def toy(mixes: bool, chunk: int = 1000, cap: int = 4) -> StepTimes:
    return StepTimes(lambda n: 0.01 + 0.001 * n, PER_TOKEN, FIXED, mixes, chunk, cap)


def gaps(result) -> list[float]:  # type: ignore[no-untyped-def]
    """Every pooled inter-token gap, sorted, rounded to the microsecond."""
    out: list[float] = []
    below = 0
    for value, upto in zip(result.itl_values, result.itl_cumulative, strict=True):
        out += [round(value, 6)] * (upto - below)
        below = upto
    return sorted(out)


# -- worked examples ---------------------------------------------------------------------------

@pytest.mark.parametrize("mixes", [True, False])
def test_requests_far_apart_see_one_prefill_step_then_decode_steps_of_one(mixes: bool) -> None:
    """Alone in the engine, a 100-token prompt is one pass with nothing decoding (20 ms + 100 ×
    0.1 ms = 30 ms), then each of its 2 further tokens a decode step at batch 1 (11 ms)."""
    result = simulate(Traffic(0.001, 100, 3, 200, seed=1), toy(mixes))
    assert result.measured == 180
    assert result.ttft[0] == pytest.approx(0.03) and result.ttft[-1] == pytest.approx(0.03)
    assert gaps(result) == [0.011] * 360
    assert result.itl_mean == pytest.approx(0.011)


def test_a_prompt_longer_than_the_step_budget_takes_several_steps() -> None:
    """250 tokens at 100 a step: three passes (100, 100, 50 tokens) of 20 ms + their tokens."""
    for mixes in (True, False):
        result = simulate(Traffic(1.0, 250, 2, 1, arrivals=(0.0,)), toy(mixes, chunk=100))
        assert result.ttft == [pytest.approx(3 * FIXED + 250 * PER_TOKEN)]


def test_mixed_steps_carry_a_prompt_alongside_decoding() -> None:
    """vLLM-style, arrivals at 0 and 15 ms, 100-token prompts, 3 output tokens:
    step 1 [0, 30 ms]: request 0's prompt alone (20 + 10 ms): its first token at 30 ms;
    step 2 [30, 51 ms]: request 0 decodes (11 ms) + request 1's prompt (10 ms): gap 21 ms for
    request 0, request 1's first token at 51 ms (TTFT 36 ms);
    step 3 [51, 63 ms]: both decode (12 ms): request 0's last token;
    step 4 [63, 74 ms]: request 1 alone (11 ms)."""
    result = simulate(Traffic(1.0, 100, 3, 2, arrivals=(0.0, 0.015)), toy(True))
    assert result.ttft == [pytest.approx(0.03), pytest.approx(0.036)]
    assert gaps(result) == [0.011, 0.012, 0.012, 0.021]
    assert result.seconds == pytest.approx(0.074)
    assert result.output_tokens_per_second == pytest.approx(6 / 0.074)


def test_a_prefill_pass_of_its_own_stalls_the_running_sequences() -> None:
    """SGLang-style, the same arrivals: pass 1 [0, 30 ms] request 0's prompt; pass 2 [30, 60 ms]
    request 1's (TTFT 45 ms) while request 0 waits; decode [60, 72 ms] at batch 2: request 0's
    gap is 42 ms (since 30 ms), request 1's 12 ms; decode [72, 84 ms]: both finish."""
    result = simulate(Traffic(1.0, 100, 3, 2, arrivals=(0.0, 0.015)), toy(False))
    assert result.ttft == [pytest.approx(0.03), pytest.approx(0.045)]
    assert gaps(result) == [0.012, 0.012, 0.012, 0.042]
    assert result.seconds == pytest.approx(0.084)


def test_a_request_waits_for_a_free_sequence_slot() -> None:
    """One slot, both at 0: request 0 runs [0, 30 ms] + 2 × 11 ms; request 1 is admitted at
    52 ms and its prompt pass ends at 82 ms."""
    result = simulate(Traffic(1.0, 100, 3, 2, arrivals=(0.0, 0.0)), toy(True, cap=1))
    assert result.ttft == [pytest.approx(0.03), pytest.approx(0.082)]


def test_short_prompts_share_a_step_and_its_budget() -> None:
    """Three 400-token prompts at 0 with a 1,000-token budget: step 1 completes two (800 tokens)
    and starts the third; step 2 finishes its 200 remaining tokens while the two decode."""
    result = simulate(Traffic(1.0, 400, 2, 3, arrivals=(0.0, 0.0, 0.0)), toy(True))
    first = FIXED + 1000 * PER_TOKEN
    second = first + 0.012 + 200 * PER_TOKEN
    assert result.ttft == [pytest.approx(first), pytest.approx(first), pytest.approx(second)]


# -- the shipped plans ---------------------------------------------------------------------------

@pytest.fixture(scope="module")
def chosen() -> dict[str, FleetEnv]:
    models, gpus = load_models(), load_gpus()
    servers = load_servers(DEFAULT_SERVERS, gpus)
    workloads = load_workloads(DEFAULT_WORKLOADS, models, gpus)
    out = {}
    for sized in size_all(workloads, models, gpus, servers):
        out[sized.workload.id] = aggregated_choice(sized)
    return out


def test_step_times_are_the_plans_own_quantities(chosen: dict[str, FleetEnv]) -> None:
    """The engine admits what it has room for: its max_num_seqs or the sequences the KV pool
    holds, not the planner's batch, which sizes capacity."""
    above = 0
    for env in chosen.values():
        times = step_times(env)
        batch = int(env.value("batch_chosen"))
        slots = min(int(env.value("max_num_seqs_effective")), int(env.value("max_sequences")))
        assert times.max_sequences == env.value("slots") == slots >= batch
        above += slots > batch
        assert times.decode_seconds(batch) == pytest.approx(
            float(env.value("decode_step_no_prefill_seconds")))
        assert times.chunk_tokens == env.value("prefill_chunk_tokens")
        prompt = env.workload.number("prompt_tokens")
        assert times.prefill_seconds_per_token * prompt == pytest.approx(
            float(env.value("prefill_interleaved_seconds"))
            * float(env.value("speed_ratio_applied")))
    assert above >= 4  # most plans leave the engine room beyond the planned batch


def test_a_shipped_plan_at_a_trickle_gives_the_no_queue_figures(
        chosen: dict[str, FleetEnv]) -> None:
    """Requests far apart on the chat plan (one chunk per prompt): TTFT is one prefill pass,
    every gap a decode step at batch 1."""
    env = chosen["chat-assistant-70b"]
    assert env.value("prefill_chunks_per_prompt") == 1
    ratio = float(env.value("speed_ratio_applied"))
    run = simulate_replica(env, 200, 0, utilisation=1e-5)  # a request's life: 1e-5 of a gap
    pass_seconds = (float(env.value("prefill_pass_fixed_seconds"))
                    + float(env.value("prefill_interleaved_seconds"))) * ratio
    # + the measured first-token margin, a delay beyond the pass: (ratio − 1) × the model's
    # first token with no queue at the plan's batch
    margin = float(env.value("ttft_margin_seconds"))
    assert margin > 0 and margin == pytest.approx(
        (float(env.value("ttft_margin_ratio")) - 1)
        * (float(env.value("ttft_no_queue_seconds")) - margin))
    assert run.result.ttft[0] == pytest.approx(pass_seconds + margin)
    assert run.result.ttft[-1] == pytest.approx(pass_seconds + margin)
    step = step_times(env).decode_seconds(1)
    assert [pytest.approx(step)] * len(run.result.itl_values) == run.result.itl_values


def test_the_same_seed_gives_the_same_numbers(chosen: dict[str, FleetEnv]) -> None:
    env = chosen["code-completion-7b"]
    first, again = (simulate_replica(env, 2000, 7, 0.8).result for _ in range(2))
    assert first == again
    other = simulate_replica(env, 2000, 8, 0.8).result
    assert other.ttft != first.ttft


# -- agreement with the closed forms -------------------------------------------------------------

AGREEMENT = 0.20  # |simulated ÷ closed form − 1| at the workload's percentile
UTILISATIONS = (0.5, 0.8, 0.95)
WORKLOADS = ("chat-assistant-70b", "rag-8b-long-context", "code-completion-7b",
             "batch-summarisation-32b", "reasoning-moe-gpt-oss-120b")

# Cases where the closed forms of planner/model/fleet.py disagree with the simulation, and why
# (docs/latency.md, "Where they still disagree"); strict: a case that comes to agree fails here
# until it is taken off this list. Both are at 95% of a replica's capacity, beyond the
# target_utilisation the planner sizes at.
KNOWN_DISAGREEMENTS: dict[tuple[str, float, str], str] = {
    ("code-completion-7b", 0.95, "itl"):
        "a knife edge between one and two prompts per step: 5.3% of the simulated gaps carry "
        "two or more prompts, just over the 5% that puts p95 on them (119 ms for seed 0, for "
        "4 of seeds 0-5 and over 100,000 requests, against 64 ms for one prompt in the closed "
        "form); the "
        "closed form's count of prompts per step (mean 0.19, variance inflated by the steps "
        "prompts lengthen) puts 3-4% there",
    ("batch-summarisation-32b", 0.95, "ttft"):
        "the sequences decoding reach the 76 slots 7% of the time in the simulation (their "
        "upper tail is skewed: each extra sequence lengthens every step), 1.5% in the closed "
        "form's normal spread, so it has no slot wait at p95 (7.4 s); the simulation gives "
        "10.8 s for seed 0, 7.8-10.8 s over seeds 0-5 and 9.8 s over 100,000 requests (a "
        "request lives about 2 minutes, so 10,000 requests see few slot-full episodes)",
}


@pytest.fixture(scope="module")
def runs(chosen: dict[str, FleetEnv]) -> Callable[[str, float], tuple[SimulationRun, float]]:
    """10,000 requests of a shipped plan at a utilisation, and the CPU seconds they took."""
    done: dict[tuple[str, float], tuple[SimulationRun, float]] = {}

    def run(workload: str, utilisation: float) -> tuple[SimulationRun, float]:
        if (workload, utilisation) not in done:
            started = time.process_time()
            result = simulate_replica(chosen[workload], 10_000, 0, utilisation)
            done[workload, utilisation] = result, time.process_time() - started
        return done[workload, utilisation]

    return run


def test_the_shipped_workloads_are_those_checked(chosen: dict[str, FleetEnv]) -> None:
    assert tuple(chosen) == WORKLOADS


@pytest.mark.parametrize("metric", ["itl", "ttft"])
@pytest.mark.parametrize("utilisation", UTILISATIONS)
@pytest.mark.parametrize("workload", WORKLOADS)
def test_simulated_percentiles_agree_with_the_closed_form(
        workload: str, utilisation: float, metric: str, runs, request) -> None:  # type: ignore[no-untyped-def]
    reason = KNOWN_DISAGREEMENTS.get((workload, utilisation, metric))
    if reason:
        request.applymarker(pytest.mark.xfail(reason=reason, strict=True))
    run, _ = runs(workload, utilisation)
    pct = percentile_of(run.env)
    simulated = run.result.itl_at(pct) if metric == "itl" else run.result.ttft_at(pct)
    closed = run.closed[f"{metric}_p{pct:g}_seconds"]
    assert abs(simulated / closed - 1) <= AGREEMENT, (
        f"{workload} at {utilisation:.0%}: simulated {metric} p{pct:g} {simulated * 1000:.1f} "
        f"ms, closed form {closed * 1000:.1f} ms")


def test_ten_thousand_requests_take_under_five_cpu_seconds(runs) -> None:  # type: ignore[no-untyped-def]
    for workload in WORKLOADS:
        for utilisation in UTILISATIONS:
            _, seconds = runs(workload, utilisation)
            assert seconds < 5, (workload, utilisation, seconds)


def test_output_matches_the_offered_load_below_capacity(runs) -> None:  # type: ignore[no-untyped-def]
    for workload in WORKLOADS:
        run, _ = runs(workload, 0.8)
        assert run.result.output_tokens_per_second == pytest.approx(
            run.closed["output_tokens_per_second"], rel=0.05)


# -- the command ---------------------------------------------------------------------------------

def invoke(*args: str):  # type: ignore[no-untyped-def]
    return CliRunner().invoke(cli, ["simulate", *args])


def test_json_has_the_simulated_and_closed_form_figures() -> None:
    result = invoke("--workload", "code-completion-7b", "--requests", "2000", "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    for key in ("requests", "ttft_p50_seconds", "ttft_p95_seconds", "ttft_p99_seconds",
                "itl_p50_seconds", "itl_p95_seconds", "itl_p99_seconds",
                "output_tokens_per_second"):
        assert isinstance(data[key], int | float), key
    assert data["requests"] == 2000
    assert set(data["closed_form"]) == {"ttft_mean_seconds", "ttft_p95_seconds",
                                        "itl_mean_seconds", "itl_p95_seconds",
                                        "output_tokens_per_second"}
    assert data["ttft_p50_seconds"] <= data["ttft_p95_seconds"] <= data["ttft_p99_seconds"]


def test_text_puts_each_figure_beside_its_closed_form() -> None:
    result = invoke("--workload", "chat-assistant-70b", "--requests", "1000", "--utilisation",
                    "0.5")
    assert result.exit_code == 0, result.output
    assert "50% of its capacity" in result.output
    assert "closed form" in result.output
    line = next(x for x in result.output.splitlines() if x.strip().startswith("ITL p95"))
    assert line.count(" ms") == 2


def test_an_ad_hoc_workload_can_be_simulated_with_an_engine_that_prefills_apart() -> None:
    result = invoke("--model", "llama-3.1-8b", "--rate", "5", "--prompt", "1000", "--output",
                    "100", "--gpu", "h100-sxm", "--requests", "500", "--set", "engine=sglang",
                    "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["choice"]["engine"] == "sglang"


@pytest.mark.parametrize("args, said", [
    ((), "--workload NAME"),
    (("--workload", "chat"), "unknown workload"),
    (("--workload", "chat-assistant-70b", "--requests", "0"), "--requests 0"),
    (("--workload", "chat-assistant-70b", "--utilisation", "0"), "--utilisation 0"),
    (("--workload", "chat-assistant-70b", "--model", "llama-3.1-8b"), "not both"),
    (("--model", "llama-3.1-8b", "--rate", "5"), "--prompt, --output"),
])
def test_mistakes_are_said_as_options(args: tuple[str, ...], said: str) -> None:
    result = invoke(*args)
    assert isinstance(result.exception, PlannerError), result.output
    assert isinstance(result.exception, ArgumentError)
    assert said in str(result.exception)


# --- a disaggregated pair: a prefill replica's queue, a decode replica with no prompt ---------

def test_a_prefill_replica_is_an_md1_queue() -> None:
    """At a vanishing load every first token comes after the prefill and the transfer alone; at
    load 0.6 the mean wait is the M/D/1 mean ρτ / (2(1 − ρ)) = 0.6 × 0.1 / 0.8 = 75 ms."""
    assert all(t == pytest.approx(0.102) for t in prefill_ttfts(1e-6, 0.1, 0.002, 500, 0))
    ttft = prefill_ttfts(6.0, 0.1, 0.0, 200_000, 3)
    assert sum(ttft) / len(ttft) - 0.1 == pytest.approx(0.075, rel=0.03)


@pytest.fixture(scope="module")
def pairs() -> dict[str, FleetEnv]:
    models, gpus = load_models(), load_gpus()
    servers = load_servers(DEFAULT_SERVERS, gpus)
    workloads = load_workloads(DEFAULT_WORKLOADS, models, gpus)
    return {s.workload.id: s.choice for s in size_all(workloads, models, gpus, servers)
            if s.choice is not None and s.choice.candidate.layout == "disaggregated"}


@pytest.mark.slow  # sizes every shipped workload again, then 100,000 requests at 95 %
@pytest.mark.parametrize("utilisation", [None, *UTILISATIONS])
def test_a_disaggregated_pair_agrees_with_its_closed_forms(pairs, utilisation) -> None:  # type: ignore[no-untyped-def]
    assert pairs, "the shipped workloads include a disaggregated choice"
    # a queue at 95 % load forgets its past over ~1 / (1 − ρ)² services: 10,000 requests see
    # a few dozen such spans, too few for its p95 (M/D/1 over 10^6 requests: 28-30 services of
    # wait, the closed form 29.4; over 10^4 as little as 22)
    requests = 100_000 if utilisation == 0.95 else 10_000
    for workload, env in pairs.items():
        run = simulate_row(env, requests, 0, utilisation)
        pct = percentile_of(env)
        for metric, simulated in (("itl", run.result.itl_at(pct)),
                                  ("ttft", run.result.ttft_at(pct))):
            closed = run.closed[f"{metric}_p{pct:g}_seconds"]
            assert abs(simulated / closed - 1) <= AGREEMENT, (
                f"{workload} at {utilisation}: simulated {metric} p{pct:g} "
                f"{simulated * 1000:.1f} ms, closed form {closed * 1000:.1f} ms")
