"""The README's shell examples, run for real: tests/test_docs.py runs every one and compares
the output each shows with what the command prints; this script rewrites the shown outputs
from the real commands when they drift. Run: python docs/refresh_examples.py

An example is a line `$ planner ...` in a ```text block (continued by a trailing backslash),
followed by the output it shows: each shown line must be printed, in order; a line `...` stands
for any number of lines (a refresh keeps as many lines before and after it as were shown). A
```text block whose lines are bare `planner ...` commands (no `$`, no output) is run too and
must succeed. Commands run in a scratch folder as a newcomer's machine would have it: `~` is a
home holding ~/models/gemma-3-27b-it (tests/data/configs), `catalogs/models.yaml` a copy of the
shipped one, and `edited.xlsx` a workbook of the shipped catalogs; `~` is put back for that
home in what they print.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
ELISION = "..."
# How long one example may run: a build is seconds, a diff of the default workbook a minute.
TIMEOUT = 600
# Exit statuses an example may end with: `planner diff` says "something changed" with 1.
ALLOWED_EXIT = {"diff": (0, 1)}


@dataclass
class Example:
    command: str          # as written, continuation lines joined
    shown: list[str]      # the output lines the README shows (empty: run for its exit status)
    line: int             # 1-based line of the command in the README
    end: int              # 1-based line after the last shown line (for rewriting)
    with_output: bool     # a `$` example (its output is compared), else a bare command


def _blocks(text: str) -> list[tuple[int, list[str]]]:
    """(1-based line of the first content line, lines) of each ```text block."""
    out, lines, start = [], text.split("\n"), None
    for number, line in enumerate(lines, 1):
        if start is None and line == "```text":
            start = number + 1
        elif start is not None and line == "```":
            out.append((start, lines[start - 1:number - 1]))
            start = None
    return out


def _join(lines: list[str], i: int) -> tuple[str, int]:
    """The command starting at lines[i], with its backslash continuations; the next index."""
    parts = [lines[i].rstrip()]
    while parts[-1].endswith("\\") and i + 1 < len(lines):
        i += 1
        parts[-1] = parts[-1][:-1].rstrip()
        parts.append(lines[i].strip())
    return " ".join(parts), i + 1


def examples(text: str | None = None) -> list[Example]:
    """Every example of the README: `$` commands with their shown output, and bare commands
    of blocks that hold only commands (the synopsis, with its [OPTIONS], is not an example)."""
    text = README.read_text(encoding="utf-8") if text is None else text
    found: list[Example] = []
    for start, lines in _blocks(text):
        if any(line.startswith("$ ") for line in lines):
            i = 0
            while i < len(lines):
                if not lines[i].startswith("$ "):
                    i += 1
                    continue
                command, j = _join(lines, i)
                k = j
                while k < len(lines) and not lines[k].startswith("$ "):
                    k += 1
                found.append(Example(command[2:], lines[j:k], start + i, start + k, True))
                i = k
        elif lines and all(line.startswith(("planner ", " ")) for line in lines) and not any(
                "[" in line or "|" in line for line in lines):
            i = 0
            while i < len(lines):
                command, j = _join(lines, i)
                command = re.sub(r"\s+#.*$", "", command)  # a trailing comment
                found.append(Example(command, [], start + i, start + i, False))
                i = j
    return found


