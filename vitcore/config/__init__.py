"""The config layer: RunConfig (the run's identity and id) and the facts every layer shares.

`from vitcore.config import RunConfig` (the path of earlier versions, when this was one module) still
works: a name not found here is looked up in vitcore.config.run on first use."""


def __getattr__(name: str):
    import importlib
    import importlib.util

    if name.startswith("__"):
        raise AttributeError(name)
    if importlib.util.find_spec(f"{__name__}.{name}") is not None:  # a submodule (`from vitcore.config import
        return importlib.import_module(f"{__name__}.{name}")        # switches` mid-import): never via run
    try:
        return getattr(importlib.import_module("vitcore.config.run"), name)
    except AttributeError:
        raise AttributeError(f"module 'vitcore.config' has no attribute {name!r}") from None
