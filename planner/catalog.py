"""The model and GPU catalogs: schema, validation with located errors, typed entries.

A catalog is a YAML mapping from an id to an entry under ``models:`` or ``gpus:``. Model fields
use Hugging Face ``config.json`` names. Every entry carries a ``source``.
"""

from __future__ import annotations

import difflib
import hashlib
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from planner.errors import CatalogError, Location
from planner.yamlsource import Node, load_yaml

PROJECT_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_MODELS = PROJECT_ROOT / "catalogs" / "models.yaml"
DEFAULT_GPUS = PROJECT_ROOT / "catalogs" / "gpus.yaml"
DEFAULT_SERVERS = PROJECT_ROOT / "catalogs" / "servers.yaml"
DEFAULT_WORKLOADS = PROJECT_ROOT / "catalogs" / "workloads.yaml"

ID_PATTERN = re.compile(r"^[a-z0-9]+(?:[.-][a-z0-9]+)*$")
LAYER_TYPES = ("full_attention", "sliding_attention", "chunked_attention", "linear_attention")


@dataclass(frozen=True)
class FieldSpec:
    kind: str  # "int" | "number" | "bool" | "text" | "layers"
    required: bool = False
    allow_zero: bool = False  # numbers are > 0 unless this is set
    help: str = ""


def _int(help: str, required: bool = False, allow_zero: bool = False) -> FieldSpec:
    return FieldSpec("int", required, allow_zero, help)


def _num(help: str, required: bool = False) -> FieldSpec:
    return FieldSpec("number", required, False, help)


def _text(help: str, required: bool = False) -> FieldSpec:
    return FieldSpec("text", required, False, help)


MODEL_FIELDS: dict[str, FieldSpec] = {
    "name": _text("display name"),
    "source": _text("where the facts came from (config.json copy, model card)", True),
    "notes": _text("anything a reader should know"),
    "hf_id": _text("the Hugging Face repository id, e.g. meta-llama/Llama-3.1-8B-Instruct"),
    "params": _num("total parameters from the model card (derived from the shape when absent)"),
    "active_params": _num("parameters active per token (MoE)"),
    "num_hidden_layers": _int("transformer layers", True),
    "hidden_size": _int("model width", True),
    "num_attention_heads": _int("query heads", True),
    "num_key_value_heads": _int("key/value heads (GQA); equals the query heads when absent"),
    "head_dim": _int("per-head width when the config states it"),
    "intermediate_size": _int("FFN width (per expert for Mixtral and gpt-oss)", True),
    "intermediate_size_mlp": _int("dense-layer FFN width (Llama 4)"),
    "vocab_size": _int("vocabulary / embedding rows", True),
    "tie_word_embeddings": FieldSpec("bool", help="true when input and output embeddings share"),
    "max_position_embeddings": _int("longest context the config allows"),
    "num_local_experts": _int("routed experts (Mixtral, gpt-oss, Llama 4)"),
    "num_experts": _int("routed experts (Qwen MoE)"),
    "n_routed_experts": _int("routed experts (DeepSeek, Kimi, GLM)"),
    "num_experts_per_tok": _int("experts each token routes to (top-k)"),
    "n_shared_experts": _int("shared experts per MoE layer", allow_zero=True),
    "moe_intermediate_size": _int("expert FFN width"),
    "shared_expert_intermediate_size": _int("shared-expert FFN width (Qwen)"),
    "first_k_dense_replace": _int("leading dense layers before the MoE layers", allow_zero=True),
    "interleave_moe_layer_step": _int("every n-th layer is MoE (Llama 4)"),
    "kv_lora_rank": _int("MLA latent width"),
    "q_lora_rank": _int("MLA query low-rank width"),
    "qk_rope_head_dim": _int("MLA rotary part of each key"),
    "qk_nope_head_dim": _int("MLA non-rotary part of each query/key head"),
    "v_head_dim": _int("MLA value head width"),
    "sliding_window": _int("tokens a sliding-window layer keeps"),
    "attention_chunk_size": _int("tokens a chunked-attention layer keeps (Llama 4)"),
    "layer_types": FieldSpec("layers", help="one entry per layer: " + ", ".join(LAYER_TYPES)),
    "linear_num_value_heads": _int("linear-attention value heads (Qwen3-Next)"),
    "linear_num_key_heads": _int("linear-attention key heads"),
    "linear_key_head_dim": _int("linear-attention key head width"),
    "linear_value_head_dim": _int("linear-attention value head width"),
    "linear_conv_kernel_dim": _int("short-convolution kernel width"),
    "vision_params": _num("parameters of a vision tower the text config does not count "
                          "(vision-language models)"),
    "checkpoint_bytes": _num("exact weight bytes of the checkpoint as stored "
                             "(model.safetensors.index.json metadata.total_size); overrides "
                             "the estimate for the format it was stored in"),
    "checkpoint_format": _text("the weight format checkpoint_bytes is stored in, e.g. bf16, "
                               "fp8, mxfp4"),
    "draft_layers": _int("extra attention layers a speculative-decoding draft head (EAGLE, MTP) "
                         "adds to the KV cache", allow_zero=True),
}

