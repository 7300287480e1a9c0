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

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol, Union

Value = Union[float, int, bool, str, "XlError"]


@dataclass(frozen=True)
class XlError:
    """A spreadsheet error value such as ``#DIV/0!``; propagates through arithmetic."""

    code: str

    def __str__(self) -> str:
        return self.code


DIV0 = XlError("#DIV/0!")
VALUE_ERROR = XlError("#VALUE!")
NUM_ERROR = XlError("#NUM!")


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

    def __post_init__(self) -> None:
        # A spreadsheet holds 15 significant digits of a constant, and LibreOffice rewrites a
        # longer one when it saves (the round trip would read that as an edited formula).
        if isinstance(self.value, float):
            object.__setattr__(self, "value", excel_round15(self.value))

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


def compare(op: str, a: Value, b: Value) -> Value:
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
    if op == "=":
        return x == y
    if op == "<>":
        return x != y
    if op == "<":
        return x < y  # type: ignore[operator]
    if op == "<=":
        return x <= y  # type: ignore[operator]
    if op == ">":
        return x > y  # type: ignore[operator]
    if op == ">=":
        return x >= y  # type: ignore[operator]
    raise ValueError(op)


_PLAIN = (int, float)  # the types a number has (bool, an int subclass, is not among them)


def arith(op: str, a: Value, b: Value) -> Value:
    x: float | int
    y: float | int
    if type(a) in _PLAIN and type(b) in _PLAIN:  # the common case: two numbers
        x, y = a, b  # type: ignore[assignment]
    else:
        nx, ny = _num(a), _num(b)
        if isinstance(nx, XlError):
            return nx
        if isinstance(ny, XlError):
            return ny
        x, y = nx, ny
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


COMPARISONS = ("=", "<>", "<", "<=", ">", ">=")


@dataclass(frozen=True, eq=False)
class BinOp(Expr):
    op: str
    left: Expr
    right: Expr

    def evaluate(self, env: Env) -> Value:
        a, b = self.left.evaluate(env), self.right.evaluate(env)
        if self.op in COMPARISONS:
            return compare(self.op, a, b)
        return arith(self.op, a, b)

    def render(self, r: Renderer) -> str:
        return f"{_operand(self.left, r)}{self.op}{_operand(self.right, r)}"

    def children(self) -> Sequence[Expr]:
        return (self.left, self.right)


@dataclass(frozen=True, eq=False)
class Neg(Expr):
    operand: Expr

    def evaluate(self, env: Env) -> Value:
        return arith("-", 0, self.operand.evaluate(env))

    def render(self, r: Renderer) -> str:
        return f"-{_operand(self.operand, r)}"

    def children(self) -> Sequence[Expr]:
        return (self.operand,)


def _operand(e: Expr, r: Renderer) -> str:
    text = e.render(r)
    return f"({text})" if e.compound and not isinstance(e, Func) else text


def excel_int(v: Value) -> Value:
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


FUNCTIONS: dict[str, Callable[[list[Value]], Value]] = {
    "IF": _if,
    "MIN": _reduce(min),
    "MAX": _reduce(max),
    "INT": lambda args: excel_int(args[0]),
    "AND": _logical(all),
    "OR": _logical(any),
    "NOT": lambda args: args[0] if isinstance(args[0], XlError) else not args[0],
    "LN": _reduce(lambda x: math.log(x) if x > 0 else NUM_ERROR),
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
        return FUNCTIONS[self.name]([a.evaluate(env) for a in self.args])

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


def LN(arg: object) -> Expr:  # noqa: N802
    """The natural logarithm; #NUM! for zero or a negative number, as spreadsheets give."""
    return Func("LN", (lift(arg),))


class DictEnv:
    """An Env over plain dictionaries, for tests and simple evaluation."""

    def __init__(self, values: dict[tuple[str, str], Value]) -> None:
        self.values = values

    def lookup(self, kind: str, name: str) -> Value:
        return self.values[(kind, name)]
