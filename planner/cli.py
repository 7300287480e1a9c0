"""The command line: a thin layer that parses options, calls the library and reports errors."""

from __future__ import annotations

import json
import os
import sys
from functools import partial
from pathlib import Path

import click

from planner import __version__
from planner.errors import MissingDependencyError, PlannerError
from planner.inputs.assumptions import overrides_from, parse_overrides
from planner.inputs.catalog import (
    DEFAULT_CLOUDS,
    DEFAULT_GPUS,
    DEFAULT_MODELS,
    DEFAULT_SERVERS,
    DEFAULT_WORKLOADS,
    load_gpus,
    load_models,
)
from planner.inputs.grid import DEFAULT_GRID
from planner.inputs.scenario import Scenario
from planner.inputs.writable import check_output_file, check_output_folder
from planner.model.formats import KV_FORMATS, WEIGHT_FORMATS
from planner.outputs.progress import report
from planner.outputs.terminal import calc_report
from planner.plan.calc import evaluate, to_json

CANNOT_BE_MET = 3  # planner size: some workload has no candidate meeting its targets
CONTEXT_SETTINGS = {"help_option_names": ["-h", "--help"], "max_content_width": 100}

models_option = click.option(
    "--models", "models_path", type=click.Path(path_type=Path), default=DEFAULT_MODELS,
    show_default="shipped catalogs/models.yaml",
    help="Model catalog (YAML), or a folder of Hugging Face model folders or config.json files, "
         "imported on the fly (see `planner import`).")
gpus_option = click.option(
    "--gpus", "gpus_path", type=click.Path(path_type=Path), default=DEFAULT_GPUS,
    show_default="shipped catalogs/gpus.yaml", help="GPU catalog (YAML).")
workloads_option = click.option(
    "--workloads", "workloads_path", type=click.Path(path_type=Path), default=DEFAULT_WORKLOADS,
    show_default="shipped catalogs/workloads.yaml", help="Workload catalog (YAML).")
servers_option = click.option(
    "--servers", "servers_path", type=click.Path(path_type=Path), default=DEFAULT_SERVERS,
    show_default="shipped catalogs/servers.yaml", help="Server catalog (YAML).")
clouds_option = click.option(
    "--clouds", "clouds_path", type=click.Path(path_type=Path), default=DEFAULT_CLOUDS,
    show_default="shipped catalogs/clouds.yaml",
    help="Cloud offers (YAML) the buy-or-rent verdict compares owning with.")
set_option = click.option(
    "--set", "overrides", multiple=True, metavar="NAME=VALUE",
    help="Change an assumption, e.g. gpu_memory_utilization=0.85 or engine=sglang, or one "
         "catalog field as SECTION.ID.FIELD, e.g. gpus.mi300x.price_per_hour_usd=2.40 "
         "(repeatable). `planner list assumptions` shows every name, unit and default; formats' "
         "sizes are bytes_per_param_FORMAT and bytes_per_kv_element_FORMAT.")
assumptions_option = click.option(
    "--assumptions", "assumptions_file", type=click.Path(path_type=Path), default=None,
    metavar="FILE",
    help="YAML file 'assumptions: {NAME: VALUE, ...}': the file form of --set, checked the same "
         "way (planner import-workbook writes one); --set wins over it.")


@click.group(context_settings=CONTEXT_SETTINGS)
@click.version_option(__version__, "--version", prog_name="planner")
def cli() -> None:
    """GPU capacity planning for LLM inference.

    Sizes weights, KV cache, throughput and cost for a model on a GPU from published shapes
    and specs plus named assumptions, and writes a live-formula workbook and an HTML summary.

    \b
    Examples:
      planner calc --model llama-3.1-70b --gpu h200-sxm --tp 8 --context 131072 --batch 16
      planner calc --model deepseek-v3 --gpu b200 --tp 8 --weights fp8 --json
      planner build                      # workbook + HTML for the shipped grid into out/
    """


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
@models_option
@gpus_option
@set_option
@assumptions_option
@click.option("--verbose", "-v", is_flag=True,
              help="Print every quantity and assumption after the verdict.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object in base units.")
