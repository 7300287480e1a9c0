"""Write docs/layouts.md: what each serving layout changes, the worked examples, and three
workloads sized with every layout side by side, from the planner itself (tests/test_layouts.py
checks that the file is what this prints, so it cannot drift).

Run: python docs/generate_layouts.py"""

from __future__ import annotations

from pathlib import Path

from planner.inputs.catalog import (
    DEFAULT_GPUS,
    DEFAULT_MODELS,
    DEFAULT_SERVERS,
    load_gpus,
    load_models,
    load_servers,
)
from planner.inputs.workloads import adhoc_workloads
from planner.plan.sizing import FleetEnv, Sized, best_per_layout, layout_words, size_all

TARGET = Path(__file__).parent / "layouts.md"
LAYOUTS = ("tp", "tp+ep", "dp-attention", "disaggregated")
# (model, GPU, rate, prompt, output, TTFT s, ITL s)
EXAMPLES = [
    ("llama-3.1-70b", "h200-sxm", 20.0, 2000, 500, 2.0, 0.05),
    ("llama-3.1-8b", "h100-sxm", 50.0, 4000, 300, 1.0, 0.03),
    ("qwen3-235b-a22b", "h200-sxm", 5.0, 1000, 2000, 3.0, 0.06),
]
DEEPSEEK = ("deepseek-r1", "h200-sxm", 5.0, 1000, 2000, 3.0, 0.06)


def size(model: str, gpu: str, rate: float, prompt: int, output: int, ttft: float,
         itl: float) -> Sized:
    models, gpus = load_models(DEFAULT_MODELS), load_gpus(DEFAULT_GPUS)
    servers = load_servers(DEFAULT_SERVERS, gpus)
    workloads = adhoc_workloads(model, rate, prompt, output, ttft, itl, ("fp8",), (gpu,), 0,
                                models, gpus)
    return size_all(workloads, models, gpus, servers, {})[0]


def row(sized: Sized, layout: str, tp: int, kv: str = "fp8") -> FleetEnv:
    return next(e for e in sized.rows if e.candidate.layout == layout
                and e.candidate.tp == tp and e.candidate.kv == kv)


def _ms(x: float) -> str:
    return f"{x * 1000:,.1f} ms"


def table() -> list[str]:
    lines = ["| workload | " + " | ".join(LAYOUTS) + " | chosen |",
             "|---|" + "---|" * (len(LAYOUTS) + 1)]
    for example in EXAMPLES:
        model, gpu, rate, p, o, ttft, itl = example
        sized = size(*example)
        best = best_per_layout(sized)
        cells = []
        for layout in LAYOUTS:
            b = best.get(layout)
            if b is None:
                cells.append("not a candidate")
                continue
            mark = "" if b["met"] else " (misses)"
            cells.append(f"{b['gpus']} GPUs, ${float(b['tco_usd']) / 1e6:,.2f}M{mark}")  # type: ignore[arg-type]
        chosen = layout_words(sized.choice) if sized.choice and sized.met else "none met"
        lines.append(f"| {model} FP8 on {gpu}, {rate:g} req/s, {p}/{o}, TTFT {ttft:g} s, "
                     f"ITL {itl * 1000:g} ms | " + " | ".join(cells) + f" | {chosen} |")
    return lines


def worked() -> list[str]:
    sized = size(*DEEPSEEK)
    tp, dp = row(sized, "tp", 8), row(sized, "dp-attention", 8)
    out = ["### DeepSeek-R1 FP8 on 8 × H200: TP 8 against TP 8 with DP attention", "",
           "| quantity | TP 8 | TP 8 + DP attention |", "|---|---|---|"]
    for name, label, fmt in [
        ("layout_weight_bytes_per_gpu", "weights per GPU", lambda x: f"{x / 2**30:,.1f} GiB"),
        ("layout_kv_pool_bytes_per_gpu", "KV pool per GPU", lambda x: f"{x / 2**30:,.1f} GiB"),
        ("layout_max_sequences", "sequences of 3,000 tokens that fit", lambda x: f"{x:,.0f}"),
        ("batch_chosen", "batch at the 60 ms ITL target", lambda x: f"{x:,.0f}"),
        ("layout_step_delta_seconds", "step time the layout adds at that batch", _ms),
        ("a2a_fixed_seconds", "all-to-all latency per step", _ms),
        ("itl_seconds", "step (ITL, mean)", _ms),
        ("layout_itl_percentile_seconds", "ITL at p95 (docs/latency.md)", _ms),
        ("gpus", "GPUs for 5 req/s", lambda x: f"{x:,.0f}"),
    ]:
        out.append(f"| {label} | {fmt(tp.number(name))} | {fmt(dp.number(name))} |")
    d = row(sized, "disaggregated", 8)
    out += ["", "DP attention stores each sequence's MLA latent once instead of on all eight "
            "GPUs, so the pool holds about eight times the sequences (less the attention "
            "weights it replicates); at a 60 ms ITL the batch is bound by the step time, not "
            "by the KV, and the all-to-all latency of 58 MoE layers makes DP attention the "
            "dearer layout here. It wins where the batch is KV-bound (long contexts, looser "
            "ITL).", "",
            *([] if sized.met or any(e.value("failing_target") != "itl" for e in (tp, dp))
              else [
                "No candidate of any layout meets the 60 ms ITL at p95 at this rate: the batch "
                "in flight swings above the batch the capacity is bought at (docs/latency.md "
                "§3), and the step with it is longer than the target.", ""]),
            "### A disaggregated sizing: the same DeepSeek-R1 workload, TP 8 pools", "",
            f"- KV moved per request: {d.number('kv_transfer_bytes') / 1e6:,.1f} MB "
            f"(1,000 prompt tokens), over 8 GPUs × "
            f"{d.number('rdma_bytes_per_second') / 1e9:,.1f} GB/s: "
            f"{_ms(d.number('kv_transfer_seconds'))}",
            f"- prefill: {_ms(d.number('prefill_pool_service_seconds'))} a prompt, "
            f"{int(d.number('prefill_replicas'))} replica(s) = "
            f"{int(d.number('prefill_gpus'))} prefill GPUs at load "
            f"{d.number('prefill_pool_load'):.2f}; TTFT p95 "
            f"{_ms(d.number('layout_ttft_percentile_seconds'))}",
            f"- decode: batch {int(d.number('batch_chosen'))}, step "
            f"{_ms(d.number('itl_seconds'))} (no prompt rides in it), "
            f"{int(d.number('decode_replicas'))} replicas = "
            f"{int(d.number('decode_gpus'))} decode GPUs; at "
            f"{d.number('decode_pool_arrivals_per_replica'):.2f} requests/s a replica decodes "
            f"{d.number('decode_pool_running_sequences'):.1f} sequences on average and "
            f"{d.number('decode_pool_running_at_percentile'):.1f} at p95 (Little's law, "
            f"docs/latency.md): ITL p95 {_ms(d.number('layout_itl_percentile_seconds'))}, a "
            "decode step with that batch",
            f"- {layout_words(d)}; TCO ${d.number('tco_usd') / 1e6:,.2f}M against "
            f"${tp.number('tco_usd') / 1e6:,.2f}M for TP 8 aggregated"]
    return out


