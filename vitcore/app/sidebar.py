"""The shared sidebar: one widget per ablation switch plus the baseline and the margin, all bound to the URL.

Rendered by app.py (the frame) on every page, so the selection persists across pages; pages read it
with `vitcore.app.state.selection()` / `vitcore.app.state.baseline()` / `vitcore.app.state.margin()`.
The widget keys are the RunConfig field names, and the URL values are str(value): `?patch_size=4`.
Each option's caption says whether runs exist for it given the other switches ("10 seeds", "not trained");
captions, not labels, because a bound widget's URL value is its label and must not change with coverage.
For the same reason the training rows, shown by the one number rule ('4,000', vitcore.app.fmt), are not
bound by Streamlit (its URL value would become '4,000'): `_from_url` / `_to_url` keep `?train_rows=4000`.
"""

from __future__ import annotations

import logging

import streamlit as st

from vitcore.app import fmt, state
from vitcore.app.selection import (
    BASELINE_KEY,
    CHOICES,
    DEFAULTS,
    MARGIN_KEY,
    MARGINS,
    PAGE_DEFAULTS,
    cell_name,
    coverage_caption,
    current_choices,
    option_seeds,
    query_notes,
    resolve_baseline,
    seed_counts,
    selection_or_default,
)
from vitcore.app.selection import HELP as KEY_HELP
from vitcore.app.selection import LABELS as KEY_LABELS
from vitcore.config.switches import SWITCH
from vitcore.study.words import EQUIVALENT, INCONCLUSIVE, MARGIN

NOTES_KEY = "_vitcore_query_notes"
URL_SENT = "_vitcore_url_sent"  # per own-URL key: the URL value this session wrote last (None: none)
PAINTED, _TICKS = "_vitcore_painted", "_vitcore_paint_ticks"
HELP = {
    **KEY_HELP,  # one entry per sidebar key: the model, each registered switch, the rows
    BASELINE_KEY: "What every Δ is measured against, seed by seed. Default: the article's ViT at the selected rows "
                  "(in a store of your own study without it: that study's centre).",
    MARGIN_KEY: f"An effect smaller than this is no effect: *{EQUIVALENT}* when the 90% interval of the Δ lies "
                "inside ±margin (accuracies and the gap; seconds use ±1 s). Also sets how many random seeds an "
                f"*{INCONCLUSIVE}* Δ would need.",
}
LABELS = {**KEY_LABELS, BASELINE_KEY: "Baseline", MARGIN_KEY: "Equivalence margin"}
_RESET_KEYS = (*CHOICES, BASELINE_KEY, *PAGE_DEFAULTS)


class _QuietReset(logging.Filter):
    """Reset (and the landing page's "select this variant") set bound widgets through the Session
    State API, the documented way to move a widget; Streamlit then logs a one-time "created with a
    default value but also had its value set via the Session State API" warning meant for code that
    passes a default it never uses. Drop that line for our own keys only."""

    def filter(self, record: logging.LogRecord) -> bool:
        text = record.getMessage()
        return not ("set via the Session State API" in text and any(f'key "{key}"' in text for key in _RESET_KEYS))


logging.getLogger("streamlit.elements.lib.policies").addFilter(_QuietReset())


def reset() -> None:
    """Every switch, the baseline, the margin and the Ablations page's controls back to their defaults (the store's
    centre: state.offer)."""
    found = state.offer()
    for key, value in {**found.defaults, BASELINE_KEY: next(iter(found.cells)), **PAGE_DEFAULTS}.items():
        st.session_state[key] = value


def painted() -> bool:
    """Whether this session's browser has drawn its first page (see `_then_the_rest`)."""
    return bool(st.session_state.get(PAINTED))


def _then_the_rest(delay: float = 0.6) -> None:
    """Progressive rendering (the first paint): a session's first run draws the page's header and
    cards but not the sidebar's widgets (or the Ablations page's charts), whose setup holds a browser's
    paint back ~0.4 s; this invisible fragment's first timed rerun, `delay` s after the browser got
    the page, marks the session painted and reruns the app, which draws everything (from then on at
    once). Streamlit has no "after paint" hook: a run_every fragment is its public stand-in. Until
    then the pages read the selection from the URL (state.selection). 0.6 s (1.0 s before 2026-12-03): the landing's
    cards 0.45 s sooner (2.05-2.12 s against 2.54-2.57 s from navigation), its forest plot no later (1.31-1.36 s
    against 1.35-1.37 s; bench/app_bench.py --paint, bench/RESULTS.md)."""
    st.session_state[_TICKS] = 0

    @st.fragment(run_every=delay)
    def rest() -> None:
        st.session_state[_TICKS] += 1
        if st.session_state[_TICKS] > 1:  # a timed rerun, not the full run that drew the page
            st.session_state[PAINTED] = True
            st.rerun()

    rest()


