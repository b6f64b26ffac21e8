"""A two-node Ray cluster on this machine whose worker node cannot see the driver's disk (tests only).

Head on 127.0.0.1 with 0 CPUs (nothing trains beside the driver); one worker node with 2 CPUs started
inside its own mount namespace (`unshare --mount`, root only) where `hidden` (the folder holding the
driver's stores) is an empty tmpfs: like a cloud worker, it shares no disk with the driver. Token
authentication on (RAY_AUTH_MODE=token, a fresh token in RAY_AUTH_TOKEN). Each node runs `ray start
--block` in a session of its own, with its own --temp-dir and ports, so another `ray.init()` on this
machine never finds it, and teardown kills exactly the processes of those sessions (never `ray stop`,
which would stop every Ray on the machine).

Waiting on a loaded machine (two cores shared with other work): nothing waits a fixed time. Every wait
(`Progress`) polls for its next observable step and gives up only after IDLE seconds in which nothing moved
(a line from the driver, an entry of its store appearing or going, a node's start-up log growing, or the driver's
and the node's task processes spending CPU), or after CAP seconds in all. Ray's own time limits for reaching
the GCS are raised for every process of the cluster (RAY_ENV: Ray's config options, read from RAY_<name>), and
the driver retries `ray.init` while the GCS does not answer.
"""

from __future__ import annotations

import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from conftest import tool

ROOT = Path(__file__).resolve().parents[1]
WORKER_CPUS = 2
STARTED = "Ray runtime started"
IDLE = 300     # seconds a wait goes on with no observable step (an epoch of a tiny run takes seconds, even loaded)
CAP = 1800     # seconds a wait may take in all, whatever moves
WINDOW = 30    # seconds over which CPU spent counts as a step ...
BUSY = 5.0     # ... when the watched processes spent this many CPU-seconds in it (idle Ray workers spend far less)
POLL = 0.2
# Ray's limits on reaching the GCS (defaults 5 s to connect, 30-60 s to answer), for every process of the cluster:
# a GCS slowed by a loaded machine is waited for instead of failing the start-up ("GCS TimedOut").
RAY_ENV = {"RAY_gcs_rpc_server_connect_timeout_s": "60", "RAY_py_gcs_connect_timeout_s": "300",
           "RAY_gcs_server_request_timeout_seconds": "300", "RAY_gcs_rpc_server_reconnect_timeout_s": "300"}
# The driver: joins the cluster (retrying while the GCS does not answer), waits until the worker node's CPUs are in
# it, then sweeps; prints "result <JSON>" per result. The harness bounds it (Progress): no deadline of its own.
DRIVER = """
import json, sys, time
import ray
from vitcore.config.run import RunConfig
from vitcore.run.sweep import run_sweep
from vitcore.store.runs import RunStore
address, store, configs = sys.argv[1], sys.argv[2], [RunConfig.from_dict(c) for c in json.loads(sys.argv[3])]
for attempt in range(10):
    try:
        ray.init(address=address, include_dashboard=False, log_to_driver=False)
        break
    except Exception as error:  # a GCS too slow to answer on a loaded machine: try again
        print(f"ray.init attempt {attempt + 1}: {type(error).__name__}: {error}", file=sys.stderr, flush=True)
        ray.shutdown()
        time.sleep(2 + attempt)
else:
    sys.exit("could not join the cluster")
while ray.cluster_resources().get("CPU", 0) < {cpus}:
    time.sleep(0.5)
results = run_sweep(configs, RunStore(store), workers=1, executor="ray", address=address,
                    progress=lambda result: print("result", json.dumps(result), flush=True))
print("done", len(results), flush=True)
""".replace("{cpus}", str(WORKER_CPUS))


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def session_pids(sid: int) -> list[int]:
    """Every process in session `sid` (what `ray start --block` and its Ray processes run in)."""
    pids = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as stat:
                    fields = stat.read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[3]) == sid:  # field 6 of stat: the session id
                pids.append(int(entry))
    return pids


def cpu_seconds(pids) -> float:
    """CPU time (user + system) the processes `pids` have spent so far; those gone count 0."""
    total = 0
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat") as stat:
                fields = stat.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += int(fields[11]) + int(fields[12])  # utime, stime (fields 14 and 15 of stat)
    return total / os.sysconf("SC_CLK_TCK")


