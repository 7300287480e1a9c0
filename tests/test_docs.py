"""The README tells the truth: its set-up commands, commands and assumptions match the code."""

from __future__ import annotations

import re
import subprocess
import sys
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


def _refresh_module():  # type: ignore[no-untyped-def]
    import importlib.util

    path = ROOT / "docs" / "refresh_examples.py"
    spec = importlib.util.spec_from_file_location("refresh_examples", path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules["refresh_examples"] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


EXAMPLES = _refresh_module()
SHOWN = [e for e in EXAMPLES.examples() if e.with_output]
BARE = [e for e in EXAMPLES.examples() if not e.with_output]
# Marked slow (whole suite only): the diff round trip builds a workbook and diffs it against a
# rebuild, about two minutes; `--out plans/` is a build of the whole default grid.
SLOW = ("edited.xlsx", "plans/q3/", "--out plans/")


@pytest.fixture(scope="module")
def sandbox(tmp_path_factory):  # type: ignore[no-untyped-def]
    return EXAMPLES.Sandbox(tmp_path_factory.mktemp("readme-examples"))


def test_the_readme_has_examples_of_each_kind() -> None:
    commands = [e.command.split()[1] for e in SHOWN]
    assert {"calc", "size", "import"} <= set(commands), commands
    assert {"calc", "build", "size", "diff", "import-workbook"} <= {
        e.command.split()[1] for e in BARE}


@pytest.mark.parametrize("example", SHOWN, ids=[f"line-{e.line}" for e in SHOWN])
def test_readme_example_shows_what_the_command_prints(sandbox, example) -> None:  # type: ignore[no-untyped-def]
    """Each `$ planner ...` example of the README prints the lines it shows (`...` for any
    number of lines)."""
    sandbox.prepare(example.command)
    done = sandbox.run(example.command)
    assert done.returncode in EXAMPLES.allowed_exit(example.command), done.stdout
    problem = EXAMPLES.mismatch(example.shown, done.stdout.split("\n"))
    assert problem is None, (f"README.md line {example.line}, `{example.command}`: {problem}\n"
                             "run python docs/refresh_examples.py")


@pytest.mark.parametrize("example", [
    pytest.param(e, marks=pytest.mark.slow) if any(s in e.command for s in SLOW) else e
    for e in BARE], ids=[f"line-{e.line}" for e in BARE])
def test_readme_example_command_runs(sandbox, example) -> None:  # type: ignore[no-untyped-def]
    """Each bare `planner ...` example of the README runs and succeeds (in the order written,
    so that the diff round trip finds the files the commands before it wrote)."""
    sandbox.prepare(example.command)
    done = sandbox.run(example.command)
    assert done.returncode in EXAMPLES.allowed_exit(example.command), (
        f"README.md line {example.line}, `{example.command}` exited {done.returncode}:\n"
        f"{done.stdout[-3000:]}")


def test_example_output_matching_and_refreshing() -> None:
    """`...` stands for any number of lines; shown lines must come in order; an example
    without `...` shows everything; a refresh keeps the shown shape."""
    mismatch, refreshed = EXAMPLES.mismatch, EXAMPLES.refreshed
    printed = ["a", "b", "c", "d", "e", ""]
    assert mismatch(["a", "b", "..."], printed) is None
    assert mismatch(["a", "...", "c", "...", "e"], printed) is None
    assert mismatch(["a", "...", "e"], printed) is None
    assert mismatch(["a", "b", "c", "d", "e"], printed) is None
    assert "output line 2" in mismatch(["a", "x", "..."], printed)
    assert "more line(s) printed than shown" in mismatch(["a", "b"], printed)
    assert "not printed" in mismatch(["a", "...", "d", "...", "c", "..."], printed)
    assert "how the output ends" in mismatch(["a", "...", "d"], printed)
    assert refreshed(["x", "y", "..."], printed) == ["a", "b", "..."]
    assert refreshed(["x", "...", "z"], printed) == ["a", "...", "e"]
    assert refreshed(["x"], printed) == ["a", "b", "c", "d", "e"]


def _prose() -> str:
    """The README without its code blocks (outputs show abbreviations a reader meets later)."""
    return re.sub(r"^```.*?^```$", "", README, flags=re.S | re.M)


TERMS = {"KV": "key-value", "TP": "tensor parallelism", "TTFT": "time to first token",
         "ITL": "inter-token latency", "TPOT": "time per output token",
         "MoE": "mixture of experts", "MLA": "multi-head latent attention",
         "GQA": "grouped-query attention", "BF16": "2 bytes", "TCO": "total cost of ownership",
         "capex": "capital expenditure", "opex": "operating expenditure",
         "PUE": "power usage effectiveness", "GiB": "2^30"}


@pytest.mark.parametrize("term, meaning", list(TERMS.items()), ids=list(TERMS))
def test_each_term_is_spelled_out_where_the_readme_first_uses_it(term: str, meaning: str) -> None:
    text = _prose()
    first = re.search(rf"(?<![\w`-]){re.escape(term)}(?![\w`-])", text, flags=re.I)
    assert first, term
    around = text[max(0, first.start() - 40):first.end() + 60].replace("\n", " ")
    assert meaning.lower() in around.lower(), f"{term} first used without '{meaning}': {around}"


def test_which_command_table_names_every_command() -> None:
    table = README[README.index("Which command do I need?"):README.index("## Commands")]
    rows = [line for line in table.splitlines() if line.startswith("| ") and "`planner" in line]
    named = {word.strip("`,") for row in rows for word in re.findall(r"`planner [\w-]+`", row)}
    assert named == {f"`planner {c}`".strip("`") for c in cli.commands}, named


def test_the_stated_build_time_is_measured_by_the_bench() -> None:
    """The README's build time names the command that measured it, and that command exists."""
    stated = re.search(r"\(about (\d+) s on [^)]*measured\s+with\s+`python\s+bench/"
                       r"bench_build.py\s+--rows\s+0`", README)
    assert stated, "the set-up paragraph must state the build time and how it was measured"
    bench = (ROOT / "bench" / "bench_build.py").read_text()
    assert "if args.rows == 0:" in bench and "--rows 0" in bench


def test_sizing_examples_are_what_the_generator_writes() -> None:
    """The three reference workloads in README.md and docs/sizing-examples.md are `planner
    size`'s answers as they are today, with the working that leads to each."""
    import importlib.util
    import sys

    spec = importlib.util.spec_from_file_location("generate_sizing_examples", ROOT / "docs" /
                                                  "generate_sizing_examples.py")
    assert spec and spec.loader
    gen = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = gen  # dataclasses look their module up
    spec.loader.exec_module(gen)
    assert gen.TARGET.read_text() == gen.report() + "\n", \
        "run python docs/generate_sizing_examples.py"
    readme = README
    assert gen.readme_text(readme) == readme, "run python docs/generate_sizing_examples.py"
    assert readme.count("| Llama 3.1 70B FP8 on H200") == 1
