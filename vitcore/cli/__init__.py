"""`python -m vitcore ...`: train one run or a grid, check and export a store, report and benchmark.

The only package that knows argparse, and nothing in the library imports it. Library functions
raise ValueError naming what is allowed; here that becomes one line on stderr and exit code 2,
always before any training or benchmark starts (paths are checked first). TensorFlow is imported
only by the commands that train or time it. One module per command group:

    runs     run, check, export, bench
    sweep    sweep
    plans    plan register, plans
    results  effects, report, bench-attention
    analysis compare, claims, noise, diagnose-bn
"""

from __future__ import annotations

import argparse
import os
import sys

from vitcore.cli import analysis, plans, results, runs, sweep
from vitcore.cli.common import Parser, UsageError, clean, escaped_warnings
from vitcore.config import environment
from vitcore.data.fashion import DataError
from vitcore.data.folder import data_dir_problem
from vitcore.run import TRAIN_INSTALL

GROUPS = (runs, sweep, plans, results, analysis)  # each adds its subcommands; each subcommand sets `handler`


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(prog="python -m vitcore", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True, parser_class=Parser)
    for group in GROUPS:
        group.add_parsers(sub)
    for action in sub._choices_actions:  # `python -m vitcore run --help` opens with the line the list shows
        command = sub.choices[action.dest]
        command.description = command.description or action.help[:1].upper() + action.help[1:] + "."
    return parser


def main(argv: list[str] | None = None) -> int:
    with escaped_warnings():  # every name printed is escaped: on stderr too, in the library's warnings
        return _main(argv)


def _main(argv: list[str] | None) -> int:
    try:
        args = build_parser().parse_args(argv)
        problems = environment.problems(budget=False, data=False)  # the training budget is the app's alone
        problems += filter(None, [data_dir_problem()])
        if problems:
            raise UsageError("; ".join(problems))
        return args.handler(args)
    except (UsageError, DataError) as error:
        print(f"error: {clean(str(error))}", file=sys.stderr)
        return 2
    except ModuleNotFoundError as error:
        if error.name not in ("tensorflow", "keras"):
            raise
        print(f"error: this command trains or runs a model and needs TensorFlow: {TRAIN_INSTALL}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # the reader went away (`... | head`): stop quietly, as `ls | head` does
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except OSError as error:  # a full disk, a folder gone: one line; outputs are staged, so none is partial
        where = f": {error.filename}" if error.filename else ""
        print(clean(f"error: {error.strerror or error}{where}"), file=sys.stderr)
        return 1
