"""Containers, validation and seeded subset selection shared by every dataset loader.

Every loader returns the same tidy shape (one row per candidate text), described by
:data:`CORE_COLUMNS` followed by one float column per human-scored aspect. The papers this
package reproduces (Liusie et al. 2024, comparative assessment; Liu et al., narcissistic
evaluators; Harang, Elo vs ROUGE) all reason about *contexts* (a passage, dialogue or set of
triples) each with several *candidates* (summaries or responses) scored by humans, so that is
the unit the container exposes.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
import pandas as pd

#: Columns every tidy frame starts with, in this order; aspect columns follow.
CORE_COLUMNS: tuple[str, ...] = (
    "context_id",
    "source",
    "references",
    "candidate_id",
    "system",
    "text",
)

#: Internal column carrying a human-readable origin ("file, line 7, system M5") for error
#: messages during validation; it is dropped before a frame is handed to the user.
ORIGIN_COLUMN = "_origin"

SourceKind = Literal["passage", "dialogue", "triples"]
Noun = Literal["summary", "response"]

#: How many individual problems a validation error lists before summarising the rest.
_MAX_LISTED_PROBLEMS = 10


class DataNotFoundError(FileNotFoundError):
    """A dataset is neither in the data directory nor reachable at its online source."""


class DataValidationError(ValueError):
    """A dataset file was found but its content is malformed (counts, ids, scores, text)."""


@dataclass(frozen=True)
class DatasetInfo:
    """Static description of a dataset: what its aspects are called and how they are scored.

    ``aspects`` maps the papers' abbreviations (e.g. ``"COH"``) to full names, in display order;
    the tidy frame has one float column per key. ``noun`` is the word prompts use for a
    candidate ("summary" or "response"); ``source_kind`` says what the context is.
    ``notes`` records loader decisions a reader should know (what was kept, what differs
    between the local and the online copy).
    """

    name: str
    title: str
    aspects: dict[str, str]
    noun: Noun
    source_kind: SourceKind
    score_ranges: dict[str, tuple[float, float]]
    has_references: bool
    citation: str
    notes: str = ""

    def __post_init__(self) -> None:
        if set(self.aspects) != set(self.score_ranges):
            raise ValueError(
                f"DatasetInfo {self.name!r}: aspects {sorted(self.aspects)} and score_ranges "
                f"{sorted(self.score_ranges)} must name the same aspects"
            )
        for aspect, (low, high) in self.score_ranges.items():
            if not low < high:
                raise ValueError(f"DatasetInfo {self.name!r}: empty score range for {aspect}")

    @property
    def columns(self) -> tuple[str, ...]:
        """The tidy frame's columns: the core columns then one per aspect."""
        return CORE_COLUMNS + tuple(self.aspects)


@dataclass(frozen=True)
class ExpectedShape:
    """Counts a complete copy of a dataset must have (None: not checked).

    ``allow_empty_text`` exists for WebNLG 2017, where one team submitted empty outputs that
    the human raters scored; those are real data, not damage.
    """

    n_contexts: int | None
    candidates_per_context: int | None
    allow_empty_text: bool = False


def select_context_ids(context_ids: Sequence[str], n: int, seed: int = 0) -> list[str]:
    """A deterministic random subset of ``n`` context ids, kept in their original order.

    The subset depends only on ``(len(context_ids), n, seed)``: the first ``n`` positions of a
    permutation drawn by ``numpy.random.default_rng(seed)``, then sorted. Subsets of one seed are
    nested (the 5 contexts chosen for ``n=5`` are among the 20 chosen for ``n=20``), so a small
    rerun of a chapter finds its outputs among those released for the default subset.
    """
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)):
        raise TypeError(f"n_contexts must be an integer, got {n!r}")
    available = len(context_ids)
    if n < 1:
        raise ValueError(f"n_contexts must be at least 1, got {n}")
    if n > available:
        raise ValueError(
            f"n_contexts={n} exceeds the {available} contexts available; "
            f"use n_contexts=None for all of them"
        )
    rng = np.random.default_rng(seed)
    positions = np.sort(rng.permutation(available)[: int(n)])
    return [context_ids[int(i)] for i in positions]


