"""scripts/sync_docs.py: the README's and docs/methods-and-verdicts.md's lists of verdict, claim and reading words
are written from their one definition, so a word renamed at its constant is renamed in the docs by one command
(which every pytest session runs first, tests/conftest.py), and `--check` names a stale copy (CI)."""

import json
import shutil
import subprocess
import sys

import pytest
from conftest import ROOT, script

from vitcore.article import claims
from vitcore.stats import estimates, readings
from vitcore.stats.estimates import INCONCLUSIVE

sync_docs = script("sync_docs")
FILES = ("README.md", "docs/methods-and-verdicts.md")


@pytest.fixture
def docs(tmp_path):
    """A copy of the two documents with generated blocks, laid out as in the repository."""
    for relative in FILES:
        (tmp_path / relative).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / relative, tmp_path / relative)
    return tmp_path


def test_every_definition_is_in_its_generated_block():
    generated = sync_docs.blocks()
    text = {relative: "\n".join(block for _, block in blocks) for relative, blocks in generated.items()}
    for word, meaning in estimates.DEFINITIONS.items():
        assert f"- **{word}** — {meaning}" in text["README.md"]
    assert estimates.MARGIN_REASON in text["README.md"]
    for direction in claims.REGISTRY:
        assert f"- **{direction.word}** — {direction.meaning}" in text["docs/methods-and-verdicts.md"]
    for word, meaning in readings.DEFINITIONS.items():
        assert f"- **{word}** — {meaning}" in text["docs/methods-and-verdicts.md"]


def test_a_stale_block_is_named_by_check_and_rewritten_by_sync(docs):
    readme = docs / "README.md"
    original = readme.read_text()
    readme.write_text(original.replace(f"- **{INCONCLUSIVE}** — ", f"- **{INCONCLUSIVE}, stale** — ", 1))
    assert sync_docs.sync(docs, check=True) == ["README.md"]
    assert f"**{INCONCLUSIVE}, stale**" in readme.read_text()  # --check writes nothing
    assert sync_docs.sync(docs) == ["README.md"] and readme.read_text() == original
    assert sync_docs.sync(docs, check=True) == []
    # text outside the markers is the document's own: never touched
    readme.write_text(original.replace("## What the verdict words mean", "## What the words mean", 1))
    assert sync_docs.sync(docs) == [] and "## What the words mean" in readme.read_text()


@pytest.mark.parametrize("damage", ["begin", "end", "twice"])
def test_missing_or_doubled_markers_are_one_clear_error(docs, damage):
    methods = docs / "docs/methods-and-verdicts.md"
    text = methods.read_text()
    begin = sync_docs._begin("vitcore.stats.readings.DEFINITIONS")
    if damage == "begin":
        text = text.replace(begin, "")
    elif damage == "end":
        text = text.rsplit(sync_docs.END, 1)[0]
    else:
        text += f"\n{begin}\n"
    methods.write_text(text)
    with pytest.raises(ValueError, match="docs/methods-and-verdicts.md: .*readings.DEFINITIONS"):
        sync_docs.sync(docs)
    assert methods.read_text() == text  # nothing half-written


RENAMED = "unsettled-word"
RENAME_AND_SYNC = r'''
import importlib.util, json, sys
from pathlib import Path
import vitcore.stats
name = "vitcore.stats.estimates"
spec = importlib.util.find_spec(name)
lines = spec.loader.get_source(name).splitlines(keepends=True)
defined = [k for k, line in enumerate(lines) if line.split("=")[0].count("INCONCLUSIVE") == 1 and "=" in line]
assert len(defined) == 1, defined
lines[defined[0]] = lines[defined[0]].replace(%r, %r)
module = importlib.util.module_from_spec(spec)
sys.modules[name] = module
exec(compile("".join(lines), spec.origin, "exec"), module.__dict__)
vitcore.stats.estimates = module
spec = importlib.util.spec_from_file_location("sync_docs", sys.argv[1])
sync_docs = importlib.util.module_from_spec(spec)
spec.loader.exec_module(sync_docs)
print(json.dumps(sync_docs.sync(Path(sys.argv[2]))))
''' % (f'"{INCONCLUSIVE}"', f'"{RENAMED}"')


@pytest.mark.slow  # a fresh interpreter importing the claims ledger: ~2 s
def test_a_word_renamed_at_its_constant_is_renamed_in_the_docs(docs):
    """Issue 59: the README's and docs/methods-and-verdicts.md's hand-written definitions kept the old word after a
    rename at the constant, and their docs checks failed. One command now rewrites every generated list."""
    done = subprocess.run([sys.executable, "-c", RENAME_AND_SYNC, str(ROOT / "scripts" / "sync_docs.py"), str(docs)],
                          capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.splitlines()[-1]) == list(FILES)
    for relative in FILES:
        text = (docs / relative).read_text()
        assert f"**{RENAMED}** — " in text and f"**{INCONCLUSIVE}** — " not in text


def test_the_command_line_exit_codes(docs, capsys):
    assert sync_docs.main(["--check"], docs) == 0 and capsys.readouterr().out == ""
    readme = docs / "README.md"
    readme.write_text(readme.read_text().replace(f"- **{INCONCLUSIVE}** — ", f"- **{INCONCLUSIVE}, stale** — ", 1))
    assert sync_docs.main(["--check"], docs) == 1 and "README.md: stale" in capsys.readouterr().out
    assert sync_docs.main([], docs) == 0 and "README.md: rewritten" in capsys.readouterr().out
    readme.write_text(readme.read_text().replace(sync_docs.END, "", 1))
    assert sync_docs.main([], docs) == 2 and "README.md: " in capsys.readouterr().err
