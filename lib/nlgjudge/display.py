"""How a chapter's tables read on the page: a missing value is "–", a number that rounds to zero
has no sign, a Python truth value is "yes" or "no", and a column named in code (``mean_prob_a``) is headed in words, with its unit.

pandas writes a missing value as ``NaN``, ``<NA>`` or ``None`` depending on the column's type, and a
value such as -0.04 shown at one decimal as ``-0.0``: both read as findings to someone who does not
know pandas. :func:`readable_tables` registers an HTML formatter for data frames and stylers in the
running IPython kernel (the notebook's), which rewrites the table cells pandas produced, and shows
datasets and models by name (:mod:`nlgjudge.reader_names`); nothing
changes the data, and outside a kernel it does nothing. Analysis functions keep short code names
for their columns (tests and notebooks select by them); :data:`COLUMN_LABELS` says how each reads on
the page, so one name has one heading in every chapter.
"""

from __future__ import annotations

import json
import os
import re
import sys
from collections.abc import Sequence
from html import escape
from pathlib import Path

import pandas as pd
from pandas.io.formats.style import Styler

from nlgjudge.config import DOWNLOADS_ENV
from nlgjudge.reader_names import KEEP_IDS_CLASS, reader_html, reader_text, use_model_names
from nlgjudge.stats.intervals import SMALL_N

#: What a table shows where it has no value.
MISSING = "–"

#: The heading a reader sees for each code name of a column (or index level) that reaches a page.
COLUMN_LABELS: dict[str, str] = {
    "accuracy_pct": "accuracy (%)",
    "adjacent_pairs": "neighbouring pairs",
    "candidates_without_score": "candidates without a score",
    "ci_high": "95% CI, high",
    "ci_low": "95% CI, low",
    "ci_mc_se": "Monte Carlo error of the ends",
    "column_group": "column group",
    "context_id": "context",
    "draws": "resamples",
    "gain_high": "gain, 95% CI high",
    "gain_low": "gain, 95% CI low",
    "highest_p_a": "highest P(A)",
    "judge_1": "judge 1",
    "judge_2": "judge 2",
    "kendall_with_full": "Kendall tau with the full budget",
    "lowest_p_a": "lowest P(A)",
    "mean_distance_from_half": "mean |P(A) - 0.5|",
    "mean_prob_a": "mean p(A)",
    "median_interval_width": "median interval width",
    "model_1": "model 1",
    "model_2": "model 2",
    "n_comparisons": "comparisons",
    "n_constant_gold": "contexts with constant human scores",
    "n_contestants": "contestants",
    "n_contexts": "contexts",
    "n_contexts_constant_gold": "contexts with constant human scores",
    "n_contexts_tied_prediction": "contexts with tied predictions",
    "n_encounters": "encounters",
    "n_left_out": "left out",
    "n_tied": "contexts with tied predictions",
    "n_unscored": "unscored",
    "p_a": "P(A)",
    "p_a_high": "P(A), 95% CI high",
    "p_a_low": "P(A), 95% CI low",
    "p_value": "p-value",
    "contexts_needed": "contexts needed",
    "people_articles": "articles with people's scores",
    "people_contexts": "contexts with people's scores",
    "people_mean": "people's mean score",
    "people_rank": "people's rank",
    "percent_unparseable": "unparseable (%)",
    "r_squared": "R²",
    "resolved_adjacent": "neighbouring pairs resolved (after Holm's correction)",
    "resolved_adjacent_uncorrected": "neighbouring pairs resolved (own intervals, before Holm)",
    "row_verdict": "verdict on its own interval",
    "resolved": "resolved on its own interval",
    "resolved_after_holm": "resolved after Holm's correction",
    "same_top": "same top system",
    "small_n": f"fewer than {SMALL_N} contexts (wide interval)",
    "spearman_gain": "Spearman gain (x100)",
    "spearman_x100": "Spearman x100",
    "target_fraction": "target fraction",
    "top_system": "top system",
    "win_rate": "win rate",
}

# A heading cell whose whole text is one of the code names above.
_CODE_NAME_HEADING = re.compile(r"(<th\b[^>]*>)\s*(" + "|".join(sorted(map(re.escape, COLUMN_LABELS), key=len, reverse=True))
                                + r")\s*(</th>)")

