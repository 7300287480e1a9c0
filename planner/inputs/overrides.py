"""Catalog fields changed from the command line: ``--set gpus.mi300x.price_per_hour_usd=2.40``.

The override is checked like the YAML value it replaces, applied to the loaded catalog (so the
workbook's input cell, the HTML and every figure show it) and listed in the outputs with the
other ``--set`` values.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from dataclasses import replace

import yaml

from planner.errors import ArgumentError, CatalogError, Location
from planner.inputs.entries import Catalog
from planner.inputs.fields import (
    CLOUD_FIELDS,
    GPU_FIELDS,
    MODEL_FIELDS,
    SERVER_FIELDS,
    WORKLOAD_FIELDS,
    FieldSpec,
    check_value,
)
from planner.inputs.yamlsource import Node

SECTIONS: dict[str, Mapping[str, FieldSpec]] = {
    "models": MODEL_FIELDS, "gpus": GPU_FIELDS, "servers": SERVER_FIELDS,
    "workloads": WORKLOAD_FIELDS, "clouds": CLOUD_FIELDS,
}


def catalog_overrides(overrides: Mapping[str, float | str], section: str
                      ) -> dict[tuple[str, str], str]:
    """(id, field) -> value text of the overrides aimed at one catalog section."""
    out = {}
    for key, value in overrides.items():
        if key.count(".") != 2:
            continue
        where, entry, field = key.split(".")
        if where == section:
            out[(entry, field)] = str(value)
    return out


def check_field_override(name: str, text: str) -> object:
    """The value of ``--set SECTION.ID.FIELD=TEXT`` checked against its field as the YAML value
    it replaces, whichever command reads it (calc refuses ``servers.x.price_usd=$300k`` as size
    does, though it sizes no server); the entry id is checked where the catalog is applied."""
    section, entry_id, field = name.split(".")
    if section not in SECTIONS:
        close = difflib.get_close_matches(section, list(SECTIONS), n=1)
        hint = f"did you mean '{close[0]}'?" if close else f"one of {', '.join(SECTIONS)}"
        raise ArgumentError(f"--set {name}: unknown catalog '{section}'; {hint}")
    fields = SECTIONS[section]
    if field not in fields or fields[field].kind in ("layers", "ids"):
        close = difflib.get_close_matches(field, list(fields), n=1)
        hint = f"did you mean '{close[0]}'?" if close else f"fields: {', '.join(fields)}"
        raise ArgumentError(f"--set {name}: not a field --set can change; {hint}")
    try:
        parsed = yaml.safe_load(text) if text else None
    except yaml.YAMLError:
        parsed = text
    try:
        return check_value(fields[field], Node(parsed, 0, 0), Location(entry=entry_id,
                                                                        field=field))
    except CatalogError as error:
        raise ArgumentError(f"--set {name}={text}: {error.problem}"
                            + (f" ({error.hint})" if error.hint else "")) from None


def apply(catalog: Catalog, section: str, overrides: Mapping[str, float | str]) -> Catalog:
    changes = catalog_overrides(overrides, section)
    if not changes:
        return catalog
    entries = dict(catalog.entries)
    for (entry_id, field), text in changes.items():
        name = f"{section}.{entry_id}.{field}"
        if entry_id not in entries:
            close = difflib.get_close_matches(entry_id, list(entries), n=1)
            hint = f"did you mean '{close[0]}'?" if close else "see `planner list`"
            raise ArgumentError(f"--set {name}: no {section} entry '{entry_id}'; {hint}")
        value = check_field_override(name, text)
        entry = entries[entry_id]
        entries[entry_id] = replace(entry, values={**entry.values, field: value})
    return replace(catalog, entries=entries)
