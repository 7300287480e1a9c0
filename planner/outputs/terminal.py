"""Human-readable numbers with their units, for the terminal table and the HTML summary.

Bytes are shown in both GB (10^9) and GiB (2^30) where confusion costs money; never "G" alone.
"""

from __future__ import annotations

import math

from planner.evidence.measured import (
    first_token_sentence,
    layout_sentence,
    speed_sentence,
    ttft_ratio,
)
from planner.inputs.hfimport.convert import Imported
from planner.inputs.model_shape import model_class
from planner.inputs.perop import source_line as perop_source_line
from planner.model.engines import ENGINES
from planner.model.expr import Value, XlError
from planner.model.quantities import ROW_BY_NAME, ROW_QUANTITIES
from planner.model.quantity import Quantity
from planner.model.units import GB, TB_PER_S, TFLOPS, GiB
from planner.outputs.progress import duration
from planner.plan.calc import LayoutEnv, ModelEnv, RowEnv
from planner.plan.simulate import SimulationRun, percentile_of


def bytes_text(n: float) -> str:
    if abs(n) >= GB / 10:
        return f"{n / GB:,.2f} GB ({n / GiB:,.2f} GiB)"
    if abs(n) >= 10**6:
        return f"{n / 10**6:,.2f} MB"
    return f"{n:,.0f} B"


def seconds_text(s: float) -> str:
    if s < 1e-3:
        return f"{s * 1e6:,.1f} µs"
    if s < 1:
        return f"{s * 1e3:,.2f} ms"
    return f"{s:,.2f} s"


def number_text(x: float) -> str:
    if x == 0:
        return "0"
    if abs(x) >= 1e15:
        return f"{x:.3e}"
    if abs(x) >= 100 or float(x).is_integer():
        return f"{x:,.0f}"
    if abs(x) >= 1:
        return f"{x:,.2f}"
    return f"{x:.3g}"


def value_text(value: Value, quantity: Quantity) -> str:
    """A quantity's value with its unit, as a reader wants it."""
    if isinstance(value, XlError):
        return str(value)
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, str):
        return value
    if quantity.display == "bytes":
        return bytes_text(value)
    if quantity.display == "seconds":
        return seconds_text(value)
    if quantity.display == "usd":
        return f"${value:,.2f}" if value >= 0.01 else f"${value:.4f}"
    if quantity.display == "rate" and quantity.unit == "FLOP/s":
        return f"{value / TFLOPS:,.1f} TFLOP/s"
    if quantity.display == "rate" and quantity.unit == "B/s":
        return f"{value / TB_PER_S:,.3f} TB/s"
    if quantity.display == "ratio":
        return f"{value:.4g}"
    text = number_text(value)
    return f"{text} {quantity.unit}" if quantity.unit else text


# What `planner calc` shows under its verdict without --verbose: where the memory goes.
CALC_DETAILS = ("weight_bytes_per_gpu", "runtime_bytes_per_gpu", "usable_bytes_per_gpu",
                "kv_pool_bytes_per_gpu", "kv_bytes_per_token", "kv_bytes_per_sequence",
                "kv_pool_tokens", "decode_step_seconds", "decode_bound", "prefill_seconds",
                "ttft_seconds")


