"""A model entry from checked field values: its layers counted by attention kind (from
``layer_types`` or from the Hugging Face pattern fields, as transformers builds them) and its
shape checked (heads, MLA, experts, windows), each error located at the field at fault."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from planner.errors import CatalogError, Location
from planner.inputs.entries import Entry, Model
from planner.inputs.fields import (
    LAYER_PATTERN_FIELDS,
    LAYER_TYPES,
    MODEL_FIELDS,
    MODEL_LAYER_COUNTS,
    check_value,
    suggest_field,
)
from planner.inputs.yamlsource import Node

# the fields that count a model's routed experts; a config uses one of them (Mixtral, gpt-oss and
# Llama 4 num_local_experts, Qwen MoE num_experts, DeepSeek, Kimi and GLM n_routed_experts)
ROUTED_EXPERT_FIELDS = ("num_local_experts", "num_experts", "n_routed_experts")


def model_class(model: Entry) -> str:
    """The model's class for the measured accuracy (catalogs/measured-accuracy.yaml): "moe"
    where the catalog model has routed experts, "dense" otherwise. Engines serve the two at
    different shares of the planner's speed, so a dense model's margin is not an MoE's."""
    return "moe" if any(model.number(f) > 0 for f in ROUTED_EXPERT_FIELDS) else "dense"


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
    named = [f for f in ROUTED_EXPERT_FIELDS if model.number(f)]
    if len(named) > 1:  # the arithmetic adds them up: two would count the experts twice
        raise CatalogError(model.locate(named[1]), f"conflicts with {named[0]}: both count the "
                           "routed experts", f"keep one of {', '.join(named)}")
    experts = sum(int(model.number(f)) for f in ROUTED_EXPERT_FIELDS)
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
            raise CatalogError(loc, "unknown field", suggest_field(key, list(MODEL_FIELDS)))
        node_line = lines.get(key, line)
        raw = [Node(v, node_line, 0) for v in value] if isinstance(value, list) else value
        values[key] = check_value(spec, Node(raw, node_line, 0), loc)
    for key, spec in MODEL_FIELDS.items():
        if spec.required and key not in values:
            raise CatalogError(Location(path, line, entry=entry_id, field=key),
                               "required field is missing", f"add {key}: {spec.help}")
    return model_entry(entry_id, values, lines, line, path)
