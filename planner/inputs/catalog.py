"""The model and GPU catalogs: schema, validation with located errors, typed entries.

A catalog is a YAML mapping from an id to an entry under ``models:`` or ``gpus:``. Model fields
use Hugging Face ``config.json`` names. Every entry carries a ``source``.
"""

from __future__ import annotations

import difflib
import hashlib
import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from planner.errors import CatalogError, Location
from planner.inputs.resources import DATA_ROOT
from planner.inputs.yamlsource import Node, load_yaml

PROJECT_ROOT = DATA_ROOT  # the checkout, or the copy an installed wheel carries
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

# Hugging Face config.json fields that describe the layer pattern instead of listing layer_types.
# A models YAML may carry them (a pasted config); they are turned into layer kinds when loading and
# are not catalog columns themselves. `planner import` writes layer_types instead.
LAYER_PATTERN_FIELDS: dict[str, FieldSpec] = {
    "full_attention_interval": FieldSpec("pattern", help="every n-th layer is full attention, "
                                         "the others linear attention (Qwen3-Next)"),
    "sliding_window_pattern": FieldSpec("pattern", help="every n-th layer is full attention, the "
                                        "others sliding-window (Gemma 3)"),
    "use_sliding_window": FieldSpec("pattern", help="false: no layer slides, whatever "
                                    "sliding_window says (Qwen2)"),
    "max_window_layers": FieldSpec("pattern", help="with use_sliding_window: true, layers from "
                                   "this index on slide (Qwen2)"),
    "no_rope_layers": FieldSpec("pattern", help="one 0/1 per layer: 1 = RoPE layer (chunked "
                                "attention with attention_chunk_size), 0 = NoPE full attention "
                                "(Llama 4)"),
    "no_rope_layer_interval": FieldSpec("pattern", help="every n-th layer is NoPE full attention "
                                        "when no_rope_layers is empty (Llama 4)"),
}

# Fields real config.json files carry that do not change memory or speed: a models YAML may keep
# them (they are skipped), and `planner import` lists them as read and not needed. Anything else
# unknown is refused in a YAML (with "did you mean") and reported by `planner import`.
HF_IGNORED_FIELDS = frozenset({
    "_name_or_path", "architectures", "auto_map", "model_type", "transformers_version",
    "torch_dtype", "dtype", "use_cache", "bos_token_id", "eos_token_id", "pad_token_id",
    "sep_token_id", "decoder_start_token_id", "initializer_range", "rms_norm_eps",
    "layer_norm_eps", "layer_norm_epsilon", "norm_eps", "hidden_act", "hidden_activation",
    "attention_dropout", "hidden_dropout", "embd_pdrop", "resid_pdrop", "attn_pdrop",
    "rope_theta", "rope_scaling", "rope_parameters", "rope_local_base_freq",
    "partial_rotary_factor", "rope_interleave", "pretraining_tp", "attention_bias", "mlp_bias",
    "qkv_bias", "use_qk_norm", "qk_layernorm", "output_router_logits", "router_aux_loss_coef",
    "router_jitter_noise", "router_z_loss_coef", "aux_loss_alpha", "seq_aux", "norm_topk_prob",
    "routed_scaling_factor", "scoring_func", "topk_method", "n_group", "topk_group",
    "query_pre_attn_scalar", "attn_logit_softcapping", "final_logit_softcapping",
    "cache_implementation", "attn_temperature_tuning", "attn_scale", "floor_scale",
    "for_llm_compressor", "swiglu_limit", "initial_context_length", "tokenizer_class",
    "bos_token", "eos_token", "use_bfloat16", "return_dict", "output_attentions",
    "output_hidden_states", "torchscript", "tie_encoder_decoder", "chunk_size_feed_forward",
    "is_decoder", "add_cross_attention", "problem_type", "id2label", "label2id",
    "num_nextn_predict_layers", "mtp_num_hidden_layers", "mtp_use_dedicated_embeddings",
    "ep_size", "moe_layers",
})

