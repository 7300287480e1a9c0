"""The `planner` command group: its help, examples and version."""

from __future__ import annotations

import click

from planner import __version__
from planner.cli.options import CONTEXT_SETTINGS


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
