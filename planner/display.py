"""Human-readable numbers with their units, for the terminal table and the HTML summary.

Bytes are shown in both GB (10^9) and GiB (2^30) where confusion costs money; never "G" alone.
"""

from __future__ import annotations

from planner.expr import Value, XlError
from planner.quantities import Quantity
from planner.units import GB, TB_PER_S, TFLOPS, GiB


def bytes_text(n: float) -> str:
    if abs(n) >= GB / 10:
        return f"{n / GB:,.2f} GB ({n / GiB:,.2f} GiB)"
    if abs(n) >= 10**6:
        return f"{n / 10**6:,.2f} MB"
    return f"{n:,.0f} B"


def seconds_text(s: float) -> str:
    if s < 1e-3:
        return f"{s * 1e6:,.1f} µs"
    if s < 1:
        return f"{s * 1e3:,.2f} ms"
    return f"{s:,.2f} s"


def number_text(x: float) -> str:
    if x == 0:
        return "0"
    if abs(x) >= 1e15:
        return f"{x:.3e}"
    if abs(x) >= 100 or float(x).is_integer():
        return f"{x:,.0f}"
    if abs(x) >= 1:
        return f"{x:,.2f}"
    return f"{x:.3g}"


def value_text(value: Value, quantity: Quantity) -> str:
    """A quantity's value with its unit, as a reader wants it."""
    if isinstance(value, XlError):
        return str(value)
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, str):
        return value
    if quantity.display == "bytes":
        return bytes_text(value)
    if quantity.display == "seconds":
        return seconds_text(value)
    if quantity.display == "usd":
        return f"${value:,.2f}" if value >= 0.01 else f"${value:.4f}"
    if quantity.display == "rate" and quantity.unit == "FLOP/s":
        return f"{value / TFLOPS:,.1f} TFLOP/s"
    if quantity.display == "rate" and quantity.unit == "B/s":
        return f"{value / TB_PER_S:,.3f} TB/s"
    if quantity.display == "ratio":
        return f"{value:.4g}"
    text = number_text(value)
    return f"{text} {quantity.unit}" if quantity.unit else text