GPU_FIELDS: dict[str, FieldSpec] = {
    "name": _text("display name"),
    "vendor": _text("NVIDIA, AMD, Intel"),
    "source": _text("where the specs came from", True),
    "notes": _text("anything a reader should know"),
    "memory_gb": _num("marketed memory, decimal GB (10^9 bytes)", True),
    "memory_mib": _num("device-reported memory in MiB (nvidia-smi / rocm-smi)"),
    "bandwidth_tb_s": _num("memory bandwidth, decimal TB/s", True),
    "bf16_tflops": _num("dense BF16 tensor TFLOP/s (halve a with-sparsity figure)", True),
    "fp8_tflops": _num("dense FP8 tensor TFLOP/s"),
    "fp4_tflops": _num("dense FP4 tensor TFLOP/s"),
    "gpus_per_node": _int("GPUs per node / scale-up domain", True),
    "tdp_w": _num("board power, W"),
    "price_per_hour_usd": _num("approximate on-demand price per GPU-hour, USD", True),
    "price_usd": _num("approximate purchase price per GPU, USD"),
    "price_date": _text("when the prices were true, YYYY-MM", True),
    "price_source": _text("where the prices came from"),
    "memory_engine_gib": _num("device total the serving engine sizes against: what CUDA/ROCm "
                              "reports (torch.cuda.mem_get_info total), GiB (2^30 bytes)"),
    "memory_engine_source": _text("where memory_engine_gib was read (an engine log, an issue)"),
    "scale_up_gb_s": _num("per-GPU scale-up bandwidth (NVLink, Infinity Fabric, xGMI) in one "
                          "direction, decimal GB/s; leave out for PCIe-only cards"),
    "allreduce_latency_us": _num("small-message all-reduce latency inside the scale-up domain, "
                                 "microseconds"),
    "interconnect_source": _text("where scale_up_gb_s and allreduce_latency_us came from"),
    "bandwidth_efficiency": _num("measured fraction of peak memory bandwidth that decode "
                                 "reaches on this GPU family (overrides the global default)"),
    "compute_efficiency": _num("measured fraction of dense peak FLOP/s that prefill reaches on "
                               "this GPU family (overrides the global default)"),
    "efficiency_source": _text("the measurements behind bandwidth_efficiency / "
                               "compute_efficiency"),
}

SERVER_FIELDS: dict[str, FieldSpec] = {
    "name": _text("display name"),
    "gpu": _text("the GPU id (catalogs/gpus.yaml) the server carries", True),
    "gpus_per_server": _int("GPUs in one server (or rack-scale unit)", True),
    "scale_up_gpus": _int("GPUs one tensor-parallel group may span (the NVLink domain); "
                          "default gpus_per_server"),
    "price_usd": _num("purchase price of the whole server, USD", True),
    "power_kw": _num("maximum power of the whole server, kW", True),
    "rack_units": _num("height, rack units (U)", True),
    "whole_rack": FieldSpec("bool", help="true when the unit is a rack of its own (GB200 "
                                         "NVL72): it brings its own power and cooling"),
    "price_date": _text("when the price was true, YYYY-MM", True),
    "source": _text("where price, power and size come from", True),
    "notes": _text("anything a reader should know"),
}

