"""The one layout that puts a paper's reported numbers beside ours, never in one row or column.

:func:`reported_tidy` turns a transcribed seed-000 table (:func:`nlgjudge.reported.load_reported`)
into the tidy shape of our tables; :func:`side_by_side` lays the two out as separate blocks of
columns labelled by source ("reported (Table 9)" | "ours"). Rows are the keys both share (dataset
and aspect, say); each column is one system of one source.
"""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

#: Dataset names as printed in the paper's tables -> this package's names.
REPORTED_DATASETS = {"SummEval": "summeval", "TopicalChat": "topicalchat", "WebNLG": "webnlg", "Podcast": "podcast"}


def reported_tidy(reported: pd.DataFrame, value_name: str, keep_average: bool = False) -> pd.DataFrame:
    """A seed-000 table from :func:`nlgjudge.reported.load_reported` as model, dataset, aspect, <key>, value.

    ``row`` (the prompt "1"/"2" or the debias flag "✗"/"✓") is kept as printed in column ``row``;
    missing cells ("-") are dropped (they are absent in the paper too), and so are the paper's
    "Avg." columns (averages over its own set of aspects, not comparable to a subset) unless
    ``keep_average``: then they are rows with dataset and aspect "Avg.", to stand beside our average
    over the same columns (:func:`nlgjudge.analysis.bias.table6_average`).
    """
    average = reported["column_group"] == "Avg."
    frame = reported.loc[reported["value"].notna() & (~average | keep_average)].copy()
    unknown = sorted(set(frame["column_group"]) - set(REPORTED_DATASETS) - {"Avg."})
    if unknown:
        raise ValueError(f"reported table has unknown dataset labels {unknown}; known: {sorted(REPORTED_DATASETS)}")
    return pd.DataFrame(
        {
            "model": frame["row_group"].where(frame["row_group"] != "", "(paper)"),
            "row": frame["row"],
            "dataset": frame["column_group"].map({**REPORTED_DATASETS, "Avg.": "Avg."}),
            "aspect": frame["column"],
            value_name: frame["value"].astype(float),
        }
    )


def side_by_side(
    reported: pd.DataFrame,
    ours: pd.DataFrame,
    value: str,
    column_keys: Sequence[str],
    reported_label: str,
    ours_label: str = "ours",
    row_keys: Sequence[str] = ("dataset", "aspect"),
) -> pd.DataFrame:
    """One table with rows ``row_keys`` and two blocks of columns: the paper's (``reported_label``,
    e.g. "reported (Table 9)") and ours. Each column is one system of one source: never mixed.

    ``reported`` and ``ours`` are tidy frames holding ``row_keys``, ``column_keys`` and ``value``.
    Rows are those of ours (the reported block shows what the paper has for them; blanks where it
    has nothing), then any rows only the paper has.
    """
    blocks = []
    for label, frame in ((reported_label, reported), (ours_label, ours)):
        if frame.empty:
            continue
        wide = frame.pivot_table(index=list(row_keys), columns=list(column_keys), values=value, aggfunc="first", sort=False)
        wide.columns = pd.MultiIndex.from_tuples(
            [(label, *(c if isinstance(c, tuple) else (c,))) for c in wide.columns], names=["source", *column_keys]
        )
        blocks.append(wide)
    if not blocks:
        raise ValueError("both the reported and our table are empty")
    order = list(dict.fromkeys(list(ours.set_index(list(row_keys)).index) + list(reported.set_index(list(row_keys)).index)))
    table = pd.concat(blocks, axis=1)
    return table.reindex(pd.MultiIndex.from_tuples(order, names=list(row_keys)) if len(row_keys) > 1 else order)


#: How :func:`mark_missing` shows a cell with no value: our run did not make it / the paper has none.
NOT_RUN, NOT_REPORTED = "not run", "–"


def mark_missing(table: pd.DataFrame, decimals: int, ours_label: str = "ours") -> pd.DataFrame:
    """A :func:`side_by_side` table for display: values rounded to ``decimals``, an empty cell of
    ours shown as :data:`NOT_RUN` (a model not run on that dataset) and one of the paper's as
    :data:`NOT_REPORTED`, instead of columns of NaN."""
    shown = pd.DataFrame(index=table.index, columns=table.columns, dtype=object)
    for column in table.columns:
        label = NOT_RUN if (column[0] if isinstance(column, tuple) else column) == ours_label else NOT_REPORTED
        shown[column] = [label if pd.isna(v) else f"{v:.{decimals}f}" for v in table[column].round(decimals)]
    return shown
