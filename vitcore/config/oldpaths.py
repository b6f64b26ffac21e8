"""Old import paths: a package that was once one module answers its old names from the module that holds
them now (`from vitcore.store import RunStore` -> vitcore.store.runs), on first use."""

from __future__ import annotations

import importlib
import importlib.util


def forwarding(package: str, module: str):
    """A module-level __getattr__ for `package`: a submodule asked for by name is imported as itself
    (`from vitcore.store import weights` mid-import must never go through `module`, which may import it),
    any other name is looked up in `module`."""
    def __getattr__(name: str):
        if name.startswith("__"):
            raise AttributeError(name)
        if importlib.util.find_spec(f"{package}.{name}") is not None:
            return importlib.import_module(f"{package}.{name}")
        try:
            return getattr(importlib.import_module(module), name)
        except AttributeError:
            raise AttributeError(f"module {package!r} has no attribute {name!r}") from None
    return __getattr__
