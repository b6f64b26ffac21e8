"""Training from the app in a child process, so the server never loads TensorFlow (over 800 MB it
would keep for the rest of its life) and a training can be stopped at any moment, compile included.

The server side, `train_in_child`, starts `python -m vitcore.app.training.child` and relays its
progress; the child trains with vitcore.run.train into the store and writes one JSON line per epoch
on a private pipe (stdout is redirected to stderr first, so nothing TensorFlow prints can be taken
for progress). Stopping kills the child: a run is stored only once complete (RunStore writes into a
`.tmp-*` folder and renames it), so a killed child stores nothing; its `.tmp-*` debris, if any, is
what `check --fix` removes. No Streamlit here.
"""

from __future__ import annotations

import collections
import json
import os
import selectors
import subprocess
import sys
import tempfile

from vitcore.config.run import RunConfig
from vitcore.run.spawn import quiet
from vitcore.store.runs import RunStore

POLL_SECONDS = 0.25  # how often the server looks at Cancel and the budget while the child trains
ERROR_TAIL = 20      # lines of the child's stderr kept for the error message
MAX_LINE = 1 << 16   # a progress line longer than this is not from the child's protocol


class ChildFailed(RuntimeError):
    """The child exited without finishing (its last stderr line says why)."""


def train_in_child(cfg: RunConfig, progress, store_path: str, seeds: int = 1) -> None:
    """Train random seeds 0..seeds-1 of cfg into the store at `store_path` in a child process.
    `progress(step, total, row)` gets each epoch (steps count over all seeds); when
    `progress.stop_reason()` (if it has one) says stop, the child is killed and the reason raised
    as vitcore.app.training.slot.Cancelled."""
    from vitcore.app.training.slot import Cancelled  # noqa: PLC0415 - slot imports Streamlit: never in the child

    read_end, write_end = os.pipe()
    command = [sys.executable, "-m", "vitcore.app.training.child", json.dumps(cfg.identity()), store_path,
               str(seeds), str(write_end)]
    with tempfile.TemporaryFile() as errors:
        child = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=errors, stderr=errors,
                                 pass_fds=(write_end,), env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "2"})
        os.close(write_end)
        stop = getattr(progress, "stop_reason", lambda: None)
        try:
            with os.fdopen(read_end, "rb") as lines, selectors.DefaultSelector() as selector:
                selector.register(lines, selectors.EVENT_READ)
                buffer = b""
                while True:
                    why = stop()
                    if why is not None:
                        raise Cancelled(why)
                    if not selector.select(POLL_SECONDS):
                        continue
                    chunk = os.read(lines.fileno(), MAX_LINE)
                    if not chunk:
                        break  # the child closed its end: finished or died
                    buffer += chunk
                    *complete, buffer = buffer.split(b"\n")
                    for line in complete:
                        message = json.loads(line)
                        progress(message["step"], message["total"], message["row"])
                    if len(buffer) > MAX_LINE:
                        raise ChildFailed("the training process wrote an unreadable progress line")
            if child.wait() != 0:
                errors.seek(0)
                tail = collections.deque(errors.read().decode(errors="replace").splitlines(), ERROR_TAIL)
                last = next((line for line in reversed(tail) if line.strip()), f"exit code {child.returncode}")
                raise ChildFailed(f"the training process failed: {last.strip().replace(store_path, '<store>')}")
        finally:
            if child.poll() is None:
                child.kill()
                child.wait()


def _main(argv: list[str]) -> int:
    identity, store_path, seeds, fd = argv
    out = os.fdopen(int(fd), "w", buffering=1)
    quiet()  # TensorFlow's native notices stay out of the error log, whose last line says why a run failed
    os.dup2(2, 1)  # anything printed goes to the error log, never into the progress pipe
    from vitcore.run.train import Trainer  # noqa: PLC0415 - TensorFlow: only in this child, after quiet()

    cfg, store, trainer = RunConfig.from_dict(json.loads(identity)), RunStore(store_path), Trainer()
    seeds = int(seeds)
    for seed in range(seeds):
        def forward(epoch, total, row, seed=seed):
            out.write(json.dumps({"step": seed * total + epoch, "total": seeds * total,
                                  "row": {**{k: float(v) for k, v in row.items()}, "seed": seed}}) + "\n")
        trainer.train(cfg.replace(seed=seed), store, forward)
    out.close()
    return 0


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1:]))
