"""`sweep`: train a named grid of configs, or your own (`--vary`), resumably, on local worker processes
or a Ray cluster."""

from __future__ import annotations

import argparse
import json
import time

from tqdm import tqdm

from vitcore.cli.common import UsageError, add_store_flag, clean, usage, writable_folder
from vitcore.config.numbers import delta
from vitcore.config.run import MAX_TRAIN_ROWS, MODELS, RANGES
from vitcore.config.switches import MODEL_NAMES
from vitcore.run import custom, sweep
from vitcore.stats.plan_store import BUILTIN
from vitcore.store.runs import RunStore
from vitcore.study import Study


def add_parsers(sub) -> None:
    sweep = sub.add_parser("sweep", help="train a named grid of configs, or your own with --vary, resumably")
    sweep.add_argument("grid", nargs="?", help="grid name (see --list); leave out with --vary")
    sweep.add_argument("plan", nargs="?", default=None,
                       help="after the grid `plan`: a registered plan's name (default: the built-in plan); the "
                            "sweep trains its next looks until every question is decided or at its cap")
    sweep.add_argument("--vary", action="append", default=[], metavar="FIELD=V1,V2,...",
                       help="your own grid: vary FIELD (width, depth, heads, mlp_dim, epochs, batch_size, lr, "
                            "warmup_epochs or any switch) over these values, around the article's ViT; repeat "
                            "for more fields. One field at a time unless --cross. Random seeds: --seeds "
                            "(default 0-9); rows: --rows (default 1000,4000)")
    sweep.add_argument("--base", default="", metavar="FIELD=VALUE,...",
                       help="with --vary: changes to the article's ViT that every config of your grid shares "
                            "(e.g. epochs=5)")
    sweep.add_argument("--cross", action="store_true",
                       help="with --vary: every combination of the fields' values (default: one field at a time)")
    sweep.add_argument("--list", action="store_true", help="list the grids and their sizes")
    add_store_flag(sweep)
    sweep.add_argument("--workers", type=int, default=1, help="training processes, at least 1 (default 1)")
    sweep.add_argument("--executor", choices=("local", "ray"), default="local")
    sweep.add_argument("--address", default=None, help="Ray cluster address (default: a local ray.init())")
    sweep.add_argument("--dry-run", action="store_true", help="list what would run, train nothing")
    sweep.add_argument("--seeds", type=_seed_range, default=None, metavar="A-B",
                       help=f"only random seeds A to B (e.g. 0-3, or 5; 0 to {RANGES['seed'][1]:,})")
    sweep.add_argument("--rows", type=_rows_list, default=None, metavar="N[,N...]",
                       help=f"only these train_rows (e.g. 1000,4000; each {RANGES['train_rows'][0]} to "
                            f"{MAX_TRAIN_ROWS:,})")
    sweep.add_argument("--model", choices=MODELS, default=None,
                       help="only this model (with --vary: the model varied, default vit)")
    sweep.add_argument("--backfill-predictions", action="store_true",
                       help="retrain stored runs that lack predictions.npy and add it if the retrain matches "
                            "the stored history bit for bit (same thread count)")
    sweep.add_argument("--replace-unreproducible", action="store_true",
                       help="with --backfill-predictions: a stored run the retrain does not reproduce is replaced "
                            "by the retrain (its old numbers go to <store>/replaced_runs.csv)")
    sweep.set_defaults(handler=_sweep)


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
    low, high = RANGES["train_rows"]
    if any(not low <= value <= high for value in rows):
        raise argparse.ArgumentTypeError(f"rows must each be from {low} to {high:,}, got {text!r}")
    return rows


def _custom(args) -> list:
    """The --vary grid (vitcore.run.custom); ValueError for a bad field or value."""
    seeds = tuple(range(args.seeds[0], args.seeds[1] + 1)) if args.seeds else sweep.SEEDS
    vary = [custom.parse_vary(text) for text in args.vary]
    configs = custom.custom_grid(vary, seeds, args.rows or sweep.ROWS, args.cross, args.model or "vit",
                                 custom.parse_base(args.base))
    how = "crossed" if args.cross else "one at a time"
    centre = configs[0].label() if args.base else f"the article's {MODEL_NAMES[args.model or 'vit']}"
    cells, rows = len({cfg.label() for cfg in configs}), len({cfg.train_rows for cfg in configs})
    print(f"your grid ({how}, around {centre}): {cells} configs x {rows} row count{'s' if rows != 1 else ''} x "
          f"{len(seeds)} random seed{'s' if len(seeds) != 1 else ''}")
    return configs


