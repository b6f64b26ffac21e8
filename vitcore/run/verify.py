"""Retrain before trust: a Ray worker's run is stored only as far as the driver has reproduced it.

vitcore.run.remote checks that a reply's results are what its weights give; it cannot tell whether those weights
are a training of the config the reply is labelled with (a real 4,000-row run relabelled as the 1,000-row config
passes it). Training is bit for bit at a thread count, so the driver retrains (`retrain`: a fresh local process at
the thread count the reply says it trained with, as quiet as a sweep worker) and compares:
- the first run each worker returns for each cell (one compiled graph: vitcore.config.run.RunConfig.graph_id);
- every run whose predictions are those of another training (another random seed or another config), exactly or
  nearly, already stored or stored this sweep (vitcore.run.copies): a copy is never a training, so it is never taken
  on the worker's word (only a retrain that reproduces it, two configs that are one computation, lets it in);
- after that, a share VERIFY_SHARE of its runs, drawn per sweep from the operating system's randomness
  (random.SystemRandom: no seed a worker could know or replay). Each draw is written to the driver's log (`LOG`
  in the store: `open_log`, `write_log`), never sent to a worker.
A worker is one task as the driver sees it (one chunk of a cell's random seeds, vitcore.run.sweep.chunks): the
driver knows which task a reply came from without asking the worker. Compared (`differences`): predictions.npy
and confusion.csv byte for byte, every history column but its wall seconds and every summary result exactly, but
the losses to LOSS_TOLERANCE (XLA on another CPU kind rounds float32's last bits). A mismatch refuses that run and
makes its worker and its node (the Ray node id its replies name) untrusted for the rest of the sweep: every
unverified run of theirs already stored is withdrawn (moved aside, removed), every later reply of theirs refused
unread (a rerun of the sweep trains them again; retraining them all here would let one node make the driver do its
work). A reply vitcore.run.remote refuses (its results not its weights', a file over its limit) counts as a failed
retrain (`forged`). The node id is the worker's word, used only to refuse more, never to trust. What stays the
worker's word: the undrawn runs of a worker never caught that copy nothing seen, and every run's timing (seconds,
threads, node).
"""

from __future__ import annotations

import csv
import datetime
import io
import json
import os
import random
import shutil
import tempfile
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context

from vitcore.config.run import RunConfig
from vitcore.data.regular import Refused, open_or_create
from vitcore.run.copies import Copies
from vitcore.run.spawn import neutral_main, worker_start
from vitcore.store.files import PREDICTIONS
from vitcore.store.runs import RunStore
from vitcore.store.validate import TEMP_PREFIX
from vitcore.store.writer import SUMMARY

VERIFY_SHARE = 0.1   # of a worker's runs after its first of a cell: retrained by the driver (1.0: every run)
LOSS_TOLERANCE = 1e-5  # relative: float32 rounding of another CPU's XLA code (as vitcore.run.sweep's backfill)
RESULTS = ("best_epoch", "best_val_accuracy", "final_train_accuracy", "final_val_accuracy", "gap", "params",
           "per_class_accuracy", "test_accuracy")  # a summary's results compared exactly; test_loss to the tolerance
LOSSES = ("loss", "val_loss", "test_loss")
LOG = "retrains.csv"  # the driver's log in its store: one row per remote run, why it was (not) retrained
LOG_COLUMNS = ["session", "at", "run_id", "label", "train_rows", "seed", "worker", "node", "draw", "share",
               "retrained", "outcome"]
Retrain = Callable[[RunConfig, int], dict]  # (config, threads) -> its run files as bytes


def _retrained(cfg: RunConfig, threads: int) -> dict[str, bytes]:
    os.environ["VITCORE_THREADS"] = str(threads)  # read when TensorFlow starts: this fresh process's first run
    from vitcore.run.train import Trainer  # noqa: PLC0415 - TensorFlow

    trainer = Trainer()
    return trainer.render(cfg, trainer.fit(cfg), True)


def retrain_locally(cfg: RunConfig, threads: int) -> dict[str, bytes]:
    """cfg's run files trained here, in a fresh process at `threads` intra-op threads (bit for bit a worker's
    training at that thread count on the same kind of CPU)."""
    return in_fresh_process(_retrained, cfg, threads)


def in_fresh_process(function: Callable, *args):
    """function(*args) in a fresh process started as a sweep's workers are (vitcore.run.spawn.worker_start: it dies
    with this process, and TensorFlow's start-up notices stay off the terminal)."""
    with ProcessPoolExecutor(max_workers=1, mp_context=get_context("spawn"),  # a fresh process per retrain
                             initializer=worker_start, initargs=(os.getpid(),)) as pool:
        with neutral_main():  # the process starts here; it must not re-run a foreign __main__ (vitcore.run.spawn)
            future = pool.submit(function, *args)
        return future.result()