WORKLOAD_FIELDS: dict[str, FieldSpec] = {
    "name": _text("display name"),
    "model": _text("the model id (catalogs/models.yaml) the workload runs", True),
    "rate_rps": _num("design-peak requests per second"),
    "tokens_per_day": _num("input + output tokens per day (instead of rate_rps)"),
    "peak_to_average": _num("peak rate ÷ average rate (default 1)"),
    "prompt_tokens": _int("prompt (input) tokens per request", True),
    "output_tokens": _int("output tokens per request", True),
    "ttft_s": _num("time-to-first-token target, seconds", True),
    "itl_s": _num("inter-token latency target, seconds", True),
    "weights": FieldSpec("ids", help="allowed weight formats (default bf16, fp8)"),
    "kv": FieldSpec("ids", help="allowed KV-cache formats (default bf16, fp8)"),
    "gpus": FieldSpec("ids", help="allowed GPU ids (default: every GPU with a server)"),
    "spare_replicas": _int("replicas kept spare for failures and maintenance",
                           allow_zero=True),
    "source": _text("where the traffic shape and targets come from", True),
    "notes": _text("anything a reader should know"),
}

# Numeric fields the arithmetic reads; absent ones read as 0 like a blank spreadsheet cell.
MODEL_NUMERIC = [k for k, s in MODEL_FIELDS.items() if s.kind in ("int", "number", "bool")]
MODEL_LAYER_COUNTS = [f"{t.split('_')[0]}_attention_layers" for t in LAYER_TYPES]
MODEL_TEXT_INPUTS = ["checkpoint_format"]  # text fields formulas read
GPU_NUMERIC = [k for k, s in GPU_FIELDS.items() if s.kind in ("int", "number")]


@dataclass(frozen=True)
class Entry:
    """One catalog entry: id, typed values, and the line each field was written on."""

    id: str
    values: Mapping[str, object]
    lines: Mapping[str, int]
    line: int
    path: Path

    def number(self, name: str) -> float | int | bool:
        value = self.values.get(name, 0)
        return value if isinstance(value, int | float | bool) else 0

    def text(self, name: str, default: str = "") -> str:
        value = self.values.get(name)
        return value if isinstance(value, str) else default

    @property
    def name(self) -> str:
        return self.text("name", self.id)

    @property
    def source(self) -> str:
        return self.text("source")

    def locate(self, field: str | None = None) -> Location:
        line = self.lines.get(field, self.line) if field else self.line
        return Location(self.path, line, entry=self.id, field=field)


@dataclass(frozen=True)
class Model(Entry):
    layer_counts: Mapping[str, int] = field(default_factory=dict)

    def number(self, name: str) -> float | int | bool:
        if name in self.layer_counts:
            return self.layer_counts[name]
        return super().number(name)


@dataclass(frozen=True)
class Gpu(Entry):
    pass


@dataclass(frozen=True)
class Server(Entry):
    pass


@dataclass(frozen=True)
class Workload(Entry):
    def ids(self, name: str) -> list[str]:
        value = self.values.get(name)
        return list(value) if isinstance(value, list) else []


@dataclass(frozen=True)
class Catalog:
    path: Path
    sha256: str
    entries: Mapping[str, Entry]


def _suggest(word: str, choices: list[str]) -> str:
    close = difflib.get_close_matches(word, choices, n=1, cutoff=0.6)
    return f"did you mean '{close[0]}'?" if close else f"known fields: {', '.join(choices)}"


