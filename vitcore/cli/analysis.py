"""What the runs mean: `compare` (one selection against its baseline), `claims` (the source
article's and the papers' claims against our runs), `noise` (where the seed noise comes from) and
`diagnose-bn` (why BatchNorm ViTs collapse)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from vitcore.analysis import flips
from vitcore.article import claims
from vitcore.cli.common import (
    UsageError,
    add_io_flags,
    add_margin_flag,
    checked_margin,
    clean,
    existing_store,
    files_in,
    judging_parser,
    open_study,
    staged,
    usage,
    verdict_line,
    writable_file,
    writable_folder,
)
from vitcore.cli.runs import add_config_flags, config_from_args, field_type, given
from vitcore.config import numbers
from vitcore.config.numbers import whole_counts
from vitcore.config.run import RunConfig, default_baseline
from vitcore.stats import centres, estimates, testset
from vitcore.stats.compare import write
from vitcore.study import committed, words

COMPARE_FILES = ("metrics.csv", "pairs.csv", "classes.csv", "confusion_delta.csv")
FLIP_FILES = ("flips.csv", "flip_pairs.csv")  # when runs of both sides kept predictions.npy


def add_parsers(sub) -> None:
    compare = judging_parser(sub, "compare", help="paired Δs of one config (RunConfig flags) against a baseline: "
                                                  "metrics.csv, classes.csv, confusion_delta.csv, pairs.csv (+ "
                                                  "flips.csv, flip_pairs.csv when runs kept their predictions)")
    add_config_flags(compare, tracked=True)  # which fields were named: the rest may come from your own store
    compare.add_argument("--baseline", default="", metavar="FIELD=VALUE,...",
                         help="the baseline as changes to the article's ViT at the selection's train_rows "
                              "(e.g. model=convnet or norm=layer,train_rows=4000); default: the article's ViT, or "
                              "in a store without it, your own study's centre (e.g. epochs=2)")
    add_io_flags(compare)
    compare.set_defaults(handler=_compare)

    claims = judging_parser(sub, "claims", help="the source article's and the papers' claims checked against the runs")
    add_io_flags(claims, out="claims.csv")
    claims.set_defaults(handler=_claims)

    noise = sub.add_parser("noise", help="where the seed noise comes from: test-accuracy variance split into data "
                                         "sample, init, batch order and interactions (noise.csv, pairing.csv)")
    add_margin_flag(noise)
    add_io_flags(noise)
    noise.set_defaults(handler=_noise)

    diagnose = sub.add_parser("diagnose-bn", help="BatchNorm ViT runs with weights: test accuracy with stored vs "
                                                  "re-estimated BatchNorm statistics (bn.csv)")
    add_io_flags(diagnose)
    diagnose.set_defaults(handler=_diagnose_bn)


def parse_baseline(text: str, selection: RunConfig) -> RunConfig:
    """'field=value,...' applied to the default baseline (the article's ViT at the selection's train_rows)."""
    fields = {f.name: f for f in dataclasses.fields(RunConfig)}
    changes = {}
    for item in filter(None, (part.strip() for part in text.split(","))):
        name, sep, value = item.partition("=")
        name = name.strip().replace("-", "_")
        if not sep or name not in fields:
            raise UsageError(f"--baseline takes FIELD=VALUE items with FIELD one of {', '.join(fields)}; got {item!r}")
        if name in changes:
            raise UsageError(f"--baseline gives {name} more than once ({text!r}); give each field once")
        kind = field_type(name)
        try:
            changes[name] = kind(value.strip())
        except ValueError:
            raise UsageError(f"--baseline {name} must be a {kind.__name__}, got {value.strip()!r}") from None
    with usage():
        return default_baseline(selection).replace(**changes)


def _compare(args) -> int:
    margin = checked_margin(args.margin)
    selection = config_from_args(args)
    parse_baseline(args.baseline, selection)  # a bad --baseline exits 2 before the store is read
    store = existing_store(args.store)  # the store first: a bad --store leaves no output folder behind
    out = writable_folder(args.out, "--out")
    files_in(out, COMPARE_FILES + FLIP_FILES, "--out")
    study = open_study(store)
    # A store of your own study trained with `--base epochs=2`: the fields it holds at one value and the command
    # does not name come from it (it can hold no run without them), and the command says so.
    selection, took = centres.filled(study.runs, selection, given(args))
    baseline, base_took = parse_baseline(args.baseline, selection), {}
    if not args.baseline.strip():  # your own study (no article's ViT stored): its centre, as the app's sidebar
        baseline = study.default_baseline(selection)
    else:
        baseline, base_took = centres.filled(study.runs, baseline, {*baseline_fields(args.baseline), "train_rows"})
    try:
        study.stored(selection, baseline, {"selection": _flag, "baseline": _baseline_item})  # the library's words
    except ValueError as error:
        raise UsageError(str(error) + _baseline_hint(study, selection, baseline)) from None
    if took or base_took:
        print("from this store (every run here has " + ("it" if len({**took, **base_took}) == 1 else "them")
              + "; name a flag to ask for another value): "
              + ", ".join(filter(None, (centres.spelled(took, _flag), centres.spelled(base_took, _baseline_item)))))
    # test accuracy's Δ with the test set's sampling, as on every page
    result = study.compare(selection, baseline, margin, confusions=study.confusions((selection, baseline)))
    how = (f"paired over random seeds {words.seed_list(result.seeds)} ({len(result.seeds)} pairs; each row's n: the "
           "pairs its verdict reads)" if result.paired
           else "UNPAIRED (Welch): the sides differ in train_rows")
    print(f"{selection.label()} ({selection.train_rows:,} rows) − {baseline.label()} "
          f"({baseline.train_rows:,} rows), {how}")
    if not args.baseline.strip() and baseline != parse_baseline(args.baseline, selection):
        print(f"baseline: this store's centre (it holds no run of the article's ViT); --baseline "
              f"{centres.changes_text(baseline)} says so, --baseline FIELD=VALUE names another")
    print(f"verdicts: {result.family.caption()}")
    for row in result.metrics.to_dict("records"):
        print("  " + verdict_line(row))
        if words.unbounded(row) is None and (line := testset.sentence(row, numbers.digits(row["metric"]))) is not None:
            print(f"  {'':21} {line}")
    with staged(out) as stage:
        written = [out / Path(path).name for path in write(result, stage)]
        if result.paired:
            written += [out / Path(path).name for path in _write_flips(study, selection, baseline, stage)]
    print("wrote " + ", ".join(clean(str(path)) for path in written))
    return 0


def _flag(name: str, value) -> str:
    """A RunConfig field as `compare` takes it: '--train-rows 300'."""
    return f"--{name.replace('_', '-')} {value}"


def _baseline_item(name: str, value) -> str:
    return f"--baseline {name}={value}"


def baseline_fields(text: str) -> set[str]:
    """The fields a --baseline text names ('norm=batch,epochs=2': {'norm', 'epochs'}); parse_baseline checks them."""
    return {item.partition("=")[0].strip().replace("-", "_") for item in text.split(",") if item.strip()}


def _baseline_hint(study, selection: RunConfig, baseline: RunConfig) -> str:
    """What to pass when the baseline has no runs: `--baseline FIELD=VALUE`, naming the store's centre
    (stats.centres.store_centre) at the selection's rows when that has runs ('' when the baseline has runs)."""
    if not study.runs_of(baseline).empty or study.runs_of(selection).empty:
        return ""  # the selection is what has no runs
    centre = centres.store_centre(study.runs)
    centre = centre and centre.replace(train_rows=selection.train_rows)
    if centre is not None and centre != baseline and not study.runs_of(centre).empty:
        return f"; this store's centre, {centre.label()}, has runs: --baseline {centres.changes_text(centre)}"
    return "; name a stored baseline with --baseline FIELD=VALUE (`python -m vitcore export` lists the stored runs)"


