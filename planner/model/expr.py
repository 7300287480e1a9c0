"""One definition, two renderings: a small expression tree.

Every derived quantity is written once as an ``Expr``. ``evaluate`` gives the Python value;
``render`` gives the Excel formula text. Both follow spreadsheet semantics where Python and
Excel differ:

* every compound operand is parenthesised, so ``2^3^2`` and ``-2^2`` cannot be misread;
* division by zero yields the error value ``#DIV/0!`` instead of raising or giving ``inf``;
* ``INT`` first rounds to 15 significant digits, as spreadsheets do before flooring.

Leaves name where a value lives (``Ref``); a ``Renderer`` turns a leaf into a cell address or a
defined name, an ``Env`` turns it into a Python value.
"""

from __future__ import annotations

import itertools
import math
import operator
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, Union

Value = Union[float, int, bool, str, "XlError"]


@dataclass(frozen=True)
class XlError:
    """A spreadsheet error value such as ``#DIV/0!``; propagates through arithmetic."""

    code: str

    def __str__(self) -> str:
        return self.code


DIV0 = XlError("#DIV/0!")
VALUE_ERROR = XlError("#VALUE!")


class Env(Protocol):
    def lookup(self, kind: str, name: str) -> Value: ...


class Renderer(Protocol):
    def ref(self, kind: str, name: str) -> str: ...


def excel_round15(x: float) -> float:
    """The value a spreadsheet sees: doubles shown and compared at 15 significant digits."""
    if x == 0 or not math.isfinite(x):
        return x
    return float(f"{x:.15g}")


def _number_text(v: float | int) -> str:
    if isinstance(v, bool):
        return "TRUE" if v else "FALSE"
    if isinstance(v, int) or (isinstance(v, float) and v.is_integer() and abs(v) < 1e15):
        return str(int(v))
    text = repr(float(v))
    return text.upper() if "e" in text else text


class Expr:
    """Base node. Operators build trees: ``Ref('q', 'a') * 2``."""

    def evaluate(self, env: Env) -> Value:
        raise NotImplementedError

    def render(self, r: Renderer) -> str:
        raise NotImplementedError

    def refs(self) -> set[tuple[str, str]]:
        """Every (kind, name) leaf this expression reads."""
        out: set[tuple[str, str]] = set()
        for child in self.children():
            out |= child.refs()
        return out

    def children(self) -> Sequence[Expr]:
        return ()

    @property
    def compound(self) -> bool:
        return True

    def formula(self, r: Renderer) -> str:
        return "=" + self.render(r)

    # arithmetic sugar -------------------------------------------------------------
    def __add__(self, o: object) -> Expr:
        return BinOp("+", self, lift(o))

    def __radd__(self, o: object) -> Expr:
        return BinOp("+", lift(o), self)

    def __sub__(self, o: object) -> Expr:
        return BinOp("-", self, lift(o))

    def __rsub__(self, o: object) -> Expr:
        return BinOp("-", lift(o), self)

    def __mul__(self, o: object) -> Expr:
        return BinOp("*", self, lift(o))

    def __rmul__(self, o: object) -> Expr:
        return BinOp("*", lift(o), self)

    def __truediv__(self, o: object) -> Expr:
        return BinOp("/", self, lift(o))

    def __rtruediv__(self, o: object) -> Expr:
        return BinOp("/", lift(o), self)

    def __pow__(self, o: object) -> Expr:
        return BinOp("^", self, lift(o))

    def __rpow__(self, o: object) -> Expr:
        return BinOp("^", lift(o), self)

    def __neg__(self) -> Expr:
        return Neg(self)

    def __lt__(self, o: object) -> Expr:  # type: ignore[override]
        return BinOp("<", self, lift(o))

    def __le__(self, o: object) -> Expr:  # type: ignore[override]
        return BinOp("<=", self, lift(o))

    def __gt__(self, o: object) -> Expr:  # type: ignore[override]
        return BinOp(">", self, lift(o))

    def __ge__(self, o: object) -> Expr:  # type: ignore[override]
        return BinOp(">=", self, lift(o))

    def eq(self, o: object) -> Expr:
        return BinOp("=", self, lift(o))


def lift(v: object) -> Expr:
    if isinstance(v, Expr):
        return v
    if isinstance(v, bool | int | float):
        return Num(v)
    if isinstance(v, str):
        return Text(v)
    raise TypeError(f"cannot use {v!r} in an expression")


@dataclass(frozen=True, eq=False)
class Num(Expr):
    value: float | int | bool

    def evaluate(self, env: Env) -> Value:
        return self.value

    def render(self, r: Renderer) -> str:
        return _number_text(self.value)

    @property
    def compound(self) -> bool:
        return self.value < 0