class Sandbox:
    """A scratch folder laid out as the examples expect (see the module's docstring)."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.home = folder / "home"
        (self.home / "models").mkdir(parents=True, exist_ok=True)
        shutil.copytree(ROOT / "tests" / "data" / "configs" / "gemma-3-27b-it",
                        self.home / "models" / "gemma-3-27b-it", dirs_exist_ok=True)
        (folder / "catalogs").mkdir(exist_ok=True)
        shutil.copy(ROOT / "catalogs" / "models.yaml", folder / "catalogs" / "models.yaml")

    def prepare(self, command: str) -> None:
        """Files a command names that a newcomer would have made first."""
        if "edited.xlsx" in command and not (self.folder / "edited.xlsx").exists():
            self.run("planner build --out built -q")
            shutil.copy(self.folder / "built" / "capacity-plan.xlsx",
                        self.folder / "edited.xlsx")

    def run(self, command: str) -> subprocess.CompletedProcess[str]:
        """The command under bash, `planner` being this checkout's `python -m planner`, stdout
        and stderr together as a terminal shows them."""
        env = {k: v for k, v in os.environ.items() if k not in ("PLANNER_DEBUG", "COLUMNS")}
        env["HOME"] = str(self.home)
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
        script = f'planner() {{ "{sys.executable}" -m planner "$@"; }}\n{command}\n'
        done = subprocess.run(["bash", "-c", script], cwd=self.folder, env=env, text=True,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=TIMEOUT,
                              check=False)
        done.stdout = done.stdout.replace(str(self.home), "~")
        return done


def allowed_exit(command: str) -> tuple[int, ...]:
    words = command.split()
    return ALLOWED_EXIT.get(words[1] if len(words) > 1 else "", (0,))


def mismatch(shown: list[str], printed: list[str]) -> str | None:
    """Why `printed` does not show `shown` (each shown line in order, `...` any number of
    lines, nothing unshown before the first or after the last unless `...` says so); None when
    it does."""
    segments: list[list[str]] = [[]]
    for line in shown:
        if line.strip() == ELISION:
            segments.append([])
        else:
            segments[-1].append(line.rstrip())
    printed = [line.rstrip() for line in printed]
    while printed and not printed[-1]:
        printed.pop()
    head, *rest = segments
    if printed[:len(head)] != head:
        return _first_difference(head, printed[:len(head)], 1)
    at = len(head)
    for n, segment in enumerate(rest):
        last = n == len(rest) - 1
        if not segment:
            continue
        if last:
            start = len(printed) - len(segment)
            if start < at or printed[start:] != segment:
                return ("the lines after the last '...' are not how the output ends:\n  shown: "
                        + "\n         ".join(segment) + "\n  ends:  "
                        + "\n         ".join(printed[max(at, len(printed) - len(segment)):]))
            return None
        for start in range(at, len(printed) - len(segment) + 1):
            if printed[start:start + len(segment)] == segment:
                at = start + len(segment)
                break
        else:
            return f"not printed (in this order): {segment[0]!r}"
    if len(segments) == 1 and len(printed) > len(head):
        return (f"{len(printed) - len(head)} more line(s) printed than shown, from "
                f"{printed[len(head)]!r}: show them or end with '...'")
    return None


def _first_difference(shown: list[str], printed: list[str], offset: int) -> str:
    for i, line in enumerate(shown):
        got = printed[i] if i < len(printed) else "(nothing)"
        if got != line:
            return f"output line {offset + i}:\n  shown:   {line}\n  printed: {got}"
    return "the output is shorter than shown"


def refreshed(shown: list[str], printed: list[str]) -> list[str]:
    """The shown lines rewritten from the output, keeping the shape: as many lines before the
    first `...` and after the last as were shown (everything when there is no `...`)."""
    printed = [line.rstrip() for line in printed]
    while printed and not printed[-1]:
        printed.pop()
    marks = [i for i, line in enumerate(shown) if line.strip() == ELISION]
    if not marks:
        return printed
    head, tail = marks[0], len(shown) - marks[-1] - 1
    if head + tail >= len(printed):
        return printed
    return [*printed[:head], ELISION, *(printed[len(printed) - tail:] if tail else [])]


def refresh(folder: Path) -> list[str]:
    """Rewrite every `$` example's shown output in README.md; returns what changed."""
    text = README.read_text(encoding="utf-8")
    lines = text.split("\n")
    sandbox = Sandbox(folder)
    changed = []
    for example in reversed(examples(text)):  # bottom up, so earlier line numbers hold
        if not example.with_output:
            continue
        sandbox.prepare(example.command)
        done = sandbox.run(example.command)
        if done.returncode not in allowed_exit(example.command):
            raise SystemExit(f"README.md line {example.line}: `{example.command}` exited "
                             f"{done.returncode}:\n{done.stdout}")
        new = refreshed(example.shown, done.stdout.split("\n"))
        if new != example.shown:
            changed.append(f"line {example.line}: {example.command}")
            first = example.end - len(example.shown)
            lines[first - 1:example.end - 1] = new
    README.write_text("\n".join(lines), encoding="utf-8")
    return changed


if __name__ == "__main__":
    import tempfile

    with tempfile.TemporaryDirectory(prefix="planner-examples-") as tmp:
        for what in refresh(Path(tmp)) or ["nothing to refresh"]:
            print(what)
