"""Reading the catalogs: a models, GPUs, servers, workloads or clouds YAML (or a folder of Hugging
Face configs for models) into typed entries, each value checked against its field
(:mod:`planner.inputs.fields`) and each error located at file, line, entry and field.

A catalog is a YAML mapping from an id to an entry under ``models:``, ``gpus:``, ``servers:``,
``workloads:`` or ``clouds:``. Model fields use Hugging Face ``config.json`` names. Every entry
carries a ``source``.
"""

from __future__ import annotations

import difflib
import hashlib
import re
from collections.abc import Mapping
from pathlib import Path

from planner.errors import CatalogError, Location
from planner.inputs.entries import Catalog, Cloud, Entry, Gpu, Server, Workload
from planner.inputs.fields import (
    CLOUD_FIELDS,
    GPU_FIELDS,
    HF_DEFAULT_ONLY_FIELDS,
    HF_IGNORED_FIELDS,
    ID_PATTERN,
    LAYER_PATTERN_FIELDS,
    MODEL_FIELDS,
    SERVER_FIELDS,
    WORKLOAD_FIELDS,
    FieldSpec,
    check_value,
    suggest_field,
)
from planner.inputs.hfimport.reading import folder_catalog
from planner.inputs.model_shape import model_entry
from planner.inputs.resources import DATA_ROOT
from planner.inputs.yamlsource import Node, load_yaml

PROJECT_ROOT = DATA_ROOT  # the checkout, or the copy an installed wheel carries
DEFAULT_MODELS = PROJECT_ROOT / "catalogs" / "models.yaml"
DEFAULT_GPUS = PROJECT_ROOT / "catalogs" / "gpus.yaml"
DEFAULT_SERVERS = PROJECT_ROOT / "catalogs" / "servers.yaml"
DEFAULT_WORKLOADS = PROJECT_ROOT / "catalogs" / "workloads.yaml"
DEFAULT_CLOUDS = PROJECT_ROOT / "catalogs" / "clouds.yaml"
DATE_PATTERN = re.compile(r"^\d{4}-(0[1-9]|1[0-2])(-(0[1-9]|[12]\d|3[01]))?$")

def _parse_entries(path: Path, section: str, fields: Mapping[str, FieldSpec],
                   hf: bool = False) -> dict[str, tuple[dict[str, object], dict[str, int], int]]:
    """Entries of one section; with hf (models), fields as real config.json files write them are
    accepted: null means absent and the known-irrelevant Hugging Face fields are skipped."""
    what = f"a YAML file with a top-level '{section}:' mapping"
    root = load_yaml(path, what)
    if not isinstance(root.value, dict) or section not in root.value:
        keys = list(root.value) if isinstance(root.value, dict) else []
        found = f"found top-level keys {keys}" if keys else f"found {type(root.value).__name__}"
        raise CatalogError(Location(path, root.line), f"expected a top-level '{section}:' "
                           f"mapping; {found}", f"start the file with '{section}:'")
    body = root.value[section]
    if not isinstance(body.value, dict) or not body.value:
        raise CatalogError(Location(path, body.line, field=section),
                           f"'{section}' must map ids to entries and have at least one",
                           f"e.g. '{section}:\\n  some-id:\\n    source: ...'")
    out = {}
    for entry_id, node in body.value.items():
        if not ID_PATTERN.match(entry_id):
            raise CatalogError(Location(path, node.line, entry=entry_id),
                               "ids are lower-case letters, digits, dots and hyphens",
                               f"e.g. '{re.sub(r'[^a-z0-9.]+', '-', entry_id.lower()).strip('-')}'")
        if not isinstance(node.value, dict):
            raise CatalogError(Location(path, node.line, entry=entry_id),
                               f"must be a mapping of fields, got {node.value!r}")
        values: dict[str, object] = {}
        lines: dict[str, int] = {}
        for key, child in node.value.items():
            loc = Location(path, child.line, entry=entry_id, field=key)
            if hf and (child.value is None or key not in fields and _hf_skipped(key, child, loc)):
                continue  # null means absent, as in config.json
            if key not in fields:
                known = list(fields) + sorted(HF_IGNORED_FIELDS) if hf else list(fields)
                close = difflib.get_close_matches(key, known, n=1, cutoff=0.6)
                raise CatalogError(loc, "unknown field", f"did you mean '{close[0]}'?" if close
                                   else suggest_field(key, list(fields)))
            values[key] = check_value(fields[key], child, loc)
            lines[key] = child.line
        for key, spec in fields.items():
            if spec.required and key not in values:
                raise CatalogError(Location(path, node.line, entry=entry_id, field=key),
                                   "required field is missing", f"add {key}: {spec.help}")
        out[entry_id] = (values, lines, node.line)
    return out


