"""Write docs/cli.md from the commands' own --help, so the reference cannot drift from the
code (tests/test_docs.py fails when they differ). Run: python docs/generate_cli_reference.py"""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from planner.cli import cli

TARGET = Path(__file__).parent / "cli.md"


def reference() -> str:
    runner = CliRunner()
    parts = ["# Command-line reference", "",
             "Generated from `--help` by `docs/generate_cli_reference.py`; do not edit by hand.",
             ""]
    for args in ([], *([name] for name in sorted(cli.commands))):
        title = " ".join(["planner", *args])
        result = runner.invoke(cli, [*args, "--help"], prog_name="planner", terminal_width=100)
        parts += [f"## `{title}`", "", "```text", result.output.rstrip(), "```", ""]
    return "\n".join(parts)


if __name__ == "__main__":
    TARGET.write_text(reference())
