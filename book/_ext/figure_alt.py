"""Sphinx extension: every notebook figure gets a description as its alt text, not its file name.

myst-nb writes a notebook's image output to a file named by the SHA-256 of its bytes and gives the
``<img>`` no alt text, so the HTML writer uses the file's path, which a screen reader reads out as a
64-digit hash. The book's figures are shown by ``nlgjudge.plotting.show``, which puts a description
made from the figure's own titles and axis labels in the output's metadata (``"image/png": {"alt":
...}``). This extension reads those descriptions from the executed chapters and sets them on the
image nodes, matching each by the hash in its file name; a figure without one gets a plain sentence
rather than a hash.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
from pathlib import Path
from typing import Any

from docutils import nodes
from sphinx.application import Sphinx

#: What a figure without a description of its own is called.
FALLBACK = "A figure of this page; the text around it says what it shows."


def descriptions(notebooks: list[Path]) -> dict[str, str]:
    """``{sha256 of the PNG bytes: alt text}`` over the image outputs of ``notebooks`` that carry one."""
    found: dict[str, str] = {}
    for path in notebooks:
        try:
            notebook = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        for cell in notebook.get("cells", []):
            for output in cell.get("outputs", []):
                data = output.get("data", {}).get("image/png")
                alt = output.get("metadata", {}).get("image/png", {}).get("alt")
                if not (isinstance(data, str) and isinstance(alt, str) and alt.strip()):
                    continue
                try:
                    digest = hashlib.sha256(base64.b64decode(data)).hexdigest()
                except (binascii.Error, ValueError):
                    continue
                found[digest] = alt.strip()
    return found


def _is_hash(name: str) -> bool:
    return len(name) == 64 and all(c in "0123456789abcdef" for c in name)


def _load(app: Sphinx) -> None:
    app._nlg_figure_alt = descriptions(sorted(Path(app.srcdir).glob("book/*.ipynb")))  # type: ignore[attr-defined]


def _set_alt(app: Sphinx, doctree: nodes.document, docname: str) -> None:
    table: dict[str, str] = getattr(app, "_nlg_figure_alt", {})
    for image in doctree.findall(nodes.image):
        if image.get("alt"):
            continue
        name = Path(str(image.get("uri", ""))).stem
        if _is_hash(name):
            image["alt"] = table.get(name, FALLBACK)


def setup(app: Sphinx) -> dict[str, Any]:
    app.connect("builder-inited", _load)
    app.connect("doctree-resolved", _set_alt)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
