"""Inline SVG charts: well-formed, accessible, escaped, offline, and drawn to scale."""

from __future__ import annotations

import math
import re
import xml.etree.ElementTree as ET

import pytest

from planner.outputs.html.svgcharts import Band, Series, bar_chart, format_si, line_chart

NS = "{http://www.w3.org/2000/svg}"
SVG_NS = "http://www.w3.org/2000/svg"
CONTEXTS = [4096, 8192, 16384, 32768, 65536, 131072]


def parse(svg: str) -> ET.Element:
    root = ET.fromstring(svg)
    assert root.tag == f"{NS}svg"
    return root


def texts(root: ET.Element) -> list[str]:
    return ["".join(t.itertext()) for t in root.iter(f"{NS}text")]


def polylines(root: ET.Element) -> list[list[tuple[float, float]]]:
    lines = [line.get("points", "").split() for line in root.iter(f"{NS}polyline")]
    return [[(float(p.split(",")[0]), float(p.split(",")[1])) for p in line] for line in lines]


def two_series() -> str:
    return line_chart(
        "Throughput vs context", "Context length (tokens)", "Throughput (tok/s)",
        [Series("fp8", [(c, 1000.0 + c / 10) for c in CONTEXTS]),
         Series("bf16", [(4096, 800.0), (8192, 900.0), (16384, None), (32768, 950.0),
                         (65536, 990.0)])],
        log_x=True, description="Decode throughput per replica.",
    )


def test_format_si() -> None:
    assert format_si(4096) == "4K"
    assert format_si(131072) == "128K"
    assert format_si(1048576) == "1M"
    assert format_si(1500000) == "1.5M"
    assert format_si(1234567) == "1.2M"
    assert format_si(0) == "0"
    assert format_si(999) == "999"
    assert format_si(256) == "256"
    assert format_si(2000) == "2K"
    assert format_si(0.25) == "0.25"
    assert format_si(-4096) == "-4K"
    assert format_si(999_960) == "1M"  # not "1000K"
    assert format_si(math.nan) == "n/a"
    assert format_si(1234567, 2) == "1.23M"


def test_line_chart_is_accessible_xml() -> None:
    root = parse(two_series())
    assert root.get("role") == "img"
    assert root.get("width") == "100%"
    assert root.get("viewBox", "").startswith("0 0 ")
    assert root.get("height") is None  # height follows from the viewBox aspect ratio
    title, desc = root.find(f"{NS}title"), root.find(f"{NS}desc")
    assert title is not None and desc is not None
    assert title.text == "Throughput vs context"
    assert root.get("aria-labelledby") == f"{title.get('id')} {desc.get('id')}"
    assert desc.text is not None
    assert desc.text.startswith("Decode throughput per replica.")
    assert "fp8: 6 points, x 4K to 128K" in desc.text
    assert "1 missing" in desc.text
    assert "system-ui" in root.get("font-family", "")


def test_axis_labels_ticks_and_legend() -> None:
    labels = texts(parse(two_series()))
    assert "Context length (tokens)" in labels
    assert "Throughput (tok/s)" in labels
    assert {"4K", "8K", "16K", "32K", "64K", "128K"} <= set(labels)
    assert "fp8" in labels and "bf16" in labels
    root = parse(two_series())
    assert len(root.findall(f".//{NS}g[@class='legend-item']")) == 2


def test_single_series_has_no_legend() -> None:
    root = parse(line_chart("t", "x (s)", "y (s)", [Series("only", [(1, 1), (2, 2)])]))
    assert root.findall(f".//{NS}g[@class='legend-item']") == []
    assert "only" not in texts(root)


def test_text_is_escaped() -> None:
    evil = "<script>alert(1)</script>"
    svgs = [
        line_chart(evil, evil, evil, [Series(evil, [(1, 1), (2, 2)]), Series("b", [(1, 2)])],
                   bands=[Band(1, 2, evil, "a")]),
        bar_chart(evil, evil, [(evil, 1.0), ("b", 2.0)], highlight={evil}, description=evil),
    ]
    for svg in svgs:
        assert "<script" not in svg
        assert "&lt;script&gt;" in svg
        root = parse(svg)
        assert evil in texts(root)  # the text survives, as text