# Hugging Face fields that change which layers are MoE; a models YAML may carry them only at
# the value that changes nothing (the catalog expresses other layouts with first_k_dense_replace
# and interleave_moe_layer_step).
HF_DEFAULT_ONLY_FIELDS: dict[str, object] = {
    "decoder_sparse_step": 1, "moe_layer_freq": 1, "mlp_only_layers": [],
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
    "nvls_buffer_gib": _num("memory NCCL's NVLink SHARP (NVLS) buffers take per GPU when a "
                            "tensor-parallel group of 8 or more GPUs uses them (NVSwitch "
                            "systems of Hopper and later), GiB"),
    "engine_small_defaults": _num("1 where vLLM keeps its smaller scheduler defaults (256 "
                                  "sequences, 2,048 batched tokens) although the GPU has "
                                  "≥ 70 GiB: the A100 (vLLM PR #17885)"),
    "bandwidth_efficiency": _num("measured fraction of peak memory bandwidth that decode "
                                 "reaches on this GPU family (overrides the global default)"),
    "compute_efficiency": _num("measured fraction of dense peak FLOP/s that prefill reaches on "
                               "this GPU family (overrides the global default)"),
    "compute_efficiency_fp4": _num("measured fraction of the dense FP4 peak that FP4 GEMMs "
                                   "reach on this GPU family (FP4 kernels fall further from "
                                   "their peak than BF16 and FP8 ones)"),
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
    if spec.kind in ("layers", "pattern"):
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
                                   else _suggest(key, list(fields)))
            values[key] = _check_value(fields[key], child, loc)
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
    named = [f for f in ("num_local_experts", "num_experts", "n_routed_experts")
             if model.number(f)]
    if len(named) > 1:  # the arithmetic adds them up: two would count the experts twice
        raise CatalogError(model.locate(named[1]), f"conflicts with {named[0]}: both count the "
                           "routed experts", f"keep one of {', '.join(named)}")
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


@dataclass(frozen=True)
class LayerPattern:
    """Per-layer attention kinds a config states through pattern fields (None: no pattern)."""

    types: list[str] | None
    source: str  # the field(s) they were read from, for notes and messages
    no_sliding: bool = False  # use_sliding_window: false, so sliding_window does not apply


def pattern_layer_types(layers: int, pattern: Mapping[str, object], has_chunk: bool,
                        locate: Callable[[str], Location]) -> LayerPattern:
    """The layer kinds Hugging Face pattern fields imply (LAYER_PATTERN_FIELDS), as
    transformers builds layer_types from them."""

    def plain(name: str) -> object:
        value = pattern[name]
        return [getattr(i, "value", i) for i in value] if isinstance(value, list) else value

    def interval(name: str) -> int:
        value = plain(name)
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise CatalogError(locate(name), f"must be a whole number of layers >= 1, got "
                               f"{value!r}", LAYER_PATTERN_FIELDS[name].help)
        return value

    found: list[tuple[str, list[str] | None]] = []
    if "full_attention_interval" in pattern:
        k = interval("full_attention_interval")
        found.append(("full_attention_interval", [
            "full_attention" if (i + 1) % k == 0 else "linear_attention" for i in range(layers)]))
    if "sliding_window_pattern" in pattern:
        k = interval("sliding_window_pattern")
        found.append(("sliding_window_pattern", [
            "full_attention" if (i + 1) % k == 0 else "sliding_attention" for i in range(layers)]))
    if "no_rope_layers" in pattern or "no_rope_layer_interval" in pattern:
        rope = plain("no_rope_layers") if "no_rope_layers" in pattern else []
        if not isinstance(rope, list) or any(r not in (0, 1) or isinstance(r, bool)
                                             for r in rope):
            raise CatalogError(locate("no_rope_layers"), "must be a list of 0 and 1 per layer",
                               LAYER_PATTERN_FIELDS["no_rope_layers"].help)
        if rope and len(rope) < layers:
            raise CatalogError(locate("no_rope_layers"), f"lists {len(rope)} layers but "
                               f"num_hidden_layers is {layers}", "give one 0/1 per layer")
        if not rope:  # transformers' default: every no_rope_layer_interval-th layer is NoPE
            k = interval("no_rope_layer_interval") if "no_rope_layer_interval" in pattern else 4
            rope = [int((i + 1) % k != 0) for i in range(layers)]
        found.append(("no_rope_layers", [
            "chunked_attention" if r and has_chunk else "full_attention" for r in rope[:layers]]))
    no_sliding = False
    if "use_sliding_window" in pattern:
        use = plain("use_sliding_window")
        if not isinstance(use, bool):
            raise CatalogError(locate("use_sliding_window"), f"must be true or false, got "
                               f"{use!r}", LAYER_PATTERN_FIELDS["use_sliding_window"].help)
        no_sliding = not use
        if use and "max_window_layers" in pattern:
            first = interval("max_window_layers") if plain("max_window_layers") else 0
            found.append(("use_sliding_window, max_window_layers", [
                "sliding_attention" if i >= first else "full_attention" for i in range(layers)]))
    if len(found) > 1 and found[0][1] != found[1][1]:
        raise CatalogError(locate(found[1][0].split(",")[0]), f"conflicts with {found[0][0]}: "
                           "they give different layer patterns", "keep one of them")
    if not found:
        return LayerPattern(None, "use_sliding_window" if no_sliding else "", no_sliding)
    source, types = found[0]
    return LayerPattern(types, source, no_sliding)


