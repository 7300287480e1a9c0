"""YAML text edited in place, for `planner import-workbook`: values replaced, fields added and
removed at the character positions of the composed nodes, so that everything not edited
(comments, blank lines, quoting, order) stays as written; and the YAML text of a value, written
so that YAML reads back the same value.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import yaml

from planner.errors import CatalogError, Location, PlannerError


class YamlText:
    """A YAML file's text with edits at the character positions of its composed nodes, so that
    everything not edited (comments, blank lines, quoting, order) stays as written."""

    def __init__(self, text: str, path: Path) -> None:
        self.text, self.path = text, path
        self.root = yaml.compose(text, Loader=yaml.SafeLoader) if text.strip() else None
        self.edits: list[tuple[int, int, int, str]] = []  # start, end, order, replacement

    def node(self, keys: Sequence[str]) -> yaml.Node | None:
        node = self.root
        for key in keys:
            pair = _pair(node, key) if isinstance(node, yaml.MappingNode) else None
            if pair is None:
                return None
            node = pair[1]
        return node

    def has(self, keys: Sequence[str], key: str) -> bool:
        mapping = self.node(keys)
        return isinstance(mapping, yaml.MappingNode) and _pair(mapping, key) is not None

    def _edit(self, start: int, end: int, text: str) -> None:
        self.edits.append((start, end, len(self.edits), text))

    def _line_start(self, index: int) -> int:
        return self.text.rfind("\n", 0, index) + 1

    def _line_end(self, index: int) -> int:
        end = self.text.find("\n", index)
        return len(self.text) if end < 0 else end + 1

    def _mapping(self, keys: Sequence[str]) -> yaml.MappingNode:
        mapping = self.node(keys)
        if not isinstance(mapping, yaml.MappingNode):
            raise CatalogError(Location(self.path, entry=".".join(keys)), "is not a mapping")
        return mapping

    def set(self, keys: Sequence[str], key: str, value: str) -> None:
        """Replace the value of `key` in the mapping at `keys` with the YAML text `value`."""
        pair = _pair(self._mapping(keys), key)
        assert pair is not None
        k, v = pair
        if isinstance(v, yaml.ScalarNode) and v.value != "" and v.style in (None, '"', "'"):
            self._edit(v.start_mark.index, v.end_mark.index, value)
        else:  # a list, a block scalar or an empty value: rewrite after the key
            self._edit(k.end_mark.index, _end(v), ": " + value)

    def add(self, keys: Sequence[str], key: str, value: str) -> None:
        """Add `key: value` as the last line of the block mapping at `keys`."""
        mapping = self._mapping(keys)
        if mapping.flow_style or not mapping.value:
            raise CatalogError(Location(self.path, mapping.start_mark.line + 1,
                                        entry=".".join(keys)),
                               f"cannot add '{key}' to a mapping written in flow style {{...}}",
                               "write the entry one 'field: value' per line")
        indent = mapping.value[0][0].start_mark.column
        at = self._line_end(_end(mapping))
        newline = "" if at == 0 or self.text[at - 1] == "\n" else "\n"
        self._edit(at, at, f"{newline}{' ' * indent}{key}: {value}\n")

    def remove(self, keys: Sequence[str], key: str) -> None:
        """Delete `key` and its value (its whole lines) from the block mapping at `keys`."""
        mapping = self._mapping(keys)
        pair = _pair(mapping, key)
        assert pair is not None
        k, v = pair
        start = self._line_start(k.start_mark.index)
        if mapping.flow_style or self.text[start:k.start_mark.index].strip():
            raise CatalogError(Location(self.path, k.start_mark.line + 1, entry=".".join(keys),
                                        field=key),
                               "cannot remove a field that does not stand on its own line",
                               "write the entry one 'field: value' per line")
        self._edit(start, self._line_end(_end(v)), "")

    def append(self, text: str) -> None:
        at = len(self.text)
        newline = "" if not self.text or self.text.endswith("\n") else "\n"
        self._edit(at, at, newline + text)

    def result(self) -> str:
        # From the end backwards; at one position replacements before insertions, and
        # insertions in reverse order so that they read in the order they were made.
        text = self.text
        last = len(text) + 1
        for start, end, _, new in sorted(self.edits, key=lambda e: (e[0], e[1] > e[0], e[2]),
                                         reverse=True):
            if end > last:
                raise PlannerError(f"{self.path}: overlapping edits at character {start}")
            text = text[:start] + new + text[end:]
            last = start
        return text


def _pair(mapping: yaml.MappingNode, key: str) -> tuple[yaml.Node, yaml.Node] | None:
    for k, v in mapping.value:
        if isinstance(k, yaml.ScalarNode) and str(k.value) == key:
            return k, v
    return None


def _end(node: yaml.Node) -> int:
    """Where a value's text ends (block collections end with their last item)."""
    if isinstance(node, yaml.MappingNode) and not node.flow_style and node.value:
        return _end(node.value[-1][1])
    if isinstance(node, yaml.SequenceNode) and not node.flow_style and node.value:
        return _end(node.value[-1])
    return int(node.end_mark.index)


def key_line(text: str, keys: Sequence[str]) -> int | None:
    """1-based line of the last key of `keys` in YAML `text`."""
    node = yaml.compose(text, Loader=yaml.SafeLoader)
    line = None
    for key in keys:
        pair = _pair(node, key) if isinstance(node, yaml.MappingNode) else None
        if pair is None:
            return None
        line, node = pair[0].start_mark.line + 1, pair[1]
    return line


def _float_text(value: float) -> str:
    """A float as YAML 1.1 reads it back as a float (PyYAML needs 1.0e-06, not 1e-06)."""
    text = repr(value)
    if "e" in text:
        mantissa, exponent = text.split("e")
        if "." not in mantissa:
            mantissa += ".0"
        if exponent[0] not in "+-":
            exponent = "+" + exponent
        text = f"{mantissa}e{exponent}"
    return text


def scalar_text(value: Any, written: str | None = None) -> str:
    """YAML text for a value; text keeps the quoting it was `written` with."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return _float_text(value)
    if isinstance(value, list | tuple):
        return "[" + ", ".join(scalar_text(v) for v in value) + "]"
    text = str(value)
    if written and written.startswith("'"):
        return "'" + text.replace("'", "''") + "'"
    if not (written and written.startswith('"')) and re.fullmatch(
            r"[A-Za-z0-9][A-Za-z0-9_.\-/]*", text) and yaml.safe_load(text) == text:
        return text
    return json.dumps(text, ensure_ascii=False)
