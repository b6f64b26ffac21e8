"""vitcore: seed-paired ablation studies of a small Vision Transformer on Fashion-MNIST.

The public API is `__all__`, stable however the inside moves:

    from vitcore import RunConfig, Study
    study = Study.open("cached_runs")                      # one analysis of the store as it is now
    study.verdicts([(RunConfig(norm="batch"), RunConfig())]).to_frame()

Names are imported on first use (PEP 562), so `import vitcore` costs nothing: no pandas, no TensorFlow,
no Streamlit. `build_vit` and `build_convnet` need TensorFlow (the training extra). Layers, lowest
first: config → data → model → store → stats → run → analysis → article → study → app, cli.
Module paths of earlier versions (`vitcore.patches`, `vitcore.models`, `vitcore.compare`, …) still import,
with a DeprecationWarning naming the new one.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import sys
import warnings

__version__ = "0.1.0"

# name -> the module that defines it (one line each: what the public API promises)
_EXPORTS = {
    # the config: one run's description and the switch registry
    "RunConfig": "vitcore.config.run", "default_baseline": "vitcore.config.run",
    "REGISTRY": "vitcore.config.switches", "Switch": "vitcore.config.switches",
    # the store: run folders written atomically, read and validated
    "RunStore": "vitcore.store.runs",
    # the study: one analysis of a store state, its typed results and its words
    "Study": "vitcore.study.study", "Verdicts": "vitcore.study.study",
    "Contrast": "vitcore.stats.records", "Measurement": "vitcore.stats.records",
    "Judgement": "vitcore.stats.records", "Verdict": "vitcore.stats.records",
    "MARGIN": "vitcore.stats.estimates", "VERDICTS": "vitcore.stats.estimates",
    # the data and the models
    "patchify": "vitcore.data.patches", "build_vit": "vitcore.model.build", "build_convnet": "vitcore.model.build",
}
__all__ = list(_EXPORTS)


def __getattr__(name: str):
    if name not in _EXPORTS:
        raise AttributeError(f"module 'vitcore' has no attribute {name!r}; the public API: {', '.join(__all__)}")
    value = getattr(importlib.import_module(_EXPORTS[name]), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})


# Modules of earlier versions, moved when the package became layers: old path -> where it lives now.
MOVED = {
    "vitcore.anatomy": "vitcore.model.anatomy", "vitcore.attention": "vitcore.analysis.attention",
    "vitcore.bench": "vitcore.run.bench", "vitcore.bn": "vitcore.analysis.bn",
    "vitcore.claims": "vitcore.article.claims",
    "vitcore.compare": "vitcore.stats.compare", "vitcore.cost": "vitcore.analysis.cost",
    "vitcore.flips": "vitcore.analysis.flips", "vitcore.index": "vitcore.store.index",
    "vitcore.models": "vitcore.model.build", "vitcore.numpy_vit": "vitcore.model.numpy_vit",
    "vitcore.patches": "vitcore.data.patches", "vitcore.report": "vitcore.article.report",
    "vitcore.samples": "vitcore.data.samples", "vitcore.scaling": "vitcore.analysis.scaling",
    "vitcore.seed_reference": "vitcore.article.sources", "vitcore.spawn": "vitcore.run.spawn",
    "vitcore.sweep": "vitcore.run.sweep", "vitcore.train": "vitcore.run.train",
    "vitcore.upkeep": "vitcore.store.upkeep",
    "vitcore.validate": "vitcore.store.validate", "vitcore.verdicts": "vitcore.stats.estimates",
    # small modules folded into their neighbours (every name they held lives on there)
    "vitcore.stats.plan_settings": "vitcore.stats.plans", "vitcore.stats.plan_json": "vitcore.stats.plans",
    "vitcore.stats.plan_history": "vitcore.stats.plan_report", "vitcore.stats.single": "vitcore.stats.summaries",
    "vitcore.stats.effect_families": "vitcore.stats.summaries", "vitcore.stats.comparer": "vitcore.stats.compare",
    "vitcore.stats.assurance": "vitcore.stats.estimates", "vitcore.run.floor": "vitcore.run.bench",
    "vitcore.run.order": "vitcore.run.sweep", "vitcore.run.planned": "vitcore.run.sweep",
    "vitcore.run.plansweep": "vitcore.run.sweep", "vitcore.run.startup": "vitcore.run.spawn",
    "vitcore.run.quiet": "vitcore.run.spawn", "vitcore.model.posemb": "vitcore.model.numpy_vit",
    "vitcore.model.numpy_convnet": "vitcore.model.numpy_vit", "vitcore.data.folder": "vitcore.data.fashion",
    "vitcore.config.papers": "vitcore.config.switches", "vitcore.config.oldpaths": "vitcore.config",
    "vitcore.store.replacements": "vitcore.store.upkeep", "vitcore.article.seed_reference": "vitcore.article.sources",
}


class _Moved(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """`import vitcore.patches` gives vitcore.data.patches itself (not a copy), with a DeprecationWarning."""

    def find_spec(self, name, path=None, target=None):
        return importlib.util.spec_from_loader(name, self) if name in MOVED else None

    def create_module(self, spec):
        warnings.warn(f"{spec.name} moved to {MOVED[spec.name]}: import it from there (or the name from vitcore)",
                      DeprecationWarning, stacklevel=2)
        return importlib.import_module(MOVED[spec.name])

    def exec_module(self, module) -> None:
        pass  # the module it aliases is already executed


if not any(isinstance(finder, _Moved) for finder in sys.meta_path):
    sys.meta_path.append(_Moved())
