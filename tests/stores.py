"""Small copies of the committed store for the page, fuzz and damaged-store tests: the runs a page draws
from, not 70 MB. Each copy leaves out the index (`.index.json`), so the copy's verdicts are its own.

- `copy_store(target, runs=N | keep={run ids})`: a copy of cached_runs/ holding only those run folders.
- `page_runs(committed, spare, plain=)`: the run ids every page draws from by default, plus runs to damage.
- `copied_table(committed, keep)`: a copy's table before any damage, from the committed table (no second
  validation of runs the session has read already).
- `settled(root)`: wait until every file under root is older than vitcore.store.index.RACY_NS.
- `page_store` (tests/conftest.py): page_runs and the few configs tests/test_app_pages.py selects, copied
  once per session.
"""

from __future__ import annotations

import shutil
import time
from pathlib import Path

import pandas as pd

from vitcore.config.run import RunConfig

ROOT = Path(__file__).resolve().parents[1]
COMMITTED = ROOT / "cached_runs"
# What tests/test_app_pages.py selects beyond the default view: the ViT at 1,000 rows (its train_rows switch,
# and the baseline of) the copied link's config.
PAGE_CONFIGS = (RunConfig(train_rows=1_000), RunConfig(norm="batch", patch_size=4, train_rows=1_000))


def copy_store(target: Path, runs: int | None = None, keep: set[str] | None = None) -> Path:
    """A copy of cached_runs/ without its index: the first `runs` run folders, or those in `keep`, or all."""
    names = sorted(p.name for p in COMMITTED.iterdir() if len(p.name) == 12)
    keep = keep if keep is not None else set(names[:runs]) if runs else set(names)
    shutil.copytree(COMMITTED, target,
                    ignore=lambda folder, entries: [e for e in entries if folder == str(COMMITTED)
                                                    and (e.startswith(".") or (len(e) == 12 and e not in keep))])
    return target


def page_runs(committed: pd.DataFrame, spare: int = 0, configs=(), plain: int | None = None) -> set[str]:
    """The committed runs (`committed`: the committed store's table) every page draws from by default: the
    article's ViT and convnet at the default train_rows, and random seeds 0-2 of each single-switch change
    of the ViT (the landing page's forest plot); random seeds 0-2 of each of `configs`; plus `spare` weighted
    and `plain` (default: `spare`) unweighted runs with predictions to damage."""
    from vitcore.app.selection import BASELINE
    from vitcore.stats.families import neighbours, runs_of

    keep = {*runs_of(committed, BASELINE)["run_id"], *runs_of(committed, BASELINE.replace(model="convnet"))["run_id"]}
    for other in [other for _, _, other in neighbours(committed, BASELINE)] + list(configs):
        keep |= set(runs_of(committed, other).query("seed <= 2")["run_id"])
    rest = committed[~committed["run_id"].isin(keep) & committed["has_predictions"]]
    plain = spare if plain is None else plain
    keep |= set(rest[rest["has_weights"]]["run_id"][:spare]) | set(rest[~rest["has_weights"]]["run_id"][:plain])
    return keep


def copied_table(committed: pd.DataFrame, keep: set[str]) -> pd.DataFrame:
    """RunStore(copy_store(..., keep=keep)).table() before the copy is changed, from `committed` (the committed
    store's table, read once per session): the copy holds exactly those run folders, unchanged, so its table is
    these rows (equal frames, checked in tests/test_fuzz.py); reading the copy again validated every run from its
    files, seconds of each fixture that damages one."""
    return committed[committed["run_id"].isin(keep)].reset_index(drop=True)


def other_test_images(folder) -> dict:
    """A data folder ($VITCORE_DATA_DIR) with the official labels but test images that are not the official
    ones (all zero): usable for everything else, so only the weights check notices."""
    import gzip
    import struct

    from vitcore.data.fashion import DEBIAN_DIR, FILES

    folder.mkdir()
    for name in FILES.values():
        (folder / name).symlink_to(DEBIAN_DIR / name)
    (folder / FILES["test_images"]).unlink()
    blank = struct.pack(">IIII", 0x0803, 10_000, 28, 28) + bytes(7_840_000)
    (folder / FILES["test_images"]).write_bytes(gzip.compress(blank))
    return {"VITCORE_DATA_DIR": str(folder)}


def settled(root: Path) -> Path:
    """root once every file under it is older than vitcore.store.index.RACY_NS (by its change time): a store
    written less than that ago has no stamp, so every look at it takes a new state key (vitcore.store.index.stamp)
    and the app opens a new Study, validates every run and computes every analysis cold at each."""
    from vitcore.store.index import RACY_NS

    newest = max((path.stat().st_ctime_ns for path in root.rglob("*")), default=0)
    time.sleep(max(0, newest + RACY_NS - time.time_ns()) / 1e9)
    return root
