"""A sweep on a Ray cluster whose nodes share no disk with the driver (`sweep --executor ray`).

The driver owns the store. Each task trains one cell's chunk of configs on whichever node Ray picks
and yields each run as its files' bytes (vitcore.store.writer.render) the moment it is trained; the
driver installs them into its store (RunStore.put: the local runs' writer, same bytes, same checks)
as they arrive. No task ever sees a path of the driver's machine. So:
- a node lost mid-task loses only that task's run in flight: Ray retries the task (MAX_RETRIES, on
  another node or one that joins later), replaying it from its first config; the runs it had already
  yielded are stored and its replayed duplicates dropped, and nothing half-written ever reaches the store;
- a killed driver stops its tasks; a rerun of the sweep trains exactly the configs not yet stored;
- every run comes back with its weights, and the driver stores it only when its sizes are within limits
  (checked before anything is written) and its predictions, confusion matrix, test accuracy and loss are
  what its weights give on the official test split (vitcore.run.remote: a fabricated run is refused);
  the weights are then dropped unless the config keeps them;
- the first run of each task (one worker, one cell), every run whose predictions are another training's (a copy)
  and a share after it drawn from the OS's randomness are retrained here and compared before they are stored
  (vitcore.run.verify, each draw in the store's retrains.csv): a real run relabelled as another config or
  another random seed is refused, and its task and node are trusted no more this sweep;
- a run that fails (an error while training it, e.g. a bad config; or a task Ray gives up on: its
  node lost more than MAX_RETRIES times, its worker killed for memory past Ray's own OOM retries)
  comes back as a result with an "error" and its config; the task's other runs and the other tasks go on.
Threads: each task asks for `cpus` CPUs, the smallest live node's CPUs // workers (workers = tasks
per node), and trains with the CPUs Ray granted it; its summary's timing records those threads, the
tasks its node can run at once (as `workers`) and the node's kind, so runs from different nodes never
share a timing group (local runs' groups are unchanged: no node kind).
"""

from __future__ import annotations

import os
import platform
import re
import tempfile
from pathlib import Path

from vitcore.config.run import RunConfig
from vitcore.run import remote, verify
from vitcore.store.runs import RunStore

MAX_RETRIES = 3  # a task whose node dies (or whose worker is killed) runs again, up to this often


def node_kind() -> str:
    """This machine as a timing basis: its CPU model and logical CPU count, e.g. "AMD EPYC 7B13 x2"."""
    model = platform.processor() or platform.machine() or "unknown CPU"
    try:
        with open("/proc/cpuinfo") as info:
            model = next((line.split(":", 1)[1] for line in info if line.startswith("model name")), model)
    except OSError:
        pass
    text = "".join(char for char in " ".join(model.split()) if " " <= char <= "~")[:80]
    return f"{text or 'unknown CPU'} x{os.cpu_count() or 1}"


def markers() -> Path:
    """This node's own folder for the overlap markers of the trainings it runs (vitcore.run.overlap):
    a task never touches the driver's store, so it watches the trainings on its own node."""
    return Path(tempfile.gettempdir()) / f"vitcore-trainings-{os.getuid()}"


