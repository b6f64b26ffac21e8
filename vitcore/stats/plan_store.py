"""Plan files: `<store>/plans/NAME.json` with the sha256 each was registered with in `<store>/plans/SHA256SUMS`,
and the built-in plan shipped in `plan_files/` beside this module. Read as every store file is: a regular file
only (no link followed, no FIFO waited on), bounded in size; written once, never replaced."""

from __future__ import annotations

import contextlib
import fcntl
import os
import re
import secrets
from functools import lru_cache
from pathlib import Path

from vitcore.data.regular import Refused, create, open_or_create, open_regular
from vitcore.stats.hostile_json import MAX_BYTES
from vitcore.stats.plans import FOLDER, NAME, SUMS, Plan, PlanError, parse, sha256
from vitcore.store.validate import TEMP_PREFIX

BUILTIN = "builtin"              # the plan shipped beside this module
HERE = Path(__file__).with_name("plan_files")
TEMP = TEMP_PREFIX + "plan-"     # a plan file being registered (never *.json: never read as a plan)


def _read(path: Path) -> str:
    """A plan file's text: a regular file (no link followed, no FIFO waited on), at most MAX_BYTES."""
    if os.path.islink(path):  # never followed (O_NOFOLLOW below too): say what it is
        raise PlanError(f"{path.name} is not a plain file (a symbolic link)")
    try:
        with open_regular(path, MAX_BYTES, follow=False) as handle:
            data = os.read(handle, MAX_BYTES + 1)
    except Refused as refused:
        raise PlanError(f"{path.name}" + refused.words(" unreadable ({reason})", " is not a plain file",
                                                        f" is {{size}} bytes, over {MAX_BYTES:,}")) from None
    if len(data) > MAX_BYTES:
        raise PlanError(f"{path.name} is over {MAX_BYTES:,} bytes")
    try:
        return data.decode("ascii")
    except UnicodeDecodeError:
        raise PlanError(f"{path.name} is not ASCII text") from None


def _sums(folder: Path) -> dict[str, str]:
    """file name -> registered sha256, from SHA256SUMS (absent: none)."""
    path = folder / SUMS
    if not os.path.lexists(path):
        return {}
    out = {}
    for line in _read(path).splitlines():
        digest, _, name = line.partition("  ")
        if re.fullmatch(r"[0-9a-f]{64}", digest) and NAME.fullmatch(name.removesuffix(".json")):
            out[name] = digest
    return out


def _load_folder(folder: Path) -> tuple[list[Plan], list[str]]:
    plans, problems = [], []
    if not folder.is_dir() or folder.is_symlink():
        return plans, ([f"{folder} is not a folder"] if os.path.lexists(folder) else [])
    try:
        sums = _sums(folder)
    except PlanError as error:
        return plans, [f"plans/{SUMS}: {error}"]
    names = sorted(p.name for p in folder.iterdir() if p.name.endswith(".json"))
    for name in names:
        try:
            text = _read(folder / name)
            digest = sha256(text)
            if name not in sums:
                raise PlanError(f"not in {SUMS}: an unregistered plan (register it with `plan register`)")
            if sums[name] != digest:
                raise PlanError(f"its sha256 moved since it was registered ({sums[name][:12]} -> {digest[:12]}): "
                                "a registered plan never changes; register the change as a new plan")
            plan = parse(text, digest)
            if plan.name + ".json" != name:
                raise PlanError(f"names itself {plan.name!r}")
            plans.append(plan)
        except PlanError as error:
            problems.append(f"plan {name}: {error}")
        except (ValueError, TypeError, KeyError, RecursionError, OverflowError) as error:  # never a traceback
            problems.append(f"plan {name}: malformed ({type(error).__name__}: {str(error)[:200]})")
    for name in sorted(set(sums) - set(names)):
        problems.append(f"plan {name}: registered in {SUMS} but its file is missing")
    return plans, problems


@lru_cache(maxsize=1)
def builtin() -> Plan:
    """The built-in plan (its 20 single-switch questions), from the file shipped beside this module."""
    plans, problems = _load_folder(HERE)
    if problems or [p.name for p in plans] != [BUILTIN]:
        raise RuntimeError(f"the built-in plan file is damaged: {'; '.join(problems) or [p.name for p in plans]}")
    return plans[0]


def load(root: str | Path | None) -> tuple[list[Plan], list[str]]:
    """Every plan that judges a store: the built-in one, then the store's registered plans by name; and the
    problems of those that judge nothing (unregistered, hash moved, malformed, a name taken twice)."""
    plans, problems = [builtin()], []
    if root is not None:
        found, problems = _load_folder(Path(root) / FOLDER)
        for plan in found:
            if plan.name == BUILTIN:
                problems.append(f"plan {plan.name}.json: the name {BUILTIN!r} is the built-in plan's")
            else:
                plans.append(plan)
    plans, refused = confirmable(plans)
    return plans, [*problems, *refused]


