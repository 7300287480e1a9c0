"""Hugging Face model folders and config.json files as model catalog entries.

``planner import`` and ``--models FOLDER`` read a model the project has not seen. The conversion
(:func:`convert`) is pure: parsed config dicts (and, when the folder has them, the safetensors
index, shard headers and model card) in; a catalog entry, the line each field came from and the
config fields it did not use out. The readers around it (:func:`read_json`, :func:`import_path`,
:func:`folder_catalog`) only find and parse files, keeping line numbers so that every error names
the file, line and field at fault.

What a naive reading gets wrong, and this one does not: vision-language models nest the text model
under ``text_config`` (Gemma 3, Llama 4, Mistral 3) or ``llm_config`` (InternVL); configs leave
fields at their transformers class defaults (Gemma 3's vocabulary, tied embeddings and 5:1
sliding pattern); the layer pattern is spelt ``layer_types``, ``full_attention_interval``,
``sliding_window_pattern``, ``use_sliding_window``/``max_window_layers`` or
``no_rope_layers``/``attention_chunk_size``; ``quantization_config`` says how the weights are
stored; ``q_lora_rank: null`` is MLA without query compression.
"""

from __future__ import annotations

import bisect
import hashlib
import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from planner.errors import CatalogError, Location
from planner.inputs.catalog import (
    HF_IGNORED_FIELDS,
    ID_PATTERN,
    LAYER_PATTERN_FIELDS,
    MODEL_FIELDS,
    Catalog,
    Entry,
    LayerPattern,
    Model,
    load_models,
    model_from_fields,
    pattern_layer_types,
)
from planner.model.formats import WEIGHT_FORMATS

CONFIG = "config.json"
INDEX = "model.safetensors.index.json"
GENERATION = "generation_config.json"
CARD = "README.md"
# *config.json files in a model folder that are not a model's config.
NOT_MODEL_CONFIGS = frozenset({
    GENERATION, "tokenizer_config.json", "preprocessor_config.json", "processor_config.json",
    "video_preprocessor_config.json", "adapter_config.json", "quantize_config.json",
    "hf_quant_config.json", "sentence_bert_config.json", "config_sentence_transformers.json",
})

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
# Tensor-name parts of a checkpoint's vision tower and projector.
VISION_TENSORS = ("vision_tower", "vision_model", "multi_modal_projector", "visual.", "mlp1.",
                  "mm_projector", "vision_embed", "patch_merger")
# Tensor-name endings of quantization metadata (scales, zero points), not parameters.
SCALE_TENSORS = re.compile(r"(_scale|_scale_inv|_scale_2|\.scales|\.qzeros|\.g_idx|\.SCB|"
                           r"weight_format|_zero_point|_global_scale)$")


@dataclass(frozen=True)
class JsonFile:
    """A parsed JSON object and the line each key (by path) was written on."""

    path: Path
    data: dict[str, Any]
    lines: Mapping[tuple[str, ...], int]
    sha256: str


@dataclass(frozen=True)
class ShardCount:
    """Parameters and bytes counted from safetensors shard headers."""

    text: int
    vision: int
    mtp: int
    bytes: int
    packed: bool  # integer-packed tensors: element counts are not parameter counts
    files: int


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


# --------------------------------------------------------------------------------------------
# Reading files
# --------------------------------------------------------------------------------------------

_SPACE = re.compile(r"[ \t\n\r]*")


def _key_lines(text: str, path: Path) -> dict[tuple[str, ...], int]:
    """The 1-based line of every object key (by key path; arrays are not entered); a key given
    twice in one object is refused (JSON readers silently keep the last)."""
    starts = [0] + [m.end() for m in re.finditer("\n", text)]
    lines: dict[tuple[str, ...], int] = {}
    decoder = json.JSONDecoder()

    def line(pos: int) -> int:
        return bisect.bisect_right(starts, pos)

    def skip(pos: int) -> int:
        match = _SPACE.match(text, pos)
        return match.end() if match else pos

    def walk(pos: int, where: tuple[str, ...]) -> int:
        pos = skip(pos)
        if text[pos] != "{":
            return int(decoder.raw_decode(text, pos)[1])
        pos = skip(pos + 1)
        if text[pos] == "}":
            return pos + 1
        while True:
            key, after = json.decoder.scanstring(text, pos + 1)  # type: ignore[attr-defined]
            at = (*where, key)
            if at in lines:
                raise CatalogError(Location(path, line(pos), field=".".join(at)),
                                   f"duplicate key '{key}' (first on line {lines[at]})",
                                   "JSON readers keep only the last of two equal keys; remove "
                                   "one of them")
            lines[at] = line(pos)
            pos = skip(walk(skip(after) + 1, at))
            if text[pos] == "}":
                return pos + 1
            pos = skip(pos + 1)

    walk(0, ())
    return lines