# One table cell whose whole text is a missing-value marker, or a zero with a minus sign.
_MISSING_CELL = re.compile(r"(<t[dh]\b[^>]*>)\s*(?:NaN|nan|&lt;NA&gt;|<NA>|None|NaT)\s*(</t[dh]>)")
# A cell that is one estimate with its interval ("-13.9 [-25.5, -2.3]"): kept on one line.
_INTERVAL_CELL = re.compile(r"(<td\b)([^>]*>)\s*([+-]?[\d.]+(?:e[+-]?\d+)? \[[^\]<]{1,40}\])\s*(</td>)")
_BOOLEAN_CELL = re.compile(r"(<td\b[^>]*>)\s*(True|False)\s*(</td>)")
_NEGATIVE_ZERO_CELL = re.compile(r"(<t[dh]\b[^>]*>)\s*-(0(?:\.0+)?(?:e[+-]?\d+)?)\s*(</t[dh]>)")


def clean_table_html(html: str) -> str:
    """``html`` with every missing-value cell written as :data:`MISSING`, every ``-0.0`` cell as
    ``0.0``, every ``True``/``False`` cell as yes/no, an estimate with its interval on one line, and every heading that is a code name in :data:`COLUMN_LABELS` in its words; other cells
    (and text inside longer cells) are left as they are."""
    html = _CODE_NAME_HEADING.sub(lambda m: f"{m.group(1)}{_escape(COLUMN_LABELS[m.group(2)])}{m.group(3)}", html)
    html = _MISSING_CELL.sub(lambda m: f"{m.group(1)}{MISSING}{m.group(2)}", html)
    html = _INTERVAL_CELL.sub(lambda m: f'{m.group(1)} style="white-space: nowrap"{m.group(2)}{m.group(3)}{m.group(4)}', html)
    html = _BOOLEAN_CELL.sub(lambda m: f"{m.group(1)}{'yes' if m.group(2) == 'True' else 'no'}{m.group(3)}", html)
    html = _NEGATIVE_ZERO_CELL.sub(lambda m: f"{m.group(1)}{m.group(2)}{m.group(3)}", html)
    # datasets and models by name; the parameters table keeps the ids a reader types after -p
    return html if KEEP_IDS_CLASS in html else reader_html(html)


def _escape(text: str) -> str:
    return escape(text, quote=False)


#: The most columns, row labels included, one table shows: a wider frame is shown as several tables,
#: one under the other, each with the row labels, so that every word and number keeps its line in an
#: 800-pixel column (the page's CSS never breaks inside a word).
MAX_TABLE_COLUMNS = 9


