"""The datasets chapter's tables and texts: overview, scale positions, aspect correlations, examples."""

from __future__ import annotations

import textwrap
from collections.abc import Mapping, Sequence
from itertools import combinations

import numpy as np
import pandas as pd
from scipy import stats

from nlgjudge.data import JudgeDataset
from nlgjudge.data.sources import DatasetLocation

#: Characters per line of printed text (the width of the book's text column).
WIDTH = 72
#: Texts that stand for no output at all (a system's placeholder, e.g. WebNLG team "vietnam"'s "null").
PLACEHOLDER_TEXTS = ("", "null", "none", "nan")


def format_range(low: float, high: float) -> str:
    """``1-5`` style (an en dash), as the chapter prints scales and counts."""
    return f"{low:g}–{high:g}"


def clip(text: str, limit: int, width: int = WIDTH) -> str:
    """At most ``limit`` characters (the rest counted), line breaks kept, long lines wrapped."""
    if len(text) > limit:
        text = text[:limit] + f" [... {len(text) - limit} more characters]"
    return "\n".join(textwrap.fill(line, width) if line.strip() else line for line in text.splitlines())


def shorten(text: str, limit: int) -> str:
    """One line for a table cell: whitespace collapsed, at most ``limit`` characters."""
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit] + " [...]"


def overview(datasets: Mapping[str, JudgeDataset]) -> pd.DataFrame:
    """One row per dataset: what a context and a candidate are, how many, scales, references."""
    rows = []
    for ds in datasets.values():
        frame, info = ds.frame, ds.info
        per_context = frame.groupby("context_id").size()
        ranges = {format_range(*info.score_ranges[a]) for a in info.aspects if a in info.score_ranges}
        rows.append({
            "dataset": info.title,
            "source": info.source_kind,
            "candidate": info.noun,
            "contexts": frame["context_id"].nunique(),
            "candidates": len(frame),
            "per context": format_range(per_context.min(), per_context.max())
            if per_context.min() != per_context.max() else str(per_context.min()),
            "systems": frame["system"].nunique(),
            "aspects": ", ".join(info.aspects) if info.aspects else "(none)",
            "score range": ", ".join(sorted(ranges)) if ranges else "",
            "references": "yes" if info.has_references else "no",
        })
    return pd.DataFrame(rows, index=list(datasets))


def scale_positions(datasets: Mapping[str, JudgeDataset]) -> pd.DataFrame:
    """Every human score rescaled to its scale's [0, 1] (0 = bottom, 1 = top), one row per score:
    columns dataset, aspect ("<dataset> <aspect>"), position on scale."""
    parts = []
    for name, ds in datasets.items():
        for aspect in ds.info.aspects:
            low, high = ds.info.score_ranges[aspect]
            parts.append(pd.DataFrame({
                "dataset": name,
                "aspect": f"{name} {aspect}",
                "position on scale": (ds.frame[aspect] - low) / (high - low),
            }))
    return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame()


def aspect_spearman(frame: pd.DataFrame, aspects: Sequence[str]) -> pd.DataFrame:
    """Spearman correlation between every two aspects' human scores (over all candidates)."""
    matrix = pd.DataFrame(np.eye(len(aspects)), index=list(aspects), columns=list(aspects))
    for first, second in combinations(aspects, 2):
        rho = stats.spearmanr(frame[first], frame[second], nan_policy="omit").statistic
        matrix.loc[first, second] = matrix.loc[second, first] = rho
    return matrix


def placeholder_mask(ds: JudgeDataset) -> pd.Series:
    """Candidates without real text: empty, or a placeholder such as ``null``."""
    return ds.frame["text"].str.strip().str.lower().isin(PLACEHOLDER_TEXTS)


def describe(ds: JudgeDataset) -> str:
    """The chapter's text about one dataset: size, source, aspects and scales, placeholders, notes."""
    frame, info = ds.frame, ds.info
    n_systems = frame["system"].nunique()
    lines = [
        clip(f"{info.title}: {frame['context_id'].nunique()} contexts, {len(frame)} candidate "
             f"{info.noun} texts from {n_systems} system{'s' if n_systems != 1 else ''}.", 1000),
        clip(f"Source: {info.citation}", 1000),
    ]
    for abbreviation, full_name in info.aspects.items():
        low, high = info.score_ranges[abbreviation]
        lines.append(f"  {abbreviation:<9} {full_name} (scale {format_range(low, high)})")
    blank = placeholder_mask(ds)
    if blank.any():
        per_system = frame.loc[blank, "system"].value_counts()
        listing = ", ".join(f"{system} {count}" for system, count in per_system.items())
        lines.append(clip(f"\nCandidates without real text (empty, or a placeholder such as 'null'): "
                          f"{int(blank.sum())} ({listing}). They are kept, with the scores people gave "
                          "them; a judge sees them too.", 1000))
    notes = getattr(info, "notes", "")
    if notes:
        lines.append("\nAbout this data:\n" + clip(notes, 2000))
    return "\n".join(lines)