def read_json(path: Path, what: str) -> JsonFile:
    """A JSON object file; syntax errors name the file, line and column."""
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise CatalogError(Location(path), "file not found", f"pass {what}") from None
    except IsADirectoryError:
        raise CatalogError(Location(path), "is a folder, not a file", f"pass {what}") from None
    except OSError as exc:
        raise CatalogError(Location(path), f"cannot be read: {exc.strerror}") from None
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise CatalogError(Location(path, raw[: exc.start].count(b"\n") + 1),
                           "is not valid UTF-8 text", "save the file as UTF-8") from None
    if not text.strip():
        raise CatalogError(Location(path), "is empty", f"expected {what}")
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise CatalogError(Location(path, exc.lineno, exc.colno), f"JSON syntax error: {exc.msg}",
                           "fix the JSON at this line and column (a missing comma, quote or "
                           "bracket, or a trailing comma, which JSON does not allow)") from None
    except RecursionError:
        raise CatalogError(Location(path), "is nested too deeply to read") from None
    if not isinstance(data, dict):
        raise CatalogError(Location(path, 1), f"must be a JSON object {{...}}, found "
                           f"{type(data).__name__}", f"pass {what}")
    return JsonFile(path, data, _key_lines(text, path), hashlib.sha256(raw).hexdigest())


def _is_config_name(name: str) -> bool:
    return (name not in NOT_MODEL_CONFIGS and name.endswith(".json")
            and (name == CONFIG or name.endswith(("_config.json", "-config.json"))))


def _folder_config(folder: Path) -> Path | None:
    """A model folder's config.json (a Hugging Face cache folder: its newest snapshot's)."""
    if (folder / CONFIG).is_file():
        return folder / CONFIG
    snapshots = sorted((folder / "snapshots").glob(f"*/{CONFIG}"),
                       key=lambda p: p.stat().st_mtime) if (folder / "snapshots").is_dir() else []
    return snapshots[-1] if snapshots else None


def find_configs(path: Path, models_option: bool = False) -> list[Path]:
    """The configs a PATH names: a config.json, a model folder's, or each one in a folder of
    model folders and *config.json files (models_option: the folder given to --models)."""
    if path.is_file():
        return [path]
    if not path.exists():
        raise CatalogError(Location(path), "not found",
                           "pass a config.json, a model folder holding one, or a folder of "
                           "model folders")
    own = _folder_config(path)
    if own is not None:
        return [own]
    found: list[Path] = []
    for child in sorted(path.iterdir()):
        if child.is_dir():
            config = _folder_config(child)
            if config is not None:
                found.append(config)
        elif child.is_file() and _is_config_name(child.name):
            found.append(child)
    if not found:
        what = "is a folder, not a file, and" if models_option else "is a folder that"
        raise CatalogError(Location(path), f"{what} holds no config.json (nor model folders "
                           "or *config.json files)",
                           "pass a models YAML, a Hugging Face model folder (config.json and "
                           "optionally model.safetensors.index.json), its config.json, or a "
                           "folder of such model folders")
    return found


def _names(config: Path) -> tuple[str, str | None]:
    """A default id and Hugging Face repository id from where the config lies."""
    if config.name == CONFIG:
        folder = config.parent
        if folder.parent.name == "snapshots" and folder.parent.parent.name.startswith("models--"):
            parts = folder.parent.parent.name.split("--")[1:]  # Hugging Face cache layout
            return parts[-1], "/".join(parts) if len(parts) == 2 else None
        return folder.resolve().name, None
    stem = re.sub(r"[_.-]?config$", "", config.stem)
    parts = stem.split("--")  # model_configs/org--name_config.json
    return parts[-1], "/".join(parts) if len(parts) == 2 else None


