"""The papers' own numbers, transcribed by hand into tidy CSV files under ``data/reported/``.

Every chapter shows "reported" (the paper's model, read from here) beside "ours" (computed), never
mixed. Each paper has an index file ``<paper>_index.csv`` (one row per table: file, short caption,
metric and how the table is laid out in the paper's text) and one tidy file per table.

For seed 000 (Liusie et al., EACL 2024, key ``liusie2024``) a table file has one row per printed cell:

``paper, table, caption_short, metric, row_group, row, column_group, column, printed, value, note``

* ``row_group``/``row``: the row labels as printed: the section and approach for Tables 1-4
  ("Comparative Assessment (§3)", "FlanT5-3B"), the system and prompt ("1"/"2") or debias flag
  ("✗"/"✓") for Tables 5-7, 9-10; ``row_group`` is empty where the paper has a single label.
* ``column_group``/``column``: the dataset (or "Avg.") and the aspect/column as printed.
* ``printed``: the exact string in the paper ("-0.0", "100", "-" for a missing cell);
  ``value``: its float (NaN for "-").
* ``note``: footnote markers removed from labels, and inconsistencies seen in the paper.

For seed 003 (Liu et al., key ``liu2023``) Tables 1-3 (human-score distributions; Spearman and
Kendall correlations with human scores) use the same tidy columns plus ``benchmark`` and ``setting``;
Tables 4-6 hold per-model checkpoints and prompt prefixes/suffixes (``row, checkpoint, suffix,
prefix``; "✗" means none).

For seed 004 (Harang, key ``harang2023``) the tables carry no number in the paper: they are printed
under Figures 1, 3, 4, 5 or without any caption (Cohen's kappa). Their keys are strings ("fig1",
"fig3", "fig4", "kappa", "fig5") where the other papers use table numbers; the tidy columns are the
same plus ``judge`` (who decided the encounters behind an Elo value or a regression).

:func:`check_table_against_text` re-reads a table from a paper's text and reports every cell
that differs from the transcription; the tests run it on every table.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from nlgjudge.config import REPO_ROOT

REPORTED_DIR_ENV = "NLGJUDGE_REPORTED_DIR"

#: Paper keys and the seed file each was transcribed from.
PAPERS: dict[str, str] = {
    "liusie2024": "Liusie, Manakul, Gales. LLM Comparative Assessment (EACL 2024)",
    "liu2023": "Liu, Moosavi, Lin. LLMs as Narcissistic Evaluators (2023)",
    "harang2023": "Harang. Beyond ROUGE: Applying an ELO algorithm to rank model performances in summarization (2023)",
}

_INDEX_COLUMNS = (
    "paper", "table", "file", "caption_short", "metric", "layout",
    "label_cells", "header_rows", "source", "caption_marker",
)

# Optional index columns (absent from older index files, read as ""): a title line printed above the
# header, and the label cells of the first header line ("|" between cells), both checked when given.
_OPTIONAL_INDEX_COLUMNS = ("title", "label_header")

# Footnote markers that the paper attaches to a few row labels; the tidy files keep clean labels
# and explain the footnote in ``note``.
_FOOTNOTE_MARKERS = re.compile(r"\s*(\[†\]|†|\*|∗)\s*$")


class UnknownTableError(KeyError):
    """A paper or table number that has no transcription."""

    def __str__(self) -> str:  # KeyError would otherwise quote the message
        return str(self.args[0])


class ReportedDataError(RuntimeError):
    """A transcription file is missing or malformed."""


#: A table's key: its number, or for tables the paper does not number (seed 004) a short name.
TableKey = int | str


@dataclass(frozen=True)
class TableLayout:
    """How a table is printed in the paper's text (used to re-read it for checking)."""

    paper: str
    table: TableKey
    file: str
    caption_short: str
    metric: str
    layout: str  # "sectioned" | "grouped" | "paired" | "plain" | "config"
    label_cells: int  # leading label cells on each printed row
    header_rows: int  # header lines above the first data row
    source: str  # seed file name of the paper's text
    caption_marker: str  # the caption's first words, e.g. "Table 5:" (the first words of the line below the table)
    title: str = ""  # a title line printed above the header ("RoSE - Reference-based"), counted in header_rows
    label_header: str = ""  # the label cells of the first header line below the title, "|" between cells


