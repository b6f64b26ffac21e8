"""Plan files in a store (vitcore.stats.plan_store) under attack: a registered hostile plan file
(with its SHA256SUMS line) is one line naming it in `plans` and `check`, no traceback in `compare` and `report`,
judges nothing and leaves the pages standing; a registration that fails (a full disk) leaves nothing behind; a
killed one's temporary file is named by `check` and removed by `check --fix`."""

import json
import os
import resource
import signal
import subprocess
import sys
import time

import pandas as pd
import pytest
from conftest import ROOT
from fakes import write_run

from vitcore.cli import main
from vitcore.config.run import RunConfig
from vitcore.stats import plan_store, plans
from vitcore.store.runs import RunStore

REGISTER = ["plan", "register", "p1", "--vary", "norm_placement=post", "--rows", "1000", "--seeds", "500-503",
            "--looks", "2,4"]
QUESTION = {"base": {}, "train_rows": 1000, "field": "norm_placement", "level": "post"}


def edited(text: str, indent=1, **changes) -> str:
    """A registered plan file's text with top-level fields changed, as a hand edit writes it (compact: indent None)."""
    data = {**json.loads(text), **changes}
    return json.dumps(data, indent=indent, separators=None if indent else (",", ":")) + "\n"


HOSTILE = {  # how a hand-made plan file differs from the one `plan register` wrote, and what the line says
    "1e999 in its looks": (lambda t: t.replace('"looks": [\n  2,\n  4\n ]', '"looks": [2, 1e999]'), "1e999"),
    "a note 200,000 deep": (lambda t: t.replace('"note": ""', '"note": ' + "[" * 200_000 + "]" * 200_000),
                            "nested deeper"),
    "a duplicate key": (lambda t: t.replace('"margin": 0.01,', '"margin": 0.01,\n "margin": 0.2,'), "twice"),
    # the meaning of a plan that parses (issue 57): each crashed a command or a page, or judged what it must not
    "a field no switch has": (lambda t: edited(t, questions=[{**QUESTION, "field": "seed", "level": 7}]),
                              "a question's field is a switch of the ViT"),
    "a level no switch has": (lambda t: edited(t, questions=[{**QUESTION, "field": "depth", "level": 3}]),
                              "depth's levels are 1, 2, 4; got 3"),
    "its base's own level": (lambda t: edited(t, questions=[{**QUESTION, "level": "pre"}]), "its base's own level"),
    "a question twice": (lambda t: edited(t, questions=[QUESTION, QUESTION], family_sizes=[1, 1]), "asked twice"),
    "15,000 copies of a question": (  # 870 KB, within the file's bound: refused by their count, before one is built
        lambda t: edited(t, indent=None, questions=[{**QUESTION, "field": "norm", "level": "batch"}] * 15_000),
        "at most 300 questions"),
    "more caps than questions": (lambda t: edited(t, caps=[{"field": "norm_placement", "level": "post", "cap": 2}] * 2),
                                 "at most one cap per question"),
    "a self-confirmation": (lambda t: edited(t, confirms="p1"), "confirms names the plan itself"),
    "a confirmation of no plan": (lambda t: edited(t, confirms="gone"), "confirms 'gone', which is not a plan here"),
    "a lone surrogate in its note": (lambda t: t.replace('"note": ""', '"note": "why \\ud800 not"'),
                                     "a note is ASCII text"),
    "a terminal escape in its note": (lambda t: t.replace('"note": ""', '"note": "\\u001b[31mred"'),
                                      "a note is ASCII text"),
}


def hostile_store(root, case: str):
    """A store with two synthetic pairs and the plan p1 rewritten as `case`, its SHA256SUMS line matching."""
    store = RunStore(root)
    for seed in (0, 1):
        write_run(store, RunConfig(train_rows=1000, seed=seed), 0.8)
        write_run(store, RunConfig(train_rows=1000, seed=seed, norm_placement="post"), 0.81)
    assert main([*REGISTER, "--store", str(root)]) == 0
    path = root / "plans" / "p1.json"
    edit, says = HOSTILE[case]
    text = edit(path.read_text())
    assert text != path.read_text()
    path.write_text(text)
    (root / "plans" / plans.SUMS).write_text(f"{plans.sha256(text)}  p1.json\n")
    return store, says


