"""Every CSV the CLI writes from one store, and their SHA-256 sums: the before-and-after check of a change that
must not change behaviour (a restructuring, a speed-up).

    python scripts/cli_snapshot.py OUT                 # writes OUT/<command>/... and OUT.sums
    git stash; python scripts/cli_snapshot.py /tmp/before; git stash pop; python scripts/cli_snapshot.py /tmp/after
    diff /tmp/before.sums /tmp/after.sums              # empty: every CSV byte for byte the same

Runs `export`, `plans`, `effects` (two margins), `report`, `claims`, `noise`, `diagnose-bn` and `compare` for a
spread of configs (the blind plan's questions, the four switches, the papers' switches, the convnet, another
baseline) against $VITCORE_STORE or the committed runs. A command that fails is listed with its exit code and
its output kept in OUT/<name>.log; the sums cover the CSV and markdown files only (logs carry the folder's path).
About 2.5 minutes on two cores.
"""

import hashlib
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
COMPARES = ("--pos-embedding sincos --train-rows 4000", "--depth 4 --train-rows 1000",
            "--pos-embedding none --train-rows 1000", "--norm-placement post --train-rows 1000", "--patch-size 4",
            "--norm batch", "--model convnet", "--pooling cls --train-rows 4000",
            "--tokenizer shifted --train-rows 4000", "--self-attention lsa --train-rows 4000",
            "--width 32 --train-rows 1000", "--depth 1 --train-rows 4000", "--train-rows 1000",
            "--patch-size 14 --baseline patch_size=4")


def commands(out: Path) -> dict[str, list[str]]:
    """name -> the vitcore arguments that write its CSVs under `out`."""
    runs = {"export": ["export", "--out", str(out / "export")], "plans": ["plans", "--out", str(out / "plans")],
            "effects": ["effects", "--out", str(out / "effects.csv")],
            "effects_m2": ["effects", "--margin", "0.02", "--out", str(out / "effects_m2.csv")],
            "report": ["report", "--out", str(out / "report")], "claims": ["claims", "--out", str(out / "claims.csv")],
            "noise": ["noise", "--out", str(out / "noise")], "bn": ["diagnose-bn", "--out", str(out / "bn")]}
    for number, flags in enumerate(COMPARES, 1):
        runs[f"compare{number}"] = ["compare", *flags.split(), "--out", str(out / f"compare{number}")]
    return runs


def main(out: Path) -> int:
    out.mkdir(parents=True, exist_ok=True)
    failed = []
    for name, args in commands(out).items():
        with open(out / f"{name}.log", "w") as log:
            done = subprocess.run([sys.executable, "-m", "vitcore", *args], cwd=ROOT, stdout=log, stderr=log)
        if done.returncode:
            failed.append(f"{name} (exit {done.returncode})")
    files = sorted(p for p in out.rglob("*") if p.suffix in (".csv", ".md"))
    sums = "".join(f"{hashlib.sha256(p.read_bytes()).hexdigest()}  {p.relative_to(out)}\n" for p in files)
    out.with_name(out.name + ".sums").write_text(sums)
    print(f"{len(files)} files summed in {out.name}.sums" + (f"; failed: {', '.join(failed)}" if failed else ""))
    return 1 if failed else 0


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: python scripts/cli_snapshot.py OUT")
    sys.exit(main(Path(sys.argv[1]).resolve()))
