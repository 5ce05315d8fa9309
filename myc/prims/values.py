"""Special runtime values shared by the primitives and the evaluators."""

from __future__ import annotations


class _Singleton:
    """A named value with one instance, that survives pickling as itself."""

    _instances: dict[type, _Singleton] = {}

    def __new__(cls):
        if cls not in _Singleton._instances:
            _Singleton._instances[cls] = super().__new__(cls)
        return _Singleton._instances[cls]

    def __reduce__(self):
        return (type(self), ())


class _Undefined(_Singleton):
    """The value of a variable on a path where Python would not have assigned it."""

    def __repr__(self) -> str:
        return "UNDEF"


class _Zero(_Singleton):
    """The symbolic zero sensitivity: the additive identity of every gradient value.

    AD produces it for inputs an output does not depend on; it keeps reverse mode from
    materializing zero arrays whose shape it would have to know.
    """

    def __repr__(self) -> str:
        return "ZERO"


UNDEF = _Undefined()
ZERO = _Zero()
