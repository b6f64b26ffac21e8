"""What a narrow screen shows (tests/test_browser.py's 400-px test): every chart, table or image of a page's
main area that reaches past the screen's right edge, and every text of a chart (its key, an axis title)
cut at the chart's edge. A table may be wider than the screen when it scrolls inside its own frame (the
frame must fit); a chart or image never may (a cut chart hides its data)."""

from __future__ import annotations

# Each drawn thing: charts (Vega-Lite's svg or canvas), tables (the data grid's frame, a static table),
# images. The sidebar is left out: a phone hides it behind its button.
_PROBE = """
(width) => {
  const main = document.querySelector('[data-testid="stMain"]');
  const found = [];
  const scrollsInside = (el) => {
    for (let p = el.parentElement; p && p !== main; p = p.parentElement) {
      const style = getComputedStyle(p);
      if (['auto', 'scroll'].includes(style.overflowX) && p.getBoundingClientRect().right <= width + 0.5) return true;
    }
    return false;
  };
  const kinds = [
    ['chart', '[data-testid="stVegaLiteChart"] svg.marks, [data-testid="stVegaLiteChart"] canvas', false],
    ['table', '[data-testid="stDataFrame"], [data-testid="stTable"] table, ' +
              '[data-testid="stMarkdownContainer"] table', true],
    ['image', '[data-testid="stImage"] img, [data-testid="stFullScreenFrame"] img', false],
  ];
  for (const [kind, selector, mayScroll] of kinds) {
    for (const el of main.querySelectorAll(selector)) {
      const box = el.getBoundingClientRect();
      if (!box.width || !box.height || box.right <= width + 0.5) continue;
      if (mayScroll && scrollsInside(el)) continue;
      const host = el.closest('[data-testid]');
      found.push({kind, right: Math.round(box.right), width: Math.round(box.width),
                  near: (host ? host.innerText || '' : '').slice(0, 80)});
    }
  }
  // a chart inside the screen can still cut its own key or axis title at its edge: each text of each chart
  for (const svg of main.querySelectorAll('[data-testid="stVegaLiteChart"] svg.marks')) {
    const edge = Math.min(width, svg.getBoundingClientRect().right);
    for (const text of svg.querySelectorAll('text')) {
      const box = text.getBoundingClientRect();
      if (box.width && (box.right > edge + 1 || box.left < -1)) {
        found.push({kind: 'chart text', right: Math.round(box.right), width: Math.round(box.width),
                    near: text.textContent.slice(0, 80)});
      }
    }
  }
  const page = main.scrollWidth;
  if (page > width + 0.5) found.push({kind: 'page', right: page, width: page, near: 'the main area scrolls sideways'});
  return found;
}
"""


def overflowing(page, width: int) -> list[dict]:
    """The charts, tables and images of `page` (a Playwright page) drawn past `width` px, and the main
    area itself when it scrolls sideways: [] when everything fits."""
    return page.evaluate(_PROBE, width)