def label(key: str, choices=CHOICES):
    """The format of one switch's options: thousands separators for whole numbers ('4,000'), the registry's words
    for a level whose bare value reads as something else (pooling 'token mean' / 'class token', as the forest plot
    and the Plans page name them: Switch.word); None when every option already reads as its URL value (then
    Streamlit binds the widget to the URL itself; a formatted one keeps `?pooling=cls` through _from_url/_to_url)."""
    options = choices[key]
    if key in SWITCH and SWITCH[key].words:
        return SWITCH[key].word
    if all(type(option) is int for option in options) and any(fmt.rows(option) != str(option) for option in options):
        return fmt.rows
    return None


def _from_url(key: str, choices=CHOICES) -> None:
    """A URL value this session did not write (a link, an edited URL, the browser's back button) moves
    the widget; an absent one (a page switch drops unbound parameters) does not. A value that is not an
    option changes nothing (query_notes has said so) and `_to_url` replaces it."""
    raw, sent = st.query_params.get(key), st.session_state.setdefault(URL_SENT, {})
    if raw is None or raw == sent.get(key):
        return
    match = [option for option in choices[key] if str(option) == raw]
    if match:
        st.session_state[key] = match[0]


def _to_url(key: str, defaults=DEFAULTS) -> None:
    """The widget's value into the URL as str(value), as a bound widget would: absent at its default."""
    value = st.session_state.get(key, defaults[key])
    text = None if value == defaults[key] else str(value)
    if st.query_params.get(key) != text:
        if text is None:
            del st.query_params[key]
        else:
            st.query_params[key] = text
    st.session_state.setdefault(URL_SENT, {})[key] = text


def _switch(key: str, values: dict, counts, choices, defaults) -> None:
    """One switch's radio: its options with the random seeds stored for each, bound to the URL."""
    options, seeds, shown = choices[key], option_seeds(key, values, counts, choices), label(key, choices)
    st.radio(LABELS[key], options, index=options.index(defaults[key]), key=key, help=HELP[key],
             horizontal=True, captions=[coverage_caption(seeds[option]) for option in options],
             format_func=shown or str, disabled=key in SWITCH and not SWITCH[key].applies(values["model"]),
             bind=None if shown else "query-params")
    if shown:
        _to_url(key, defaults)
    if key == "model" and values["model"] == "convnet":
        st.caption("The ViT switches below do not apply to the convnet.")


def render_sidebar() -> None:
    """Draw the switches (from a session's second run on: `_then_the_rest`); on a session's first run,
    note any query value that was not allowed."""
    found, counts = state.offer(), seed_counts(state.study().runs)
    cells, choices, defaults = found.cells, found.choices, found.defaults
    if NOTES_KEY not in st.session_state:  # Streamlit drops invalid bound values; say so, once per session
        st.session_state[NOTES_KEY] = query_notes(st.query_params.to_dict(), list(cells), found.allowed, defaults)

    for note in st.session_state[NOTES_KEY]:  # in the main area, above the page: a phone hides the sidebar
        st.warning(note, icon=":material/link_off:")
    if not painted():
        with st.sidebar:
            _then_the_rest()
        return
    for key in (key for key in choices if label(key, choices)):  # before anything reads the selection
        _from_url(key, choices)
    values = current_choices(st.session_state, st.query_params.to_dict(), found.allowed, defaults)
    with st.sidebar:
        st.header("Configuration")
        for key in (key for key in choices if key not in found.folded):  # a free field (width, epochs, ...) only
            _switch(key, values, counts, choices, defaults)  # where the store varies it or holds it off default
        if found.folded:  # your own study: what its runs hold at one value, out of the way
            with st.expander(f"{len(found.folded)} more switches, each at one value in this store"):
                for key in (key for key in choices if key in found.folded):
                    _switch(key, values, counts, choices, defaults)
        selection, _ = selection_or_default(values, found.fallback)
        st.selectbox(LABELS[BASELINE_KEY], list(cells), index=0, key=BASELINE_KEY, help=HELP[BASELINE_KEY],
                     bind="query-params")
        chosen = resolve_baseline(st.session_state.get(BASELINE_KEY), cells, selection, found.centre)
        # the box cuts a long name (its text is its URL value, so no shorter label): the caption says it in full
        st.caption(f"Baseline: **{cell_name(chosen)}**, {coverage_caption(counts.get(chosen.config_id, 0))} stored.")
        st.segmented_control(LABELS[MARGIN_KEY], MARGINS, default=MARGIN, required=True, key=MARGIN_KEY,
                             help=HELP[MARGIN_KEY], bind="query-params")  # the page's metric control: one chunk
        st.button("Reset everything", on_click=reset, icon=":material/restart_alt:", key="reset_switches",
                  help="The article's ViT (or your own study's centre), its default baseline, margin 0.01, and "
                       "the Ablations page's defaults.")
        st.caption("Under each option: the random seeds stored for it, given the other switches. "
                   "The URL holds this selection: copy it to share exactly this view.")