class JudgeDataset:
    """A tidy dataset of contexts, each with several candidate texts and human scores.

    ``frame`` has one row per candidate, columns :data:`CORE_COLUMNS` then one float column per
    aspect in ``info.aspects``. Rows of a context are contiguous; contexts and candidates keep
    the order of the source files.
    """

    def __init__(self, frame: pd.DataFrame, info: DatasetInfo) -> None:
        expected = list(info.columns)
        if list(frame.columns) != expected:
            raise ValueError(
                f"JudgeDataset {info.name!r}: frame columns {list(frame.columns)} "
                f"differ from the expected {expected}"
            )
        self._frame = frame.reset_index(drop=True)
        self._info = info
        # pd.unique keeps first-appearance order, which is the file order.
        self._context_ids: list[str] = [str(c) for c in pd.unique(self._frame["context_id"])]

    @property
    def frame(self) -> pd.DataFrame:
        """The tidy table (one row per candidate)."""
        return self._frame

    @property
    def info(self) -> DatasetInfo:
        """Static metadata: aspects, noun, score ranges, citation."""
        return self._info

    @property
    def aspects(self) -> list[str]:
        """Aspect column names (abbreviations), in display order."""
        return list(self._info.aspects)

    def context_ids(self) -> list[str]:
        """Context ids in dataset order."""
        return list(self._context_ids)

    @property
    def n_contexts(self) -> int:
        """Number of contexts."""
        return len(self._context_ids)

    def candidates(self, context_id: str) -> pd.DataFrame:
        """The candidate rows of one context (a copy, index reset)."""
        rows = self._frame[self._frame["context_id"] == context_id]
        if rows.empty:
            raise KeyError(
                f"{self._info.name}: unknown context_id {context_id!r} "
                f"(see .context_ids() for the {self.n_contexts} available)"
            )
        return rows.reset_index(drop=True).copy()

    def select_contexts(self, n: int, seed: int = 0) -> JudgeDataset:
        """A deterministic seeded subset of ``n`` contexts, in their original order."""
        return self.restrict(select_context_ids(self._context_ids, n, seed))

    def restrict(self, context_ids: Sequence[str]) -> JudgeDataset:
        """This dataset limited to ``context_ids`` (kept in the dataset's order, same info).

        An empty selection or an id that is not a context of this dataset is an error: a
        narrowed dataset never silently loses or invents contexts.
        """
        if isinstance(context_ids, str):
            raise TypeError(f"context_ids must be a sequence of ids, not the single string {context_ids!r}")
        wanted = [str(c) for c in context_ids]
        if not wanted:
            raise ValueError(f"{self._info.name}: no contexts selected (an empty list of context ids)")
        unknown = sorted(set(wanted) - set(self._context_ids))
        if unknown:
            raise KeyError(
                f"{self._info.name}: {len(unknown)} unknown context id(s), e.g. {unknown[0]!r} "
                f"(see .context_ids() for the {self.n_contexts} available)"
            )
        mask = self._frame["context_id"].isin(set(wanted))
        return JudgeDataset(self._frame[mask].copy(), self._info)

    def only(self, context_id: str) -> JudgeDataset:
        """This dataset limited to one context."""
        return self.restrict([context_id])

    def first_contexts(self, k: int) -> JudgeDataset:
        """The first ``k`` contexts in the dataset's order (a run that stops early covers these)."""
        if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
            raise ValueError(f"the number of contexts to keep must be an integer of at least 1, got {k!r}")
        return self.restrict(self._context_ids[: int(k)])

    def per_context(self) -> Iterator[tuple[str, JudgeDataset]]:
        """``(context_id, one-context dataset)`` in order: how the studies run, context by context."""
        for context_id in self._context_ids:
            yield context_id, self.only(context_id)

    def score_matrix(self, aspect: str) -> np.ndarray:
        """Human scores as a ``(n_contexts, n_candidates)`` array (candidates in frame order).

        Only defined when every context has the same number of candidates.
        """
        if aspect not in self._info.aspects:
            raise KeyError(f"{self._info.name}: no aspect {aspect!r}; aspects are {self.aspects}")
        sizes = self._frame.groupby("context_id", sort=False).size()
        if sizes.nunique() != 1:
            raise ValueError(
                f"{self._info.name}: contexts have different numbers of candidates "
                f"({sorted(sizes.unique())}); use .candidates(context_id) instead"
            )
        values = self._frame[aspect].to_numpy(dtype=float)
        return values.reshape(self.n_contexts, int(sizes.iloc[0]))

    def __len__(self) -> int:
        return len(self._frame)

    def __repr__(self) -> str:
        return (
            f"JudgeDataset({self._info.name!r}, contexts={self.n_contexts}, "
            f"rows={len(self._frame)}, aspects={self.aspects})"
        )


