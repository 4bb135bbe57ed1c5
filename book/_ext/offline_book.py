"""Sphinx extension: make the built book read offline (nothing loaded from the network).

* **MathJax 3 served locally.** The PyPI package ``django-static-mathjax`` (importable as
  ``mathjax``; Django is not needed) ships the MathJax 3 distribution. When the HTML build
  finishes, what a browser needs (the ``tex-chtml`` component, its fonts, and the components it
  loads on demand) is copied to ``<html>/_static/mathjax/``; ``mathjax_path`` must point there
  (``mathjax/tex-chtml.js``, relative to ``_static``). A remote ``mathjax_path`` is an error.
* **No thebe.** Jupyter Book always loads ``sphinx_thebe``, whose pages carry the URL of thebe on
  a CDN and a Binder configuration even with launch buttons off; its assets and nodes are removed.
* **Outputs at the page's width.** ``static/outputs.css`` lets the article column widen with the
  window (below 1600 px the page's table of contents becomes the theme's drawer instead of taking
  17rem beside the article), scrolls wide tables inside their own box with the first column fixed,
  pads the cells of notebook output tables (the theme gives pandas tables none, so adjacent columns
  ran together) and wraps long printed lines (logs, prompts), which otherwise run off the page.
* **Downloads beside their pages.** The CSV files a chapter writes for its readers
  (``book/downloads/<chapter>/``) are copied to ``<html>/book/downloads/``, where the pages link them.
* **Typographic apostrophes in pasted text.** Text pasted from another page (the introduction's
  bottom lines, glued from the chapters) escapes Sphinx's smart quotes; an apostrophe between two
  letters there is made typographic ("people’s"), as everywhere else in the prose.
* **A last check.** Any script or stylesheet still registered with a remote URL fails the build.
* **A front page that opens the book.** The book's root page lives in ``book/``, so Jupyter Book
  writes ``index.html`` as a bare ``<meta http-equiv="Refresh">`` redirect, which some viewers
  (headless browsers taking a screenshot) do not follow; it is rewritten to redirect by script
  too, with a visible link as the last resort.
"""

from __future__ import annotations

import html
import importlib.util
import re
import shutil
from pathlib import Path
from typing import Any

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.config import Config
from sphinx.errors import ConfigError, ExtensionError

STATIC_SUBDIR = "mathjax"
ENTRY_POINT = "tex-chtml.js"
LOCAL_MATHJAX_PATH = f"{STATIC_SUBDIR}/{ENTRY_POINT}"
_REMOTE = re.compile(r"^\s*(https?:)?//", re.IGNORECASE)

# Everything under es5/ except combined builds we do not load, the Node entry point, and
# latest.js (which fetches MathJax from a CDN by design).
_SKIPPED_TOP_LEVEL = frozenset(
    {
        "latest.js",
        "node-main.js",
        "tex-chtml-full.js",
        "tex-chtml-full-speech.js",
        "tex-mml-chtml.js",
        "tex-mml-svg.js",
        "tex-svg.js",
        "tex-svg-full.js",
        "mml-chtml.js",
        "mml-svg.js",
    }
)
_THEBE_ASSETS = ("sphinx-thebe.js", "sphinx-thebe.css")


def mathjax_distribution() -> Path:
    """The ``es5`` folder of the installed MathJax 3 distribution."""
    spec = importlib.util.find_spec("mathjax")
    if spec is None or spec.origin is None:
        raise ExtensionError(
            "MathJax is not installed: the book serves MathJax locally from the PyPI package "
            "django-static-mathjax. Install it with `make install` (or "
            "`pip install django-static-mathjax`)."
        )
    es5 = Path(spec.origin).parent / "static" / "mathjax" / "es5"
    if not (es5 / ENTRY_POINT).is_file():
        raise ExtensionError(
            f"{es5 / ENTRY_POINT} is missing: the installed django-static-mathjax does not ship "
            "MathJax 3's es5 build. Reinstall it (`make install`)."
        )
    return es5


def _check_config(app: Sphinx, config: Config) -> None:
    path = str(config.mathjax_path or "")
    if path != LOCAL_MATHJAX_PATH:
        raise ConfigError(
            f"mathjax_path is {path!r}, but the book must read offline and this extension copies "
            f"MathJax to _static/{LOCAL_MATHJAX_PATH}: set `mathjax_path: {LOCAL_MATHJAX_PATH}` "
            "under `sphinx: config:` in _config.yml."
        )
    mathjax_distribution()  # fail at the start, not after the whole build


def _is_thebe_node(node: nodes.Node) -> bool:
    text = node.astext()
    return "text/x-thebe-config" in text or text.startswith("<script>kernelName =")


def _remove_thebe_nodes(app: Sphinx, doctree: nodes.document, docname: str) -> None:
    for node in list(doctree.findall(nodes.raw)):
        if _is_thebe_node(node):
            node.parent.remove(node)


