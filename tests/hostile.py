"""Hostile variants of every file of a run and of `.index.json`: files crafted to make a
reader recurse, allocate, hang, overflow or leave the run folder. Each is a function of a run folder
with the words `check` must say; tests/test_fuzz.py applies them all to one copy of cached_runs/.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
from hostile_weights import HOSTILE_WEIGHTS

GIB = 1 << 30
def nested(levels: int) -> str:
    """A JSON value `levels` deep (Python's stack allows about 1,000), 2 bytes a level."""
    return "[" * levels + "]" * levels


NESTED = nested(7_000)  # 14 KB: within every file's size limit, so the parser itself must cope


def sparse(path: Path, size: int = 2 * GIB) -> None:
    """Replace a file by a sparse one of `size` bytes (no disk used): what a reader that trusts the
    file's length would read in full."""
    path.unlink()
    with open(path, "wb") as out:
        out.truncate(size)


def fifo(path: Path) -> None:
    path.unlink()
    os.mkfifo(path)


def link_out(path: Path) -> None:
    """A symbolic link to a valid copy of the file outside the run folder."""
    outside = path.parent.parent.parent / f"outside-{path.parent.name}-{path.name}"
    outside.write_bytes(path.read_bytes())
    path.unlink()
    os.symlink(outside, path)


def summary(path: Path, raw: str | None = None, **changes) -> None:
    """Change fields of summary.json; `raw`: JSON text spliced in for the first changed key."""
    data = json.loads((path / "summary.json").read_text())
    data.update(changes)
    text = json.dumps(data)
    if raw is not None:
        key = next(iter(changes))
        text = text.replace(f'"{key}": {json.dumps(changes[key])}', f'"{key}": {raw}')
    (path / "summary.json").write_text(text)


def history_cell(path: Path, column: str, value: str) -> None:
    lines = (path / "history.csv").read_text().splitlines()
    index = lines[0].split(",").index(column)
    cells = lines[2].split(",")
    cells[index] = value
    lines[2] = ",".join(cells)
    (path / "history.csv").write_text("\n".join(lines) + "\n")


def npy_header_claiming(path: Path, rows: int) -> None:
    """A predictions.npy whose header claims `rows` uint8 values (np.load allocates them) and holds 10,000."""
    header = {"descr": "|u1", "fortran_order": False, "shape": (rows,)}
    with open(path / "predictions.npy", "wb") as out:
        np.lib.format.write_array_header_1_0(out, header)
        out.write(np.zeros(10_000, np.uint8).tobytes())


def h5_claiming(path: Path, values: int) -> None:
    """A small HDF5 file (a few KB) with a float32 dataset declared `values` long, never written:
    reading it allocates values x 4 bytes (before: a 373 KB file drove the Attention page to 3.8 GB)."""
    import h5py

    target = path / "model.weights.h5"
    target.unlink()
    with h5py.File(target, "w") as file:
        file.create_dataset("layers/dense/vars/0", shape=(values,), dtype="float32", chunks=(1 << 16,))


def permuted_predictions(path: Path) -> None:
    """predictions.npy shuffled: the same class counts (confusion.csv's column sums), other images. Before
    one judgement of them, `check` named it and the pages used it, or not, depending on who wrote .index.json last."""
    values = np.load(path / "predictions.npy")
    np.save(path / "predictions.npy", np.random.default_rng(0).permutation(values))


def confusion_cell(path: Path, value: str) -> None:
    lines = (path / "confusion.csv").read_text().splitlines()
    cells = lines[0].split(",")
    cells[0] = value
    lines[0] = ",".join(cells)
    (path / "confusion.csv").write_text("\n".join(lines) + "\n")


def nested_json(name: str):
    return lambda p: (p / name).write_text('{"schema": ' + NESTED + "}")


# name -> (needs weights: False, True or a predicate of the run folder, damage(run folder), words `check` says)
HOSTILE = {
    "summary nested": (False, nested_json("summary.json"), "summary.json"),
    "summary sparse 2 GB": (False, lambda p: sparse(p / "summary.json"), "summary.json is 2,147,483,648 bytes, over"),
    "summary 1 MB field": (False, lambda p: summary(p, note="x" * (1 << 20)), "summary.json is 1,0"),
    "summary config a list": (False, lambda p: summary(p, config=[1, 2]), "bad config in summary.json"),
    "summary params off": (False, lambda p: summary(p, params=64_764), "params 64764 (the config's model has"),
    "summary seconds 1e300": (False, lambda p: summary(p, seconds=1e300), "seconds 1e+300"),
    "summary seconds 20 digits": (False, lambda p: summary(p, seconds=10 ** 20), "seconds 100000000000000000000"),
    "summary 5000-digit number": (False, lambda p: summary(p, raw="9" * 5000, seconds=1), "summary.json unreadable"),
    "summary test_loss 1e308": (False, lambda p: summary(p, test_loss=1e308), "test_loss 1e+308"),
    "summary fifo": (False, lambda p: fifo(p / "summary.json"), "summary.json is not a plain file"),
    "summary symlink": (False, lambda p: link_out(p / "summary.json"), "summary.json is a symbolic link"),
    "config nested": (False, nested_json("config.json"), "config.json"),
    "config sparse 2 GB": (False, lambda p: sparse(p / "config.json"), "config.json is 2,147,483,648 bytes"),
    "config a list": (False, lambda p: (p / "config.json").write_text("[1, 2, 3]"), "config.json is not a JSON object"),
    "config fifo": (False, lambda p: fifo(p / "config.json"), "config.json is not a plain file"),
    "history sparse 200 MB": (False, lambda p: sparse(p / "history.csv", 200 << 20),
                              "history.csv is 209,715,200 bytes"),
    "history lr 1e308": (False, lambda p: history_cell(p, "lr", "1e308"), "history.csv: lr outside"),
    "history seconds 1e308": (False, lambda p: history_cell(p, "seconds", "1e308"), "history.csv: seconds outside"),
    "history loss 1e308": (False, lambda p: history_cell(p, "loss", "1e308"), "history.csv: loss outside"),
    "history symlink": (False, lambda p: link_out(p / "history.csv"), "history.csv is a symbolic link"),
    "history fifo": (False, lambda p: fifo(p / "history.csv"), "history.csv is not a plain file"),
    "confusion 20 digits": (False, lambda p: confusion_cell(p, "9" * 20), "confusion.csv: counts above"),
    "confusion sparse 2 GB": (False, lambda p: sparse(p / "confusion.csv"), "confusion.csv is 2,147,483,648 bytes"),
    "confusion fifo": (False, lambda p: fifo(p / "confusion.csv"), "confusion.csv is not a plain file"),
    "predictions header 10^12 rows": (False, lambda p: npy_header_claiming(p, 10 ** 12), "predictions.npy: must be"),
    "predictions sparse 2 GB": (False, lambda p: sparse(p / "predictions.npy"), "predictions.npy is 2,147,483,648"),
    "predictions int8": (False, lambda p: np.save(p / "predictions.npy", np.zeros(10_000, np.int8)),
                         "predictions.npy: must be"),
    "predictions fifo": (False, lambda p: fifo(p / "predictions.npy"), "predictions.npy is not a plain file"),
    "predictions symlink": (False, lambda p: link_out(p / "predictions.npy"), "predictions.npy is a symbolic link"),
    "predictions permuted": (False, permuted_predictions, "with the official test labels it gives another confusion"),
    "weights claiming 10^9 values": (True, lambda p: h5_claiming(p, 10 ** 9), "model.weights.h5: 1,000,000,000 values"),
    "weights sparse 2 GB": (True, lambda p: sparse(p / "model.weights.h5"), "model.weights.h5 is 2,147,483,648"),
    "weights fifo": (True, lambda p: fifo(p / "model.weights.h5"), "model.weights.h5 is not a plain file"),
    "weights symlink": (True, lambda p: link_out(p / "model.weights.h5"), "model.weights.h5 is a symbolic link"),
}
HOSTILE.update(HOSTILE_WEIGHTS)  # needs a weighted run (True), or one this predicate accepts
if os.geteuid() != 0:  # root reads a file whatever its mode
    HOSTILE["summary unreadable"] = (False, lambda p: (p / "summary.json").chmod(0), "summary.json unreadable")


# .index.json -> (damage(store), words `check` says about it); a link, FIFO or device there is never opened nor
# replaced, so not rebuilt either (tests/test_store_paths.py)
HOSTILE_INDEX = {
    "nested": (lambda s: _index_body(s, NESTED), "checksum mismatch"),
    "nested header": (lambda s: (s / ".index.json").write_text(NESTED + "\n{}"), "unreadable"),
    "sparse 2 GB": (lambda s: sparse(s / ".index.json"), "bytes, over its limit"),
    "wrong types": (lambda s: _index_entries(s, lambda verdict: 7), "entries of the wrong shape"),
    "string reason list": (lambda s: _index_entries(s, lambda verdict: [verdict[0], ["row", 0.5]]),
                           "entries of the wrong shape"),
}


def _index_body(store: Path, body: str) -> None:
    """Keep the index's header (its versions and checksum), replace what it signs."""
    header = (store / ".index.json").read_bytes().split(b"\n", 1)[0]
    (store / ".index.json").write_bytes(header + b"\n" + body.encode())


def _index_entries(store: Path, edit) -> None:
    """Rewrite every entry of a well-signed index (so only the entries' shape is wrong)."""
    from vitcore.store import index

    entries = sum(1 for entry in store.iterdir() if len(entry.name) == 12)
    verdicts, _ = index.read(store, entries)
    index.write(store, {run_id: edit(verdict) for run_id, verdict in verdicts.items()})
