"""Commands that compute a plan: calc (one configuration), build (workbook and HTML), size (a
fleet per workload) and simulate (one replica, event by event)."""

from __future__ import annotations

import json
from functools import partial
from pathlib import Path

import click

from planner.cli.group import cli
from planner.cli.options import (
    CANNOT_BE_MET,
    CONTEXT_SETTINGS,
    adhoc_workload_options,
    assumptions_option,
    clouds_option,
    gpus_option,
    models_option,
    servers_option,
    set_option,
    workloads_option,
)
from planner.inputs.catalog import (
    DEFAULT_CLOUDS,
    load_gpus,
    load_models,
)
from planner.inputs.grid import DEFAULT_GRID
from planner.inputs.scenario import Scenario
from planner.inputs.settings import overrides_from
from planner.inputs.writable import check_output_folder
from planner.model.formats import KV_FORMATS, WEIGHT_FORMATS
from planner.model.layouts import CALC_LAYOUTS
from planner.outputs.progress import report
from planner.outputs.terminal import calc_report
from planner.plan.calc import evaluate, to_json


@cli.command(context_settings=CONTEXT_SETTINGS)
@click.option("--model", required=True, help="Model id from the model catalog, e.g. llama-3.1-8b.")
@click.option("--gpu", required=True, help="GPU id from the GPU catalog, e.g. h100-sxm.")
@click.option("--tp", default=Scenario.tp, show_default=True, type=int,
              help="Tensor-parallel degree.")
@click.option("--weights", default=Scenario.weights, show_default=True,
              help=f"Weight format: {', '.join(WEIGHT_FORMATS)}.")
@click.option("--kv", default=Scenario.kv, show_default=True,
              help=f"KV-cache format: {', '.join(KV_FORMATS)}.")
@click.option("--context", type=int, default=None,
              help="Context tokens per sequence (what must fit).  [default: prompt + output "
                   f"with --output, else {Scenario.context}]")
@click.option("--batch", default=Scenario.batch, show_default=True, type=int,
              help="Concurrent sequences.")
@click.option("--prompt", default=None, type=int,
              help=f"Prompt tokens (for time to first token).  [default: {Scenario.prompt}]")
@click.option("--output", default=Scenario.output, show_default=True, type=int,
              help="Output tokens per request: decode speed is taken at the mean context "
                   "prompt + output/2 and the engine's interleaved prefill is counted "
                   "(0: not given).")
@click.option("--layout", default="tp", show_default=True,
              type=click.Choice(CALC_LAYOUTS),
              help="Serving layout of the TP group: tp+ep shards the routed experts whole, "
                   "dp-attention gives each GPU its own sequences (docs/layouts.md).")
@models_option
@gpus_option
@set_option
@assumptions_option
@click.option("--verbose", "-v", is_flag=True,
              help="Print every quantity and assumption after the verdict.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object in base units.")
def calc(model: str, gpu: str, tp: int, weights: str, kv: str, context: int | None, batch: int,
         prompt: int | None, output: int, layout: str, models_path: Path, gpus_path: Path,
         overrides: tuple[str, ...], assumptions_file: Path | None, verbose: bool,
         as_json: bool) -> None:
    """Size one configuration: memory, fit, decode speed, serving speed, TTFT and cost.

    \b
    Examples:
      planner calc --model llama-3.1-70b --gpu h200-sxm --tp 8 --context 32768 --batch 32
      planner calc --model qwen3-8b --gpu h100-sxm --batch 64 --prompt 1000 --output 1000
      planner calc --model llama-3.1-8b --gpu l40s --set engine=sglang \\
                   --set gpu_memory_utilization=0.88 --json
      planner calc --model qwen3-235b-a22b --gpu h200-sxm --tp 8 --weights fp8 \\
                   --batch 512 --prompt 1000 --output 1000 --layout dp-attention
    """
    from planner.inputs.overrides import apply
    from planner.inputs.scenario import check_request_within_context

    assumptions = overrides_from(assumptions_file, overrides)
    prompt_given, prompt = prompt is not None, Scenario.prompt if prompt is None else prompt
    if context is None:
        context = prompt + output if output > 0 else Scenario.context
    scenario = Scenario(model, gpu, weights.lower(), kv.lower(), tp, context, batch, prompt,
                        output)
    check_request_within_context(scenario, prompt_given)

    models = apply(load_models(models_path), "models", assumptions)
    gpus = apply(load_gpus(gpus_path), "gpus", assumptions)
    env = evaluate(scenario, models, gpus, assumptions, layout)
    if as_json:
        click.echo(json.dumps(to_json(env), indent=2))
        return
    click.echo(calc_report(env, verbose))


@cli.command(context_settings=CONTEXT_SETTINGS)
@models_option
@gpus_option
@click.option("--grid", "grid_path", type=click.Path(path_type=Path), default=DEFAULT_GRID,
              show_default="shipped catalogs/grid.yaml",
              help="Grid of configurations to expand (YAML).")