def confirmable(plans: list[Plan]) -> tuple[list[Plan], list[str]]:
    """(the plans whose `confirms` names another plan among them that judges, the problems of the others): a
    confirmation of a missing or refused plan, or in a cycle of confirmations (a plan confirming itself is refused
    by plans.check), judges nothing, and neither does a confirmation of it. Each plan is followed once (linear in
    the number of plans, however they chain)."""
    by_name = {p.name: p for p in plans}
    judges: dict[str, bool] = {}
    said: dict[str, str] = {}
    for plan in plans:
        path: dict[str, int] = {}  # the chain followed from this plan, in order (a dict: each look-up constant)
        name = plan.name
        while name is not None and name in by_name and name not in judges and name not in path:
            path[name] = len(path)
            name = by_name[name].confirms
        chain = list(path)
        if name is not None and name in path:  # a cycle: its members judge nothing
            cycle = chain[path[name]:]
            for k, member in enumerate(cycle):
                judges[member] = False
                loop = [cycle[(k + j) % len(cycle)] for j in range(min(4, len(cycle)))]  # the first few, from it
                shown = " -> ".join([*loop, *(["..."] if len(cycle) > 4 else []), member])
                said[member] = (f"plan {member}.json: confirms {by_name[member].confirms!r} in a cycle of "
                                f"{len(cycle)} confirmations ({shown}): a confirmation replicates a plan that does not "
                                "confirm it back")
            chain = chain[:path[name]]
        for member in reversed(chain):  # each judges when what it confirms judges (or it confirms nothing)
            target = by_name[member].confirms
            if target is None or judges.get(target, False):
                judges[member] = True
                continue
            judges[member] = False
            why = "which is not a plan here" if target not in by_name else "which judges nothing"
            said[member] = f"plan {member}.json: confirms {target!r}, {why}"
    return [p for p in plans if judges[p.name]], [said[p.name] for p in plans if p.name in said]


def register(root: str | Path, plan: Plan) -> Path:
    """Write a new plan file into `<root>/plans` and its hash into SHA256SUMS, together or not at all; PlanError
    when the name is taken (a registered plan never changes) or a path there is not what it must be (never
    followed); OSError when the write fails (a full disk), with nothing left behind: the name stays free.

    The text goes to a temporary `.tmp-plan-*` file (flocked while written: `check --fix` removes one a killed
    register left, vitcore.store.upkeep), is fsynced and linked to its name (never onto anything there); then the
    hash line is appended and fsynced (after a newline ending SHA256SUMS's last line if it lacks one). A failure undoes
    what was done: the file unlinked, SHA256SUMS cut back to what it was."""
    folder = Path(root) / FOLDER
    if plan.name == BUILTIN or os.path.lexists(folder / f"{plan.name}.json"):
        raise PlanError(f"a plan named {plan.name!r} exists: a registered plan never changes; pick a new name")
    folder.mkdir(parents=True, exist_ok=True)
    if folder.is_symlink() or not folder.is_dir():
        raise PlanError(f"{folder} is not a folder")
    text, path, sums = plan.text(), folder / f"{plan.name}.json", folder / SUMS
    try:  # looked at first (a link never followed, a FIFO or device never opened), before the plan is written
        out, _ = open_or_create(sums, os.O_RDWR | os.O_APPEND)  # read: its last byte
    except Refused:
        raise PlanError(f"{sums} is not a plain file") from None
    temp = folder / f"{TEMP}{plan.name}-{secrets.token_hex(6)}"
    linked, size = False, os.fstat(out).st_size
    try:
        handle = create(temp)
        try:
            fcntl.flock(handle, fcntl.LOCK_EX)  # held while written: not debris to `check --fix`
            _write(handle, text.encode())
            os.link(temp, path)  # FileExistsError when anything is at the name now: nothing replaced
            linked = True
            # a last line without its newline (a hand edit) is ended first, never glued to: that line stays its plan's
            ended = size == 0 or os.pread(out, 1, size - 1) == b"\n"
            _write(out, ("" if ended else "\n").encode() + f"{sha256(text)}  {plan.name}.json\n".encode())
        finally:
            os.close(handle)
            os.unlink(temp)
    except OSError as error:
        if linked:  # the hash line's append failed: the file goes, and any part of the line
            path.unlink(missing_ok=True)
            with contextlib.suppress(OSError):
                os.ftruncate(out, size)
        if isinstance(error, FileExistsError):  # written there meanwhile
            raise PlanError(f"a plan named {plan.name!r} exists: a registered plan never changes; pick a new name") \
                from None
        raise OSError(error.errno, f"{error.strerror or error} (plan {plan.name} not registered: nothing written)",
                      str(path)) from None
    finally:
        os.close(out)
    with contextlib.suppress(OSError):  # the new names durable too
        folder_handle = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
        try:
            os.fsync(folder_handle)
        finally:
            os.close(folder_handle)
    return path


def _write(handle: int, data: bytes) -> None:
    """All of `data` to `handle`, then fsync: OSError (ENOSPC, EIO) when any of it cannot be."""
    view = memoryview(data)
    while view:
        view = view[os.write(handle, view):]
    os.fsync(handle)
