"""`python -m vitcore ...`: train one run, check and export a store, benchmark the training speed.

Bad flags or values exit with code 2 and one line saying what was wrong and what is allowed.
TensorFlow is imported only by the commands that train.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys
from pathlib import Path

from vitcore.config import MAX_TRAIN_ROWS, MODELS, NORM_PLACEMENTS, NORMS, PATCH_SIZES, POS_EMBEDDINGS, RunConfig
from vitcore.data import DataError
from vitcore.store import RunStore

COMMANDS: dict[str, callable] = {}  # name -> handler(args) -> exit code; filled by @command


class UsageError(Exception):
    """Bad input from the command line: reported as one line, exit code 2."""


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # argparse prints usage + message; we want one line, no usage dump
        raise UsageError(f"{self.prog}: {message}")


def command(name: str):
    def register(handler):
        COMMANDS[name] = handler
        return handler
    return register


def add_config_flags(parser: argparse.ArgumentParser) -> None:
    """One flag per RunConfig field, defaults from the dataclass (the seed's ViT)."""
    defaults = RunConfig()
    choices = {"model": MODELS, "pos_embedding": POS_EMBEDDINGS, "norm_placement": NORM_PLACEMENTS,
               "norm": NORMS, "patch_size": PATCH_SIZES}
    for field in dataclasses.fields(RunConfig):
        default = getattr(defaults, field.name)
        parser.add_argument("--" + field.name.replace("_", "-"), dest=field.name, type=type(default),
                            default=default, choices=choices.get(field.name),
                            help=f"default {default}")


def config_from_args(args: argparse.Namespace) -> RunConfig:
    try:
        return RunConfig(**{field.name: getattr(args, field.name) for field in dataclasses.fields(RunConfig)})
    except ValueError as error:
        raise UsageError(str(error)) from None


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="python -m vitcore", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    run = sub.add_parser("run", help="train one config (or print its cached result)")
    add_config_flags(run)
    run.add_argument("--store", default="cached_runs", help="run store folder (default cached_runs)")

    check = sub.add_parser("check", help="report partial, corrupt or stale runs (exit 1 if any)")
    check.add_argument("--store", default="cached_runs")

    export = sub.add_parser("export", help="write runs.csv, histories.csv, confusions.csv")
    export.add_argument("--store", default="cached_runs")
    export.add_argument("--out", required=True, help="output folder")

    bench = sub.add_parser("bench", help="time the seed's ViT run against a plain model.fit script")
    bench.add_argument("--repeats", type=int, default=3, help="side-by-side pairs (default 3)")
    bench.add_argument("--what", choices=("training", "table", "workers"), default="training",
                       help="training: vs plain model.fit; table: store.table() at 10k runs; workers: sweep runs/hour")

    sweep = sub.add_parser("sweep", help="train a named grid of configs, resumably")
    sweep.add_argument("grid", nargs="?", help="grid name (see --list)")
    sweep.add_argument("--list", action="store_true", help="list the grids and their sizes")
    sweep.add_argument("--store", default="cached_runs")
    sweep.add_argument("--workers", type=int, default=1, help="training processes (default 1)")
    sweep.add_argument("--executor", choices=("local", "ray"), default="local")
    sweep.add_argument("--address", default=None, help="Ray cluster address (default: a local ray.init())")
    sweep.add_argument("--dry-run", action="store_true", help="list what would run, train nothing")
    sweep.add_argument("--seeds", type=_seed_range, default=None, metavar="A-B",
                       help="only random seeds A to B (e.g. 0-3, or 5)")
    sweep.add_argument("--rows", type=_rows_list, default=None, metavar="N[,N...]",
                       help="only these train_rows (e.g. 1000,4000)")
    sweep.add_argument("--model", choices=MODELS, default=None, help="only this model")
    sweep.add_argument("--backfill-predictions", action="store_true",
                       help="retrain stored runs that lack predictions.npy and add it if the retrain matches "
                            "the stored run (same confusion and accuracies, losses within 1e-5)")

    effects = sub.add_parser("effects", help="seed-paired main effects of the four switches as CSV")
    effects.add_argument("--store", default="cached_runs")
    effects.add_argument("--out", default="effects.csv")

    report = sub.add_parser("report", help="the seed's headline table re-measured: headline.csv + headline.md")
    report.add_argument("--store", default="cached_runs")
    report.add_argument("--out", required=True, help="output folder")
    attention = sub.add_parser("bench-attention", help="measure one attention layer's forward time vs tokens")
    attention.add_argument("--out", default="bench/attention_cost.csv")
    return parser


@command("run")
def _run(args) -> int:
    from tqdm import tqdm

    cfg = config_from_args(args)
    store = RunStore(args.store)
    cached = store.get(cfg)
    if cached is None:
        from vitcore.train import train

        print(f"training {cfg.label()} ({cfg.train_rows:,} rows, seed {cfg.seed}) -> {store.root / cfg.run_id}")
        with tqdm(total=cfg.epochs, unit="epoch", file=sys.stdout) as bar:
            def progress(epoch, total, row):
                bar.set_postfix(loss=f"{row['loss']:.4f}", acc=f"{row['accuracy']:.4f}",
                                val_acc=f"{row['val_accuracy']:.4f}")
                bar.update(1)
            run = train(cfg, store, progress)
    else:
        run = cached
        print(f"cached: {cfg.label()} ({cfg.train_rows:,} rows, seed {cfg.seed}) at {run.path}")
    print(run.history().to_string(index=False, float_format=lambda v: f"{v:.4f}"))
    s = run.summary
    print(f"run {run.run_id}: params {s['params']:,}  best val {s['best_val_accuracy']:.4f} (epoch {s['best_epoch']})  "
          f"final train {s['final_train_accuracy']:.4f}  final val {s['final_val_accuracy']:.4f}  "
          f"gap {s['gap']:+.4f}  test {s['test_accuracy']:.4f}  {s['seconds']:.1f} s")
    return 0


@command("check")
def _check(args) -> int:
    store = RunStore(args.store)
    if not store.root.is_dir():
        raise UsageError(f"no store at {store.root}")
    problems = store.check()
    for name, reason in problems:
        print(f"{name}: {reason}")
    good = len(store.run_ids()) - sum(1 for name, _ in problems if not name.startswith("."))
    print(f"{store.root}: {good} complete runs, {len(problems)} problems")
    return 1 if problems else 0


@command("export")
def _export(args) -> int:
    store = RunStore(args.store)
    if not store.root.is_dir():
        raise UsageError(f"no store at {store.root}")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    for name, frame in store.export_frames().items():
        frame.to_csv(out / name, index=False)
        print(f"{out / name}: {len(frame):,} rows")
    return 0


@command("bench")
def _bench(args) -> int:
    from vitcore import bench

    if args.repeats < 1:
        raise UsageError("--repeats must be at least 1")
    if args.what == "table":
        bench.bench_table()
        return 0
    if args.what == "workers":
        bench.bench_workers()
        return 0
    return bench.bench_training(args.repeats)


def _seed_range(text: str) -> tuple[int, int]:
    low, _, high = text.partition("-")
    try:
        bounds = int(low), int(high or low)
    except ValueError:
        raise argparse.ArgumentTypeError(f"random seeds are A-B or A with whole numbers, got {text!r}") from None
    if not 0 <= bounds[0] <= bounds[1]:
        raise argparse.ArgumentTypeError(f"random seeds A-B need 0 <= A <= B, got {text!r}")
    return bounds


def _rows_list(text: str) -> tuple[int, ...]:
    try:
        rows = tuple(int(part.replace("_", "")) for part in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(f"rows are whole numbers separated by commas, got {text!r}") from None
    if any(not 10 <= value <= MAX_TRAIN_ROWS for value in rows):
        raise argparse.ArgumentTypeError(f"rows must each be from 10 to {MAX_TRAIN_ROWS:,}, got {text!r}")
    return rows


@command("sweep")
def _sweep(args) -> int:
    import time

    from tqdm import tqdm

    from vitcore import sweep

    if args.list:
        for name in sweep.GRIDS:
            configs, summary = sweep.grid(name), (sweep.GRIDS[name].__doc__ or "").partition("\n")[0]
            print(f"{name:8} {len(configs):4} runs  ({len({c.config_id for c in configs})} configs x seeds)  "
                  f"{summary}".rstrip())
        return 0
    if not args.grid:
        raise UsageError(f"name a grid ({', '.join(sweep.GRIDS)}) or use --list")
    if args.workers < 1:
        raise UsageError("--workers must be at least 1")
    try:
        configs = sweep.grid(args.grid, args.seeds, args.rows, args.model)
    except ValueError as error:
        raise UsageError(str(error)) from None
    store = RunStore(args.store)
    if store.root.exists() and not store.root.is_dir():
        raise UsageError(f"--store {store.root} is a file, not a folder")
    backfill = args.backfill_predictions
    todo = sweep.missing_predictions(configs, store) if backfill else sweep.pending(configs, store)
    what = "to backfill with predictions" if backfill else "to train"
    print(f"grid {args.grid}: {len(configs)} runs, {len(configs) - len(sweep.pending(configs, store))} in {store.root}, "
          f"{len(todo)} {what}")
    if args.dry_run:
        for cfg in todo:
            print(f"  {cfg.run_id}  {cfg.label():28} rows {cfg.train_rows:5}  seed {cfg.seed}")
        return 0
    started = time.perf_counter()
    with tqdm(total=len(todo), unit="run") as bar:
        def progress(result):
            note = "" if "backfilled" not in result else (" backfilled" if result["backfilled"] else " MISMATCH")
            bar.set_postfix_str(f"last: {result['label']} rows {result['train_rows']} seed {result['seed']} "
                                f"test {result['test_accuracy']:.4f} ({result['seconds']:.0f} s){note}")
            bar.update(1)
        try:
            results = sweep.run_sweep(configs, store, args.workers, args.executor, args.address, progress, backfill)
        except ValueError as error:
            raise UsageError(str(error)) from None
    hours = (time.perf_counter() - started) / 3600
    if results:
        print(f"{'checked' if backfill else 'trained'} {len(results)} runs in {hours * 3600:.0f} s: "
              f"{len(results) / hours:.0f} runs/hour with {args.workers} worker(s)")
    mismatched = [r["run_id"] for r in results if r.get("backfilled") is False]
    if mismatched:
        print(f"{len(mismatched)} runs did not reproduce (other thread count or machine?), left without "
              f"predictions: {' '.join(mismatched)}")
    return 0


def _lazy(target: str):
    """A handler imported only when its command runs ("module:function"): `check` and `export`
    must not pay for (or need) what the sweep, statistics and benchmark modules import."""
    module, function = target.split(":")

    def handler(args) -> int:
        import importlib

        return getattr(importlib.import_module(module), function)(args)
    return handler


COMMANDS.update({"effects": _lazy("vitcore.report:effects_command"),
                 "report": _lazy("vitcore.report:report_command"),
                 "bench-attention": _lazy("vitcore.cost:bench_attention_command")})


def main(argv: list[str] | None = None) -> int:
    try:
        args = build_parser().parse_args(argv)
        return COMMANDS[args.command](args)
    except (UsageError, DataError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # the reader went away (`... | head`): stop quietly, as `ls | head` does
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