def calc_report(env: RowEnv, verbose: bool = False) -> str:
    """The text `planner calc` prints: the configuration, the verdict (fits or not, how many
    sequences, decode and serving speed, cost), then the details: where the memory goes and
    the step times, or with `verbose` every quantity, the notes and the assumptions."""
    s = env.scenario
    m, g = env.model.model, env.gpu
    lines = [
        f"{m.name} on {s.tp} × {g.name}  (weights {s.weights}, KV {s.kv}, context {s.context:,} "
        f"tokens, batch {s.batch}, prompt {s.prompt:,})",
        "",
        _verdict(env),
        *_answers(env),
        "",
        "Details:" if not verbose else "Every quantity:",
    ]
    shown = ROW_QUANTITIES if verbose else [ROW_BY_NAME[name] for name in CALC_DETAILS]
    width = max(len(q.label) for q in shown) + 2
    for q in shown:
        lines.append(f"  {q.label:<{width}}{value_text(env.value(q.name), q)}")
    lines.append("")
    if env.model.value("params_basis") == "derived from shape":
        derived = env.model.value("params_total")
        lines.append(f"Note: the catalog gives no params for {m.id}; "
                     f"{derived:,.0f} parameters are derived from its shape.")
    price = f"${g.number('price_per_hour_usd')}/GPU-hour as of {g.text('price_date')}"
    lines.append("Exact: memory and fit, given the shapes, formats and memory assumptions. "
                 "Estimates: decode speed and TTFT rest on bandwidth_efficiency, "
                 "compute_efficiency and kernel_floor_us; cost also on the GPU price "
                 f"({price}).")
    lines.append(speed_sentence(g.id, g.name, str(env.assumptions["engine"]),
                                model_class(env.model.model)))
    if isinstance(env, LayoutEnv):
        lines.append(layout_sentence(env.layout))
    lines.append(perop_source_line(g.id, str(env.assumptions["engine"])))
    lines.append(first_token_sentence(ttft_ratio(str(env.assumptions["engine"]), g.id,
                                                 model_class(env.model.model), gpu_name=g.name)))
    if verbose:
        lines.append("GB = 10^9 bytes, GiB = 2^30 bytes. Assumptions: " + ", ".join(
            f"{k}={v}" for k, v in env.assumptions.items() if "bytes_per" not in k))
    else:
        lines.append("GB = 10^9 bytes, GiB = 2^30 bytes. --verbose shows every quantity and "
                     "assumption; --json all of them in base units.")
    return "\n".join(lines)


def _answers(env: RowEnv) -> list[str]:
    """The verdict's figures, one a line: sequences, decode and serving speed, first token,
    cost (the cost as rented, the GPU fully busy)."""
    v = env.value
    if isinstance(env, LayoutEnv):
        return _layout_answers(env)
    rows = [
        ("Max sequences", f"{v('max_sequences'):,} of {env.scenario.context:,} tokens "
                          "(KV cache)" if isinstance(v("max_sequences"), int | float)
         else str(v("max_sequences"))),
        ("Decode speed", f"{_rate(v('decode_tokens_per_second'))} tokens/s at batch "
                         f"{env.scenario.batch} ({_rate(v('tokens_per_second_per_sequence'))} "
                         f"per user), {v('decode_bound')}-bound"),
        ("Serving speed", f"{_rate(v('serving_output_tokens_per_second'))} output tokens/s, "
                          f"{_time(v('tpot_seconds'))} per output token"),
        ("First token", f"{_time(v('prefill_seconds'))} (prefill alone, no queue)"),
        ("Cost", f"{_usd(v('cost_per_million_tokens'))} per million output tokens (rented, "
                 "fully busy)" if isinstance(v("cost_per_million_tokens"), int | float)
         else f"none: {v('cost_per_million_tokens')}"),
    ]
    if v("fits") is not True:
        rows[1:4] = [(label, f"{text} (were it to fit)") for label, text in rows[1:4]]
    return [f"  {label:<15}{text}" for label, text in rows]


