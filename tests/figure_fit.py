#!/usr/bin/env python3
"""The figures of a built page as a reader's window shows them (headless Chromium), like
../shared/tools/table_fit.py for tables.

    python3 tests/figure_fit.py _build/html/book/bias.html 800

Prints a JSON list, one entry per figure image of the article: its natural width (pixels of the
PNG) and its displayed width (CSS pixels); their ratio scales the figure's text.
"""
import json, pathlib, re, subprocess, sys, tempfile
page, width = pathlib.Path(sys.argv[1]).resolve(), int(sys.argv[2])
wrapper = f"""<!doctype html><html><body style="margin:0">
<iframe id="f" src="{page.as_uri()}" style="width:{width}px;height:900px;border:0"></iframe>
<pre id="out">pending</pre>
<script>
document.getElementById('f').onload = function () {{
  setTimeout(function () {{
    var d = document.getElementById('f').contentDocument, res = [];
    d.querySelectorAll('article .cell_output img').forEach(function (im, i) {{
      res.push({{i: i, natural: im.naturalWidth, shown: Math.round(im.getBoundingClientRect().width * 10) / 10}});
    }});
    document.getElementById('out').textContent = JSON.stringify(res);
  }}, 1500);
}};
</script></body></html>"""
with tempfile.NamedTemporaryFile("w", suffix=".html", delete=False, dir=page.parent) as f:
    f.write(wrapper)
try:
    dom = subprocess.run(["chromium", "--headless=new", "--no-sandbox", "--disable-gpu", "--allow-file-access-from-files",
                          f"--window-size={width + 20},1000", "--virtual-time-budget=8000", "--dump-dom", f"file://{f.name}"],
                         capture_output=True, text=True, timeout=120).stdout
finally:
    pathlib.Path(f.name).unlink()
m = re.search(r'<pre id="out">(.*?)</pre>', dom, re.S)
print(m.group(1) if m else "no result")
