"""The README tells the truth: its set-up commands, commands and assumptions match the code."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from planner.cli import cli
from planner.inputs.assumptions import ASSUMPTIONS

ROOT = Path(__file__).parent.parent
README = (ROOT / "README.md").read_text()


def shell_blocks() -> list[str]:
    return re.findall(r"^```(?:sh|bash)\n(.*?)^```", README, flags=re.S | re.M)


def test_readme_opens_with_the_two_set_up_commands() -> None:
    first, second = shell_blocks()[:2]
    assert README.index("```sh") < README.index("## ")
    assert first.strip() == "pip install -e . && planner build"
    assert second.strip() == "pip install -e '.[test]' && python -m pytest -q"


def test_ci_runs_the_readme_test_command() -> None:
    """.ci/run's own extraction, run on the README, yields exactly the second shell block, and
    the script runs what it extracted."""
    ci = (ROOT / ".ci" / "run").read_text()
    extraction = re.search(r"^test_command=\$\((awk .*)\)$", ci, flags=re.M)
    assert extraction, "no test_command=$(awk ...) line in .ci/run"
    result = subprocess.run(["bash", "-c", extraction.group(1)], cwd=ROOT, capture_output=True,
                            text=True, check=True)
    assert result.stdout.strip() == shell_blocks()[1].strip()
    assert result.stdout.strip() == "pip install -e '.[test]' && python -m pytest -q"
    assert re.search(r'^bash -euo pipefail -c "\$\{test_command\}"$', ci, flags=re.M)
    assert re.search(r"^export CI=true\b", ci, flags=re.M)


@pytest.mark.parametrize("command,package", [("soffice", "libreoffice-calc-nogui"),
                                             ("chromium", "chromium"), ("ssconvert", "gnumeric")])
def test_ci_installs_every_engine_the_tests_require(command: str, package: str) -> None:
    ci = (ROOT / ".ci" / "run").read_text()
    assert f"command -v {command} >/dev/null 2>&1 || need+=({package})" in ci


def test_every_command_is_documented() -> None:
    for command in cli.commands:
        assert f"planner {command}" in README, command


def test_every_assumption_and_its_default_is_documented() -> None:
    for a in ASSUMPTIONS.values():
        row = re.search(rf"^\| `{a.name}` \| ([^|]+) \|", README, flags=re.M)
        assert row, a.name
        assert row.group(1).strip() == str(a.default), a.name


def test_assumption_evidence_states_the_current_defaults() -> None:
    """docs/assumption-evidence.md says, for every assumption it gives evidence for, what the
    planner uses now: "`name` = `default`" in the text and the summary's current-default column."""
    text = (ROOT / "docs" / "assumption-evidence.md").read_text()
    stated = re.findall(r"`([a-z0-9_]+)` = `([^`]+)`", text)
    table = re.findall(r"^\| `([a-z0-9_]+)`[^|]* \| `([^`]+)` \|", text, flags=re.M)
    unknown = {name for name, _ in stated + table} - set(ASSUMPTIONS)
    assert not unknown, f"not assumptions: {unknown}"
    wrong = [f"{name}: doc says {value}, planner/inputs/assumptions.py {ASSUMPTIONS[name].default}"
             for name, value in stated + table if value != str(ASSUMPTIONS[name].default)]
    assert wrong == []
    headed = set(re.findall(r"^## \d+\. `([a-z0-9_]+)`", text, flags=re.M))
    cited = {a.name for a in ASSUMPTIONS.values() if "docs/assumption-evidence.md" in a.source}
    assert headed and cited
    assert headed | cited <= {name for name, _ in stated}, "a section without its default"
    assert headed | cited <= {name for name, _ in table}, "missing from the summary table"


def test_cli_reference_is_generated_from_help() -> None:
    import importlib.util

    path = Path(__file__).parent.parent / "docs" / "generate_cli_reference.py"
    spec = importlib.util.spec_from_file_location("generate_cli_reference", path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert module.TARGET.read_text() == module.reference(), \
        "run python docs/generate_cli_reference.py"
