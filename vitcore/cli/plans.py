"""`plan register`: write a plan before its runs; `plans`: every plan's questions, looks and verdicts.

    python -m vitcore plan register mine --vary depth=1,4 --rows 1000 --seeds 100-119 --looks 10,20
    python -m vitcore plans --out out/        # plans.csv, questions.csv
"""

from __future__ import annotations

import argparse
import sys

import numpy as np
import pandas as pd

from vitcore.cli.common import (
    UsageError,
    add_store_flag,
    checked_margin,
    clean,
    existing_store,
    open_study,
    staged,
    usage,
    writable_folder,
)
from vitcore.cli.sweep import _rows_list, _seed_range
from vitcore.config.numbers import whole_counts
from vitcore.config.switches import setting
from vitcore.run import custom
from vitcore.stats.plan_report import COMMIT_WITHIN
from vitcore.study import Study


def add_parsers(sub) -> None:
    plan = sub.add_parser("plan", help="register a plan (questions, looks, random seeds) before its runs")
    verbs = plan.add_subparsers(dest="verb", required=True, parser_class=plan.__class__)
    register = verbs.add_parser("register", help="write a new plan file with its sha256 into the store")
    register.add_argument("name", help="the plan's name: 1-40 of a-z, 0-9, '-', '_'")
    register.add_argument("--vary", action="append", default=[], metavar="FIELD=V1,V2,...", required=True,
                          help="a question per level other than the base's, as `sweep --vary` (repeat for more fields)")
    register.add_argument("--base", default="", metavar="FIELD=VALUE,...",
                          help="changes to the article's ViT every question's base shares (as `sweep --base`)")
    register.add_argument("--cross", action="store_true",
                          help="not for plans: a plan's questions are single-field changes (refused with a reason)")
    register.add_argument("--rows", type=_rows_list, default=(1_000, 4_000), metavar="N[,N...]",
                          help="train_rows of the questions (default 1000,4000)")
    register.add_argument("--seeds", type=_seed_range, required=True, metavar="A-B",
                          help="the plan's random seeds: as many as the last look (look n uses the first n)")
    register.add_argument("--looks", type=_looks, default=(10, 20, 30, 40), metavar="N,N,...",
                          help="paired random seeds at each look (default 10,20,30,40); the last is the cap")
    register.add_argument("--cap", action="append", default=[], type=_cap, metavar="FIELD=LEVEL:N",
                          help="a smaller cap for one slow variant (e.g. patch_size=2:20)")
    register.add_argument("--margin", type=float, default=0.01, help="the equivalence margin (default 0.01)")
    register.add_argument("--confirms", default=None, metavar="PLAN",
                          help="the plan whose verdicts this one replicates on fresh random seeds")
    register.add_argument("--note", default="", help="why the plan exists (kept in its file)")
    add_store_flag(register)
    register.set_defaults(handler=_register)
    listing = sub.add_parser("plans", help="every plan's questions, looks and verdicts: plans.csv, questions.csv")
    listing.add_argument("--out", default=None, help="a folder for plans.csv and questions.csv (else: printed)")
    add_store_flag(listing)
    listing.set_defaults(handler=_plans)


