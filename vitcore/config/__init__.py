"""The config layer: RunConfig (the run's identity and id) and the facts every layer shares.

`from vitcore.config import RunConfig` (the path of earlier versions, when this was one module) still
works: a name not found here is looked up in vitcore.config.run on first use."""

from vitcore.config.oldpaths import forwarding

__getattr__ = forwarding(__name__, "vitcore.config.run")
