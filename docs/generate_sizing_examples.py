"""Write docs/sizing-examples.md and the table between the sizing-examples markers in README.md:
three reference workloads sized by `planner size`, each with the working that leads to its
answer (the fleet quantities in the order they are derived), so a reader can check every step
by hand. tests/test_docs.py fails when either is not what this script writes.
Run: python docs/generate_sizing_examples.py
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TARGET = ROOT / "docs" / "sizing-examples.md"
README = ROOT / "README.md"
MARKERS = ("<!-- sizing-examples: start -->", "<!-- sizing-examples: end -->")


@dataclass(frozen=True)
class Example:
    title: str
    model: str
    rate: float
    prompt: int
    output: int
    ttft: float
    itl: float
    weights: str
    gpu: str

    def args(self) -> list[str]:
        return ["--model", self.model, "--rate", f"{self.rate:g}", "--prompt", str(self.prompt),
                "--output", str(self.output), "--ttft", f"{self.ttft:g}", "--itl",
                f"{self.itl:g}", "--weights", self.weights, "--gpu", self.gpu]


EXAMPLES = [
    Example("Llama 3.1 70B FP8 on H200", "llama-3.1-70b", 20, 2000, 500, 2.0, 0.05, "fp8",
            "h200-sxm"),
    Example("Llama 3.1 8B FP8 on H100", "llama-3.1-8b", 50, 4000, 300, 1.0, 0.03, "fp8",
            "h100-sxm"),
    Example("Qwen3-235B-A22B FP8 on H200", "qwen3-235b-a22b", 5, 1000, 2000, 3.0, 0.06, "fp8",
            "h200-sxm"),
]

# The working, in the order the quantities build on each other (planner/model/fleet.py).
WORKING = [
    ("speed_ratio_applied", "measured speed error applied (step times × this)", "{:.2f}"),
    ("batch_chosen", "batch per replica (largest meeting the mean ITL, capped by memory)", "{:,}"),
    ("layout_step_delta_seconds", "step time the serving layout adds at that batch", "ms"),
    ("itl_seconds", "mean gap between tokens at that batch", "ms"),
    ("decode_step_no_prefill_seconds", "a decode step carrying no prompt", "ms"),
    ("prefill_chunk_tokens", "prompt tokens one step carries", "{:,}"),
    ("prefill_gap_seconds", "the gap a prompt falls in", "ms"),
    ("requests_per_second_per_replica", "requests per replica at that batch", "{:.2f}"),
    ("replicas_for_rate", "replicas for the peak rate at target utilisation", "{:,}"),
    ("itl_tail_rate_limit", "arrivals per replica keeping prompt gaps out of the tail",
     "{:.2f}"),
    ("replicas_for_itl_tail", "replicas for the ITL percentile", "{:,}"),
    ("ttft_margin_seconds", "measured first-token margin (a delay, not GPU time)", "ms"),
    ("ttft_no_queue_seconds", "time to first token with no queue, with the margin", "ms"),
    ("prefill_service_seconds", "prefill service time per prompt (τ)", "ms"),
    ("ttft_load_limit", "prefill load meeting the TTFT percentile (ρ max)", "{:.3f}"),
    ("replicas_for_ttft", "replicas for the TTFT percentile", "{:,}"),
    ("serving_replicas", "serving replicas (the most of the three)", "{:,}"),
    ("prompt_gap_share", "share of gaps carrying a prompt", "{:.3f}"),
    ("itl_percentile_seconds", "ITL at p95", "ms"),
    ("ttft_percentile_seconds", "TTFT at p95", "ms"),
    ("servers", "servers bought (n+1)", "{:,}"),
    ("gpus_bought", "GPUs bought", "{:,}"),
    ("annual_cost_usd", "owned, equivalent annual cost", "usd"),
    ("cheapest_rent_usd_per_year", "cheapest rent per year", "usd"),
    ("verdict", "verdict", "{}"),
]


# A disaggregated choice (docs/layouts.md): a decode pool whose steps carry no prompt, and a
# prefill pool sized for the TTFT percentile.
DISAGGREGATED_WORKING = [
    ("speed_ratio_applied", "measured speed error applied (step times × this)", "{:.2f}"),
    ("batch_chosen", "decode batch per replica (largest meeting the mean ITL, no prompt in the "
     "step)", "{:,}"),
    ("itl_seconds", "a decode step at that batch: the mean gap between tokens", "ms"),
    ("requests_per_second_per_replica", "requests per decode replica at that batch", "{:.2f}"),
    ("decode_replicas", "decode replicas for the peak rate at target utilisation", "{:,}"),
    ("decode_pool_running_sequences", "sequences a decode replica decodes at that load, mean",
     "{:.1f}"),
    ("decode_pool_running_spread", "their standard deviation", "{:.1f}"),
    ("decode_pool_running_at_percentile", "sequences decoding at p95", "{:.1f}"),
    ("layout_itl_percentile_seconds", "ITL at p95: a decode step with that batch", "ms"),
    ("kv_transfer_seconds", "moving a prompt's KV cache to its decode replica", "ms"),
    ("prefill_pool_service_seconds", "prefill of a prompt on a prefill replica (τ)", "ms"),
    ("prefill_pool_ttft_margin_seconds", "measured first-token margin (a delay, not in τ)",
     "ms"),
    ("prefill_pool_wait_budget_seconds", "time a prompt may wait for a prefill replica", "ms"),
    ("prefill_pool_load_limit", "prefill load meeting the TTFT percentile (ρ max)", "{:.3f}"),
    ("prefill_replicas", "prefill replicas", "{:,}"),
    ("prefill_pool_load", "load of a prefill replica", "{:.3f}"),
    ("layout_ttft_percentile_seconds", "TTFT at p95", "ms"),
    ("layout_serving_replicas", "serving replicas (prefill + decode)", "{:,}"),
    ("servers", "servers bought (n+1)", "{:,}"),
    ("gpus_bought", "GPUs bought", "{:,}"),
    ("annual_cost_usd", "owned, equivalent annual cost", "usd"),
    ("cheapest_rent_usd_per_year", "cheapest rent per year", "usd"),
    ("verdict", "verdict", "{}"),
]


def _shown(value: object, fmt: str) -> str:
    if fmt == "ms":
        return f"{float(value) * 1000:,.1f} ms"  # type: ignore[arg-type]
    if fmt == "usd":
        return f"${float(value):,.0f}"  # type: ignore[arg-type]
    return fmt.format(value)


def sized(example: Example):  # type: ignore[no-untyped-def]
    from planner.inputs.catalog import DEFAULT_SERVERS, load_gpus, load_models, load_servers
    from planner.inputs.workloads import adhoc_workloads
    from planner.plan.sizing import size_all

    models, gpus = load_models(), load_gpus()
    servers = load_servers(DEFAULT_SERVERS, gpus)
    workloads = adhoc_workloads(example.model, example.rate, example.prompt, example.output,
                                example.ttft, example.itl, (example.weights,), (example.gpu,),
                                0, models, gpus)
    [result] = size_all(workloads, models, gpus, servers)
    return result


def answer_row(example: Example) -> str:
    r = sized(example)
    if not r.met:
        return f"| {example.title} | cannot be met: {r.cannot_meet} | | | | | | |"
    from planner.plan.sizing import layout_words

    c = r.choice
    v = c.value
    replicas = f"{int(v('replicas'))} × batch {int(v('batch_chosen'))}"
    if c.candidate.layout == "disaggregated":  # the batch is the decode replicas'
        prefill = int(v("prefill_replicas"))
        replicas = f"{prefill} prefill + {int(v('replicas')) - prefill} decode × batch " \
            f"{int(v('batch_chosen'))}"
    return (f"| {example.title}, {example.rate:g} req/s, {example.prompt:,}/{example.output:,}, "
            f"TTFT {example.ttft:g} s, ITL {example.itl * 1000:g} ms | {c.candidate.server}, "
            f"{layout_words(c)} | {replicas} | "
            f"{int(v('gpus_bought'))} | {_shown(v('layout_itl_percentile_seconds'), 'ms')} | "
            f"{_shown(v('layout_ttft_percentile_seconds'), 'ms')} | {v('verdict')} |")


HEADER = ("| workload | server, layout | replicas × batch | GPUs bought | ITL p95 | TTFT p95 | "
          "verdict |\n|---|---|---|---|---|---|---|")


def table() -> str:
    return HEADER + "\n" + "\n".join(answer_row(e) for e in EXAMPLES)


def report() -> str:
    from planner.plan.sizing import layout_words

    out = ["# Three reference workloads, sized step by step", "",
           "Generated by `python docs/generate_sizing_examples.py` from `planner size` (a test "
           "keeps it current). Each answer is followed by the working: the fleet quantities in "
           "the order they build on each other, as `planner/model/fleet.py` defines them and "
           "docs/latency.md derives them (`planner/model/layouts.py` and docs/layouts.md for a "
           "serving layout other than one TP group), so each step can be checked by hand from "
           "the one before.", "", table(), ""]
    for e in EXAMPLES:
        r = sized(e)
        out += [f"## {e.title}", "", "```sh", "planner size " + " ".join(e.args()), "```", ""]
        if not r.met:
            out += [f"Cannot be met: {r.cannot_meet}.", ""]
            continue
        c = r.choice
        disaggregated = c.candidate.layout == "disaggregated"
        out += [f"Chosen: {c.server.name} [{c.candidate.server}], {c.candidate.weights} weights, "
                f"{c.candidate.kv} KV cache, {layout_words(c)} (`{c.candidate.layout}`, "
                "docs/layouts.md).", "",
                "| step | quantity | value |", "|---|---|---|"]
        out += [f"| {label} | `{name}` | {_shown(c.value(name), fmt)} |"
                for name, label, fmt in (DISAGGREGATED_WORKING if disaggregated else WORKING)]
        out.append("")
    return "\n".join(out)


def readme_text(readme: str) -> str:
    start, end = MARKERS
    block = f"{start}\n{table()}\n{end}"
    return re.sub(re.escape(start) + r".*?" + re.escape(end), lambda _: block, readme,
                  flags=re.S)


def main() -> None:
    TARGET.write_text(report() + "\n", encoding="utf-8")
    README.write_text(readme_text(README.read_text(encoding="utf-8")), encoding="utf-8")


if __name__ == "__main__":
    main()