def _inside_code(node: nodes.Node) -> bool:
    parent = node.parent
    while parent is not None:
        if isinstance(parent, (nodes.literal, nodes.FixedTextElement, nodes.raw, nodes.math, nodes.math_block)):
            return True
        parent = parent.parent
    return False


_APOSTROPHE = re.compile(r"(?<=[^\W\d_])'(?=[^\W\d_])")


def _typographic_apostrophes(app: Sphinx, doctree: nodes.document, docname: str) -> None:
    """``people's`` -> ``people’s`` in every prose text node (never in code, literals or math)."""
    for node in list(doctree.findall(nodes.Text)):
        if "'" not in node or _inside_code(node):
            continue
        fixed = _APOSTROPHE.sub("\u2019", str(node))
        if fixed != str(node):
            node.parent.replace(node, nodes.Text(fixed))


def _asset_name(asset: Any) -> str:
    return str(getattr(asset, "filename", asset) or "")


def _asset_body(asset: Any) -> str:
    return str(getattr(asset, "attributes", {}).get("body", ""))


def _filter_page_assets(app: Sphinx, pagename: str, templatename: str, context: dict[str, Any], doctree: Any) -> None:
    scripts = context.get("script_files")
    if scripts is not None:
        scripts[:] = [
            js
            for js in scripts
            if not _asset_name(js).endswith(_THEBE_ASSETS) and "THEBE_JS_URL" not in _asset_body(js)
        ]
    styles = context.get("css_files")
    if styles is not None:
        styles[:] = [css for css in styles if not _asset_name(css).endswith(_THEBE_ASSETS)]
    remote = [_asset_name(a) for a in [*(scripts or []), *(styles or [])] if _REMOTE.match(_asset_name(a))]
    if remote:
        raise ExtensionError(
            f"page {pagename!r} would load {remote} from the network; the book must read offline "
            "(disable the feature that adds it in _config.yml, or ship the file in _static)"
        )


def _copy_downloads(app: Sphinx, exception: Exception | None) -> None:
    """The CSV files the chapters offer (``book/downloads/<chapter>/``, written when a chapter is
    executed) beside the pages that link them (``<html>/book/downloads/``)."""
    if exception is not None or app.builder.format != "html":
        return
    source = Path(app.srcdir) / "book" / "downloads"
    if source.is_dir():
        shutil.copytree(source, Path(app.outdir) / "book" / "downloads", dirs_exist_ok=True)


def _copy_mathjax(app: Sphinx, exception: Exception | None) -> None:
    if exception is not None or app.builder.format != "html":
        return
    source = mathjax_distribution()
    target = Path(app.outdir) / "_static" / STATIC_SUBDIR
    shutil.copytree(
        source,
        target,
        ignore=lambda directory, names: [n for n in names if Path(directory) == source and n in _SKIPPED_TOP_LEVEL],
        dirs_exist_ok=True,
    )
    licence = source.parent / "LICENSE"
    if licence.is_file():
        shutil.copy2(licence, target / "LICENSE")


_INDEX_TEMPLATE = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>{title}</title>
<script>window.location.replace("{target}" + window.location.hash);</script>
<meta http-equiv="Refresh" content="0; url={target}">
</head>
<body>
<p><a href="{target}">{title}</a></p>
</body>
</html>
"""


def _write_index(app: Sphinx, exception: Exception | None) -> None:
    if exception is not None or app.builder.format != "html":
        return
    root_doc = app.config.root_doc
    if root_doc == "index":
        return  # the root page is index.html itself
    target = app.builder.get_target_uri(root_doc)
    title = html.escape(str(app.config.html_title or app.config.project or "Book"))
    (Path(app.outdir) / "index.html").write_text(
        _INDEX_TEMPLATE.format(title=title, target=html.escape(target, quote=True)), encoding="utf-8"
    )


def _add_output_style(app: Sphinx) -> None:
    """Ship ``static/outputs.css`` (padded table cells, wrapped printed lines) with every page."""
    app.config.html_static_path.append(str(Path(__file__).parent / "static"))
    app.add_css_file("outputs.css")


def setup(app: Sphinx) -> dict[str, Any]:
    app.connect("config-inited", _check_config)
    app.connect("builder-inited", _add_output_style)
    # after sphinx-thebe's own handlers (default priority 500)
    app.connect("doctree-resolved", _remove_thebe_nodes, priority=900)
    app.connect("doctree-resolved", _typographic_apostrophes, priority=900)
    app.connect("html-page-context", _filter_page_assets, priority=900)
    app.connect("build-finished", _copy_mathjax)
    app.connect("build-finished", _copy_downloads)
    # after sphinx-external-toc, which writes a bare redirect only when index.html is missing
    app.connect("build-finished", _write_index, priority=900)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