def task_pids(sid: int) -> list[int]:
    """The Ray worker processes (titled "ray::...": the ones that run tasks) of session `sid`."""
    pids = []
    for pid in session_pids(sid):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as cmdline:
                if cmdline.read().startswith(b"ray::"):
                    pids.append(pid)
        except OSError:
            continue
    return pids


class Progress:
    """A wait that lasts while something moves (see the module docstring). `step(*observed)` at each poll, with
    whatever can be seen (lines read, a listing, a log's size...): a change is a step; so is BUSY CPU-seconds spent
    by `pids()` within WINDOW seconds. It fails (AssertionError with `what` and `tail()`) after IDLE seconds without
    a step or CAP in all."""

    def __init__(self, what: str, pids=lambda: [], tail=lambda: ""):
        self.what, self.pids, self.tail = what, pids, tail
        self.start = self.last = self.window = time.monotonic()
        self.seen, self.cpu, self.steps = None, cpu_seconds(pids()), 0

    def step(self, *observed) -> None:
        now = time.monotonic()
        if observed != self.seen:
            self.seen, self.last, self.steps = observed, now, self.steps + 1
        if now - self.window >= WINDOW:
            cpu = cpu_seconds(self.pids())
            if cpu - self.cpu >= BUSY:
                self.last, self.steps = now, self.steps + 1
            self.cpu, self.window = cpu, now
        waited, idle = now - self.start, now - self.last
        assert idle < IDLE and waited < CAP, (f"{self.what}: nothing moved for {idle:.0f} s (waited {waited:.0f} s, "
                                              f"{self.steps} steps seen)\n{self.tail()}")
        time.sleep(POLL)


def kill_session(process: subprocess.Popen | None) -> None:
    """SIGKILL a node: every process of the session it leads (a lost machine, not a clean stop)."""
    if process is None:
        return
    for pid in session_pids(process.pid):
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    process.wait(timeout=300)  # SIGKILLed: reaped at once, unless the machine is very busy


def _read_lines(process: subprocess.Popen) -> None:
    for line in process.stdout:
        process.lines.append(line)


