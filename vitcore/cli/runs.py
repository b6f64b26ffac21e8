"""One run and one store: `run`, `check`, `export`, `bench`."""

from __future__ import annotations

import argparse
import dataclasses
import sys
import threading
import warnings

from tqdm import tqdm

from vitcore.cli.common import (
    UsageError,
    add_io_flags,
    add_store_flag,
    clean,
    existing_store,
    files_in,
    import_tensorflow_quietly,
    staged,
    usage,
    writable_folder,
)
from vitcore.config import switches
from vitcore.config.run import MODELS, RANGES, SEED_FIELDS, RunConfig
from vitcore.data import testsplit
from vitcore.data.fashion import read_in_background
from vitcore.data.samples import CHECK_ROWS
from vitcore.run import bench, spawn
from vitcore.stats.plan_store import BUILTIN
from vitcore.store import shipped
from vitcore.store.runs import RunStore, StoreWarning
from vitcore.study import Study

EXPORTS = ("runs.csv", "histories.csv", "confusions.csv")


def add_parsers(sub) -> None:
    run = sub.add_parser("run", help="train one config (or print its cached result)")
    add_config_flags(run)
    add_store_flag(run)
    run.set_defaults(handler=_run)

    check = sub.add_parser("check", help="validate every run; report each problem (exit 1 if any)")
    add_store_flag(check)
    check.add_argument("--fix", action="store_true",
                       help="first remove unfinished writes (.tmp-*) that no writer holds and are over an hour old")
    check.add_argument("--ship", action="store_true",
                       help="then write verdicts.json: the valid runs by content, so a fresh clone of the repository "
                            "need not judge them again (vitcore.store.shipped; read only in the repository's store)")
    check.set_defaults(handler=_check)

    export = sub.add_parser("export", help="write runs.csv, histories.csv, confusions.csv")
    add_io_flags(export)
    export.set_defaults(handler=_export)

    benches = sub.add_parser("bench", help="time the article's ViT run against a plain model.fit script")
    benches.add_argument("--repeats", type=int, default=3, help="side-by-side pairs (default 3)")
    benches.add_argument("--what", choices=("training", "table", "workers", "sweep", "papers", "cache"),
                         default="training",
                         help="training: vs plain model.fit; table: store.table() at 10k runs; "
                              "workers: sweep runs/hour; sweep: the compile-once worker vs one process per run; "
                              "cache: a run with the persistent compile cache off vs warm; "
                              "papers: one training epoch of each papers' variant vs the article's ViT, side by side")
    benches.set_defaults(handler=_bench)


def add_config_flags(parser, tracked: bool = False) -> None:
    """One flag per RunConfig field, defaults from the dataclass (the article's ViT), ranges in --help. `tracked`:
    a flag left out stays out of the parsed arguments (argparse.SUPPRESS), so `given` tells which were named."""
    defaults = RunConfig()
    choices = {"model": MODELS, **{s.name: s.levels for s in switches.REGISTRY if not s.free}}
    notes = {"train_rows": "; fewer than --batch-size train as one smaller batch per epoch",
             "lr": "between 0 and 1, exclusive", "warmup_epochs": "; at most --epochs",
             "heads": "; must divide --width"}
    for field in dataclasses.fields(RunConfig):
        default = getattr(defaults, field.name)
        bounds = RANGES.get("seed" if field.name in SEED_FIELDS else field.name)  # the optional seeds: a seed's
        allowed = f"{bounds[0]:,} to {bounds[1]:,}" if bounds else ""
        text = f"{allowed}{notes.get(field.name, '')}".lstrip("; ")
        parser.add_argument("--" + field.name.replace("_", "-"), dest=field.name, type=field_type(field.name),
                            default=argparse.SUPPRESS if tracked else default, choices=choices.get(field.name),
                            help=f"{text + ', ' if text else ''}default "
                                 f"{'the random seed' if default is None else default}")


def field_type(name: str) -> type:
    """The type a RunConfig field's command-line value converts to (the optional seeds: int)."""
    return int if name in SEED_FIELDS else type(getattr(RunConfig(), name))


def config_from_args(args) -> RunConfig:
    """The RunConfig the flags name; a field not named (add_config_flags(tracked=True)) at the dataclass's default."""
    with usage():
        return RunConfig(**{field.name: getattr(args, field.name) for field in dataclasses.fields(RunConfig)
                            if hasattr(args, field.name)})


def given(args) -> set[str]:
    """The RunConfig fields named on the command line (parsed by add_config_flags(tracked=True))."""
    return {field.name for field in dataclasses.fields(RunConfig) if hasattr(args, field.name)}


