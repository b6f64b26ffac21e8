"""The library the walkthrough pages show, reached through the app: a page (views/) imports vitcore.app, the
Study and the config, never the layers below them (tests/test_import_graph.py), so what a page shows of the
parameter anatomy, the counted work, the attention probes, patching and the token cost comes from here.

None of these imports TensorFlow (the attention probes load it inside their functions, when a page asks)."""

from vitcore.analysis import attention, cost, timing, work  # noqa: F401 (the pages' library)
from vitcore.article.seed_reference import POSITION_EMBEDDING_PARAMS, VIT_PARAMS_QUOTED  # noqa: F401
from vitcore.data import patches  # noqa: F401
from vitcore.data.fashion import CLASS_NAMES  # noqa: F401
from vitcore.data.samples import SEED_ROWS  # noqa: F401
from vitcore.model import anatomy  # noqa: F401
from vitcore.stats import seconds  # noqa: F401
