"""Importing the models PATHs name (a config.json, a model folder, a folder of either) and the
``--models FOLDER`` catalog.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from planner.errors import CatalogError, Location
from planner.inputs.entries import Catalog, Entry
from planner.inputs.hfimport.convert import TEXT_SECTIONS, Imported, convert
from planner.inputs.hfimport.files import (
    CARD,
    CONFIG,
    GENERATION,
    INDEX,
    ShardCount,
    config_names,
    find_configs,
    front_matter,
    read_json,
    read_shards,
    slug,
)


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
            shards, shard_note = read_shards(folder, files, layers)
    generation = read_json(folder / GENERATION, "a generation_config.json") if (
        config_path.name == CONFIG and (folder / GENERATION).is_file()) else None
    card = front_matter(folder / CARD) if config_path.name == CONFIG else {}
    default_id, hf_id = config_names(config_path)
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
