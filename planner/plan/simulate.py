"""A seeded discrete-event simulation of one serving replica, to check the closed-form latency
quantities of ``planner.model.fleet`` (it never feeds the workbook).

Requests arrive as a Poisson stream, each with the workload's fixed prompt and output lengths.
The engine batches continuously: before each step, waiting requests are admitted first come,
first served while running + prefilling stays within the engine's cap, ``slots``: its
max_num_seqs or the sequences the KV pool holds, whichever is fewer (not the planner's
``batch_chosen``, which sizes capacity: an engine admits whatever it has room for). Their
prompt tokens are scheduled within the step's budget of ``prefill_chunk_tokens`` (a long prompt
takes several steps, short ones share a step). Engines that mix prefill into decode steps
(vLLM, TensorRT-LLM) run every step as one pass: the sequences decoding each emit a token and
the prompt chunks ride along. Engines that run prefill apart (SGLang's default) run a prefill
pass whenever prompt tokens are pending, as SGLang's scheduler does, and a decode step only when
none are; a pass stalls every running sequence. A request's first token comes at the end of the
step (or pass) that completes its prompt.

Step times come from the same quantities as the closed forms, × ``speed_ratio_applied``:

- a decode step with n sequences decoding: the row quantities ``tpot_seconds −
  prefill_per_step_seconds`` of the configuration evaluated at batch n (so every piece of the
  step, MoE expert reads included, moves with n exactly as the plan's own step does), + what
  the serving layout changes (``planner.model.layouts``: expert parallelism's all-to-all, DP
  attention's own KV reads and the sequences beyond a TP group's caps); at n =
  ``batch_chosen`` it is ``decode_step_no_prefill_seconds``;
- x prompt tokens: ``layout_prefill_interleaved_seconds`` × x / prompt tokens;
- a pass with no sequence decoding (a prefill pass of its own, or a mixed step while nothing
  decodes) pays ``prefill_pass_fixed_seconds`` (the fixed step time and a read of the weights)
  in place of the decode step.

Between events (an arrival the engine can admit, a request finishing) the engine repeats an
identical decode step, so such runs are advanced in one go: 10,000 requests take well under a
second. Statistics drop the first 10% of requests (warm-up). TTFT is arrival to first token;
ITL pools every gap between consecutive tokens of a request; percentiles are nearest-rank.
Output tokens per second counts tokens emitted from the first measured arrival to the last
arrival.
"""

from __future__ import annotations

import copy
import math
import random
from bisect import bisect_left
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from itertools import accumulate

from planner.errors import ArgumentError
from planner.inputs.scenario import Scenario
from planner.model.engines import ENGINES
from planner.plan.calc import RowEnv
from planner.plan.sizing import FleetEnv

WARM_UP_SHARE = 0.1  # share of the first requests left out of the statistics
PERCENTILES = (50, 95, 99)

Progress = Callable[[str, int, int], None]


@dataclass(frozen=True)
class StepTimes:
    """What one engine step costs, and the engine's limits."""

    decode_seconds: Callable[[int], float]  # a decode step with n ≥ 1 sequences decoding
    prefill_seconds_per_token: float  # prompt work per prompt token
    pass_fixed_seconds: float  # a pass with no sequence decoding: fixed time + weights read
    mixes_prefill: bool  # prompt chunks ride in decode steps (else: a pass of their own)
    chunk_tokens: int  # prompt tokens per step
    max_sequences: int  # running + prefilling at most (the engine's slots)


@dataclass(frozen=True)
class Traffic:
    rate: float  # requests per second
    prompt_tokens: int
    output_tokens: int
    requests: int
    seed: int = 0
    arrivals: tuple[float, ...] = ()  # given arrival times (sorted) instead of a Poisson stream


@dataclass(frozen=True)
class Simulated:
    """What the simulation measured, after the warm-up."""

    requests: int
    measured: int
    ttft: list[float]  # sorted, one per measured request
    itl_values: list[float]  # sorted distinct gaps
    itl_cumulative: list[int]  # gaps at or below each value
    itl_mean: float
    output_tokens_per_second: float
    seconds: float  # simulated time until the last request finished
    steps: int

    def ttft_at(self, percentile: float) -> float:
        rank = max(1, math.ceil(percentile / 100 * len(self.ttft)))
        return self.ttft[rank - 1]

    def itl_at(self, percentile: float) -> float:
        if not self.itl_values:
            return 0.0
        rank = max(1, math.ceil(percentile / 100 * self.itl_cumulative[-1]))
        return self.itl_values[bisect_left(self.itl_cumulative, rank)]

    @property
    def ttft_mean(self) -> float:
        return sum(self.ttft) / len(self.ttft)