def reported_dir(override: str | os.PathLike[str] | None = None) -> Path:
    """Folder of the transcriptions: ``data/reported`` in the checkout (env ``NLGJUDGE_REPORTED_DIR``)."""
    if override is not None:
        return Path(override)
    if os.environ.get(REPORTED_DIR_ENV):
        return Path(os.environ[REPORTED_DIR_ENV])
    return REPO_ROOT / "data" / "reported"


def _check_paper(paper: str) -> None:
    if paper not in PAPERS:
        raise UnknownTableError(
            f"unknown paper {paper!r}: transcriptions exist for {sorted(PAPERS)}; "
            "pass one of those as paper=..."
        )


def _read_csv(path: Path) -> pd.DataFrame:
    if not path.is_file():
        raise ReportedDataError(
            f"transcription file {path} is missing; it ships with the repository under data/reported/ "
            f"(set {REPORTED_DIR_ENV} if you keep it elsewhere)"
        )
    # Keep "" as "" (empty row_group, "✗") rather than NaN; values are converted explicitly.
    return pd.read_csv(path, dtype=str, keep_default_na=False, encoding="utf-8")


def _table_key(text: str) -> TableKey:
    """A table number as int; a name (seed 004's "fig1", "kappa") stays a string."""
    text = str(text).strip()
    return int(text) if re.fullmatch(r"\d+", text) else text


def table_layouts(paper: str = "liusie2024", data_dir: str | os.PathLike[str] | None = None) -> dict[TableKey, TableLayout]:
    """The index of a paper's transcribed tables, by table number (or name), in the index's order."""
    _check_paper(paper)
    index = _read_csv(reported_dir(data_dir) / f"{paper}_index.csv")
    missing = set(_INDEX_COLUMNS) - set(index.columns)
    if missing:
        raise ReportedDataError(f"{paper}_index.csv lacks columns {sorted(missing)}")
    layouts: dict[TableKey, TableLayout] = {}
    for rec in index.to_dict("records"):
        key = _table_key(rec["table"])
        optional = {name: rec.get(name, "") for name in _OPTIONAL_INDEX_COLUMNS}
        layouts[key] = TableLayout(
            paper=rec["paper"], table=key, file=rec["file"], caption_short=rec["caption_short"],
            metric=rec["metric"], layout=rec["layout"], label_cells=int(rec["label_cells"]),
            header_rows=int(rec["header_rows"]), source=rec["source"], caption_marker=rec["caption_marker"],
            **optional,
        )
    return layouts


def _ordered(keys: Iterable[TableKey]) -> list[TableKey]:
    """Numbered tables in numeric order; named tables (seed 004) in the index's (printed) order."""
    keys = list(keys)
    return sorted(keys) if all(isinstance(k, int) for k in keys) else keys


def list_tables(paper: str = "liusie2024", data_dir: str | os.PathLike[str] | None = None) -> list[TableKey]:
    """Table numbers transcribed for a paper (names, in printed order, for seed 004)."""
    return _ordered(table_layouts(paper, data_dir))


def table_layout(table: TableKey, paper: str = "liusie2024", data_dir: str | os.PathLike[str] | None = None) -> TableLayout:
    layouts = table_layouts(paper, data_dir)
    if table not in layouts:
        raise UnknownTableError(
            f"table {table!r} of {paper!r} is not transcribed; available tables: {_ordered(layouts)}"
        )
    return layouts[table]


def _typed(frame: pd.DataFrame) -> pd.DataFrame:
    frame = frame.copy()
    keys = [_table_key(t) for t in frame["table"]]
    frame["table"] = frame["table"].astype(int) if all(isinstance(k, int) for k in keys) else keys
    if "value" in frame.columns:
        # An empty value is a cell the paper prints as "-": NaN, never 0.
        frame["value"] = [np.nan if v.strip() == "" else float(v) for v in frame["value"]]
        printed_dash = frame["printed"].str.strip() == "-"
        if not frame["value"].isna().eq(printed_dash).all():
            raise ReportedDataError(f"table {frame['table'].iloc[0]}: 'value' must be empty exactly where 'printed' is '-'")
    return frame


