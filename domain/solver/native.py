"""The C search of the sound stage (``domain/_sound.c``, an optional extension built by setup.py)."""

from __future__ import annotations

import os
from types import ModuleType


def load() -> ModuleType | None:
    """The C search of the sound stage (``domain/_sound.c``, an optional extension: see setup.py), if built."""
    try:
        from .. import _sound
    except ImportError:
        return None
    return _sound


module = load()
# Whether ``solve`` runs the sound stage's depth-first search in C (``Search.run_native``): where
# the extension is built, unless CANFIELD_PURE_SOLVER=1 asks for the Python search (the reference:
# both give the same answer after the same positions; tests compare them). Tests may set it.
NATIVE_SEARCH = module is not None and os.environ.get("CANFIELD_PURE_SOLVER", "") != "1"


def native_available() -> bool:
    """Whether the C search of the sound stage is built (``domain._sound`` imports)."""
    return module is not None
