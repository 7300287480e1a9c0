"""The HTML summary: the workbook's numbers, self-contained, escaped, and rendered by Chromium."""

from __future__ import annotations

import html
import os
import re
import shutil
import subprocess
from pathlib import Path

import openpyxl
import pytest
import yaml
from jinja2 import UndefinedError
from markupsafe import escape

from planner.build import HTML_NAME, WORKBOOK_NAME, run_build
from planner.inputs.catalog import DEFAULT_GPUS, DEFAULT_MODELS, load_models
from planner.inputs.grid import DEFAULT_GRID
from planner.model.expr import Value
from planner.model.quantities import ROW_BY_NAME
from planner.outputs.html.report import TEMPLATE_DIR, environment, render_html
from planner.outputs.method import readable_formula
from planner.outputs.terminal import value_text
from planner.plan.plan import Plan
from tests.engines import require_marked

SVG_NS = "http://www.w3.org/2000/svg"
SHOWN = ("max_sequences", "decode_tokens_per_second", "tokens_per_second_per_sequence",
         "cost_per_million_tokens")
CONFIG_HEADERS = ("Model [id]", "GPU [id]", "Weight format [id]", "KV-cache format [id]",
                  "TP degree [GPUs]", "Context [tokens]", "Concurrency [sequences]",
                  "Prompt [tokens]")
HOSTILE_SCRIPT = "<script>alert(1)</script>"
HOSTILE_FORMULA = '=HYPERLINK("http://x","y")'


@pytest.fixture(scope="session")
def page(default_plan: Plan) -> str:
    """The default build's HTML page, rendered from the session's default plan as `planner
    build` renders it (without writing the 12 MB workbook beside it: the few tests that read
    the workbook or the file take default_build, and are marked slow or by their engine)."""
    return render_html(default_plan)