@pytest.mark.parametrize("case", HOSTILE)
def test_a_registered_hostile_plan_is_one_line_in_every_command_and_judges_nothing(tmp_path, capsys, case):
    store, says = hostile_store(tmp_path / "runs", case)
    found, problems = plan_store.load(store.root)
    assert [p.name for p in found] == ["builtin"] and len(problems) == 1 and problems[0].startswith("plan p1.json: ")
    assert says in problems[0]
    capsys.readouterr()
    started = time.monotonic()
    assert main(["plans", "--store", str(store.root), "--out", str(tmp_path / "out")]) == 1  # a plan refused: named
    assert time.monotonic() - started < 60  # 15,000 copies of a question took 343 s: refused before any is built
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "p1.json" in err and says in err and "Traceback" not in err
    assert "p1" not in set(pd.read_csv(tmp_path / "out" / "plans.csv")["plan"])
    assert main(["check", "--store", str(store.root)]) == 1
    out = capsys.readouterr().out
    assert [line for line in out.splitlines() if "p1.json" in line] == [f"plans: {problems[0]}"]


@pytest.mark.slow  # every judging command per case: over 1 s each
@pytest.mark.parametrize("case", HOSTILE)
def test_no_command_breaks_beside_a_hostile_plan(tmp_path, capsys, case):
    store, _ = hostile_store(tmp_path / "runs", case)
    assert main(["compare", "--norm-placement", "post", "--train-rows", "1000", "--store", str(store.root),
                 "--out", str(tmp_path / "cmp")]) == 0
    assert "Traceback" not in capsys.readouterr().err
    assert main(["report", "--store", str(store.root), "--out", str(tmp_path / "report")]) == 0
    assert "Traceback" not in capsys.readouterr().err
    for command in (["claims"], ["effects", "--out", str(tmp_path / "effects")]):
        assert main([*command, "--store", str(store.root)]) == 0
        assert "Traceback" not in capsys.readouterr().err


@pytest.mark.slow
@pytest.mark.parametrize("page", ["views/plans.py", "views/claims.py", "views/vit_vs_convnet.py"])
def test_the_pages_render_beside_a_hostile_plan(tmp_path, monkeypatch, page):
    from streamlit.testing.v1 import AppTest
    from test_app_damaged_store import frame_opening

    from vitcore.app import state

    store, _ = hostile_store(tmp_path / "runs", "a note 200,000 deep")
    monkeypatch.setattr(state, "STORE_PATH", str(store.root))
    (tmp_path / "app").mkdir()
    at = AppTest.from_file(str(frame_opening(page, tmp_path / "app")), default_timeout=180).run()
    assert not at.exception, [e.message for e in at.exception]
    if page == "views/plans.py":
        assert any("Left out" in w.value and "plan p1.json" in w.value and "nested deeper than 8" in w.value
                   for w in at.warning)
    # every page: the frame's note names the plan that judges nothing ("the pages render with a note")
    assert any("plan p1.json" in w.value and "it judges nothing" in w.value for w in at.warning)


PLANTED = ("a field no switch has", "a self-confirmation", "a lone surrogate in its note",
           "15,000 copies of a question")
MARKDOWN_NOTE = "# Verdict: better\n**replicated** :red[worse] $x^2$ <b>bold</b>"


def planted_store(root) -> RunStore:
    """hostile_store's runs with p1 a plan whose note is Markdown, and beside it one registered hostile plan per
    PLANTED case (h0.json, h1.json, ...: each with its SHA256SUMS line)."""
    store, _ = hostile_store(root, "a duplicate key")
    folder = root / "plans"
    for name in ("p1.json", plans.SUMS):
        (folder / name).unlink()
    assert main([*REGISTER, "--store", str(root)]) == 0
    text = (folder / "p1.json").read_text()  # as registered without a note: each case edits it
    for name in ("p1.json", plans.SUMS):
        (folder / name).unlink()
    assert main([*REGISTER, "--note", MARKDOWN_NOTE, "--store", str(root)]) == 0
    for k, case in enumerate(PLANTED):
        edit, _ = HOSTILE[case]
        hostile = edit(text).replace('"p1"', f'"h{k}"')  # its name (and a self-confirmation's)
        (folder / f"h{k}.json").write_text(hostile)
        with open(folder / plans.SUMS, "a") as sums:
            sums.write(f"{plans.sha256(hostile)}  h{k}.json\n")
    found, problems = plan_store.load(root)
    assert [p.name for p in found] == ["builtin", "p1"] and len(problems) == len(PLANTED), problems
    return store


