"""autograd's ``autograd.builtins`` under myc's name: Python's own containers.

autograd wraps ``tuple``, ``list`` and ``dict`` so its tracer can follow values into
them (``from autograd.builtins import tuple``); myc compiles Python's containers as they
are, so after the import swap ``autograd`` -> ``myc`` these are simply Python's.
"""

import builtins as _py

tuple = _py.tuple  # noqa: A001 - autograd's names
list = _py.list  # noqa: A001
dict = _py.dict  # noqa: A001
isinstance = _py.isinstance  # noqa: A001
type = _py.type  # noqa: A001

__all__ = ["dict", "isinstance", "list", "tuple", "type"]