def _looks(text: str) -> tuple[int, ...]:
    try:
        return tuple(int(part) for part in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(f"looks are whole numbers separated by commas, got {text!r}") from None


def _cap(text: str) -> tuple[str, object, int]:
    left, _, cap = text.rpartition(":")
    try:
        field, levels = custom.parse_vary(left, "--cap")
        return field, levels[0], int(cap)
    except ValueError as error:
        raise argparse.ArgumentTypeError(f"--cap is FIELD=LEVEL:N ({error})") from None


def _register(args) -> int:
    if args.cross:
        raise UsageError("a plan's questions are single-field changes of its base; leave out --cross "
                         "(crossed cells stay exploratory: sweep them with `sweep --vary ... --cross`)")
    checked_margin(args.margin)
    with usage():
        vary = [custom.parse_vary(text) for text in args.vary]
        study = Study.open(args.store, warn=False)  # a store not made yet holds no run: the plan comes first
        plan = study.draft_plan(args.name, vary, args.rows, args.seeds, args.looks, args.margin,
                                custom.parse_base(args.base), args.cap, args.confirms, args.note)
        writable_folder(study.store.root, "--store")
        registered = study.register_plan(plan)
    path, store = registered.path, study.store
    print(f"registered plan {plan.name}: {len(plan.questions)} questions, looks {','.join(map(str, plan.looks))}, "
          f"random seeds {plan.seeds_text}, margin ±{plan.margin}, at {plan.registered_at}")
    print(f"{clean(str(path))}  sha256 {registered.sha256}")
    if plan.on_disk:
        print(f"warning: {len(plan.on_disk)} of its runs are stored already (its file lists them): its verdicts on "
              "them read 'seen before the plan', never blind", file=sys.stderr)
    if registered.tracked:
        print(f"commit it within {COMMIT_WITHIN.seconds // 60} minutes and before any of its runs exists "
              f"(git then proves the order); then: "
              f"python -m vitcore sweep plan {plan.name} --workers 2")
    else:
        print(f"{clean(str(store.root))} is not in a git repository: nothing will prove this plan came before its runs "
              f"(every view says 'order not proven'); then: python -m vitcore sweep plan {plan.name} --workers 2")
    return 0


def _question_words(question: str, field, level) -> str:
    """'pooling class token' for the question `pooling=cls` (config.switches.setting, as the Plans page and the forest
    plot say it), its base's changes after a '|' kept; the question as written when it names no registered switch."""
    if not isinstance(field, str) or not field:
        return question
    _, bar, base = question.partition(" | ")
    return setting(field, level) + (f" | {base}" if bar else "")


def _whole(frame: pd.DataFrame) -> pd.DataFrame:
    """The console's copy of a table: a numeric column of whole numbers (a count; pandas makes it float beside a
    missing one: '19.0', 'NaN') printed as whole numbers and an empty cell, not a float; a fraction is left as it is."""
    out = frame.copy()
    for name in out.columns:
        column = out[name]
        if pd.api.types.is_bool_dtype(column) or not pd.api.types.is_numeric_dtype(column):
            continue
        values = column.dropna().astype(float)
        if len(values) and np.isfinite(values).all() and (values == values.round()).all():
            out[name] = ["" if pd.isna(value) else str(int(value)) for value in column]
    return out


def _plans(args) -> int:
    report = open_study(existing_store(args.store)).plan_report()
    for problem in report.problems:  # a plan that judges nothing: named, and the exit code says so
        print(f"refused: {clean(problem)}", file=sys.stderr)
    plan_table, questions = report.plans_frame(), report.questions_frame()
    if args.out is None:  # levels in the registry's words, counts as whole numbers (an empty cell for none)
        print(_whole(plan_table.drop(columns=["sha256", "commit"])).to_string(index=False))
        print()
        shown = questions.assign(question=[_question_words(*q) for q in zip(questions["question"], questions["field"],
                                                                             questions["level"])])
        print(_whole(shown[["plan", "question", "train_rows", "look", "verdict", "size", "seen_before_plan",
                            "discovery_verdict", "replicated", "needs"]]).to_string(index=False))
        return 1 if report.problems else 0
    out = writable_folder(args.out, "--out")
    with staged(out) as folder:
        whole_counts(plan_table).to_csv(folder / "plans.csv", index=False)
        whole_counts(questions).to_csv(folder / "questions.csv", index=False)
    print(f"wrote {clean(str(out / 'plans.csv'))} ({len(plan_table)} plans) and {clean(str(out / 'questions.csv'))} "
          f"({len(questions)} rows)")
    return 1 if report.problems else 0
