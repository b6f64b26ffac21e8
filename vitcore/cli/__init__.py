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
import difflib
import os
import sys

from vitcore.cli import analysis, plans, results, runs, sweep
from vitcore.cli.common import Parser, UsageError, clean, escaped_warnings
from vitcore.config import environment
from vitcore.data.fashion import DataError, data_dir_problem
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


def options(parser: argparse.ArgumentParser, prefix: str = "") -> dict[str, list[str]]:
    """Every subcommand's long options -> the subcommands that take it ('--patch-size': ['run', 'compare'])."""
    found: dict[str, list[str]] = {}
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for command, child in action.choices.items():
                for option, commands in options(child, f"{prefix}{command} ").items():
                    found.setdefault(option, []).extend(commands)
        elif prefix:
            for option in action.option_strings:
                if option.startswith("--") and option != "--help":
                    found.setdefault(option, []).append(prefix.strip())
    return found


def misplaced(parser: argparse.ArgumentParser, flag: str) -> str:
    """One line for an option given before any subcommand (`python -m vitcore --patchsize 4`): which subcommands
    take it, or the nearest option that one takes (difflib), and that the subcommand comes first."""
    known = options(parser)
    near = flag if flag in known else next(iter(difflib.get_close_matches(flag, known, n=1, cutoff=0.75)), None)
    if near is None:
        return (f"{flag} is not an option of any subcommand; the subcommand comes first: "
                f"{parser.prog} COMMAND [options] (--help lists the commands)")
    said = flag if near == flag else f"{flag} is not an option: did you mean {near}? It"
    takers = ", ".join(known[near][:4]) + (f" and {len(known[near]) - 4} more" if len(known[near]) > 4 else "")
    return f"{said} goes after a subcommand ({takers} take it): {parser.prog} {known[near][0]} {near} …"


def unrecognized(parser: argparse.ArgumentParser, argv: list[str], message: str) -> str:
    """argparse's 'PROG: unrecognized arguments: --patchsize 4' with the nearest option of the subcommand given."""
    _, found, rest = message.partition(": unrecognized arguments: ")
    known = options(parser)
    names = {name for commands in known.values() for name in commands}
    words = [token for token in argv if not token.startswith("-")]
    command = next((" ".join(words[:n]) for n in (2, 1) if " ".join(words[:n]) in names), None)
    mine = [option for option, commands in known.items() if command in commands]
    for token in rest.split() if found else ():
        flag = token.partition("=")[0]
        if flag.startswith("--") and flag not in mine:
            near = difflib.get_close_matches(flag, mine, n=1, cutoff=0.75)
            return message + (f" (did you mean {near[0]}?)" if near else "")
    return message


def _main(argv: list[str] | None) -> int:
    try:
        parser, argv = build_parser(), sys.argv[1:] if argv is None else list(argv)
        if argv and argv[0].startswith("--") and argv[0] != "--help":
            raise UsageError(f"{parser.prog}: {misplaced(parser, argv[0].partition('=')[0])}")
        try:
            args = parser.parse_args(argv)
        except UsageError as error:
            raise UsageError(unrecognized(parser, argv, str(error))) from None
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
