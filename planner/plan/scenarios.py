"""Named scenarios (catalogs/scenarios.yaml): a few inputs changed from the plan's values, the
budget totals of each for the configurations the Budget chose."""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from planner.errors import CatalogError, Location
from planner.inputs.assumptions import ASSUMPTIONS
from planner.inputs.catalog import PROJECT_ROOT
from planner.inputs.yamlsource import load_yaml
from planner.plan.sensitivity import SERVER_PRICE, totals_with
from planner.plan.sizing import Sized

DEFAULT_SCENARIOS = PROJECT_ROOT / "catalogs" / "scenarios.yaml"


@dataclass(frozen=True)
class NamedScenario:
    name: str
    description: str
    changes: dict[str, float]


def load_scenarios(path: Path | str = DEFAULT_SCENARIOS) -> list[NamedScenario]:
    path = Path(path)
    root = load_yaml(path, "a YAML file with a top-level 'scenarios:' mapping")
    body = root.value.get("scenarios") if isinstance(root.value, dict) else None
    if body is None or not isinstance(body.value, dict):
        raise CatalogError(Location(path, root.line), "expected a top-level 'scenarios:' mapping",
                           "see catalogs/scenarios.yaml")
    known = [n for n, a in ASSUMPTIONS.items() if not a.choices] + [SERVER_PRICE]
    out = []
    for name, node in body.value.items():
        if not isinstance(node.value, dict):
            raise CatalogError(Location(path, node.line, entry=name), "must be a mapping")
        for key in node.value:
            if key not in ("description", "changes"):
                raise CatalogError(Location(path, node.value[key].line, entry=name, field=key),
                                   "unknown field", "fields: description, changes")
        changes: dict[str, float] = {}
        block = node.value.get("changes")
        for key, child in (block.value.items() if block is not None and isinstance(
                block.value, dict) else []):
            loc = Location(path, child.line, entry=name, field=key)
            if key not in known:
                close = difflib.get_close_matches(key, known, n=1)
                raise CatalogError(loc, "not an input a scenario can change",
                                   f"did you mean '{close[0]}'?" if close else
                                   "a numeric assumption or server_price_factor")
            if key == SERVER_PRICE:
                value = child.value
                if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
                    raise CatalogError(loc, f"must be a positive multiplier, got {value!r}")
                changes[key] = float(value)
            else:
                try:
                    parsed = ASSUMPTIONS[key].parse(str(child.value))
                except Exception as error:  # the assumption's own message, located
                    raise CatalogError(loc, str(error).removeprefix("--set ")) from None
                if isinstance(parsed, str):
                    raise CatalogError(loc, "a scenario gives a number, not 'auto'")
                changes[key] = float(parsed)
        text = node.value.get("description")
        out.append(NamedScenario(name, str(text.value) if text is not None else name, changes))
    return out


def scenario_inputs(scenarios: list[NamedScenario]) -> list[str]:
    """Every input some scenario changes, in first-mention order."""
    seen: dict[str, None] = {}
    for s in scenarios:
        for key in s.changes:
            seen.setdefault(key)
    return list(seen)


def scenario_totals(sized: list[Sized], assumptions: Mapping[str, float | str],
                    scenarios: list[NamedScenario]) -> list[dict[str, float]]:
    return [totals_with(sized, assumptions, s.changes) for s in scenarios]