def _check_value(spec: FieldSpec, node: Node, loc: Location) -> object:
    value = node.value
    if spec.kind == "text":
        if hasattr(value, "isoformat") and not isinstance(value, str):
            value = value.isoformat()  # YAML reads 2026-03-01 as a date
        if not isinstance(value, str) or not value.strip():
            raise CatalogError(loc, f"must be text, got {value!r}", "write it as a quoted string")
        return value
    if spec.kind == "bool":
        if not isinstance(value, bool):
            raise CatalogError(loc, f"must be true or false, got {value!r}")
        return value
    if spec.kind == "layers":
        return value  # checked with the rest of the entry
    if spec.kind == "ids":
        items = value if isinstance(value, list) else None
        if not items or not all(isinstance(i.value, str) for i in items):
            raise CatalogError(loc, f"must be a non-empty list of ids, got {value!r}",
                               f"e.g. [bf16, fp8]; {spec.help}")
        return [i.value for i in items]
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise CatalogError(loc, f"must be a number, got {value!r}",
                           f"expected {spec.help}, e.g. 4096 (no quotes or units)")
    if isinstance(value, float) and math.isnan(value):
        raise CatalogError(loc, "is NaN (not a number)", f"expected {spec.help}")
    if isinstance(value, float) and math.isinf(value):
        raise CatalogError(loc, "is infinite", f"expected a finite {spec.help}")
    if value < 0:
        raise CatalogError(loc, f"must not be negative, got {value}", f"expected {spec.help}")
    if value == 0 and not spec.allow_zero:
        raise CatalogError(loc, "must be greater than 0, got 0",
                           f"expected {spec.help}; leave the field out if it does not apply")
    if spec.kind == "int":
        if isinstance(value, float) and not value.is_integer():
            raise CatalogError(loc, f"must be a whole number, got {value}", f"expected {spec.help}")
        return int(value)
    return value


def _parse_entries(path: Path, section: str, fields: Mapping[str, FieldSpec]) -> dict[
    str, tuple[dict[str, object], dict[str, int], int]
]:
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
            if key not in fields:
                raise CatalogError(loc, "unknown field", _suggest(key, list(fields)))
            values[key] = _check_value(fields[key], child, loc)
            lines[key] = child.line
        for key, spec in fields.items():
            if spec.required and key not in values:
                raise CatalogError(Location(path, node.line, entry=entry_id, field=key),
                                   "required field is missing", f"add {key}: {spec.help}")
        out[entry_id] = (values, lines, node.line)
    return out


def _layer_counts(entry: Model, layers_value: object) -> dict[str, int]:
    """Count layers by attention kind, as Hugging Face configs' layer_types list them."""
    total = int(entry.number("num_hidden_layers"))
    counts = dict.fromkeys(MODEL_LAYER_COUNTS, 0)
    if layers_value is None:
        kind = "sliding" if entry.number("sliding_window") else "full"
        counts[f"{kind}_attention_layers"] = total
        return counts
    loc = entry.locate("layer_types")
    if not isinstance(layers_value, list):
        raise CatalogError(loc, "must be a list with one entry per layer",
                           "e.g. [sliding_attention, full_attention, ...]")
    for i, item in enumerate(layers_value):
        if item.value not in LAYER_TYPES:
            raise CatalogError(loc, f"layer {i} has type {item.value!r}",
                               f"each entry is one of {', '.join(LAYER_TYPES)}")
        counts[f"{item.value.split('_')[0]}_attention_layers"] += 1
    if len(layers_value) != total:
        raise CatalogError(
            loc, f"lists {len(layers_value)} layers but num_hidden_layers is {total}",
            "give one entry per layer")
    return counts


