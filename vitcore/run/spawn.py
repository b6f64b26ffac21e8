"""Starting `spawn` children from a process whose `__main__` is not its real entry point.

A spawn child re-imports the parent's `__main__` from its file before it does any work. After
Streamlit's AppTest has run a page in this process (the test suite), `__main__` is the dashboard
script (`app.py`: no `__spec__`, a `__file__` that is not `sys.argv[0]`), so every child would
first re-run the whole dashboard. `neutral_main()` hides such a `__main__` while children start.
"""

from __future__ import annotations

import contextlib
import os
import sys
import types


def foreign_main() -> bool:
    """True when `__main__` is a script exec'd into this process rather than what was launched
    (`python script.py` and `python -m package` are left alone: children may need their functions)."""
    main = sys.modules.get("__main__")
    path = getattr(main, "__file__", None)
    if main is None or getattr(main, "__spec__", None) is not None or path is None:
        return False
    launched = sys.argv[0] if sys.argv and sys.argv[0] else None
    return launched is None or os.path.abspath(path) != os.path.abspath(launched)


@contextlib.contextmanager
def neutral_main():
    """Within this block, processes started with the spawn method do not re-run a foreign
    `__main__` (see foreign_main): it is replaced by an empty module, and restored on exit."""
    if not foreign_main():
        yield
        return
    main = sys.modules["__main__"]
    sys.modules["__main__"] = types.ModuleType("__main__")
    try:
        yield
    finally:
        sys.modules["__main__"] = main
