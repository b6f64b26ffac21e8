"""This user's keyed memory of expensive verdicts, outside any store: the index key (`key`, which signs
`<store>/.index.json`, vitcore.store.index) and the weights verified in full (`remembered` / `remember`).

Reproducing a run's 10,000 stored predictions from its weights costs from a fraction of a second to many seconds of
CPU (vitcore.store.weights.verify); it is done once per content: the memo keeps HMAC-SHA256(key, what was verified)
— the run id, the SHA-256 of the weights file's and of predictions.npy's bytes, the test images' SHA-256 and the
rule's version — so a copy of a store (the tests' copies, a clone) is not verified again, and an edited byte is.
Whoever can write the store cannot forge an entry without the key (readable by this user only); whoever can read
the key can also write this folder. The file (VERIFIED) is appended one 64-character line per entry, 0600, never
through a link; past MEMO_BYTES it starts over.
"""

from __future__ import annotations

import functools
import hashlib
import hmac
import os
import secrets
from pathlib import Path

from vitcore.data.regular import Refused, open_or_create, open_regular

VERIFIED = "verified-weights"
MEMO_BYTES = 4 << 20  # 65,000 entries (one per verified run file pair): more starts the memo over
LINE = 65  # 64 hex digits and a newline


def folder() -> Path:
    """This user's cache folder for vitcore ($XDG_CACHE_HOME/vitcore, else ~/.cache/vitcore)."""
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "vitcore"


def _key_file() -> Path:
    return folder() / "index.key"


@functools.lru_cache(maxsize=1)
def key() -> bytes:
    """This user's index key (created 0600 on first use), or a key of this process alone when none can be
    kept (then every process judges its runs once)."""
    path = _key_file()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            handle = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
        except FileExistsError:
            with open_regular(path, 64, follow=False) as handle:
                value = os.read(handle, 65)
        else:
            value = secrets.token_bytes(32)
            with os.fdopen(handle, "wb") as out:
                out.write(value)
        if len(value) == 32:
            return value
    except (OSError, Refused):
        pass
    return secrets.token_bytes(32)


def token(*parts: str | bytes | bytearray) -> str:
    """The memo entry of `parts` (HMAC-SHA256 under `key`, hex): each part's SHA-256 joined, so no two
    different lists of parts give one entry."""
    digests = b"".join(hashlib.sha256(part.encode() if isinstance(part, str) else part).digest() for part in parts)
    return hmac.new(key(), digests, hashlib.sha256).hexdigest()


def remembered(entry: str) -> bool:
    """Whether `entry` (a `token`) is in the memo (a missing, unreadable or special file: no)."""
    try:
        with open_regular(folder() / VERIFIED, MEMO_BYTES, follow=False) as handle:
            data = os.read(handle, MEMO_BYTES + 1)
    except (OSError, Refused):
        return False
    return (entry + "\n").encode() in data[:len(data) // LINE * LINE]


def remember(entry: str) -> None:
    """Append `entry` to the memo (O_APPEND: one whole line even beside another process's); a memo past
    MEMO_BYTES starts over. Failing to keep it only means verifying again next time."""
    path = folder() / VERIFIED
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        handle, _ = open_or_create(path, os.O_WRONLY | os.O_APPEND, 0o600)
        try:
            if os.fstat(handle).st_size >= MEMO_BYTES:
                os.ftruncate(handle, 0)
            os.write(handle, (entry + "\n").encode())
        finally:
            os.close(handle)
    except (OSError, Refused):
        pass
