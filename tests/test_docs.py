"""The README tells the truth: its set-up commands, commands and assumptions match the code."""

from __future__ import annotations

import re
from pathlib import Path

from planner.assumptions import ASSUMPTIONS
from planner.cli import cli

README = (Path(__file__).parent.parent / "README.md").read_text()


def shell_blocks() -> list[str]:
    return re.findall(r"^```(?:sh|bash)\n(.*?)^```", README, flags=re.S | re.M)


def test_readme_opens_with_the_two_set_up_commands() -> None:
    first, second = shell_blocks()[:2]
    assert README.index("```sh") < README.index("## ")
    assert first.strip() == "pip install -e . && planner build"
    assert second.strip() == "pip install -e '.[test]' && python -m pytest -q"


def test_ci_runs_the_readme_test_command() -> None:
    ci = (Path(__file__).parent.parent / ".ci" / "run").read_text()
    assert "n==2" in ci  # the second shell block


def test_every_command_is_documented() -> None:
    for command in cli.commands:
        assert f"planner {command}" in README, command


def test_every_assumption_and_its_default_is_documented() -> None:
    for a in ASSUMPTIONS.values():
        row = re.search(rf"^\| `{a.name}` \| ([^|]+) \|", README, flags=re.M)
        assert row, a.name
        assert row.group(1).strip() == str(a.default), a.name


def test_cli_reference_is_generated_from_help() -> None:
    import importlib.util

    path = Path(__file__).parent.parent / "docs" / "generate_cli_reference.py"
    spec = importlib.util.spec_from_file_location("generate_cli_reference", path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert module.TARGET.read_text() == module.reference(), \
        "run python docs/generate_cli_reference.py"
