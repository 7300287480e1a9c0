"""What several commands share: the catalog options, --set and --assumptions, the exit code of
a plan that misses."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import click

from planner.inputs.catalog import (
    DEFAULT_CLOUDS,
    DEFAULT_GPUS,
    DEFAULT_MODELS,
    DEFAULT_SERVERS,
    DEFAULT_WORKLOADS,
)

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


def adhoc_workload_options(command: Callable[..., None]) -> Callable[..., None]:
    """The options of a workload given on the command line (`size` and `simulate`): model,
    rate, prompt and output tokens, targets, allowed formats and GPUs."""
    options = [
        click.option("--model",
                     help="Ad hoc workload: model id (with --rate, --prompt, --output)."),
        click.option("--rate", type=float,
                     help="Ad hoc workload: design-peak requests per second."),
        click.option("--prompt", type=int, help="Ad hoc workload: prompt tokens per request."),
        click.option("--output", type=int, help="Ad hoc workload: output tokens per request."),
        click.option("--ttft", type=float, default=2.0, show_default=True,
                     help="Ad hoc workload: time-to-first-token target, seconds."),
        click.option("--itl", type=float, default=0.05, show_default=True,
                     help="Ad hoc workload: inter-token latency target, seconds."),
        click.option("--weights", "weights", multiple=True,
                     help="Ad hoc workload: allowed weight format (repeatable; default bf16 and "
                          "fp8)."),
        click.option("--gpu", "gpu_ids", multiple=True,
                     help="Ad hoc workload: allowed GPU id (repeatable; default: every GPU with "
                          "a server)."),
    ]
    for option in reversed(options):  # decorators apply bottom-up: keep the listed order
        command = option(command)
    return command
