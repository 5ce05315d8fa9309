"""Special runtime values shared by the primitives and the evaluators."""

from __future__ import annotations


class _Undefined:
    """The value of a variable on a path where Python would not have assigned it."""

    _instance = None

    def __new__(cls):
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "UNDEF"

    def __reduce__(self):
        return (_Undefined, ())


UNDEF = _Undefined()


class _Zero:
    """The symbolic zero sensitivity: the additive identity of every gradient value.

    AD produces it for inputs an output does not depend on; it keeps reverse mode from
    materializing zero arrays whose shape it would have to know.
    """

    _instance = None

    def __new__(cls):
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "ZERO"

    def __reduce__(self):
        return (_Zero, ())


ZERO = _Zero()
