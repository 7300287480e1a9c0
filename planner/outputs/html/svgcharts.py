"""Self-contained inline SVG charts for the HTML report.

Each chart is one ``<svg>`` string: no scripts, no external fonts, images or links, so the report
works offline. Colours are Okabe-Ito (colour-blind safe) and every series also gets its own dash
pattern and marker shape, so charts still read when printed in greyscale. Every chart carries a
``<title>`` and a ``<desc>`` that summarises the data in words, referenced by ``aria-labelledby``.
All caller text goes through :func:`html.escape`.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from html import escape

FONT = "system-ui, -apple-system, 'Segoe UI', Roboto, Helvetica, Arial, sans-serif"
PALETTE = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000", "#F0E442")
DASHES = ("", "7 3", "2 3", "9 3 2 3", "14 4", "4 2 1 2", "1 1.5", "10 2 2 2 2 2")
MARKERS = ("circle", "square", "triangle", "diamond", "down", "cross", "plus", "ring")
BAND_FILL = {"a": "#E6EEF6", "b": "#F8EEDB"}
INK, MUTED, GRID = "#222222", "#555555", "#DDDDDD"
BAR_FILL, ACCENT = "#2B7BB9", "#D55E00"  # 4.6:1 and 3.9:1 against white (graphics: ≥ 3:1)
WIDTH = 720
NARROW = 400  # a phone's chart: drawn again at this width, so its text stays legible
STACK_BELOW = 560  # narrower bar charts put each label above its bar
MAX_MARKED_POINTS = 40  # more points than this per series: lines only, markers would clutter
_DECIMAL = ((1.0, ""), (1e3, "K"), (1e6, "M"), (1e9, "G"), (1e12, "T"), (1e15, "P"))
_BINARY = tuple((2.0 ** (10 * i), suffix) for i, (_, suffix) in enumerate(_DECIMAL))


@dataclass
class Series:
    name: str
    points: list[tuple[float, float | None]]  # y None = gap (e.g. the config does not fit)


@dataclass
class Band:
    """A shaded vertical region of a line chart, e.g. "memory-bound" / "compute-bound"."""

    x_from: float
    x_to: float
    label: str
    shade: str = "a"  # "a" or "b": two tones


def _trim(text: str) -> str:
    return text.rstrip("0").rstrip(".") if "." in text else text


def format_si(value: float, decimals: int = 1) -> str:
    """Short tick label: 4096 -> "4K", 131072 -> "128K", 1048576 -> "1M", 1234567 -> "1.2M".

    Whole multiples of 1024 that are not multiples of 1000 (context lengths, batch sizes) use
    binary steps; everything else uses decimal steps.
    """
    value = float(value)
    if not math.isfinite(value):
        return "n/a"
    if value < 0:
        return "-" + format_si(-value, decimals)
    if value == 0:
        return "0"
    if value < 1:
        return f"{value:.{decimals + 1}g}"
    binary = value.is_integer() and value % 1024 == 0 and value % 1000 != 0
    units = _BINARY if binary else _DECIMAL
    i = max(k for k, (size, _) in enumerate(units) if value >= size)
    while True:
        size, suffix = units[i]
        text = _trim(f"{value / size:.{decimals}f}")
        if float(text) < 1000 or i == len(units) - 1:
            break
        i += 1  # 999.96K rounds to "1000K": say "1M"
    return text + suffix if float(text) < 1000 else f"{value:.{decimals + 1}g}"


def _tick_labels(ticks: Sequence[float]) -> list[str]:
    """The shortest labels (one to four decimals) that tell every tick apart."""
    labels = [format_si(t) for t in ticks]
    for decimals in range(2, 5):
        if len(set(labels)) == len(labels):
            break
        labels = [format_si(t, decimals) for t in ticks]
    return labels


def _n(v: float) -> str:
    return _trim(f"{v:.1f}")


# Average advance of a character, in em: DejaVu Sans (what Linux renders for the system font
# stack) is wider than Helvetica's ~0.55, so estimate generously to keep labels inside.
CHAR_EM = 0.64


def _text_width(text: str, size: float) -> float:
    return len(text) * size * CHAR_EM


def _clip(text: str, max_px: float, size: float) -> str:
    max_chars = max(4, int(max_px / (size * CHAR_EM)))
    return text if len(text) <= max_chars else text[: max_chars - 1] + "…"


def _wrap(text: str, max_px: float, size: float) -> list[str]:
    max_chars, lines, line = max(8, int(max_px / (size * CHAR_EM))), [], ""
    for word in text.split():
        if line and len(line) + 1 + len(word) > max_chars:
            lines.append(line)
            line = word
        else:
            line = f"{line} {word}" if line else word
    return [_clip(t, max_px, size) for t in lines + [line]] or [""]


def _text(x: float, y: float, text: str, size: float = 12, anchor: str = "start",
          fill: str = INK, extra: str = "") -> str:
    return (f'<text x="{_n(x)}" y="{_n(y)}" font-size="{size}" text-anchor="{anchor}" '
            f'fill="{fill}"{extra}>{escape(text)}</text>')


@dataclass(frozen=True)
class _Scale:
    lo: float
    hi: float
    start: float
    end: float
    log: bool = False

    def __call__(self, v: float) -> float:
        f = math.log10 if self.log else float
        span = f(self.hi) - f(self.lo)
        frac = (f(v) - f(self.lo)) / span if span else 0.5
        return self.start + frac * (self.end - self.start)


def _nice_step(span: float, count: int = 5) -> float:
    """The 1-2-5 step nearest (geometrically) to span / count."""
    raw = span / count
    mag = 10.0 ** math.floor(math.log10(raw))
    return next(m * mag for m, limit in ((1, 2**0.5), (2, 10**0.5), (5, 50**0.5), (10, math.inf))
                if raw / mag < limit)


def _linear_ticks(lo: float, hi: float, count: int = 5) -> list[float]:
    step = _nice_step(hi - lo, count)
    first, last = math.ceil(lo / step - 1e-9), math.floor(hi / step + 1e-9)
    return [float(f"{i * step:.12g}") for i in range(first, last + 1)]


def _nice_bounds(lo: float, hi: float, count: int = 5) -> tuple[float, float]:
    step = _nice_step(hi - lo, count)
    return math.floor(lo / step + 1e-9) * step, math.ceil(hi / step - 1e-9) * step


def _is_pow2(v: float) -> bool:
    return v > 0 and math.log2(v).is_integer()  # float log2 of a power of two is exact


def _log_ticks(lo: float, hi: float, base2: bool) -> list[float]:
    def inside(t: float) -> bool:
        return lo * (1 - 1e-9) <= t <= hi * (1 + 1e-9)

    def thin(ticks: list[float]) -> list[float]:
        return ticks[:: max(1, math.ceil(len(ticks) / 10))]

    if base2:
        e0, e1 = math.ceil(math.log2(lo) - 1e-9), math.floor(math.log2(hi) + 1e-9)
        return thin([2.0**e for e in range(e0, e1 + 1)])
    e0, e1 = math.floor(math.log10(lo)), math.ceil(math.log10(hi))
    decades = [10.0**e for e in range(e0, e1 + 1) if inside(10.0**e)]
    if len(decades) >= 3:
        return thin(decades)
    ticks = [m * 10.0**e for e in range(e0 - 1, e1 + 1) for m in (1, 2, 5) if inside(m * 10.0**e)]
    return thin(ticks) if len(ticks) >= 2 else _linear_ticks(lo, hi)


def _snap125(v: float, up: bool) -> float:
    e = math.floor(math.log10(v))
    options = [m * 10.0**k for k in (e - 1, e, e + 1) for m in (1, 2, 5)]
    return min(t for t in options if t >= v * (1 - 1e-9)) if up else max(
        t for t in options if t <= v * (1 + 1e-9))


def _axis(values: list[float], log: bool, extend: bool, zero: bool) -> tuple[float, float, bool]:
    """Domain (lo, hi) and whether log ticks are powers of 2, for finite (positive if log) data."""
    lo, hi = min(values), max(values)
    base2 = log and all(_is_pow2(v) for v in values)
    if log:
        if hi / lo < 1 + 1e-9:
            lo, hi = lo / 2, hi * 2
        if extend:
            if base2:
                lo, hi = 2.0 ** math.floor(math.log2(lo)), 2.0 ** math.ceil(math.log2(hi))
            else:
                lo, hi = _snap125(lo, up=False), _snap125(hi, up=True)
        return lo, hi, base2
    if zero and lo > 0:
        lo = 0.0
    if hi - lo <= max(abs(lo), abs(hi)) * 1e-9 or hi - lo < 1e-90:  # flat: pad it
        pad = abs(lo) * 0.1 or 1.0
        lo, hi = lo - pad, hi + pad
    return (*_nice_bounds(lo, hi), False) if extend else (lo, hi, False)


def _thin(ticks: list[float], labels: list[str], scale: _Scale) -> tuple[list[float], list[str]]:
    widest = max((_text_width(t, 11) for t in labels), default=0) + 8
    k = 1
    while k < len(ticks) and any(abs(scale(ticks[i + k]) - scale(ticks[i])) < widest
                                 for i in range(0, len(ticks) - k, k)):
        k += 1
    return ticks[::k], labels[::k]


def _marker(kind: str, x: float, y: float, color: str, r: float = 3.5) -> str:
    stroke = f'stroke="{color}" stroke-width="1.6"'
    if kind in ("circle", "ring"):
        fill = "#FFFFFF" if kind == "ring" else color
        return f'<circle cx="{_n(x)}" cy="{_n(y)}" r="{r}" fill="{fill}" {stroke}/>'
    shapes = {
        "square": [(-r, -r), (r, -r), (r, r), (-r, r)],
        "triangle": [(0, -r * 1.2), (r * 1.1, r * 0.8), (-r * 1.1, r * 0.8)],
        "down": [(0, r * 1.2), (r * 1.1, -r * 0.8), (-r * 1.1, -r * 0.8)],
        "diamond": [(0, -r * 1.3), (r * 1.3, 0), (0, r * 1.3), (-r * 1.3, 0)],
    }
    if kind in shapes:
        pts = " ".join(f"{_n(x + dx)},{_n(y + dy)}" for dx, dy in shapes[kind])
        return f'<polygon points="{pts}" fill="{color}" {stroke}/>'
    a = r if kind == "plus" else r * 0.8
    d = (f"M{_n(x - a)} {_n(y)}H{_n(x + a)}M{_n(x)} {_n(y - a)}V{_n(y + a)}" if kind == "plus" else
         f"M{_n(x - a)} {_n(y - a)}L{_n(x + a)} {_n(y + a)}M{_n(x - a)} {_n(y + a)}"
         f"L{_n(x + a)} {_n(y - a)}")
    return f'<path d="{d}" fill="none" {stroke}/>'


def _svg(title: str, desc: str, height: float, body: list[str], width: float = WIDTH) -> str:
    content = "".join(body)
    digest = hashlib.sha1((title + desc + content).encode(), usedforsecurity=False).hexdigest()
    uid = f"chart-{digest[:10]}"
    return (f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {_n(width)} {_n(height)}" '
            f'width="100%" preserveAspectRatio="xMidYMid meet" role="img" class="svg-chart" '
            f'aria-labelledby="{uid}-title {uid}-desc" font-family="{FONT}">'
            f'<title id="{uid}-title">{escape(title)}</title>'
            f'<desc id="{uid}-desc">{escape(desc)}</desc>'
            f'<rect width="{_n(width)}" height="{_n(height)}" fill="#FFFFFF"/>{content}</svg>')


def _title(title: str, body: list[str], width: float = WIDTH) -> float:
    """Draws the (wrapped) title; returns the y where the chart below it may start."""
    lines = _wrap(title, width - 32, 16)
    for i, line in enumerate(lines):
        body.append(_text(16, 26 + 20 * i, line, 16, extra=' font-weight="bold"'))
    return 26 + 20 * len(lines) + 6


def _plottable(v: float, log: bool) -> bool:
    """Finite and within +-1e100 (beyond that scales overflow); positive if on a log axis."""
    return math.isfinite(v) and abs(v) < 1e100 and (v > 1e-100 or not log)


def _valid(s: Series, log_x: bool, log_y: bool) -> list[tuple[float, float | None]]:
    """Points sorted by x; y is None where nothing can be drawn (gap, non-finite, <= 0 on log)."""
    out: list[tuple[float, float | None]] = []
    for x, y in sorted((p for p in s.points if _plottable(p[0], log_x)), key=lambda p: p[0]):
        ok = y is not None and _plottable(y, log_y)
        out.append((x, y if ok else None))
    return out


def _describe_series(name: str, pts: list[tuple[float, float | None]]) -> str:
    ys = [(y, x) for x, y in pts if y is not None]
    if not ys:
        return f"{name}: no data."
    xs = [x for _, x in ys]
    top_y, top_x = max(ys)
    gaps = len(pts) - len(ys)
    text = (f"{name}: {len(ys)} point{'s' * (len(ys) != 1)}, x {format_si(min(xs))} to "
            f"{format_si(max(xs))}, y {format_si(min(ys)[0])} to {format_si(top_y)} "
            f"(highest at x = {format_si(top_x)})")
    return text + (f", {gaps} missing (no value)." if gaps else ".")


def line_chart(title: str, x_label: str, y_label: str, series: list[Series], *,
               log_x: bool = False, log_y: bool = False, description: str = "",
               bands: list[Band] | None = None, markers: bool = True,
               x_ticks: list[float] | None = None, width: float = WIDTH) -> str:
    """Line chart of one or more series; None y values split the line into segments."""
    body: list[str] = []
    top = _title(title, body, width)
    data = [_valid(s, log_x, log_y) for s in series]
    xs = [x for pts in data for x, y in pts if y is not None]
    ys = [y for pts in data for _, y in pts if y is not None]
    scales = (f"{y_label}{' (log scale)' * log_y} against {x_label}{' (log scale)' * log_x}")
    desc = f"{description} Line chart of {scales}. " + " ".join(
        _describe_series(s.name, pts) for s, pts in zip(series, data, strict=True))
    if not xs:
        desc += " No data to plot."
    if bands:
        desc += " Shaded regions: " + "; ".join(
            f"{b.label} (x {format_si(b.x_from)} to {format_si(b.x_to)})" for b in bands) + "."
    plot_h = 280.0
    if xs:
        y_lo, y_hi, y_b2 = _axis(ys, log_y, extend=True, zero=True)
        x_lo, x_hi, x_b2 = _axis(xs, log_x, extend=False, zero=False)
        y_ticks = _log_ticks(y_lo, y_hi, y_b2) if log_y else _linear_ticks(y_lo, y_hi)
        xt = _log_ticks(x_lo, x_hi, x_b2) if log_x else _linear_ticks(x_lo, x_hi, 6)
        xt = [t for t in (x_ticks or xt) if x_lo <= t <= x_hi and (t > 0 or not log_x)]
        y_labels, x_labels = _tick_labels(y_ticks), _tick_labels(xt)
    else:
        y_ticks, xt, y_labels, x_labels = [], [], [], []
    left = max(60.0, 42 + max((_text_width(t, 11) for t in y_labels), default=0))
    right = width - max(24.0, _text_width(x_labels[-1], 11) / 2 + 8 if x_labels else 0)
    bottom = top + plot_h
    body.append(f'<rect x="{_n(left)}" y="{_n(top)}" width="{_n(right - left)}" '
                f'height="{_n(plot_h)}" fill="none" stroke="{GRID}"/>')
    body.append(_text((left + right) / 2, bottom + 38, x_label, 12, "middle"))
    cy = top + plot_h / 2
    body.append(_text(18, cy, y_label, 12, "middle", extra=f' transform="rotate(-90 18 {_n(cy)})"'))
    if not xs:
        body.append(_text((left + right) / 2, cy, "no data", 14, "middle", MUTED))
    else:
        sx = _Scale(x_lo, x_hi, left, right, log_x)
        sy = _Scale(y_lo, y_hi, bottom, top, log_y)
        for b in (b for b in bands or [] if not (math.isnan(b.x_from) or math.isnan(b.x_to))):
            lo_px = sx(max(b.x_from, x_lo)) if b.x_from > 0 or not log_x else left
            hi_px = sx(min(b.x_to, x_hi)) if b.x_to > 0 or not log_x else left
            lo_px, hi_px = max(left, min(lo_px, hi_px)), min(right, max(lo_px, hi_px))
            if hi_px - lo_px < 0.5:
                continue
            body.append(f'<rect class="band" x="{_n(lo_px)}" y="{_n(top)}" '
                        f'width="{_n(hi_px - lo_px)}" height="{_n(plot_h)}" '
                        f'fill="{BAND_FILL.get(b.shade, BAND_FILL["a"])}"/>')
            label = _clip(b.label, max(hi_px - lo_px - 4, 30), 11)
            body.append(_text((lo_px + hi_px) / 2, top + 14, label, 11, "middle", MUTED))
        for t, lab in zip(y_ticks, y_labels, strict=True):
            y = sy(t)
            body.append(f'<line x1="{_n(left)}" x2="{_n(right)}" y1="{_n(y)}" y2="{_n(y)}" '
                        f'stroke="{GRID}"/>')
            body.append(_text(left - 6, y + 4, lab, 11, "end", MUTED))
        xt, x_labels = _thin(xt, x_labels, sx)
        for t, lab in zip(xt, x_labels, strict=True):
            x = sx(t)
            body.append(f'<line x1="{_n(x)}" x2="{_n(x)}" y1="{_n(bottom)}" '
                        f'y2="{_n(bottom + 5)}" stroke="{MUTED}"/>')
            body.append(_text(x, bottom + 18, lab, 11, "middle", MUTED))
        body.append(f'<line x1="{_n(left)}" x2="{_n(right)}" y1="{_n(bottom)}" '
                    f'y2="{_n(bottom)}" stroke="{MUTED}"/>')
        for i, pts in enumerate(data):
            color, dash, kind = PALETTE[i % 8], DASHES[i % 8], MARKERS[(i + i // 8) % 8]
            segments: list[list[tuple[float, float]]] = [[]]
            for xv, yv in pts:
                if yv is not None:
                    segments[-1].append((sx(xv), sy(yv)))
                elif segments[-1]:
                    segments.append([])
            marked = markers and sum(map(len, segments)) <= MAX_MARKED_POINTS
            dash_attr = f' stroke-dasharray="{dash}"' if dash else ""
            body.append(f'<g class="series" data-series="{escape(series[i].name)}">')
            for seg in (s for s in segments if s):
                if len(seg) > 1:
                    coords = " ".join(f"{_n(x)},{_n(y)}" for x, y in seg)
                    body.append(f'<polyline points="{coords}" fill="none" stroke="{color}" '
                                f'stroke-width="2" stroke-linejoin="round"{dash_attr}/>')
                if len(seg) == 1 or marked:
                    body.extend(_marker(kind, x, y, color) for x, y in seg)
            body.append("</g>")
    height = bottom + 52
    if len(series) > 1:
        start = 16.0 if width < STACK_BELOW else left  # a narrow chart's legend uses its width
        x = start
        for i, s in enumerate(series):
            lines = _wrap(s.name, width - start - 50, 12)  # wrapped, never cut short
            w = 34 + max(_text_width(t, 12) for t in lines) + 18
            if x > start and x + w > width - 16:
                x, height = start, height + 20
            color, dash = PALETTE[i % 8], DASHES[i % 8]
            dash_attr = f' stroke-dasharray="{dash}"' if dash else ""
            body.append(f'<g class="legend-item"><line x1="{_n(x)}" x2="{_n(x + 28)}" '
                        f'y1="{_n(height - 4)}" y2="{_n(height - 4)}" stroke="{color}" '
                        f'stroke-width="2"{dash_attr}/>')
            if markers:
                body.append(_marker(MARKERS[(i + i // 8) % 8], x + 14, height - 4, color))
            body.append("".join(_text(x + 34, height + 15 * k, t, 12)
                                for k, t in enumerate(lines)) + "</g>")
            if len(lines) > 1:  # the next item starts below this one
                x, height = start, height + 15 * (len(lines) - 1) + 20
            else:
                x += w
        height += 16 if x > start else -4
    return _svg(title, desc.strip(), height, body, width)


def bar_chart(title: str, value_label: str, bars: list[tuple[str, float]], *,
              description: str = "", highlight: set[str] | None = None,
              value_format: Callable[[float], str] = format_si,
              highlight_label: str = "highlighted (bold label)", width: float = WIDTH) -> str:
    """Horizontal bars in the order given, each value printed at the end of its bar; below
    ``STACK_BELOW`` units wide each label stands above its bar, so none is cut short."""
    body: list[str] = []
    top = _title(title, body, width)
    stacked = width < STACK_BELOW
    highlight = highlight or set()
    shown = [(label, v if _plottable(v, False) else None) for label, v in bars]
    texts = [value_format(v) if v is not None else "n/a" for _, v in shown]
    items = "; ".join(f"{label}: {t}" for (label, _), t in zip(shown[:25], texts, strict=False))
    desc = (f"{description} " if description else "") + f"Bar chart of {value_label}, " + (
        f"{len(bars)} bar{'s' * (len(bars) != 1)}: {items}" if bars else "no data")
    desc += f"; and {len(bars) - 25} more." if len(bars) > 25 else "."
    marked = [label for label, _ in bars if label in highlight]
    if marked:
        desc += " Highlighted: " + ", ".join(marked) + "."
    values = [v for _, v in shown if v is not None]
    row_h = 40.0 if stacked else 26.0
    label_w = width - 32 if stacked else min(
        width * 0.45, max((_text_width(lb, 12) for lb, _ in bars), default=60))
    left = 16.0 if stacked else 16 + label_w + 10
    right = width - 16 - max((_text_width(t, 11) for t in texts), default=0) - 8
    plot_h = row_h * max(len(bars), 3)
    bottom = top + plot_h
    if not values:
        body.append(_text((left + right) / 2, top + plot_h / 2, "no data", 14, "middle", MUTED))
        lo, hi = 0.0, 1.0
    else:
        lo, hi, _ = _axis([min(values + [0.0]), max(values + [0.0])], False, True, zero=True)
    sx = _Scale(lo, hi, left, right)
    ticks = _linear_ticks(lo, hi) if values else []
    ticks, labels = _thin(ticks, _tick_labels(ticks), sx)
    for t, lab in zip(ticks, labels, strict=True):
        body.append(f'<line x1="{_n(sx(t))}" x2="{_n(sx(t))}" y1="{_n(top)}" '
                    f'y2="{_n(bottom)}" stroke="{GRID}"/>')
        body.append(_text(sx(t), bottom + 16, lab, 11, "middle", MUTED))
    zero = sx(0.0)
    for i, ((label, v), text) in enumerate(zip(shown, texts, strict=True)):
        y = top + i * row_h
        hot = label in highlight
        weight = ' font-weight="bold"' if hot else ""
        body.append(f'<g class="bar"><title>{escape(label)}: {escape(text)}</title>')
        bar_y, bar_h = (y + 18, row_h - 22) if stacked else (y + 5, row_h - 10)
        if stacked:
            body.append(_text(left, y + 13, _clip(label, label_w, 12), 12, extra=weight))
        else:
            body.append(_text(left - 10, y + row_h / 2 + 4, _clip(label, label_w, 12), 12,
                              "end", extra=weight))
        end = zero if v is None else sx(v)
        if v is not None:
            body.append(f'<rect x="{_n(min(end, zero))}" y="{_n(bar_y)}" '
                        f'width="{_n(abs(end - zero))}" height="{_n(bar_h)}" '
                        f'fill="{ACCENT if hot else BAR_FILL}"/>')
        body.append(_text(max(end, zero) + 4, bar_y + bar_h / 2 + 4, text, 11, extra=weight)
                    + "</g>")
    body.append(f'<line x1="{_n(zero)}" x2="{_n(zero)}" y1="{_n(top)}" y2="{_n(bottom)}" '
                f'stroke="{MUTED}"/>')
    height = _centred_lines(body, value_label, (left + right) / 2, bottom + 36, width) + 14
    if marked and len(marked) < len(bars):
        body.append(f'<rect x="{_n(left)}" y="{_n(height - 10)}" width="12" height="12" '
                    f'fill="{ACCENT}"/>')
        lines = _wrap(highlight_label, width - left - 34, 12)
        for k, line in enumerate(lines):
            body.append(_text(left + 18, height + 16 * k, line, 12))
        height += 16 * len(lines)
    return _svg(title, desc, height, body, width)


def _centred_lines(body: list[str], text: str, x: float, y: float, width: float) -> float:
    """An axis label centred at x, wrapped to the chart's width; returns its last line's y."""
    lines = _wrap(text, width - 32, 12)
    x = x if len(lines) == 1 else width / 2
    for k, line in enumerate(lines):
        body.append(_text(x, y + 15 * k, line, 12, "middle"))
    return y + 15 * (len(lines) - 1)


def tornado_chart(title: str, value_label: str, base: float,
                  rows: list[tuple[str, float, float]], *, description: str = "",
                  value_format: Callable[[float], str] = format_si,
                  width: float = WIDTH) -> str:
    """A tornado: for each input (largest swing first) a bar from the base value to the total
    with the input at its low (blue) and at its high (orange), the values printed at the ends;
    below ``STACK_BELOW`` units wide each label stands above its bars."""
    body: list[str] = []
    top = _title(title, body, width)
    stacked = width < STACK_BELOW
    shown = [(label, lo, hi) for label, lo, hi in rows
             if _plottable(lo, False) and _plottable(hi, False)]
    items = "; ".join(f"{label}: {value_format(lo)} to {value_format(hi)}"
                      for label, lo, hi in shown)
    desc = (f"{description} " if description else "") + (
        f"Tornado chart of {value_label} around {value_format(base)}: {items}." if shown
        else "no data")
    row_h = 40.0 if stacked else 26.0
    label_w = width - 32 if stacked else min(
        width * 0.4, max((_text_width(lb, 12) for lb, _, _ in shown), default=60))
    left = 16 + 56 if stacked else 16 + label_w + 10 + 56
    right = width - 16 - 56
    plot_h = row_h * max(len(shown), 3)
    bottom = top + plot_h
    values = [base] + [v for _, lo, hi in shown for v in (lo, hi)]
    lo_v, hi_v = min(values), max(values)
    pad = (hi_v - lo_v) * 0.05 or abs(base) * 0.05 or 1.0
    sx = _Scale(lo_v - pad, hi_v + pad, left, right)
    ticks = _linear_ticks(lo_v - pad, hi_v + pad)
    ticks, labels = _thin(ticks, [value_format(t) for t in ticks], sx)
    for t, lab in zip(ticks, labels, strict=True):
        body.append(f'<line x1="{_n(sx(t))}" x2="{_n(sx(t))}" y1="{_n(top)}" '
                    f'y2="{_n(bottom)}" stroke="{GRID}"/>')
        body.append(_text(sx(t), bottom + 16, lab, 11, "middle", MUTED))
    mid = sx(base)
    for i, (label, lo, hi) in enumerate(shown):
        y = top + i * row_h
        body.append(f'<g class="bar"><title>{escape(label)}: low {escape(value_format(lo))}, '
                    f'high {escape(value_format(hi))}</title>')
        bar_y, bar_h = (y + 18, row_h - 22) if stacked else (y + 5, row_h - 10)
        if stacked:
            body.append(_text(16, y + 13, _clip(label, label_w, 12), 12))
        else:
            body.append(_text(16 + label_w, y + row_h / 2 + 4, _clip(label, label_w, 12), 12,
                              "end"))
        for v, fill in ((lo, BAR_FILL), (hi, ACCENT)):
            x = sx(v)
            body.append(f'<rect x="{_n(min(x, mid))}" y="{_n(bar_y)}" '
                        f'width="{_n(max(abs(x - mid), 1))}" height="{_n(bar_h)}" '
                        f'fill="{fill}"/>')
        for v in (lo, hi):
            x = sx(v)
            anchor = "end" if x < mid else "start"
            body.append(_text(x + (-4 if x < mid else 4), bar_y + bar_h / 2 + 4,
                              value_format(v), 10, anchor))
        body.append("</g>")
    body.append(f'<line x1="{_n(mid)}" x2="{_n(mid)}" y1="{_n(top)}" y2="{_n(bottom)}" '
                f'stroke="{INK}"/>')
    height = _centred_lines(body, value_label, (left + right) / 2, bottom + 36, width) + 16
    x0 = 16.0 if stacked else left
    for name, fill in (("input at its low value", BAR_FILL), ("input at its high value", ACCENT)):
        if x0 > 16 and x0 + 200 > width:  # the legend wraps rather than run off the chart
            x0, height = 16.0 if stacked else left, height + 18
        body.append(f'<rect x="{_n(x0)}" y="{_n(height - 10)}" width="12" height="12" '
                    f'fill="{fill}"/>')
        body.append(_text(x0 + 18, height, name, 12))
        x0 += 220
    return _svg(title, desc, height + 8, body, width)
