"""The store layer: run folders written atomically, validated once, indexed, kept healthy.

`from vitcore.store import RunStore` (the path of earlier versions, when this was one module) still
works: a name not found here is looked up in vitcore.store.runs on first use."""

from vitcore.config import forwarding

__getattr__ = forwarding(__name__, "vitcore.store.runs")
