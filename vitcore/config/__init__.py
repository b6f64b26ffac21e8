"""The config layer: RunConfig (the run's identity and id) and the facts every layer shares.

`from vitcore.config import RunConfig` (the path of earlier versions, when this was one module) still
works: a name not found here is looked up in vitcore.config.run on first use. `forwarding` makes such a
module-level __getattr__ for any package that was once one module (vitcore.store too)."""

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


__getattr__ = forwarding(__name__, "vitcore.config.run")
