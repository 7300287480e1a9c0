"""How the HTML summary writes a grid row's numbers and configuration as text: every number goes
through :func:`planner.outputs.terminal.value_text`, so the page shows the values the workbook
caches, with their units, and a configuration reads as "8 × H200 SXM 141GB, FP8 weights, BF16 KV".
The sections of the page (answers, capacity tables, charts) write their cells with these."""

from __future__ import annotations

from planner.inputs.entries import Entry
from planner.inputs.scenario import Scenario
from planner.model.quantities import ROW_BY_NAME
from planner.outputs.html.svgcharts import format_si
from planner.outputs.terminal import value_text
from planner.plan.calc import Evaluated
from planner.plan.plan import Plan


def text(env: Evaluated, name: str) -> str:
    """A quantity's value with its unit, exactly as the terminal and the page show it."""
    return value_text(env.value(name), ROW_BY_NAME[name])


def bare(env: Evaluated, name: str) -> str:
    """The same text without the unit, for table cells whose header names the unit."""
    quantity = ROW_BY_NAME[name]
    return text(env, name).removesuffix(f" {quantity.unit}")


def tokens_label(tokens: int) -> str:
    """A context length as readers say it: 32768 -> "32K" (K = 1,024 tokens)."""
    return format_si(tokens)


def fmt_id(fmt: str) -> str:
    return fmt.upper()


def gpu_short(gpu: Entry) -> str:
    vendor = gpu.text("vendor")
    return gpu.name.removeprefix(f"{vendor} ") if vendor else gpu.name


def replica_text(plan: Plan, s: Scenario) -> str:
    return f"{s.tp} × {gpu_short(plan.gpus.entries[s.gpu])}"


def formats_text(s: Scenario) -> str:
    return f"{fmt_id(s.weights)} / {fmt_id(s.kv)}"


def config_text(plan: Plan, s: Scenario) -> str:
    return f"{replica_text(plan, s)}, {fmt_id(s.weights)} weights, {fmt_id(s.kv)} KV"


def scenario_key(s: Scenario) -> str:
    """The configuration columns of the workbook's Grid row, for tests and auditors."""
    return "|".join(str(v) for v in (s.model, s.gpu, s.weights, s.kv, s.tp, s.context,
                                      s.batch, s.prompt))


IRREGULAR = {"copy": "copies", "is": "are", "runs": "run", "needs": "need"}


def plural(n: int, noun: str) -> str:
    """The noun for a count: plural(1, "GPU") -> "GPU", plural(2, "copy") -> "copies"."""
    return noun if n == 1 else IRREGULAR.get(noun, noun + "s")


def count(n: int, noun: str) -> str:
    """A count with its noun: count(1, "GPU") -> "1 GPU", count(24, "server") -> "24 servers"."""
    return f"{n:,} {plural(n, noun)}"
