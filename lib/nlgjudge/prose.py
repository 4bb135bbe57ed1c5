"""Numbers and names in a chapter's prose, glued from computed values (myst-nb ``glue``).

A chapter computes a mapping of short names to display strings (``analysis`` modules build them)
and calls :func:`glue_all` in a hidden cell; its Markdown then cites them as
``{glue:text}`name```. The text cannot drift from the outputs: rerun with another model and the
sentences change with the tables. Values are glued as plain strings, formatted where they are
computed, so a reader sees exactly what the code decided to say.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pandas as pd


class _Plain:
    """A string glued so that ``{glue:text}`` pastes exactly it.

    myst-nb's ``{glue:text}`` passes the glued text/plain through ``ast.literal_eval``, so an
    unquoted "+0.2" would be pasted as "0.2", "-0.40" as "-0.4" and '"TL;DR:"' lose its quotes.
    Gluing the string's ``repr`` makes that evaluation give back the string itself, unquoted."""

    def __init__(self, text: str) -> None:
        self.text = text

    def __repr__(self) -> str:
        return repr(self.text)


#: The released build's glued values on a rerun (set by :func:`nlgjudge.released.compare_with_released`).
_previous_values: Mapping[str, str] | None = None

#: The verdict words of the claim rule, longest first so that "not resolved" is read whole.
VERDICT_WORDS = ("not resolved", "not tested", "supported", "contradicted")
_VERDICT_WORDS = re.compile(r"\b(" + "|".join(VERDICT_WORDS) + r")\b")


def set_previous_values(values: Mapping[str, str] | None) -> None:
    """What :func:`glue_all` compares with: the released build's glued values, or ``None`` (no rerun)."""
    global _previous_values
    _previous_values = dict(values) if values is not None else None


def previous_values() -> Mapping[str, str] | None:
    """The released build's glued values on a rerun (:func:`set_previous_values`), else ``None``."""
    return _previous_values


#: Glued values that describe the build, not its results: never marked.
_NOT_RESULTS = frozenset({"previous_build_time"})
#: A changed value up to this long is shown with the released one beside it; a longer one is marked.
_SHORT_VALUE = 60


def with_previous(name: str, text: str, previous: Mapping[str, str] | None) -> str:
    """``text`` marked where the released build said otherwise, so a rerun shows every change: the
    released verdict words, in order, when they differ; otherwise "(was: ...)" with the released
    value for a short one (a count, a name, an order) and "(changed since the released build)" for a
    sentence. Unchanged, when the released build glued the same or did not glue this name."""
    if not previous or name not in previous or name in _NOT_RESULTS:
        return text
    before = previous[name]
    if text == before:
        return text
    words_now, words_before = _VERDICT_WORDS.findall(text), _VERDICT_WORDS.findall(before)
    if words_before and words_now != words_before:
        return f"{text} (was: {', '.join(words_before)})"
    if len(before) <= _SHORT_VALUE:
        return f"{text} (was: {before})"
    return f"{text} (changed since the released build)"


def glue_all(values: Mapping[str, object], prefix: str = "") -> None:
    """Glue every ``name -> value`` (as ``str``) for the Markdown of the current notebook, hidden; on a
    rerun, a verdict that changed carries the released build's beside it (:func:`with_previous`)."""
    for name in values:
        if not name.replace("_", "").isalnum():
            raise ValueError(f"glue names are letters, digits and '_': got {name!r}")
    from myst_nb import glue  # imported here: only notebooks glue

    from nlgjudge.reader_names import reader_text

    for name, value in values.items():
        full = f"{prefix}{name}"
        # prose shows names ("SummEval"), never ids ("summeval"); commands keep the ids a reader types
        glue(full, _Plain(with_previous(full, reader_text(str(value)), _previous_values)), display=False)


class _Markdown(_Plain):
    """A Markdown block glued for the ``{glue:md}`` directive; its text/plain is the quoted text, as every
    glued value's, so that the register's checks read its verdict words."""

    def _repr_markdown_(self) -> str:
        return self.text


def markdown_table(frame: pd.DataFrame) -> str:
    """A small frame as a Markdown pipe table (its index the first column), for a table inside an answer box."""
    def cell(value: object) -> str:
        return " ".join(str(value).split()).replace("|", "\\|")

    head = [frame.index.name or "", *map(str, frame.columns)]
    lines = ["| " + " | ".join(cell(h) for h in head) + " |", "|" + "---|" * len(head)]
    lines += ["| " + " | ".join(cell(v) for v in (index, *row)) + " |" for index, row in zip(frame.index, frame.to_numpy().tolist())]
    return "\n".join(lines)