def differences(reply: dict[str, bytes], retrained: dict[str, bytes]) -> list[str]:
    """What of a reply's run its retrain does not reproduce (see the module docstring); [] when all of it."""
    out = [name for name in (PREDICTIONS, "confusion.csv") if reply.get(name) != retrained.get(name)]
    ours, theirs = _rows(retrained["history.csv"]), _rows(reply.get("history.csv", b""))
    if len(ours) != len(theirs) or any(not _same(name, row[name], mine.get(name)) for row, mine in zip(theirs, ours)
                                       for name in row if name != "seconds"):
        out.append("history.csv")
    summary, fresh = json.loads(reply[SUMMARY]), json.loads(retrained[SUMMARY])
    out += [f"summary {name}" for name in (*RESULTS, "test_loss")
            if not _same(name, summary.get(name), fresh.get(name))]
    return out


def _rows(data: bytes) -> list[dict]:
    return list(csv.DictReader(io.StringIO(data.decode())))


def _same(name: str, theirs, ours) -> bool:
    if name in LOSSES and theirs is not None and ours is not None:
        theirs, ours = float(theirs), float(ours)
        return abs(theirs - ours) <= LOSS_TOLERANCE * max(1.0, abs(ours))
    return theirs == ours


def open_log(root) -> int:
    """A descriptor appending to the driver's log in the store at `root` (created with the store if missing), or
    ValueError when the entry there is not a regular file of its own (a link is never followed): before any task."""
    path = os.path.join(root, LOG)
    try:
        os.makedirs(root, exist_ok=True)
        return open_or_create(path, os.O_WRONLY | os.O_APPEND)[0]
    except Refused as refused:
        raise ValueError(f"{path} " + refused.words("cannot be appended to ({reason}; a link is never followed)",
                                                    "is {what}: never opened (only a regular file of its own is "
                                                    "appended to)", "") + "; remove it (the driver logs its retrains "
                                                                          "there)") from None
    except OSError as error:
        raise ValueError(f"{path} cannot be written ({error.strerror}): the driver logs its retrains there") from None


def write_log(fd: int, rows: list[dict], session: str) -> None:
    """Append `rows` (Verifier.log's, then emptied) to the log open at `fd`, its header first when it is new; one
    write, so a row is never split among other appends."""
    text = io.StringIO()
    writer = csv.DictWriter(text, LOG_COLUMNS, extrasaction="ignore")
    if os.fstat(fd).st_size == 0:
        writer.writeheader()
    writer.writerows({**row, "session": session} for row in rows)
    rows.clear()
    data = text.getvalue().encode()
    while data:
        data = data[os.write(fd, data):]


def _copy_words(twin: tuple[str, float] | None) -> str:
    if twin is None:
        return ""
    near = "" if twin[1] == 1 else f" on {twin[1]:.2%} of the test images"
    return f"its predictions.npy is run {twin[0]}'s{near} (a copy is never a training), and "


