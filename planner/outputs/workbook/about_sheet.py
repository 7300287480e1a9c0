"""The opening sheet: what the workbook is, what to edit, units, and how it was made."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from openpyxl.utils import quote_sheetname

from planner.outputs.workbook import styles
from planner.outputs.workbook.cache import Deferred
from planner.outputs.workbook.cells import Formula, Link, SheetWriter, Styled
from planner.outputs.workbook.layout import (
    ASSUMPTIONS,
    BUDGET,
    CAPACITY,
    CHARTS,
    CHECKS,
    CLOUDS,
    FLEET,
    FORMATS,
    GPUS,
    GRID,
    METHOD,
    MODELS,
    SCENARIOS,
    SENSITIVITY,
    SERVERS,
    VIEW_DATA,
    WORKLOADS,
)
from planner.plan.plan import Plan

CONTENTS = {  # what each sheet is, in a line
    BUDGET: "the order list and the decision: servers, GPUs, power, capex, opex, TCO, buy or "
            "rent per workload, fleet totals and the fleet verdict",
    CHECKS: "every check of the workbook's arithmetic; checks_ok is their master",
    SCENARIOS: "the budget totals under named scenarios, side by side",
    SENSITIVITY: "what moves the budget: each key input at a low and a high value",
    CAPACITY: "one model and GPU: context × concurrency tables (costs rented at full use)",
    CHARTS: "charts over the Capacity selection",
    GRID: "one row per configuration, every quantity (thousands of rows: not printed)",
    FLEET: "one row per workload × candidate, every sizing step",
    WORKLOADS: "traffic and latency targets (inputs)",
    SERVERS: "servers: price, price date, source, power, size (inputs)",
    CLOUDS: "cloud offers rented instead: prices per instance-hour (inputs)",
    ASSUMPTIONS: "site and finance inputs first (electricity, PUE, colocation, discount rate, "
                 "amortisation...), then the engine's",
    FORMATS: "bytes per parameter and per KV element of each format",
    MODELS: "model shapes with their sources",
    GPUS: "GPU specifications and prices with their sources",
    METHOD: "each column in words and as a formula",
    VIEW_DATA: "the rows behind the Capacity view and the charts (not printed)",
}


def contents_rows(sheets: Sequence[str]) -> list[list[Link | Styled | None]]:
    """A link to each sheet (never a bare sheet name in column A: `planner diff` reads the
    About sheet's labels) with what it holds."""
    return [[Link(f"→ {title}", f"{quote_sheetname(title)}!A1"),
             Styled(CONTENTS.get(title, ""), styles.WRAP)] for title in sheets
            if title != "About"]


PASS, FAIL = "All checks pass (see Checks)", "FAIL: see the Checks sheet"


def write_about(w: SheetWriter, plan: Plan, sheets: Sequence[str] = (),
                passed: Callable[[], bool] = lambda: True) -> None:
    w.widths([22, 100])
    styles.print_setup(w.ws, landscape=False)  # before the first row
    title = Styled("GPU capacity plan for LLM inference", styles.TITLE)
    lines: list[tuple[str, str]] = [
        ("What this is", "How much GPU it takes to serve each model, and what it costs, for "
         f"{len(plan.rows):,} configurations. Every derived number is a live formula over the "
         "blue input cells: change an input and everything downstream follows."),
        ("Cells to edit", "Blue text on a light-yellow fill is an input; every other cell is a "
         "formula and locked (sheet protection without a password: Review > Unprotect Sheet; "
         "columns and rows can still be resized). Grid and Fleet are not protected, so that "
         "they sort and filter in Excel: their formulas are black, their inputs blue."),
        ("", f"{ASSUMPTIONS}: the serving engine and its memory policy (an engine table), "
         "utilisation, runtime memory, efficiencies, site (PUE, electricity, racks, "
         "colocation) and finance (amortisation, discount rate, support, network share); each "
         "a workbook name (e.g. gpu_memory_utilization)."),
        ("", f"{WORKLOADS} and {SERVERS}: traffic, latency targets, and server prices, power "
         f"and size. {BUDGET} follows: each workload's choice is a formula over {FLEET}."),
        ("", f"{FORMATS}: bytes per parameter and per KV element of each format."),
        ("", f"{MODELS} and {GPUS}: catalog facts with their sources; prices per GPU-hour."),
        ("", f"{GRID}: the configuration columns (model, GPU, formats, TP, context, "
         "concurrency, prompt) of each row."),
        ("", f"{CAPACITY}: choose a model, GPU and formats from the drop-down lists; edit the "
         "context lengths and concurrencies of the tables."),
        ("Units", "Base units in every cell: bytes, seconds, FLOPs, tokens, USD. GB = 10^9 "
         "bytes, GiB = 2^30 bytes, MiB = 2^20 bytes; headers say which. Byte columns hold bytes "
         "and are shown in GB (decimal) by their number format."),
        ("Estimates", "Memory and fit are exact arithmetic on published shapes and the engine's "
         "memory policy. Decode speed, TTFT, fleet sizes and costs are estimates that depend on "
         "the efficiencies, the engine's per-step costs and the dated prices; MoE decode "
         "assumes uniform independent expert routing; TTFT queueing is M/D/1 on prefill "
         "(means, not p95/p99)."),
        ("Cached values", "Each formula also stores the value computed when the file was "
         "generated, so previews that do not calculate show numbers; Excel and LibreOffice "
         "recalculate on open."),
        ("Generated by", f"planner {plan.version} on {plan.generated}"),
        ("Model catalog", f"{plan.models.path.name}  sha256 {plan.models.sha256}"),
        ("GPU catalog", f"{plan.gpus.path.name}  sha256 {plan.gpus.sha256}"),
        ("Server catalog", f"{plan.servers.path.name}  sha256 {plan.servers.sha256}"),
        ("Workload catalog", f"{plan.workloads.path.name}  sha256 {plan.workloads.sha256}"),
        ("Grid", f"{plan.grid.path.name}: {len(plan.rows):,} rows; skipped: " + ", ".join(
            f"{n} ({why})" for why, n in plan.grid.skipped.items()) or "none"),
        ("--set overrides", ", ".join(f"{k}={v}" for k, v in plan.overrides.items())
         or "none (all assumptions at their defaults)"),
    ]
    w.append([title])
    w.append([])
    w.append([Styled("Checks", styles.HEADER), Formula(
        f'=IF(checks_ok,"{PASS}","{FAIL}")', Deferred(lambda: PASS if passed() else FAIL))])
    w.append([])
    w.append([Styled("Contents", styles.TITLE)])
    for row in contents_rows(sheets):
        w.append(row)
    w.append([])
    for label, text in lines:
        lines_needed = 1 + len(text) // 110  # wrapped text: spreadsheets do not grow rows
        w.ws.row_dimensions[w.row + 1].height = 15 * lines_needed
        w.append([Styled(label, styles.HEADER if label else styles.TEXT),
                  Styled(text, styles.WRAP)])
    styles.protect(w.ws)