def _layout_answers(env: LayoutEnv) -> list[str]:
    """A layout's figures: the sequences it holds, its batch and step, its serving speed and
    the first token (the TP group's decode speed and cost are `--layout tp`'s)."""
    v = env.value
    rows = [
        ("Max sequences", f"{v('layout_max_sequences'):,} of {env.scenario.context:,} tokens "
                          f"(KV cache, {env.layout})"),
        ("Layout", f"{env.layout}: batch {v('batch_chosen'):,}; the layout "
                   + _change(v("layout_step_delta_seconds")) + " a step"),
        ("Serving speed", f"{_rate(v('layout_output_tokens_per_second'))} output tokens/s, "
                          f"{_time(v('layout_tpot_seconds'))} per output token"),
        ("First token", f"{_time(v('prefill_seconds'))} (prefill alone, no queue)"),
    ]
    most = v("layout_max_sequences")
    if v("weights_fit") is not True or not isinstance(most, int | float) or most < 1:
        rows[1:] = [(label, f"{text} (were it to fit)") for label, text in rows[1:]]
    return [f"  {label:<15}{text}" for label, text in rows] + [
        "  (decode speed and cost per token are the TP group's: --layout tp)"]


def _change(x: Value) -> str:
    """A step time the layout adds (or, negative, saves)."""
    if isinstance(x, int | float) and x < 0:
        return f"saves {seconds_text(-x)}"
    return f"adds {_time(x)}"


def _rate(x: Value) -> str:
    return f"{x:,.0f}" if isinstance(x, int | float) and x >= 100 else (
        f"{x:,.2f}" if isinstance(x, int | float) else str(x))


def _time(x: Value) -> str:
    return seconds_text(x) if isinstance(x, int | float) else str(x)


def _usd(x: Value) -> str:
    return f"${x:,.2f}" if isinstance(x, int | float) else str(x)


def m_id(env: RowEnv) -> str:
    return env.model.model.id


def _verdict(env: RowEnv) -> str:
    s = env.scenario
    bound = env.value("decode_bound")
    speed = f"decode is {bound}-bound"
    if not env.value("weights_fit"):
        need = value_text(env.value("weight_bytes_per_gpu"), ROW_BY_NAME["weight_bytes_per_gpu"])
        usable = value_text(env.value("usable_bytes_per_gpu"), ROW_BY_NAME["usable_bytes_per_gpu"])
        return (f"DOES NOT FIT: weights need {need} per GPU but only {usable} is usable; "
                "raise --tp, use a smaller --weights format or a larger GPU.")
    if not env.value("context_supported"):
        limit = env.model.value("max_position_embeddings")
        return (f"DOES NOT FIT: context {s.context:,} tokens is beyond {m_id(env)}'s limit of "
                f"{limit:,} tokens (max_position_embeddings).")
    layout = isinstance(env, LayoutEnv)
    most = env.value("layout_max_sequences" if layout else "max_sequences")
    fits = env.value("layout_fits" if layout else "fits")
    held = f" ({env.layout})" if isinstance(env, LayoutEnv) else ""
    most = f"{most:,}" if isinstance(most, int | float) else most
    if not fits:
        return (f"DOES NOT FIT: batch {s.batch} needs more KV cache than the pool holds; at most "
                f"{most} sequences of {s.context:,} tokens fit{held}; {speed}.")
    return f"FITS: {s.batch} of at most {most} sequences{held}; {speed}."


def money(x: float) -> str:
    return f"${x:,.0f}" if abs(x) >= 100 else f"${x:,.2f}"


def verdict_line(env) -> str:  # type: ignore[no-untyped-def]  # planner.plan.sizing.FleetEnv
    """Buy or rent, on one basis: the owned equivalent annual cost against the cheapest rent."""
    verdict = str(env.value("verdict"))
    owned, rent = env.number("annual_cost_usd"), env.number("cheapest_rent_usd_per_year")
    saving = money(env.number("verdict_saving_usd_per_year"))
    offer = env.offer
    where = (f"{int(env.number('cloud_instances'))} × {offer.text('provider')} "
             f"{offer.text('instance')}" if offer is not None and env.number("cloud_instances")
             else f"the {env.gpu.name}'s GPU-hour price")
    if verdict == "buy":
        return (f"Verdict: buy. Owning costs {money(owned)} a year (capex as an annuity + opex) "
                f"against {money(rent)} for the cheapest rent ({where}); saves {saving}/year. "
                f"Break-even utilisation against on demand "
                f"{100 * env.number('break_even_utilisation'):.0f} %.")
    return (f"Verdict: {verdict.upper()}. {where} cost {money(rent)} a year against "
            f"{money(owned)} to own (capex as an annuity + opex); saves {saving}/year. "
            f"Break-even utilisation against on demand "
            f"{100 * env.number('break_even_utilisation'):.0f} %.")