# --------------------------------------------------------------------------------------------
# Building frames


@dataclass
class FrameBuilder:
    """Accumulates tidy rows (with their origin) and turns them into a DataFrame."""

    info: DatasetInfo
    rows: list[dict[str, Any]] = field(default_factory=list)

    def add(
        self,
        *,
        context_id: str,
        source: str,
        references: Sequence[str],
        candidate_id: str,
        system: str,
        text: str,
        scores: Mapping[str, float],
        origin: str,
    ) -> None:
        """Append one candidate row; ``scores`` must name exactly the dataset's aspects."""
        if set(scores) != set(self.info.aspects):
            raise DataValidationError(
                f"{origin}: scores for {sorted(scores)} but {self.info.name} has aspects "
                f"{sorted(self.info.aspects)}"
            )
        row: dict[str, Any] = {
            "context_id": context_id,
            "source": source,
            "references": list(references),
            "candidate_id": candidate_id,
            "system": system,
            "text": text,
        }
        for aspect in self.info.aspects:
            row[aspect] = scores[aspect]
        row[ORIGIN_COLUMN] = origin
        self.rows.append(row)

    def frame(self) -> pd.DataFrame:
        """The accumulated rows as a frame with the tidy columns plus the origin column."""
        columns = list(self.info.columns) + [ORIGIN_COLUMN]
        frame = pd.DataFrame(self.rows, columns=columns)
        for aspect in self.info.aspects:
            frame[aspect] = frame[aspect].astype(float)
        return frame


# --------------------------------------------------------------------------------------------
# Raw-record helpers used by the parsers (they raise DataValidationError naming the place)


def require_key(record: Mapping[str, Any], key: str, where: str) -> Any:
    """``record[key]``, or a DataValidationError naming the record and the missing field."""
    if not isinstance(record, Mapping):
        raise DataValidationError(f"{where}: expected an object, got {type(record).__name__}")
    if key not in record or record[key] is None:
        raise DataValidationError(f"{where}: missing field {key!r}")
    return record[key]


def require_text(value: Any, where: str, *, allow_empty: bool = False) -> str:
    """A string (non-empty after stripping unless allowed)."""
    if not isinstance(value, str):
        raise DataValidationError(f"{where}: expected text, got {type(value).__name__} {value!r:.60}")
    if not allow_empty and not value.strip():
        raise DataValidationError(f"{where}: empty text")
    return value


def require_list(value: Any, where: str, length: int | None = None) -> list[Any]:
    """A list, optionally of a given length (aligned lists must agree)."""
    if not isinstance(value, (list, tuple)):
        raise DataValidationError(f"{where}: expected a list, got {type(value).__name__}")
    if length is not None and len(value) != length:
        raise DataValidationError(f"{where}: expected {length} items, found {len(value)}")
    return list(value)


def require_score(value: Any, where: str, score_range: tuple[float, float]) -> float:
    """A finite number inside ``score_range`` (inclusive)."""
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise DataValidationError(f"{where}: expected a number, got {value!r}")
    number = float(value)
    low, high = score_range
    if not math.isfinite(number):
        raise DataValidationError(f"{where}: score is {number}")
    if not low <= number <= high:
        raise DataValidationError(f"{where}: score {number:g} outside the range [{low:g}, {high:g}]")
    return number


def parse_number(value: Any, where: str) -> float:
    """A float from a number or numeric string (CSV cells)."""
    try:
        return float(value)
    except (TypeError, ValueError):
        raise DataValidationError(f"{where}: {value!r} is not a number") from None


# --------------------------------------------------------------------------------------------
# Frame validation


