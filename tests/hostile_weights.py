"""Hostile weights files: each passed `check` before (float32, exact parameter count) and
made the Attention page hang, fail or show wrong numbers. Each is an in-place edit of a run's
model.weights.h5 (h5py, mode r+); tests/hostile.py adds them to HOSTILE."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import h5py
import numpy as np

WEIGHTS = "model.weights.h5"


def variable(file: h5py.File, layer: str, index: int) -> str:
    """The path of variable `index` of the layer Keras named `layer` (e.g. classifier -> layers/dense_5/vars/1)."""
    found = []
    file.visititems(lambda name, item: found.append(name) if isinstance(item, h5py.Group) and name.endswith("/vars")
                    and item.attrs.get("name") == layer else None)
    return f"{found[0]}/{index}"


def edit(run: Path, layer: str, index: int, change) -> None:
    """Replace one variable by change(file, its path, its values) (which creates the new object)."""
    with h5py.File(run / WEIGHTS, "r+") as file:
        path = variable(file, layer, index)
        values = file[path][()]
        del file[path]
        change(file, path, values)


def outside(run: Path, name: str) -> Path:
    return run.parent.parent / f"{name}-{run.name}"


def external_fifo(run: Path) -> None:
    """The classifier's bias stored in an HDF5 external file that is a FIFO: a reader blocks forever."""
    fifo = outside(run, "fifo")
    os.mkfifo(fifo)
    edit(run, "classifier", 1, lambda f, p,
         v: f.create_dataset(p, shape=v.shape, dtype="f4", external=[(str(fifo), 0, v.nbytes)]))


def external_zero(run: Path) -> None:
    """The classifier's bias read from /dev/zero (external storage): wrong numbers, no warning."""
    edit(run, "classifier", 1, lambda f, p, v: f.create_dataset(p, shape=v.shape, dtype="f4",
                                                                 external=[("/dev/zero", 0, v.nbytes)]))


def soft_link(run: Path) -> None:
    """block1_mlp_out's bias a soft link to the final norm's beta (same shape)."""
    def change(file, path, values):
        file[path] = h5py.SoftLink("/" + variable(file, "final_norm", 1))
    edit(run, "block1_mlp_out", 1, change)


def external_link(run: Path) -> None:
    other = outside(run, "linked.h5")
    with h5py.File(other, "w") as file:
        file["bias"] = np.zeros(10, np.float32)
    edit(run, "classifier", 1, lambda f, p, v: f.__setitem__(p, h5py.ExternalLink(str(other), "bias")))


def virtual(run: Path) -> None:
    """The classifier's bias a virtual dataset mapping another file's array."""
    other = outside(run, "source.h5")
    with h5py.File(other, "w") as file:
        file["bias"] = np.zeros(10, np.float32)

    def change(file, path, values):
        layout = h5py.VirtualLayout(shape=values.shape, dtype="f4")
        layout[:] = h5py.VirtualSource(str(other), "bias", shape=values.shape)
        file.create_virtual_dataset(path, layout)
    edit(run, "classifier", 1, change)


def filtered(run: Path) -> None:
    """The classifier's kernel through HDF5's lossy scale-offset filter (built in, but not gzip/shuffle/lzf)."""
    edit(run, "classifier", 0, lambda f, p, v: f.create_dataset(p, data=v, scaleoffset=2, chunks=v.shape))


def reshaped(layer: str, index: int, shape) -> callable:
    return lambda run: edit(run, layer, index, lambda f, p, v: f.create_dataset(p, data=v.reshape(shape(v))))


def renamed(run: Path) -> None:
    with h5py.File(run / WEIGHTS, "r+") as file:
        file[variable(file, "classifier", 0).rsplit("/", 1)[0]].attrs["name"] = "head"


def poisoned(layer: str, index: int, value: float) -> callable:
    def change(file, path, values):
        values = values.copy()
        values.flat[0] = value
        file.create_dataset(path, data=values)
    return lambda run: edit(run, layer, index, change)


def counterpart(run: Path, **changes) -> Path | None:
    """The folder of the stored run whose config is run's with these changes, if it kept weights."""
    from vitcore.config.run import RunConfig

    config = RunConfig.from_dict(json.loads((run / "summary.json").read_text())["config"]).replace(**changes)
    other = run.parent / config.run_id
    return other if (other / WEIGHTS).exists() else None


def is_pre_ln_with_post_twin(run: Path) -> bool:
    summary = json.loads((run / "summary.json").read_text())
    return summary["config"].get("model", "vit") == "vit" and summary["config"].get("norm_placement", "pre") == "pre" \
        and counterpart(run, norm_placement="post") is not None


def post_ln_weights(run: Path) -> None:
    """The weights of the post-LN run of the same config: the same layers and shapes, another model."""
    shutil.copyfile(counterpart(run, norm_placement="post") / WEIGHTS, run / WEIGHTS)


def is_vit(run: Path) -> bool:
    return json.loads((run / "summary.json").read_text())["config"].get("model", "vit") == "vit"


# name -> (which weighted run it needs, damage(run folder), words `check` says about it)
HOSTILE_WEIGHTS = {
    "weights external FIFO": (True, external_fifo, "is stored outside the file"),
    "weights external /dev/zero": (True, external_zero, "is stored outside the file"),
    "weights soft link": (is_vit, soft_link, "is a soft or external link"),
    "weights external link": (True, external_link, "is a soft or external link"),
    "weights virtual dataset": (True, virtual, "is stored outside the file"),
    "weights scale-offset filter": (True, filtered, "needs HDF5 filters"),
    "weights transposed patch projection": (is_vit, reshaped("patch_projection", 0, lambda v: v.T.shape),
                                            "patch_projection is [("),
    "weights flattened classifier kernel": (True, reshaped("classifier", 0, lambda v: (v.size,)), "classifier is [("),
    "weights renamed layer": (True, renamed, "they lack layers ['classifier']"),
    "weights NaN classifier": (True, poisoned("classifier", 0, np.nan), "are not finite"),
    "weights inf bias": (True, poisoned("classifier", 1, np.inf), "are not finite"),
    "weights post-LN in a pre-LN run": (is_pre_ln_with_post_twin, post_ln_weights,
                                        "predicts other classes than predictions.npy"),
}