def _hf_skipped(key: str, node: Node, loc: Location) -> bool:
    """Whether a models-YAML field that is not a catalog field is a Hugging Face field to skip:
    null (absent), known not to affect sizing, or a layout field at its no-op default."""
    if node.value is None or key in HF_IGNORED_FIELDS:
        return True
    if key in HF_DEFAULT_ONLY_FIELDS:
        value = node.value
        plain = [i.value for i in value] if isinstance(value, list) else value
        if plain == HF_DEFAULT_ONLY_FIELDS[key]:
            return True
        raise CatalogError(loc, f"{key} {plain!r} changes which layers are MoE, which a models "
                           "YAML cannot express this way",
                           "use first_k_dense_replace / interleave_moe_layer_step, or import the "
                           "config.json with `planner import` (or --models FOLDER)")
    if key in ("text_config", "llm_config", "vision_config", "quantization_config"):
        raise CatalogError(loc, f"nested config section '{key}' is not read from a models YAML",
                           "import the config.json with `planner import` (or --models FOLDER), "
                           "or give the text model's fields directly on the entry")
    return False


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def load_models(path: Path | str = DEFAULT_MODELS) -> Catalog:
    """The model catalog: a models YAML, or a folder of Hugging Face model folders or config.json
    files imported on the fly (planner.inputs.hfimport)."""
    path = Path(path)
    if path.is_dir():
        return folder_catalog(path)
    entries: dict[str, Entry] = {}
    fields = {**MODEL_FIELDS, **LAYER_PATTERN_FIELDS}
    for entry_id, (values, lines, line) in _parse_entries(path, "models", fields,
                                                          hf=True).items():
        entries[entry_id] = model_entry(entry_id, values, lines, line, path)
    return Catalog(path, _digest(path), entries)


def load_gpus(path: Path | str = DEFAULT_GPUS) -> Catalog:
    path = Path(path)
    entries: dict[str, Entry] = {}
    for entry_id, (values, lines, line) in _parse_entries(path, "gpus", GPU_FIELDS).items():
        gpu = Gpu(entry_id, values, lines, line, path)
        _check_date(gpu)
        entries[entry_id] = gpu
    return Catalog(path, _digest(path), entries)


def _check_date(entry: Entry) -> None:
    date = entry.text("price_date")
    if not DATE_PATTERN.match(date):
        raise CatalogError(entry.locate("price_date"), f"must be a date YYYY-MM, got {date!r}",
                           "write the month the price was true, e.g. '2026-03'")


def _known(entry: Entry, field: str, value: str, known: list[str], what: str) -> None:
    if value not in known:
        close = difflib.get_close_matches(value, known, n=1)
        hint = f"did you mean '{close[0]}'?" if close else f"known: {', '.join(known)}"
        raise CatalogError(entry.locate(field), f"unknown {what} {value!r}", hint)


def load_servers(path: Path | str, gpus: Catalog, strict: bool = True) -> Catalog:
    """Servers; with strict=False (the shipped catalog beside a user's own GPU catalog),
    servers of GPUs the GPU catalog lacks are left out instead of refused."""
    path = Path(path)
    entries: dict[str, Entry] = {}
    for entry_id, (values, lines, line) in _parse_entries(path, "servers",
                                                          SERVER_FIELDS).items():
        server = Server(entry_id, values, lines, line, path)
        if not strict and server.text("gpu") not in gpus.entries:
            continue
        _known(server, "gpu", server.text("gpu"), list(gpus.entries), "GPU id")
        _check_date(server)
        vendor, gpu_vendor = server.text("vendor"), gpus.entries[server.text("gpu")].text("vendor")
        if vendor and gpu_vendor and vendor != gpu_vendor.lower():
            raise CatalogError(server.locate("vendor"),
                               f"vendor {vendor!r} but its GPU {server.text('gpu')!r} is made by "
                               f"{gpu_vendor} ({gpus.path.name})",
                               f"write vendor: {gpu_vendor.lower()}, or leave the field out")
        scale = server.number("scale_up_gpus")
        if scale and scale > server.number("gpus_per_server") and not server.number(
                "whole_rack"):
            raise CatalogError(server.locate("scale_up_gpus"),
                               f"{scale} exceeds gpus_per_server "
                               f"{server.number('gpus_per_server')}",
                               "a tensor-parallel group stays inside one server")
        entries[entry_id] = _with_cost_defaults(server, gpus)
    return Catalog(path, _digest(path), entries)


# A server that does not state its cost lines gets the rule the shipped catalog follows
# (catalogs/servers.yaml header; docs/tco-evidence.md): NVIDIA AI Enterprise list per GPU-year
# unless bundled, none for AMD or Intel; a single-node Ethernet share of switch and cables.
SUPPORT_BY_VENDOR = {"nvidia": 4500.0, "amd": 0.0, "intel": 0.0}
NETWORK_USD_PER_SERVER = 1600.0


