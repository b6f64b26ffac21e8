"""Results computed once per store state, kept under the store so a restarted server need not compute them again.

The server's warm-up (vitcore.app.ablations.panels) computes the landing's flip effects and the main effects:
4-6 CPU seconds on the committed store at every start, for frames of a few hundred kilobytes that stay the
same until the store, its plans or this code change. A shelf keeps them as `<store>/.results-<state>-<name>.json`:

    key     sha256 of: the store's state (the app's store key: every run folder's stamp and the timing set's),
            the registered plans and the replacements log (bytes), the data the verdicts are judged with
            (index.data_stamp), and this code (every vitcore/*.py file's bytes, numpy / pandas / scipy versions)
    file    a header line (the key, the result's name, an HMAC-SHA256 of the body with the index's key, which
            lives outside the store: vitcore.store.index.key) and a JSON body (columns, dtypes, rows)

A file is used only if its header matches this key and name and its checksum passes; anything else (another
state, an edit, damage, a link) is ignored and the result computed again, so a shelf can never make a result
differ from a fresh computation (tests/test_shelf.py compares them frame for frame). JSON, never pickle: a
file in the store is data, never code. Reads are bounded and never follow a link (vitcore.store.files); a
read-only store simply keeps nothing. Writing removes the files of other states, so the shelf holds one state.
"""

from __future__ import annotations

import functools
import hashlib
import hmac
import json
import os
import tempfile
from pathlib import Path

import numpy
import pandas as pd
import scipy

from vitcore.data.regular import Refused, replace
from vitcore.stats.plan_report import head
from vitcore.stats.plan_store import FOLDER as PLANS
from vitcore.store import index
from vitcore.store.files import BadRun, read_bounded
from vitcore.store.upkeep import REPLACED_LOG as REPLACEMENTS

PREFIX = ".results-"
LIMIT = 8 << 20  # bytes a kept result may have (the landing's flip effects: ~60 KB)
KEPT = 64  # results kept per state: the warm-up's and the views visitors open most, bounded whatever they forge
PACKAGE = Path(__file__).resolve().parents[1]


@functools.lru_cache(maxsize=1)
def code() -> str:
    """A digest of this code: every vitcore/*.py file (its path and bytes) and the versions of the libraries
    the numbers come from. Any edit or upgrade gives another key, so no result of older code is reused."""
    digest = hashlib.sha256(f"{numpy.__version__} {pd.__version__} {scipy.__version__}\n".encode())
    for path in sorted(PACKAGE.rglob("*.py")):
        digest.update(f"{path.relative_to(PACKAGE)}\n".encode() + path.read_bytes())
    return digest.hexdigest()


def plans_key(root: str | Path) -> str:
    """The plans' state, for the app's store key (vitcore.app.state.store_mtime): the plans folder's stamp (each file's
    name, size and ctime: a plan added, changed or removed) and the commit the store's git checkout is at (a plan
    committed, or a history rewritten, changes what git proves of it: vitcore.stats.plan_report). One listing and
    one git call, at most once a second."""
    folder = os.path.join(root, PLANS)
    state = index.stamp(folder) if os.path.lexists(folder) else "none"
    return f"plans={state if state is not None else os.urandom(8).hex()}\ngit={head(root)}\n"


def state_key(root: str | Path, store_key: str) -> str:
    """The key of the store at `root` in the state `store_key` (see the module docstring)."""
    root = Path(root)
    digest = hashlib.sha256(f"{code()}\n{store_key}\n{index.data_stamp()}\n".encode())
    extras = [root / REPLACEMENTS]
    try:
        extras += sorted((root / PLANS).iterdir())
    except OSError:
        pass
    for path in extras:
        try:
            digest.update(f"{path.name}\n".encode() + bytes(read_bounded(path, LIMIT)))
        except BadRun as error:  # missing, a link or unreadable: its absence (or its reason) is the state
            digest.update(f"{path.name}: {error}\n".encode())
    return digest.hexdigest()


def _path(root: Path, key: str, name: str) -> Path:
    return root / f"{PREFIX}{key[:16]}-{hashlib.sha256(name.encode()).hexdigest()[:16]}.json"


def _checksum(key: str, name: str, body: bytes) -> str:
    return hmac.new(index.key(), f"{key}\n{name}\n".encode() + body, hashlib.sha256).hexdigest()


def get(root: str | Path, key: str, name: str) -> pd.DataFrame | None:
    """The frame kept for (key, name), or None when there is none that passes every check."""
    try:
        header, _, body = bytes(read_bounded(_path(Path(root), key, name), LIMIT)).partition(b"\n")
        meta = json.loads(header)
        if (meta.get("key"), meta.get("name")) != (key, name) or not hmac.compare_digest(
                str(meta.get("hmac")), _checksum(key, name, body)):
            return None
        data = json.loads(body)
        frame = pd.DataFrame(data["rows"], columns=data["columns"], dtype=object)
        return frame.astype(dict(zip(data["columns"], data["dtypes"])))
    except (BadRun, ValueError, TypeError, KeyError, AttributeError, RecursionError):
        return None


def put(root: str | Path, key: str, name: str, frame: pd.DataFrame) -> None:
    """Keep `frame` for (key, name), atomically (temp file, then a rename that replaces only a regular file);
    the files of other states go. Nothing happens on a read-only store or past KEPT results of this state."""
    root = Path(root)
    try:
        mine = f"{PREFIX}{key[:16]}-"
        names = [entry for entry in os.listdir(root) if entry.startswith(PREFIX)]
        for other in names:
            if not other.startswith(mine):
                os.unlink(root / other)  # unlink never follows a link: removes the entry itself
        if sum(entry.startswith(mine) for entry in names) >= KEPT:
            return
        body = json.dumps({"columns": [str(c) for c in frame.columns], "dtypes": [str(t) for t in frame.dtypes],
                           "rows": frame.astype(object).values.tolist()}, separators=(",", ":")).encode()
        header = json.dumps({"key": key, "name": name, "hmac": _checksum(key, name, body)}).encode()
        handle, temp = tempfile.mkstemp(prefix=index.INDEX_TEMP_PREFIX, dir=root)  # `clean` removes a killed write's
        try:
            with os.fdopen(handle, "wb") as out:
                os.fchmod(out.fileno(), 0o644)
                out.write(header + b"\n" + body)
            replace(temp, _path(root, key, name))
        finally:
            if os.path.lexists(temp):
                os.unlink(temp)
    except (OSError, Refused, TypeError, ValueError):  # read-only, or a value JSON cannot hold: not kept
        pass


def kept(root: str | Path | None, key: str, name: str, compute) -> pd.DataFrame:
    """The frame kept for (key, name), else compute() (a DataFrame), kept for the next start."""
    if root is None or not Path(root).is_dir():
        return compute()
    found = get(root, key, name)
    if found is None:
        found = compute()
        put(root, key, name, found)
    return found