def load_reported(
    paper: str = "liusie2024",
    table: TableKey | None = None,
    data_dir: str | os.PathLike[str] | None = None,
) -> pd.DataFrame:
    """The paper's transcribed numbers as one tidy frame (one row per printed cell), in printed order.

    ``table=None`` concatenates all tables of the paper. An unknown paper or table raises
    :class:`UnknownTableError` naming what is available.
    """
    layouts = table_layouts(paper, data_dir)
    numbers = _ordered(layouts) if table is None else [table_layout(table, paper, data_dir).table]
    frames = [_typed(_read_csv(reported_dir(data_dir) / layouts[n].file)) for n in numbers]
    for n, frame in zip(numbers, frames):
        if frame.empty or set(frame["table"]) != {n}:
            raise ReportedDataError(f"{layouts[n].file} should hold the cells of table {n} only")
    return pd.concat(frames, ignore_index=True)


def reported_table(
    table: TableKey,
    paper: str = "liusie2024",
    printed: bool = False,
    data_dir: str | os.PathLike[str] | None = None,
) -> pd.DataFrame:
    """One table back in its printed shape: rows (row_group, row), columns (column_group, column).

    ``printed=True`` gives the exact printed strings instead of floats.
    """
    frame = load_reported(paper, table, data_dir)
    if "column" not in frame.columns:
        # The configuration tables of liu2023 already are in their printed shape.
        return frame.set_index("row")[["checkpoint", "suffix", "prefix"]]
    value_column = "printed" if printed else "value"
    row_keys = list(dict.fromkeys(zip(frame["row_group"], frame["row"])))
    col_keys = list(dict.fromkeys(zip(frame["column_group"], frame["column"])))
    wide = frame.pivot_table(
        index=["row_group", "row"], columns=["column_group", "column"], values=value_column,
        aggfunc="first", dropna=False, sort=False,
    )
    # pivot sorts labels; put rows and columns back in the order the paper prints them.
    wide = wide.reindex(index=pd.MultiIndex.from_tuples(row_keys, names=["row_group", "row"]),
                        columns=pd.MultiIndex.from_tuples(col_keys, names=["column_group", "column"]))
    wide.columns.name = None
    return wide


# --------------------------------------------------------------------------------------------
# Checking a transcription against the paper's text
# --------------------------------------------------------------------------------------------


def _cells(line: str) -> list[str]:
    """Tab-separated cells of a printed table line, stripped, without trailing empty cells."""
    cells = [c.strip() for c in line.split("\t")]
    while cells and cells[-1] == "":
        cells.pop()
    return cells


def _clean_label(label: str) -> str:
    return _FOOTNOTE_MARKERS.sub("", " ".join(label.split()))


def find_table_lines(paper_text: str, caption_marker: str) -> list[str]:
    """The printed lines of a table: the run of tab-separated lines just above its caption.

    In the text extraction of seed 000/003/004 every table line contains a tab and the caption
    ("Table N: ...", "Figure N ...") follows the table; blank lines between the two are skipped.
    For a table without caption (seed 004's Cohen's kappa) the marker is the start of the
    paragraph printed just below it.
    """
    lines = paper_text.splitlines()
    caption_at = [i for i, line in enumerate(lines) if line.strip().startswith(caption_marker)]
    if len(caption_at) != 1:
        raise ReportedDataError(
            f"expected exactly one caption starting with {caption_marker!r} in the paper text, "
            f"found {len(caption_at)}; is this the right paper file?"
        )
    i = caption_at[0] - 1
    while i >= 0 and not lines[i].strip():
        i -= 1
    block: list[str] = []
    while i >= 0 and "\t" in lines[i]:
        block.append(lines[i])
        i -= 1
    if not block:
        raise ReportedDataError(f"no tab-separated table lines found above {caption_marker!r}")
    return block[::-1]


def _expected_header(frame: pd.DataFrame, header_rows: int) -> list[list[str]]:
    col_keys = list(dict.fromkeys(zip(frame["column_group"], frame["column"])))
    if header_rows == 1:
        return [[c for _, c in col_keys]]
    groups = list(dict.fromkeys(g for g, _ in col_keys))
    # A group spanning one column whose name repeats the group ("Avg.", "Podcast") prints once.
    leaves = [c for g, c in col_keys if c != g]
    return [groups, leaves]