@pytest.mark.slow  # every page of the app, each through the real frame
def test_every_page_renders_beside_hostile_plans_and_names_them(tmp_path, monkeypatch):
    """Issue 57's plans on one store (a field no switch has, a self-confirmation, a lone surrogate, 15,000 copies of a
    question): every page renders without an exception and names each; the Plans page shows a note as text."""
    from streamlit.testing.v1 import AppTest
    from test_app_damaged_store import frame_opening, pages

    from vitcore.app import state

    store = planted_store(tmp_path / "runs")
    monkeypatch.setattr(state, "STORE_PATH", str(store.root))
    for page in pages():
        folder = tmp_path / page.replace("/", "-")
        folder.mkdir()
        at = AppTest.from_file(str(frame_opening(page, folder)), default_timeout=180).run()
        assert not at.exception, (page, [e.message for e in at.exception])
        for k in range(len(PLANTED)):
            assert any(f"plan h{k}.json" in w.value and "it judges nothing" in w.value for w in at.warning), (page, k)
        if page == "views/plans.py":  # the note as written, in a text element; no Markdown drew it
            assert MARKDOWN_NOTE in [t.value for t in at.text]
            assert not any("Verdict: better" in m.value for m in [*at.markdown, *at.caption])


@pytest.mark.slow  # a child process per case, over 1 s each: the slow tier (docs/contributing.md)
@pytest.mark.parametrize("failing", ["its text", "its hash line"])
def test_a_full_disk_registers_nothing_and_leaves_the_name_free(tmp_path, failing):
    """Before: the plan file was created, its write failed, the empty file stayed: the name was taken for ever and
    `check` named it. Now the file and its hash line appear together or not at all. The disk fills for real: a
    fresh `plan register` whose files may not grow past `limit` bytes (RLIMIT_FSIZE: the write that crosses it is
    cut short, the next fails), with room for the plan's text but not its whole hash line, or for neither."""
    for name in "abcdefg":  # SHA256SUMS longer than the new plan's text: its line is the write that fails
        assert main(["plan", "register", name, *REGISTER[3:], "--store", str(tmp_path)]) == 0
    sums = (tmp_path / "plans" / plans.SUMS).read_bytes()
    assert len(sums) > len(plans.make("p1", [("norm_placement", ("post",))], (1000,), (500, 503), (2, 4)).text())
    limit = len(sums) + 30 if failing == "its hash line" else 200

    def small_disk():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails (EFBIG), not the process
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    done = subprocess.run([sys.executable, "-m", "vitcore", *REGISTER, "--store", str(tmp_path)], cwd=ROOT,
                          capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(ROOT)},
                          preexec_fn=small_disk, timeout=300)
    assert done.returncode == 1 and "File too large" in done.stderr and "Traceback" not in done.stderr
    assert sorted(os.listdir(tmp_path / "plans")) == sorted([plans.SUMS, *(f"{n}.json" for n in "abcdefg")])
    assert (tmp_path / "plans" / plans.SUMS).read_bytes() == sums
    assert main(["check", "--store", str(tmp_path)]) == 0  # nothing left to name
    assert main([*REGISTER, "--store", str(tmp_path)]) == 0  # the name is free
    assert "p1" in [p.name for p in plan_store.load(tmp_path)[0]]


def test_a_killed_registers_temporary_file_is_named_by_check_and_removed_by_fix(tmp_path, capsys):
    assert main([*REGISTER, "--store", str(tmp_path)]) == 0
    temp = tmp_path / "plans" / f"{plan_store.TEMP}p2-0123456789ab"
    temp.write_text('{"half": ')  # what a register killed mid-write leaves
    assert main(["check", "--store", str(tmp_path)]) == 1
    assert f"plans/{temp.name}: unfinished write" in capsys.readouterr().out
    assert main(["check", "--fix", "--store", str(tmp_path)]) == 1 and temp.exists()  # too young to be debris
    old = time.time() - 2 * 3600
    os.utime(temp, (old, old))
    assert main(["check", "--fix", "--store", str(tmp_path)]) == 0
    assert f"plans/{temp.name}: removed (unfinished write)" in capsys.readouterr().out and not temp.exists()
    assert [p.name for p in plan_store.load(tmp_path)[0]] == ["builtin", "p1"]


def _confirm_beside(root, ended: bool):
    """A store holding the committed confirm.json with its SHA256SUMS line, that line's newline cut when not `ended`."""
    folder = root / "plans"
    folder.mkdir(parents=True)
    committed = ROOT / "cached_runs" / "plans"
    (folder / "confirm.json").write_bytes((committed / "confirm.json").read_bytes())
    line = next(line for line in (committed / plans.SUMS).read_text().splitlines() if line.endswith("  confirm.json"))
    (folder / plans.SUMS).write_text(line + ("\n" if ended else ""))
    return folder


