"""The front door and its reference: the README stays short, says what the tool is and shows a picture of
the app that is in the repository, carries no test-timing figures, and links the docs/ pages; every relative
markdown link in README.md, docs/*.md and bench/RESULTS.md points to a file that exists, and an anchor, if given, to
a heading of that file."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
PAGES = [README, *sorted((ROOT / "docs").glob("*.md")), ROOT / "bench" / "RESULTS.md"]
LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(([^()\s]+)(?:\s+\"[^\"]*\")?\)")  # [text](target) and ![alt](target)
FENCE = re.compile(r"^(```|~~~).*?^\1\s*$", re.S | re.M)


def prose(text: str) -> str:
    """The text outside fenced code blocks and inline code, where a link is a link."""
    return re.sub(r"`[^`\n]*`", "", FENCE.sub("", text))


def links(path: Path) -> list[str]:
    return LINK.findall(prose(path.read_text()))


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, markup and punctuation dropped, spaces as hyphens."""
    text = re.sub(r"[`*_]|\[([^\]]*)\]\([^)]*\)", r"\1", heading.strip().lower())
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def anchors(path: Path) -> set[str]:
    found, seen = set(), {}
    for line in prose(path.read_text()).splitlines():
        if match := re.match(r"#{1,6}\s+(.*?)\s*#*\s*$", line):
            base = slug(match.group(1))
            n = seen.get(base, 0)
            seen[base] = n + 1
            found.add(base if n == 0 else f"{base}-{n}")
    return found


def test_slugs_are_githubs():
    assert slug("Security: what is checked and what is not") == "security-what-is-checked-and-what-is-not"
    assert slug("Registered plans, seen or blind, and the confirmation") == (
        "registered-plans-seen-or-blind-and-the-confirmation")
    assert slug("The `plan` column, **bold**") == "the-plan-column-bold"


@pytest.mark.parametrize("page", PAGES, ids=lambda page: str(page.relative_to(ROOT)))
def test_every_relative_link_points_to_a_file_and_heading_that_exist(page):
    broken = []
    for target in links(page):
        if re.match(r"[a-z][a-z0-9+.-]*:", target):  # https:, mailto: — not checked here
            continue
        file, _, anchor = target.partition("#")
        where = (page.parent / file).resolve() if file else page
        if not where.exists():
            broken.append(f"{target}: no {where}")
        elif anchor and (where.suffix != ".md" or anchor not in anchors(where)):
            broken.append(f"{target}: no heading #{anchor} in {where.relative_to(ROOT)}")
    assert not broken, "\n".join(broken)


def test_a_broken_link_is_found(tmp_path):
    page = tmp_path / "page.md"
    page.write_text("# Here\n\n[fine](#here) [gone](missing.md) [no anchor](page.md#nowhere)\n```\n[code](x.md)\n```\n")
    assert links(page) == ["#here", "missing.md", "page.md#nowhere"]
    assert anchors(page) == {"here"}


def test_the_readme_is_a_front_door():
    text = README.read_text()
    lines = text.splitlines()
    assert len(lines) <= 300, f"README.md has {len(lines)} lines: the reference belongs in docs/"
    first = "\n".join(lines[:20])
    assert "dashboard" in first and "ablation" in first and "the article's ViT" in first, "what it is, first"
    assert "paired by random seed" in first and "registered before" in first and "fresh random seeds" in first
    pictures = re.findall(r"!\[[^\]]*\]\(([^)\s]+)\)", first)
    assert pictures, "a picture of the app in the first 20 lines"
    for picture in pictures:
        path = ROOT / picture
        assert path.is_file() and path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n", picture
        assert path.stat().st_size < 300_000, f"{picture}: keep it small"
    pages = {target.split("#")[0] for target in links(README) if target.startswith("docs/") and target.endswith(".md")}
    assert len(pages) >= 3 and all((ROOT / page).is_file() for page in pages), pages


