"""The store layer: run folders written atomically, validated once, indexed, kept healthy.

`from vitcore.store import RunStore` (the path of earlier versions, when this was one module) still
works: a name not found here is looked up in vitcore.store.runs on first use."""


def __getattr__(name: str):
    import importlib
    import importlib.util

    if name.startswith("__"):
        raise AttributeError(name)
    if importlib.util.find_spec(f"{__name__}.{name}") is not None:  # a submodule (`from vitcore.store import
        return importlib.import_module(f"{__name__}.{name}")        # weights` mid-import): never via runs
    try:
        return getattr(importlib.import_module("vitcore.store.runs"), name)
    except AttributeError:
        raise AttributeError(f"module 'vitcore.store' has no attribute {name!r}") from None
