"""vitcore: seed-paired ablation studies of a small Vision Transformer on Fashion-MNIST.

The public API is `__all__`, stable however the inside moves:

    from vitcore import RunConfig, Study
    study = Study.open("cached_runs")                      # one analysis of the store as it is now
    study.verdicts([(RunConfig(norm="batch"), RunConfig())]).to_frame()

Names are imported on first use (PEP 562), so `import vitcore` costs nothing: no pandas, no TensorFlow,
no Streamlit. `build_vit` and `build_convnet` need TensorFlow (the training extra). Layers, lowest
first: config → data → model → store → stats → run → analysis → article → study → app, cli. Module paths
of earlier versions (`vitcore.patches`, `vitcore.compare`, …) are gone; docs/contributing.md lists where each
went.
"""

from __future__ import annotations

__version__ = "0.1.0"

__all__ = [
    # the config: one run's description and the switch registry
    "RunConfig", "default_baseline", "REGISTRY", "Switch",
    # the store: run folders written atomically, read and validated
    "RunStore",
    # the study: one analysis of a store state, its typed results and its words
    "Study", "Verdicts", "Contrast", "Measurement", "Judgement", "Verdict", "MARGIN", "VERDICTS",
    # the data and the models
    "patchify", "build_vit", "build_convnet",
]


def __getattr__(name: str):
    """A public name, imported from the module that defines it on first use. Plain import statements rather
    than a table of module paths, so the import graph (tests/test_import_graph.py) and a reader see each edge;
    lazy rather than at the top because the homes import pandas (the store, the study) and TensorFlow (the
    models): a page that only needs RunConfig must not pay for them."""
    if name in ("RunConfig", "default_baseline"):
        from vitcore.config import run as home  # noqa: PLC0415 - on first use: `import vitcore` stays free
    elif name in ("REGISTRY", "Switch"):
        from vitcore.config import switches as home  # noqa: PLC0415 - on first use: `import vitcore` stays free
    elif name == "RunStore":
        from vitcore.store import runs as home  # noqa: PLC0415 - on first use: pandas
    elif name in ("Study", "Verdicts"):
        from vitcore.study import study as home  # noqa: PLC0415 - on first use: pandas, scipy
    elif name in ("Contrast", "Measurement", "Judgement", "Verdict"):
        from vitcore.stats import records as home  # noqa: PLC0415 - on first use: pandas, scipy
    elif name in ("MARGIN", "VERDICTS"):
        from vitcore.stats import estimates as home  # noqa: PLC0415 - on first use: scipy
    elif name == "patchify":
        from vitcore.data import patches as home  # noqa: PLC0415 - on first use: NumPy
    elif name in ("build_vit", "build_convnet"):
        from vitcore.model import build as home  # noqa: PLC0415 - on first use: TensorFlow
    else:
        raise AttributeError(f"module 'vitcore' has no attribute {name!r}; the public API: {', '.join(__all__)}")
    value = getattr(home, name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