def test_the_readme_carries_no_test_timings():
    """Test times are a measurement diary (bench/RESULTS.md#test-times), not the front door: no "N tests in N s",
    no "passed in N s"."""
    text = " ".join(README.read_text().split())
    timings = re.findall(r"\b(?:tests?|passed|failed) in [\d.,]+ ?(?:s|min)\b|\b[\d,]+ tests? (?:in|took)\b", text)
    assert not timings, timings


# The committed ledger's rows the claims paragraph of docs/methods-and-verdicts.md names, as (claim, train_rows).
NAMED = {"the ViT against the convnet at 4,000 rows": ("the ViT beats the convnet", 4000),
         "post-norm's\nwarm-up at 4,000": ("post-norm needs learning-rate warm-up", 4000),
         "LSA at 1,000": ("Locality Self-Attention lifts a ViT on small data", 1000),
         "LSA at 1,000 and 4,000": ("Locality Self-Attention lifts a ViT on small data", 4000)}
SINCOS = ("a fixed 2-D sine-cosine position embedding does as well as a learned one", 4000)


@pytest.mark.slow  # the committed store's ledger at three margins (a Study of it: tens of seconds)
def test_the_claims_figures_in_the_docs_are_the_tools_own():
    """docs/methods-and-verdicts.md's tally paragraph said 26/0/0/1/12/4 at ±0.005 where the tool printed 26/0/2/1/10/4,
    and sincos at 4,000 rows 'better with p_adj 0.045' after the blind plan left it inconclusive: every figure of it
    is computed here from the tool's own output (the CLI's tally words, the ledger's rows)."""
    from vitcore.article import claims
    from vitcore.study import Study

    text = (ROOT / "docs" / "methods-and-verdicts.md").read_text()
    paragraph = " ".join(text[text.index("On the committed runs, of"):text.index("## Beside every verdict")].split())
    study = Study.open(ROOT / "cached_runs", warn=False)
    table, tally = study.claims(0.01), study.tally((0.005, 0.01, 0.02)).set_index("margin")
    counts = claims.tally_of(table)
    assert table["verdict_from"].fillna("").str.len().gt(0).all()  # every row says where its verdict comes from
    words = ", ".join(d.counted.format(n=counts[d.word]) for d in claims.REGISTRY)  # as tally_line says them
    assert f"of {counts['counted']} counted comparisons at ±0.01 (the margin the plans registered): {words}." \
        in paragraph
    counted = table[table["tally"] == claims.COUNTED].assign(rows=lambda f: f["train_rows"].fillna(-1).astype(int))
    rows = {(r["claim"], r["rows"]): r for r in counted.to_dict("records")}
    negligible = [key for key, r in rows.items() if r["direction"] == claims.NEGLIGIBLE]
    assert f"The {len(negligible)} shown negligible are " in paragraph
    assert sorted(negligible) == sorted(set(NAMED.values())) and all(" ".join(n.split()) in paragraph for n in NAMED)
    sincos = rows[SINCOS]
    assert f"sincos at 4,000 rows (claimed ≈ 0) is {sincos['verdict']}" in paragraph
    assert ("at its blind plan's cap" in paragraph) == ("cap" in str(sincos["plan"]) and
                                                          ", blind," in str(sincos["verdict_from"]))
    exploratory = {margin: int(tally.loc[margin, "exploratory"]) for margin in (0.005, 0.02)}
    assert int(tally.loc[0.01, "exploratory"]) == 0 and len(set(exploratory.values())) == 1
    assert f"At ±0.005 and ±0.02, {exploratory[0.005]} of the {counts['counted']} are exploratory" in paragraph


def test_the_page_store_size_in_the_developer_guide_is_the_fixtures(committed_table):
    """docs/contributing.md said the page store holds 81 runs after it had grown to 121: the count it names is
    the one tests/stores.py's page_runs selects from the committed store (what the page_store fixture copies)."""
    from stores import PAGE_CONFIGS, page_runs

    said = re.search(r"the few configs the tests select: (\d+) runs",
                     " ".join((ROOT / "docs" / "contributing.md").read_text().split()))
    assert said and int(said.group(1)) == len(page_runs(committed_table, configs=PAGE_CONFIGS))
