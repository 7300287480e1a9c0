"""The command line: a thin layer that parses options, calls the library and reports errors."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import click

from planner import __version__
from planner.assumptions import parse_overrides
from planner.calc import Scenario, evaluate, to_json
from planner.catalog import DEFAULT_GPUS, DEFAULT_MODELS, load_gpus, load_models
from planner.display import calc_report
from planner.errors import PlannerError
from planner.formats import KV_FORMATS, WEIGHT_FORMATS
from planner.grid import DEFAULT_GRID

CONTEXT_SETTINGS = {"help_option_names": ["-h", "--help"], "max_content_width": 100}

models_option = click.option(
    "--models", "models_path", type=click.Path(path_type=Path), default=DEFAULT_MODELS,
    show_default="shipped catalogs/models.yaml", help="Model catalog (YAML).")
gpus_option = click.option(
    "--gpus", "gpus_path", type=click.Path(path_type=Path), default=DEFAULT_GPUS,
    show_default="shipped catalogs/gpus.yaml", help="GPU catalog (YAML).")
set_option = click.option(
    "--set", "overrides", multiple=True, metavar="NAME=VALUE",
    help="Change an assumption, e.g. gpu_memory_utilization=0.85 (repeatable). "
         "Names: gpu_memory_utilization, overhead_gib_per_gpu, bandwidth_efficiency, "
         "compute_efficiency, memory_basis, state_bytes_per_element, "
         "bytes_per_param_FORMAT, bytes_per_kv_element_FORMAT.")


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
@click.option("--context", default=Scenario.context, show_default=True, type=int,
              help="Context tokens per sequence.")
@click.option("--batch", default=Scenario.batch, show_default=True, type=int,
              help="Concurrent sequences.")
@click.option("--prompt", default=Scenario.prompt, show_default=True, type=int,
              help="Prompt tokens (for time to first token).")
@models_option
@gpus_option
@set_option
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object in base units.")
def calc(model: str, gpu: str, tp: int, weights: str, kv: str, context: int, batch: int,
         prompt: int, models_path: Path, gpus_path: Path, overrides: tuple[str, ...],
         as_json: bool) -> None:
    """Size one configuration: memory, fit, decode speed, TTFT and cost.

    \b
    Example:
      planner calc --model llama-3.1-70b --gpu h200-sxm --tp 8 --context 32768 --batch 32
    """
    assumptions = parse_overrides(overrides)
    scenario = Scenario(model, gpu, weights.lower(), kv.lower(), tp, context, batch, prompt)
    env = evaluate(scenario, load_models(models_path), load_gpus(gpus_path), assumptions)
    if as_json:
        click.echo(json.dumps(to_json(env), indent=2))
        return
    click.echo(calc_report(env))


@cli.command(context_settings=CONTEXT_SETTINGS)
@models_option
@gpus_option
@click.option("--grid", "grid_path", type=click.Path(path_type=Path), default=DEFAULT_GRID,
              show_default="shipped catalogs/grid.yaml",
              help="Grid of configurations to expand (YAML).")
@click.option("--out", "out_dir", type=click.Path(path_type=Path, file_okay=False),
              default=Path("out"), show_default=True, help="Output folder.")
@set_option
@click.option("--json", "as_json", is_flag=True,
              help="Print a JSON summary of what was written instead of text.")
@click.option("--quiet", "-q", is_flag=True, help="No progress messages.")
def build(models_path: Path, gpus_path: Path, grid_path: Path, out_dir: Path,
          overrides: tuple[str, ...], as_json: bool, quiet: bool) -> None:
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

    progress = None if quiet or as_json else _progress
    result = run_build(models_path, gpus_path, grid_path, out_dir, parse_overrides(overrides),
                       progress)
    if as_json:
        click.echo(json.dumps(result, indent=2))
        return
    if not quiet:
        click.echo(f"Wrote {result['rows']:,} configurations "
                   f"({result['formula_cells']:,} formula cells) in {result['seconds']:.1f} s:")
        for path in result["files"]:  # type: ignore[attr-defined]
            click.echo(f"  {path}")


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
    from planner.listing import listing

    rows = listing(what, models_path, gpus_path)
    if as_json:
        click.echo(json.dumps(rows, indent=2))
        return
    keys = list(rows[0])
    widths = {k: max(len(k), *(len(str(r[k])) for r in rows)) for k in keys}
    click.echo("  ".join(k.ljust(widths[k]) for k in keys).rstrip())
    for r in rows:
        click.echo("  ".join(str(r[k]).ljust(widths[k]) for k in keys).rstrip())


_last_report: dict[str, float] = {}


def _progress(stage: str, done: int, total: int) -> None:
    """Progress on stderr, at most a line a second, so long builds show they are alive."""
    import time

    now = time.monotonic()
    if done and now - _last_report.get(stage, 0) < 1.0:
        return
    _last_report[stage] = now
    share = f" {done:,}/{total:,} ({100 * done / total:.0f}%)" if total > 1 else ""
    click.echo(f"  {stage}{share}", err=True)


def main() -> None:
    try:
        cli.main(standalone_mode=False, prog_name="planner")
    except click.exceptions.Abort:
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
        if os.environ.get("PLANNER_DEBUG"):
            raise
        click.echo(f"Internal error: {type(exc).__name__}: {exc}\n"
                   "This is a bug in the planner; set PLANNER_DEBUG=1 to see the traceback.",
                   err=True)
        sys.exit(70)
