import json, time
from test_layout_browser import _write_notebook, _run_all, _show_file_browser, FIGURE_READY_JS

PROBE = """
(explorer) => {
  const out = [];
  const fig = explorer.querySelector('.udk-explorer-figure');
  let e = fig;
  const walk = (el, depth) => {
    if (depth > 5) return;
    const r = el.getBoundingClientRect(); const cs = getComputedStyle(el);
    out.push(`${'  '.repeat(depth)}${el.tagName.toLowerCase()}.${[...el.classList].join('.')} w=${Math.round(r.width)} h=${Math.round(r.height)} x=${Math.round(r.left)} disp=${cs.display} flex=${cs.flex} style=${el.getAttribute('style')||''}`);
    for (const c of el.children) walk(c, depth + 1);
  };
  walk(fig, 0);
  const s = explorer.querySelector('.widget-slider');
  walk(s, 0);
  return out.join('\\n');
}
"""

def test_probe(lab, chromium):
    n = _write_notebook(lab.root_dir)
    context = chromium.new_context(viewport={"width": 1366, "height": 768})
    page = context.new_page()
    _run_all(page, lab, n, lab.root_dir / "x.png")
    _show_file_browser(page, True)
    ex = page.locator(".udk-explorer").nth(1)
    ex.scroll_into_view_if_needed()
    page.wait_for_function(FIGURE_READY_JS, arg=ex.element_handle(), timeout=90000)
    print(page.evaluate(PROBE, ex.element_handle()))
    context.close()