HEAD = """# Serving layouts

`planner size` evaluates each candidate (server, GPU, weights, KV format, TP) in every layout the
engine runs and that means something for the model (`layouts` in `planner/model/engines.py`),
and picks the lowest TCO among all that meet every target. The quantities are fleet-scope
formulas in `planner/model/layouts.py`; the Fleet sheet carries the layout as an input cell of
each row, the Budget a layout column, `size --json` `layout`, `prefill_gpus`, `decode_gpus` and
`best_per_layout`. `planner calc --layout tp+ep` or `--layout dp-attention` evaluates one
configuration in a layout at a given concurrency, with the same quantities.

{TABLE}

Not modelled: two-microbatch overlap of the all-to-all (DeepSeek's), attention imbalance
between DP ranks, EP across servers, DP attention or EP inside a disaggregated pool, a
handover overhead beyond the transfer, a transferred request's wait for a free decode slot.

How far to trust it: docs/accuracy.md, "Runs served in another layout", compares NVIDIA's
TensorRT-LLM Qwen3-235B max-load runs, served with DP attention and EP, as one TP group and as
they ran. Read it before relying on a DP-attention choice at large batches.

## Worked examples
"""


LAYOUT_ROWS = [
    ("tp", "one TP group per replica", "all"),
    ("tp+ep", "(MoE models) routed experts sharded whole over the group: the MoE "
     "all-reduce becomes an all-to-all dispatch (FP8) and combine (BF16) over the "
     "scale-up bandwidth, with its latency per MoE layer; the busiest rank sets the pace "
     "(`expert_load_imbalance`, 1.2)",
     "vLLM `--enable-expert-parallel`, SGLang `--ep-size`, TensorRT-LLM "
     "`moe_expert_parallel_size`"),
    ("dp-attention", "(MoE or MLA models) attention data-parallel: each GPU its own "
     "sequences and KV pool (an MLA latent stored once, not on every GPU), attention "
     "weights replicated, max_num_seqs per rank; experts EP as above",
     "vLLM `--data-parallel-size` + `--enable-expert-parallel`, SGLang "
     "`--enable-dp-attention`, TensorRT-LLM `enable_attention_dp`"),
    ("disaggregated", "a prefill pool sized for the TTFT percentile at the peak rate (M/D/1 "
     "per replica), the prompt's KV moved over RDMA (server `rdma_gb_s`, else 50 GB/s × "
     "`kv_transfer_efficiency` 0.87), a decode pool sized for the rate at the ITL target with "
     "no prompt-carrying step: its ITL percentile is a decode step with the batch in flight "
     "at that percentile (docs/latency.md, with no prompt work)",
     "vLLM NixlConnector, SGLang `--disaggregation-mode`, TensorRT-LLM disaggregated serving"),
]


def layout_table() -> str:
    rows = ["| layout | what changes | engines |", "|---|---|---|"]
    rows += [f"| `{a}` | {b} | {c} |" for a, b, c in LAYOUT_ROWS]
    return "\n".join(rows)


def document() -> str:
    parts = [HEAD.replace("{TABLE}", layout_table()), *worked(), "",
             "## Three workloads, every layout",
             "", "FP8 weights; the best candidate of each layout (any KV format, any TP) with "
             "its GPUs and TCO; `planner size --json` gives the same as `best_per_layout`.", "",
             *table(), ""]
    return "\n".join(parts)


if __name__ == "__main__":
    TARGET.write_text(document())
