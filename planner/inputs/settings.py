"""Settings of the named assumptions (planner.inputs.assumptions): their defaults with the
formats' sizes, `--set NAME=VALUE` parsed and checked, and the assumptions file (the file form
of `--set`), each refusal located and worded for the user."""

from __future__ import annotations

import math
from collections.abc import Mapping
from pathlib import Path

from planner.errors import ArgumentError
from planner.inputs.assumptions import ASSUMPTIONS
from planner.model.formats import KV_FORMATS, WEIGHT_FORMATS

AssumptionValues = Mapping[str, float | str]


def defaults() -> dict[str, float | str]:
    values: dict[str, float | str] = {name: a.default for name, a in ASSUMPTIONS.items()}
    for fmt in WEIGHT_FORMATS.values():
        values[fmt.setting] = fmt.bytes_per_param
    for kv in KV_FORMATS.values():
        values[kv.setting] = kv.bytes_per_element
    return values


RETIRED = {
    "step_overhead_us_per_layer": "replaced by kernel_floor_us (time per kernel) × the kernels "
                                  "a step runs, counted from the model (kernels_* assumptions)",
}


def _suggest(name: str, known: list[str]) -> str:
    import difflib

    if name in RETIRED:
        return f" ({RETIRED[name]})"
    close = difflib.get_close_matches(name, known, n=1)
    return f" (did you mean '{close[0]}'?)" if close else ""


def parse_overrides(items: tuple[str, ...] | list[str]) -> dict[str, float | str]:
    """``NAME=VALUE`` strings from ``--set`` into checked values; unknown names are errors."""
    out: dict[str, float | str] = {}
    known = list(defaults())
    for item in items:
        if "=" not in item:
            raise ArgumentError(
                f"--set {item}: expected NAME=VALUE, e.g. gpu_memory_utilization=0.85")
        name, _, text = item.partition("=")
        name = name.strip()
        if name.count(".") == 2:  # a catalog field: SECTION.ID.FIELD, its value checked here
            from planner.inputs.overrides import check_field_override

            check_field_override(name, text.strip())
            out[name] = text.strip()
            continue
        if name in ASSUMPTIONS:
            out[name] = ASSUMPTIONS[name].parse(text)
            continue
        if name in known:  # a format's bytes per parameter or per KV element
            try:
                number = float(text)
            except ValueError:
                number = math.nan
            if not math.isfinite(number) or not 0 < number <= 8:
                raise ArgumentError(
                    f"--set {name}={text}: expected bytes greater than 0 and at most 8"
                )
            out[name] = number
            continue
        raise ArgumentError(
            f"--set {name}: unknown assumption{_suggest(name, known)}; "
            f"known: {', '.join(ASSUMPTIONS)}, bytes_per_param_FORMAT, "
            "bytes_per_kv_element_FORMAT, or a catalog field as SECTION.ID.FIELD (e.g. "
            "gpus.mi300x.price_per_hour_usd=2.40)"
        )
    return out


def resolve(overrides: Mapping[str, float | str] | None = None) -> dict[str, float | str]:
    values = defaults()
    values.update(overrides or {})
    return values


def load_assumptions_file(path: Path | str) -> dict[str, float | str]:
    """``assumptions: {name: value, ...}`` from a YAML file: the file form of ``--set`` (an
    assumption, a format's size, or a catalog field as SECTION.ID.FIELD), checked the same way;
    a wrong name or value is located with the file and line."""
    from planner.errors import CatalogError, Location
    from planner.inputs.fields import check_value
    from planner.inputs.overrides import SECTIONS
    from planner.inputs.yamlsource import load_yaml

    path = Path(path)
    root = load_yaml(path, "an assumptions file with a top-level 'assumptions:' mapping")
    top = root.value if isinstance(root.value, dict) else None
    if top is None or "assumptions" not in top:
        keys = f"found top-level keys {list(top)}" if top else \
            f"found {type(root.value).__name__}"
        raise CatalogError(Location(path, root.line), "expected a top-level 'assumptions:' "
                           f"mapping; {keys}",
                           "write 'assumptions:' and below it one 'name: value' per line, e.g. "
                           "'  gpu_memory_utilization: 0.85'")
    for key, node in top.items():
        if key != "assumptions":
            raise CatalogError(Location(path, node.line, field=key), "unknown top-level key",
                               "the file holds one 'assumptions:' mapping")
    body = top["assumptions"]
    if body.value is None:
        return {}
    if not isinstance(body.value, dict):
        raise CatalogError(Location(path, body.line, field="assumptions"),
                           f"must map names to values, got {body.value!r}",
                           "e.g. 'assumptions:\\n  pue: 1.4'")
    known = list(defaults())
    out: dict[str, float | str] = {}
    for name, node in body.value.items():
        loc = Location(path, node.line, entry="assumptions", field=name)
        value = node.value
        if name.count(".") == 2:  # a catalog field, as --set SECTION.ID.FIELD=VALUE
            section, _, field = name.split(".")
            fields = SECTIONS.get(section, {})
            if field not in fields or fields[field].kind in ("layers", "ids", "numbers"):
                raise CatalogError(loc, "not a catalog field this file can change",
                                   f"SECTION.ID.FIELD with SECTION one of {', '.join(SECTIONS)} "
                                   "and FIELD a single value of that catalog")
            check_value(fields[field], node, loc)
            out[name] = ("true" if value else "false") if isinstance(value, bool) else (
                value if isinstance(value, str) else repr(value))
            continue
        if name not in known:
            raise CatalogError(loc, f"unknown assumption{_suggest(name, known)}",
                               "`planner list assumptions` shows every name; formats' sizes are "
                               "bytes_per_param_FORMAT and bytes_per_kv_element_FORMAT; catalog "
                               "fields are SECTION.ID.FIELD")
        if isinstance(value, bool) or not isinstance(value, int | float | str):
            raise CatalogError(loc, f"must be a number or a word, got {value!r}",
                               "e.g. 0.85, auto or vllm (no quotes needed)")
        text = value if isinstance(value, str) else repr(value)
        try:
            out.update(parse_overrides([f"{name}={text}"]))
        except ArgumentError as exc:  # "--set NAME=TEXT: problem" -> "problem"
            raise CatalogError(loc, str(exc).split(": ", 1)[-1]) from None
    return out


def overrides_from(path: Path | None, items: tuple[str, ...] | list[str]
                   ) -> dict[str, float | str]:
    """Overrides from ``--assumptions FILE``, then ``--set`` on top."""
    values = load_assumptions_file(path) if path is not None else {}
    values.update(parse_overrides(items))
    return values