def column_blocks(columns: pd.Index, most: int = MAX_TABLE_COLUMNS) -> list[list[int]]:
    """The positions of ``columns`` split into blocks of at most ``most``: a two-level header's
    groups (e.g. "reported (Table 9)" | "ours") are never mixed in a block, and a group is split only
    when it alone is wider than ``most``."""
    if most < 1:
        raise ValueError(f"most must be at least 1; got {most}")
    groups: list[list[int]] = []
    for position, column in enumerate(columns):
        top = column[0] if isinstance(columns, pd.MultiIndex) else None
        if groups and (not isinstance(columns, pd.MultiIndex) or columns[groups[-1][0]][0] == top):
            groups[-1].append(position)
        else:
            groups.append([position])
    if not isinstance(columns, pd.MultiIndex):
        groups = [[position for group in groups for position in group]]
    blocks: list[list[int]] = []
    for group in groups:
        pieces = -(-len(group) // most)
        size = -(-len(group) // pieces)  # blocks of even width: 12 columns as 6 + 6, not 8 + 4
        blocks.extend(group[start:start + size] for start in range(0, len(group), size))
    return blocks


def _one_header_row(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` with a one-level index's name shown in the header row's corner, not on a second header
    row of its own (pandas's default, which reads as an empty row of the table)."""
    if frame.index.nlevels == 1 and frame.columns.nlevels == 1 and frame.index.name and frame.columns.name is None:
        return frame.rename_axis(index=None, columns=frame.index.name)
    return frame


def _frame_html(frame: pd.DataFrame) -> str | None:
    frame = _one_header_row(frame)
    most = max(2, MAX_TABLE_COLUMNS - frame.index.nlevels)
    if frame.shape[1] <= most:
        html = frame._repr_html_()
        return None if html is None else clean_table_html(html)
    parts = [frame.iloc[:, block]._repr_html_() for block in column_blocks(frame.columns, most)]
    return "\n".join(clean_table_html(html) for html in parts if html is not None) or None


def _styler_html(styler: Styler) -> str:
    return clean_table_html(styler.to_html())


class _ReaderStream:
    """The notebook's printed output with datasets and models by name (commands keep their ids)."""

    def __init__(self, stream: object) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        return self._stream.write(reader_text(text) if isinstance(text, str) else text)  # type: ignore[attr-defined]

    def __getattr__(self, name: str) -> object:
        return getattr(self._stream, name)


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
    from nlgjudge.models.packaged import PACKAGED_MODELS, model_title

    use_model_names({model: model_title(model) for model in PACKAGED_MODELS})  # for tables, prose and figures
    from IPython.display import HTML, Markdown

    formatter = shell.display_formatter.formatters["text/html"]
    formatter.for_type(pd.DataFrame, _frame_html)
    formatter.for_type(Styler, _styler_html)
    formatter.for_type(HTML, lambda block: reader_html(block.data))
    shell.display_formatter.formatters["text/markdown"].for_type(Markdown, lambda block: reader_text(block.data))
    if not isinstance(sys.stdout, _ReaderStream):
        sys.stdout = _ReaderStream(sys.stdout)
    return True


# --------------------------------------------------------------------------------------------
# Claims tables on a rerun, and the per-context values behind them

#: The column a rerun adds to a claims table.
WAS_COLUMN = "released build"


def _row_key(value: object) -> str:
    return " / ".join(map(str, value)) if isinstance(value, tuple) else str(value)


def with_released_verdicts(frame: pd.DataFrame, name: str, columns: Sequence[str] = ("verdict",),
                           keys: Sequence[str] | None = None) -> pd.DataFrame:
    """``frame`` (a claims table) as the page shows it: on a rerun, with a column that gives, for each
    row, the released build's verdict where it differs ("was: supported"), "same" where it does not
    and "new row" where the released build had no such row.

    Rows are matched by the index and ``keys`` (columns); ``columns`` hold the verdicts. The
    table's verdicts are glued (hidden) as ``rows_<name>``, which is how a later rerun finds them in
    the released page. Outside a rerun (:func:`nlgjudge.released.compare_with_released` found no
    released build) the frame comes back unchanged.
    """
    from nlgjudge import prose

    missing = [c for c in [*columns, *(keys or [])] if c not in frame.columns]
    if missing:
        raise KeyError(f"claims table {name!r} has no column(s) {missing}; it has {list(frame.columns)}")
    # a default 0..n-1 index numbers the rows of this run only: the key columns alone then
    index_parts = ([()] * len(frame) if keys and isinstance(frame.index, pd.RangeIndex)
                   else [k if isinstance(k, tuple) else (k,) for k in frame.index])
    if keys:  # the index and the key columns together (a table's index need not be unique alone)
        row_keys = [_row_key((*i, *k)) for i, k in zip(index_parts, frame[list(keys)].itertuples(index=False, name=None), strict=True)]
    else:
        row_keys = [_row_key(i) for i in index_parts]
    if len(set(row_keys)) != len(row_keys):
        raise ValueError(f"claims table {name!r}: its rows are not told apart by the index and {list(keys or [])}; name key columns")
    current = {k: " | ".join(str(frame.iloc[i][c]) for c in columns) for i, k in enumerate(row_keys)}
    try:
        from myst_nb import glue
    except ImportError:  # pragma: no cover - myst-nb is a book dependency
        glue = None
    if glue is not None:
        glue(f"rows_{name}", prose._Plain(json.dumps(current, ensure_ascii=False)), display=False)
    previous = prose.previous_values()
    if previous is None or f"rows_{name}" not in previous:
        return frame
    try:
        before = json.loads(previous[f"rows_{name}"])
    except (TypeError, json.JSONDecodeError):
        return frame
    was = ["new row" if k not in before else ("same" if before[k] == current[k] else f"was: {before[k]}") for k in row_keys]
    out = frame.copy()
    out.insert(list(out.columns).index(columns[-1]) + 1, WAS_COLUMN, was)
    dropped = [k for k in before if k not in current]
    if dropped:  # rows of the released build this run does not have: listed last, so no change goes unseen
        levels = out.index.nlevels
        index = [tuple(([k] + [""] * levels)[:levels]) if levels > 1 else k for k in dropped]
        gone = pd.DataFrame({c: ["–"] * len(dropped) for c in out.columns},
                            index=pd.MultiIndex.from_tuples(index, names=out.index.names) if levels > 1
                            else pd.Index(index, name=out.index.name))
        gone[WAS_COLUMN] = [f"dropped (was: {before[k]})" for k in dropped]
        out = pd.concat([out.astype(object), gone])
    return out


#: What each column of a downloaded CSV holds (the file keeps the code names a program reads); a
#: (chapter, column) entry where a name means something else in that chapter's file.
CSV_COLUMNS: dict[str | tuple[str, str], str] = {
    "model": "the judge (its id)", "judge": "the judge (its id, and the protocol where there are several)",
    "evaluator": "the model that scores the summaries (its id)", "generator": "the model that wrote the summary (its id)",
    "dataset": "the dataset (its id)", "template": "the prompt template, 1 or 2",
    "aspect": "the quality judged: COH coherence, CON consistency, FLU fluency, REL relevance (SummEval); COH coherence, CNT continuity, ENG engagingness, NAT naturalness (TopicalChat); FLU, GRA, SEM (WebNLG)",
    "context_id": "the context: one article, dialogue or document (its id in the dataset)",
    "comparator_method": "the prompt-scoring reading the comparative figure is compared with",
    "gap_spearman_x100": "in this context, comparative minus the comparator's Spearman with people, x100",
    "added_for_the_fresh_sample": "True for the contexts added after the claim was chosen for more data: the fresh sample its headline reads; the others are the contexts it was chosen on",
    "spearman_change_x100": "in this context, debiased minus plain Spearman with people, x100",
    "runtime": "the runtime that computed the judgments", "encounter": "the encounter's place in the visiting order",
    ("elo", "first"): "the contestant shown first", ("elo", "second"): "the contestant shown second",
    "y": "the outcome: 1 the second contestant won, 0 the first, 0.5 a tie",
    "attack": "the attack: irrelevant = irrelevant text, persuasive = self-praise, format = imitated answer, control = forged chat turns, padded = repeated summary",
    "protected": "True when the candidates' control strings were read as plain text (the library's protection)",
    ("gaming", "first"): "the attack's win rate against the article's real summaries, standing first",
    ("gaming", "second"): "the same, standing second",
    "both": "the attack's win rate over both orders (the two probabilities averaged per pair)",
    "opponents": "how many real summaries the attack met in this article",
    "setting": "how the evaluator was asked: reference_free (without the reference summary) or reference_based (with it)", "n_tokens": "the summary's length in the evaluator's tokens",
    "n_words": "the summary's length in words (whitespace split of the cleaned summary): the length the length claims read",
    "loglik_mean": "the evaluator's mean log-probability per token of the summary",
    "loglik_sum": "the evaluator's total log-probability of the summary", "empty": "True when the summary is empty",
    "from_cache": "True when the judgment was read from the released outputs or the cache, False when computed in this build",
    "label_mass": "the probability the judge gave its answer labels together before p(A) is read from them (near 0: it would have answered something else); empty for identical outputs",
    ("rank", "first"): "the system in position A", ("rank", "second"): "the system in position B",
    "p_a": "the judge's probability that the output in position A is the better one",
    "identical": "True when the two outputs are the same text (a tie by definition, not put to the judge)",
    "round": "the judging round", "decision": "the debiased decision for position A: 1 A wins, 0 B wins, 0.5 a tie",
    "n_candidates": "the candidates in this context", "comparison": "the finding's comparison (the two sides of the difference)",
    ("subsets", "first_x100"): "the comparison's first side in this context, Spearman with people x100",
    ("subsets", "second_x100"): "its second side",
}


def column_legend(frame: pd.DataFrame, chapter: str) -> str:
    """HTML: a folded list saying what each column of ``frame``'s CSV holds (:data:`CSV_COLUMNS`)."""
    items = "".join(f"<li><code>{_escape(str(c))}</code>: {_escape(CSV_COLUMNS.get((chapter, str(c)), CSV_COLUMNS.get(str(c), 'as named')))}</li>"
                    for c in frame.columns)
    return f"<details><summary>What each column holds</summary><ul>{items}</ul></details>"


def download_link(frame: pd.DataFrame, chapter: str, name: str, what: str):  # -> IPython.display.HTML
    """Write ``frame`` as ``<name>.csv`` for the page's readers and return the link that offers it
    ("Download the per-context gaps (CSV, 330 rows)"). The file goes where :data:`DOWNLOADS_ENV`
    points (a chapter built by :mod:`nlgjudge.book`); without it (a notebook run by hand or under
    nbval) nothing is written and the text says that the build writes it."""
    from IPython.display import HTML

    if not re.fullmatch(r"[a-z0-9][a-z0-9_-]*", name):
        raise ValueError(f"download names are lower-case letters, digits, '-' and '_': got {name!r}")
    folder = os.environ.get(DOWNLOADS_ENV)
    label = f"{_escape(what)} (CSV, {len(frame):,} rows)"
    if not folder:
        return HTML(f'<p class="nlgjudge-download">The {label} are written when the book is built (<code>make book</code>).</p>')
    path = Path(folder) / f"{name}.csv"
    path.parent.mkdir(parents=True, exist_ok=True)
    frame.to_csv(path, index=False)
    href = f"downloads/{chapter}/{name}.csv"
    return HTML(f'<p class="nlgjudge-download">Download the <a href="{escape(href)}" download>{label}</a>.</p>'
                + column_legend(frame, chapter))


def per_unit_values(frame: pd.DataFrame, column: str, keys: Sequence[str], unit: str, value: str) -> pd.DataFrame:
    """A claims frame whose ``column`` holds ``{unit id: value}`` per row, as one row per unit:
    ``keys`` + ``unit`` + ``value`` (what a reader recomputes a row's interval from)."""
    rows = [{**{k: r[k] for k in keys}, unit: u, value: v}
            for r in frame.to_dict("records") if isinstance(r.get(column), dict) for u, v in r[column].items()]
    return pd.DataFrame(rows, columns=[*keys, unit, value])


#: A study's and a runtime's name in the bookkeeping lines a reader sees (the lines carry the ids).
_BOOKKEEPING_WORDS = {"selfpref": "pairwise self-preference", "generation": "summaries written",
                      "likelihood": "likelihood scores", "comparative": "comparisons", "scoring": "prompt scores",
                      "elo": "contest judgments", "gaming_reference": "attacks with the reference", "gaming": "attacks"}
_RUNTIME_WORDS = {"(llamacpp)": "(llama.cpp)", "(torch)": "(PyTorch)", "(server)": "(a server)"}


def _bookkeeping_line(line: str) -> str:
    """A coverage line ("selfpref, qags_cnndm, <model> (llamacpp): ...") in reader words."""
    study, sep, rest = line.partition(", ")
    if sep and study in _BOOKKEEPING_WORDS:
        line = f"{_BOOKKEEPING_WORDS[study]}, {rest}"
    for word, said in _RUNTIME_WORDS.items():
        line = line.replace(word, said)
    return line


def folded_lines(lines: Sequence[str], summary: str = "Which contexts each run read") -> object:
    """Bookkeeping lines (which contexts a run read, where its outputs came from) folded under
    ``summary``: on the page for a reader who asks, out of the way of one who does not."""
    from IPython.display import HTML

    body = escape("\n".join(_bookkeeping_line(str(line)) for line in lines if str(line).strip()), quote=False)
    return HTML(f"<details><summary>{escape(summary, quote=False)}</summary><pre>{body}</pre></details>")