def _write_flips(study, selection: RunConfig, baseline: RunConfig, out) -> list:
    """flips.csv (every image flipped in some pair, against its null) and flip_pairs.csv (McNemar per pair), from
    the Study's flip report (the Ablations page's): nothing without a test set or a pair that kept predictions."""
    report = study.flip_report(selection, baseline)
    if report is None or not report.n_pairs:
        return []
    report.images.to_csv(out / FLIP_FILES[0], index=False)
    report.pairs.to_csv(out / FLIP_FILES[1], index=False)
    print(flips.summary(report))
    return [out / name for name in FLIP_FILES]


def _claims(args) -> int:
    margin = checked_margin(args.margin)
    store = existing_store(args.store)
    out = writable_file(args.out, "--out", "claims.csv")
    study = open_study(store)  # test accuracy with the test set's sampling, as on the Claims page
    table = study.claims(margin)
    with staged(out.parent) as stage:
        whole_counts(table).to_csv(stage / out.name, index=False)
    counts = claims.tally_of(table)
    print(f"{clean(str(out))}: {len(table)} ledger rows — {counts['counted']} distinct comparisons counted once each, "
          f"{counts['not_counted']} shown beside and not counted (the `tally` column says why); each judged in its "
          "comparison's family (as on the Ablations page)")
    margins = sorted({margin, *estimates.TALLY_MARGINS})
    for row in study.tally(margins).to_dict("records"):  # the same estimates, judged at each margin
        print("  margin " + claims.tally_line(row,
                                              row["margin"]) + ("  (this file)" if row["margin"] == margin else ""))
    print(f"  why ±{estimates.MARGIN:g}: {estimates.MARGIN_REASON}")
    unproven = sum(words.source(row) == words.BLIND_UNPROVEN for row in table.to_dict("records"))
    if unproven:  # a blind plan's verdicts whose order git does not prove (a shallow clone, an uncommitted plan)
        print(f"  {unproven} verdict{'' if unproven == 1 else 's'}: {words.BLIND_UNPROVEN} — "
              "`python -m vitcore plans` says why")
    return 0


