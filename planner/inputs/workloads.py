"""An ad hoc workload from `planner size` options, checked like a catalog entry."""

from __future__ import annotations

import tempfile
from pathlib import Path

import yaml

from planner.errors import ArgumentError
from planner.inputs.catalog import load_workloads
from planner.inputs.entries import Catalog
from planner.inputs.scenario import unknown
from planner.model.formats import WEIGHT_FORMATS


def adhoc_workloads(model: str | None, rate: float | None, prompt: int | None,
                    output: int | None, ttft: float, itl: float, weights: tuple[str, ...],
                    gpus_allowed: tuple[str, ...], spares: int, models: Catalog,
                    gpus: Catalog) -> Catalog:
    """A one-entry workload catalog; missing or bad options are said as options."""
    missing = [o for o, v in (("--model", model), ("--rate", rate), ("--prompt", prompt),
                              ("--output", output)) if v is None]
    if missing:
        raise ArgumentError(f"an ad hoc workload also needs {', '.join(missing)}, e.g. "
                            "--model llama-3.1-8b --rate 10 --prompt 2000 --output 300")
    for option, value in (("--rate", rate), ("--prompt", prompt), ("--output", output),
                          ("--ttft", ttft), ("--itl", itl)):
        if value is None or value <= 0:
            raise ArgumentError(f"{option} {value}: must be greater than 0")
    if spares < 0:
        raise ArgumentError(f"--spares {spares}: must be 0 or more")
    entry: dict[str, object] = {
        "name": f"{model} at {rate:g} requests/s", "model": model, "rate_rps": rate,
        "prompt_tokens": prompt, "output_tokens": output, "ttft_s": ttft, "itl_s": itl,
        "spare_replicas": spares, "source": "planner size options",
    }
    if weights:
        entry["weights"] = [w.lower() for w in weights]
    if gpus_allowed:
        entry["gpus"] = list(gpus_allowed)
    if model not in models.entries:
        raise unknown("model", str(model), sorted(models.entries), "--model")
    for gid in gpus_allowed:
        if gid not in gpus.entries:
            raise unknown("GPU", gid, sorted(gpus.entries), "--gpu")
    for fmt in entry.get("weights", []):  # type: ignore[attr-defined]
        if fmt not in WEIGHT_FORMATS:
            raise unknown("weight format", fmt, list(WEIGHT_FORMATS), "--weights")
    text = yaml.safe_dump({"workloads": {"adhoc": entry}}, sort_keys=False)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "adhoc-workload.yaml"
        path.write_text(text)
        return load_workloads(path, models, gpus)
