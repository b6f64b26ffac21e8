"""A two-node Ray cluster on this machine whose worker node cannot see the driver's disk (tests only).

Head on 127.0.0.1 with 0 CPUs (nothing trains beside the driver); one worker node with 2 CPUs started
inside its own mount namespace (`unshare --mount`, root only) where `hidden` (the folder holding the
driver's stores) is an empty tmpfs: like a cloud worker, it shares no disk with the driver. Token
authentication on (RAY_AUTH_MODE=token, a fresh token in RAY_AUTH_TOKEN). Each node runs `ray start
--block` in a session of its own, with its own --temp-dir and ports, so another `ray.init()` on this
machine never finds it, and teardown kills exactly the processes of those sessions (never `ray stop`,
which would stop every Ray on the machine).
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
import time
from pathlib import Path

from conftest import tool

ROOT = Path(__file__).resolve().parents[1]
WORKER_CPUS = 2
STARTED = "Ray runtime started"
# The driver: waits until the worker node's CPUs are in the cluster, then sweeps; prints "result <JSON>" per result.
DRIVER = """
import json, sys, time
import ray
from vitcore.config.run import RunConfig
from vitcore.run.sweep import run_sweep
from vitcore.store.runs import RunStore
address, store, configs = sys.argv[1], sys.argv[2], [RunConfig.from_dict(c) for c in json.loads(sys.argv[3])]
ray.init(address=address, include_dashboard=False, log_to_driver=False)
deadline = time.monotonic() + 120
while ray.cluster_resources().get("CPU", 0) < {cpus} and time.monotonic() < deadline:
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


def kill_session(process: subprocess.Popen | None) -> None:
    """SIGKILL a node: every process of the session it leads (a lost machine, not a clean stop)."""
    if process is None:
        return
    for pid in session_pids(process.pid):
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    process.wait(timeout=30)


class TwoNodeCluster:
    def __init__(self, hidden: Path):
        self.ray = tool("ray")  # beside the interpreter, else on PATH, else the test is skipped saying so
        self.hidden = hidden
        self.temp = Path(tempfile.mkdtemp(prefix="vr", dir="/tmp"))  # short: Ray's socket paths must fit 107 bytes
        self.port = free_port()
        self.address = f"127.0.0.1:{self.port}"
        self.env = {**os.environ, "RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN": secrets.token_hex(32),
                    "PYTHONPATH": str(ROOT), "RAY_USAGE_STATS_ENABLED": "0",
                    "VITCORE_XLA_CACHE": "off"}  # the nodes compile ("fresh"), whatever the session cached before
        self.env.pop("RAY_ADDRESS", None)
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
        deadline = time.monotonic() + 180
        while STARTED not in log.read_text():
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"{name} did not start:\n{log.read_text()[-3000:]}")
            time.sleep(0.2)
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
                env=self.env, cwd=ROOT, stdout=subprocess.PIPE, stderr=err, text=True, start_new_session=True)
        process.log = log
        self.drivers.append(process)
        return process

    def stop(self) -> None:
        """Kill every process this cluster started (drivers, worker node, head), remove its temp folder."""
        for process in [*self.drivers, self.worker, self.head]:
            if process is not None:
                kill_session(process)
        shutil.rmtree(self.temp, ignore_errors=True)
