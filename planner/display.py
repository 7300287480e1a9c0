"""Human-readable numbers with their units, for the terminal table and the HTML summary.

Bytes are shown in both GB (10^9) and GiB (2^30) where confusion costs money; never "G" alone.
"""

from __future__ import annotations

from planner.calc import RowEnv
from planner.expr import Value, XlError
from planner.quantities import ROW_BY_NAME, ROW_QUANTITIES, Quantity
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


def calc_report(env: RowEnv) -> str:
    """The table `planner calc` prints: every quantity with its unit, then the verdict."""
    s = env.scenario
    m, g = env.model.model, env.gpu
    lines = [
        f"{m.name} on {s.tp} × {g.name}  (weights {s.weights}, KV {s.kv}, context {s.context:,} "
        f"tokens, batch {s.batch}, prompt {s.prompt:,})",
        "",
    ]
    width = max(len(q.label) for q in ROW_QUANTITIES) + 2
    for q in ROW_QUANTITIES:
        lines.append(f"  {q.label:<{width}}{value_text(env.value(q.name), q)}")
    lines.append("")
    if env.model.value("params_basis") == "derived from shape":
        derived = env.model.value("params_total")
        lines.append(f"Note: the catalog gives no params for {m.id}; "
                     f"{derived:,.0f} parameters are derived from its shape.")
    lines.append(_verdict(env))
    price = f"${g.number('price_per_hour_usd')}/GPU-hour as of {g.text('price_date')}"
    lines.append("Exact: memory and fit, given the shapes, formats and memory assumptions. "
                 "Estimates: decode speed and TTFT rest on bandwidth_efficiency and "
                 f"compute_efficiency; cost also on the GPU price ({price}).")
    lines.append("GB = 10^9 bytes, GiB = 2^30 bytes. Assumptions: " + ", ".join(
        f"{k}={v}" for k, v in env.assumptions.items() if "bytes_per" not in k))
    return "\n".join(lines)


def _verdict(env: RowEnv) -> str:
    s = env.scenario
    bound = env.value("decode_bound")
    speed = f"decode is {bound}-bound"
    if not env.value("weights_fit"):
        need = value_text(env.value("weight_bytes_per_gpu"), ROW_BY_NAME["weight_bytes_per_gpu"])
        usable = value_text(env.value("usable_bytes_per_gpu"), ROW_BY_NAME["usable_bytes_per_gpu"])
        return (f"DOES NOT FIT: weights need {need} per GPU but only {usable} is usable; "
                "raise --tp, use a smaller --weights format or a larger GPU.")
    if not env.value("fits"):
        return (f"DOES NOT FIT: batch {s.batch} needs more KV cache than the pool holds; at most "
                f"{env.value('max_sequences')} sequences of {s.context:,} tokens fit; {speed}.")
    return f"FITS: {s.batch} of at most {env.value('max_sequences')} sequences; {speed}."
