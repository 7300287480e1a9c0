"""A parsed config.json (and what lay beside it) as a catalog entry: the text model's section
chosen, fields read under their aliases and class defaults, the layer pattern and stored format
read, parameters counted, and the result checked like a catalog entry.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from planner.errors import CatalogError, Location
from planner.inputs.entries import Model
from planner.inputs.fields import (
    HF_IGNORED_FIELDS,
    ID_PATTERN,
    LAYER_PATTERN_FIELDS,
    MODEL_FIELDS,
    FieldSpec,
    check_value,
)
from planner.inputs.hfimport.files import GENERATION, INDEX, JsonFile, ShardCount, slug
from planner.inputs.hfimport.params import shape_params, vision_params
from planner.inputs.hfimport.quantisation import quant_format
from planner.inputs.model_shape import LayerPattern, model_from_fields, pattern_layer_types
from planner.inputs.yamlsource import Node
from planner.model.formats import WEIGHT_FORMATS

# Where a vision-language config keeps its language model.
TEXT_SECTIONS = ("text_config", "llm_config")
# Fields of the text model the planner sizes with, besides the layer pattern.
SHAPE_FIELDS = (
    "num_hidden_layers", "hidden_size", "num_attention_heads", "num_key_value_heads", "head_dim",
    "intermediate_size", "intermediate_size_mlp", "vocab_size", "tie_word_embeddings",
    "max_position_embeddings", "num_local_experts", "num_experts", "n_routed_experts",
    "num_experts_per_tok", "n_shared_experts", "moe_intermediate_size",
    "shared_expert_intermediate_size", "first_k_dense_replace", "interleave_moe_layer_step",
    "kv_lora_rank", "q_lora_rank", "qk_rope_head_dim", "qk_nope_head_dim", "v_head_dim",
    "sliding_window", "attention_chunk_size", "linear_num_value_heads", "linear_num_key_heads",
    "linear_key_head_dim", "linear_value_head_dim", "linear_conv_kernel_dim",
)
# The vision config's numbers vision_params reads (all positive where given).
VISION_NUMBERS = ("hidden_size", "intermediate_size", "num_hidden_layers", "depth", "patch_size",
                  "image_size", "num_channels", "projector_input_dim", "projector_output_dim",
                  "pixel_shuffle_ratio", "vision_output_dim")
VISION_TOP_NUMBERS = ("spatial_merge_size", "downsample_ratio")
# Shape fields the planner divides by: a 0 in the config is refused as soon as it is read.
MUST_BE_POSITIVE = ("num_hidden_layers", "hidden_size", "num_attention_heads",
                    "num_key_value_heads", "head_dim", "intermediate_size", "vocab_size")
# Other spellings of the same field (GPT-2, Falcon, ChatGLM, Mistral-native, gpt-oss ...).
ALIASES: dict[str, tuple[str, ...]] = {
    "num_hidden_layers": ("n_layer", "n_layers", "num_layers"),
    "hidden_size": ("n_embd", "d_model", "dim"),
    "num_attention_heads": ("n_head", "n_heads", "num_heads"),
    "num_key_value_heads": ("n_kv_heads", "num_kv_heads", "n_head_kv", "multi_query_group_num"),
    "intermediate_size": ("n_inner", "ffn_hidden_size", "ffn_dim", "hidden_dim"),
    "max_position_embeddings": ("n_positions", "max_seq_len", "seq_length"),
    "num_experts_per_tok": ("experts_per_token", "num_experts_per_token", "moe_top_k"),
    "vocab_size": ("padded_vocab_size", "n_vocab"),
}
# transformers class defaults that matter when a config leaves the field out.
CLASS_DEFAULTS: dict[str, dict[str, object]] = {
    "gemma3_text": {"vocab_size": 262208, "max_position_embeddings": 131072,
                    "tie_word_embeddings": True, "sliding_window": 4096,
                    "sliding_window_pattern": 6},
    "gemma2": {"tie_word_embeddings": True, "sliding_window_pattern": 2},
    "gemma": {"tie_word_embeddings": True},
    "llama4_text": {"tie_word_embeddings": False, "no_rope_layer_interval": 4,
                    "interleave_moe_layer_step": 1, "n_shared_experts": 1},
}
UNTIED_BY_DEFAULT = frozenset({
    "llama", "mistral", "mixtral", "qwen2", "qwen2_moe", "qwen3", "qwen3_moe", "qwen3_next",
    "deepseek_v2", "deepseek_v3", "gpt_oss", "phi3", "internlm2", "glm4_moe", "kimi_k2",
})
# Architectures the planner does not model.
STATE_SPACE_KEYS = ("ssm_cfg", "state_size", "mamba_d_state", "ssm_state_size",
                    "layers_block_type", "hybrid_override_pattern", "attn_layer_period")
STATE_SPACE_TYPES = ("mamba", "mamba2", "falcon_mamba", "jamba", "zamba", "zamba2",
                     "nemotron_h", "falcon_h1", "bamba", "rwkv", "rwkv7", "lfm2")


@dataclass
class Imported:
    """One catalog entry made from a config, and what was left out of it."""

    id: str
    fields: dict[str, object]  # catalog fields, in MODEL_FIELDS order
    lines: dict[str, int]  # the config line each field was read from
    config: Path
    used_defaults: list[str] = field(default_factory=list)
    ignored: list[str] = field(default_factory=list)  # read, not needed for sizing
    unknown: list[str] = field(default_factory=list)  # not recognised: check by hand
    model: Model | None = None


class _Section:
    """One JSON object of the config, remembering which keys were read."""

    def __init__(self, name: str, data: Mapping[str, Any], doc: JsonFile,
                 prefix: tuple[str, ...]) -> None:
        self.name, self.data, self.doc, self.prefix = name, data, doc, prefix
        self.used: set[str] = set()

    def get(self, key: str) -> Any:
        """The value, None when absent or null (null means absent)."""
        if key in self.data:
            self.used.add(key)
        return self.data.get(key)

    def line(self, key: str) -> int | None:
        return self.doc.lines.get((*self.prefix, key))

    def label(self, key: str) -> str:
        return ".".join((*self.prefix, key))

    def unused(self) -> list[str]:
        return [self.label(k) for k in self.data if k not in self.used]


class _Converter:
    def __init__(self, doc: JsonFile, entry_id: str) -> None:
        self.doc, self.id = doc, entry_id
        self.top = _Section("config", doc.data, doc, ())
        self.text = self.top
        self.vision: _Section | None = None
        self.values: dict[str, object] = {}
        self.lines: dict[str, int] = {}
        self.notes: list[str] = []
        self.defaults: list[str] = []
        self.sections: list[_Section] = [self.top]

    def loc(self, section: _Section | None, key: str | None) -> Location:
        line = section.line(key) if section is not None and key else None
        return Location(self.doc.path, line or 1, entry=self.id,
                        field=section.label(key) if section is not None and key else None)

    def fail(self, section: _Section | None, key: str | None, problem: str,
             hint: str | None = None) -> CatalogError:
        return CatalogError(self.loc(section, key), problem, hint)

    def sub(self, section: _Section, key: str) -> _Section | None:
        data = section.get(key)
        if data is None:
            return None
        if not isinstance(data, dict):
            raise self.fail(section, key, f"must be a JSON object, got {type(data).__name__}")
        child = _Section(key, data, self.doc, (*section.prefix, key))
        self.sections.append(child)
        return child

    def read(self, name: str, section: _Section | None = None) -> tuple[object, _Section | None,
                                                                         str | None]:
        """A field of the text model under any of its spellings; two that disagree are refused."""
        section = section or self.text
        found: list[tuple[str, object]] = []
        for key in (name, *ALIASES.get(name, ())):
            value = section.get(key)
            if value is not None:
                found.append((key, value))
        for (key_a, a), (key_b, b) in zip(found, found[1:], strict=False):
            if a != b:
                raise self.fail(section, key_b, f"conflicts with {section.label(key_a)}: "
                                f"{b!r} against {a!r}", f"keep one of {key_a} and {key_b}")
        if not found:
            return None, None, None
        return found[0][1], section, found[0][0]

    def set(self, name: str, value: object, section: _Section | None = None,
            key: str | None = None) -> None:
        self.values[name] = value
        line = section.line(key) if section is not None and key else None
        if line:
            self.lines[name] = line

    # -- the parts of the config -------------------------------------------------------------

    def choose_sections(self) -> None:
        if self.top.get("is_encoder_decoder"):
            raise self.fail(self.top, "is_encoder_decoder", "is an encoder-decoder model (T5, "
                            "BART, Whisper ...), which the planner does not size",
                            "the planner sizes decoder-only language models")
        for key in TEXT_SECTIONS:
            section = self.sub(self.top, key)
            if section is not None:
                self.text = section
                self.notes.append(f"Text model read from {key}.")
                for name in SHAPE_FIELDS:  # the outer config must not say otherwise
                    outer, inner = self.top.data.get(name), section.data.get(name)
                    if outer is not None and inner is not None and outer != inner:
                        raise self.fail(self.top, name, f"conflicts with {key}.{name}: {outer!r} "
                                        f"against {inner!r}", f"keep the one in {key}")
                break
        self.vision = self.sub(self.top, "vision_config")
        model_type = str(self.text.get("model_type") or self.top.get("model_type") or "")
        self.model_type = model_type
        if model_type in STATE_SPACE_TYPES or any(k in self.text.data for k in STATE_SPACE_KEYS):
            key = next((k for k in STATE_SPACE_KEYS if k in self.text.data), "model_type")
            raise self.fail(self.text, key, f"model_type '{model_type}' has state-space (Mamba) "
                            "or convolution layers, which the planner does not model",
                            "the planner models softmax attention (full, sliding, chunked), MLA "
                            "and Gated DeltaNet linear attention; write the entry by hand with "
                            "layer_types and the linear_* state fields if that approximates it")

    def default(self, name: str, applies: bool = True) -> object:
        """The model class's default for a field the config leaves out (noted when used)."""
        value = CLASS_DEFAULTS.get(self.model_type, {}).get(name) if applies else None
        if value is not None:
            self.defaults.append(f"{name} {json.dumps(value)}")
        return value

    def shape(self) -> None:
        for name in SHAPE_FIELDS:
            value, section, key = self.read(name)
            if name == "tie_word_embeddings" and value is None:
                value, section, key = self.read(name, self.top)
            if value is None:
                moe = name in ("interleave_moe_layer_step", "n_shared_experts")
                value = self.default(name, applies=(
                    (name != "sliding_window" or self.slides())
                    and (not moe or bool(self.text.data.get("num_local_experts")))))
            if value is None:
                continue
            self.set(name, self.checked(name, value, section, key), section, key)
        for name in ("num_hidden_layers", "hidden_size", "num_attention_heads",
                     "intermediate_size", "vocab_size"):
            if name not in self.values:
                line = self.text.line("model_type") or self.top.line("model_type") or 1
                raise CatalogError(Location(self.doc.path, line, entry=self.id, field=name),
                                   f"the config has no {name}, the {MODEL_FIELDS[name].help}: "
                                   f"the planner cannot size model_type "
                                   f"'{self.model_type or 'unknown'}' without it",
                                   f"add it by hand to the imported entry: {name}: N, from the "
                                   "model card or the checkpoint")
        if self.values.get("tie_word_embeddings") is None:
            self.tie_default()
        experts = [k for k in ("num_local_experts", "num_experts", "n_routed_experts")
                   if self.values.get(k)]
        if len(experts) > 1:
            counts = {self.values[k] for k in experts}
            if len(counts) > 1:
                raise self.fail(self.text, experts[1], f"conflicts with {experts[0]}: "
                                f"{self.values[experts[1]]} against {self.values[experts[0]]} "
                                "routed experts", f"keep one of {', '.join(experts)}")
            for extra in experts[1:]:
                del self.values[extra]
        if self.values.get("num_experts") == 0 or not any(self.values.get(k) for k in experts):
            for name in ("num_experts", "num_experts_per_tok", "moe_intermediate_size",
                         "shared_expert_intermediate_size", "n_shared_experts",
                         "first_k_dense_replace", "interleave_moe_layer_step"):
                self.values.pop(name, None)
        if not self.values.get("kv_lora_rank"):
            for name in ("q_lora_rank", "qk_rope_head_dim", "qk_nope_head_dim", "v_head_dim"):
                self.values.pop(name, None)
        elif self.text.data.get("q_lora_rank", 0) is None:
            self.notes.append("MLA without query compression (q_lora_rank null).")
        for name in ("n_shared_experts", "first_k_dense_replace"):
            if self.values.get(name) == 0:
                self.values.pop(name)
        self.moe_layout()

    def checked(self, name: str, value: object, section: _Section | None,
                key: str | None) -> object:
        """A number of the config checked as the catalog field it becomes (a number, finite,
        not negative, within sane bounds; greater than 0 where the shape divides by it), before
        anything computes with it: a located error, not a ZeroDivisionError or OverflowError."""
        spec = MODEL_FIELDS.get(name)
        if spec is None or spec.kind not in ("int", "number"):
            return value
        if name not in MUST_BE_POSITIVE:  # 0 can mean "none" here; the entry's check decides
            spec = replace(spec, allow_zero=True)
        return check_value(spec, Node(value, 0, 0), self.loc(section, key))

    def slides(self) -> bool:
        use = self.text.data.get("use_sliding_window")
        return use is not False

    def tie_default(self) -> None:
        if self.model_type in UNTIED_BY_DEFAULT:
            self.values["tie_word_embeddings"] = False
            self.defaults.append("tie_word_embeddings false")
        else:
            self.values["tie_word_embeddings"] = True
            self.notes.append("tie_word_embeddings is not in the config: assumed true, the "
                              "transformers PretrainedConfig default; check the checkpoint for "
                              "a separate lm_head.")

    def moe_layout(self) -> None:
        """Which layers are MoE, in the catalog's terms (first_k_dense_replace, every
        interleave_moe_layer_step-th layer)."""
        layers = int(self.values["num_hidden_layers"])  # type: ignore[call-overload]
        if not any(self.values.get(k) for k in ("num_local_experts", "num_experts",
                                                "n_routed_experts")):
            for key in ("decoder_sparse_step", "mlp_only_layers", "moe_layer_freq", "moe_layers"):
                self.text.get(key)
            return
        step = self.text.get("decoder_sparse_step")
        if step not in (None, 1):
            self.set("interleave_moe_layer_step", step, self.text, "decoder_sparse_step")
        freq = self.text.get("moe_layer_freq")
        if freq not in (None, 1):
            raise self.fail(self.text, "moe_layer_freq", f"moe_layer_freq {freq}: MoE on every "
                            f"{freq}-th layer counted from layer 0 is a layout the catalog "
                            "cannot express", "give first_k_dense_replace and "
                            "interleave_moe_layer_step by hand to approximate it")
        dense = self.text.get("mlp_only_layers") or []
        if dense:
            if dense != list(range(len(dense))) or self.values.get("first_k_dense_replace"):
                raise self.fail(self.text, "mlp_only_layers", f"mlp_only_layers {dense}: dense "
                                "layers other than the first ones cannot be expressed",
                                "give first_k_dense_replace by hand to approximate it")
            self.set("first_k_dense_replace", len(dense), self.text, "mlp_only_layers")
        listed = self.text.get("moe_layers")
        if isinstance(listed, list) and listed:
            first = int(self.values.get("first_k_dense_replace") or 0)  # type: ignore[call-overload]
            every = int(self.values.get("interleave_moe_layer_step") or 1)  # type: ignore[call-overload]
            expected = [i for i in range(first, layers) if (i - first + 1) % every == 0]
            if sorted(listed) != expected:
                raise self.fail(self.text, "moe_layers", f"conflicts with "
                                f"interleave_moe_layer_step {every}: lists MoE layers {listed}",
                                "keep one of them")

    def layer_pattern(self) -> None:
        layers = int(self.values["num_hidden_layers"])  # type: ignore[call-overload]
        pattern: dict[str, object] = {}
        lines: dict[str, int] = {}
        for name in LAYER_PATTERN_FIELDS:
            value = self.text.get(name)
            if value is None or (name == "no_rope_layers" and value == []
                                 and "no_rope_layer_interval" not in self.text.data):
                continue
            pattern[name] = value
            lines[name] = self.text.line(name) or 1
        listed = self.text.get("layer_types")
        if listed is None and not pattern.keys() & {"full_attention_interval",
                                                    "sliding_window_pattern"}:
            for name, applies in (
                    ("sliding_window_pattern", bool(self.values.get("sliding_window"))),
                    ("no_rope_layer_interval", "no_rope_layers" not in pattern
                     and bool(self.values.get("attention_chunk_size")))):
                value = self.default(name, applies)
                if value is not None:
                    pattern[name] = value
        found = pattern_layer_types(layers, pattern, bool(self.values.get("attention_chunk_size")),
                                    lambda name: Location(self.doc.path, lines.get(name, 1),
                                                          entry=self.id, field=name))
        if found.no_sliding and "sliding_window" in self.values:
            del self.values["sliding_window"]
            self.notes.append("use_sliding_window is false: no layer slides (sliding_window "
                              "ignored).")
        types: list[str] | None = found.types
        if listed is not None:
            if not isinstance(listed, list) or len(listed) != layers:
                raise self.fail(self.text, "layer_types", "must list one kind per layer "
                                f"({layers}), got {listed!r:.80}")
            if found.no_sliding and "sliding_attention" in listed:
                raise self.fail(self.text, "use_sliding_window", "is false but layer_types lists "
                                "sliding_attention layers", "keep one of them")
            if found.types is not None and list(listed) != found.types:
                raise self.fail(self.text, "layer_types", f"conflicts with {found.source}: they "
                                "give different layer patterns", "keep one of them")
            types = [str(t) for t in listed]
            source = "layer_types"
        else:
            source = self._pattern_words(found)
        if types is not None and len(set(types)) == 1 and types[0] in (
                "full_attention", "sliding_attention"):
            if types[0] == "full_attention":
                self.values.pop("sliding_window", None)
            types = None
        if types is not None:
            self.set("layer_types", types, self.text, "layer_types")
            if "layer_types" not in self.lines and found.source:
                self.lines["layer_types"] = lines.get(found.source.split(",")[0], 1)
        kinds: dict[str, int] = {}
        for kind in types or ["sliding_attention" if self.values.get("sliding_window")
                              else "full_attention"] * layers:
            kinds[kind] = kinds.get(kind, 0) + 1
        counted = ", ".join(f"{n} {k.replace('_', ' ')}" for k, n in kinds.items())
        self.notes.append(f"Layers: {counted}" + (f" ({source})." if source else "."))

    @staticmethod
    def _pattern_words(found: LayerPattern) -> str:
        return {"full_attention_interval": "full_attention_interval: layer i full iff "
                "(i+1) % interval == 0, else linear attention",
                "sliding_window_pattern": "sliding_window_pattern: layer i full iff "
                "(i+1) % pattern == 0, else sliding window",
                "no_rope_layers": "no_rope_layers: RoPE layers chunked, NoPE layers full",
                "use_sliding_window, max_window_layers": "use_sliding_window with "
                "max_window_layers"}.get(found.source, found.source)

    # -- stored format, bytes and parameters ---------------------------------------------------

    def stored_format(self, extra: JsonFile | None) -> tuple[str | None, bool]:
        """(checkpoint format, quantized?) from quantization_config, else the dtype."""
        quant = self.sub(self.top, "quantization_config") or self.sub(self.text,
                                                                      "quantization_config")
        data: Mapping[str, Any] = quant.data if quant is not None else {}
        if quant is None and extra is not None:
            data = extra.data.get("quantization", extra.data)
            self.notes.append(f"Quantization read from {extra.path.name}.")
        if data:
            fmt, words = quant_format(data)
            if quant is not None:
                quant.used.update(quant.data)
            self.notes.append(f"Stored weights: {words}.")
            if fmt is None:
                self.notes.append("checkpoint_format left out: no planner weight format "
                                  "matches; add it by hand if one is close.")
            return fmt, True
        dtype = self.top.get("torch_dtype") or self.top.get("dtype") or self.text.get(
            "torch_dtype") or self.text.get("dtype")
        fmt = {"bfloat16": "bf16", "float16": "fp16"}.get(str(dtype))
        if dtype is None:
            self.notes.append("The config states no dtype and no quantization: weights assumed "
                              "bf16.")
            return "bf16", False
        self.notes.append(f"Stored weights: {dtype} (torch_dtype)." if fmt else
                          f"Stored weights: {dtype}, which no planner weight format matches; "
                          "checkpoint_format left out.")
        return fmt, False

    def vision_params(self) -> int:
        if self.vision is None:
            return 0
        for section, keys in ((self.vision, VISION_NUMBERS), (self.top, VISION_TOP_NUMBERS)):
            for key in keys:
                if section.data.get(key) is not None:
                    spec = FieldSpec("number", help=f"the vision model's {key}", most=1e9,
                                     most_why="no vision tower is near that size")
                    check_value(spec, Node(section.data[key], 0, 0), self.loc(section, key))
        count, words = vision_params(self.vision.data, self.top.data,
                                      int(self.values["hidden_size"]))  # type: ignore[call-overload]
        self.vision.used.update(self.vision.data)
        for key in ("spatial_merge_size", "multimodal_projector_bias", "projector_hidden_act",
                    "downsample_ratio", "mm_tokens_per_image", "vision_feature_layer",
                    "vision_feature_select_strategy", "image_token_index", "boi_token_index",
                    "eoi_token_index"):
            self.top.get(key)
        self.notes.append(f"vision_params: {words}, derived from vision_config.")
        return count


