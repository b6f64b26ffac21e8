"""The persistent cache of XLA-compiled training programs, shared by every process on this machine.

A run's epoch and forward functions are XLA-compiled on their first call: seconds of every process
(docs/speed.md). TensorFlow's persistent cache (TF_XLA_FLAGS --tf_xla_persistent_cache_directory)
writes each compiled executable to a folder, and a later process with the same program loads it
instead of compiling; the result is bit for bit the same (tests/test_compile_cache.py).

TensorFlow keys an entry by the compiled graph and its input shapes. The folder adds what that key
does not see, so a program compiled by other code is never loaded: a hash of vitcore's training
source (every file that shapes the traced step), the TensorFlow and Keras versions, this CPU (an
entry is machine code for its features), the intra-op thread count (results are bit for bit only
at one count, and XLA may plan a program's parallel work for it) and any other XLA flags set.

    VITCORE_XLA_CACHE=off python -m vitcore run     # no cache (unset: ~/.cache/vitcore/xla/<key>/)
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import platform
import re
import sys
import tempfile
from pathlib import Path

from vitcore.config import environment

FLAG = "tf_xla_persistent_cache_directory"
PACKAGE = Path(__file__).resolve().parents[1]
# What the traced programs are made of: the training loop, the model builders, the config and the
# inputs' layout. A change to any of these files starts a new cache folder.
SOURCES = ("run/train.py", "run/loop.py", "model", "config", "data")
# What TensorFlow 2.21 logs on every load, harmless here: XLA's own tuning pseudo-features
# ("+prefer-no-scatter") are not host features, so it warns of a machine mismatch (the folder is per
# CPU); and it tries each entry as a text proto before reading it as binary.
NOTICES = re.compile(r"cpu_aot_loader\.cc.*Target machine feature \+prefer-no-(scatter|gather) is not"
                     r"|text_format\.cc.*tensorflow\.XlaSerializedCacheEntry")
_PROCESS: dict[str, Path | None] = {}  # "folder": the cache this process uses, once enable() ran


def source_hash(package: Path = PACKAGE) -> str:
    """sha256 over the training source files (relative path and bytes, in sorted order)."""
    digest = hashlib.sha256()
    for part in SOURCES:
        path = package / part
        for file in sorted(path.rglob("*.py")) if path.is_dir() else [path]:
            digest.update(file.relative_to(package).as_posix().encode() + b"\0" + file.read_bytes() + b"\0")
    return digest.hexdigest()


def _cpu() -> str:
    """The machine and its instruction-set features (Linux: cpuinfo's flags line)."""
    try:
        with open("/proc/cpuinfo") as info:
            flags = next((line for line in info if line.startswith(("flags", "Features"))), "")
    except OSError:
        flags = ""
    return f"{platform.machine()} {platform.processor()} {flags.strip()}"


def key(threads: int, environ=os.environ) -> str:
    """16 hex digits naming the cache folder of this code, these library versions, this CPU and
    this thread count."""
    import keras  # noqa: PLC0415 - TensorFlow: the fast tests use this module without it
    import tensorflow as tf  # noqa: PLC0415 - TensorFlow: the fast tests use this module without it

    other_flags = " ".join(sorted(environ.get("TF_XLA_FLAGS", "").split())) + "|" + environ.get("XLA_FLAGS", "")
    parts = [source_hash(), tf.__version__, keras.__version__, _cpu(), f"threads {threads}", other_flags]
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:16]


def enable(threads: int, environ=os.environ) -> Path | None:
    """Point TensorFlow's persistent XLA cache at this code's folder, once per process, and return
    the folder in use (None: no cache). TF_XLA_FLAGS naming a cache already (the caller's own) is
    kept; VITCORE_XLA_CACHE "off" or a folder that cannot be made mean no cache. TensorFlow reads
    TF_XLA_FLAGS once, when its context starts (the first op, or asking for the thread counts), so
    configure_tensorflow calls this before; the flag is read right away and the variable restored, so
    child processes choose their own folder (their thread count may differ)."""
    if "folder" in _PROCESS:
        return _PROCESS["folder"]
    if FLAG in environ.get("TF_XLA_FLAGS", ""):
        _PROCESS["folder"] = folder(environ)
        return _PROCESS["folder"]
    root = environment.xla_cache(environ)  # ValueError on a bad VITCORE_XLA_CACHE
    chosen = None if root is None else root / key(threads, environ)
    try:
        if chosen is not None:
            chosen.mkdir(parents=True, exist_ok=True)
    except OSError:
        chosen = None  # an unwritable cache folder: train without the cache
    if chosen is not None:
        previous = environ.get("TF_XLA_FLAGS")
        environ["TF_XLA_FLAGS"] = f"{previous or ''} --{FLAG}={chosen}".strip()
        try:
            from tensorflow.python.client import _pywrap_tf_session  # noqa: PLC0415 - private, guarded

            _pywrap_tf_session.TF_GetXlaConstantFoldingDisabled()  # parses every TF_XLA_FLAGS flag now
        except (ImportError, AttributeError):
            previous = environ["TF_XLA_FLAGS"]  # no way to make TensorFlow read it now: leave it set
        if previous is None:
            del environ["TF_XLA_FLAGS"]
        else:
            environ["TF_XLA_FLAGS"] = previous
    _PROCESS["folder"] = chosen
    return chosen


def folder(environ=os.environ) -> Path | None:
    """The cache folder TF_XLA_FLAGS names, None without one."""
    for item in environ.get("TF_XLA_FLAGS", "").split():
        if item.startswith(f"--{FLAG}="):
            value = item.split("=", 1)[1]
            return Path(value) if value else None
    return None


def in_use() -> Path | None:
    """This process's cache folder, as enable() set it (None: no cache, or not enabled yet)."""
    return _PROCESS.get("folder")


def entries(folder: Path | None) -> dict[str, int]:
    """The programs stored in the folder: file name -> modification time (ns); {} without a cache."""
    if folder is None:
        return {}
    try:
        with os.scandir(folder) as found:
            return {entry.name: entry.stat().st_mtime_ns for entry in found if entry.name.endswith(".pb")}
    except OSError:
        return {}


def how_compiled(before: dict[str, int], after: dict[str, int] | None = None) -> str:
    """A run's timing.compile from the cache's entries before it and after it (default: this process's
    folder, read now): "cached" when its programs were loaded (there are entries, and none was
    written or rewritten during the run), else "fresh". An entry another process wrote meanwhile makes
    it "fresh" too: the label errs toward the slower basis. (Loading never writes; compiling with the
    cache on always writes its entry.)"""
    after = entries(in_use()) if after is None else after
    return "cached" if after and after == before else "fresh"


@contextlib.contextmanager
def quiet_notices():
    """While compiled programs load (the first call of each), keep the cache's known notices (NOTICES)
    off the terminal: native code writes them to file descriptor 2, which goes to a temporary file
    meanwhile; every other line is written back afterwards. Without a cache: nothing is redirected."""
    if in_use() is None:
        yield
        return
    sys.stderr.flush()
    saved = os.dup(2)
    with tempfile.TemporaryFile() as held:
        os.dup2(held.fileno(), 2)
        try:
            yield
        finally:
            sys.stderr.flush()
            os.dup2(saved, 2)
            os.close(saved)
            held.seek(0)
            kept = [line for line in held.read().decode(errors="replace").splitlines(keepends=True)
                    if not NOTICES.search(line)]
            if kept:
                sys.stderr.write("".join(kept))
                sys.stderr.flush()
