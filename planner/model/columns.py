"""Columnar evaluation: one expression over many rows at once, with exactly the values of
``Expr.evaluate`` row by row (the same scalar functions; fast paths only where they provably
agree). A column is ``Same`` (one value for every row) or a list of values."""

from __future__ import annotations

import itertools
import math
import operator
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from planner.model.expr import (
    COMPARISONS,
    FUNCTIONS,
    BinOp,
    Env,
    Expr,
    Func,
    Neg,
    Num,
    Ref,
    Renderer,
    Text,
    Value,
    XlError,
    arith,
    compare,
    excel_int,
)


@dataclass(frozen=True, eq=False)
class Memo(Expr):
    """A subexpression whose value depends only on the named scenario fields (and on what does
    not vary within a plan): a columnar evaluator may reuse its value while they stay the same.
    Evaluates and renders as the subexpression itself."""

    expr: Expr
    fields: tuple[str, ...]

    def evaluate(self, env: Env) -> Value:
        return self.expr.evaluate(env)

    def render(self, r: Renderer) -> str:
        return self.expr.render(r)

    def children(self) -> Sequence[Expr]:
        return (self.expr,)

    @property
    def compound(self) -> bool:
        return self.expr.compound


class Same:
    """A column whose every row holds one value, kept once."""

    __slots__ = ("value",)

    def __init__(self, value: Value) -> None:
        self.value = value

    def __repr__(self) -> str:
        return f"Same({self.value!r})"


class Numbers(list):  # type: ignore[type-arg]
    """A column of plain ``int``/``float`` values (no bool, text or error): the only input the
    fast paths take, since Python's own operators then compute what ``arith`` computes."""


Column = Same | list  # type: ignore[type-arg]
_PLAIN = {int, float}
_OPERATORS: dict[str, Callable[[Any, Any], Any]] = {
    "+": operator.add, "-": operator.sub, "*": operator.mul, "/": operator.truediv}


class ColumnEnv(Protocol):
    size: int

    def column(self, kind: str, name: str) -> Column: ...

    def memo(self, e: Memo, rows: list[int] | None) -> Column: ...


def classify(values: list) -> Column:  # type: ignore[type-arg]
    """``Numbers`` when every value is a plain int or float, else the list as it is."""
    return Numbers(values) if set(map(type, values)) <= _PLAIN else values


def _rows(col: Column, n: int) -> Iterable[Value]:
    return itertools.repeat(col.value, n) if isinstance(col, Same) else col


def _plain(col: Column, bools: bool = False) -> bool:
    if isinstance(col, Same):
        return type(col.value) in _PLAIN or (bools and type(col.value) is bool)
    return isinstance(col, Numbers)


def _take(col: Column, rows: list[int]) -> Column:
    if isinstance(col, Same):
        return col
    taken = [col[i] for i in rows]
    return Numbers(taken) if isinstance(col, Numbers) else taken


_LIMIT15 = 10**15


def compare_fast(op: str, a: Value, b: Value) -> Value:
    """``compare`` without rounding both sides to 15 digits where that cannot change the
    answer: whole numbers below 10^15 are exact, and doubles further apart than 1e-13 of the
    larger keep their order (rounding moves each by at most 5.2e-15 of itself)."""
    x: float
    y: float
    if type(a) is int and type(b) is int and -_LIMIT15 < a < _LIMIT15 and -_LIMIT15 < b < _LIMIT15:
        x, y = a, b
    elif (type(a) is int or type(a) is float) and (type(b) is int or type(b) is float):
        try:
            x, y = float(a), float(b)
        except OverflowError:
            return compare(op, a, b)
        big = max(abs(x), abs(y))
        if not (1e-290 < big < 1e300) or not abs(x - y) > big * 1e-13:
            return compare(op, a, b)
    else:
        return compare(op, a, b)
    if op == "<=":
        return x <= y
    if op == ">":
        return x > y
    if op == "<":
        return x < y
    if op == ">=":
        return x >= y
    if op == "=":
        return x == y
    return x != y


def int_fast(v: Value) -> Value:
    """``INT`` as ``excel_int`` computes it, flooring directly where rounding to 15 digits
    first cannot move the value across a whole number."""
    if type(v) is int and -_LIMIT15 < v < _LIMIT15:
        return v
    if type(v) is float and -1e15 < v < 1e15:
        whole = math.floor(v)
        frac = v - whole
        margin = max(abs(v), 1.0) * 1e-13
        if margin < frac < 1 - margin:
            return whole
    return excel_int(v)