@pytest.mark.parametrize("ended", [True, False])
def test_registering_beside_an_unterminated_last_line_keeps_that_plan_registered(tmp_path, ended):
    """Issue 57: a SHA256SUMS whose last line lacked its newline had the new hash glued onto it: confirm.json and the
    new plan both read 'not in SHA256SUMS'. The line is ended first."""
    folder = _confirm_beside(tmp_path, ended)
    assert main([*REGISTER, "--store", str(tmp_path)]) == 0
    found, problems = plan_store.load(tmp_path)
    assert [p.name for p in found] == ["builtin", "confirm", "p1"] and problems == []
    assert (folder / plans.SUMS).read_text().count("\n") == 2


def test_a_failed_registration_leaves_an_unterminated_sums_file_as_it_was(tmp_path, monkeypatch):
    """The newline that ends the last line is written with the new hash line, and cut back with it on a failure."""
    import errno

    folder = _confirm_beside(tmp_path, ended=False)
    before = (folder / plans.SUMS).read_bytes()
    real = plan_store._write

    def full_disk(handle, data):
        if data.endswith(b"  p1.json\n"):  # the hash line: half of it lands, then the disk is full
            os.write(handle, data[: len(data) // 2])
            raise OSError(errno.ENOSPC, "No space left on device")
        real(handle, data)

    monkeypatch.setattr(plan_store, "_write", full_disk)
    with pytest.raises(OSError, match="not registered"):
        plan_store.register(tmp_path, plans.make("p1", [("norm_placement", ("post",))], (1000,), (500, 503), (2, 4)))
    assert (folder / plans.SUMS).read_bytes() == before
    assert sorted(os.listdir(folder)) == ["SHA256SUMS", "confirm.json"]


def test_plans_confirming_each_other_and_their_confirmations_judge_nothing(tmp_path, capsys):
    """Two plans confirming each other (each read 'replicated' against the other), and a third confirming one of them:
    all three named, none judging; a plan confirming a plan that judges keeps judging."""
    assert main([*REGISTER, "--store", str(tmp_path)]) == 0
    folder = tmp_path / "plans"
    text = (folder / "p1.json").read_text()
    for name, confirms in (("a", "b"), ("b", "a"), ("c", "a"), ("d", "p1")):
        made = edited(text, name=name, confirms=confirms)
        (folder / f"{name}.json").write_text(made)
        with open(folder / plans.SUMS, "a") as sums:
            sums.write(f"{plans.sha256(made)}  {name}.json\n")
    found, problems = plan_store.load(tmp_path)
    assert [p.name for p in found] == ["builtin", "d", "p1"]
    assert problems == ["plan a.json: confirms 'b' in a cycle of 2 confirmations (a -> b -> a): a confirmation "
                        "replicates a plan that does not confirm it back",
                        "plan b.json: confirms 'a' in a cycle of 2 confirmations (b -> a -> b): a confirmation "
                        "replicates a plan that does not confirm it back",
                        "plan c.json: confirms 'a', which judges nothing"]
    capsys.readouterr()
    assert main(["check", "--store", str(tmp_path)]) == 1
    assert sum(line.startswith("plans: plan ") for line in capsys.readouterr().out.splitlines()) == 3


@pytest.mark.parametrize("last", ["p0", "missing", None])
def test_a_long_chain_of_confirmations_is_followed_once(last):
    """2,000 plans each confirming the next (ending in a cycle, a missing plan, or a plan that confirms nothing): each
    plan is followed once, every line short; the chain judges exactly when its end does."""
    import dataclasses

    base = plans.make("x", [("norm_placement", ("post",))], (1000,), (500, 503), (2, 4))
    chain = [dataclasses.replace(base, name=f"p{k}", confirms=f"p{k + 1}" if k < 1_999 else last) for k in range(2_000)]
    started = time.monotonic()
    kept, problems = plan_store.confirmable(chain)
    assert time.monotonic() - started < 5  # quadratic was ~1 s, cubic minutes
    assert len(kept) == (2_000 if last is None else 0) and len(problems) == 2_000 - len(kept)
    assert all(len(line) < 300 for line in problems)
    if last == "missing":
        assert problems[-1] == "plan p1999.json: confirms 'missing', which is not a plan here"
        assert problems[0] == "plan p0.json: confirms 'p1', which judges nothing"
