"""Catalog entries as the planner reads them: an id, typed values and the line each came from,
so any later check can point at the file, line, entry and field."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from planner.errors import Location


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
class Cloud(Entry):
    """One rentable offer: a provider's instance of one GPU type, priced per instance-hour on
    demand and with 1- and 3-year commitments."""


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
    left_out: Mapping[str, str] = field(default_factory=dict)  # id -> why (strict=False)