def _diagnose_bn(args) -> int:
    store = existing_store(args.store)
    out = writable_folder(args.out, "--out")
    files_in(out, (committed.BN_FILE,), "--out")
    with usage():  # no BatchNorm run with weights in the store: exit 2, nothing written
        frame = committed.diagnose_bn(store, progress=lambda done, total, row: print(
            f"  {done}/{total} {row['label']} rows {row['train_rows']:,}: test {row['test_accuracy']:.4f} stored, "
            f"{row['test_accuracy_recalibrated']:.4f} recalibrated", flush=True))
    with staged(out) as stage:
        frame.to_csv(stage / committed.BN_FILE, index=False)  # the committed file's format (analysis.bn.save_diagnosis)
    path = out / committed.BN_FILE
    print(words.bn_text(frame))
    print(f"wrote {clean(str(path))} ({len(frame)} runs)")
    return 0


NOISE_FILES = ("noise.csv", "pairing.csv")


def _noise(args) -> int:
    margin = checked_margin(args.margin)
    store = existing_store(args.store)  # the store first: a bad --store leaves no output folder behind
    out = writable_folder(args.out, "--out")
    files_in(out, NOISE_FILES, "--out")
    components, pairing, advice = open_study(store).noise(margin)  # the Seed noise page's tables
    if components.empty:
        raise UsageError(f"no crossed runs (2+ data, init and order seeds of one config) in {store.root}: "
                         f"`python -m vitcore sweep noise` trains them")
    components.to_csv(out / NOISE_FILES[0], index=False)
    pairing.to_csv(out / NOISE_FILES[1], index=False)
    print("\n".join(advice))
    print("wrote " + ", ".join(clean(str(out / name)) for name in NOISE_FILES))
    return 0