def order_line(env) -> str:  # type: ignore[no-untyped-def]  # planner.plan.sizing.FleetEnv
    """What the order buys: servers at their dated unit price, GPUs bought, running, idle."""
    server = env.server
    extra, idle = int(env.number("extra_replicas")), int(env.number("idle_gpus"))
    use = [f"{int(env.number('gpus'))} run the replicas"]
    if extra:
        use.append(f"{extra * env.candidate.tp} run {extra} extra replica"
                   f"{'s' if extra != 1 else ''} at no cost")
    if idle:
        use.append(f"{idle} idle")
    survives = ("survives one server down" if env.value("survives_server_loss") is True
                else "NOT redundant: one server down loses capacity")
    return (f"Buy: {int(env.number('servers'))} × {server.name} [{server.id}] at "
            f"{money(server.number('price_usd'))} each (as of {server.text('price_date')}) = "
            f"{int(env.number('gpus_bought'))} {env.candidate.gpu} GPUs bought: "
            f"{', '.join(use)}; {survives}")


def margin_line(env) -> str:  # type: ignore[no-untyped-def]  # planner.plan.sizing.FleetEnv
    """The measured speed error applied as margin, the replicas across its measured spread,
    and whether the plan is at risk at the pessimistic end."""
    from planner.plan.sizing import spread

    if env.assumptions["speed_basis"] == "model":
        return ("Margin: none (speed_basis=model): the model's own speed, which published runs "
                "put off by the ratios in docs/accuracy.md.")
    if not env.speed.runs:
        return f"Margin: none measured ({env.speed.basis})." + ttft_margin_clause(env)
    ends = spread(env)
    ratio = env.number("speed_ratio_applied")
    risk = (" AT RISK: the pessimistic end needs more replicas than planned."
            if ends.at_risk else "")
    return (f"Margin: step times × {ratio:.2f} ({env.speed.basis}); across the interquartile "
            f"spread {ends.optimistic}-{ends.pessimistic} serving replicas "
            f"(planned {int(env.number('layout_serving_replicas'))}).{risk}"
            + ttft_margin_clause(env))


def ttft_margin_clause(env) -> str:  # type: ignore[no-untyped-def]  # sizing.FleetEnv
    """' First token: …' where the measured first-token error adds to the speed error's."""
    ratio = env.number("ttft_margin_ratio")
    if env.assumptions["speed_basis"] == "model" or not ratio > 1:
        return ""
    return (f" First token with no queue: × {ratio:.2f} beyond that ({env.ttft.basis}): "
            f"+{env.number('ttft_margin_seconds') * 1000:,.0f} ms.")


