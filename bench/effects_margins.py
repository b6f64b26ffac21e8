"""What the effects at more margins cost beside one margin, on one Study (issue 42: margin-free effects).

    python bench/effects_margins.py [--store cached_runs] [--repeats 3]

Each repeat opens a fresh Study of the store (its test set read once, before the clock), then times
`effects(0.01)` (the main effects measured and judged: effects.csv) and the same at ±0.02 and ±0.005 on that
Study. Prints, per repeat, the CPU and wall seconds of one margin and of all three, and the median ratio
three ÷ one: the goal is ≤ 1.3 (the estimates are measured once, summaries.MeasuredEffects; a margin only
judges them). CPU seconds are the figure to quote on a busy box; wall seconds need a quiet one.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

MARGINS = (0.01, 0.02, 0.005)


def clocks() -> tuple[float, float]:
    return time.process_time(), time.perf_counter()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--store", default=str(Path(__file__).resolve().parents[1] / "cached_runs"))
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    from vitcore import Study

    ratios = []
    for repeat in range(args.repeats):
        study = Study.open(args.store, warn=False)
        study.test_set  # noqa: B018 (read once, outside the clock: every view shares it)
        start = clocks()
        study.effects(MARGINS[0])
        one = clocks()
        for margin in MARGINS[1:]:
            study.effects(margin)
        three = clocks()
        cpu_one, cpu_three = one[0] - start[0], three[0] - start[0]
        wall_one, wall_three = one[1] - start[1], three[1] - start[1]
        ratios.append(cpu_three / cpu_one)
        print(f"repeat {repeat + 1}: one margin {cpu_one:.2f} s CPU ({wall_one:.2f} s wall), three margins "
              f"{cpu_three:.2f} s CPU ({wall_three:.2f} s wall): {cpu_three / cpu_one:.2f}x CPU, "
              f"{wall_three / wall_one:.2f}x wall")
    print(f"median ratio, three margins / one (CPU): {statistics.median(ratios):.2f} (goal <= 1.3)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