def test_nothing_external() -> None:
    svgs = [two_series(), bar_chart("Cost", "USD", [("a", 1.0)]), line_chart("e", "x", "y", [])]
    for svg in svgs:
        assert svg.replace(SVG_NS, "").count("http") == 0
        assert "href" not in svg and "<script" not in svg and "url(" not in svg
        assert "<image" not in svg and "@import" not in svg


def test_points_map_monotonically() -> None:
    root = parse(line_chart("t", "Concurrency", "Tokens/s",
                            [Series("a", [(c, float(c)) for c in (1, 2, 4, 8, 64, 256)])],
                            log_x=True, log_y=True))
    (line,) = polylines(root)
    xs, ys = [p[0] for p in line], [p[1] for p in line]
    assert xs == sorted(xs) and len(set(xs)) == len(xs)
    assert ys == sorted(ys, reverse=True)  # larger y is higher up: smaller pixel y
    steps = [b - a for a, b in zip(xs, xs[1:], strict=False)]
    assert steps[0] == pytest.approx(steps[1], abs=0.2)  # log axis: 1->2 as wide as 2->4


def test_linear_mapping_is_proportional_and_sorted() -> None:
    root = parse(line_chart("t", "x", "y", [Series("a", [(10, 5), (0, 0), (5, 2.5)])]))
    (line,) = polylines(root)
    (x0, y0), (x1, y1), (x2, y2) = line
    assert x0 < x1 < x2 and y0 > y1 > y2
    assert x1 - x0 == pytest.approx(x2 - x1, abs=0.2)


def test_none_gaps_split_the_polyline() -> None:
    series = Series("a", [(1, 1), (2, 2), (3, None), (4, 3), (5, 4), (6, None), (7, None)])
    lines = polylines(parse(line_chart("t", "x", "y", [series])))
    assert [len(line) for line in lines] == [2, 2]
    assert lines[0][-1][0] < lines[1][0][0]


def test_isolated_point_gets_a_marker_even_without_markers() -> None:
    series = Series("a", [(1, 1), (2, None), (3, 3), (4, None), (5, 5), (6, 6)])
    root = parse(line_chart("t", "x", "y", [series], markers=False))
    assert len(polylines(root)) == 1
    assert len(root.findall(f".//{NS}g[@class='series']/{NS}circle")) == 2  # (1,1) and (3,3)


def test_bands_render() -> None:
    svg = line_chart("t", "Batch", "Tok/s", [Series("a", [(1, 1), (64, 10), (256, 12)])],
                     log_x=True, bands=[Band(0, 64, "memory-bound", "a"),
                                        Band(64, 1e9, "compute-bound", "b"),
                                        Band(1e6, 1e7, "off the chart", "a")])
    root = parse(svg)
    rects = root.findall(f".//{NS}rect[@class='band']")
    assert len(rects) == 2
    assert rects[0].get("fill") != rects[1].get("fill")
    left, right = rects
    assert float(left.get("x", "0")) + float(left.get("width", "0")) == pytest.approx(
        float(right.get("x", "0")), abs=0.2)
    assert {"memory-bound", "compute-bound"} <= set(texts(root))
    assert "off the chart" not in texts(root)


def test_x_ticks_override() -> None:
    series = [Series("a", [(c, 1.0) for c in CONTEXTS])]
    root = parse(line_chart("t", "Context (tokens)", "s", series, log_x=True,
                            x_ticks=[4096, 32768, 131072, 10**9]))
    labels = texts(root)
    assert {"4K", "32K", "128K"} <= set(labels)
    assert "8K" not in labels and "1G" not in labels


def bar_rects(root: ET.Element) -> list[ET.Element]:
    return [r for g in root.iter(f"{NS}g") if g.get("class") == "bar" for r in g.iter(f"{NS}rect")]


def test_bar_chart_widths_are_proportional() -> None:
    label = "llama-3.1-70b · 8×h200-sxm · fp8"
    svg = bar_chart("Cost per million tokens", "Cost (USD / Mtok)",
                    [(label, 2.0), ("b", 1.0), ("c", 0.5)], highlight={"b"},
                    value_format=lambda v: f"${v:.2f}")
    root = parse(svg)
    widths = [float(r.get("width", "0")) for r in bar_rects(root)]
    assert widths[0] == pytest.approx(2 * widths[1], rel=0.01)
    assert widths[1] == pytest.approx(2 * widths[2], rel=0.01)
    fills = [r.get("fill") for r in bar_rects(root)]
    assert fills[1] != fills[0] == fills[2]
    labels = texts(root)
    assert label in labels and "Cost (USD / Mtok)" in labels
    assert {"$2.00", "$1.00", "$0.50"} <= set(labels)
    ys = [float(r.get("y", "0")) for r in bar_rects(root)]
    assert ys == sorted(ys)  # drawn in the order given, top to bottom
    desc = root.find(f"{NS}desc")
    assert desc is not None and desc.text is not None
    assert "$2.00" in desc.text and "Highlighted: b" in desc.text


