"""Exact numbers for the calculator: ``Decimal`` while the value has a finite decimal
form, ``Fraction`` once it does not. Never a float.

Wikidata amounts are finite decimals, and sums, differences and products of finite
decimals are finite decimals; ``decimal`` does that arithmetic in C. The context below
has the largest precision and exponent range ``decimal`` allows and traps ``Inexact``
and ``Rounded``, so an operation that could not be exact raises instead of rounding
(none of add, subtract, multiply can). Division goes through ``Fraction`` and comes
back as a ``Decimal`` when the quotient has a finite decimal form.

>>> add(Decimal("0.1"), Decimal("0.2"))
Decimal('0.3')
>>> div(Decimal(1), Decimal(3)), div(Decimal(1), Decimal(8))
(Fraction(1, 3), Decimal('0.125'))
>>> text(Decimal("173460000.00")), text(Fraction(-10, 3)), text(Decimal("1E+3"))
('+173460000', '-10/3', '+1000')
"""

from __future__ import annotations

from decimal import (
    MAX_EMAX,
    MAX_PREC,
    MIN_EMIN,
    Context,
    Decimal,
    DivisionByZero,
    Inexact,
    InvalidOperation,
    Overflow,
    Rounded,
)
from fractions import Fraction
from typing import Union

from chaingraph.units import Unit, finite_or_fraction

__all__ = ["CONTEXT", "Exact", "add", "convert", "div", "exact", "fraction", "from_base", "mul", "neg", "sub",
           "text", "to_base"]

#: a finite decimal (fast, in C) or a rational without one
Exact = Union[Decimal, Fraction]

#: exact decimal arithmetic: anything that would round raises instead
CONTEXT = Context(prec=MAX_PREC, Emax=MAX_EMAX, Emin=MIN_EMIN,
                  traps=[Inexact, Rounded, InvalidOperation, DivisionByZero, Overflow])


def fraction(x: Exact | int) -> Fraction:
    return x if type(x) is Fraction else Fraction(x)


def exact(q: Fraction) -> Exact:
    """``q`` as a ``Decimal`` when it has a finite decimal form, else unchanged."""
    return finite_or_fraction(q)


def add(a: Exact, b: Exact) -> Exact:
    if type(a) is Decimal and type(b) is Decimal:
        return CONTEXT.add(a, b)
    return exact(fraction(a) + fraction(b))


def sub(a: Exact, b: Exact) -> Exact:
    if type(a) is Decimal and type(b) is Decimal:
        return CONTEXT.subtract(a, b)
    return exact(fraction(a) - fraction(b))


def mul(a: Exact, b: Exact) -> Exact:
    if type(a) is Decimal and type(b) is Decimal:
        return CONTEXT.multiply(a, b)
    return exact(fraction(a) * fraction(b))


def neg(a: Exact) -> Exact:
    return CONTEXT.minus(a) if type(a) is Decimal else -a


def div(a: Exact, b: Exact | int) -> Exact:
    """Exact quotient (``ZeroDivisionError`` for ``b == 0``; callers refuse that first)."""
    return exact(fraction(a) / fraction(b))


def text(x: Exact | int) -> str:
    """Signed decimal text without exponent or trailing zeros, or ``p/q``."""
    if type(x) is Fraction:
        if x.denominator != 1:
            return f"{x.numerator}/{x.denominator}"
        x = x.numerator
    if type(x) is int:
        return f"+{x}" if x >= 0 else str(x)
    s = format(x, "f")
    if "." in s:
        s = s.rstrip("0").rstrip(".")
    if s in ("-0", "0"):
        return "+0"
    return s if s.startswith("-") else "+" + s


def to_base(unit: Unit, x: Exact) -> Exact:
    """``x`` in ``unit`` → pint base units (exact; offsets for temperatures)."""
    if unit.is_base:
        return x
    factor, offset = unit.exact
    return add(mul(x, factor), offset) if offset else mul(x, factor)


def from_base(unit: Unit, x: Exact) -> Exact:
    if unit.is_base:
        return x
    factor, offset = unit.exact
    if offset:
        x = sub(x, offset)
    return div(x, factor)


def convert(x: Exact, source: Unit, target: Unit) -> Exact:
    """Exact conversion between compatible units (the caller checked compatibility)."""
    if source.qid == target.qid:
        return x
    return from_base(target, to_base(source, x))
