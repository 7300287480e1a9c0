"""Each quantity's definition as a reader sees it: readable formula text for the HTML
summary's method section and the workbook's Method sheet (same renderer, same words)."""

from __future__ import annotations

import re

from planner.model.expr import Expr


class ReadableNames:
    """Renders an expression's leaves as names a reader can look up on this page."""

    def ref(self, kind: str, name: str) -> str:
        return name if kind in ("var", "q", "assume") else f"{kind}.{name}"


POWERS = {"1000000000000": "10^12", "1000000000": "10^9", "1000000": "10^6",
          "1073741824": "2^30", "1048576": "2^20"}


def readable_formula(expr: Expr) -> str:
    """The Excel-style rendering with spaced operators, × and ≤, and powers for unit factors."""
    parts = re.split(r'("[^"]*")', expr.render(ReadableNames()))
    for i in range(0, len(parts), 2):  # outside string literals
        s = re.sub(r"\b(\d{7,})\b", lambda m: POWERS.get(m.group(1), m.group(1)), parts[i])
        s = re.sub(r"(<=|>=|<>|[-+*/<>=])", r" \1 ", s)
        s = s.replace(" * ", " × ").replace(" <= ", " ≤ ").replace(" >= ", " ≥ ")
        parts[i] = s.replace(",", ", ")
    return "".join(parts)
