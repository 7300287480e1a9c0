"""The command line: a thin layer that parses options, calls the library and reports errors.
Each command module registers its commands on the group; `main` maps errors to exit codes."""

from __future__ import annotations

import os
import sys

import click

from planner.cli import evidence_commands, plan_commands, roundtrip_commands
from planner.cli.group import cli
from planner.errors import MissingDependencyError, PlannerError

COMMAND_MODULES = (plan_commands, evidence_commands, roundtrip_commands)  # each registers on cli
__all__ = ["cli", "main"]


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