@workloads_option
@servers_option
@clouds_option
@click.option("--out", "out_dir", default="out", show_default=True,
              help="Output folder (created; checked for writing before the build starts).")
@set_option
@assumptions_option
@click.option("--json", "as_json", is_flag=True,
              help="Print a JSON summary of what was written instead of text.")
@click.option("--quiet", "-q", is_flag=True, help="No progress messages.")
def build(models_path: Path, gpus_path: Path, grid_path: Path, workloads_path: Path,
          servers_path: Path, clouds_path: Path, out_dir: str, overrides: tuple[str, ...],
          assumptions_file: Path | None, as_json: bool, quiet: bool) -> None:
    """Write the capacity-plan workbook (every derived cell a live formula) and HTML summary.

    Files are written to temporary names and renamed at the end: a failed build leaves the
    output folder as it was.

    \b
    Examples:
      planner build
      planner build --set gpu_memory_utilization=0.85 --out plans/
      planner build --grid my-grid.yaml --models my-models.yaml
    """
    from planner.build import run_build

    out = check_output_folder(out_dir)
    progress = None if quiet or as_json else report  # a bar on stderr for builds over 3 s
    result = run_build(models_path, gpus_path, grid_path, out,
                       overrides_from(assumptions_file, overrides), progress, workloads_path,
                       servers_path, clouds_path)
    if as_json:
        click.echo(json.dumps(result, indent=2))
        return
    from planner.outputs.terminal import build_notes

    for note in build_notes(result, own_grid=grid_path != DEFAULT_GRID):
        click.echo(note, err=True)
    if not quiet:
        click.echo(f"Wrote {result['rows']:,} configurations and {result['workloads']} sized "
                   f"workloads ({result['formula_cells']:,} formula cells) in "
                   f"{result['seconds']:.1f} s:")
        for path in result["files"]:  # type: ignore[attr-defined]
            click.echo(f"  {path}")


@cli.command(context_settings=CONTEXT_SETTINGS)
@workloads_option
@click.option("--workload", "names", multiple=True, metavar="NAME",
              help="Size only this workload (repeatable; default: all).")
@servers_option
@clouds_option
@models_option
@gpus_option
@adhoc_workload_options
@click.option("--spares", type=int, default=0, show_default=True,
              help="Ad hoc workload: spare replicas.")
@set_option
@assumptions_option
@click.option("--horizon", type=click.IntRange(1, 40), metavar="N", help="Also print the "
              "purchase schedule by quarter over N quarters (horizon_quarters; --json has it).")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object in base units.")
def size(workloads_path: Path, names: tuple[str, ...], servers_path: Path, clouds_path: Path,
         models_path: Path,
         gpus_path: Path, model: str | None, rate: float | None, prompt: int | None,
         output: int | None, ttft: float, itl: float, weights: tuple[str, ...],
         gpu_ids: tuple[str, ...], spares: int, overrides: tuple[str, ...],
         assumptions_file: Path | None, horizon: int | None, as_json: bool) -> None:
    """Size a fleet and a budget for each workload: GPUs, servers, racks, power, capex, opex,
    TCO and $ per million tokens, choosing the lowest-TCO configuration meeting every target.

    Targets hold at each workload's latency_percentile (default p95), with the speed model's
    measured error as a margin (--set speed_basis=model to drop it). A workload no candidate
    can meet is named with the binding number, nothing is bought for it, it is left out of the
    totals, and the exit status is 3 (0 when every workload is met).

    \b
    Examples:
      planner size                                   # every shipped workload
      planner size --workload chat-assistant-70b --json
      planner size --model llama-3.1-8b --rate 10 --prompt 2000 --output 300 \\
                   --ttft 1 --itl 0.05 --gpu h100-sxm --gpu l40s
      planner size --set electricity_usd_per_kwh=0.15 --set pue=1.4
      planner size --horizon 8 --set workloads.chat-assistant-70b.growth=0.08
    """
    from planner.inputs.catalog import load_clouds, load_servers, load_workloads
    from planner.inputs.overrides import apply
    from planner.inputs.workloads import adhoc_workloads
    from planner.outputs.schedule_text import schedule_report
    from planner.outputs.terminal import size_report
    from planner.plan.schedule import add_schedules, plan_schedules
    from planner.plan.sizing import size_all, size_json

    assumptions = overrides_from(assumptions_file, overrides)
    if horizon is not None:
        assumptions["horizon_quarters"] = float(horizon)
    models = apply(load_models(models_path), "models", assumptions)
    gpus = apply(load_gpus(gpus_path), "gpus", assumptions)
    servers = apply(load_servers(servers_path, gpus), "servers", assumptions)
    if model is not None or rate is not None:
        workloads = adhoc_workloads(model, rate, prompt, output, ttft, itl, weights, gpu_ids,
                                    spares, models, gpus)
    else:
        workloads = apply(load_workloads(workloads_path, models, gpus), "workloads",
                          assumptions)
    clouds = apply(load_clouds(clouds_path, gpus, strict=clouds_path != DEFAULT_CLOUDS), "clouds",
                   assumptions)
    results = size_all(workloads, models, gpus, servers, assumptions, names, clouds)
    if as_json:
        click.echo(json.dumps(add_schedules(size_json(results), results), indent=2))
    else:
        click.echo(size_report(results))
        if horizon is not None:
            click.echo("\n" + schedule_report(plan_schedules(results)))
    if not all(r.met for r in results):
        raise SystemExit(CANNOT_BE_MET)