class TwoNodeCluster:
    def __init__(self, hidden: Path):
        self.ray = tool("ray")  # beside the interpreter, else on PATH, else the test is skipped saying so
        self.hidden = hidden
        self.temp = Path(tempfile.mkdtemp(prefix="vr", dir="/tmp"))  # short: Ray's socket paths must fit 107 bytes
        self.port = free_port()
        self.address = f"127.0.0.1:{self.port}"
        self.env = {**os.environ, "RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN": secrets.token_hex(32),
                    "PYTHONPATH": str(ROOT), "RAY_USAGE_STATS_ENABLED": "0", **RAY_ENV,
                    "VITCORE_XLA_CACHE": "off"}  # the nodes compile ("fresh"), whatever the session cached before
        self.env.pop("RAY_ADDRESS", None)
        # The drivers' retrains (vitcore.run.verify: a fresh process each, at the worker node's thread count) share
        # one compile cache of this cluster's own, as a user's driver uses ~/.cache: the first compiles, the others
        # load (bit for bit: tests/test_compile_cache.py), ~3 CPU-s less each. The nodes still compile ("fresh").
        self.driver_env = {**self.env, "VITCORE_XLA_CACHE": str(self.temp / "driver-xla")}
        self.head: subprocess.Popen | None = None
        self.worker: subprocess.Popen | None = None
        self.drivers: list[subprocess.Popen] = []
        self._nodes = 0

    def _start(self, command: list[str], name: str) -> subprocess.Popen:
        self._nodes += 1
        log = self.temp / f"{name}-{self._nodes}.log"
        with open(log, "w") as out:
            process = subprocess.Popen(command, env=self.env, stdout=out, stderr=subprocess.STDOUT, cwd=self.temp,
                                       start_new_session=True)
        waiting = Progress(f"{name} did not start", lambda: session_pids(process.pid), lambda: log.read_text()[-3000:])
        while STARTED not in log.read_text():
            if process.poll() is not None:
                raise RuntimeError(f"{name} did not start:\n{log.read_text()[-3000:]}")
            waiting.step(log.stat().st_size)  # `ray start` writes as it goes; its processes spend CPU starting
        return process

    def _node_flags(self, name: str) -> list[str]:
        return ["--block", "--node-ip-address=127.0.0.1", f"--temp-dir={self.temp / name}", "--disable-usage-stats",
                "--object-store-memory=100000000", f"--dashboard-agent-listen-port={free_port()}"]

    def start_head(self) -> None:
        self.head = self._start([self.ray, "start", "--head", f"--port={self.port}", "--num-cpus=0",
                                 "--include-dashboard=false", f"--ray-client-server-port={free_port()}",
                                 *self._node_flags("head")], "head")

    def start_worker(self) -> None:
        """The worker node, in its own mount namespace: `hidden` is an empty tmpfs there."""
        ray = [self.ray, "start", f"--address={self.address}", f"--num-cpus={WORKER_CPUS}",
               *self._node_flags("worker")]
        script = 'mount -t tmpfs -o size=16m node-own-disk "$0" && exec "$@"'
        self.worker = self._start(["unshare", "--mount", "--propagation", "private", "sh", "-c", script,
                                   str(self.hidden), *ray], "worker")

    def kill_worker(self) -> None:
        kill_session(self.worker)
        self.worker = None

    def driver(self, store: Path, configs) -> subprocess.Popen:
        """A sweep's driver process on this machine (the store is on its disk); stdout: "result <JSON>" per
        result (among Ray's notes), then "done <count>"."""
        import json

        log = self.temp / f"driver-{len(self.drivers)}.log"  # a file, not a pipe: Ray's notes never block it
        with open(log, "w") as err:
            process = subprocess.Popen(
                [sys.executable, "-c", DRIVER, self.address, str(store), json.dumps([c.identity() for c in configs])],
                env=self.driver_env, cwd=ROOT, stdout=subprocess.PIPE, stderr=err, text=True, start_new_session=True)
        process.log, process.store, process.lines = log, Path(store), []
        reader = threading.Thread(target=_read_lines, args=(process,), daemon=True)  # the pipe never fills
        reader.start()
        process.reader = reader
        self.drivers.append(process)
        return process

    def _progress(self, driver, what: str) -> Progress:
        """A wait on `driver`: its CPU and its children's (the retrain), and the worker node's task processes."""
        def pids():
            worker = task_pids(self.worker.pid) if self.worker is not None else []
            return [*session_pids(driver.pid), *worker]

        return Progress(what, pids, lambda: "".join(driver.lines)[-2000:] + driver.log.read_text()[-3000:])

    def _observed(self, driver) -> tuple:
        try:
            listing = tuple(sorted(os.listdir(driver.store)))
        except OSError:
            listing = ()
        return len(driver.lines), listing, driver.log.stat().st_size

    def wait_for(self, driver, condition, what: str) -> None:
        """Until condition() holds, while the driver runs and the sweep moves (Progress)."""
        waiting = self._progress(driver, what)
        while not condition():
            assert driver.poll() is None, f"the driver ended first ({what}):\n{driver.log.read_text()[-3000:]}"
            waiting.step(*self._observed(driver))

    def finish(self, driver) -> list[dict]:
        """The results a driver printed, once it ended by itself (0) after "done", however long the sweep took while
        it moved (Progress)."""
        import json

        waiting = self._progress(driver, "the driver did not finish")
        while driver.poll() is None:
            waiting.step(*self._observed(driver))
        driver.reader.join(timeout=60)
        out, err = "".join(driver.lines), driver.log.read_text()
        assert driver.returncode == 0, err[-3000:]
        # the driver's own lines; Ray may print beside them (a killed node's "Raylet is terminated" report, even after
        # "done", as the driver shuts down)
        said = [line for line in out.splitlines() if line.startswith(("result ", "done"))]
        assert said and said[-1].startswith("done"), out + err[-3000:]
        return [json.loads(line.removeprefix("result ")) for line in said if line.startswith("result ")]

    def stop(self) -> None:
        """Kill every process this cluster started (drivers, worker node, head), remove its temp folder."""
        for process in [*self.drivers, self.worker, self.head]:
            if process is not None:
                kill_session(process)
        shutil.rmtree(self.temp, ignore_errors=True)
