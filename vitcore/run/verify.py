"""Retrain before trust: a Ray worker's run is stored only as far as the driver has reproduced it.

vitcore.run.remote checks that a reply's results are what its weights give; it cannot tell whether those weights
are a training of the config the reply is labelled with (a real 4,000-row run relabelled as the 1,000-row config
passes it). Training is bit for bit at a thread count, so the driver retrains (`retrain`: a fresh local process at
the thread count the reply says it trained with) and compares:
- the first run each worker returns for each cell (one compiled graph: vitcore.config.run.RunConfig.graph_id), and
- after that, a share VERIFY_SHARE of its runs, drawn by a generator seeded with VERIFY_SEED (so a sweep's choice
  is reproducible; a worker cannot know which of its runs will be retrained).
A worker is one task as the driver sees it (one chunk of a cell's random seeds, vitcore.run.sweep.chunks): the
driver knows which task a reply came from without asking the worker. Compared (`differences`): predictions.npy
and confusion.csv byte for byte, every history column but its wall seconds and every summary result exactly, but
the losses to LOSS_TOLERANCE (XLA on another CPU kind rounds float32's last bits). A mismatch refuses that run and
every run of that worker not verified: those already stored are withdrawn from the store (moved aside, removed),
the ones to come refused unread. What stays the worker's word: the unsampled runs of a worker never caught, and
every run's timing (seconds, threads, node kind).
"""

from __future__ import annotations

import csv
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
from vitcore.run.spawn import die_with_parent, neutral_main
from vitcore.store.files import PREDICTIONS
from vitcore.store.runs import RunStore
from vitcore.store.validate import TEMP_PREFIX
from vitcore.store.writer import SUMMARY

VERIFY_SHARE = 0.1   # of a worker's runs after its first of a cell: retrained by the driver (1.0: every run)
VERIFY_SEED = 50     # the generator that draws them: a sweep's choice is reproducible
LOSS_TOLERANCE = 1e-5  # relative: float32 rounding of another CPU's XLA code (as vitcore.run.sweep's backfill)
RESULTS = ("best_epoch", "best_val_accuracy", "final_train_accuracy", "final_val_accuracy", "gap", "params",
           "per_class_accuracy", "test_accuracy")  # a summary's results compared exactly; test_loss to the tolerance
LOSSES = ("loss", "val_loss", "test_loss")
Retrain = Callable[[RunConfig, int], dict]  # (config, threads) -> its run files as bytes


def _retrained(cfg: RunConfig, threads: int) -> dict[str, bytes]:
    os.environ["VITCORE_THREADS"] = str(threads)  # read when TensorFlow starts: this fresh process's first run
    from vitcore.run.train import Trainer

    trainer = Trainer()
    return trainer.render(cfg, trainer.fit(cfg), True)


def retrain_locally(cfg: RunConfig, threads: int) -> dict[str, bytes]:
    """cfg's run files trained here, in a fresh process at `threads` intra-op threads (bit for bit a worker's
    training at that thread count on the same kind of CPU)."""
    with ProcessPoolExecutor(max_workers=1, mp_context=get_context("spawn"),  # a fresh process per retrain
                             initializer=die_with_parent, initargs=(os.getpid(),)) as pool:
        with neutral_main():  # the process starts here; it must not re-run a foreign __main__ (vitcore.run.spawn)
            future = pool.submit(_retrained, cfg, threads)
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


class Verifier:
    """One sweep's retrain-before-trust bookkeeping (see the module docstring). `check(worker, cfg, files)` before a
    reply is stored: ValueError when it is refused; `stored(worker, cfg)` after; `withdrawn` lists the run ids taken
    back out of the store (their results must be reported as failures)."""

    def __init__(self, store: RunStore, retrain: Retrain | None = None, share: float = VERIFY_SHARE,
                 seed: int = VERIFY_SEED):
        if not 0 <= share <= 1:
            raise ValueError(f"the share of runs retrained is from 0 to 1; got {share!r}")
        self.store, self.share, self.draw = store, share, random.Random(seed)
        self.retrain = retrain_locally if retrain is None else retrain
        self.seen: set[tuple[object, str]] = set()   # (worker, cell) whose first run was checked
        self.unverified: dict[object, list[RunConfig]] = {}  # worker -> its runs stored unverified
        self.caught: dict[object, str] = {}          # worker -> the run its retrain did not reproduce
        self.withdrawn: list[tuple[RunConfig, str]] = []
        self.verified = 0

    def check(self, worker, cfg: RunConfig, files: dict[str, bytes]) -> bool:
        """True when the run was retrained and matched, False when it is taken on the worker's word (unsampled);
        ValueError (one line, naming the run and the worker) when it is refused."""
        if worker in self.caught:
            raise ValueError(f"refusing remote run {cfg.run_id} ({cfg.label()}): its worker returned run "
                             f"{self.caught[worker]}, which a retrain does not reproduce; nothing of it is trusted")
        first = (worker, cfg.graph_id) not in self.seen
        self.seen.add((worker, cfg.graph_id))
        if not (first or self.draw.random() < self.share):
            return False
        threads = json.loads(files[SUMMARY]).get("threads")
        threads = threads if type(threads) is int and 1 <= threads <= 1024 else 1
        try:
            fresh = self.retrain(cfg, threads)
        except Exception as error:  # noqa: BLE001 - not verified, so not stored; the worker is not blamed
            raise ValueError(f"refusing remote run {cfg.run_id} ({cfg.label()}): the driver could not retrain it to "
                             f"verify it ({type(error).__name__}: {str(error)[:300]})") from None
        wrong = differences(files, fresh)
        if wrong:
            self.caught[worker] = cfg.run_id
            for run in self.unverified.pop(worker, []):
                self._withdraw(run, cfg)
            raise ValueError(f"refusing remote run {cfg.run_id} ({cfg.label()}): the driver's retrain at {threads} "
                             f"thread(s) differs in {', '.join(wrong)}; every unverified run of its worker is refused")
        self.verified += 1
        return True

    def stored(self, worker, cfg: RunConfig, verified: bool) -> None:
        if not verified:
            self.unverified.setdefault(worker, []).append(cfg)

    def _withdraw(self, cfg: RunConfig, culprit: RunConfig) -> None:
        """Take an unverified run back out of the store: moved aside in one rename (a reader sees it or nothing),
        then removed."""
        root = self.store.root
        if os.path.isdir(root / cfg.run_id) and not os.path.islink(root / cfg.run_id):
            aside = tempfile.mkdtemp(prefix=f"{TEMP_PREFIX}old-{cfg.run_id}-", dir=root)
            os.rename(root / cfg.run_id, os.path.join(aside, cfg.run_id))
            shutil.rmtree(aside, ignore_errors=True)
        self.withdrawn.append((cfg, f"withdrawn: an unverified run of the worker that returned run {culprit.run_id}, "
                                    "which a retrain does not reproduce"))
