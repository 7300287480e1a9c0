"""The layers stay layers (docs/architecture.md): each package imports only those below it, as
the import-linter contract in pyproject.toml states, and no modules import each other in a
cycle, which a layers contract alone does not catch inside one layer."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).parent.parent


def _require(module: str) -> None:
    import importlib.util

    if importlib.util.find_spec(module) is None:
        if os.environ.get("CI") == "true":
            pytest.fail(f"{module} is required when CI=true (pip install -e '.[test]')")
        pytest.skip(f"{module} is not installed (pip install -e '.[test]')")


def test_layers_contract_is_kept(capsys: pytest.CaptureFixture[str]) -> None:
    _require("importlinter")
    from importlinter.cli import lint_imports

    code = lint_imports(config_filename=str(ROOT / "pyproject.toml"), no_cache=True,
                        no_logo=True)
    assert code == 0, capsys.readouterr().out


def import_cycles(graph) -> list[list[str]]:  # type: ignore[no-untyped-def]
    """Groups of modules that import each other, directly or through others (Tarjan)."""
    modules = sorted(graph.modules)
    edges = {m: sorted(set(graph.find_modules_directly_imported_by(m)) & set(modules))
             for m in modules}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    cycles: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in edges[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                cycles.append(sorted(group))

    for m in modules:
        if m not in index:
            visit(m)
    return cycles


def test_no_import_cycles() -> None:
    _require("grimp")
    import grimp

    assert import_cycles(grimp.build_graph("planner")) == []


def test_the_cycle_check_finds_a_cycle() -> None:
    class Graph:  # a -> b -> c -> a, and d alone
        modules = {"a", "b", "c", "d"}
        edges = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}

        def find_modules_directly_imported_by(self, m: str) -> set[str]:
            return self.edges[m]

    assert import_cycles(Graph()) == [["a", "b", "c"]]



def test_no_module_is_over_600_lines() -> None:
    long = {str(p.relative_to(ROOT)): n for p in sorted((ROOT / "planner").rglob("*.py"))
            if (n := len(p.read_text(encoding="utf-8").splitlines())) > 600}
    assert not long, f"split these along their seams (docs/architecture.md): {long}"