class Verifier:
    """One sweep's retrain-before-trust bookkeeping (see the module docstring). `refused(worker, cfg, node)` first (a
    reply of an untrusted worker or node is refused unread), `check(worker, cfg, files, node)` before a reply is
    stored: ValueError when it is refused; `stored(worker, cfg, verified, files)` after; `withdrawn` lists the runs
    taken back out of the store (their results must be reported as failures); `log` the rows for the driver's log."""

    def __init__(self, store: RunStore, retrain: Retrain | None = None, share: float = VERIFY_SHARE,
                 draw: random.Random | None = None):
        if not 0 <= share <= 1:
            raise ValueError(f"the share of runs retrained is from 0 to 1; got {share!r}")
        self.store, self.share = store, share
        self.draw = random.SystemRandom() if draw is None else draw  # the OS's randomness: nothing to replay
        self.retrain = retrain_locally if retrain is None else retrain
        self.seen: set[tuple[object, str]] = set()   # (worker, cell) whose first run was checked
        self.unverified: dict[object, list[RunConfig]] = {}  # worker -> its runs stored unverified
        self.caught: dict[object, str] = {}          # worker -> the run that made it untrusted
        self.nodes: dict[object, set[str]] = {}      # worker -> the node ids its replies named
        self.untrusted: dict[str, str] = {}          # node id -> the run that made it untrusted
        self.withdrawn: list[tuple[RunConfig, str]] = []
        self.log: list[dict] = []                    # rows for the driver's log (LOG), taken by whoever writes it
        self.verified = 0
        self.copies = Copies(store)                  # the predictions seen: the store's, then the replies stored

    def refused(self, worker, cfg: RunConfig, node: str | None = None) -> str | None:
        """Why a reply of `worker` (from `node`) is refused unread, or None."""
        culprit = self.caught.get(worker) or (self.untrusted.get(node) if node is not None else None)
        if culprit is None:
            return None
        self._note(worker, cfg, node, "", "", "refused unread: untrusted since run " + culprit)
        return (f"refusing remote run {cfg.run_id} ({cfg.label()}): its worker or its node returned run {culprit}, "
                "refused as no honest training; nothing of them is trusted for the rest of the sweep")

    def check(self, worker, cfg: RunConfig, files: dict[str, bytes], node: str | None = None) -> bool:
        """True when the run was retrained and matched, False when it is taken on the worker's word (undrawn);
        ValueError (one line, naming the run and the worker) when it is refused."""
        if (why := self.refused(worker, cfg, node)) is not None:
            raise ValueError(why)
        if node is not None:
            self.nodes.setdefault(worker, set()).add(node)
        first = (worker, cfg.graph_id) not in self.seen
        self.seen.add((worker, cfg.graph_id))
        twin, draw = self.copies.of(cfg, files.get(PREDICTIONS)), ""
        if twin is not None:
            reason = f"its predictions are run {twin[0]}'s on {twin[1]:.2%} of the test images, another training"
        elif first:
            reason = "first of its cell"
        else:
            draw = self.draw.random()
            if draw >= self.share:
                self._note(worker, cfg, node, draw, "", "not drawn: stored on the worker's word")
                return False
            reason = "drawn"
        threads = json.loads(files[SUMMARY]).get("threads")
        threads = threads if type(threads) is int and 1 <= threads <= 1024 else 1
        try:
            fresh = self.retrain(cfg, threads)
        except Exception as error:  # noqa: BLE001 - not verified, so not stored; the worker is not blamed
            self._note(worker, cfg, node, draw, reason, f"refused: no retrain here ({type(error).__name__})")
            raise ValueError(f"refusing remote run {cfg.run_id} ({cfg.label()}): the driver could not retrain it to "
                             f"verify it ({type(error).__name__}: {str(error)[:300]})") from None
        wrong = differences(files, fresh)
        if wrong:
            self._note(worker, cfg, node, draw, reason, f"refused: differs in {', '.join(wrong)}")
            self._blame(worker, cfg)
            raise ValueError(f"refusing remote run {cfg.run_id} ({cfg.label()}): {_copy_words(twin)}the driver's "
                             f"retrain at {threads} thread(s) differs in {', '.join(wrong)}; every unverified run of "
                             "its worker and its node is refused")
        self._note(worker, cfg, node, draw, reason, "reproduced")
        self.verified += 1
        return True

    def forged(self, worker, cfg: RunConfig, node: str | None, why: str) -> None:
        """A reply of `worker` the driver refused as no honest run (vitcore.run.remote: its results are not its
        weights', a file over its limit, no weights): it and its node are untrusted as after a failed retrain."""
        if node is not None:
            self.nodes.setdefault(worker, set()).add(node)
        self._note(worker, cfg, node, "", "", "refused: " + why[:200])
        self._blame(worker, cfg)

    def stored(self, worker, cfg: RunConfig, verified: bool, files: dict | None = None) -> None:
        if not verified:
            self.unverified.setdefault(worker, []).append(cfg)
        if files is not None and PREDICTIONS in files:
            self.copies.add(cfg, cfg.run_id, files[PREDICTIONS])

    def _blame(self, worker, culprit: RunConfig) -> None:
        """`worker` and every node its replies named are untrusted from now on; so is every other worker seen on those
        nodes. Their runs stored unverified are withdrawn."""
        nodes = self.nodes.get(worker, set())
        for node in nodes:
            self.untrusted.setdefault(node, culprit.run_id)
        for other in [worker, *(w for w, seen in self.nodes.items() if seen & nodes and w != worker)]:
            self.caught.setdefault(other, culprit.run_id)
            for run in self.unverified.pop(other, []):
                self._withdraw(run, culprit)

    def _note(self, worker, cfg: RunConfig, node, draw, retrained: str, outcome: str) -> None:
        self.log.append({"at": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
                         "run_id": cfg.run_id, "label": cfg.label(), "train_rows": cfg.train_rows, "seed": cfg.seed,
                         "worker": worker, "node": node or "", "draw": draw if draw == "" else f"{draw:.6f}",
                         "share": self.share, "retrained": retrained, "outcome": outcome})

    def _withdraw(self, cfg: RunConfig, culprit: RunConfig) -> None:
        """Take an unverified run back out of the store: moved aside in one rename (a reader sees it or nothing),
        then removed."""
        root = self.store.root
        if os.path.isdir(root / cfg.run_id) and not os.path.islink(root / cfg.run_id):
            aside = tempfile.mkdtemp(prefix=f"{TEMP_PREFIX}old-{cfg.run_id}-", dir=root)
            os.rename(root / cfg.run_id, os.path.join(aside, cfg.run_id))
            shutil.rmtree(aside, ignore_errors=True)
        self.withdrawn.append((cfg, f"withdrawn: an unverified run of the worker or node that returned run "
                                    f"{culprit.run_id}, refused as no honest training"))