@pytest.fixture(scope="session")
def hostile_page(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A two-model build whose catalog sources are markup and a spreadsheet formula. The
    catalog holds just the grid's two models, so only the shipped workload on one of them is
    sized (seconds less than all five)."""
    folder = tmp_path_factory.mktemp("hostile")
    catalog = yaml.safe_load(DEFAULT_MODELS.read_text())
    catalog["models"] = {m: catalog["models"][m] for m in ("llama-3.1-8b", "llama-3.2-1b")}
    catalog["models"]["llama-3.1-8b"]["source"] = HOSTILE_SCRIPT
    catalog["models"]["llama-3.2-1b"]["source"] = HOSTILE_FORMULA
    models = folder / "models.yaml"
    models.write_text(yaml.safe_dump(catalog, sort_keys=False))
    grid = folder / "grid.yaml"
    grid.write_text(yaml.safe_dump({"grid": {
        "models": ["llama-3.1-8b", "llama-3.2-1b"], "gpus": ["h100-sxm"], "weights": ["bf16"],
        "kv": ["bf16"], "context": [8192], "batch": [1], "tp": [1]}}))
    run_build(models, DEFAULT_GPUS, grid, folder / "out", {"gpu_memory_utilization": 0.85})
    return (folder / "out" / HTML_NAME).read_text(encoding="utf-8")


def grid_rows(workbook: Path) -> dict[str, dict[str, Value]]:
    """Cached values of the Grid sheet, keyed like the page's data-config attributes."""
    wb = openpyxl.load_workbook(workbook, data_only=True, read_only=True)
    try:
        rows = wb["Grid"].iter_rows(values_only=True)
        header = [str(h) for h in next(rows)]
        config = [header.index(h) for h in CONFIG_HEADERS]
        wanted = {name: header.index(f"{ROW_BY_NAME[name].label} [{ROW_BY_NAME[name].unit}]")
                  for name in SHOWN}
        return {"|".join(str(row[i]) for i in config): {n: row[i] for n, i in wanted.items()}
                for row in rows}
    finally:
        wb.close()


def headline_rows(page: str) -> dict[str, str]:
    """The headline table's rows that show a configuration: data-config -> the row's text."""
    found = re.findall(r'<tr data-config="([^"]+)">(.*?)</tr>', page, flags=re.S)
    return {html.unescape(key): html.unescape(body) for key, body in found}


@pytest.mark.slow  # the default build's page against its workbook
def test_headline_numbers_are_the_workbooks_cached_values(default_build: Path) -> None:
    page = (default_build / HTML_NAME).read_text(encoding="utf-8")
    shown = headline_rows(page)
    assert len(shown) >= 20
    cached = grid_rows(default_build / WORKBOOK_NAME)
    checked = 0
    for key, body in list(shown.items())[:: max(1, len(shown) // 25)]:
        assert key in cached, f"the page shows {key}, which is not a Grid row"
        for name in SHOWN:
            expected = value_text(cached[key][name], ROW_BY_NAME[name])
            assert f">{expected}<" in body, f"{key}: {name} should read {expected}"
            checked += 1
    assert checked >= 20 * len(SHOWN) // 2


@pytest.mark.slow  # the default build's page against its workbook
def test_every_headline_cell_is_its_quantity_in_header_order(default_build: Path) -> None:
    """Every row, every number cell, in the order of the table's header: swapping two columns
    (decode throughput and per-user speed, say) cannot pass."""
    page = (default_build / HTML_NAME).read_text(encoding="utf-8")
    start = page.index('<table class="answers">')
    answers = page[start:page.index("</table>", start)]
    header = re.findall(r'<th scope="col"[^>]*>(.*?)(?:<br>|</th>)', answers)
    labels = {"Sequences that fit": "max_sequences",
              "Decode throughput, whole replica": "decode_tokens_per_second",
              "Per-user speed": "tokens_per_second_per_sequence",
              "Cost per million tokens": "cost_per_million_tokens"}
    order = [labels[h.strip()] for h in header if h.strip() in labels]
    assert order == list(SHOWN)
    cached = grid_rows(default_build / WORKBOOK_NAME)
    rows = headline_rows(page)
    assert len(rows) >= 20
    for key, body in rows.items():
        numbers = re.findall(r'<td class="num">(.*?)</td>', body)[:len(order)]
        expected = [value_text(cached[key][name], ROW_BY_NAME[name]) for name in order]
        assert numbers == expected, key


def test_headline_answers_every_model_and_says_when_nothing_fits(page: str) -> None:
    for entry in load_models().entries.values():
        assert entry.id in page
        assert html.escape(entry.name) in page
    answers = page[page.index('id="answers"'):page.index('id="fit"')]
    assert answers.count('<tbody class="model">') == len(load_models().entries)
    assert "Nothing in the grid fits 32 sequences of 128K tokens" in answers


def test_nothing_external_is_referenced(page: str) -> None:
    loads = re.sub(r'<a href="https://[^"]*">[^<]*</a>', "", page)
    assert set(re.findall(r"https?://[^\s\"'<>)]*", loads)) == {SVG_NS}
    lowered = page.lower()
    for needle in ("<script", "<link", "src=", "@import", "url(", "<iframe", "<img"):
        assert needle not in lowered, needle
    # links to sources are links, not loads: only in <a href>, and only to the web
    assert all(href.startswith(("#", "https://")) for href in re.findall(r'href="([^"]*)"', page))


def test_charts_are_inline_svg_with_titles_and_size(page: str) -> None:
    charts = re.findall(r"<svg\b.*?</svg>", page, flags=re.S)
    assert len(charts) >= 4
    for svg in charts:
        assert "<title" in svg and "<desc" in svg
        view_box = re.search(r'viewBox="0 0 ([\d.]+) ([\d.]+)"', svg)
        assert view_box and float(view_box[1]) > 100 and float(view_box[2]) > 100
    for title in ("Sequences that fit vs context", "Decode throughput vs concurrency",
                  "Per-user speed vs concurrency", "Cost per million tokens",
                  "KV cache vs weights"):
        assert title in page
    assert "memory-bound" in page


def test_evidence_sections(page: str) -> None:
    for section in ("assumptions", "method", "sources", "generation"):
        assert f'id="{section}"' in page
    for name in ("gpu_memory_utilization", "bytes_per_param_int4", *ROW_BY_NAME):
        assert name in page
    assert "sha256" in page and "GiB = 2<sup>30</sup>" in page
    assert "@media print" in page and "@page" in page and "break-inside: avoid" in page


def test_accuracy_section_quotes_the_measured_figures(page: str) -> None:
    """The page says how close the planner came to real engines, from the shipped summary that
    docs/generate_accuracy.py writes (tests/test_accuracy.py keeps it current)."""
    from planner.evidence.measured import MEASURED, load_measured

    data = load_measured(MEASURED)
    assert data is not None
    section = page[page.index('id="accuracy"'):page.index('id="assumptions"')]
    kv = data["kv_pool"]
    assert f"within ±5%\nof the engine's on {kv['within_5_percent']} of {kv['points']}" in section
    steady = data["throughput_steady_state"]
    assert f"{steady['within_25_percent']} of {steady['runs']}" in section
    ttft = data["ttft_no_queue"]
    assert (f"<b>Time to first token</b>: with no queue, the engine&#39;s first token came a "
            f"median {ttft['median_ratio']:.1f}× ") in section
    mi300x = data["steady_state_by_gpu"]["mi300x"]  # a GPU of the default grid
    row = f"AMD Instinct MI300X</th><td class=\"num\">{mi300x['within_25_percent']} of " \
          f"{mi300x['runs']}</td>\n<td class=\"num\">{mi300x['median_ratio']:.2f}</td>"
    assert row in section
    # other engines ran on the MI300X too, so the plan's engine (vLLM) gets a row of its own
    pair = data["steady_state_by_gpu_and_engine"]["mi300x"]["vllm"]
    assert pair["runs"] < mi300x["runs"]
    assert (f"AMD Instinct MI300X with vllm</th><td class=\"num\">{pair['within_25_percent']} "
            f"of {pair['runs']}</td>") in section
    assert "NVIDIA L40S</th><td class=\"num\">no published run compared" in section
    assert "NVIDIA L40S with" not in section  # no run on it, nothing to split


def test_a_copy_without_the_summary_says_so(tmp_path: Path) -> None:
    from planner.evidence.measured import load_measured

    assert load_measured(tmp_path / "absent.yaml") is None
    template = environment().get_template("_accuracy.html.j2")
    assert "carries no measured-accuracy summary" in template.render(accuracy=None)


def test_hostile_catalog_text_is_shown_as_text(hostile_page: str) -> None:
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in hostile_page
    assert "<script" not in hostile_page.lower()
    assert f"<td>{escape(HOSTILE_FORMULA)}</td>" in hostile_page
    assert all(href.startswith(("#", "https://"))
               for href in re.findall(r'href="([^"]*)"', hostile_page))


def test_overrides_are_marked(hostile_page: str, page: str) -> None:
    assert "gpu_memory_utilization=0.85" in hostile_page
    assert "Changed for this plan</span>" in hostile_page
    assert "Changed for this plan</span>" not in page


def test_templates_are_strict_and_free_of_arithmetic() -> None:
    with pytest.raises(UndefinedError):
        environment().from_string("{{ missing }}").render()
    assert environment().from_string("{{ x }}").render(x="<b>") == "&lt;b&gt;"
    for template in TEMPLATE_DIR.glob("*.j2"):
        for tag in re.findall(r"{{.*?}}|{%.*?%}", template.read_text(), flags=re.S):
            assert not re.search(r"\s[-+*/%]\s|\bmax\(|\bmin\(|\bsum\(", tag), (template, tag)


def test_readable_formula() -> None:
    formula = readable_formula(ROW_BY_NAME["cost_per_million_tokens"].expr)
    assert formula == ('IF(fits, (((gpu.price_per_hour_usd × tp) / 3600) / '
                       'decode_tokens_per_second) × 10^6, "does not fit")')
    assert '"engine"' in readable_formula(ROW_BY_NAME["gpu_memory_bytes"].expr)


# --------------------------------------------------------------------------------------------
# Headless Chromium
# --------------------------------------------------------------------------------------------

CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                  "--no-first-run", "--disable-background-networking",
                  "--disable-component-update", "--disable-sync", "--hide-scrollbars",
                  "--window-size=1280,2000"]
MEASURE = """<script>
const sizes = [...document.querySelectorAll("svg")].filter(s => s.getClientRects().length)
  .map(s => {
  const r = s.getBoundingClientRect(); return `${Math.round(r.width)}x${Math.round(r.height)}`; });
const out = document.createElement("pre");
out.id = "measured";
out.textContent = `charts ${sizes.join(" ")}; page ${document.documentElement.scrollWidth}`;
document.body.appendChild(out);
</script>"""


def require_chromium() -> str:
    require_marked("chromium")
    path = shutil.which("chromium") or shutil.which("chromium-browser")
    if path is None:
        if os.environ.get("CI") == "true":
            pytest.fail("Chromium is required when CI=true; .ci/run installs Debian's chromium")
        pytest.skip("Chromium is not installed (apt-get install chromium); browser checks "
                    "skipped")
    return path


def chromium(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    profile = tmp_path / f"profile-{len(list(tmp_path.glob('profile-*')))}"
    return subprocess.run([require_chromium(), *CHROMIUM_FLAGS, f"--user-data-dir={profile}",
                           *args], capture_output=True, text=True, timeout=180)


@pytest.mark.chromium
def test_chromium_screenshot_and_pdf(default_build: Path, tmp_path: Path) -> None:
    url = (default_build / HTML_NAME).as_uri()
    shot, pdf = tmp_path / "shot.png", tmp_path / "plan.pdf"
    chromium(tmp_path, f"--screenshot={shot}", url)
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and shot.stat().st_size > 20_000
    chromium(tmp_path, "--no-pdf-header-footer", f"--print-to-pdf={pdf}", url)
    assert pdf.read_bytes()[:5] == b"%PDF-" and pdf.stat().st_size > 50_000


@pytest.mark.chromium
def test_chromium_lays_out_charts_without_errors(page: str, tmp_path: Path) -> None:
    """A copy with a measuring script (the product has none): every chart has a real size,
    nothing is wider than the window, and the console stays silent."""
    probe = tmp_path / "probe.html"
    probe.write_text(page.replace("</body>", MEASURE + "</body>"), encoding="utf-8")
    result = chromium(tmp_path, "--enable-logging=stderr", "--v=0", "--dump-dom", probe.as_uri())
    measured = re.search(r'<pre id="measured">charts (.*?); page (\d+)</pre>', result.stdout)
    assert measured, result.stderr[-2000:]
    sizes = [tuple(map(int, s.split("x"))) for s in measured.group(1).split()]
    assert len(sizes) == page.count("<svg") // 2  # each chart is drawn twice: page and phone
    assert all(w > 300 and h > 150 for w, h in sizes), sizes
    assert int(measured.group(2)) <= 1280
    console = [line for line in result.stderr.splitlines() if "CONSOLE" in line]
    assert console == []


@pytest.mark.chromium
def test_chromium_console_check_catches_errors(tmp_path: Path) -> None:
    """The console check above is real: a page with a script error is caught."""
    bad = tmp_path / "bad.html"
    bad.write_text("<!DOCTYPE html><p>x</p><script>notDefined();</script>")
    result = chromium(tmp_path, "--enable-logging=stderr", "--v=0", "--dump-dom", bad.as_uri())
    assert any("CONSOLE" in line and "Uncaught" in line for line in result.stderr.splitlines())


# --------------------------------------------------------------------------------------------
# The budget answer comes first and shows what `planner size` computes
# --------------------------------------------------------------------------------------------

@pytest.fixture(scope="session")
def sized_text() -> str:
    """What `planner size` prints for the shipped catalogs."""
    from click.testing import CliRunner

    from planner.cli import cli

    return CliRunner().invoke(cli, ["size"]).output


def section(page: str, name: str) -> str:
    start = page.index(f'<section id="{name}"')
    return page[start:page.index("</section>", start)]


def card_of(page: str, workload: str) -> str:
    start = page.index('<article class="budget ')
    start = page.index(f'id="workload-{workload}"', start)
    return page[start:page.index("</article>", start)]


def under(label: str, text: str) -> str:
    """The figure under its own label: a decision figure (<dt>) or a card row (<th>)."""
    found = re.search(rf"<dt>{re.escape(label)}</dt><dd class=\"value\">(.*?)</dd>", text) or \
        re.search(rf'<th scope="row">{re.escape(label)}</th><td><span class="figure">(.*?)'
                  r"</span>", text)
    assert found, f"no figure labelled {label}"
    return html.unescape(re.sub(r"<[^>]+>", "", found.group(1))).strip()


def test_decision_comes_first_and_each_figure_is_sizes(page: str, sized_json: dict,
                                                         sized_text: str) -> None:
    """Capex under "Capex", opex under "Opex per year", TCO under "TCO", the order's totals in
    its Total row: each equal to what `planner size` prints."""
    from planner.outputs.terminal import money

    sections = re.findall(r'<section id="([a-z]+)"', page)
    assert sections[:2] == ["decision", "budget"]
    decision = section(page, "decision")
    totals = sized_json["totals"]
    assert under("Capex", decision) == money(totals["capex_usd"])
    assert under("Opex per year", decision) == money(totals["opex_usd_per_year"])
    assert under("TCO", decision) == money(totals["tco_usd"])
    total = re.search(r"<tfoot>(.*?)</tfoot>", decision, flags=re.S)
    assert total
    cells = [html.unescape(re.sub(r"<[^>]+>", "", c)).strip()
             for c in re.findall(r"<t[hd][^>]*>(.*?)</t[hd]>", total.group(1))]
    line = re.search(r"Total: ([\d,]+) GPUs bought in ([\d,]+) servers, ([\d,]+) racks packed, "
                     r"([\d,.]+) kW IT", sized_text)
    assert line, sized_text[-800:]
    gpus, servers, racks, kw = line.groups()
    assert cells[1] == servers == f"{totals['servers']:,}"
    assert cells[3] == f"{gpus} GPUs"
    assert cells[4] == f"{racks} racks packed"
    assert cells[5] == f"{kw} kW" == f"{totals['it_power_w'] / 1000:,.1f} kW"
    # the verdict per workload, as `planner size` words it
    verdicts = decision[decision.index('<table class="verdicts">'):]
    for w in sized_json["workloads"]:
        row = re.search(rf'<a href="#workload-{w["workload"]}">.*?</tr>', verdicts, flags=re.S)
        assert row, w["workload"]
        block = sized_text[sized_text.index(f"[{w['workload']}]"):]
        saving = re.search(r"saves (\$[\d,.]+)/year", block)
        assert saving and f'<td class="num">{saving.group(1)}</td>' in row.group(0)
        verdict = re.search(r"Verdict: ([A-Za-z0-9 -]+)\.", block)
        assert verdict and verdict.group(1).lower().replace("rent ", "rent, ") in row.group(0)


def test_each_card_shows_what_size_computes(page: str, sized_json: dict) -> None:
    from planner.outputs.terminal import money, seconds_text

    for w in sized_json["workloads"]:
        card = card_of(page, w["workload"])
        assert under("Capex", card) == money(w["capex_usd"])
        assert under("Opex per year", card) == money(w["opex_usd_per_year"])
        assert under("TCO", card) == money(w["tco_usd"])
        rent = re.search(r'<tr data-row="rent">(.*?)</tr>', card, flags=re.S)
        assert rent and "rented" in rent.group(1)
        for key, label in (("cloud_usd_per_year", "on demand"),
                           ("cloud_reserved_usd_per_year", "1-year reserved")):
            assert f"{label} {html.escape(money(w[key]))}" in rent.group(1), key
        pct = f"p{w['latency_percentile']:g}"
        targets = card[card.index('<table class="targets">'):]
        for name, at, mean in (("ITL", "itl_percentile_seconds", "itl_seconds"),
                               ("TTFT", "ttft_percentile_seconds", "ttft_seconds")):
            row = re.search(rf">{name}</a>.*?</tr>|<td>{name} .*?</tr>", targets, flags=re.S)
            assert row, name
            assert f"{seconds_text(w[at])} at {pct}" in row.group(0)
            assert f"mean {seconds_text(w[mean])}" in row.group(0)
        copies = (f"{w['replicas']} {'copy' if w['replicas'] == 1 else 'copies'} of the model, "
                  f"each on {w['choice']['tp']} GPU{'s' if w['choice']['tp'] > 1 else ''}, up "
                  f"to {w['choice']['batch_per_replica']} request")
        assert copies in re.sub(r"<[^>]+>", "", card), copies


def test_every_tick_has_its_margin_and_an_at_risk_plan_none(page: str,
                                                            sized_json: dict) -> None:
    ticks = [m.start() for m in re.finditer("✓", page)]
    assert ticks
    for at in ticks:
        cell = page[at:min(page.index("</td>", at), page.index("</p>", at))]
        assert "margin" in cell, cell
    risky = [w for w in sized_json["workloads"] if w["at_risk"]]
    assert risky, "the shipped plan has a workload at risk; the check below needs one"
    for w in sized_json["workloads"]:
        card = card_of(page, w["workload"])
        assert ("✓" in card) != w["at_risk"], w["workload"]
        if w["at_risk"]:
            assert "at risk" in card and f"{w['replicas_pessimistic']} replicas" in card
            assert "⚠" in card
    warning = re.search(r'<p class="warning">(.*?)</p>', section(page, "decision"), flags=re.S)
    assert warning and "at risk" in warning.group(1)
    for w in risky:
        assert f'href="#workload-{w["workload"]}"' in warning.group(1)


def test_prices_say_where_they_come_from(page: str, sized_json: dict) -> None:
    """Each card links its server's price to a row saying how it was derived, when and from
    where; the cloud offers the verdict rents are listed likewise."""
    prices = section(page, "prices")
    for w in sized_json["workloads"]:
        server = w["choice"]["server"]
        buy = re.search(r'<tr data-row="buy">(.*?)</tr>', card_of(page, w["workload"]),
                        flags=re.S)
        assert buy and f'href="#server-{server}"' in buy.group(1)
        row = re.search(rf'<tr id="server-{server}">(.*?)</tr>', prices, flags=re.S)
        assert row, server
        assert re.search(r"<td class=\"date\">\d{4}-\d{2}</td>", row.group(1))
        assert "GPU-price rule" in row.group(1) or "price" in row.group(1)
        rent = re.search(r'<tr data-row="rent">(.*?)</tr>', card_of(page, w["workload"]),
                         flags=re.S)
        offer = re.search(r'href="#cloud-([^"]+)"', rent.group(1) if rent else "")
        assert offer, w["workload"]
        assert f'<tr id="cloud-{offer.group(1)}">' in prices
    assert "8 × $15,000 × 1.64 = $196,800" in prices  # the MI300X server, by the rule


def test_glossary_is_linked_from_the_first_use(page: str) -> None:
    from planner.outputs.html.glossary import TERMS

    glossary = page.index('<section id="glossary"')
    for term in TERMS:
        assert f'<dt id="{term.anchor}">' in page
        links = [m.start() for m in re.finditer(f'<a class="term" href="#{term.anchor}">', page)]
        assert len(links) == 1 and links[0] < glossary, term.id
    decision = section(page, "decision")
    assert '<a class="term" href="#term-percentile">p95</a>' in decision


def test_counts_read_in_plain_words(page: str) -> None:
    text = html.unescape(re.sub(r"<[^>]+>", "", page))
    wrong = re.findall(r"(?<![\d.,])1 (?:GPUs|servers|racks|copies|replicas|requests|workloads)"
                       r"\b", text)
    assert wrong == []
    assert re.search(r"\d+ copies of the model, each on \d+ GPUs?, up to \d+ requests? at once",
                     text)


def test_cost_chart_agrees_with_the_answers(page: str, default_plan: Plan) -> None:
    """The cost chart's cheapest is the Answers table's answer for the view's model at the
    same context (full-quality formats only), and says it is a rented cost at that context."""
    from planner.outputs.html.charts import cost_chart

    plan = default_plan
    chart = cost_chart(plan)
    cheapest = re.search(r'<g class="bar">.*?font-weight="bold"[^>]*>([^<]+)</text>', chart.svg)
    assert cheapest
    answers = section(page, "answers")
    model = plan.models.entries[plan.view.model].name
    block = answers[answers.index(html.escape(model)):]
    row = re.search(r"<td>32K</td>\s*<td class=\"cheapest\">(.*?)(?:<span|</td>).*?"
                    r'<td class="formats">(.*?)</td>', block, flags=re.S)
    assert row
    assert html.unescape(cheapest.group(1)) == f"{html.unescape(row.group(1))} · " \
        f"{html.unescape(row.group(2))}"
    assert "rented" in chart.svg and "32K tokens of context" in chart.caption
    assert "INT4" not in cheapest.group(1)


def test_cost_chart_bars_are_the_cheapest_in_policy_over_every_row(default_plan: Plan) -> None:
    """Each bar of the cost chart is its GPU × TP's cheapest fitting row in the precision
    policy, found again over every row of the grid."""
    from planner.outputs.html import selection as sel
    from planner.outputs.html.charts import policy_cheapest
    from planner.plan.summary import headline_batch, reference_context

    plan = default_plan
    context, batch = reference_context(plan.grid, plan.view), headline_batch(plan.grid)
    rows = [e for e in plan.rows if e.scenario.model == plan.view.model
            and e.scenario.context == context and e.scenario.batch == batch
            and e.scenario.prompt == plan.summary.prompt]
    expected: dict = {}
    for env in sel.fitting(sel.in_policy(rows) or rows):
        key = (env.scenario.gpu, env.scenario.tp)
        expected[key] = sel.cheapest([expected.get(key, env), env]) or env
    assert expected
    assert {k: e.scenario for k, e in policy_cheapest(plan).items()} == {
        k: e.scenario for k, e in expected.items()}


def test_nothing_fits_names_the_real_limit(page: str) -> None:
    """Beyond a model's context length nothing fits whatever the memory: the answer says so
    rather than quoting how many sequences would fit in memory."""
    answers = section(page, "answers")
    qwen = answers[answers.index("qwen2.5-7b"):]
    row = qwen[:qwen.index("</tbody>")]
    assert "128K tokens is beyond the model&#39;s context limit of 32,768 tokens" in row
    assert "at most" not in row.split("128K")[1][:200]
    assert "not enough memory for the KV cache" in answers


def test_old_prices_are_flagged(page: str) -> None:
    """A price dated more than 12 months before the build says so beside it, on every line of
    the budget that quotes a dated price, and only there."""
    import datetime as dt

    from planner.outputs.html.budget import months_old, price

    today = dt.date(2026, 4, 15)
    assert months_old("2025-03", today) == 13 and price("$1", "2025-03", today).stale
    assert months_old("2025-04", today) == 12 and not price("$1", "2025-04", today).stale
    budget = page[page.index('<section id="budget">'):page.index('<section id="answers">')]
    quoted = re.findall(r"as of (\d{4}-\d{2})(\s*<b class=\"stale\">)?", budget)
    assert quoted
    for date, flag in quoted:
        assert bool(flag) == (months_old(date, dt.date.today()) > 12), date


def test_a_price_grows_old_and_the_page_flags_it(monkeypatch: pytest.MonkeyPatch,
                                                default_plan: Plan) -> None:
    """The same plan rendered in 2040: every catalog price is then more than 12 months old, so
    each budget card flags its server price."""
    import datetime as dt

    import planner.outputs.html.budget as html_budget

    class Later(dt.date):
        @classmethod
        def today(cls) -> Later:
            return cls(2040, 1, 1)

    monkeypatch.setattr(html_budget.dt, "date", Later)
    context = html_budget.budget_context(default_plan)
    cards = context["budget"]
    assert cards and all(c.server_price.stale for c in cards)  # type: ignore[attr-defined]
    text = environment().get_template("_budget.html.j2").render(**context)
    assert text.count("(price older than 12 months)") >= len(cards)  # type: ignore[arg-type]


def test_own_catalogs_without_a_grid_use_every_entry(tmp_path) -> None:
    """An L40S-only GPU catalog: the shipped grid's GPUs are replaced by the catalog's, and the
    featured configuration (TP 1: an L40S has no NVLink) exists, so no section is empty."""
    catalog = yaml.safe_load(DEFAULT_GPUS.read_text())
    gpus = tmp_path / "gpus.yaml"
    gpus.write_text(yaml.safe_dump({"gpus": {"l40s": catalog["gpus"]["l40s"]}}))
    result = run_build(DEFAULT_MODELS, gpus, DEFAULT_GRID, tmp_path / "out", {}, None)
    assert result["rows"] > 0
    page = (tmp_path / "out" / HTML_NAME).read_text(encoding="utf-8")
    assert "no data" not in page.lower()
    assert page.count("<svg") >= 5


def test_concurrency_chart_marks_only_what_does_not_fit(default_plan: Plan) -> None:
    """Each marker of the "does not fit" series is a batch above the sequences that fit."""
    from planner.outputs.html.charts import _fit_split

    plan = default_plan
    base = plan.view.scenario()
    envs = [plan.row_env(base.__class__(**{**base.__dict__, "batch": b}))
            for b in (1, 2, 4, 8, 16, 32, 64, 128, 256, 512)]
    fits, over = _fit_split(envs, "decode_tokens_per_second")
    limit = envs[0].value("max_sequences")
    assert all(x <= limit for x, _ in fits.points)
    assert all(x > limit for x, _ in over.points)
    assert len(fits.points) + len(over.points) == len(envs)


def probe(tmp_path: Path, url: str, width: int, height: int, script: str,
          name: str = "probe.html") -> str:
    """Load `url` in an iframe of `width` × `height` px (headless Chromium windows are at least
    500 px wide) and run `script` on its document `d`; what the script puts in `out` comes
    back."""
    page = tmp_path / name
    page.write_text(f"""<!DOCTYPE html><html><body style="margin:0">
<iframe id="f" src="{url}" style="width:{width}px;height:{height}px;border:0"></iframe>
<script>
document.getElementById("f").onload = () => {{
  const d = document.getElementById("f").contentDocument;
  const w = document.getElementById("f").contentWindow;
  let out = "";
  {script}
  const pre = document.createElement("pre"); pre.id = "measured";
  pre.textContent = out; document.body.appendChild(pre);
}};
</script></body></html>""", encoding="utf-8")
    result = chromium(tmp_path, "--allow-file-access-from-files", "--virtual-time-budget=5000",
                      "--dump-dom", page.as_uri())
    measured = re.search(r'<pre id="measured">(.*?)</pre>', result.stdout, flags=re.S)
    assert measured, result.stderr[-2000:]
    return html.unescape(measured.group(1))


@pytest.mark.chromium
def test_phone_width_scrolls_tables_and_scales_charts(default_build: Path,
                                                      tmp_path: Path) -> None:
    """At 390 px the page stays 390 px wide: tables scroll inside their own box, and no chart
    is wider than the viewport (each is drawn again for a phone, its legend wrapped)."""
    out = probe(tmp_path, (default_build / HTML_NAME).as_uri(), 390, 800, """
  const sizes = [...d.querySelectorAll("svg")].filter(s => s.getClientRects().length)
    .map(s => Math.round(s.getBoundingClientRect().right));
  out = `charts ${sizes.join(" ")}; page ${d.documentElement.scrollWidth}; ` +
        `view ${d.documentElement.clientWidth}`;""")
    measured = re.match(r"charts (.*?); page (\d+); view (\d+)", out)
    assert measured, out
    rights = [int(w) for w in measured.group(1).split()]
    view = int(measured.group(3))
    assert int(measured.group(2)) <= 390
    assert len(rights) >= 5 and max(rights) <= view, rights


FIRST_SCREEN = ("order", "Capex", "Opex per year", "TCO", "verdict")


@pytest.mark.chromium
def test_first_screen_carries_the_decision(default_build: Path, tmp_path: Path) -> None:
    """At 1280 × 800 the order list (with its total), capex, opex, TCO and the buy-or-rent
    verdict are all inside the first 800 px."""
    out = probe(tmp_path, (default_build / HTML_NAME).as_uri(), 1280, 800, """
  const bottom = e => e ? Math.round(e.getBoundingClientRect().bottom) : -1;
  const figure = label => [...d.querySelectorAll("dl.figures dt")]
    .find(e => e.textContent === label);
  out = [
    "order " + bottom(d.querySelector("table.order tfoot")),
    ...["Capex", "Opex per year", "TCO"].map(
      l => l + " " + bottom(figure(l) && figure(l).parentElement)),
    "verdict " + bottom(d.querySelector("p.headline")),
    "verdicts " + bottom(d.querySelector("table.verdicts")),
  ].join("\\n");""")
    found = dict(line.rsplit(" ", 1) for line in out.splitlines())
    for what in FIRST_SCREEN:
        assert 0 < int(found[what]) <= 800, (what, found)


PRINTABLE_PX = 687  # A4 (210 mm) less the 14 mm margins of @page, at 96 px per inch


@pytest.mark.chromium
def test_print_is_a_short_attachment(default_build: Path, tmp_path: Path) -> None:
    """Chromium's print-to-PDF of the default build is at most 15 pages, and with the print
    styles applied at the printable width of A4 (narrower than Letter) no table is wider
    than the page."""
    pdf = tmp_path / "plan.pdf"
    chromium(tmp_path, "--no-pdf-header-footer", f"--print-to-pdf={pdf}",
             (default_build / HTML_NAME).as_uri())
    pages = len(re.findall(rb"/Type\s*/Page(?![a-zA-Z])", pdf.read_bytes()))
    assert 1 <= pages <= 15, pages
    printed = tmp_path / "printed.html"
    printed.write_text((default_build / HTML_NAME).read_text(encoding="utf-8")
                       .replace("@media print", "@media all"), encoding="utf-8")
    out = probe(tmp_path, printed.as_uri(), PRINTABLE_PX, 1000, """
  const wide = [...d.querySelectorAll("table")].filter(t => t.getClientRects().length)
    .filter(t => t.getBoundingClientRect().right > d.documentElement.clientWidth + 1)
    .map(t => (t.querySelector("caption") || t).textContent.trim().slice(0, 60));
  out = `page ${d.documentElement.scrollWidth}; wide ${JSON.stringify(wide)}`;""",
                name="print-probe.html")
    measured = re.match(r"page (\d+); wide (.*)", out)
    assert measured, out
    assert measured.group(2) == "[]", measured.group(2)
    assert int(measured.group(1)) <= PRINTABLE_PX


def test_every_table_has_a_caption(page: str) -> None:
    tables = page.count("<table")
    assert tables > 5
    assert len(re.findall(r"<table[^>]*>\s*<caption", page)) == tables


@pytest.mark.slow  # sizes the shipped workloads (and their sensitivity) again
def test_a_workload_that_cannot_be_met_says_why_and_is_left_out(tmp_path: Path) -> None:
    """A workload whose ITL target no GPU meets: its card says "cannot be met: <reason>", the
    first screen warns, and the order and every total leave it out, as `planner size` does."""
    from planner.inputs.catalog import DEFAULT_WORKLOADS
    from planner.outputs.html.report import render_html
    from planner.outputs.terminal import money
    from planner.plan.plan import build_plan
    from planner.plan.sizing import size_json

    catalog = yaml.safe_load(DEFAULT_WORKLOADS.read_text())
    catalog["workloads"]["code-completion-7b"]["itl_s"] = 0.0001
    workloads = tmp_path / "workloads.yaml"
    workloads.write_text(yaml.safe_dump(catalog, sort_keys=False))
    plan = build_plan(DEFAULT_MODELS, DEFAULT_GPUS, DEFAULT_GRID, workloads_path=workloads)
    unmet = [s for s in plan.sized if not s.met]
    assert [s.workload.id for s in unmet] == ["code-completion-7b"]
    page = render_html(plan)
    card = card_of(page, "code-completion-7b")
    assert f"cannot be met: {html.escape(unmet[0].cannot_meet or '', quote=True)}" in card
    assert "✓" not in card and "Capex" not in card
    decision = section(page, "decision")
    warning = re.search(r'<p class="warning">(.*?)</p>', decision, flags=re.S)
    assert warning and "cannot be met" in warning.group(1)
    assert 'href="#workload-code-completion-7b"' in warning.group(1)
    totals = size_json(plan.sized)["totals"]
    assert totals["workloads_sized"] == len(plan.sized) - 1
    assert under("Capex", decision) == money(totals["capex_usd"])  # type: ignore[arg-type]
    assert under("TCO", decision) == money(totals["tco_usd"])  # type: ignore[arg-type]
    assert "4 of 5 workloads" in decision


@pytest.mark.slow  # sizes the shipped workloads (and their sensitivity) twice more
def test_the_verdict_leads_with_what_wins() -> None:
    """Cheap power and a long life make owning win: the first screen leads with the order and
    says buy; a middle case says which workloads to rent and which to buy."""
    from planner.outputs.html.decision import decision_context
    from planner.outputs.html.glossary import Linker
    from planner.plan.plan import build_plan

    cheap = {"colocation_usd_per_kw_month": 0, "electricity_usd_per_kwh": 0.0,
             "amortisation_years": 8}
    d = decision_context(build_plan(DEFAULT_MODELS, DEFAULT_GPUS, DEFAULT_GRID, cheap),
                         Linker())["decision"]
    assert d["headline"].startswith("Buy.") and not d["rent_wins"]  # type: ignore[index]
    assert d["order_caption"] == "The order"  # type: ignore[index]
    assert [f.key for f in d["figures"]][:3] == ["capex", "opex", "tco"]  # type: ignore[index]
    mixed = decision_context(build_plan(DEFAULT_MODELS, DEFAULT_GPUS, DEFAULT_GRID,
                                        {"colocation_usd_per_kw_month": 60}), Linker())
    verdicts = {r.verdict for r in mixed["decision"]["rows"]}  # type: ignore[index]
    assert "buy" in verdicts and any(v.startswith("rent") for v in verdicts)
    assert mixed["decision"]["headline"].startswith("Rent for ")  # type: ignore[index]
