"""vitcore.stats.estimates against independent recomputations: scipy's tests and the plan's own criterion."""

import numpy as np
import pytest
from scipy import stats as sp

from vitcore.stats import estimates as e
from vitcore.stats.estimates import INCONCLUSIVE


def test_both_tests_match_scipy():
    deltas = np.array([0.012, 0.004, 0.009, -0.002, 0.011, 0.007, 0.003])
    est = e.paired_estimate(deltas)
    assert est.p_value == pytest.approx(sp.ttest_1samp(deltas, 0).pvalue, rel=1e-12)
    margin = 0.01  # TOST: the larger of the two one-sided t-tests against -margin and +margin
    lower = sp.ttest_1samp(deltas, -margin, alternative="greater").pvalue
    upper = sp.ttest_1samp(deltas, margin, alternative="less").pvalue
    assert est.p_tost(margin) == pytest.approx(max(lower, upper), rel=1e-12)
    low90, high90 = sp.t.interval(0.90, len(deltas) - 1, loc=deltas.mean(), scale=sp.sem(deltas))
    judged = e.judge("test_accuracy", est, margin, "f", 4)
    assert (judged["ci90_low"], judged["ci90_high"]) == pytest.approx((low90, high90), rel=1e-12)
    adj = sp.t.interval(1 - 0.05 / 4, len(deltas) - 1, loc=deltas.mean(), scale=sp.sem(deltas))
    assert (judged["ci_adj_low"], judged["ci_adj_high"]) == pytest.approx(adj, rel=1e-12)


@pytest.mark.parametrize("deltas, size", [
    ([0.0138, -0.0391, -0.0049, -0.0162, -0.0149, -0.0122, -0.0329, -0.0124, -0.0197, 0.0285], 7),  # resolve the Δ
    ([0.0148, 0.0003, 0.0021, -0.0076, -0.0173, -0.0007, 0.0212, 0.0032], 1),                    # near 0: either test
])
def test_seeds_needed_is_the_smallest_n_with_80_percent_assurance(deltas, size):
    """The plan's own criterion (tests/test_assurance.py simulates the promise): assurance at N, not at N - 1."""
    from vitcore.stats import estimates

    est = e.paired_estimate(deltas)
    judged = e.judge("test_accuracy", est, 0.01, "f", size)
    assert judged["verdict"] == e.INCONCLUSIVE
    n = int(judged["seeds_needed"])
    assert n > len(deltas) and judged["seeds_more"] == n - len(deltas)
    chance = [estimates.assurance(est.mean, est.scale, est.n - 1, k, 0.01, 0.05 / size) for k in (n - 1, n)]
    assert chance[0] < 0.80 <= chance[1]
    # never below the plan with the sd taken as known (the difference test's power at the observed sd)
    if abs(est.mean) >= 0.01:
        assert e.power_difference(est.mean, est.scale, n, 0.05 / size) >= 0.80


def test_needs_text_says_a_total_and_how_many_more():
    assert e.needs_text(41.0, 10) == ("needs 41 paired random seeds for 80% assurance (31 more), as a new look, not a "
                                      "continuation: `python -m vitcore plan register NAME --vary FIELD=LEVEL --rows "
                                      "N --seeds A-B`, then `python -m vitcore sweep plan NAME`")
    assert e.needs_text(12.0, 10, paired=False).endswith(e.NEW_LOOK)  # unpaired: a new look too
    assert e.needs_text(np.nan, 10) == "spread unknown" and "new look" not in e.needs_text(np.inf, 10)
    # one sentence, so a card or the CLI's line carries it; the why (the second look's false positives) is in the
    # definition of "inconclusive", printed by the README, the legends and --help
    assert e.needs_text(41.0, 10).count(". ") == 0 and e.PLAN_COMMANDS in e.DEFINITIONS[INCONCLUSIVE]