def validate_frame(
    frame: pd.DataFrame, info: DatasetInfo, expected: ExpectedShape, read_from: str = ""
) -> pd.DataFrame:
    """Check a freshly parsed frame and return it without the origin column.

    Checks: non-empty ids, sources and texts; one source per context; candidate ids unique
    within a context; references are lists of non-empty strings; every score finite and inside
    ``info.score_ranges``; the expected numbers of contexts and candidates. All problems found
    are reported together (the first few listed) in one :class:`DataValidationError`, whose
    first line names ``read_from`` (the files or online source the frame came from).
    """
    problems: list[str] = []
    origins = frame[ORIGIN_COLUMN].tolist()

    def check_rows(column: str, is_bad: Callable[[Any], bool], what: str) -> None:
        for origin, value in zip(origins, frame[column].tolist(), strict=True):
            if is_bad(value):
                problems.append(f"{origin}: {what} (got {value!r:.60})")

    def blank(value: Any) -> bool:
        return not isinstance(value, str) or not value.strip()

    check_rows("context_id", blank, "empty context id")
    check_rows("candidate_id", blank, "empty candidate id")
    check_rows("system", blank, "empty system name")
    check_rows("source", blank, "empty source")
    if expected.allow_empty_text:
        check_rows("text", lambda v: not isinstance(v, str), "text is not a string")
    else:
        check_rows("text", blank, "empty candidate text")
    check_rows(
        "references",
        lambda v: not isinstance(v, list) or any(blank(r) for r in v),
        "references must be a list of non-empty strings",
    )
    for aspect, (low, high) in info.score_ranges.items():
        check_rows(
            aspect,
            lambda v, lo=low, hi=high: not (isinstance(v, float) and math.isfinite(v) and lo <= v <= hi),
            f"{aspect} score outside [{low:g}, {high:g}] or missing",
        )

    duplicated = frame.duplicated(["context_id", "candidate_id"], keep="first")
    for origin, cid, cand in frame.loc[duplicated, [ORIGIN_COLUMN, "context_id", "candidate_id"]].itertuples(
        index=False
    ):
        problems.append(f"{origin}: candidate id {cand!r} appears twice in context {cid!r}")

    first_origin = frame.drop_duplicates("context_id").set_index("context_id")[ORIGIN_COLUMN]

    def context_label(cid: Any) -> str:
        return f"context {cid!r} (first row: {first_origin.get(cid, '?')})"

    sources_per_context = frame.groupby("context_id", sort=False)["source"].nunique()
    for cid in sources_per_context[sources_per_context > 1].index:
        problems.append(f"{context_label(cid)}: its rows carry different source texts")

    # Rows of one context must be contiguous so that contexts have a well-defined order.
    starts = frame["context_id"].ne(frame["context_id"].shift())
    repeated_blocks = frame.loc[starts, "context_id"]
    for cid in repeated_blocks[repeated_blocks.duplicated()].unique():
        problems.append(f"{context_label(cid)}: its rows are not contiguous (the id is reused)")

    sizes = frame.groupby("context_id", sort=False).size()
    if expected.n_contexts is not None and len(sizes) != expected.n_contexts:
        problems.append(f"expected {expected.n_contexts} contexts, found {len(sizes)}")
    if expected.candidates_per_context is not None:
        for cid, size in sizes[sizes != expected.candidates_per_context].items():
            problems.append(
                f"{context_label(cid)}: expected {expected.candidates_per_context} candidates, found {size}"
            )

    if problems:
        listed = "\n  - ".join(problems[:_MAX_LISTED_PROBLEMS])
        more = len(problems) - _MAX_LISTED_PROBLEMS
        suffix = f"\n  ... and {more} more problem(s)" if more > 0 else ""
        origin = f" (read from {read_from})" if read_from else ""
        raise DataValidationError(
            f"dataset {info.name!r}{origin} is malformed ({len(problems)} problem(s)):\n  - {listed}{suffix}\n"
            f"Fix or re-download the file(s); rows are never dropped silently."
        )
    return frame.drop(columns=[ORIGIN_COLUMN]).reset_index(drop=True)


def copy_frame(frame: pd.DataFrame) -> pd.DataFrame:
    """A deep copy, including the per-row reference lists (so callers cannot alter a cache)."""
    copied = frame.copy(deep=True)
    copied["references"] = [list(refs) for refs in frame["references"]]
    return copied