def model_entry(entry_id: str, values: dict[str, object], lines: Mapping[str, int], line: int,
                path: Path) -> Model:
    """One model from checked field values: layer kinds counted (from layer_types, or from
    Hugging Face pattern fields) and the shape checked."""
    values = dict(values)
    pattern = {k: values.pop(k) for k in LAYER_PATTERN_FIELDS if k in values}
    layers = values.pop("layer_types", None)
    if pattern:
        def locate(name: str) -> Location:
            return Location(path, lines.get(name, line), entry=entry_id, field=name)

        total = values.get("num_hidden_layers")
        found = pattern_layer_types(total if isinstance(total, int) else 0, pattern,
                                    bool(values.get("attention_chunk_size")), locate)
        listed = [getattr(i, "value", i) for i in layers] if isinstance(layers, list) else None
        if found.no_sliding and listed and "sliding_attention" in listed:
            raise CatalogError(locate("use_sliding_window"), "is false but layer_types lists "
                               "sliding_attention layers", "keep one of them")
        if found.no_sliding:
            values.pop("sliding_window", None)  # Qwen2: the window is not used
        if found.types is not None:
            if listed is not None and listed != found.types:
                raise CatalogError(locate("layer_types"), f"conflicts with {found.source}: "
                                   "they give different layer patterns", "keep one of them")
            if layers is None:
                layers = [Node(t, lines.get(found.source.split(",")[0], line), 0)
                          for t in found.types]
                lines = {**lines, "layer_types": lines.get(found.source.split(",")[0], line)}
    bare = Model(entry_id, values, lines, line, path)
    model = Model(entry_id, values, lines, line, path, _layer_counts(bare, layers))
    _check_model_shape(model)
    return model


def model_from_fields(entry_id: str, fields: Mapping[str, object], lines: Mapping[str, int],
                      line: int, path: Path) -> Model:
    """A model from plain values (what `planner import` read), checked as the YAML reader checks
    a catalog entry; errors name `path` (the config.json) and the line each value came from."""
    values: dict[str, object] = {}
    for key, value in fields.items():
        loc = Location(path, lines.get(key, line), entry=entry_id, field=key)
        spec = MODEL_FIELDS.get(key) or LAYER_PATTERN_FIELDS.get(key)
        if spec is None:
            raise CatalogError(loc, "unknown field", _suggest(key, list(MODEL_FIELDS)))
        node_line = lines.get(key, line)
        raw = [Node(v, node_line, 0) for v in value] if isinstance(value, list) else value
        values[key] = _check_value(spec, Node(raw, node_line, 0), loc)
    for key, spec in MODEL_FIELDS.items():
        if spec.required and key not in values:
            raise CatalogError(Location(path, line, entry=entry_id, field=key),
                               "required field is missing", f"add {key}: {spec.help}")
    return model_entry(entry_id, values, lines, line, path)


def load_models(path: Path | str = DEFAULT_MODELS) -> Catalog:
    """The model catalog: a models YAML, or a folder of Hugging Face model folders or config.json
    files imported on the fly (planner.inputs.hfimport)."""
    path = Path(path)
    if path.is_dir():
        from planner.inputs.hfimport import folder_catalog

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
    from planner.model.formats import KV_FORMATS, WEIGHT_FORMATS

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