def _sweep(args) -> int:
    if args.list:
        width = max(map(len, sweep.GRIDS))
        for name in sweep.GRIDS:
            configs, summary = sweep.grid(name), sweep.summary(name)  # whole sentences, never cut at a line end
            print(f"{name:{width}} {len(configs):5,} runs  ({len({c.config_id for c in configs})} configs x seeds)  "
                  f"{summary}".rstrip())
        print(f"{sweep.PLAN:{width}}     -         (reads --store)  The random seeds the sequential plan asks for "
              "next: both sides of every undecided planned comparison, up to its next look.")
        return 0
    if args.grid and args.vary:
        raise UsageError(f"give a grid name ({args.grid}) or --vary, not both")
    if (args.cross or args.base) and not args.vary:
        raise UsageError("--cross and --base go with --vary")
    if not args.grid and not args.vary:
        raise UsageError(f"name a grid ({', '.join([*sweep.GRIDS, sweep.PLAN])}), use --vary FIELD=V1,V2, "
                         "or use --list")
    if args.workers < 1:
        raise UsageError("--workers must be at least 1")
    store = RunStore(args.store)
    if store.root.exists() and not store.root.is_dir():
        raise UsageError(f"--store {store.root} is a file, not a folder")
    with usage():
        if args.vary:
            configs, args.grid = _custom(args), "custom"
        else:
            configs = sweep.grid(args.grid, args.seeds, args.rows, args.model, store=store, plan=args.plan)
    backfill = args.backfill_predictions
    if args.replace_unreproducible and not backfill:
        raise UsageError("--replace-unreproducible only goes with --backfill-predictions")
    todo = sweep.missing_predictions(configs, store) if backfill else sweep.pending(configs, store)
    what = "to backfill with predictions" if backfill else "to train"
    print(f"grid {args.grid}: {len(configs)} runs, {len(configs) - len(sweep.pending(configs, store))} in "
          f"{clean(str(store.root))}, {len(todo)} {what}")
    if args.dry_run:
        for cfg in todo:
            print(f"  {cfg.run_id}  {cfg.label():28} rows {cfg.train_rows:>6,}  seed {cfg.seed}")
        return _decided(args, store, 0)
    if todo:
        writable_folder(store.root, "--store")  # before training, not after it
    started = time.perf_counter()
    with tqdm(total=len(todo), unit="run") as bar:
        def progress(result):
            if bar.n >= bar.total:  # a plan's next look, queued while the sweep runs
                bar.total = bar.n + 1
            if "error" in result:  # reported now and listed at the end; the sweep goes on
                bar.write(clean(f"FAILED {result['label']} rows {result['train_rows']:,} seed {result['seed']}: "
                                f"{result['error']}"))
                bar.update(1)
                return
            note = ("" if "backfilled" not in result else " backfilled" if result["backfilled"]
                    else " replaced" if result["replaced"] else " MISMATCH")
            bar.set_postfix_str(clean(f"last: {result['label']} rows {result['train_rows']:,} seed {result['seed']} "
                                      f"test {result['test_accuracy']:.4f} ({result['seconds']:,.1f} s){note}"))
            bar.update(1)
        with usage():
            if args.grid == sweep.PLAN and args.executor == "local" and not backfill:  # re-planned as chunks finish
                results = sweep.run_plan(store, args.plan, args.workers, progress, args.rows, args.seeds)
            else:
                results = sweep.run_sweep(configs, store, args.workers, args.executor, args.address, progress,
                                          backfill, args.replace_unreproducible)
    hours = (time.perf_counter() - started) / 3600
    failed = [r for r in results if "error" in r]
    results = [r for r in results if "error" not in r]
    if results:
        print(f"{'checked' if backfill else 'trained'} {len(results)} runs in {hours * 3600:,.1f} s: "
              f"{len(results) / hours:.0f} runs/hour with {args.workers} worker(s)")
    replaced = [r for r in results if r.get("replaced")]
    if replaced:
        moved = max(abs(r["new_test_accuracy"] - r["old_test_accuracy"]) for r in replaced)
        print(f"{len(replaced)} runs replaced by their retrain (largest test accuracy change {moved:.4f}); "
              f"old numbers in {clean(str(store.root / sweep.REPLACED_LOG))}")
    mismatched = [r["run_id"] for r in results if r.get("backfilled") is False and not r.get("replaced")]
    if mismatched:
        print(f"{len(mismatched)} runs did not reproduce (other thread count or machine?), left without "
              f"predictions: {' '.join(mismatched)}")
    if args.grid == sweep.PLAN and results and not failed and not backfill:
        return _sweep(args)  # the next looks, judged on the runs just stored: until decided or at the cap
    for result in failed:
        config = json.dumps(result["config"], sort_keys=True)
        print(clean(f"failed: run {result['run_id']} {config}: {result['error']}"))
    if failed:
        print(f"{len(failed)} runs failed (listed above with their configs); rerun the sweep to retry them")
    return _decided(args, store, 1 if failed else 0)


def _decided(args, store: RunStore, code: int) -> int:
    """`sweep plan [NAME]` ends with what its plan decided, one line per question (the Study's plan report, as the
    `plans` command and the Plans page read it); `code`: the sweep's exit code, returned."""
    if args.grid != "plan" or not store.root.is_dir():
        return code
    name = args.plan or BUILTIN
    statuses = Study.open(store.root, warn=False).plan_report().of(name)
    if not statuses:
        return code
    decided, capped = sum(q.decided for q in statuses), sum(q.at_cap and not q.decided for q in statuses)
    seen = sum(q.seen_before_plan for q in statuses)
    print(f"plan {name}: {decided} of {len(statuses)} questions decided, {capped} undecided at the cap, "
          f"{len(statuses) - decided - capped} still open")
    for q in statuses:
        said = f"{q.verdict}{f' ({q.size})' if q.decided and q.size else ''}"
        where = f"look {q.look} of {q.looks_planned}" + (" (the cap)" if q.at_cap and not q.decided else "") \
            if q.decided or q.at_cap else q.needs
        extra = " †" * bool(q.seen_before_plan) + f" · {q.replicated}" * bool(q.replicated)  # a confirmation's outcome
        print(clean(f"  {q.question:21} {q.train_rows:>6,} rows {said:20} Δ {delta(q.mean_delta):7} n={q.n_pairs:<3} "
                    f"{where}{extra}"))
    if seen:
        print(f"  † judged on random seeds seen before the plan ({seen} of {len(statuses)})")
    return code