def glue_markdown(name: str, text: str) -> None:
    """Glue a Markdown block (a table) under ``name`` for ``{glue:md}``, as :func:`glue_all` glues text."""
    if not name.replace("_", "").isalnum():
        raise ValueError(f"glue names are letters, digits and '_': got {name!r}")
    from myst_nb import glue

    from nlgjudge.reader_names import reader_text

    glue(name, _Markdown(with_previous(name, reader_text(text), _previous_values)), display=False)


def duration_text(seconds: float) -> str:
    """``75.2`` -> ``"1 min 15 s"``; ``8.4`` -> ``"8 s"``."""
    seconds = round(seconds)
    minutes, rest = divmod(seconds, 60)
    return f"{minutes} min {rest:02d} s" if minutes else f"{rest} s"


def fixed(value: float, decimals: int, signed: bool = False) -> str:
    """``value`` to ``decimals`` places, a number that rounds to zero without a sign ("0.0", never
    "-0.0"; signed: "0.0", not "+0.0" or "-0.0")."""
    text = f"{value:+.{decimals}f}" if signed else f"{value:.{decimals}f}"
    digits = text.lstrip("+-")
    return digits if float(digits) == 0 else text


def number(value: float, decimals: int = 1, signed: bool = False) -> str:
    """A number as the prose shows it ("n/a" for NaN; zero without a sign)."""
    if value != value:  # NaN
        return "n/a"
    return fixed(value, decimals, signed)


def interval_text(value: float, low: float, high: float, decimals: int = 2, edges: Sequence[float] = (),
                  bounded_at_zero: bool = False) -> str:
    """``"value [low, high]"``, the one way every table and sentence shows an estimate with its
    interval: "–" when there is no estimate, ``"value [n < 2]"`` when the interval is undefined
    (fewer than two contexts). An end a reader would read against a line keeps its side of it: an end
    that rounds to 0 but is not 0 gets the decimals that show its sign ("-0.04", never "0.0"), and an
    end within one rounding unit of one of ``edges`` (a claim's band) one more decimal ("-0.196", not
    "-0.20" for a band ending at -0.2). ``bounded_at_zero``: 0 is the statistic's bound (a share), not a
    line it is read against, so an end near it keeps the estimate's decimals ("0.00 [0.00, 0.29]")."""
    if not math.isfinite(value):
        return "–"
    if not (math.isfinite(low) and math.isfinite(high)):
        return f"{fixed(value, decimals)} [n < 2]"
    return (f"{fixed(value, decimals)} [{_end(low, decimals, edges, bounded_at_zero)}, "
            f"{_end(high, decimals, edges, bounded_at_zero)}]")


def _end(end: float, decimals: int, edges: Sequence[float], bounded_at_zero: bool = False) -> str:
    places = decimals
    if any(abs(end - edge) < 10.0 ** -decimals and end != edge for edge in edges):
        places = decimals + 1
    while not bounded_at_zero and end != 0 and float(fixed(end, places)) == 0 and places < decimals + 3:
        places += 1
    return fixed(end, places)


def listing(names: list[str], empty: str = "none") -> str:
    """``a``, ``a and b``, ``a, b and c``."""
    if not names:
        return empty
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def short_id(identifier: str, keep: int = 8) -> str:
    """A dataset's id as a reader sees it: a run of 12 or more hex digits (a CNN/DM article's hash) cut
    to its first ``keep`` and an ellipsis; everything else kept (``dm-test-8764fb95…``)."""
    return re.sub(r"[0-9a-f]{12,}", lambda m: m.group(0)[:keep] + "\u2026", identifier)


def verdict_cell(verdict: str, reason: str) -> str:
    """A claim-rule verdict as a table cell: the word alone where the row's interval shows why,
    with the reason where it does not ("not tested: n = 2 < 3")."""
    return f"{verdict}: {reason}" if verdict == "not tested" else verdict


def flag_words(own_verdict: str, family: str = "") -> str:
    """The one way the book says a row was resolved on its own interval but not after Holm's
    correction over its family (the glossary's "flag"): ``family`` names the members when the
    reader needs it ("the datasets")."""
    over = f" over {family}" if family else ""
    return f"a flag: {own_verdict} on its own interval, not after Holm's correction{over}"


def verdict_after_holm(own_verdict: str, family_verdict: str, reason: str = "", family: str = "") -> str:
    """A row's verdict as a cell: its own verdict (with the reason where not tested, as
    :func:`verdict_cell`) when the family keeps it, else the family's with the flag beside it."""
    if family_verdict == own_verdict:
        return verdict_cell(own_verdict, reason)
    return f"{family_verdict} ({flag_words(own_verdict, family)})"
