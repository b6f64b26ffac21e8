"""What one derived metric costs a warm `RunStore.table()` (issue 42: "within 1.2× of without").

    python bench/derived_metric.py [--store cached_runs] [--pairs 4] [--calls 5]

Builds, in a temporary folder, a copy of the store's runs (so its index is its own) and a copy of the vitcore
package whose registry gained the throw-away macro-F1 of tests/test_new_metric.py (one function, one entry).
Then, alternating A B A B, fresh processes import either this package (A, without) or the copy (B, with),
build the copy store's index once (each its own index file: the derived values are cached in it), and time
`--calls` warm `table()` calls: each process prints the median CPU and wall seconds of a call. Prints every
pair and the median ratio with ÷ without (CPU seconds: the figure to quote on a busy box).
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
from test_new_metric import with_macro_f1  # noqa: E402 (tests/ first on the path)

TIMED = """
import json, statistics, sys, time, warnings
warnings.simplefilter("ignore")
from vitcore.store.runs import RunStore
assert __import__("vitcore").__file__.startswith(sys.argv[1]), "not the package asked for"
store = RunStore(sys.argv[2])
store.table()  # the index: built (or rebuilt for this package's derived metrics) before the clock
cpu, wall = [], []
for _ in range(int(sys.argv[3])):
    c, w = time.process_time(), time.perf_counter()
    table = store.table()
    cpu.append(time.process_time() - c)
    wall.append(time.perf_counter() - w)
print(json.dumps({"cpu": statistics.median(cpu), "wall": statistics.median(wall), "columns": len(table.columns),
                  "rows": len(table)}))
"""


def timed(package: Path, store: Path, calls: int) -> dict:
    done = subprocess.run([sys.executable, "-c", TIMED, str(package / "vitcore"), str(store), str(calls)],
                          cwd=package, capture_output=True, text=True, check=True,
                          env={"PYTHONPATH": str(package), "PATH": "/usr/bin:/bin"})
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--store", default=str(ROOT / "cached_runs"))
    parser.add_argument("--pairs", type=int, default=4)
    parser.add_argument("--calls", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        runs = [p for p in Path(args.store).iterdir() if p.is_dir() and len(p.name) == 12]
        stores = {}
        for name in ("without", "with"):  # one store copy each: an index holds one package's derived values
            stores[name] = tmp / f"store-{name}"
            stores[name].mkdir()
            for run in runs:
                shutil.copytree(run, stores[name] / run.name)
        packages = {"without": ROOT, "with": with_macro_f1(tmp / "pkg")}
        ratios = []
        for pair in range(args.pairs):
            got = {name: timed(packages[name], stores[name], args.calls) for name in ("without", "with")}
            ratios.append(got["with"]["cpu"] / got["without"]["cpu"])
            print(f"pair {pair + 1}: without {got['without']['cpu']:.3f} s CPU ({got['without']['wall']:.3f} s wall, "
                  f"{got['without']['columns']} columns), with macro-F1 {got['with']['cpu']:.3f} s CPU "
                  f"({got['with']['wall']:.3f} s wall, {got['with']['columns']} columns), {got['with']['rows']:,} "
                  f"runs: {ratios[-1]:.2f}x")
        print(f"median ratio with / without (CPU of a warm table()): {statistics.median(ratios):.2f}x (goal <= 1.2)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
