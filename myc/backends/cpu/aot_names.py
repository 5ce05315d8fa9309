"""The C names an ahead-of-time library exports, and which names a user may give it.

A library exports its entry point ``NAME`` and two helpers prefixed with it,
``NAME_last_error`` and ``NAME_free`` -- prefixed so that two libraries linked into one
program each keep their own error message.  ``NAME`` goes into a C header and into the
dynamic symbol table of every program that links the library, so it must be a C
identifier that means nothing else there: not a C or C++ keyword (the header is
``extern "C"`` for C++), not a name reserved to the implementation (``_X``, ``__x``),
not a name of the header itself (``myc_array``, ``MYC_OK``...) or of the types it uses,
and not a libc/libm symbol (``exp`` would take over the math library's ``exp`` in the
whole program; ``malloc`` would not even link).  The same holds for the helpers' names.
"""

from __future__ import annotations

import re

from myc.backends.cpu.c_library_names import LIBC_NAMES
from myc.errors import MycError

C_KEYWORDS = frozenset("""
auto break case char const continue default do double else enum extern float for goto if
inline int long register restrict return short signed sizeof static struct switch typedef
union unsigned void volatile while _Alignas _Alignof _Atomic _Bool _Complex _Generic
_Imaginary _Noreturn _Static_assert _Thread_local alignas alignof bool constexpr false
nullptr static_assert thread_local true typeof typeof_unqual _BitInt _Decimal32
_Decimal64 _Decimal128
""".split())

CPP_KEYWORDS = frozenset("""
and and_eq asm bitand bitor catch char8_t char16_t char32_t class co_await co_return
co_yield compl concept const_cast consteval constinit decltype delete dynamic_cast explicit
export friend module mutable namespace new noexcept not not_eq operator or or_eq private
protected public reinterpret_cast requires static_cast template this throw try typeid
typename using virtual wchar_t xor xor_eq import final override
""".split())

# macros and types of the standard headers (and of <stdint.h>, which the header includes)
C_MACROS_AND_TYPES = frozenset("""
main assert errno offsetof va_arg va_copy va_end va_start va_list NULL EOF BUFSIZ FILE
size_t ssize_t ptrdiff_t wchar_t wint_t max_align_t int8_t int16_t int32_t int64_t
uint8_t uint16_t uint32_t uint64_t intptr_t uintptr_t intmax_t uintmax_t jmp_buf
sig_atomic_t time_t clock_t div_t ldiv_t lldiv_t fpos_t complex imaginary I noreturn
INFINITY NAN HUGE_VAL HUGE_VALF HUGE_VALL isnan isinf isfinite isnormal signbit
fpclassify isgreater isgreaterequal isless islessequal islessgreater isunordered
EXIT_SUCCESS EXIT_FAILURE RAND_MAX CHAR_BIT INT_MAX INT_MIN SIZE_MAX
""".split())

HELPERS = ("last_error", "free")  # exported as NAME_last_error, NAME_free
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


def helper_names(name: str) -> dict[str, str]:
    """The exported helpers of the library whose entry point is ``name``."""
    return {h: f"{name}_{h}" for h in HELPERS}


def _clash(symbol: str) -> str | None:
    """Why ``symbol`` cannot be exported (``None``: it can)."""
    if symbol in C_KEYWORDS or symbol in CPP_KEYWORDS:
        return "a C or C++ keyword"
    if symbol.startswith("__") or (symbol.startswith("_") and symbol[1:2].isupper()):
        return "reserved to the C implementation (it starts with '__' or '_' and a capital)"
    if symbol.lower().startswith("myc_"):
        return "in the namespace of the library's header (myc_array, MYC_OK, ...)"
    if symbol in C_MACROS_AND_TYPES:
        return "a name of the C standard headers (a macro, a type, or main)"
    if symbol in LIBC_NAMES:
        return "a function or variable of the C or math library, which the library " \
               "would take over in every program that links it"
    return None


def check_name(name: object) -> str:
    """``name`` when it can be a library's entry point; else a :class:`MycError` saying
    why not."""
    if not isinstance(name, str):
        raise MycError(f"myc.aot: the library's name must be a string (a C identifier), "
                       f"not {type(name).__name__}")
    if not _IDENT.match(name):
        raise MycError(f"myc.aot: {name!r} is not a C identifier: a library's name is "
                       "letters, digits and '_', not starting with a digit (e.g. 'my_fn')")
    why = _clash(name)
    if why is not None:
        raise MycError(f"myc.aot: the name {name!r} is {why}; choose another (--name)")
    for helper in helper_names(name).values():
        why = _clash(helper)
        if why is not None:
            raise MycError(f"myc.aot: the name {name!r} would export {helper!r}, which is "
                           f"{why}; choose another (--name)")
    return name
