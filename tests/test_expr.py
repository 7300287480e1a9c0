"""The expression tree renders what it evaluates: the traps of STYLE.md, one test each."""

from __future__ import annotations

import pytest

from planner.model.expr import DIV0, INT, DictEnv, Num, Ref, XlError, excel_round15


class Names:
    def ref(self, kind: str, name: str) -> str:
        return name


def test_power_is_right_associative_in_python_and_rendered_unambiguously() -> None:
    e = Num(2) ** (Num(3) ** Num(2))
    assert e.evaluate(DictEnv({})) == 512
    assert e.render(Names()) == "2^(3^2)"  # a bare =2^3^2 would be 64 in a spreadsheet


def test_negation_binds_after_power() -> None:
    e = -(Num(2) ** 2)
    assert e.evaluate(DictEnv({})) == -4
    assert e.render(Names()) == "-(2^2)"  # a bare =-2^2 is 4 in a spreadsheet


def test_division_by_zero_is_the_spreadsheet_error() -> None:
    e = Ref("q", "a") / 0 + 1
    result = e.evaluate(DictEnv({("q", "a"): 5}))
    assert isinstance(result, XlError) and result == DIV0
    assert str(result) == "#DIV/0!"


def test_int_floors_like_a_spreadsheet_at_15_digits() -> None:
    # 0.1*3/0.3 is 1.0000000000000002 in binary; Python floors 2.9999999999999996 to 2,
    # a spreadsheet sees 3.
    x = 2.9999999999999996
    assert excel_round15(x) == 3.0
    assert INT(Num(x)).evaluate(DictEnv({})) == 3
    assert INT(Num(2.5)).evaluate(DictEnv({})) == 2


def test_compound_operands_are_parenthesised() -> None:
    a, b, c = Ref("q", "a"), Ref("q", "b"), Ref("q", "c")
    assert (a / (b * c)).render(Names()) == "a/(b*c)"
    assert ((a - b) - c).render(Names()) == "(a-b)-c"
    assert (a - (b - c)).evaluate(DictEnv({("q", "a"): 1, ("q", "b"): 2, ("q", "c"): 3})) == 2


def test_brackets_that_change_the_value_are_written() -> None:
    """Rendered, not only evaluated: without its brackets each would mean something else."""
    a, b, c = Ref("q", "a"), Ref("q", "b"), Ref("q", "c")
    env = DictEnv({("q", "a"): 1, ("q", "b"): 2, ("q", "c"): 3})
    assert (a - (b - c)).render(Names()) == "a-(b-c)"  # a-b-c would be -4, not 2
    assert (a - (b - c)).evaluate(env) == 2
    assert ((a - b) ** c).render(Names()) == "(a-b)^c"  # a-b^c would be -7, not -1
    assert ((a - b) ** c).evaluate(env) == -1
    assert (a / (b / c)).render(Names()) == "a/(b/c)"


def test_text_literals_are_quoted_for_excel() -> None:
    assert Ref("q", "x").eq('say "hi"').render(Names()) == 'x="say ""hi"""'


@pytest.mark.parametrize("value,text", [(1e12, "1000000000000"), (0.5, "0.5"),
                                         (1073741824, "1073741824"), (1e20, "1E+20")])
def test_numbers_render_as_excel_literals(value: float, text: str) -> None:
    assert Num(value).render(Names()) == text


def test_a_constant_holds_what_a_spreadsheet_keeps_of_it() -> None:
    """15 significant digits, in the formula and in the planner's own value: LibreOffice saves
    e as 2.71828182845905, and a longer literal would read as an edited formula on import."""
    e = Num(2.718281828459045)
    assert e.render(Names()) == "2.71828182845905"
    assert e.evaluate(DictEnv({})) == 2.71828182845905
    assert Num(0.3989422804014327).render(Names()) == "0.398942280401433"