def _kept(first: int, upto: int, warm: int) -> int:
    """Requests first..upto − 1 that are measured (index ≥ warm)."""
    return max(0, upto - max(first, warm))


def simulate(traffic: Traffic, times: StepTimes, progress: Progress | None = None) -> Simulated:
    """Run `traffic` through one replica whose steps cost `times`."""
    n_req, p_tok, o_tok = traffic.requests, traffic.prompt_tokens, traffic.output_tokens
    if traffic.arrivals:
        n_req = len(traffic.arrivals)
    if n_req < 1 or p_tok < 1 or o_tok < 1 or not traffic.rate > 0:
        raise ArgumentError("a simulation needs at least one request, a prompt and an output "
                            "token, and a positive arrival rate")
    arrivals = list(traffic.arrivals)
    if not arrivals:
        rng, clock = random.Random(traffic.seed), 0.0
        for _ in range(n_req):
            clock += rng.expovariate(traffic.rate)
            arrivals.append(clock)
    warm = int(n_req * WARM_UP_SHARE)
    # output is counted in the steady state, from the first measured arrival to the last arrival
    # (with fewer than 10 requests, none is dropped: from the first arrival to the end)
    window = (arrivals[warm], arrivals[-1]) if warm else (arrivals[0], math.inf)
    cap, budget = max(1, times.max_sequences), max(1, times.chunk_tokens)
    per_token, fixed, mixes = times.prefill_seconds_per_token, times.pass_fixed_seconds, \
        times.mixes_prefill
    decode_cache: dict[int, float] = {}

    def decode(n: int) -> float:
        if n not in decode_cache:
            seconds = times.decode_seconds(n)
            if not (seconds > 0 and math.isfinite(seconds)):
                raise ArgumentError(f"a decode step at batch {n} takes {seconds} s: nothing to "
                                    "simulate")
            decode_cache[n] = seconds
        return decode_cache[n]

    # Requests move through contiguous index ranges, first come first served, all of one length:
    # [done, prefilled) running, [prefilled, admitted) prefilling, [admitted, arrived) waiting.
    now = 0.0
    arrived = admitted = prefilled = done = 0
    head_left = p_tok  # prompt tokens left of request `prefilled`
    finishing: deque[tuple[int, int]] = deque()  # (decode steps at which, requests up to)
    decoded = 0  # decode steps so far (every step when prefill is mixed in)
    synced_at = 0.0  # time of the last token of every running request not in `fresh`
    fresh: list[tuple[float, int, int]] = []  # (first token at, from, upto): since last decode
    gaps: dict[float, int] = {}
    ttft: list[float] = []
    tokens = 0  # emitted in the window
    steps = 0
    reported, every = 0, max(1, n_req // 200)

    def first_tokens(count: int) -> None:
        nonlocal prefilled, tokens
        first = prefilled
        prefilled += count
        ttft.extend(now - arrivals[i] for i in range(max(first, warm), prefilled))
        if window[0] < now <= window[1]:
            tokens += count
        finishing.append((decoded + o_tok - 1, prefilled))
        if not mixes and o_tok > 1:
            fresh.append((now, first, prefilled))

    def gap(seconds: float, count: int) -> None:
        if count > 0:
            gaps[seconds] = gaps.get(seconds, 0) + count

    while done < n_req:
        while arrived < n_req and arrivals[arrived] <= now:
            arrived += 1
        if done == arrived:  # idle: the next step starts when the next request arrives
            now = arrivals[arrived]
            continue
        admitted = min(arrived, admitted + max(0, cap - (admitted - done)))
        pending, running = admitted - prefilled, prefilled - done
        if pending == 0 and not fresh and synced_at == now:
            # the same decode step again until a request finishes or one can be admitted
            step = decode(running)
            repeat = finishing[0][0] - decoded
            if admitted - done < cap and arrived < n_req:
                repeat = min(repeat, max(1, math.ceil((arrivals[arrived] - now) / step)))
            gap(step, repeat * _kept(done, prefilled, warm))
            first_end = max(1, math.floor((window[0] - now) / step) + 1)
            last_end = repeat if window[1] == math.inf else \
                min(repeat, math.floor((window[1] - now) / step))
            tokens += running * max(0, last_end - first_end + 1)
            now += repeat * step
            decoded += repeat
            synced_at = now
            steps += repeat
        else:
            x = done_prompts = 0
            if pending:
                left, take = budget, min(head_left, budget)
                x, left, head_left = take, left - take, head_left - take
                if head_left == 0:
                    whole = min(left // p_tok, pending - 1)
                    done_prompts = 1 + whole
                    x, left = x + whole * p_tok, left - whole * p_tok
                    head_left = p_tok
                    if pending > done_prompts and left > 0:
                        x, head_left = x + left, p_tok - left
            steps += 1
            if mixes or not pending:  # a decode step, with the prompt chunks it carries
                step = (decode(running) if running else fixed) + x * per_token
                now += step
                if running:
                    fresh_from = fresh[0][1] if fresh else prefilled
                    gap(now - synced_at, _kept(done, fresh_from, warm))
                    for at, first, upto in fresh:
                        gap(now - at, _kept(max(first, done), upto, warm))
                    if window[0] < now <= window[1]:
                        tokens += running
                fresh.clear()
                decoded += 1
                synced_at = now
            else:  # a prefill pass of its own: every running sequence waits
                now += fixed + x * per_token
            if done_prompts:
                first_tokens(done_prompts)
        while finishing and finishing[0][0] <= decoded:
            done = finishing.popleft()[1]
        if progress is not None and done - reported >= every:
            reported = done
            progress("simulating", done, n_req)
    if progress is not None:
        progress("simulating", n_req, n_req)
    values = sorted(gaps)
    counts = list(accumulate(gaps[v] for v in values))
    total = counts[-1] if counts else 0
    return Simulated(
        requests=n_req, measured=n_req - warm, ttft=sorted(ttft), itl_values=values,
        itl_cumulative=counts,
        itl_mean=sum(v * c for v, c in gaps.items()) / total if total else 0.0,
        output_tokens_per_second=tokens / span if (span := min(window[1], now) - window[0]) > 0
        else 0.0,
        seconds=now, steps=steps)


# -- one replica of a sized plan ---------------------------------------------------------------

def _number(env: RowEnv, name: str) -> float:
    value = env.value(name)
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ArgumentError(f"{name} is {value!r}, not a number: nothing to simulate")
    return float(value)


def step_times(env: FleetEnv) -> StepTimes:
    """The step costs of the configuration a fleet row chose, from its own quantities."""
    ratio = _number(env, "speed_ratio_applied")
    c, wl = env.candidate, env.workload
    p, o = int(wl.number("prompt_tokens")), int(wl.number("output_tokens"))

    layout_fixed = _number(env, "layout_fixed_seconds")
    layout_per_sequence = _number(env, "layout_seconds_per_sequence")
    share_removed = _number(env, "allreduce_share_removed")
    beyond_caps = _number(env, "decode_seconds_per_sequence") \
        + _number(env, "gemm_seconds_per_sequence")

    def decode_seconds(n: int) -> float:
        row = RowEnv(Scenario(wl.text("model"), c.gpu, c.weights, c.kv, c.tp, p + o, n, p, o),
                     env.model, env.gpu, env.assumptions)
        held = _number(row, "serving_batch")  # a TP group's caps; DP attention runs more
        latency = _number(row, "step_fixed_seconds") - _number(row, "step_overhead_seconds")
        removed = share_removed * (_number(row, "decode_allreduce_seconds") - latency - held
                                   * _number(row, "allreduce_traffic_seconds_per_sequence"))
        return (_number(row, "tpot_seconds") - _number(row, "prefill_per_step_seconds")
                + layout_fixed + held * layout_per_sequence - removed
                + (n - held) * beyond_caps) * ratio

    return StepTimes(
        decode_seconds=decode_seconds,
        prefill_seconds_per_token=_number(env, "layout_prefill_interleaved_seconds") * ratio / p,
        pass_fixed_seconds=_number(env, "prefill_pass_fixed_seconds") * ratio,
        mixes_prefill=bool(ENGINES[str(env.assumptions["engine"])].mixes_prefill),
        chunk_tokens=int(_number(env, "prefill_chunk_tokens")),
        max_sequences=int(_number(env, "slots")))


def at_load(env: FleetEnv, arrivals_per_second: float) -> FleetEnv:
    """The same fleet row with `arrivals_per_replica` set: its closed forms at that load (a
    copy of the row, whatever it holds, with a memo of its own)."""
    loaded = copy.copy(env)
    loaded.cache = {"arrivals_per_replica": arrivals_per_second}
    return loaded


def percentile_of(env: FleetEnv) -> float:
    """The workload's latency percentile, e.g. 95."""
    return round(_number(env, "latency_percentile_used") * 100, 6)


def _key(kind: str, percentile: float) -> str:
    return f"{kind}_p{percentile:g}_seconds"


def closed_form(env: FleetEnv, arrivals_per_second: float) -> dict[str, float]:
    """The closed forms the simulation checks, at `arrivals_per_second` per replica."""
    loaded = at_load(env, arrivals_per_second)
    pct = percentile_of(env)
    return {
        "ttft_mean_seconds": _number(loaded, "ttft_mean_seconds"),
        _key("ttft", pct): _number(loaded, "ttft_percentile_seconds"),
        "itl_mean_seconds": _number(loaded, "itl_mean_at_load_seconds"),
        _key("itl", pct): _number(loaded, "itl_percentile_seconds"),
        "output_tokens_per_second":
            arrivals_per_second * float(env.workload.number("output_tokens")),
    }


@dataclass(frozen=True)
class SimulationRun:
    env: FleetEnv
    requested_utilisation: float | None  # None: the replica's share of the peak rate
    arrivals_per_second: float
    seed: int
    result: Simulated
    closed: dict[str, float] = field(default_factory=dict)
    # a disaggregated pair (planner.plan.simulate_pair): the prefill replica's arrivals
    prefill_arrivals_per_second: float | None = None

    @property
    def utilisation(self) -> float:
        """Arrivals ÷ the replica's capacity."""
        return self.arrivals_per_second / _number(self.env, "requests_per_second_per_replica")


def check_run(requests: int, utilisation: float | None) -> None:
    """Say what is wrong with the options of a run before anything is computed."""
    if requests < 1:
        raise ArgumentError(f"--requests {requests}: must be 1 or more")
    if utilisation is not None and not (utilisation > 0 and math.isfinite(utilisation)):
        raise ArgumentError(f"--utilisation {utilisation}: must be greater than 0, e.g. 0.8")


def simulate_replica(env: FleetEnv, requests: int = 10_000, seed: int = 0,
                     utilisation: float | None = None,
                     progress: Progress | None = None) -> SimulationRun:
    """Simulate one serving replica of a fleet row: at its share of the workload's peak rate,
    or at `utilisation` × its capacity (a disaggregated row: ``simulate_pair.simulate_row``)."""
    check_run(requests, utilisation)
    if env.candidate.layout == "disaggregated":
        raise ArgumentError(f"{env.workload.id}: a disaggregated row runs two pools: "
                            "planner.plan.simulate_pair.simulate_row simulates one of each")
    if env.value("fits_workload") is not True:
        raise ArgumentError(f"{env.workload.id}: no sequence of prompt + output fits on "
                            f"{env.candidate.gpu} at TP {env.candidate.tp}; nothing to simulate")
    rate = (_number(env, "arrivals_per_replica") if utilisation is None
            else utilisation * _number(env, "requests_per_second_per_replica"))
    wl = env.workload
    traffic = Traffic(rate, int(wl.number("prompt_tokens")), int(wl.number("output_tokens")),
                      requests, seed)
    result = simulate(traffic, step_times(env), progress)
    # the measured first-token margin is a delay, not GPU time: every first token waits it
    margin = _number(env, "ttft_margin_seconds")
    result = replace(result, ttft=[t + margin for t in result.ttft])
    return SimulationRun(env, utilisation, rate, seed, result, closed_form(env, rate))


def simulation_json(run: SimulationRun) -> dict[str, object]:
    r, env, c = run.result, run.env, run.env.candidate
    pct = percentile_of(env)
    out: dict[str, object] = {
        "workload": env.workload.id,
        "choice": {"gpu": c.gpu, "server": c.server, "weights": c.weights, "kv": c.kv,
                   "tp": c.tp, "layout": c.layout,
                   "batch_per_replica": int(_number(env, "batch_chosen")),
                   "engine": str(env.assumptions["engine"])},
        "seed": run.seed,
        "arrivals_per_second": run.arrivals_per_second,
        **({} if run.prefill_arrivals_per_second is None else
           {"prefill_arrivals_per_second": run.prefill_arrivals_per_second}),
        "utilisation": run.utilisation,
        "latency_percentile": pct,
        "requests": r.requests,
        "requests_measured": r.measured,
    }
    for p in sorted({*PERCENTILES, pct}):
        out[_key("ttft", p)] = r.ttft_at(p)
    out["ttft_mean_seconds"] = r.ttft_mean
    for p in sorted({*PERCENTILES, pct}):
        out[_key("itl", p)] = r.itl_at(p)
    out["itl_mean_seconds"] = r.itl_mean
    out["output_tokens_per_second"] = r.output_tokens_per_second
    out["simulated_seconds"] = r.seconds
    out["closed_form"] = dict(run.closed)
    return out
