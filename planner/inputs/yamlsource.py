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
_PLAIN_COLLECTIONS = ("tag:yaml.org,2002:map", "tag:yaml.org,2002:seq")


def _construct(node: yaml.Node, path: Path) -> Any:
    """A scalar's Python value; a tag PyYAML cannot build, or a bad tagged value, is located."""
    try:
        return _constructor.construct_object(node)  # type: ignore[no-untyped-call]
    except (yaml.YAMLError, ValueError, TypeError, OverflowError) as exc:
        loc = Location(path, node.start_mark.line + 1, node.start_mark.column + 1)
        if node.tag.endswith(":merge"):
            raise CatalogError(loc, "YAML merge keys (<<) are not supported",
                               "write the fields out in each entry") from None
        if isinstance(exc, yaml.YAMLError):
            raise CatalogError(loc, f"unsupported YAML tag '{node.tag}'",
                               "remove the tag: plain values such as 4096, 1.5, true or "
                               "\"text\" need none") from None
        raise CatalogError(loc, f"cannot read {node.value!r} as {node.tag.rsplit(':', 1)[-1]}: "
                           f"{exc}", "fix the value, or quote it to make it text") from None


def _convert(node: yaml.Node, path: Path, parents: tuple[yaml.Node, ...] = ()) -> Node:
    line, column = node.start_mark.line + 1, node.start_mark.column + 1
    if any(node is parent for parent in parents):
        raise CatalogError(Location(path, line, column), "an alias (*name) refers to a value "
                           "that contains it", "YAML aliases must not be recursive")
    parents = (*parents, node)
    if isinstance(node, yaml.CollectionNode) and node.tag not in _PLAIN_COLLECTIONS:
        raise CatalogError(Location(path, line, column), f"unsupported YAML tag '{node.tag}'",
                           "remove the tag: plain lists and mappings need none")
    if isinstance(node, yaml.MappingNode):
        out: dict[str, Node] = {}
        for key_node, value_node in node.value:
            key = _construct(key_node, path)
            if not isinstance(key, str | int | float | bool) or key is None:
                raise CatalogError(
                    Location(path, key_node.start_mark.line + 1), f"key {key!r} is not a name",
                    "keys are plain names such as llama-3.1-8b or hidden_size",
                )
            key = str(key)
            if key in out:
                raise CatalogError(
                    Location(path, key_node.start_mark.line + 1),
                    f"duplicate key '{key}' (first defined on line {out[key].line})",
                    "YAML keeps only the last of two equal keys; rename or remove one of them",
                )
            child = _convert(value_node, path, parents)
            child.line = line_of(key_node)  # a reader looks for the key's line
            out[key] = child
        return Node(out, line, column, "map")
    if isinstance(node, yaml.SequenceNode):
        return Node([_convert(item, path, parents) for item in node.value], line, column, "seq")
    value = _construct(node, path)
    return Node(value, line, column, node.tag.rsplit(":", 1)[-1])


def line_of(node: yaml.Node) -> int:
    return int(node.start_mark.line) + 1


# The largest YAML file read: the shipped catalogs are under 0.3 MB, and PyYAML composes about
# 1 MB a second with line numbers, so a larger file is a mistake (a dump, a log) or minutes.
MAX_YAML_BYTES = 20_000_000


def load_yaml(path: Path, what: str) -> Node:
    """Parse `path`; `what` names the expected content for messages ("a model catalog")."""
    try:
        size = path.stat().st_size
        if size > MAX_YAML_BYTES and path.is_file():
            raise CatalogError(Location(path), f"is {size / 1e6:,.1f} MB, more than the "
                               f"{MAX_YAML_BYTES / 1e6:.0f} MB a YAML input may be",
                               f"pass {what}: catalogs are well under 1 MB; split the file or "
                               "remove what the planner does not read")
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
    except yaml.reader.ReaderError as exc:  # a control character YAML does not allow
        before = text[: exc.position]
        loc = Location(path, before.count("\n") + 1, len(before) - before.rfind("\n"))
        code = ord(exc.character) if isinstance(exc.character, str) else exc.character
        raise CatalogError(loc, f"contains the control character U+{code:04X}, which "
                           "YAML does not allow", "delete it or write it as an escape in a "
                           "double-quoted string") from None
    except yaml.YAMLError as exc:
        raise CatalogError(Location(path), f"YAML error: {exc}") from None
    if node is None:
        raise CatalogError(Location(path), "is empty", f"expected {what}")
    return _convert(node, path)