def convert(config: JsonFile, entry_id: str, *, hf_id: str | None = None,
            index: JsonFile | None = None, shards: ShardCount | None = None,
            shard_note: str = "", extra_quant: JsonFile | None = None,
            generation: JsonFile | None = None,
            card: Mapping[str, Any] | None = None) -> Imported:
    """A catalog entry from a parsed config (and what lay beside it), checked like a catalog
    entry; errors are located in the config file."""
    if not ID_PATTERN.match(entry_id):
        raise CatalogError(Location(config.path, entry=entry_id), f"'{entry_id}' cannot be a "
                           "catalog id: ids are lower-case letters, digits, dots and hyphens",
                           f"pass --id, e.g. --id {slug(entry_id) or 'my-model'}")
    c = _Converter(config, entry_id)
    c.choose_sections()
    c.shape()
    c.layer_pattern()
    fmt, quantized = c.stored_format(extra_quant)
    vision = c.vision_params()
    if c.model_type == "qwen3_next":
        c.values["_gated_query"] = True
    total, active = shape_params(c.values)
    c.values.pop("_gated_query", None)
    mtp = c.text.get("num_nextn_predict_layers") or c.text.get("mtp_num_hidden_layers") or 0
    if mtp:
        c.notes.append(f"The checkpoint has {mtp} multi-token-prediction layer(s), not counted "
                       "in params; set draft_layers when serving with MTP speculative decoding.")
    basis = "derived from the shape (norms and biases not counted)"
    size = None
    if index is not None:
        meta = index.data.get("metadata")
        stored = meta.get("total_size") if isinstance(meta, dict) else None
        if stored is not None:
            spec = FieldSpec("int", help=f"the checkpoint's bytes on disk ({INDEX})")
            size = int(check_value(spec, Node(stored, 0, 0), Location(  # type: ignore[call-overload]
                index.path, index.lines.get(("metadata", "total_size")) or 1, entry=c.id,
                field="metadata.total_size")))
    if shards is not None and not shards.packed:
        if shards.vision and vision:
            vision = shards.vision
        total = shards.text
        basis = f"counted from the tensor shapes in {shards.files} safetensors header(s)"
        size = size or shards.bytes
    elif size and not quantized and fmt in ("bf16", "fp16") and not mtp:
        counted = size // 2 - vision
        if abs(counted - total) <= 0.03 * total:
            basis = (f"{INDEX} total_size {size:,} B / 2 bytes" + (
                f", less vision_params {vision:,}" if vision else "") + f" (shape: {total:,})")
            total = counted
        else:  # extra tensors (a draft head, float32 parts) or a shape the count misses
            basis += (f"; {INDEX} total_size / 2 bytes gives {counted:,}, "
                      f"{100 * (counted / total - 1):+.1f}%, not used")
    if shard_note:
        c.notes.append(f"Shards not read: {shard_note}.")
    experts = any(c.values.get(k) for k in ("num_local_experts", "num_experts",
                                             "n_routed_experts"))
    c.values["params"] = total
    if experts:
        c.values["active_params"] = min(active, total)
    if vision:
        c.values["vision_params"] = vision
    c.notes.append(f"params {total:,}: {basis}" + (
        f"; active_params {c.values['active_params']:,} derived from the shape (top-"
        f"{c.values.get('num_experts_per_tok')} routing, embeddings included)" if experts else "")
        + ".")
    if size:
        text_bytes = size - 2 * vision if vision and not (shards and shards.vision) else size
        if shards is not None and shards.vision:
            text_bytes = size - 2 * shards.vision
        c.values["checkpoint_bytes"] = text_bytes
        c.notes.append(f"checkpoint_bytes from {INDEX if index else 'the shard headers'} "
                       f"total_size {size:,} B" + (" less the vision tower at 2 bytes per "
                                                   "parameter (the planner adds it)"
                                                   if text_bytes != size else "")
                       + (" (includes the MTP layers)" if mtp else "") + ".")
    if fmt is not None and fmt in WEIGHT_FORMATS:
        c.values["checkpoint_format"] = fmt
    if generation is not None:
        c.notes.append(f"{GENERATION} read: sampling defaults only, nothing to size.")
    if card:
        base = card.get("base_model")
        if base:
            c.notes.append(f"Model card: base_model {base}.")
    hf = hf_id
    name_or_path = c.top.get("_name_or_path")
    if isinstance(name_or_path, str) and re.fullmatch(r"[\w.-]+/[\w.-]+", name_or_path):
        hf = name_or_path
    if c.defaults:
        c.notes.insert(0, f"From {c.model_type} class defaults (absent in the config): "
                       f"{', '.join(c.defaults)}.")
    sources = [f"config.json {config.path} (sha256 {config.sha256})"]
    if index is not None:
        sources.append(f"{INDEX} (sha256 {index.sha256})")
    source = "planner import of " + "; ".join(sources)
    fields: dict[str, object] = {"name": (hf or entry_id).split("/")[-1], "source": source,
                                 "notes": " ".join(c.notes)}
    if hf:
        fields["hf_id"] = hf
    for name in MODEL_FIELDS:
        if name in c.values:
            fields[name] = c.values[name]
    fields = {k: fields[k] for k in MODEL_FIELDS if k in fields}
    line = config.lines.get(("model_type",)) or 1
    model = model_from_fields(entry_id, fields, c.lines, line, config.path)
    unused = [name for section in c.sections for name in section.unused()
              if name not in ("text_config", "llm_config", "vision_config",
                              "quantization_config")]
    ignored = [n for n in unused if n.split(".")[-1] in HF_IGNORED_FIELDS
               or n.startswith("vision_config.")]
    unknown = [n for n in unused if n not in ignored]
    return Imported(entry_id, fields, c.lines, config.path, c.defaults, ignored, unknown, model)
