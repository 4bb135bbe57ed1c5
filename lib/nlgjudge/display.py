"""How a chapter's tables read on the page: a missing value is "–", a number that rounds to zero
has no sign.

pandas writes a missing value as ``NaN``, ``<NA>`` or ``None`` depending on the column's type, and a
value such as -0.04 shown at one decimal as ``-0.0``: both read as findings to someone who does not
know pandas. :func:`readable_tables` registers an HTML formatter for data frames and stylers in the
running IPython kernel (the notebook's), which rewrites the table cells pandas produced; nothing
changes the data, and outside a kernel it does nothing.
"""

from __future__ import annotations

import re

import pandas as pd
from pandas.io.formats.style import Styler

#: What a table shows where it has no value.
MISSING = "–"

# One table cell whose whole text is a missing-value marker, or a zero with a minus sign.
_MISSING_CELL = re.compile(r"(<t[dh]\b[^>]*>)\s*(?:NaN|nan|&lt;NA&gt;|<NA>|None|NaT)\s*(</t[dh]>)")
_NEGATIVE_ZERO_CELL = re.compile(r"(<t[dh]\b[^>]*>)\s*-(0(?:\.0+)?(?:e[+-]?\d+)?)\s*(</t[dh]>)")


def clean_table_html(html: str) -> str:
    """``html`` with every missing-value cell written as :data:`MISSING` and every ``-0.0`` cell as
    ``0.0``; other cells (and text inside longer cells) are left as they are."""
    html = _MISSING_CELL.sub(lambda m: f"{m.group(1)}{MISSING}{m.group(2)}", html)
    return _NEGATIVE_ZERO_CELL.sub(lambda m: f"{m.group(1)}{m.group(2)}{m.group(3)}", html)


def _frame_html(frame: pd.DataFrame) -> str | None:
    html = frame._repr_html_()
    return None if html is None else clean_table_html(html)


def _styler_html(styler: Styler) -> str:
    return clean_table_html(styler.to_html())


def readable_tables() -> bool:
    """Register the cleaned HTML for data frames and stylers in the current IPython kernel; returns
    whether there was a kernel to register them in."""
    try:
        from IPython import get_ipython
    except ImportError:  # not in a notebook: nothing to format
        return False
    shell = get_ipython()
    if shell is None:
        return False
    formatter = shell.display_formatter.formatters["text/html"]
    formatter.for_type(pd.DataFrame, _frame_html)
    formatter.for_type(Styler, _styler_html)
    return True
