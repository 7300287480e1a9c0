"""Rewrite the README's assumption table from planner.inputs.assumptions, so names, defaults and
reasons cannot drift (tests/test_docs.py checks them).

Run: python docs/generate_assumption_table.py"""

from __future__ import annotations

from pathlib import Path

from planner.inputs.assumptions import ASSUMPTIONS

README = Path(__file__).parent.parent / "README.md"


def rows() -> list[str]:
    return [f"| `{a.name}` | {a.default} | {a.unit.replace('|', '/')} | "
            f"{a.reason.replace('|', '/')} |" for a in ASSUMPTIONS.values()]


def rewrite(text: str) -> str:
    lines = text.split("\n")
    start = lines.index("| name | default | unit | why |") + 2
    end = next(i for i in range(start, len(lines)) if lines[i].startswith("| `bytes_per_param_"))
    lines[start:end] = rows()
    return "\n".join(lines)


if __name__ == "__main__":
    README.write_text(rewrite(README.read_text()))