def test_bar_chart_negative_and_non_finite() -> None:
    root = parse(bar_chart("t", "Margin (USD)", [("up", 3.0), ("down", -1.0), ("bad", math.inf)]))
    widths = [float(r.get("width", "0")) for r in bar_rects(root)]
    assert widths[0] == pytest.approx(3 * widths[1], rel=0.01)
    assert len(widths) == 2
    assert "n/a" in texts(root)


@pytest.mark.parametrize("series", [
    [],
    [Series("a", [])],
    [Series("a", [(1, None), (2, None)]), Series("b", [(3, None)])],
    [Series("a", [(5, 7)])],
    [Series("a", [(5, 7), (5, 7)])],
    [Series("a", [(1, 3), (2, 3), (3, 3)])],
    [Series("a", [(0, 0), (1, -1), (2, 0)])],
    [Series("a", [(math.nan, 1), (1, math.inf), (2, math.nan)])],
    [Series("a", [(1e-9, 1e-12), (2e-9, 3e-12)])],
    [Series("a", [(1, 1e30), (2, 2e30)])],
])
@pytest.mark.parametrize("log", [False, True])
def test_line_edge_cases_do_not_raise(series: list[Series], log: bool) -> None:
    root = parse(line_chart("Edge", "x (s)", "y (s)", series, log_x=log, log_y=log,
                            bands=[Band(0, 1, "band", "a")]))
    assert root.find(f"{NS}title") is not None and root.find(f"{NS}desc") is not None
    assert {"x (s)", "y (s)"} <= set(texts(root))


@pytest.mark.parametrize("series", [[], [Series("a", [(1, None)])],
                                    [Series("a", [(0, 1), (-2, 3)])]])
def test_no_data_charts(series: list[Series]) -> None:
    root = parse(line_chart("Nothing", "x", "y", series, log_x=True))
    assert "no data" in texts(root)
    assert polylines(root) == []


def test_log_axis_skips_non_positive_points() -> None:
    series = Series("a", [(0, 5), (1, 5), (2, 0), (4, 8), (8, 16)])
    root = parse(line_chart("t", "x", "y", [series], log_x=True, log_y=True))
    assert [len(line) for line in polylines(root)] == [2]  # (1,5) alone, then (4,8)-(8,16)


def test_single_point_and_flat_series() -> None:
    root = parse(line_chart("t", "x", "y", [Series("a", [(4096, 10.0)])], log_x=True))
    assert len(root.findall(f".//{NS}circle")) == 1
    assert "4K" in texts(root)
    root = parse(line_chart("t", "x", "y", [Series("a", [(1, 3.0), (2, 3.0)])]))
    ys = {p[1] for p in polylines(root)[0]}
    assert len(ys) == 1


@pytest.mark.parametrize("bars", [[], [("a", 0.0)], [("a", 5.0), ("b", 5.0)],
                                  [("a", math.nan)], [("x" * 300, 1e12)]])
def test_bar_edge_cases_do_not_raise(bars: list[tuple[str, float]]) -> None:
    root = parse(bar_chart("Edge", "Value (units)", bars, highlight={"a"}))
    assert "Value (units)" in texts(root)
    if not bars:
        assert "no data" in texts(root)


def test_many_series_stay_distinct_and_ids_are_stable() -> None:
    series = [Series(f"s{i}", [(1, i + 1), (2, i + 2)]) for i in range(8)]
    svg = line_chart("t", "x", "y", series)
    root = parse(svg)
    styles = {(p.get("stroke"), p.get("stroke-dasharray")) for p in root.iter(f"{NS}polyline")}
    assert len(styles) == 8
    assert svg == line_chart("t", "x", "y", series)  # deterministic output
    other = line_chart("u", "x", "y", series)
    assert re.findall(r'id="([^"]+)"', svg) != re.findall(r'id="([^"]+)"', other)
