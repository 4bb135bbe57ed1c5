"""Text written for people, made safe: user-given strings never become markup or terminal commands.

:func:`markdown_text` escapes what Markdown or the HTML it renders to would act on (tags such as
``<script>``, autolinks such as ``<javascript:...>``, link brackets, code spans, emphasis, table
cells' ``|``), so a system named ``<script>alert(1)</script>`` reads as those characters in
``report.md``. :func:`terminal_text` shows control characters (an ANSI escape sequence in a path,
a carriage return in a system name) as visible ``\\x1b``-style escapes, so a line printed to a
terminal cannot recolour, overwrite or retitle it. :func:`shown_path` quotes a path holding such a
character, so a message naming it keeps its reason on one readable line. Pure functions, no imports.
"""

from __future__ import annotations

import re

_MARKDOWN_SPECIAL = re.compile(r"([\\`*_\[\]|#!])")
_HTML = {"&": "&amp;", "<": "&lt;", ">": "&gt;"}
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def markdown_text(text: object) -> str:
    """``text`` as literal characters in Markdown (and the HTML it renders to), on one line."""
    plain = terminal_text(str(text)).replace("\n", " ")
    plain = "".join(_HTML.get(c, c) for c in plain)
    return _MARKDOWN_SPECIAL.sub(r"\\\1", plain)


def terminal_text(text: object) -> str:
    """``text`` with control characters (C0, C1, bidirectional overrides) shown as visible escapes;
    newlines and tabs kept."""
    return _CONTROL.sub(lambda m: m.group(0).encode("unicode_escape").decode("ascii"), str(text))


def shown_path(path: object) -> str:
    """``path`` as a message shows it: quoted (``repr``) when it holds a newline or another
    non-printable character, as it is otherwise."""
    name = str(path)
    return repr(name) if any(not ch.isprintable() for ch in name) else name