def calc(model: str, gpu: str, tp: int, weights: str, kv: str, context: int | None, batch: int,
         prompt: int | None, output: int, models_path: Path, gpus_path: Path,
         overrides: tuple[str, ...], assumptions_file: Path | None, verbose: bool,
         as_json: bool) -> None:
    """Size one configuration: memory, fit, decode speed, serving speed, TTFT and cost.

    \b
    Examples:
      planner calc --model llama-3.1-70b --gpu h200-sxm --tp 8 --context 32768 --batch 32
      planner calc --model qwen3-8b --gpu h100-sxm --batch 64 --prompt 1000 --output 1000
      planner calc --model llama-3.1-8b --gpu l40s --set engine=sglang \\
                   --set gpu_memory_utilization=0.88 --json
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
    env = evaluate(scenario, models, gpus, assumptions)
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
@click.option("--model", help="Ad hoc workload: model id (with --rate, --prompt, --output).")
@click.option("--rate", type=float, help="Ad hoc workload: design-peak requests per second.")
@click.option("--prompt", type=int, help="Ad hoc workload: prompt tokens per request.")
@click.option("--output", type=int, help="Ad hoc workload: output tokens per request.")
@click.option("--ttft", type=float, default=2.0, show_default=True,
              help="Ad hoc workload: time-to-first-token target, seconds.")
@click.option("--itl", type=float, default=0.05, show_default=True,
              help="Ad hoc workload: inter-token latency target, seconds.")
@click.option("--weights", "weights", multiple=True,
              help="Ad hoc workload: allowed weight format (repeatable; default bf16 and fp8).")
@click.option("--gpu", "gpu_ids", multiple=True,
              help="Ad hoc workload: allowed GPU id (repeatable; default: every GPU with a "
                   "server).")
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
@click.option("--model", help="Ad hoc workload: model id (with --rate, --prompt, --output).")
@click.option("--rate", type=float, help="Ad hoc workload: design-peak requests per second.")
@click.option("--prompt", type=int, help="Ad hoc workload: prompt tokens per request.")
@click.option("--output", type=int, help="Ad hoc workload: output tokens per request.")
@click.option("--ttft", type=float, default=2.0, show_default=True,
              help="Ad hoc workload: time-to-first-token target, seconds.")
@click.option("--itl", type=float, default=0.05, show_default=True,
              help="Ad hoc workload: inter-token latency target, seconds.")
@click.option("--weights", "weights", multiple=True,
              help="Ad hoc workload: allowed weight format (repeatable; default bf16 and fp8).")
@click.option("--gpu", "gpu_ids", multiple=True,
              help="Ad hoc workload: allowed GPU id (repeatable; default: every GPU with a "
                   "server).")
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
    quantities. A check on the closed forms: nothing here feeds the workbook.

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
    from planner.plan.simulate import check_run, simulate_replica, simulation_json
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
    assert sized.choice is not None
    progress = None if as_json else partial(report, unit="requests")
    run = simulate_replica(sized.choice, requests, seed, utilisation, progress)
    if as_json:
        click.echo(json.dumps(simulation_json(run), indent=2))
    else:
        click.echo(simulate_report(run))


@cli.command(context_settings=CONTEXT_SETTINGS)
@click.argument("logfile", type=click.Path(path_type=Path))
@click.option("--model", help="Model id when the log's model is not in the catalog.")
@click.option("--gpu", help="GPU id when the log does not name its device.")
@click.option("--tp", type=int, default=None,
              help="Tensor-parallel size, when the log does not print it.  [default: the "
                   "log's, else 1]")
@click.option("--weights", default=None,
              help=f"Weight format ({', '.join(WEIGHT_FORMATS)}), when the log prints no dtype "
                   "or quantization.  [default: the log's, else bf16]")
@click.option("--kv", default=None,
              help=f"KV-cache format ({', '.join(KV_FORMATS)}).  [default: the log's, else "
                   "bf16]")
@click.option("--context", type=int, default=None,
              help="max_model_len, when the log does not print it.  [default: the log's, else "
                   f"{Scenario.context}]")
@click.option("--set", "overrides", multiple=True, metavar="NAME=VALUE",
              help="An assumption the log does not print, e.g. gpu_memory_utilization=0.9 for "
                   "the engine's memory fraction (repeatable).")
@models_option
@gpus_option
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
def calibrate(logfile: Path, model: str | None, gpu: str | None, tp: int | None,
              weights: str | None, kv: str | None, context: int | None,
              overrides: tuple[str, ...], models_path: Path, gpus_path: Path,
              as_json: bool) -> None:
    """Read a serving engine's startup log (vLLM, SGLang, TensorRT-LLM) and print what it
    reserved beside the planner's prediction for the same settings, and the --set values
    that reproduce the engine. Options such as --tp fill in what the log does not print;
    given, they win over the log's own values (a note says where the two differ).

    \b
    Examples:
      planner calibrate vllm-startup.log --gpu h100-sxm
      planner calibrate sglang.log --model qwen3-8b --gpu l40s --json
      planner calibrate sglang.log --model qwen3-235b-a22b --gpu h100-sxm --tp 4 \\
                        --weights fp8 --set gpu_memory_utilization=0.93
    """
    from planner.plan.calibrate import Given, calibration_json, calibration_text
    from planner.plan.calibrate import calibrate as run_calibrate

    given = Given(tp, weights.lower() if weights else None, kv.lower() if kv else None, context,
                  parse_overrides(overrides))
    result = run_calibrate(logfile, load_models(models_path), load_gpus(gpus_path), model, gpu,
                           given)
    for warning in result.warnings:
        click.echo(f"Warning: {warning}", err=True)
    if as_json:
        click.echo(json.dumps(calibration_json(result), indent=2))
        return
    click.echo(calibration_text(result))


@cli.command(name="list", context_settings=CONTEXT_SETTINGS)
@click.argument("what", type=click.Choice(["models", "gpus", "formats", "assumptions"]))
@models_option
@gpus_option
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of a table.")
def list_command(what: str, models_path: Path, gpus_path: Path, as_json: bool) -> None:
    """List the ids the other commands accept.

    \b
    Examples:
      planner list models
      planner list gpus --json
    """
    from planner.outputs.listing import listing, listing_text

    rows = listing(what, models_path, gpus_path)
    click.echo(json.dumps(rows, indent=2) if as_json else listing_text(rows))


@cli.command(name="diff", context_settings=CONTEXT_SETTINGS)
@click.argument("workbook", type=click.Path(path_type=Path))
@click.option("--against", type=click.Path(path_type=Path, file_okay=False), default=None,
              metavar="DIR",
              help="Folder holding the catalogs (models.yaml, gpus.yaml, grid.yaml, servers.yaml, "
                   "workloads.yaml, assumptions.yaml) to compare with; those it lacks are the "
                   "ones the workbook was built from.  [default: the catalogs and --set values "
                   "its About sheet records, found by name and sha256 in catalogs/, the "
                   "workbook's folder and the current folder]")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
def diff(workbook: Path, against: Path | None, as_json: bool) -> None:
    """Report what an edited workbook changed: each input that differs from the catalogs and
    assumptions it was built from (sheet, cell, name, old -> new), and each formula cell whose
    formula was overwritten by a value, deleted or altered.

    The workbook is rebuilt from what it was built from and compared cell by cell; formulas are
    compared as a spreadsheet saves them, and sorted Grid or Fleet rows are matched by their
    configuration.

    Exit status: 0 when nothing changed, 1 when something did, 2 when the workbook could not
    be compared (not written by the planner, catalogs not found).

    \b
    Examples:
      planner diff out/capacity-plan.xlsx
      planner diff edited.xlsx --against catalogs/ --json
    """
    from planner.roundtrip.diff import diff_json, diff_text, diff_workbook

    try:
        result = diff_workbook(workbook, against, None if as_json else report)
    except PlannerError as exc:
        click.echo(f"Error: {exc}", err=True)
        sys.exit(2)
    click.echo(json.dumps(diff_json(result), indent=2) if as_json else diff_text(result))
    if result.changed:
        sys.exit(1)


@cli.command(name="import-workbook", context_settings=CONTEXT_SETTINGS)
@click.argument("workbook", type=click.Path(path_type=Path))
@click.option("--to", "to_dir", type=click.Path(path_type=Path, file_okay=False), default=None,
              metavar="DIR",
              help="Folder to write assumptions.yaml and the catalogs into (created; files "
                   "of the same names are replaced).  [default: imported/ beside the workbook]")
@click.option("--accept-overwritten", "accepted", multiple=True, metavar="CELL,...",
              help="Cells whose edits may be dropped, e.g. Grid!M5,'View data'!B2: formulas "
                   "overwritten or altered (the rebuild restores them) and edited inputs that "
                   "no YAML file holds (grid rows, the engine table). Repeatable.")
@click.option("--json", "as_json", is_flag=True, help="Print what was written as JSON.")
def import_workbook(workbook: Path, to_dir: Path | None, accepted: tuple[str, ...],
                    as_json: bool) -> None:
    """Write the inputs of an edited workbook back as YAML: assumption changes into
    DIR/assumptions.yaml, catalog fields into copies of the catalogs it was built from
    (models.yaml, gpus.yaml, servers.yaml, workloads.yaml, grid.yaml for the capacity view),
    each value edited in place so that comments and order stay. `planner build` with those
    files reproduces every number of the edited workbook; the command is printed.

    Refused, with the sheet, cell and name: a workbook the planner did not write, formulas
    overwritten or altered (unless --accept-overwritten lists them), and values of the wrong
    type or out of range (checked as the YAML and --set are).

    \b
    Examples:
      planner import-workbook edited.xlsx --to plans/q3/
      planner build --assumptions plans/q3/assumptions.yaml --models plans/q3/models.yaml \\
                    --gpus plans/q3/gpus.yaml --servers plans/q3/servers.yaml \\
                    --workloads plans/q3/workloads.yaml --grid plans/q3/grid.yaml
      planner import-workbook edited.xlsx --accept-overwritten Grid!M5,Budget!C5
    """
    from planner.roundtrip.importing import import_json, import_text
    from planner.roundtrip.importing import import_workbook as run_import

    cells = [c.strip() for item in accepted for c in item.split(",") if c.strip()]
    if to_dir is not None:
        check_output_folder(str(to_dir), "--to")
    result = run_import(workbook, to_dir, cells, None if as_json else report)
    click.echo(json.dumps(import_json(result), indent=2) if as_json else import_text(result))


@cli.command(name="import", context_settings=CONTEXT_SETTINGS)
@click.argument("paths", nargs=-1, required=True, type=click.Path(path_type=Path),
                metavar="PATH...")
@click.option("--id", "entry_id", metavar="ID",
              help="Catalog id of the entry (one PATH only).  [default: the model folder's name, "
                   "lower-cased]")
@click.option("--to", "to_file", type=click.Path(path_type=Path, dir_okay=False), metavar="FILE",
              help="Append the entries to this models YAML (created when missing) instead of "
                   "printing them; an id the file already has is refused.")
@click.option("--json", "as_json", is_flag=True,
              help="Print the entries, and the config fields not used, as JSON.")
def import_command(paths: tuple[Path, ...], entry_id: str | None, to_file: Path | None,
                   as_json: bool) -> None:
    """Turn a Hugging Face model into a model catalog entry, offline.

    PATH is a config.json, a model folder holding one (and optionally
    model.safetensors.index.json, safetensors shards, generation_config.json and the README.md
    model card), or a folder of such model folders. The entry has the fields the planner sizes
    with, read from the text model (text_config, llm_config) and the layer pattern however the
    config states it; the stored weight format from quantization_config; the exact
    checkpoint_bytes from the index; parameter counts (from the shards' tensor shapes, the index,
    or the shape, as notes say); and a source naming the file and its SHA-256. It reports on
    stderr what it read and every config field it did not use.

    \b
    Examples:
      planner import ~/models/Llama-3.1-8B-Instruct
      planner import config.json --id my-finetune-8b --to catalogs/models.yaml
      planner calc --models ~/models --model llama-3.1-8b-instruct --gpu h100-sxm
    """
    from planner.errors import ArgumentError
    from planner.inputs.hfimport.reading import import_paths
    from planner.inputs.hfimport.writing import append_to_catalog, entries_json, entries_yaml
    from planner.outputs.terminal import import_report

    if entry_id is not None and len(paths) > 1:
        raise ArgumentError(f"--id {entry_id}: names one entry, but {len(paths)} PATHs were given")
    if to_file is not None:
        check_output_file(to_file)
    items = import_paths(paths, entry_id)
    if entry_id is not None and len(items) > 1:
        raise ArgumentError(f"--id {entry_id}: names one entry, but {paths[0]} holds "
                            f"{len(items)} models")
    for item in items:
        click.echo(import_report(item), err=True)
    if to_file is not None:
        append_to_catalog(to_file, items)
        click.echo(f"appended {', '.join(i.id for i in items)} to {to_file}", err=True)
    if as_json:
        click.echo(json.dumps(entries_json(items, to_file), indent=2))
    elif to_file is None:
        click.echo(entries_yaml(items), nl=False)


def main() -> None:
    try:
        cli.main(standalone_mode=False, prog_name="planner")
    except click.exceptions.Abort as exc:  # click's word for Ctrl-C (and SIGTERM mid-write)
        if isinstance(exc.__cause__, KeyboardInterrupt):
            click.echo("Interrupted.", err=True)
            sys.exit(128 + int(getattr(exc.__cause__, "signal_number", 2)))
        click.echo("Aborted.", err=True)
        sys.exit(1)
    except click.ClickException as exc:
        exc.show()
        sys.exit(exc.exit_code)
    except PlannerError as exc:
        click.echo(f"Error: {exc}", err=True)
        sys.exit(1)
    except KeyboardInterrupt:
        click.echo("Interrupted.", err=True)
        sys.exit(130)
    except Exception as exc:  # a bug of ours: say so plainly instead of a traceback
        missing = (MissingDependencyError.from_import_error(exc)
                   if isinstance(exc, ImportError) else None)
        if missing is not None:  # openpyxl, Jinja2, ... imported where a command needs them
            click.echo(f"Error: {missing}", err=True)
            sys.exit(1)
        if os.environ.get("PLANNER_DEBUG"):
            raise
        click.echo(f"Internal error: {type(exc).__name__}: {exc}\n"
                   "This is a bug in the planner; set PLANNER_DEBUG=1 to see the traceback.",
                   err=True)
        sys.exit(70)