def test_a_second_look_at_the_same_level_inflates_the_false_positive_rate():
    """The figure the definition of "inconclusive" quotes: a fixed-sample t-test at 0.05 on 10 pairs, then, if it
    did not resolve, again at 0.05 on 29 (its "needs 29 (19 more)"), rejects a true null far above 5%."""
    rng = np.random.default_rng(0)
    x = rng.normal(size=(40_000, 29))
    first = sp.ttest_1samp(x[:, :10], 0, axis=1).pvalue < 0.05
    second = sp.ttest_1samp(x, 0, axis=1).pvalue < 0.05
    rate = (first | second).mean()
    assert first.mean() == pytest.approx(0.05, abs=0.005) and rate == pytest.approx(0.089, abs=0.006)
    assert "8.9% simulated" in e.DEFINITIONS[INCONCLUSIVE]


def test_every_verdict_word_has_one_definition():
    defined = " ".join(e.DEFINITIONS)
    for word in e.VERDICTS:
        assert word.split()[-1] in defined
    assert set(e.RESOLVED) | {e.EQUIVALENT, e.INCONCLUSIVE, e.TOO_FEW, e.NOT_COMPARABLE} == set(e.VERDICTS)


def test_readme_legend_and_help_print_the_library_words():
    from pathlib import Path

    from vitcore.app.ablations import cards
    from vitcore.cli.common import VERDICTS_EPILOG

    root = Path(__file__).resolve().parents[1]
    readme = (root / "README.md").read_text()  # the verdict words and the margin: "What the verdict words mean"
    methods = (root / "docs" / "methods-and-verdicts.md").read_text()  # the readings beside every verdict
    legend = cards.definitions()
    from vitcore.stats import readings

    for page, definitions in ((readme, e.DEFINITIONS), (methods, readings.DEFINITIONS)):
        for word, text in definitions.items():
            assert f"**{word}** — {text}" in page and f"**{word}**: {text}" in legend
            assert f"{word}: {text}" in VERDICTS_EPILOG
    assert e.MARGIN_REASON in readme and e.MARGIN_REASON in legend


# -- one definition per verdict word: a rename at the constant renames it on every view ----------------------------
RENAMED = "unsettled-word"  # a word no module spells
SAID_EVERYWHERE = r'''
import importlib.util, json, sys
import numpy as np

import vitcore.stats
name = "vitcore.stats.estimates"
spec = importlib.util.find_spec(name)
lines = spec.loader.get_source(name).splitlines(keepends=True)
defined = [k for k, line in enumerate(lines) if line.split("=")[0].count("INCONCLUSIVE") == 1 and "=" in line]
assert len(defined) == 1, defined  # the word has one definition
lines[defined[0]] = lines[defined[0]].replace(%r, %r)  # the word as it is defined now, renamed
module = importlib.util.module_from_spec(spec)
sys.modules[name] = module
exec(compile("".join(lines), spec.origin, "exec"), module.__dict__)
vitcore.stats.estimates = module

import pandas as pd
from vitcore.app import sidebar
from vitcore.app.ablations import cards
from vitcore.article import claims, report
from vitcore.cli.common import VERDICTS_EPILOG, verdict_line
from vitcore.stats import plan
from vitcore.study import words

est = module.paired_estimate([0.02, -0.03, 0.025, -0.015, 0.004])  # neither test resolves at ±0.01
row = {"metric": "test_accuracy", "n_pairs": est.n, "mean_delta": est.mean, "paired": True,
       **module.judge("test_accuracy", est)}
row.update(plan.said(row))  # as the Study hands it out: with what it still needs
direction, _ = claims.judge_claim("> 0", row["verdict"], row["mean_delta"], row)
said = {"verdict": row["verdict"], "card": words.verdict_text(row), "forest": words.verdict_text(row, short=True),
        "cli": verdict_line(row), "csv": pd.DataFrame([row]).to_csv(index=False), "legend": cards.definitions(),
        "help": VERDICTS_EPILOG, "sidebar": sidebar.HELP[sidebar.MARGIN_KEY], "claim": direction,
        "ledger": json.dumps([claims.DEFINITIONS, [(d.card, d.counted) for d in claims.REGISTRY]]),
        "report": report._say(report.LEAD, row, 0.01)}
print(json.dumps(said))
''' % (f'"{INCONCLUSIVE}"', f'"{RENAMED}"')