def _with_cost_defaults(server: Server, gpus: Catalog) -> Server:
    values = dict(server.values)
    vendor = server.text("vendor") or gpus.entries[server.text("gpu")].text("vendor").lower()
    values.setdefault("support_usd_per_gpu_year", SUPPORT_BY_VENDOR.get(vendor, 4500.0))
    values.setdefault("network_usd_per_server", NETWORK_USD_PER_SERVER)
    return Server(server.id, values, server.lines, server.line, server.path)


def load_workloads(path: Path | str, models: Catalog, gpus: Catalog,
                   strict: bool = True) -> Catalog:
    """Workloads; with strict=False (the shipped catalog beside a user's own model catalog),
    workloads of models the catalog lacks are left out, and GPUs it lacks are dropped."""
    from planner.model.formats import KV_FORMATS, WEIGHT_FORMATS

    path = Path(path)
    entries: dict[str, Entry] = {}
    left_out: dict[str, str] = {}
    for entry_id, (values, lines, line) in _parse_entries(path, "workloads",
                                                          WORKLOAD_FIELDS).items():
        if not strict:
            if values.get("model") not in models.entries:
                left_out[entry_id] = f"its model {values.get('model')} is not in " \
                                     f"{models.path.name}"
                continue
            allowed = values.get("gpus")
            if isinstance(allowed, list):
                kept = [g for g in allowed if g in gpus.entries]
                if not kept:
                    left_out[entry_id] = f"none of its GPUs ({', '.join(map(str, allowed))}) " \
                                         f"is in {gpus.path.name}"
                    continue
                values["gpus"] = kept
        w = Workload(entry_id, values, lines, line, path)
        _known(w, "model", w.text("model"), list(models.entries), "model id")
        for name, known, what in (("weights", list(WEIGHT_FORMATS), "weight format"),
                                  ("kv", list(KV_FORMATS), "KV-cache format"),
                                  ("gpus", list(gpus.entries), "GPU id")):
            for value in w.ids(name):
                _known(w, name, value, known, what)
        rate, per_day = w.number("rate_rps"), w.number("tokens_per_day")
        if bool(rate) == bool(per_day):
            raise CatalogError(w.locate("rate_rps" if rate else None),
                               "give exactly one of rate_rps and tokens_per_day",
                               "rate_rps: design-peak requests/s, or tokens_per_day with "
                               "peak_to_average")
        percentile = w.number("latency_percentile")
        if "latency_percentile" in values and not 50 <= percentile < 100:
            raise CatalogError(w.locate("latency_percentile"),
                               f"must be from 50 (the median) to below 100, got {percentile}",
                               "e.g. latency_percentile: 95 (the targets hold for 95 % of "
                               "tokens and requests)")
        peak = w.number("peak_to_average")
        if peak and peak < 1:
            raise CatalogError(w.locate("peak_to_average"),
                               f"must be at least 1 (peak ÷ average), got {peak}")
        if "schedule" in values and "growth" in values:
            raise CatalogError(w.locate("schedule"), "give growth or schedule, not both",
                               "growth: a monthly rate the schedule compounds; schedule: the "
                               "peak rate of each quarter after the first")
        entries[entry_id] = w
    return Catalog(path, _digest(path), entries, left_out)


def load_clouds(path: Path | str, gpus: Catalog, strict: bool = True) -> Catalog:
    """Cloud offers, priced per instance-hour; with strict=False (the shipped catalog beside a
    user's own GPU catalog), offers of GPUs the GPU catalog lacks are left out instead of
    refused."""
    path = Path(path)
    entries: dict[str, Entry] = {}
    for entry_id, (values, lines, line) in _parse_entries(path, "clouds", CLOUD_FIELDS).items():
        cloud = Cloud(entry_id, values, lines, line, path)
        if not strict and cloud.text("gpu") not in gpus.entries:
            continue
        _known(cloud, "gpu", cloud.text("gpu"), list(gpus.entries), "GPU id")
        _check_date(cloud)
        on_demand = cloud.number("on_demand_usd_per_hour")
        one_year = cloud.number("reserved_1y_usd_per_hour")
        three_year = cloud.number("reserved_3y_usd_per_hour")
        if one_year > on_demand:
            raise CatalogError(cloud.locate("reserved_1y_usd_per_hour"),
                               f"the 1-year price {one_year} is above the on-demand price "
                               f"{on_demand}",
                               "a commitment costs at most on-demand; check that both are per "
                               "instance-hour (not one per GPU-hour)")
        if three_year > one_year:
            raise CatalogError(cloud.locate("reserved_3y_usd_per_hour"),
                               f"the 3-year price {three_year} is above the 1-year price "
                               f"{one_year}",
                               "a longer commitment costs at most the shorter one; check the "
                               "terms are not swapped")
        entries[entry_id] = cloud
    return Catalog(path, _digest(path), entries)
