"""Write a generated file the project ships, or check that the shipped one is current; the
command line of the tools that make one from a pinned file of another repository."""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parent.parent


def write_or_check(target: Path, text: str, check: bool) -> int:
    """With check, exit status 1 when `target` differs from `text`; else write it. Says which."""
    name = target.relative_to(ROOT)
    if check:
        same = target.is_file() and target.read_text(encoding="utf-8") == text
        print(f"{name} is current" if same else f"{name} differs")
        return 0 if same else 1
    target.write_text(text, encoding="utf-8")
    print(f"wrote {name}")
    return 0


def dump_yaml(data: Mapping[str, Any]) -> str:
    """A generated data file's text: keys in the order built, 100 columns."""
    return yaml.safe_dump(dict(data), sort_keys=False, allow_unicode=True, width=100)


def from_pinned_json(argv: Sequence[str] | None, description: str, target: Path,
                     pinned: Mapping[str, str], render: Callable[[Any, str], str]) -> int:
    """The command line of a tool that turns a pinned JSON file of another repository, and a
    git dir of the repository whose scripts it reads, into `target`: refuses a file whose
    sha256 is not `pinned["sha256"]`, saying which file was expected."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("source", help=f"{pinned['path']} at the pinned commit")
    parser.add_argument("git_dir", help="a clone (git dir) of SemiAnalysisAI/InferenceX")
    parser.add_argument("--check", action="store_true", help="exit 1 if the shipped file differs")
    args = parser.parse_args(argv)
    raw = Path(args.source).read_bytes()
    digest = hashlib.sha256(raw).hexdigest()
    if digest != pinned["sha256"]:
        print(f"{args.source}: sha256 {digest}, expected {pinned['sha256']} "
              f"({pinned['repo']} {pinned['path']} @ {pinned['commit']})", file=sys.stderr)
        return 1
    return write_or_check(target, render(json.loads(raw), args.git_dir), args.check)