def test_a_verdict_word_renamed_at_its_one_definition_is_renamed_on_every_view():
    """Issue 59: renaming "inconclusive" at its constant left it on screen from the definitions' keys, the claims
    ledger, the report and the sidebar. In a fresh interpreter whose estimates module says another word, every view
    of an undecided Δ (the card, the forest plot, the CLI's line, a CSV row, the legend, --help, the sidebar, the
    claims ledger, the report) says the new word and never the old one."""
    import json
    import subprocess
    import sys
    from pathlib import Path

    done = subprocess.run([sys.executable, "-c", SAID_EVERYWHERE], capture_output=True, text=True, timeout=120,
                          cwd=Path(__file__).resolve().parents[1])
    assert done.returncode == 0, done.stderr
    said = json.loads(done.stdout.splitlines()[-1])
    assert said["verdict"] == said["claim"] == RENAMED
    for view, text in said.items():
        assert RENAMED in text, view
        assert INCONCLUSIVE not in text.lower(), (view, text)


def test_no_module_spells_a_verdict_word_but_its_definition():
    """Every verdict word is a constant of this module: no other string literal of vitcore, the pages or the app is
    one of them, or emphasises one (`*equivalent*` in page prose)."""
    import ast
    import io
    import re
    import tokenize
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    # "higher" / "lower" are also numpy's and the metric registry's directions (config.metrics): emphasised only
    WORDS = set(e.VERDICTS) - {e.HIGHER, e.LOWER}
    emphasised = re.compile(r"\*+(%s)\*+" % "|".join(map(re.escape, e.VERDICTS)))
    found = []
    for path in [*sorted((root / "vitcore").rglob("*.py")), *sorted((root / "views").glob("*.py")),
                 root / "streamlit_app.py", root / "app.py"]:
        if path == root / "vitcore" / "stats" / "estimates.py" or not path.is_file():
            continue
        source = path.read_text()
        docs = {node.lineno for node in ast.walk(ast.parse(source))  # docstrings say what the code does: not a view
                if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)}
        for token in tokenize.generate_tokens(io.StringIO(source).readline):
            if token.type != tokenize.STRING or token.start[0] in docs:
                continue
            text = re.sub(r"^[rbfuRBFU]*('''|\"\"\"|'|\")|('''|\"\"\"|'|\")$", "", token.string)
            if text in WORDS or emphasised.search(text):
                found.append(f"{path.relative_to(root)}:{token.start[0]}: {token.string}")
    assert not found, "\n".join(found)


def test_the_fast_t_functions_are_scipys_bit_for_bit():
    """t_sf, t_cdf and t_quantile skip scipy.stats' per-call overhead: the same floats as stats.t, at whole and
    Welch (fractional) degrees of freedom, for finite, signed-zero, infinite and NaN statistics, and NaN for a df
    outside the distribution's."""
    rng = np.random.default_rng(0)
    xs = [*rng.normal(0, 4, 40), 0.0, -0.0, 1e-300, 40.0, -40.0, np.inf, -np.inf, np.nan]
    for df in [1, 2, 3, 9, 39, 59, *rng.uniform(1.0, 200.0, 10), 1e6, np.inf]:
        for x in xs:
            assert np.array_equal(e.t_sf(x, df), sp.t.sf(x, df), equal_nan=True)
            assert np.array_equal(e.t_cdf(x, df), sp.t.cdf(x, df), equal_nan=True)
        for q in (0.95, 0.975, 0.99, 1 - 0.05 / 22, 0.5 + 0.9 / 2):
            assert e.t_quantile(q, df) == sp.t.ppf(q, df)
    assert np.isnan(e.t_sf(1.0, 0)) and np.isnan(e.t_cdf(1.0, np.nan)) and np.isnan(e.t_quantile(0.975, 0))