def slug(name: str) -> str:
    """A catalog id from a folder or model name: lower case, separators become hyphens."""
    text = re.sub(r"[^a-z0-9.]+", "-", name.lower())
    text = re.sub(r"[.-]*\.[.-]*", lambda m: "." if m.group() == "." else "-", text)
    return text.strip("-.")


def _read_shards(folder: Path, files: Iterable[str], layers: int) -> tuple[ShardCount | None,
                                                                           str]:
    """Parameters from the shards' safetensors headers (8-byte length + JSON), when present."""
    text = vision = mtp = size = count = 0
    packed = False
    for name in sorted(set(files)):
        path = folder / name
        if not path.is_file():
            return None, ""
        with path.open("rb") as handle:
            head = handle.read(8)
            if head.startswith(b"version "):
                return None, f"{name} is a Git LFS pointer, not the weights"
            length = int.from_bytes(head, "little")
            if not 2 <= length <= 100_000_000:
                return None, f"{name} has no readable safetensors header"
            try:
                header = json.loads(handle.read(length))
            except ValueError:
                return None, f"{name} has no readable safetensors header"
        count += 1
        for tensor, info in header.items():
            if tensor == "__metadata__" or not isinstance(info, dict):
                continue
            begin, end = info.get("data_offsets", [0, 0])
            size += int(end) - int(begin)
            if SCALE_TENSORS.search(tensor):
                continue
            if str(info.get("dtype", "")).startswith(("I", "U")):
                packed = True
            elements = 1
            for dim in info.get("shape", []):
                elements *= int(dim)
            layer = re.search(r"layers\.(\d+)\.", tensor)
            if any(part in tensor for part in VISION_TENSORS):
                vision += elements
            elif tensor.startswith("mtp.") or (layer and int(layer.group(1)) >= layers):
                mtp += elements
            else:
                text += elements
    if not count:
        return None, ""
    return ShardCount(text, vision, mtp, size, packed, count), ""