def size_report(results: list) -> str:  # list[planner.plan.sizing.Sized]
    """The bill of quantities `planner size` prints: per workload what to buy and what it costs,
    whether each target is met, then the best option on every other server type."""
    from planner.plan.sizing import best_per_layout, layout_words

    lines: list[str] = []
    totals = dict.fromkeys(("gpus_bought", "servers", "rack_share", "it_power_w", "capex_usd",
                            "network_capex_usd", "opex_usd_per_year", "support_usd_per_year",
                            "tco_usd"), 0.0)
    sized = 0
    for r in results:
        env = r.choice
        c, wl = env.candidate, r.workload
        val = env.value
        percentile = f"p{float(val('latency_percentile_used')) * 100:g}"
        lines.append(
            f"{wl.name} [{wl.id}]: {wl.text('model')}, {val('rate_requests_per_second'):,.2f} "
            f"requests/s peak, {int(wl.number('prompt_tokens')):,} prompt + "
            f"{int(wl.number('output_tokens')):,} output tokens")
        if not r.met:
            lines += [f"  CANNOT BE MET: {r.cannot_meet}; nothing is bought for it.", ""]
            continue
        sized += 1
        lines += [
            "  " + verdict_line(env),
            "  " + order_line(env),
            f"  Run: {c.weights} weights, {c.kv} KV cache, {layout_words(env)}, "
            f"{val('replicas')} replicas "
            f"({int(wl.number('spare_replicas'))} spare) × batch {val('batch_chosen')}; "
            f"{val('racks')} rack(s) alone, {val('it_power_w') / 1000:,.1f} kW IT "
            f"({val('facility_power_w') / 1000:,.1f} kW facility)",
            f"  Cost: capex {money(val('capex_usd'))} (servers {money(val('server_capex_usd'))}, "
            f"network {money(val('network_capex_usd'))}), opex "
            f"{money(val('opex_usd_per_year'))}/year (energy "
            f"{money(val('energy_usd_per_year'))}, colocation "
            f"{money(val('colocation_usd_per_year'))}, support "
            f"{money(val('support_usd_per_year'))}), TCO {money(val('tco_usd'))} over "
            f"{env.assumptions['amortisation_years']:g} years",
            f"  Per million tokens (owned): {money(val('usd_per_million_output_tokens'))} output, "
            f"{money(val('usd_per_million_input_tokens'))} input; rented per year: "
            f"{money(val('cloud_usd_per_year'))} on demand, "
            f"{money(val('cloud_reserved_usd_per_year'))} 1-year, "
            f"{money(val('cloud_reserved_3y_usd_per_year'))} 3-year reserved",
            f"  Targets at {percentile}: ITL "
            f"{seconds_text(val('layout_itl_percentile_seconds'))} (mean "
            f"{seconds_text(val('itl_seconds'))}; target {seconds_text(wl.number('itl_s'))}), "
            f"TTFT {seconds_text(val('layout_ttft_percentile_seconds'))} (mean "
            f"{seconds_text(val('layout_ttft_mean_seconds'))}; target "
            f"{seconds_text(wl.number('ttft_s'))}), capacity "
            f"{val('capacity_requests_per_second'):,.2f} requests/s: meets every target",
            "  Layouts (best of each): " + "; ".join(
                f"{k} {b['gpus']} GPUs {money(b['tco_usd'])}"  # type: ignore[arg-type]
                + ("" if b["met"] else " (misses a target)")
                for k, b in best_per_layout(r).items()),
            "  " + margin_line(env),
            "  " + speed_sentence(c.gpu, env.gpu.name, str(env.assumptions["engine"]),
                                  model_class(env.model.model)),
        ]
        if layout := layout_sentence(c.layout):
            lines.append("  " + layout)
        lines.append("  " + first_token_sentence(env.ttft))  # the figure its margin applies
        alts = r.alternatives()[:4]
        if alts:
            lines.append("  Next best on other servers:")
            for a in alts:
                ac = a.candidate
                met = "meets targets" if a.value("meets_targets") else \
                    f"misses {a.value('failing_target')}"
                lines.append(f"    {ac.server}: {a.value('gpus')} GPUs ({ac.weights}, TP {ac.tp}), "
                             f"TCO {money(a.value('tco_usd'))}, {met}")
        lines.append("")
        for k in totals:
            totals[k] += float(val(k))
    if sized < len(results):
        lines.append(f"{sized} of {len(results)} workloads sized; the total leaves out those "
                     "that cannot be met.")
    lines.append(f"Total: {totals['gpus_bought']:,.0f} GPUs bought in {totals['servers']:,.0f} "
                 f"servers, {math.ceil(totals['rack_share'] - 1e-9):,.0f} racks packed, "
                 f"{totals['it_power_w'] / 1000:,.1f} kW IT; capex {money(totals['capex_usd'])} "
                 f"(network {money(totals['network_capex_usd'])}), opex "
                 f"{money(totals['opex_usd_per_year'])}/year (support "
                 f"{money(totals['support_usd_per_year'])}), TCO {money(totals['tco_usd'])}")
    lines.append("Estimates: speeds rest on the bandwidth and compute efficiencies and the "
                 "engine's per-step costs; prices are dated catalog figures (see "
                 "catalogs/servers.yaml); `planner list assumptions` shows every other input.")
    return "\n".join(lines)