def evaluate_column(e: Expr, env: ColumnEnv, rows: list[int] | None = None) -> Column:
    """The column of `e` over every row of `env` (or only the given rows, in that order):
    each value exactly what ``e.evaluate`` gives for that row; IF evaluates, for each row, only
    the branch that row takes."""
    n = env.size if rows is None else len(rows)
    t = type(e)
    if t is Ref:
        col = env.column(e.kind, e.name)  # type: ignore[attr-defined]
        return col if rows is None else _take(col, rows)
    if t is Num or t is Text:
        return Same(e.value)  # type: ignore[attr-defined]
    if t is BinOp:
        op = e.op  # type: ignore[attr-defined]
        a = evaluate_column(e.left, env, rows)  # type: ignore[attr-defined]
        b = evaluate_column(e.right, env, rows)  # type: ignore[attr-defined]
        if isinstance(a, Same) and isinstance(b, Same):
            return Same(compare(op, a.value, b.value) if op in COMPARISONS
                        else arith(op, a.value, b.value))
        if op in COMPARISONS:
            return [compare_fast(op, x, y) for x, y in zip(_rows(a, n), _rows(b, n), strict=True)]
        fast = _OPERATORS.get(op)
        if fast is not None and _plain(a, True) and _plain(b, True):
            try:
                return Numbers(map(fast, _rows(a, n), _rows(b, n)))
            except (ZeroDivisionError, OverflowError):
                pass
        return classify([arith(op, x, y) for x, y in zip(_rows(a, n), _rows(b, n), strict=True)])
    if t is Neg:
        a = evaluate_column(e.operand, env, rows)  # type: ignore[attr-defined]
        if isinstance(a, Same):
            return Same(arith("-", 0, a.value))
        if isinstance(a, Numbers):
            return Numbers(map(operator.sub, itertools.repeat(0, n), a))
        return classify([arith("-", 0, x) for x in a])
    if t is Func:
        return _func_column(e, env, rows, n)  # type: ignore[arg-type]
    if t is Memo:
        return env.memo(e, rows)  # type: ignore[arg-type]
    column = getattr(e, "column", None)  # a leaf that evaluates its own column (model.perop)
    if column is not None:
        return column(env, rows)  # type: ignore[no-any-return]
    raise TypeError(f"cannot evaluate {t.__name__} by columns")


def _func_column(e: Func, env: ColumnEnv, rows: list[int] | None, n: int) -> Column:
    if e.name == "IF":
        cond = evaluate_column(e.args[0], env, rows)
        if isinstance(cond, Same):
            if isinstance(cond.value, XlError):
                return cond
            return evaluate_column(e.args[1 if cond.value else 2], env, rows)
        where = range(n) if rows is None else rows
        taken: tuple[list[int], list[int]] = ([], [])  # positions, rows
        other: tuple[list[int], list[int]] = ([], [])
        errors: list[int] = []
        for j, (c, r) in enumerate(zip(cond, where, strict=True)):
            if isinstance(c, XlError):
                errors.append(j)
            elif c:
                taken[0].append(j)
                taken[1].append(r)
            else:
                other[0].append(j)
                other[1].append(r)
        if not errors and not other[0]:
            return evaluate_column(e.args[1], env, rows)
        if not errors and not taken[0]:
            return evaluate_column(e.args[2], env, rows)
        out: list[Value] = [None] * n  # type: ignore[list-item]
        for j in errors:
            out[j] = cond[j]
        for (positions, subset), branch in ((taken, e.args[1]), (other, e.args[2])):
            if positions:
                values = _rows(evaluate_column(branch, env, subset), len(positions))
                for j, value in zip(positions, values, strict=True):
                    out[j] = value
        return classify(out)
    args = [evaluate_column(a, env, rows) for a in e.args]
    fn = FUNCTIONS[e.name]
    if all(isinstance(a, Same) for a in args):
        return Same(fn([a.value for a in args]))  # type: ignore[union-attr]
    if e.name == "INT":
        return classify([int_fast(x) for x in args[0]])  # type: ignore[union-attr]
    if e.name in ("MIN", "MAX") and all(_plain(a) for a in args):
        return Numbers(map(min if e.name == "MIN" else max, *(_rows(a, n) for a in args)))
    return classify([fn(list(values)) for values in zip(*(_rows(a, n) for a in args), strict=True)])
