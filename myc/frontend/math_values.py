"""``math`` functions used as values (``compose(math.sin, f)``, ``apply(math.exp, x)``).

A call ``math.sin(x)`` written in a program is lowered with Python's semantics (a Python
float result, ``ValueError`` outside the domain); passing ``math.sin`` itself around must
mean the same, so each is this small function, parsed like user code, instead of the
NumPy primitive (which would compute in float32 for a float32 argument).
"""

import math


def sin(x):
    return math.sin(x)


def cos(x):
    return math.cos(x)


def tan(x):
    return math.tan(x)


def tanh(x):
    return math.tanh(x)


def exp(x):
    return math.exp(x)


def log(x):
    return math.log(x)


def log1p(x):
    return math.log1p(x)


def expm1(x):
    return math.expm1(x)


def sqrt(x):
    return math.sqrt(x)


def atan(x):
    return math.atan(x)


def fabs(x):
    return math.fabs(x)


def floor(x):
    return math.floor(x)


def ceil(x):
    return math.ceil(x)


def pow(x, y):  # noqa: A001 - the name of the math function it stands for
    return math.pow(x, y)


def atan2(y, x):
    return math.atan2(y, x)


def log2(x):
    return math.log2(x)


def log10(x):
    return math.log10(x)


def trunc(x):
    return math.trunc(x)


def sinh(x):
    return math.sinh(x)


def cosh(x):
    return math.cosh(x)


def degrees(x):
    return math.degrees(x)


def radians(x):
    return math.radians(x)
