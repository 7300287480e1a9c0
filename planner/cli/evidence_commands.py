"""Commands that read evidence and catalogs: calibrate (an engine log beside the planner) and
list."""

from __future__ import annotations

import json
from pathlib import Path

import click

from planner.cli.group import cli
from planner.cli.options import (
    CONTEXT_SETTINGS,
    gpus_option,
    models_option,
)
from planner.inputs.catalog import (
    load_gpus,
    load_models,
)
from planner.inputs.scenario import Scenario
from planner.inputs.settings import parse_overrides
from planner.model.formats import KV_FORMATS, WEIGHT_FORMATS


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
