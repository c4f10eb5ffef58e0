"""The compiled module, ``_native`` (C: one file per pure module it twins), and how each pure function
takes its compiled twin.

The pure function is the interface. The module that defines it rebinds its name at its end::

    decode_v2_records = bind(decode_v2_records)(native.decode_v2_records if native else None)

which gives the compiled function where ``_native`` was built and loads, else the pure one; mypy
checks the compiled function's signature (``_native.pyi``) against the pure one's. ``KDUMP_PURE=1``
keeps every pure one; ``ACTIVE`` says which build is in use, and ``reference`` gives back the pure
function of a bound name, for the tests that hold the two against each other.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar, cast

F = TypeVar("F", bound=Callable[..., Any])


def pure_requested() -> bool:
    """``KDUMP_PURE=1`` (or true, yes): every bound name keeps its pure function."""
    return os.environ.get("KDUMP_PURE", "") in ("1", "true", "yes")


def _load() -> Any:
    """The compiled module, or None under ``KDUMP_PURE`` or where it was not built (or does not load)."""
    if pure_requested():
        return None
    try:
        from kafka_dump.native import _native
    except ImportError:
        return None
    return _native


if TYPE_CHECKING:
    from kafka_dump.native import _native as native
else:
    native = _load()

ACTIVE = "compiled" if native else "pure-python"

# Each bound name -> its pure function.
REFERENCES: dict[str, Callable[..., Any]] = {}


def bind(pure: F) -> Callable[[F | None], F]:
    """``bind(pure)(compiled)``: ``compiled`` when there is one, else ``pure``, which is kept in
    ``REFERENCES``. Both have ``pure``'s type, so a compiled function whose stub differs fails mypy."""
    REFERENCES[pure.__name__] = pure
    return lambda compiled: pure if compiled is None else compiled


def reference(fn: F) -> F:
    """The pure function of a bound name, given either function it may hold."""
    return cast(F, REFERENCES[fn.__name__])


__all__ = ["ACTIVE", "REFERENCES", "bind", "native", "pure_requested", "reference"]
