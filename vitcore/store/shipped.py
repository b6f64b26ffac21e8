"""Verdicts shipped with the repository's runs, `cached_runs/verdicts.json`: committed beside them, so a fresh clone
does not judge every run in full before its first page (1,700 runs: 4-8 CPU seconds, most of them running the
weights of the runs that keep them on the shipped check images; vitcore.store.validate).

The local index (vitcore.store.index) keys a verdict by the folder's stamp (sizes and ctimes) and by an HMAC whose
key never leaves this user: neither survives a clone. This file keys each run judged valid by the sha256 of its
files' names and bytes instead, and its header by the versions the verdicts were judged under and the sha256 of
the data they were judged with (the shipped test labels and check images):

    {"schema": 5, "training_version": …, "validation": …, "data": "<sha256>", "runs": {"<run id>": "<sha256>", …}}

A scan (RunStore.scan) uses an entry only for a run folder whose local verdict is missing or stale and whose bytes
hash to the entry, and takes the run's table row from its own summary.json as for any valid run; every other run is
judged in full, as always. So the file never goes stale silently: a run added after it was written is judged (the
file just covers fewer runs), a run changed or replaced is judged, and a file of other versions or other data, not
well formed, too large, or not a regular file is ignored whole.

Trust: a shipped file has no key, so whoever writes it decides what its entries say. It is honoured only in the
checkout's own store (config.environment.REPOSITORY_STORE), whose writers can as well edit the code that judges
it; $VITCORE_STORE and every other store ignore it. `python -m vitcore check --ship` rewrites it from a full
judgement, and a test judges every run the committed file lists (tests/test_shipped.py).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import tempfile
from pathlib import Path

from vitcore.config import environment
from vitcore.config.run import SCHEMA_VERSION, TRAINING_VERSION
from vitcore.data.fashion import SHIPPED_TEST_LABELS
from vitcore.data.regular import Refused, replace
from vitcore.data.samples import CHECK_PATH
from vitcore.store.files import CEILING, BadRun, read_bounded
from vitcore.store.validate import TEMP_PREFIX, VALIDATION_VERSION

NAME = "verdicts.json"
ENTRY_BYTES = 96  # a run id, a sha256 and JSON's quotes
DIGEST = re.compile(r"[0-9a-f]{64}")


def data_digest() -> str:
    """The sha256 of the data every verdict is judged with: the shipped test labels and check images."""
    digest = hashlib.sha256()
    for path in (SHIPPED_TEST_LABELS, CHECK_PATH):
        try:
            digest.update(bytes(read_bounded(path, CEILING)))
        except BadRun:
            return "unreadable"
    return digest.hexdigest()


def digest(folder: Path) -> str | None:
    """The sha256 of a run folder's files (name, size and bytes of each, in name order; writes in progress left
    out), or None when it is not a folder of regular files that read (never through a link)."""
    found = hashlib.sha256()
    try:
        names = sorted(name for name in os.listdir(folder) if not name.startswith(TEMP_PREFIX))
        for name in names:
            data = read_bounded(folder / name, CEILING)
            found.update(f"{name}\n{len(data)}\n".encode())
            found.update(data)
    except (OSError, BadRun):
        return None
    return found.hexdigest()


def _header() -> dict:
    return {"schema": SCHEMA_VERSION, "training_version": TRAINING_VERSION, "validation": VALIDATION_VERSION,
            "data": data_digest()}


def honoured(root: str | Path) -> bool:
    """Whether a shipped file in the store at `root` is read: only in the checkout's own cached_runs/."""
    try:
        return Path(root).resolve() == environment.REPOSITORY_STORE.resolve()
    except OSError:
        return False


def load(root: str | Path, entries: int) -> dict[str, str]:
    """{run id: sha256 of its files} of the shipped file in the store at `root`, or {} when it is absent, not
    honoured there (`honoured`), of other versions or data, or not what `write` writes. `entries`: the run
    folders there are (the file may hold ENTRY_BYTES for each)."""
    if not honoured(root):
        return {}
    try:
        found = json.loads(bytes(read_bounded(Path(root) / NAME, (entries + 16) * ENTRY_BYTES + 1024)))
        runs = found.pop("runs")
        if found != _header() or not isinstance(runs, dict):
            return {}
    except (BadRun, ValueError, KeyError, AttributeError, TypeError, RecursionError):
        return {}
    return {run_id: value for run_id, value in runs.items()
            if isinstance(run_id, str) and re.fullmatch(r"[0-9a-f]{12}", run_id)
            and isinstance(value, str) and DIGEST.fullmatch(value)}


def write(root: str | Path, run_ids) -> Path:
    """Write the shipped file of the store at `root` for these runs (those a full judgement found valid: the
    caller's word), atomically; OSError when it cannot."""
    root = Path(root)
    runs = {run_id: value for run_id in sorted(run_ids) if (value := digest(root / run_id)) is not None}
    body = json.dumps({**_header(), "runs": runs}, indent=0, separators=(",", ":")).encode() + b"\n"
    handle, temp = tempfile.mkstemp(prefix=TEMP_PREFIX, dir=root)
    try:
        with os.fdopen(handle, "wb") as out:
            os.fchmod(out.fileno(), 0o644)
            out.write(body)
        try:
            replace(temp, root / NAME)
        except Refused as refused:
            raise OSError(f"{root / NAME} is {refused.what}, not a regular file: left alone") from None
    finally:
        if os.path.lexists(temp):
            os.unlink(temp)
    return root / NAME
