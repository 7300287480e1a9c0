"""Where the page's prices come from: for each server, how its price was derived (a quote, a
reported or list price, or the catalog's GPU-price rule: GPUs × GPU price × server/GPU cost
ratio), its date and its source; and the cloud offers the buy-or-rent verdict rents, with their
prices per instance-hour, date and source. Every workload card links to the rows it uses."""

from __future__ import annotations

import re
from dataclasses import dataclass

from markupsafe import Markup

from planner.inputs.entries import Entry
from planner.outputs.html.sources import linked
from planner.outputs.terminal import money
from planner.plan.plan import Plan
from planner.plan.sizing import bought


def server_anchor(server_id: str) -> str:
    return f"server-{server_id}"


def cloud_anchor(offer_id: str) -> str:
    return f"cloud-{offer_id}"


def _parts(text: str) -> list[str]:
    """A catalog source split at its top-level "; " (not inside parentheses)."""
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        depth += {"(": 1, ")": -1}.get(ch, 0)
        if ch == ";" and depth == 0:
            parts.append(text[start:i].strip())
            start = i + 1
    parts.append(text[start:].strip())
    return [p for p in parts if p]


def price_part(source: str) -> str:
    """The part of a server's source that says where its price comes from."""
    for part in _parts(source):
        match = re.search(r"\bprice:\s*", part)
        if match:
            return part[match.end():]
    return ""


RULE = re.compile(r"\bx 1\.\d\d\b")


def cited(price_text: str) -> str:
    """What a rule-derived price cites (the parentheses of its arithmetic), else the text."""
    inner = re.findall(r"\(([^()]*)\)", price_text)
    return "; ".join(inner) if inner and price_text.startswith("estimate") else price_text


def derivation(price_text: str) -> tuple[str, str]:
    """How a price was got (its kind) and the arithmetic or figure, parentheses left out:
    ("GPU-price rule", "8 × $15,000 × 1.64 = $196,800")."""
    bare = re.sub(r"\s*\([^()]*\)", "", price_text).strip()  # the arithmetic alone
    bare = re.sub(r"^estimate:\s*", "", bare)
    arithmetic = bare.replace(" x ", " × ")
    lowered = price_text.lower()
    if price_text.startswith("estimate") and RULE.search(price_text):
        return "GPU-price rule", arithmetic
    if price_text.startswith("estimate"):
        return "estimate from the GPU price", arithmetic
    if "quote" in lowered:
        return "quote", ""
    if "list" in lowered or "msrp" in lowered:
        return "list price", ""
    return "reported price", ""


@dataclass(frozen=True)
class ServerPrice:
    id: str
    anchor: str
    name: str
    gpus: str
    price: str
    date: str
    kind: str
    arithmetic: str
    source: Markup
    used_by: str
    printed: bool  # the print keeps the servers the plan chose


def server_rows(plan: Plan) -> list[ServerPrice]:
    """Every server a workload card names (chosen or as another option), in catalog order."""
    used: dict[str, list[str]] = {}
    for sized in plan.sized:
        for env in sized.rows:
            names = used.setdefault(env.server.id, [])
            if sized.workload.id not in names:
                names.append(sized.workload.id)
    chosen = {e.server.id for e in bought(plan.sized)}
    rows = []
    for server in plan.servers.entries.values():
        if server.id not in used:
            continue
        text = price_part(server.source)
        kind, arithmetic = derivation(text) if text else ("not stated", "")
        cites = cited(text) if text else server.source
        gpu = plan.gpus.entries.get(server.text("gpu"))
        if kind == "GPU-price rule" and gpu is not None and gpu.text("price_source"):
            cites += f"; the GPU's price ({gpu.text('price_date')}): {gpu.text('price_source')}"
        rows.append(ServerPrice(
            server.id, server_anchor(server.id), server.name.split(" (")[0],
            f"{int(server.number('gpus_per_server'))} × {server.text('gpu')}",
            money(float(server.number("price_usd"))), server.text("price_date"), kind,
            arithmetic, linked(cites),
            "chosen" if server.id in chosen else "other option", server.id in chosen))
    return rows


@dataclass(frozen=True)
class CloudOffer:
    id: str
    anchor: str
    provider: str
    instance: str
    gpus: str
    on_demand: str
    reserved_1y: str
    reserved_3y: str
    date: str
    source: Markup
    notes: Markup
    workloads: str


def _hourly(offer: Entry, field: str) -> str:
    return f"${float(offer.number(field)):,.2f}"


def cloud_rows(plan: Plan) -> list[CloudOffer]:
    """The offers the verdict rents for the workloads that are met, in catalog order."""
    users: dict[str, list[str]] = {}
    for env in bought(plan.sized):
        if env.offer is not None:
            users.setdefault(env.offer.id, []).append(env.workload.id)
    return [CloudOffer(o.id, cloud_anchor(o.id), o.text("provider"), o.text("instance"),
                       f"{int(o.number('gpus_per_instance'))} × {o.text('gpu')}",
                       _hourly(o, "on_demand_usd_per_hour"),
                       _hourly(o, "reserved_1y_usd_per_hour"),
                       _hourly(o, "reserved_3y_usd_per_hour"), o.text("price_date"),
                       linked(o.source), linked(o.text("notes")), ", ".join(users[o.id]))
            for o in plan.clouds.entries.values() if o.id in users]