def example(ds: JudgeDataset, text_limit: int = 200) -> tuple[str, pd.DataFrame]:
    """The first context as text (source and one reference, clipped) and its candidates as a table."""
    info = ds.info
    context_id = ds.context_ids()[0]
    candidates = ds.candidates(context_id)
    text = f"An example context, the first of this run ({info.source_kind}):\n\n" + clip(candidates["source"].iloc[0], 1200)
    references = candidates["references"].iloc[0]
    if len(references):
        text += f"\n\nReference (1 of {len(references)}):\n" + clip(references[0], 600)
    table = candidates[["system", "text", *info.aspects]].copy()
    table["text"] = table["text"].map(lambda t: shorten(t, text_limit))
    return text, table.set_index("system").round(2)


def sources_table(locations: Sequence[DatasetLocation]) -> pd.DataFrame:
    """Where a reader gets each dataset (:func:`nlgjudge.data.dataset_locations`): one row per set of
    files of the data directory, indexed by the datasets read from them, with the folder and its
    files (the folder written with a trailing ``/``, as a path, never as a dataset's reader name) and
    where to get them: the online copy the loaders read when the folder is missing and there is
    internet, and where the files can be obtained by hand."""
    rows: dict[tuple[str, tuple[str, ...]], dict] = {}
    for location in locations:
        local, online = location.local, location.online
        row = rows.setdefault((local.folder, tuple(local.files)), {"datasets": [], "online": [], "source": location.manual_source})
        row["datasets"].append(location.title.split(" (")[0])
        if online is not None:
            row["online"].append(online.hub_id + (f" ({online.config})" if online.config else ""))
    out = []
    for (folder, files), row in rows.items():
        shown = ", ".join(files) if len(files) <= 2 else f"{files[0]} and {len(files) - 1} more files"
        source = str(row["source"]).split("; see the mirror")[0]  # the mirror's own notes are not the reader's
        online = "; ".join(dict.fromkeys(row["online"]))
        out.append({"dataset": "; ".join(dict.fromkeys(row["datasets"])),
                    "folder/ and files": f"{folder}/ {shown}",
                    "where to get them": (f"online copy: {online}; by hand: " if online else "by hand only: ") + source})
    return pd.DataFrame(out).set_index("dataset")


def tie_ceilings(datasets: Mapping[str, JudgeDataset]) -> pd.DataFrame:
    """Per dataset and aspect, how tied people's scores are within a context and what that costs a
    perfect judge: ``tied_pairs`` is the share of a context's candidate pairs with equal scores
    (averaged over contexts); ``ceiling`` the mean over contexts of the Spearman between people's
    scores (tied candidates sharing their mean rank) and a judge that orders every candidate as
    people do and breaks each tie somehow. Every way of breaking the ties gives the same value (the
    sum of a tied group's ranks is fixed), so it is the highest a judge that never ties can reach.
    Contexts with fewer than two candidates or every score equal have no Spearman and are left out
    (counted in ``contexts``)."""
    rows = []
    for name, ds in datasets.items():
        for aspect in ds.info.aspects:
            tied, ceilings = [], []
            for _, part in ds.frame.groupby("context_id", sort=False):
                scores = part[aspect].dropna().to_numpy(float)
                if len(scores) < 2 or np.ptp(scores) == 0:
                    continue
                tied.append(np.mean([a == b for a, b in combinations(scores, 2)]))
                strict = stats.rankdata(scores, method="ordinal")  # ties broken by position: any order gives the same
                ceilings.append(stats.spearmanr(scores, strict).statistic)
            if ceilings:
                rows.append({"dataset": name, "aspect": aspect, "tied_pairs": float(np.mean(tied)),
                             "ceiling": float(np.mean(ceilings)), "contexts": len(ceilings)})
    return pd.DataFrame(rows, columns=["dataset", "aspect", "tied_pairs", "ceiling", "contexts"])
