"""Read a YAML file into nodes that remember their line, catching what PyYAML lets through.

PyYAML silently keeps the last of two duplicate keys and reports syntax errors without the file
name; this reader turns both, and unreadable files, into ``CatalogError`` with a location.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from yaml.constructor import SafeConstructor

from planner.errors import CatalogError, Location


@dataclass
class Node:
    """A YAML value with the 1-based line and column where it starts."""

    value: Any  # dict[str, Node] | list[Node] | scalar
    line: int
    column: int
    tag: str = ""


_constructor = SafeConstructor()


def _convert(node: yaml.Node, path: Path) -> Node:
    line, column = node.start_mark.line + 1, node.start_mark.column + 1
    if isinstance(node, yaml.MappingNode):
        out: dict[str, Node] = {}
        for key_node, value_node in node.value:
            key = _constructor.construct_object(key_node)  # type: ignore[no-untyped-call]
            if not isinstance(key, str | int | float | bool) or key is None:
                raise CatalogError(
                    Location(path, key_node.start_mark.line + 1), f"key {key!r} is not a name",
                    "keys are plain names such as llama-3.1-8b or hidden_size",
                )
            key = str(key)
            if key in out:
                raise CatalogError(
                    Location(path, key_node.start_mark.line + 1, entry=key),
                    f"duplicate key '{key}' (first defined on line {out[key].line})",
                    "YAML keeps only the last of two equal keys; rename or remove one of them",
                )
            child = _convert(value_node, path)
            child.line = line_of(key_node)  # a reader looks for the key's line
            out[key] = child
        return Node(out, line, column, "map")
    if isinstance(node, yaml.SequenceNode):
        return Node([_convert(item, path) for item in node.value], line, column, "seq")
    value = _constructor.construct_object(node)  # type: ignore[no-untyped-call]
    return Node(value, line, column, node.tag.rsplit(":", 1)[-1])


def line_of(node: yaml.Node) -> int:
    return int(node.start_mark.line) + 1


def load_yaml(path: Path, what: str) -> Node:
    """Parse `path`; `what` names the expected content for messages ("a model catalog")."""
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise CatalogError(Location(path), "file not found",
                           f"pass the path of {what}, or leave the option out to use the "
                           "shipped one") from None
    except IsADirectoryError:
        raise CatalogError(Location(path), "is a folder, not a file",
                           f"pass the path of {what} (a .yaml file)") from None
    except OSError as exc:
        raise CatalogError(Location(path), f"cannot be read: {exc.strerror}") from None
    if b"\x00" in raw[:8192]:
        raise CatalogError(Location(path), "is a binary file, not YAML text",
                           f"pass {what} written as UTF-8 YAML text")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise CatalogError(Location(path, line), "is not valid UTF-8 text",
                           "save the file as UTF-8") from None
    if not text.strip() or all(
        not ln.strip() or ln.lstrip().startswith("#") for ln in text.splitlines()
    ):
        raise CatalogError(Location(path), "is empty", f"expected {what}")
    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        problem = (exc.problem or exc.context or "invalid YAML").strip()
        lines = text.splitlines()
        bad = lines[mark.line] if mark is not None and mark.line < len(lines) else ""
        indent = bad[: len(bad) - len(bad.lstrip())]
        if "\t" in indent or "\\t" in problem:
            hint = "YAML indentation must use spaces, not tab characters"
        else:
            hint = "fix the YAML syntax at this line (check indentation, colons and quotes)"
        loc = Location(path, mark.line + 1 if mark else None, mark.column + 1 if mark else None)
        raise CatalogError(loc, f"YAML syntax error: {problem}", hint) from None
    except yaml.YAMLError as exc:
        raise CatalogError(Location(path), f"YAML error: {exc}") from None
    if node is None:
        raise CatalogError(Location(path), "is empty", f"expected {what}")
    return _convert(node, path)