@dataclass(frozen=True, eq=False)
class Text(Expr):
    value: str

    def evaluate(self, env: Env) -> Value:
        return self.value

    def render(self, r: Renderer) -> str:
        return '"' + self.value.replace('"', '""') + '"'

    @property
    def compound(self) -> bool:
        return False


@dataclass(frozen=True, eq=False)
class Ref(Expr):
    """A named value: kind is 'var' (scenario), 'model', 'gpu', 'weights', 'kv' (catalog
    fields and per-entry quantities), 'assume' (assumptions) or 'q' (another quantity)."""

    kind: str
    name: str

    def evaluate(self, env: Env) -> Value:
        return env.lookup(self.kind, self.name)

    def render(self, r: Renderer) -> str:
        return r.ref(self.kind, self.name)

    def refs(self) -> set[tuple[str, str]]:
        return {(self.kind, self.name)}

    @property
    def compound(self) -> bool:
        return False


def _num(v: Value) -> float | int | XlError:
    if isinstance(v, XlError):
        return v
    if isinstance(v, bool):
        return int(v)
    if isinstance(v, int | float):
        return v
    return VALUE_ERROR


def _compare(op: str, a: Value, b: Value) -> Value:
    if isinstance(a, XlError):
        return a
    if isinstance(b, XlError):
        return b
    if isinstance(a, str) or isinstance(b, str):
        if not (isinstance(a, str) and isinstance(b, str)):
            return op in ("<>",)
        x: object = a.lower()
        y: object = b.lower()
    else:
        x, y = excel_round15(float(a)), excel_round15(float(b))
    result = {
        "=": x == y,
        "<>": x != y,
        "<": x < y,  # type: ignore[operator]
        "<=": x <= y,  # type: ignore[operator]
        ">": x > y,  # type: ignore[operator]
        ">=": x >= y,  # type: ignore[operator]
    }[op]
    return bool(result)


def _arith(op: str, a: Value, b: Value) -> Value:
    x, y = _num(a), _num(b)
    if isinstance(x, XlError):
        return x
    if isinstance(y, XlError):
        return y
    if op == "+":
        return x + y
    if op == "-":
        return x - y
    if op == "*":
        return x * y
    if op == "/":
        return DIV0 if y == 0 else x / y
    if op == "^":
        if x == 0 and y < 0:
            return DIV0
        try:
            out = float(x) ** float(y)
        except (OverflowError, ZeroDivisionError):
            return XlError("#NUM!")
        return out if not isinstance(out, complex) else XlError("#NUM!")
    raise ValueError(op)


_COMPARISONS = ("=", "<>", "<", "<=", ">", ">=")


@dataclass(frozen=True, eq=False)
class BinOp(Expr):
    op: str
    left: Expr
    right: Expr

    def evaluate(self, env: Env) -> Value:
        a, b = self.left.evaluate(env), self.right.evaluate(env)
        if self.op in _COMPARISONS:
            return _compare(self.op, a, b)
        return _arith(self.op, a, b)

    def render(self, r: Renderer) -> str:
        return f"{_operand(self.left, r)}{self.op}{_operand(self.right, r)}"

    def children(self) -> Sequence[Expr]:
        return (self.left, self.right)


@dataclass(frozen=True, eq=False)
class Neg(Expr):
    operand: Expr

    def evaluate(self, env: Env) -> Value:
        return _arith("-", 0, self.operand.evaluate(env))

    def render(self, r: Renderer) -> str:
        return f"-{_operand(self.operand, r)}"

    def children(self) -> Sequence[Expr]:
        return (self.operand,)


def _operand(e: Expr, r: Renderer) -> str:
    text = e.render(r)
    return f"({text})" if e.compound and not isinstance(e, Func) else text


def _excel_int(v: Value) -> Value:
    x = _num(v)
    if isinstance(x, XlError):
        return x
    return int(math.floor(excel_round15(float(x))))


def _if(args: list[Value]) -> Value:
    cond = args[0]
    if isinstance(cond, XlError):
        return cond
    if isinstance(cond, str):
        return VALUE_ERROR
    return args[1] if cond else args[2]


def _reduce(fn: Callable[..., Value]) -> Callable[[list[Value]], Value]:
    def apply(args: list[Value]) -> Value:
        nums = [_num(a) for a in args]
        for n in nums:
            if isinstance(n, XlError):
                return n
        return fn(*nums)

    return apply


def _logical(fn: Callable[[list[bool]], bool]) -> Callable[[list[Value]], Value]:
    def apply(args: list[Value]) -> Value:
        for a in args:
            if isinstance(a, XlError):
                return a
        return fn([bool(a) for a in args])

    return apply


_FUNCTIONS: dict[str, Callable[[list[Value]], Value]] = {
    "IF": _if,
    "MIN": _reduce(min),
    "MAX": _reduce(max),
    "INT": lambda args: _excel_int(args[0]),
    "AND": _logical(all),
    "OR": _logical(any),
    "NOT": lambda args: args[0] if isinstance(args[0], XlError) else not args[0],
}