@cli.command(context_settings=CONTEXT_SETTINGS)
@click.option("--workload", "name", metavar="NAME",
              help="Workload from the workload catalog; its replica is the plan `planner size` "
                   "chooses for it.")
@workloads_option
@servers_option
@models_option
@gpus_option
@adhoc_workload_options
@click.option("--requests", type=int, default=10_000, show_default=True,
              help="Requests to simulate; the first 10% are left out as warm-up.")
@click.option("--seed", type=int, default=0, show_default=True,
              help="Seed of the arrival stream: the same seed gives the same numbers.")
@click.option("--utilisation", type=float, default=None, metavar="U",
              help="Load the replica at U × its capacity (requests per replica), e.g. 0.5.  "
                   "[default: its share of the workload's peak rate]")
@set_option
@assumptions_option
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object in base units.")
def simulate(name: str | None, workloads_path: Path, servers_path: Path, models_path: Path,
             gpus_path: Path, model: str | None, rate: float | None, prompt: int | None,
             output: int | None, ttft: float, itl: float, weights: tuple[str, ...],
             gpu_ids: tuple[str, ...], requests: int, seed: int, utilisation: float | None,
             overrides: tuple[str, ...], assumptions_file: Path | None, as_json: bool) -> None:
    """Simulate one serving replica of a workload's chosen plan, request by request, and print
    its time to first token and inter-token latency (p50, p95, p99, mean) and output tokens
    per second beside the closed forms `planner size` sizes with, at the same load.

    Poisson arrivals (seeded) with the workload's prompt and output lengths; continuous
    batching up to the plan's batch per replica; prompts processed in prefill steps of the
    engine's token budget, mixed into decode steps (vLLM, TensorRT-LLM) or as passes of their
    own that stall decoding (SGLang, --set engine=sglang). Step times come from the plan's own
    quantities. A disaggregated plan runs one replica of each pool: a prefill replica serving
    prompts first come first served (TTFT = its wait + prefill + KV transfer) and a decode
    replica whose steps carry no prompt (ITL). A check on the closed forms: nothing here
    feeds the workbook.

    \b
    Examples:
      planner simulate --workload chat-assistant-70b
      planner simulate --workload rag-8b-long-context --utilisation 0.8 --json
      planner simulate --model llama-3.1-8b --rate 10 --prompt 2000 --output 300 \\
                       --ttft 1 --itl 0.05 --gpu h100-sxm --set engine=sglang
      planner simulate --workload code-completion-7b --requests 50000 --seed 7
    """
    from planner.errors import ArgumentError
    from planner.inputs.catalog import load_servers, load_workloads
    from planner.inputs.overrides import apply
    from planner.inputs.workloads import adhoc_workloads
    from planner.outputs.terminal import simulate_report
    from planner.plan.simulate import check_run, simulation_json
    from planner.plan.simulate_pair import simulate_row
    from planner.plan.sizing import size_all

    check_run(requests, utilisation)
    assumptions = overrides_from(assumptions_file, overrides)
    models = apply(load_models(models_path), "models", assumptions)
    gpus = apply(load_gpus(gpus_path), "gpus", assumptions)
    servers = apply(load_servers(servers_path, gpus), "servers", assumptions)
    if model is not None or rate is not None:
        if name is not None:
            raise ArgumentError(f"--workload {name}: give either a catalog workload or an ad "
                                "hoc one (--model, --rate, --prompt, --output), not both")
        workloads = adhoc_workloads(model, rate, prompt, output, ttft, itl, weights, gpu_ids,
                                    0, models, gpus)
        names: tuple[str, ...] = ()
    else:
        workloads = apply(load_workloads(workloads_path, models, gpus), "workloads",
                          assumptions)
        if name is None:
            raise ArgumentError("say which workload: --workload NAME (known: "
                                f"{', '.join(workloads.entries)}), or an ad hoc one with "
                                "--model, --rate, --prompt and --output")
        names = (name,)
    sized = size_all(workloads, models, gpus, servers, assumptions, names)[0]
    if not sized.met:
        click.echo(f"Note: no candidate meets {sized.workload.id}'s targets ({sized.cannot_meet});"
                   " simulating the closest.", err=True)
    env = sized.choice
    assert env is not None
    progress = None if as_json else partial(report, unit="requests")
    run = simulate_row(env, requests, seed, utilisation, progress)
    if as_json:
        click.echo(json.dumps(simulation_json(run), indent=2))
    else:
        click.echo(simulate_report(run))
