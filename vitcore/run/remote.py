"""A run that trained on another machine (a Ray node, vitcore.run.cluster) is believed only as far as the
driver can recompute it: its results must be what its own weights give on the official test split.

`checked_reply(cfg, files)` takes the reply's files as bytes (vitcore.store.writer.render's) and returns
what the driver may store, or raises ValueError with one message:
- sizes first (vitcore.store.writer.sizes_problem): nothing parsed or written before;
- the weights must be there (a remote run always returns them) and pass every weights rule
  (vitcore.store.weights.parsed: self-contained, bounded, finite, exactly the config's model);
- the driver runs them in NumPy on the 10,000 official test images (vitcore.data.testsplit) and
  recomputes the predictions (every stored one, near ties excepted: vitcore.store.weights.differing),
  the confusion matrix and test accuracy (from those predictions and the official labels) and the test
  loss (to LOSS_TOLERANCE): a fabricated run, however self-consistent, is refused;
- the weights are then dropped when the run's config keeps none (vitcore.store.files.keeps_weights,
  the local rule), and the summary says so.
The store then validates what is left like any run (RunStore.put).
"""

from __future__ import annotations

import importlib.util
import json

import numpy as np
from sklearn.metrics import confusion_matrix, log_loss

from vitcore.config.run import RunConfig
from vitcore.data import testsplit
from vitcore.data.fashion import NUM_CLASSES, official_test_labels
from vitcore.store import weights
from vitcore.store.files import PREDICTIONS, WEIGHTS, BadRun, keeps_weights, predictions_array
from vitcore.store.validate import parse_confusion
from vitcore.store.writer import SUMMARY, json_bytes, sizes_problem

# The test loss recomputed in NumPy is within 3e-7 of TensorFlow's on the committed runs (7e-8 of the
# loss): a relative 1e-5 absorbs float32 rounding and refuses any loss a reply made up.
LOSS_TOLERANCE = 1e-5


def driver_problem() -> str | None:
    """Why this machine cannot check remote runs (no official test split here, no TensorFlow to retrain them:
    vitcore.run.verify), or None."""
    why = testsplit.missing()
    if why is not None:
        return f"a Ray driver recomputes every remote run from its weights, but {why}"
    if importlib.util.find_spec("tensorflow") is None:
        return ("a Ray driver retrains a share of the remote runs to trust them (vitcore.run.verify), but TensorFlow "
                "is not installed here: pip install -r requirements-train.txt")
    return None


def checked_reply(cfg: RunConfig, files) -> dict[str, bytes]:
    """The files to store for a remote run of cfg (see the module docstring), or ValueError."""
    refuse = f"refusing remote run {cfg.run_id} ({cfg.label()})"
    if (problem := sizes_problem(cfg, files)) is not None:
        raise ValueError(f"{refuse}: {problem}")
    for name in (WEIGHTS, PREDICTIONS, SUMMARY, "confusion.csv"):
        if name not in files:
            raise ValueError(f"{refuse}: it returned no {name} (a remote run returns its weights, and the driver "
                             "recomputes its results from them)")
    if (images := testsplit.images()) is None:
        raise ValueError(f"{refuse}: {driver_problem()}")
    try:
        stored = predictions_array(files[PREDICTIONS])
        summary = json.loads(files[SUMMARY])
        probs = weights.reproduce(cfg, weights.parsed(files[WEIGHTS], cfg), stored, images)
        confusion = parse_confusion(files["confusion.csv"].decode())
    except (BadRun, ValueError, RecursionError) as error:  # UnicodeDecodeError is a ValueError
        raise ValueError(f"{refuse}: {str(error)[:500]}") from None
    labels = official_test_labels()
    ours = confusion_matrix(labels, stored, labels=range(NUM_CLASSES))
    loss = float(log_loss(labels, probs.astype(np.float64) / probs.astype(np.float64).sum(axis=1, keepdims=True),
                          labels=range(NUM_CLASSES)))
    wrong = [] if np.array_equal(ours, confusion) else ["its confusion matrix is not its predictions'"]
    accuracy = float(np.trace(ours) / len(labels))
    if not isinstance(summary, dict) or not isinstance(summary.get("test_accuracy"), float) \
            or abs(summary["test_accuracy"] - accuracy) > 1e-9:  # as vitcore.store.validate.TOLERANCE
        wrong.append(f"test accuracy {summary.get('test_accuracy') if isinstance(summary, dict) else None!r}, "
                     f"its weights give {accuracy!r}")
    elif not (isinstance(summary.get("test_loss"), float)
              and abs(summary["test_loss"] - loss) <= LOSS_TOLERANCE * max(1.0, loss)):
        wrong.append(f"test loss {summary.get('test_loss')!r}, its weights give {loss!r}")
    if wrong:
        raise ValueError(f"{refuse}: its results are not its weights' ({'; '.join(wrong)})")
    if keeps_weights(cfg):
        return dict(files)
    kept = {name: data for name, data in files.items() if name != WEIGHTS}
    kept[SUMMARY] = json_bytes({**summary, "has_weights": False})
    return kept
