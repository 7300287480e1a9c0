"""The simulation of a disaggregated pair: one prefill replica and one decode replica of a fleet
row whose layout is ``disaggregated`` (``planner.model.layouts``), to check its closed forms.

- The prefill replica runs prompts only, one after another, first come first served: Poisson
  arrivals at its share of the peak rate (or ``utilisation`` of what it can serve, 1 / τ), each
  taking ``prefill_pool_service_seconds`` (τ). A request's first token is its prefill's end +
  ``kv_transfer_seconds``. Waits follow Lindley's recursion, W' = max(0, W + τ − A).
- The decode replica is ``planner.plan.simulate.simulate`` with no prompt work: requests arrive
  with their KV (Poisson, at the decode replica's share, or ``utilisation`` of its capacity),
  are admitted within its slots and decode their output tokens; no step carries a prompt. Its
  gaps are the pair's ITL, its tokens the output throughput.

The two streams are independent (a prefill replica feeds several decode replicas and the
reverse, so a request's two arrivals are not the same process on one replica of each).
"""

from __future__ import annotations

import copy
import random
from dataclasses import replace

from planner.errors import ArgumentError
from planner.plan.simulate import (
    WARM_UP_SHARE,
    Progress,
    SimulationRun,
    Traffic,
    _key,
    _number,
    percentile_of,
    simulate,
    simulate_replica,
    step_times,
)
from planner.plan.sizing import FleetEnv


def prefill_ttfts(rate: float, service: float, delay: float, requests: int,
                  seed: int) -> list[float]:
    """First-token times of `requests` Poisson arrivals at `rate` on one prefill replica that
    serves a prompt in `service` seconds, first come first served, each first token `delay`
    seconds after its prefill (KV transfer, measured margin), after the warm-up; sorted."""
    rng = random.Random(seed)
    wait, out = 0.0, []
    warm = int(requests * WARM_UP_SHARE)
    for i in range(requests):
        if i:
            wait = max(0.0, wait + service - rng.expovariate(rate))
        if i >= warm:
            out.append(wait + service + delay)
    return sorted(out)


def pair_closed_form(env: FleetEnv, decode_rate: float, prefill_load: float) -> dict[str, float]:
    """The disaggregated closed forms at a decode replica's arrivals and a prefill replica's
    load."""
    loaded = copy.copy(env)
    loaded.cache = {"decode_pool_arrivals_per_replica": decode_rate,
                    "prefill_pool_load": prefill_load}
    pct = percentile_of(env)
    return {
        "ttft_mean_seconds": _number(loaded, "layout_ttft_mean_seconds"),
        _key("ttft", pct): _number(loaded, "prefill_pool_ttft_percentile_seconds"),
        _key("itl", pct): _number(loaded, "decode_pool_itl_percentile_seconds"),
        "output_tokens_per_second": decode_rate * float(env.workload.number("output_tokens")),
    }


def simulate_pair(env: FleetEnv, requests: int = 10_000, seed: int = 0,
                  utilisation: float | None = None,
                  progress: Progress | None = None) -> SimulationRun:
    """One prefill and one decode replica of a disaggregated fleet row, each at its share of
    the peak rate or at `utilisation` of its capacity."""
    if env.value("fits_workload") is not True:
        raise ArgumentError(f"{env.workload.id}: no sequence of prompt + output fits on "
                            f"{env.candidate.gpu} at TP {env.candidate.tp}; nothing to simulate")
    service = _number(env, "prefill_pool_service_seconds")
    if utilisation is None:
        decode_rate = _number(env, "decode_pool_arrivals_per_replica")
        prefill_rate = _number(env, "rate_requests_per_second") / _number(env, "prefill_replicas")
    else:
        decode_rate = utilisation * _number(env, "requests_per_second_per_replica")
        prefill_rate = utilisation / service
    wl = env.workload
    prompt, output = int(wl.number("prompt_tokens")), int(wl.number("output_tokens"))
    plain = step_times(env)
    # prompts arrive prefilled: no prompt work, the whole prompt "done" in the step admitting it
    times = replace(plain, prefill_seconds_per_token=0.0, mixes_prefill=True,
                    chunk_tokens=prompt * max(1, plain.max_sequences),
                    pass_fixed_seconds=plain.decode_seconds(1))
    decoded = simulate(Traffic(decode_rate, prompt, output, requests, seed), times, progress)
    # the KV transfer and the measured first-token margin: delays after the prefill replica
    delay = _number(env, "kv_transfer_seconds") + _number(env, "prefill_pool_ttft_margin_seconds")
    ttft = prefill_ttfts(prefill_rate, service, delay, requests, seed + 1)
    return SimulationRun(env, utilisation, decode_rate, seed, replace(decoded, ttft=ttft),
                         pair_closed_form(env, decode_rate, prefill_rate * service),
                         prefill_arrivals_per_second=prefill_rate)


def simulate_row(env: FleetEnv, requests: int = 10_000, seed: int = 0,
                 utilisation: float | None = None,
                 progress: Progress | None = None) -> SimulationRun:
    """What `planner simulate` runs for a fleet row: one replica, or for a disaggregated row
    one replica of each pool."""
    if env.candidate.layout == "disaggregated":
        return simulate_pair(env, requests, seed, utilisation, progress)
    return simulate_replica(env, requests, seed, utilisation, progress)