def _run(args) -> int:
    cfg = config_from_args(args)
    store = RunStore(args.store)
    if store.root.exists() and not store.root.is_dir():
        raise UsageError(f"--store {store.root} is a file, not a folder")
    cached = store.get(cfg)
    if cached is None:
        writable_folder(store.root, "--store")  # before training, not after it
        # The data set decodes and the run's split is made on the other core while TensorFlow imports.
        ready = threading.Event()
        reading = read_in_background((cfg.train_rows, cfg.seeds.data), ready)
        with spawn.imports():  # TensorFlow and Keras without garbage collections (vitcore.run.spawn)
            import sklearn.model_selection  # noqa: F401, PLC0415 - scikit-learn for the split, then TensorFlow

            ready.set()
            import_tensorflow_quietly()
            from vitcore.run.train import train  # noqa: PLC0415 - TensorFlow, while the data decode
        if reading is not None:
            reading.join()

        print(f"training {cfg.label()} ({cfg.train_rows:,} rows, seed {cfg.seed}) -> "
              f"{clean(str(store.root / cfg.run_id))}")
        with tqdm(total=cfg.epochs, unit="epoch", file=sys.stdout) as bar:
            def progress(epoch, total, row):
                bar.set_postfix(loss=f"{row['loss']:.4f}", acc=f"{row['accuracy']:.4f}",
                                val_acc=f"{row['val_accuracy']:.4f}")
                bar.update(1)
            run = train(cfg, store, progress)
    else:
        run = cached
        print(f"cached: {cfg.label()} ({cfg.train_rows:,} rows, seed {cfg.seed}) at {clean(str(run.path))}")
    print(run.history().to_string(index=False, float_format=lambda v: f"{v:.4f}"))
    s = run.summary
    print(f"run {run.run_id}: params {s['params']:,}  best val {s['best_val_accuracy']:.4f} (epoch {s['best_epoch']})  "
          f"final train {s['final_train_accuracy']:.4f}  final val {s['final_val_accuracy']:.4f}  "
          f"gap {s['gap']:+.4f}  test {s['test_accuracy']:.4f}  {s['seconds']:,.1f} s")
    return 0


def _bar(entries: list):
    """A progress bar on stderr over the entries `check` judges, shown only on a terminal (tqdm's disable=None): on a
    fresh machine every run's weights are verified on the 10,000 test images, a few minutes for the committed store."""
    return tqdm(entries, desc="checking", unit="entry", file=sys.stderr, disable=None, leave=False)


def _check(args) -> int:
    store = existing_store(args.store)
    if args.fix:
        with usage():  # a folder that is not a store: nothing removed
            removed = store.clean()
        for name in removed:
            print(f"{clean(name)}: removed (unfinished write)")
    problems = store.check(progress=_bar)  # predictions against the shipped official test labels, as every reader
    with warnings.catch_warnings():  # each skipped run is named once, below: not again as a warning line
        warnings.simplefilter("ignore", StoreWarning)
        table = store.table()  # check() just rewrote the index: no run is read again
    # a plan whose hash moved, whose file changed since its registering commit, or whose runs were committed first
    checked = Study(table, store).plans_checked()  # the plans as every view reads them, on the table just checked
    problems += [("plans", text) for text in checked.problems]
    for name, reason in problems:
        print(f"{clean(name)}: {clean(reason)}")  # names from the disk: no control character reaches the terminal
    print(f"{clean(str(store.root))}: {len(table):,} valid runs, {len(problems):,} problems")
    for plan in checked.plans:  # judging, but no lead over a proven plan: said, not a problem (an uncommitted plan)
        if plan.name != BUILTIN and not checked.proven(plan.name):
            print(f"not proven: plan {plan.name}.json judges, after every proven plan and the built-in one: "
                  f"{clean(checked.order(plan.name))}")
    missing = int((~table["has_predictions"].astype(bool)).sum()) if len(table) else 0
    print(f"{missing:,} valid runs without predictions.npy (flips and the test set's sampling need them; "
          "`python -m vitcore sweep all --backfill-predictions` adds them)" if missing else
          "every valid run has its predictions.npy")
    weighted = int(table["has_weights"].astype(bool).sum()) if len(table) else 0
    unverified = weighted and (why := testsplit.missing()) is not None
    if unverified:  # the runs stay valid: say what was not checked
        print(f"{weighted:,} valid runs' weights not verified here: checked on the first {CHECK_ROWS} official test "
              f"images (shipped), not against all 10,000 of their stored predictions, because {clean(why)}")
    if args.ship and unverified:  # a fresh clone trusts the shipped verdicts: they vouch only for full checks
        print("--ship: nothing written: the shipped verdicts vouch for weights verified on all 10,000 official "
              "test images, and they were not verified here")
        return 1
    if args.ship:
        try:
            path = shipped.write(store.root, table["run_id"])
        except OSError as error:
            print(f"--ship: {clean(str(error))}")
            return 1
        print(f"{clean(str(path))}: {len(table):,} valid runs shipped by content"
              + ("" if shipped.honoured(store.root) else " (read only in the repository's cached_runs/, not here)"))
    return 1 if problems else 0


def _export(args) -> int:
    store = existing_store(args.store)
    out = writable_folder(args.out, "--out")
    files_in(out, EXPORTS, "--out")
    frames = store.export_frames()
    with staged(out) as stage:
        for name, frame in frames.items():
            frame.to_csv(stage / name, index=False)
    for name, frame in frames.items():
        print(f"{clean(str(out / name))}: {len(frame):,} rows")
    return 0


def _bench(args) -> int:
    if args.repeats < 1:
        raise UsageError("--repeats must be at least 1")
    if args.what == "table":
        bench.bench_table()
        return 0
    if args.what == "sweep":
        bench.bench_sweep(repeats=args.repeats)
        return 0
    if args.what == "workers":
        bench.bench_workers()
        return 0
    if args.what == "papers":
        bench.bench_papers(repeats=args.repeats)
        return 0
    if args.what == "cache":
        bench.bench_cache(repeats=args.repeats)
        return 0
    return bench.bench_training(args.repeats)
