"""What the store's runs say: `effects`, `report`; the attention-cost benchmark `bench-attention` and the timing
set `bench-timing`."""

from __future__ import annotations

from vitcore.analysis import cost, timing
from vitcore.analysis.cost import BENCH_CSV
from vitcore.cli.common import (
    UsageError,
    add_io_flags,
    add_store_flag,
    checked_margin,
    clean,
    existing_store,
    files_in,
    judging_parser,
    open_study,
    staged,
    writable_file,
    writable_folder,
)
from vitcore.config import environment
from vitcore.config.numbers import whole_counts
from vitcore.config.run import ARTICLE_MODELS, RunConfig
from vitcore.run import custom
from vitcore.stats import centres
from vitcore.stats import summaries as stats
from vitcore.stats.estimates import TIMED_PAIRS

REPORT_FILES = ("headline.csv", "headline_deltas.csv", "headline.md")


def add_parsers(sub) -> None:
    effects = judging_parser(sub, "effects", help="seed-paired main effects of the four switches, and of every other "
                                                  "switch changed alone (one cell), as CSV")
    add_io_flags(effects, out="effects.csv")
    effects.add_argument("--base", default="", metavar="FIELD=VALUE,...",
                         help="the centre of your own study, as `sweep --base` trained it (e.g. epochs=5): the "
                              "effects around the article's ViT with these changes (default: the article's ViT)")
    effects.set_defaults(handler=_effects)

    report = sub.add_parser("report",
                            help="the source article's headline table re-measured: headline.csv + headline.md")
    add_io_flags(report)
    report.set_defaults(handler=_report)

    attention = sub.add_parser("bench-attention", help="measure one attention layer's forward time vs tokens")
    attention.add_argument("--out", default=str(BENCH_CSV), help="output CSV file (default: the package's copy, "
                                                                  "which the Token cost page reads)")
    attention.add_argument("--repeats", type=int, default=15, help="timed calls per token count, at least 1")
    attention.set_defaults(handler=_bench_attention)

    timed = sub.add_parser("bench-timing", help="the dedicated timing set: the article's ViT at patch 4, 7 and 14 "
                                                "and its convnet, interleaved, each run on a quiet machine")
    add_store_flag(timed)  # the store whose timing set this is: the runs go into timing_runs/ beside it
    timed.add_argument("--pairs", type=int, default=TIMED_PAIRS,
                       help=f"random seeds per config, at least 2 (a seconds verdict needs {TIMED_PAIRS})")
    timed.set_defaults(handler=_bench_timing)


def _study(path: str):
    """The store's Study, which must hold valid runs (test accuracy's verdicts include the test set's
    sampling, as on every page)."""
    study = open_study(existing_store(path))
    if study.runs.empty:
        raise UsageError(f"the store at {study.store.root} holds no valid runs")
    return study


def _base(text: str):
    """effects' --base: the article's ViT with `sweep --base`'s changes (vitcore.run.custom.parse_base), or None."""
    if not text.strip():
        return None
    try:
        return RunConfig(**custom.parse_base(text))
    except ValueError as error:
        raise UsageError(str(error)) from None


def _effects(args) -> int:
    checked_margin(args.margin)
    base = _base(args.base)
    study = _study(args.store)  # the store first: a bad --store leaves no output folder behind
    out = writable_file(args.out, "--out", "effects.csv")
    if base is None and (centre := study.centre()) is not None and centres.off_article(centre):
        base = RunConfig(**centres.off_article(centre))  # your own study: around its centre, as `compare` and the app
        print(f"around this store's centre, {base.label()} (it holds no run of the article's ViT): "
              f"--base {centres.changes_text(centre)} says so")
    effects = study.effects(args.margin, base)
    if effects.empty:
        centre = f"at {base.label()} (--base)" if base else "at the article's ViT (another centre: --base FIELD=VALUE)"
        raise UsageError(f"no main effects in {args.store}: it needs ViT runs {centre} and at least one switch "
                         f"flipped from it, at the same train_rows and seed")
    with staged(out.parent) as stage:
        whole_counts(effects).to_csv(stage / out.name, index=False)
    counts = effects["verdict"].value_counts()
    print(f"{clean(str(out))}: {len(effects):,} main effects from {len(study.runs):,} runs (both tests "
          "Bonferroni-adjusted within each family: " + "; ".join(f"{name}, m = {int(m)}" for name, m in
                                      effects.groupby("family")["family_size"].max().items()) + "): "
          + ", ".join(f"{counts[v]} {v}" for v in stats.VERDICTS if v in counts))
    return 0


def _report(args) -> int:
    study = _study(args.store)  # the store first: a bad --store leaves no output folder behind
    out = writable_folder(args.out, "--out")
    files_in(out, REPORT_FILES, "--out")
    with staged(out) as stage:
        sentences = study.write_report(stage)
    for sentence in sentences:
        print(sentence)
    print("wrote " + ", ".join(clean(str(out / name)) for name in REPORT_FILES))
    return 0


def _bench_timing(args) -> int:
    if args.pairs < 2:
        raise UsageError("--pairs must be at least 2")
    vit = ARTICLE_MODELS["vit"]
    configs = [vit, vit.replace(patch_size=4), vit.replace(patch_size=14), ARTICLE_MODELS["convnet"]]
    folder = environment.timing_path(args.store)
    if folder is None:
        raise UsageError("the store is empty (VITCORE_STORE=\"\"): name the store whose timing set to train")
    trained = timing.bench_timing(configs, args.pairs, folder)
    print(f"{trained} runs trained into {clean(str(folder))} (timing context {timing.REFERENCE!r}), the timing set of "
          f"{clean(str(args.store))}")
    return 0


def _bench_attention(args) -> int:
    if args.repeats < 1:
        raise UsageError("--repeats must be at least 1")
    out = writable_file(args.out, "--out", "attention_cost.csv")  # before the benchmark, not after it
    from vitcore.run.train import configure_tensorflow  # noqa: PLC0415 - TensorFlow

    configure_tensorflow()
    table = cost.bench_attention(repeats=args.repeats)
    with staged(out.parent) as stage:
        cost.write_attention_bench(table, stage / out.name)
    for row in table.itertuples():
        print(f"{row.tokens:>4} tokens  {row.attention_entries:>8,} entries  median {row.median_ms:8.3f} ms "
              f"(min {row.min_ms:.3f}, max {row.max_ms:.3f})")
    print(f"wrote {clean(str(out))}")
    return 0
