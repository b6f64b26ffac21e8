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


# A data grid (st.dataframe) draws its cells on a canvas: what a test can read is its scroller (the frame's visible
# width, the width of all its columns) and, from the same font, how wide each word of a cell is drawn.
_GRID = """
([header, words]) => {
  for (const grid of document.querySelectorAll('[data-testid="stMain"] [data-testid="stDataFrame"]')) {
    const heads = Array.from(grid.querySelectorAll('th, [role="columnheader"]')).map(t => t.textContent.trim());
    if (!heads.includes(header)) continue;
    const scroller = grid.querySelector('.dvn-scroller');
    const pen = document.createElement('canvas').getContext('2d');
    pen.font = `14px ${getComputedStyle(grid).fontFamily}`;
    return {visible: scroller.clientWidth, columns: scroller.scrollWidth, left: scroller.scrollLeft,
            words: Object.fromEntries(words.map(w => [w, pen.measureText(w).width])),
            space: pen.measureText(' ').width};
  }
  return null;
}
"""
PADDING = 8 + 8 + 2  # a cell's horizontal padding (the grid's 8 px each side) and a pixel of rounding each side


def grid(page, header: str, texts) -> dict | None:
    """The data grid whose first columns include `header`: {visible: px of the frame, columns: px of all columns,
    left: its sideways scroll, words: {word: px}, space: px} for every word of `texts`; None if there is none."""
    words = sorted({word for text in texts for word in str(text).split()} | {str(t) for t in texts})
    return page.evaluate(_GRID, [header, words])


def lines(text: str, width: float, measured: dict) -> int:
    """How many lines `text` takes in a cell `width` px wide, wrapped at spaces (a word wider than the cell: cut)."""
    usable, count, line = width - PADDING, 1, 0.0
    for word in str(text).split():
        size = measured["words"][word]
        if size > usable:
            return 99  # one word wider than the cell: drawn cut whatever the row height
        if line and line + measured["space"] + size > usable:
            count, line = count + 1, size
        else:
            line = line + measured["space"] + size if line else size
    return count
