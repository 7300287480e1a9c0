"""What a spreadsheet shows for a value under a number format, closely enough to size columns
and to prove that no number shows as ``###``: literal text, sections (positive; negative; zero)
and conditions (``[>=1E+15]"misses a target";"$"#,##0``), decimals required (0) and optional
(#), thousands separators, trailing commas that scale by 1,000, percent and scientific notation.
Colours, fills and alignment padding are ignored.
"""

from __future__ import annotations

import math
import operator
import re

_CONDITION = re.compile(r"^\[(<=|>=|<>|<|>|=)(-?[0-9.]+(?:E[+-]?[0-9]+)?)\]", re.IGNORECASE)
_OPS = {"<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge,
        "=": operator.eq, "<>": operator.ne}
_PLACEHOLDERS = "0#?"


def sections(number_format: str) -> list[str]:
    """The format's sections, split on semicolons outside quoted text."""
    out, current, quoted, escaped = [], "", False, False
    for ch in number_format:
        if escaped:
            current += ch
            escaped = False
        elif ch == "\\":
            current += ch
            escaped = True
        elif ch == '"':
            quoted = not quoted
            current += ch
        elif ch == ";" and not quoted:
            out.append(current)
            current = ""
        else:
            current += ch
    out.append(current)
    return out


def _pick(parts: list[str], x: float) -> tuple[str, float]:
    """The section that shows `x`, and the number it shows (negatives lose their sign in a
    section of their own, as spreadsheets do)."""
    conditioned = [(_CONDITION.match(p), p) for p in parts]
    if any(m for m, _ in conditioned):
        rest = []
        for m, p in conditioned:
            if m is None:
                rest.append(p)
            elif _OPS[m.group(1)](x, float(m.group(2))):
                return p[m.end():], x
        if rest:
            return rest[0], x
        return parts[-1], x
    if len(parts) == 1:
        return parts[0], x  # a negative keeps its sign, shown before the section's text
    if x < 0:
        return parts[1], -x
    if x == 0 and len(parts) >= 3:
        return parts[2], x
    return parts[0], x


def _tokens(section: str) -> list[tuple[str, str]]:
    """(kind, text): 'lit' literal text, 'ph' a run of placeholders and separators, 'pct'."""
    out: list[tuple[str, str]] = []
    i = 0
    while i < len(section):
        ch = section[i]
        if ch == '"':
            end = section.index('"', i + 1) if '"' in section[i + 1:] else len(section)
            out.append(("lit", section[i + 1:end]))
            i = end + 1
        elif ch == "\\" and i + 1 < len(section):
            out.append(("lit", section[i + 1]))
            i += 2
        elif ch == "[":
            i = section.index("]", i) + 1 if "]" in section[i:] else len(section)
        elif ch == "_":  # the width of the next character
            out.append(("lit", " "))
            i += 2
        elif ch == "*":  # fill with the next character: nothing at the narrowest
            i += 2
        elif ch == "%":
            out.append(("pct", "%"))
            i += 1
        elif ch in _PLACEHOLDERS or (ch in ".," and _placeholder_near(section, i)) or (
                ch in "Ee" and section[i + 1:i + 2] in ("+", "-")):
            j = i
            while j < len(section) and (section[j] in _PLACEHOLDERS + ".," or (
                    section[j] in "Ee" and section[j + 1:j + 2] in ("+", "-"))):
                j += 2 if section[j] in "Ee" else 1
            out.append(("ph", section[i:j]))
            i = j
        else:
            out.append(("lit", ch))
            i += 1
    return out


def _placeholder_near(section: str, i: int) -> bool:
    return any(c in _PLACEHOLDERS for c in section[i:i + 2]) or (
        i > 0 and section[i - 1] in _PLACEHOLDERS)


def _number(pattern: str, x: float) -> str:
    if re.search(r"[Ee][+-]", pattern):
        mantissa = re.split(r"[Ee][+-]", pattern)[0]
        decimals = len(mantissa.split(".")[1]) if "." in mantissa else 0
        if x == 0:
            return f"{0:.{decimals}f}E+00"
        text = f"{x:.{decimals}E}"
        head, exp = text.split("E")
        return f"{head}E{exp[0]}{int(exp[1:]):02d}"
    scale = 0
    while pattern.endswith(","):
        pattern, scale = pattern[:-1], scale + 1
    x = x / 1000 ** scale
    whole, _, frac = pattern.partition(".")
    required = frac.count("0")
    optional = frac.count("#") + frac.count("?")
    grouped = "," in whole
    text = f"{x:{',' if grouped else ''}.{required + optional}f}"
    if optional:
        body, _, digits = text.partition(".")
        digits = digits[:required] + digits[required:].rstrip("0")
        text = body + "." + digits
    if "." not in pattern and not whole.count("0") and text in ("0", "-0"):
        text = ""  # '#' shows nothing for zero
    return text


def _general(x: float) -> str:
    if x != 0 and (abs(x) >= 1e11 or abs(x) < 1e-9):
        return f"{x:.5E}".replace("E+0", "E+").replace("E-0", "E-")
    text = f"{x:.10g}"
    return text


def shown_text(value: object, number_format: str = "General") -> str:
    """About what a spreadsheet shows for `value` under `number_format`."""
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if value is None:
        return ""
    if not isinstance(value, int | float):
        return str(value)
    x = float(value)
    if not math.isfinite(x):
        return "#NUM!"
    if number_format in ("General", "@", ""):
        return _general(x)
    section, shown = _pick(sections(number_format), x)
    if section.lower() == "general":
        return _general(shown)
    tokens = _tokens(section)
    sign = "-" if shown < 0 else ""
    shown = abs(shown)
    if any(kind == "pct" for kind, _ in tokens):
        shown *= 100
    out = []
    number_done = False
    for kind, text in tokens:
        if kind == "ph" and not number_done:
            out.append(_number(text, shown))
            number_done = True
        elif kind != "ph":
            out.append(text)
    return sign + "".join(out)


def needed_width(value: object, number_format: str = "General") -> int:
    """Characters a column needs to show `value` without ``###``: its shown text, except that
    General shrinks a number to fit (fewer decimals, then scientific notation)."""
    text = shown_text(value, number_format)
    if number_format == "General" and isinstance(value, int | float) and not isinstance(
            value, bool):
        return min(len(text), 7)
    return len(text)