def import_report(item: Imported) -> str:
    """What was imported, for stderr: the layers, KV bytes per token, parameters, the format,
    and every config field that was not used."""
    assert item.model is not None
    env = ModelEnv(item.model)
    counts = ", ".join(f"{v} {k.replace('_layers', '').replace('_', ' ')}"
                       for k, v in item.model.layer_counts.items() if v)
    params = item.model.number("params") / 1e9
    kv = env.value("kv_bytes_per_token_bf16")
    kv_text = f"{round(kv):,}" if isinstance(kv, int | float) else str(kv)
    lines = [f"{item.id}: {item.config}: {int(item.model.number('num_hidden_layers'))} layers "
             f"({counts}), KV cache {kv_text} B per token "
             f"at BF16, {params:.2f} B parameters, stored "
             f"{item.fields.get('checkpoint_format', 'in an unrecognised format')}"]
    if item.ignored:
        lines.append(f"  ignored (do not affect sizing): {', '.join(item.ignored)}")
    if item.unknown:
        lines.append(f"  ignored, not recognised (check they do not change the shape): "
                     f"{', '.join(item.unknown)}")
    return "\n".join(lines)


def simulate_report(run: SimulationRun) -> str:
    """What `planner simulate` prints: the replica and its load, then each simulated figure
    beside the closed form at the same load."""
    from planner.plan.sizing import layout_words

    env, r, c = run.env, run.result, run.env.candidate
    wl, val = env.workload, env.value
    pct = percentile_of(env)
    mixes = ENGINES[str(env.assumptions["engine"])].mixes_prefill
    pair = run.prefill_arrivals_per_second is not None
    tau = env.number("prefill_pool_service_seconds") if pair else 0.0
    replicas, kind = ((val("decode_replicas"), "decode") if pair
                      else (val("serving_replicas"), "serving"))
    share = (f"--utilisation {run.requested_utilisation:g}" if run.requested_utilisation
             else f"its share of the {val('rate_requests_per_second'):,.2f} requests/s peak over "
                  f"{replicas} {kind} replica" + ("" if replicas == 1 else "s"))
    lines = [
        ("One prefill and one decode replica" if pair else "One replica")
        + f" of {wl.name} [{wl.id}]: {wl.text('model')} on {c.tp} × {c.gpu}"
        + ("" if c.layout == "tp" else f" ({layout_words(env)})") + ", "
        f"{c.weights} weights, {c.kv} KV cache, engine {env.assumptions['engine']}, at most "
        f"{val('slots')} sequences (the engine's cap: max_num_seqs, or what the KV cache "
        "holds)",
        f"  {int(wl.number('prompt_tokens')):,} prompt tokens in prefill steps of up to "
        f"{val('prefill_chunk_tokens'):,} tokens "
        + ("mixed into decode steps" if mixes else "run as passes of their own")
        + f", {int(wl.number('output_tokens')):,} output tokens",
        f"  Load{' of the decode replica' if pair else ''}: {run.arrivals_per_second:,.3f} "
        f"requests/s = {run.utilisation:.0%} of its capacity "
        f"{val('requests_per_second_per_replica'):,.3f} requests/s ({share})",
        *([f"  Load of the prefill replica: {run.prefill_arrivals_per_second:,.3f} requests/s × "
           f"{seconds_text(tau)} of prefill each = "
           f"{(run.prefill_arrivals_per_second or 0) * tau:.0%}; the KV moves to the decode "
           f"replica in {seconds_text(env.number('kv_transfer_seconds'))}"]
          if pair else []),
        f"  {r.requests:,} requests (seed {run.seed}), the first {r.requests - r.measured:,} "
        f"left out as warm-up; {duration(r.seconds)} simulated in {r.steps:,} steps",
        "",
        f"  {'':<18}{'simulated':>12}{'closed form':>14}{'sim ÷ closed':>14}",
    ]

    def row(label: str, simulated: float, key: str | None, unit: str = "s") -> None:
        closed = run.closed.get(key) if key else None
        text = seconds_text(simulated) if unit == "s" else f"{simulated:,.0f}"
        if closed is None:
            lines.append(f"  {label:<18}{text:>12}")
            return
        shown = ("unbounded" if closed >= 1e9 else seconds_text(closed)) if unit == "s" \
            else f"{closed:,.0f}"
        ratio = f"{simulated / closed:.2f}" if 0 < closed < 1e9 else ""
        lines.append(f"  {label:<18}{text:>12}{shown:>14}{ratio:>14}")

    for kind, at, mean in (("TTFT", r.ttft_at, r.ttft_mean), ("ITL", r.itl_at, r.itl_mean)):
        for p in sorted({50, 95, 99, pct}):
            row(f"{kind} p{p:g}", at(p), f"{kind.lower()}_p{p:g}_seconds")
        row(f"{kind} mean", mean, f"{kind.lower()}_mean_seconds")
    row("Output tokens/s", r.output_tokens_per_second, "output_tokens_per_second", unit="tok")
    lines += [
        "",
        f"Closed forms at this load and the workload's percentile (p{pct:g}): "
        "ttft_percentile_seconds, ttft_mean_seconds, itl_percentile_seconds and "
        "itl_mean_at_load_seconds of "
        "planner/model/fleet.py; output tokens/s closed: arrivals × output tokens. Step times "
        "from the same quantities (planner/plan/simulate.py): tpot_seconds − "
        "prefill_per_step_seconds at the batch decoding, prefill_interleaved_seconds per prompt "
        "token, prefill_pass_fixed_seconds for a pass with nothing decoding, × "
        "speed_ratio_applied.",
    ]
    if pair:
        lines.append("A disaggregated pair: TTFT from the prefill replica (first come first "
                     "served, + KV transfer; closed forms prefill_pool_ttft_percentile_seconds "
                     "and layout_ttft_mean_seconds), ITL and output from the decode replica, "
                     "whose steps carry no prompt (decode_pool_itl_percentile_seconds), "
                     "planner/model/layouts.py.")
    if run.utilisation >= 1:
        lines.append("At or above capacity the queue grows for as long as requests arrive: the "
                     "figures depend on --requests.")
    return "\n".join(lines)


def build_notes(result: dict[str, object], own_grid: bool = True) -> list[str]:
    """What `planner build` left out and why, for stderr: configurations a grid of the user's
    own skipped (the shipped grid's skips are by design, its comment says so), and shipped
    workloads dropped beside a user's own model or GPU catalog."""
    notes = []
    skipped = {k: v for k, v in result.get("skipped", {}).items() if v}  # type: ignore[attr-defined]
    if skipped and own_grid:
        notes.append("Note: left out " + ", ".join(f"{n:,} configurations ({why})"
                                                   for why, n in skipped.items()))
    left_out: dict[str, str] = result.get("workloads_left_out", {})  # type: ignore[assignment]
    if left_out:
        notes.append(f"Note: left out {len(left_out)} shipped workload(s) the catalogs given "
                     "cannot run (pass --workloads with your own to size them):")
        notes += [f"  {name}: {why}" for name, why in left_out.items()]
    return notes
