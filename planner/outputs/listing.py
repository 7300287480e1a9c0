"""What `planner list` shows: the ids other commands accept, with a few facts each."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from planner.inputs.assumptions import ASSUMPTIONS
from planner.inputs.catalog import load_gpus, load_models
from planner.model.formats import KV_FORMATS, WEIGHT_FORMATS
from planner.plan.calc import model_quantities


def listing(what: str, models_path: Path, gpus_path: Path) -> list[dict[str, Any]]:
    if what == "models":
        out = []
        for m in load_models(models_path).entries.values():
            q = model_quantities(m)
            out.append({"id": m.id, "name": m.name, "params": q["params_total"],
                        "active_params": q["params_active"],
                        "kv_bytes_per_token_bf16": int(q["kv_bytes_per_token_bf16"]),  # type: ignore[arg-type]
                        "params_basis": q["params_basis"]})
        return out
    if what == "gpus":
        return [{"id": g.id, "name": g.name, "memory_gb": g.number("memory_gb"),
                 "bandwidth_tb_s": g.number("bandwidth_tb_s"),
                 "bf16_tflops": g.number("bf16_tflops"),
                 "price_per_hour_usd": g.number("price_per_hour_usd"),
                 "price_date": g.text("price_date")}
                for g in load_gpus(gpus_path).entries.values()]
    if what == "formats":
        return ([{"kind": "weights", "id": f.id, "bytes": f.bytes_per_param,
                  "computes_in": f.compute, "what": f.description}
                 for f in WEIGHT_FORMATS.values()]
                + [{"kind": "kv", "id": k.id, "bytes": k.bytes_per_element, "computes_in": "",
                    "what": k.description} for k in KV_FORMATS.values()])
    return [{"name": a.name, "default": a.default, "unit": a.unit, "meaning": a.label}
            for a in ASSUMPTIONS.values()]


def listing_text(rows: list[dict[str, Any]]) -> str:
    """The rows as a table of left-aligned columns under their keys."""
    keys = list(rows[0])
    widths = {k: max(len(k), *(len(str(r[k])) for r in rows)) for k in keys}
    lines = ["  ".join(k.ljust(widths[k]) for k in keys).rstrip()]
    lines += ["  ".join(str(r[k]).ljust(widths[k]) for k in keys).rstrip() for r in rows]
    return "\n".join(lines)