def _expected_data_lines(frame: pd.DataFrame, layout: TableLayout) -> list[tuple[str, list[str]]]:
    """(what it is, expected cells) for each printed line below the header, in order."""
    expected: list[tuple[str, list[str]]] = []
    if layout.layout == "config":
        for rec in frame.to_dict("records"):
            expected.append((f"row {rec['row']!r}", [rec["row"], rec["checkpoint"], rec["suffix"], rec["prefix"]]))
        return expected
    rows = list(dict.fromkeys(zip(frame["row_group"], frame["row"])))
    by_row = {key: list(part["printed"]) for key, part in frame.groupby(["row_group", "row"], sort=False)}
    if layout.layout == "paired":
        # Two rows share one printed line: "System  ✗ ✓  a1 b1  a2 b2 ..."
        groups = list(dict.fromkeys(g for g, _ in rows))
        for group in groups:
            members = [r for r in rows if r[0] == group]
            flags = " ".join(r[1] for r in members)
            pairs = [" ".join(vals) for vals in zip(*(by_row[m] for m in members))]
            expected.append((f"rows {group!r} {flags}", [group, flags, *pairs]))
        return expected
    previous_group: str | None = None
    for group, row in rows:
        if layout.layout == "sectioned":
            if group != previous_group:
                expected.append((f"section {group!r}", [group]))
            expected.append((f"row {group!r}/{row!r}", [row, *by_row[(group, row)]]))
        elif layout.layout == "plain" and layout.label_cells == 2:
            # Both labels printed on every line (seed 004: "GPT-3  ROUGE  -0.021").
            expected.append((f"row {group!r}/{row!r}", [group, row, *by_row[(group, row)]]))
        elif layout.label_cells == 2:
            # The system name is printed on the first line of its group only.
            shown = group if group != previous_group else ""
            expected.append((f"row {group!r}/{row!r}", [shown, row, *by_row[(group, row)]]))
        else:
            expected.append((f"row {row!r}", [row, *by_row[(group, row)]]))
        previous_group = group
    return expected


def check_table_against_text(frame: pd.DataFrame, paper_text: str, layout: TableLayout) -> list[str]:
    """Every difference between a transcribed table and the table printed in the paper's text.

    Checks the header (column groups and names, in order) and then each printed line, one to one
    and in order: labels (footnote markers ignored) and every value string. Also reports printed
    lines that were not transcribed. An empty list means the transcription matches exactly.
    """
    problems: list[str] = []
    lines = find_table_lines(paper_text, layout.caption_marker)
    header_lines, data_lines = lines[: layout.header_rows], lines[layout.header_rows :]
    first = 0  # header lines above the column names: the title line, if the table prints one
    if layout.title:
        got_title = [c for c in _cells(header_lines[0]) if c] if header_lines else []
        if got_title != [layout.title]:
            problems.append(f"table {layout.table} title line: paper has {got_title}, transcription has {[layout.title]}")
        first = 1
    if layout.layout == "config":
        expected_header = [["Name of Checkpoint or Model", "Suffix", "Prefix"]]
    else:
        expected_header = _expected_header(frame, layout.header_rows - first)
    for k, (line, want) in enumerate(zip(header_lines[first:], expected_header)):
        got = [c for c in _cells(line)[layout.label_cells :] if c]
        if got != want:
            problems.append(f"table {layout.table} header line {first + k + 1}: paper has {got}, transcription has {want}")
        if layout.label_header:
            # The label column's own header ("Evaluator", "Method 1|Method 2") on the first line, empty below.
            want_labels = layout.label_header.split("|") if k == 0 else [""] * layout.label_cells
            got_labels = (_cells(line) + [""] * layout.label_cells)[: layout.label_cells]
            if got_labels != want_labels:
                problems.append(
                    f"table {layout.table} header line {first + k + 1} labels: paper has {got_labels}, "
                    f"transcription has {want_labels}"
                )
    expected = _expected_data_lines(frame, layout)
    for k, (what, want) in enumerate(expected):
        if k >= len(data_lines):
            problems.append(f"table {layout.table} {what}: not printed in the paper (paper has {len(data_lines)} lines)")
            continue
        got = _cells(data_lines[k])
        got = [_clean_label(c) if j < layout.label_cells else c for j, c in enumerate(got)]
        if got != want:
            diffs = [
                f"cell {j}: paper {g!r} vs transcribed {w!r}"
                for j, (g, w) in enumerate(zip(got, want)) if g != w
            ]
            if len(got) != len(want):
                diffs.append(f"paper has {len(got)} cells, transcription {len(want)}")
            problems.append(f"table {layout.table} {what}: " + "; ".join(diffs))
    for extra in data_lines[len(expected) :]:
        problems.append(f"table {layout.table}: printed line not transcribed: {extra!r}")
    return problems

