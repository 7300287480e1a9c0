"""Imported models written out: as catalog YAML, as JSON, and appended to a models YAML.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from planner.errors import CatalogError
from planner.inputs.catalog import load_models
from planner.inputs.hfimport.convert import Imported


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
