"""Commands that read files back: diff and import-workbook (an edited workbook) and import
(Hugging Face configs into a models catalog)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from planner.cli.group import cli
from planner.cli.options import (
    CONTEXT_SETTINGS,
)
from planner.errors import PlannerError
from planner.inputs.writable import check_output_file, check_output_folder
from planner.outputs.progress import report


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