def _front_matter(path: Path) -> dict[str, Any]:
    """The YAML front matter of a model card (README.md), if it has one."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return {}
    match = re.match(r"---\s*\n(.*?)\n---\s*\n", text, re.S)
    if not match:
        return {}
    try:
        data = yaml.safe_load(match.group(1))
    except yaml.YAMLError:
        return {}
    return data if isinstance(data, dict) else {}


def import_path(config_path: Path, entry_id: str | None = None) -> Imported:
    """Import one model from its config.json and whatever lies beside it."""
    config = read_json(config_path, "a Hugging Face config.json")
    folder = config_path.parent
    index = read_json(folder / INDEX, "a safetensors index") if config_path.name == CONFIG and (
        folder / INDEX).is_file() else None
    extra_quant = None
    for name in ("quantize_config.json", "hf_quant_config.json"):
        if config_path.name == CONFIG and (folder / name).is_file():
            extra_quant = read_json(folder / name, f"a {name}")
    shards: ShardCount | None = None
    shard_note = ""
    if config_path.name == CONFIG:
        files: list[str] = []
        if index is not None and isinstance(index.data.get("weight_map"), dict):
            files = [str(f) for f in index.data["weight_map"].values()]
        elif (folder / "model.safetensors").is_file():
            files = ["model.safetensors"]
        if files:
            layers = _layer_count(config.data)
            shards, shard_note = _read_shards(folder, files, layers)
    generation = read_json(folder / GENERATION, "a generation_config.json") if (
        config_path.name == CONFIG and (folder / GENERATION).is_file()) else None
    card = _front_matter(folder / CARD) if config_path.name == CONFIG else {}
    default_id, hf_id = _names(config_path)
    return convert(config, entry_id or slug(default_id), hf_id=hf_id, index=index, shards=shards,
                   shard_note=shard_note, extra_quant=extra_quant, generation=generation,
                   card=card)


def _layer_count(data: Mapping[str, Any]) -> int:
    for section in TEXT_SECTIONS:
        if isinstance(data.get(section), dict):
            data = data[section]
            break
    value = data.get("num_hidden_layers") or data.get("n_layer") or data.get("num_layers")
    return value if isinstance(value, int) else 0


def import_paths(paths: Sequence[Path], entry_id: str | None = None,
                 models_option: bool = False) -> list[Imported]:
    """Import every model the PATHs name; ids must be distinct."""
    items: list[Imported] = []
    seen: dict[str, Path] = {}
    for path in paths:
        for config in find_configs(path, models_option):
            item = import_path(config, entry_id)
            if item.id in seen:
                raise CatalogError(Location(config, 1, entry=item.id),
                                   f"id '{item.id}' is also the id of {seen[item.id]}",
                                   "rename one of the folders, or import them one at a time "
                                   "with --id")
            seen[item.id] = config
            items.append(item)
    return items


def folder_catalog(folder: Path) -> Catalog:
    """``--models FOLDER``: a catalog of every model folder or config.json in it."""
    items = import_paths([folder], models_option=True)
    entries: dict[str, Entry] = {}
    digest = hashlib.sha256()
    for item in items:
        assert item.model is not None
        entries[item.id] = item.model
        digest.update(f"{item.config}\0{item.fields.get('source')}\0".encode())
    return Catalog(folder, digest.hexdigest(), entries)


# --------------------------------------------------------------------------------------------
# The conversion
# --------------------------------------------------------------------------------------------


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
            self.set(name, value, section, key)
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
            fmt, words = _quant_format(data)
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
        count, words = _vision_params(self.vision.data, self.top.data,
                                      int(self.values["hidden_size"]))  # type: ignore[call-overload]
        self.vision.used.update(self.vision.data)
        for key in ("spatial_merge_size", "multimodal_projector_bias", "projector_hidden_act",
                    "downsample_ratio", "mm_tokens_per_image", "vision_feature_layer",
                    "vision_feature_select_strategy", "image_token_index", "boi_token_index",
                    "eoi_token_index"):
            self.top.get(key)
        self.notes.append(f"vision_params: {words}, derived from vision_config.")
        return count


def _quant_format(data: Mapping[str, Any]) -> tuple[str | None, str]:
    """The planner weight format a quantization_config stores, and words for the notes."""
    method = str(data.get("quant_method") or data.get("quant_algo") or "").lower()
    keep = data.get("modules_to_not_convert") or data.get("ignore") or data.get(
        "llm_int8_skip_modules") or data.get("exclude_modules")
    kept = f"; kept in 16 bits: {', '.join(map(str, keep))}" if keep else ""
    if method == "fp8" or method == "fbgemm_fp8":
        block = data.get("weight_block_size")
        scales = (f"block-wise {'x'.join(map(str, block))} scales" if block
                  else "per-tensor or per-channel scales")
        return "fp8", f"FP8 ({data.get('fmt', 'e4m3')}, {scales}){kept}"
    if method == "mxfp4":
        return "mxfp4", f"MXFP4 (4-bit, shared 8-bit scale per 32){kept}"
    if method in ("gptq", "awq", "auto-round", "autoround", "gptq_marlin", "awq_marlin"):
        bits = data.get("bits") or data.get("w_bit")
        group = data.get("group_size") or data.get("q_group_size")
        words = f"{method.upper()} {bits}-bit, group {group}{kept}"
        return {4: "int4", 8: "int8"}.get(bits if isinstance(bits, int) else 0), words
    if method == "bitsandbytes":
        if data.get("load_in_8bit"):
            return "int8", f"bitsandbytes LLM.int8 (8-bit){kept}"
        kind = data.get("bnb_4bit_quant_type", "nf4")
        return None, f"bitsandbytes 4-bit {kind}{kept}"
    if method == "compressed-tensors":
        found: list[str] = []
        for group in (data.get("config_groups") or {}).values():
            weights = group.get("weights") or {} if isinstance(group, dict) else {}
            bits, kind = weights.get("num_bits"), weights.get("type")
            size = weights.get("group_size")
            fmt: str | None = {(8, "float"): "fp8", (8, "int"): "int8",
                               (4, "int"): "int4"}.get((int(bits or 0), str(kind)))
            if (bits, kind) == (4, "float"):
                fmt = "nvfp4" if size == 16 else "mxfp4" if size == 32 else None
            if fmt:
                found.append(fmt)
        scheme = str(data.get("format", ""))
        if not found and "nvfp4" in scheme:
            found.append("nvfp4")
        fmt = max(set(found), key=found.count) if found else None
        kinds = ", ".join(sorted(set(found))) or "unrecognised"
        return fmt, f"compressed-tensors {scheme or 'scheme'} ({kinds}){kept}"
    if method == "modelopt" or "quant_algo" in data:
        algo = str(data.get("quant_algo", "")).upper()
        fmt = {"FP8": "fp8", "NVFP4": "nvfp4", "W4A16_AWQ": "int4", "W4A8_AWQ": "int4",
               "W8A8_SQ_PER_CHANNEL": "int8"}.get(algo)
        return fmt, f"ModelOpt {algo or 'quantization'}{kept}"
    return None, f"quant_method '{method or 'unknown'}', not recognised{kept}"


def _vision_params(vision: Mapping[str, Any], top: Mapping[str, Any], text_hidden: int) -> tuple[
        int, str]:
    """Vision tower + projector parameters from vision_config (norms and biases included)."""
    kind = str(vision.get("model_type", ""))
    h = int(vision.get("hidden_size") or 0)
    inner = int(vision.get("intermediate_size") or 4 * h)
    layers = int(vision.get("num_hidden_layers") or vision.get("depth") or 0)
    patch = int(vision.get("patch_size") or 14)
    image = int(vision.get("image_size") or 224)
    channels = int(vision.get("num_channels") or 3)
    patches = (image // patch) ** 2
    if kind == "pixtral":  # no biases, gated MLP, RMSNorm, rotary positions
        tower = layers * (4 * h * h + 3 * h * inner + 2 * h) + channels * patch * patch * h + h
    else:  # ViT: q, k, v, o and MLP with biases, two LayerNorms per layer
        tower = layers * (4 * h * h + 4 * h + 2 * h * inner + inner + h + 4 * h)
        tower += channels * patch * patch * h + h + patches * h + 2 * h
        if kind == "llama4_vision_model":
            tower += h + h + 2 * h  # class embedding, its position, the pre-layer norm
    top_type = str(top.get("model_type", ""))
    if top_type == "gemma3":
        projector = h * text_hidden + h
    elif top_type == "llama4":
        proj_in = int(vision.get("projector_input_dim") or 4096)
        proj_out = int(vision.get("projector_output_dim") or 4096)
        ratio = float(vision.get("pixel_shuffle_ratio") or 0.5)
        projector = (int(h / ratio ** 2) * proj_in + proj_out * proj_out
                     + int(vision.get("vision_output_dim") or proj_out) * text_hidden)
    elif top_type == "mistral3":
        merge = int(top.get("spatial_merge_size") or 2)
        projector = h + h * merge * merge * h + h * text_hidden + text_hidden * text_hidden
    elif "llm_config" in top:  # InternVL: LayerNorm + two linears over 2x2-merged features
        merge = int(round(1 / float(top.get("downsample_ratio") or 0.5))) ** 2
        projector = 2 * h * merge + h * merge * text_hidden + text_hidden * (text_hidden + 2)
    else:
        projector = h * text_hidden + text_hidden * text_hidden
    return tower + projector, (f"{kind or 'vision'} tower {tower:,} + projector {projector:,}")


def shape_params(values: Mapping[str, object]) -> tuple[int, int]:
    """Total and active parameters of the text model from its shape: attention (softmax, MLA
    or Gated DeltaNet) and SwiGLU FFN or MoE per layer, routers and embeddings; norms and
    biases are left out (well under 0.1%)."""

    def n(name: str) -> int:
        value = values.get(name)
        return int(value) if isinstance(value, int | float) and not isinstance(value, bool) else 0

    layers, hidden, heads = n("num_hidden_layers"), n("hidden_size"), n("num_attention_heads")
    kv = n("num_key_value_heads") or heads
    head_dim = n("head_dim") or hidden // heads
    kinds = values.get("layer_types")
    kind_of = list(kinds) if isinstance(kinds, list) else ["full_attention"] * layers
    if n("kv_lora_rank"):
        q = n("qk_nope_head_dim") + n("qk_rope_head_dim")
        query = (hidden * n("q_lora_rank") + n("q_lora_rank") * heads * q if n("q_lora_rank")
                 else hidden * heads * q)
        softmax = (query + hidden * (n("kv_lora_rank") + n("qk_rope_head_dim"))
                   + n("kv_lora_rank") * heads * (n("qk_nope_head_dim") + n("v_head_dim"))
                   + heads * n("v_head_dim") * hidden)
    else:
        gate = 2 if values.get("_gated_query") else 1  # Qwen3-Next: query and output gate
        softmax = hidden * heads * head_dim * (gate + 1) + 2 * hidden * kv * head_dim
    keys = n("linear_num_key_heads") * n("linear_key_head_dim")
    vals = n("linear_num_value_heads") * n("linear_value_head_dim")
    linear = (hidden * (2 * keys + 2 * vals) + hidden * 2 * n("linear_num_value_heads")
              + (2 * keys + vals) * n("linear_conv_kernel_dim") + vals * hidden
              + 2 * n("linear_num_value_heads") + n("linear_value_head_dim"))
    experts = n("num_local_experts") + n("num_experts") + n("n_routed_experts")
    expert_ffn = n("moe_intermediate_size") or n("intermediate_size")
    shared = n("shared_expert_intermediate_size") or n("n_shared_experts") * expert_ffn
    first, every = n("first_k_dense_replace"), n("interleave_moe_layer_step") or 1
    total = routed = 0
    for i in range(layers):
        total += linear if kind_of[i] == "linear_attention" else softmax
        if experts and i >= first and (i - first + 1) % every == 0:
            routed += experts * 3 * hidden * expert_ffn
            total += 3 * hidden * shared + hidden * experts + (hidden if values.get(
                "shared_expert_intermediate_size") else 0)
        else:
            total += 3 * hidden * (n("intermediate_size_mlp") or n("intermediate_size"))
    total += routed + n("vocab_size") * hidden * (1 if values.get("tie_word_embeddings") else 2)
    k = n("num_experts_per_tok")
    active = total - routed + (routed * k // experts if experts else 0)
    return total, active


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
        if isinstance(stored, int) and stored > 0:
            size = stored
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


# --------------------------------------------------------------------------------------------
# Writing entries
# --------------------------------------------------------------------------------------------


def _scalar(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    return str(value)


def entry_yaml(item: Imported) -> str:
    """One entry as the shipped catalog writes them (two-space id, four-space fields)."""
    out = [f"  {item.id}:"]
    for key, value in item.fields.items():
        if isinstance(value, list):
            text = f"    {key}: ["
            for i, kind in enumerate(value):
                word = f"{kind}," if i < len(value) - 1 else f"{kind}]"
                if len(text) + len(word) + 1 > 100:
                    out.append(text.rstrip())
                    text = "      "
                text += word + " "
            out.append(text.rstrip())
        else:
            out.append(f"    {key}: {_scalar(value)}")
    return "\n".join(out) + "\n"


def entries_yaml(items: Sequence[Imported]) -> str:
    return "models:\n\n" + "\n".join(entry_yaml(i) for i in items)


def entries_json(items: Sequence[Imported], written_to: Path | None = None) -> dict[str, Any]:
    return {"models": {i.id: i.fields for i in items},
            "ignored": {i.id: i.ignored for i in items},
            "not_recognised": {i.id: i.unknown for i in items},
            "written_to": str(written_to) if written_to else None}


def append_to_catalog(path: Path, items: Sequence[Imported]) -> None:
    """Append entries to a models YAML (created when missing); an id the file already has is
    refused with its location; the file is replaced only once the result loads."""
    text = "models:\n"
    if path.exists():
        existing = load_models(path)
        for item in items:
            if item.id in existing.entries:
                raise CatalogError(existing.entries[item.id].locate(),
                                   f"id '{item.id}' already exists",
                                   "import with --id NEW_ID, or remove the existing entry first")
        text = path.read_text(encoding="utf-8")
        if not text.endswith("\n"):
            text += "\n"
    text += "\n" + "\n".join(entry_yaml(i) for i in items)
    temp = path.with_name(f".{path.name}.importing")
    temp.write_text(text, encoding="utf-8")
    try:
        load_models(temp)
    except Exception:
        temp.unlink(missing_ok=True)
        raise
    temp.replace(path)