def task_cpus(nodes: list[dict], workers: int) -> int:
    """CPUs per task: the smallest live node's (with any CPU) // workers, at least 1. A cluster with no
    CPU yet (an autoscaler's) gets 1-CPU tasks, which make it start nodes."""
    sizes = [int(node["Resources"].get("CPU", 0)) for node in nodes if node.get("Alive")]
    sizes = [size for size in sizes if size >= 1]
    return max(1, min(sizes) // workers) if sizes else 1


_TRAINER = None  # one per Ray worker process: its compiled cells survive from task to task (train.CELLS)


def _trainer(threads: int, workers: int, session: str):
    global _TRAINER
    os.environ["VITCORE_THREADS"] = str(threads)  # read when TensorFlow starts: this process's first run
    if _TRAINER is None:
        from vitcore.run.train import Trainer  # noqa: PLC0415 - TensorFlow, in the Ray worker only

        _TRAINER = Trainer()
    _TRAINER.workers, _TRAINER.session, _TRAINER.node = workers, session, node_kind()
    return _TRAINER


def train_chunk(configs: list[RunConfig], session: str):
    """A Ray task (a generator): train each config with the CPUs Ray granted, yield {"run_id", "files"}
    (or {"run_id", "error"}) per config, in order."""
    import ray  # noqa: PLC0415 - Ray (optional: requirements-dev.txt)

    context = ray.get_runtime_context()
    threads = max(1, int(context.get_assigned_resources().get("CPU", 1)))
    node_cpus = next((int(node["Resources"].get("CPU", threads)) for node in ray.nodes()
                      if node["NodeID"] == context.get_node_id()), threads)
    trainer = _trainer(threads, max(1, node_cpus // threads), session)
    node = context.get_node_id()  # the node's word, used by the driver only to distrust more (vitcore.run.verify)
    for cfg in configs:
        try:
            # Always with its weights: the driver recomputes the run from them (vitcore.run.remote), then drops
            # them unless the config keeps weights.
            yield {"run_id": cfg.run_id, "node": node,
                   "files": trainer.render(cfg, trainer.fit(cfg, markers=markers()), True)}
        except Exception as error:  # noqa: BLE001 - this run failed (reported with its config); the next may not
            yield {"run_id": cfg.run_id, "error": f"{type(error).__name__}: {error}"}


def failure(cfg: RunConfig, error: str) -> dict:
    """The result of a run that could not be trained or stored: its config and why."""
    return {"run_id": cfg.run_id, "label": cfg.label(), "train_rows": cfg.train_rows, "seed": cfg.seed,
            "config": cfg.identity(), "error": error}


def store_result(cfg: RunConfig, item: dict, store: RunStore, verifier: verify.Verifier | None = None,
                 worker: object = None) -> dict:
    """Install one task's run into the driver's store once its sizes are checked, its results recomputed from its
    weights (vitcore.run.remote.checked_reply) and, for the runs `verifier` picks, the run retrained here and
    compared (vitcore.run.verify; None: a verifier of its own, which retrains this run); its headline result, or a
    failure. `worker`: the task the reply came from (the driver's own knowledge, never the reply's word)."""
    if not isinstance(item, dict) or item.get("run_id") != cfg.run_id:
        returned = "run " + repr(item.get("run_id")) if isinstance(item, dict) else "no run"
        return failure(cfg, f"the task returned {returned} for it")
    if "error" in item:
        return failure(cfg, str(item["error"])[:2000])
    verifier = verify.Verifier(store) if verifier is None else verifier
    node = item.get("node")  # a Ray node id (hex) as the worker says; anything else is no node (and never logged)
    node = node if isinstance(node, str) and re.fullmatch(r"[0-9a-f]{1,128}", node) else None
    if (untrusted := verifier.refused(worker, cfg, node)) is not None:  # unread: before the recomputation
        return failure(cfg, untrusted)
    try:
        files = remote.checked_reply(cfg, item.get("files"))
    except (KeyError, ValueError) as error:
        if remote.driver_problem() is None:  # the driver could check it: the reply is at fault, not the driver
            verifier.forged(worker, cfg, node, str(error))
        return failure(cfg, str(error))
    try:
        verified = verifier.check(worker, cfg, item["files"], node)
        run = store.put(cfg, files)
    except (KeyError, ValueError) as error:
        return failure(cfg, str(error))
    verifier.stored(worker, cfg, verified, item["files"])
    return {"run_id": run.run_id, "label": cfg.label(), "train_rows": cfg.train_rows, "seed": cfg.seed,
            "test_accuracy": run.summary["test_accuracy"], "seconds": run.summary["seconds"], "verified": verified}


def connect(address: str | None):
    """ray.init for a driver; a refused connection becomes a ValueError saying what to check."""
    try:
        import ray  # noqa: PLC0415 - Ray (optional: requirements-dev.txt)
    except ImportError:
        raise ValueError("--executor ray needs Ray: pip install -r requirements-dev.txt") from None
    try:
        ray.init(address=address, ignore_reinit_error=True, include_dashboard=False, log_to_driver=False)
    except (ConnectionError, ray.exceptions.AuthenticationError) as error:
        raise ValueError(f"cannot join the Ray cluster at {address or 'this machine'}: {error}. A cluster "
                         "started with token authentication needs RAY_AUTH_MODE=token and its token in "
                         "RAY_AUTH_TOKEN or ~/.ray/auth_token (docs/ray-cluster.md)") from None
    except (TimeoutError, ray.exceptions.RpcError) as error:  # "Timed out while waiting for GCS to become available"
        raise ValueError(f"cannot join the Ray cluster at {address or 'this machine'}: its GCS did not answer in time "
                         f"({str(error).splitlines()[0][:300] if str(error) else type(error).__name__}). Check the "
                         "address; a busy head answers later: RAY_gcs_rpc_server_connect_timeout_s and "
                         "RAY_py_gcs_connect_timeout_s give it longer (docs/ray-cluster.md)") from None
    return ray


def run(tasks: list[list[RunConfig]], store: RunStore, address: str | None, workers: int, progress,
        session: str, verify_share: float = verify.VERIFY_SHARE) -> list[dict]:
    """Train every chunk on the cluster at `address` (None: a local Ray instance) into `store`;
    returns one result per config (failures carry "error"), reported to `progress` as each lands (a run
    withdrawn later, its worker caught by a retrain: reported again, as a failure)."""
    if (problem := remote.driver_problem()) is not None:  # before any task is started
        raise ValueError(problem)
    log = verify.open_log(store.root)  # the driver's record of its draws (refused now, before any task starts)
    try:
        return _run(tasks, store, connect(address), workers, progress, session, verify_share, log)
    finally:
        os.close(log)


def _run(tasks, store: RunStore, ray, workers: int, progress, session: str, verify_share: float, log: int) -> list:
    task = ray.remote(num_cpus=task_cpus(ray.nodes(), workers), max_retries=MAX_RETRIES)(train_chunk)
    streams = [[task.remote(chunk, session), list(chunk)] for chunk in tasks]  # [generator, configs to come]
    workers_of = {id(stream): number for number, stream in enumerate(streams)}  # a worker: one task (verify)
    verifier, results = verify.Verifier(store, share=verify_share), []
    while streams:
        ready, _ = ray.wait([generator for generator, _ in streams], num_returns=1)
        stream = next(stream for stream in streams if stream[0] is ready[0] or stream[0] == ready[0])
        generator, todo = stream
        try:
            item = ray.get(next(generator))
        except StopIteration:
            streams.remove(stream)
            continue
        except ray.exceptions.RayError as error:  # the task itself failed past its retries: its runs to come fail
            landed = [failure(cfg, f"{type(error).__name__}: {str(error).splitlines()[0]}") for cfg in todo]
            streams.remove(stream)
        else:
            landed = [store_result(todo.pop(0), item, store, verifier, workers_of[id(stream)])] if todo else []
            verify.write_log(log, verifier.log, session)
        while verifier.withdrawn:  # a worker caught: its unverified runs, reported stored, were taken back out
            cfg, why = verifier.withdrawn.pop(0)
            results = [result for result in results if result["run_id"] != cfg.run_id]
            landed.append(failure(cfg, why))
        for result in landed:
            results.append(result)
            if progress:
                progress(result)
    return results