def _check_model_shape(model: Model) -> None:
    heads = int(model.number("num_attention_heads"))
    kv = int(model.number("num_key_value_heads")) or heads
    if not model.number("kv_lora_rank"):
        if kv > heads or heads % kv:
            raise CatalogError(model.locate("num_key_value_heads"),
                               f"{heads} attention heads are not divisible by {kv} KV heads",
                               "num_attention_heads must be a multiple of num_key_value_heads")
        if not model.number("head_dim") and model.number("hidden_size") % heads:
            raise CatalogError(model.locate("hidden_size"),
                               f"hidden_size {model.number('hidden_size')} is not divisible by "
                               f"{heads} heads", "give head_dim explicitly")
    else:
        for name in ("qk_rope_head_dim", "qk_nope_head_dim", "v_head_dim"):
            if not model.number(name):
                raise CatalogError(model.locate("kv_lora_rank"),
                                   f"an MLA model (kv_lora_rank) also needs {name}")
    experts = sum(int(model.number(f)) for f in ("num_local_experts", "num_experts",
                                                  "n_routed_experts"))
    if experts:
        k = model.number("num_experts_per_tok")
        if not k or k > experts:
            raise CatalogError(model.locate("num_experts_per_tok"),
                               f"an MoE model needs num_experts_per_tok between 1 and {experts}")
    if model.layer_counts.get("sliding_attention_layers") and not model.number("sliding_window"):
        raise CatalogError(model.locate("layer_types"),
                           "has sliding_attention layers but no sliding_window",
                           "add sliding_window: TOKENS")
    if model.layer_counts.get("chunked_attention_layers") and not model.number(
            "attention_chunk_size"):
        raise CatalogError(model.locate("layer_types"),
                           "has chunked_attention layers but no attention_chunk_size")
    if model.layer_counts.get("linear_attention_layers"):
        for name in ("linear_num_value_heads", "linear_num_key_heads", "linear_key_head_dim",
                     "linear_value_head_dim"):
            if not model.number(name):
                raise CatalogError(model.locate("layer_types"),
                                   f"has linear_attention layers but no {name}")
    active, total = model.number("active_params"), model.number("params")
    if active and total and active > total:
        raise CatalogError(model.locate("active_params"),
                           f"active_params {active:g} exceeds params {total:g}")


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def load_models(path: Path | str = DEFAULT_MODELS) -> Catalog:
    path = Path(path)
    entries: dict[str, Entry] = {}
    for entry_id, (values, lines, line) in _parse_entries(path, "models", MODEL_FIELDS).items():
        layers = values.pop("layer_types", None)
        bare = Model(entry_id, values, lines, line, path)
        model = Model(entry_id, values, lines, line, path, _layer_counts(bare, layers))
        _check_model_shape(model)
        entries[entry_id] = model
    return Catalog(path, _digest(path), entries)


def load_gpus(path: Path | str = DEFAULT_GPUS) -> Catalog:
    path = Path(path)
    entries: dict[str, Entry] = {}
    for entry_id, (values, lines, line) in _parse_entries(path, "gpus", GPU_FIELDS).items():
        gpu = Gpu(entry_id, values, lines, line, path)
        date = gpu.text("price_date")
        if not re.match(r"^\d{4}-(0[1-9]|1[0-2])(-(0[1-9]|[12]\d|3[01]))?$", date):
            raise CatalogError(gpu.locate("price_date"), f"must be a date YYYY-MM, got {date!r}",
                               "write the month the price was true, e.g. '2026-03'")
        entries[entry_id] = gpu
    return Catalog(path, _digest(path), entries)


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
        date = server.text("price_date")
        if not re.match(r"^\d{4}-(0[1-9]|1[0-2])(-(0[1-9]|[12]\d|3[01]))?$", date):
            raise CatalogError(server.locate("price_date"),
                               f"must be a date YYYY-MM, got {date!r}",
                               "write the month the price was true, e.g. '2026-03'")
        scale = server.number("scale_up_gpus")
        if scale and scale > server.number("gpus_per_server") and not server.number(
                "whole_rack"):
            raise CatalogError(server.locate("scale_up_gpus"),
                               f"{scale} exceeds gpus_per_server "
                               f"{server.number('gpus_per_server')}",
                               "a tensor-parallel group stays inside one server")
        entries[entry_id] = server
    return Catalog(path, _digest(path), entries)


def load_workloads(path: Path | str, models: Catalog, gpus: Catalog,
                   strict: bool = True) -> Catalog:
    """Workloads; with strict=False (the shipped catalog beside a user's own model catalog),
    workloads of models the catalog lacks are left out, and GPUs it lacks are dropped."""
    from planner.formats import KV_FORMATS, WEIGHT_FORMATS

    path = Path(path)
    entries: dict[str, Entry] = {}
    for entry_id, (values, lines, line) in _parse_entries(path, "workloads",
                                                          WORKLOAD_FIELDS).items():
        if not strict:
            if values.get("model") not in models.entries:
                continue
            allowed = values.get("gpus")
            if isinstance(allowed, list):
                kept = [g for g in allowed if g in gpus.entries]
                if not kept:
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
        peak = w.number("peak_to_average")
        if peak and peak < 1:
            raise CatalogError(w.locate("peak_to_average"),
                               f"must be at least 1 (peak ÷ average), got {peak}")
        entries[entry_id] = w
    return Catalog(path, _digest(path), entries)
