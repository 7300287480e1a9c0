"""Finding and parsing the files of a Hugging Face model folder: config.json (keeping the line of
every key), the safetensors index and shard headers, generation config and model card.
"""

from __future__ import annotations

import bisect
import hashlib
import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from planner.errors import CatalogError, Location

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


def config_names(config: Path) -> tuple[str, str | None]:
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


def read_shards(folder: Path, files: Iterable[str], layers: int) -> tuple[ShardCount | None,
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
        if not isinstance(header, dict):
            return None, f"{name} has no readable safetensors header"
        try:
            counted = _count_tensors(header, layers)
        except (TypeError, ValueError, OverflowError):
            return None, f"{name} has a safetensors header with unreadable shapes or offsets"
        size += counted[0]
        text += counted[1]
        vision += counted[2]
        mtp += counted[3]
        packed = packed or counted[4]
    if not count:
        return None, ""
    return ShardCount(text, vision, mtp, size, packed, count), ""


def front_matter(path: Path) -> dict[str, Any]:
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


def _count_tensors(header: dict, layers: int) -> tuple[int, int, int, int, bool]:
    """(bytes, text, vision, MTP parameters, packed) of one safetensors header; a shape or
    offset that is not a whole number, or is negative, raises ValueError."""
    size = text = vision = mtp = 0
    packed = False
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
    if size < 0 or min(text, vision, mtp) < 0:
        raise ValueError("negative size")
    return size, text, vision, mtp, packed
