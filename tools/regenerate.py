"""Write a generated file the project ships, or check that the shipped one is current."""

from __future__ import annotations

from pathlib import Path

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