@dataclass(frozen=True, eq=False)
class Func(Expr):
    name: str
    args: tuple[Expr, ...]

    def evaluate(self, env: Env) -> Value:
        if self.name == "IF":  # evaluate only the branch taken, as spreadsheets do
            cond = self.args[0].evaluate(env)
            if isinstance(cond, XlError):
                return cond
            return self.args[1 if cond else 2].evaluate(env)
        return _FUNCTIONS[self.name]([a.evaluate(env) for a in self.args])

    def render(self, r: Renderer) -> str:
        return f"{self.name}({','.join(a.render(r) for a in self.args)})"

    def children(self) -> Sequence[Expr]:
        return self.args


def IF(cond: object, then: object, otherwise: object) -> Expr:  # noqa: N802 (spreadsheet name)
    return Func("IF", (lift(cond), lift(then), lift(otherwise)))


def MIN(*args: object) -> Expr:  # noqa: N802
    return Func("MIN", tuple(lift(a) for a in args))


def MAX(*args: object) -> Expr:  # noqa: N802
    return Func("MAX", tuple(lift(a) for a in args))


def INT(arg: object) -> Expr:  # noqa: N802
    return Func("INT", (lift(arg),))


def AND(*args: object) -> Expr:  # noqa: N802
    return Func("AND", tuple(lift(a) for a in args))


def NOT(arg: object) -> Expr:  # noqa: N802
    return Func("NOT", (lift(arg),))


def OR(*args: object) -> Expr:  # noqa: N802
    return Func("OR", tuple(lift(a) for a in args))


class DictEnv:
    """An Env over plain dictionaries, for tests and simple evaluation."""

    def __init__(self, values: dict[tuple[str, str], Value]) -> None:
        self.values = values

    def lookup(self, kind: str, name: str) -> Value:
        return self.values[(kind, name)]


# --------------------------------------------------------------------------------------------
# Columnar evaluation: one expression over many rows at once, with exactly the values of
# ``evaluate`` row by row (the same scalar functions; fast paths only where they provably agree)
# --------------------------------------------------------------------------------------------

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
    fast paths take, since Python's own operators then compute what ``_arith`` computes."""


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
    """``_compare`` without rounding both sides to 15 digits where that cannot change the
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
            return _compare(op, a, b)
        big = max(abs(x), abs(y))
        if not (1e-290 < big < 1e300) or not abs(x - y) > big * 1e-13:
            return _compare(op, a, b)
    else:
        return _compare(op, a, b)
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
    """``INT`` as ``_excel_int`` computes it, flooring directly where rounding to 15 digits
    first cannot move the value across a whole number."""
    if type(v) is int and -_LIMIT15 < v < _LIMIT15:
        return v
    if type(v) is float and -1e15 < v < 1e15:
        whole = math.floor(v)
        frac = v - whole
        margin = max(abs(v), 1.0) * 1e-13
        if margin < frac < 1 - margin:
            return whole
    return _excel_int(v)


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
            return Same(_compare(op, a.value, b.value) if op in _COMPARISONS
                        else _arith(op, a.value, b.value))
        if op in _COMPARISONS:
            return [compare_fast(op, x, y) for x, y in zip(_rows(a, n), _rows(b, n), strict=True)]
        fast = _OPERATORS.get(op)
        if fast is not None and _plain(a, True) and _plain(b, True):
            try:
                return Numbers(map(fast, _rows(a, n), _rows(b, n)))
            except (ZeroDivisionError, OverflowError):
                pass
        return classify([_arith(op, x, y) for x, y in zip(_rows(a, n), _rows(b, n), strict=True)])
    if t is Neg:
        a = evaluate_column(e.operand, env, rows)  # type: ignore[attr-defined]
        if isinstance(a, Same):
            return Same(_arith("-", 0, a.value))
        if isinstance(a, Numbers):
            return Numbers(map(operator.sub, itertools.repeat(0, n), a))
        return classify([_arith("-", 0, x) for x in a])
    if t is Func:
        return _func_column(e, env, rows, n)  # type: ignore[arg-type]
    if t is Memo:
        return env.memo(e, rows)  # type: ignore[arg-type]
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
    fn = _FUNCTIONS[e.name]
    if all(isinstance(a, Same) for a in args):
        return Same(fn([a.value for a in args]))  # type: ignore[union-attr]
    if e.name == "INT":
        return classify([int_fast(x) for x in args[0]])  # type: ignore[union-attr]
    if e.name in ("MIN", "MAX") and all(_plain(a) for a in args):
        return Numbers(map(min if e.name == "MIN" else max, *(_rows(a, n) for a in args)))
    return classify([fn(list(values)) for values in zip(*(_rows(a, n) for a in args), strict=True)])
