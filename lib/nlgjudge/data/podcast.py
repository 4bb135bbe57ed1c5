"""Podcast Summary Assessment (Manakul & Gales, 2022): 179 podcast episodes x 20 summaries.

Summaries of TREC 2020 podcast episodes were rated by experts on a 4-point scale, Bad / Fair /
Good / Excellent. Liusie et al. (2024, Table 2) use it for long-input summary assessment; their
loader keeps 20 system slots per episode (R1, E1-E3, A1-A16) and maps B/F/G/E to 0/1/2/3,
which we follow (aspect ``OVR``, overall quality).

Not in the data mirror: the online copy is
``datasets.load_dataset("potsawee/podcast_summary_assessment")["evaluation"]`` with 3580 rows
``transcript, summary, score (B/F/G/E), attributes (8 ints), episode_id, system_id``. The same
records as the authors' manual download (``podcast_summary_assessment.json``, a JSON list) are
also read from ``<data_dir>/podcast_summary_assessment/podcast_summary_assessment.json``.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import Any

import pandas as pd

from nlgjudge.data.base import (
    DatasetInfo,
    DataValidationError,
    ExpectedShape,
    FrameBuilder,
    require_key,
    require_list,
    require_text,
)
from nlgjudge.data.loading import DatasetDefinition
from nlgjudge.data.sources import DatasetLocation, Located, LocalFiles, OnlineSource, read_json

N_EPISODES = 179
#: The authors' system slots, in their order: R1, E1-E3, A1-A16.
SYSTEM_SLOTS: tuple[str, ...] = ("R1", *(f"E{k}" for k in range(1, 4)), *(f"A{k}" for k in range(1, 17)))
#: Bad, Fair, Good, Excellent -> 0..3 (the authors' mapping).
SCORE_LABELS = {"B": 0.0, "F": 1.0, "G": 2.0, "E": 3.0}
JSON_FILE = "podcast_summary_assessment.json"

INFO = DatasetInfo(
    name="podcast",
    title="Podcast Summary Assessment (TREC 2020 podcast summaries)",
    aspects={"OVR": "overall quality"},
    noun="summary",
    source_kind="passage",
    score_ranges={"OVR": (0.0, 3.0)},
    has_references=False,
    citation=(
        "Manakul, Gales (2022). Podcast Summary Assessment: A Resource for Evaluating Summary "
        "Assessment Methods. arXiv:2208.13265."
    ),
    notes=(
        "Online only (no copy in the mirror). OVR = expert rating Bad/Fair/Good/Excellent mapped to 0-3. "
        "20 candidates per episode in the authors' slot order R1, E1-E3, A1-A16, each system named by its slot; "
        "the source is the episode transcript. The 8 binary attribute "
        "annotations are not loaded."
    ),
)

LOCATION = DatasetLocation(
    name=INFO.name,
    title=INFO.title,
    local=LocalFiles("podcast_summary_assessment", (JSON_FILE,)),
    online=OnlineSource("potsawee/podcast_summary_assessment", None, "evaluation"),
    manual_source=(
        "github.com/potsawee/podcast_summary_assessment (README: Google Drive download of "
        "podcast_summary_assessment.json, CC BY 4.0)"
    ),
)


def parse_rows(rows: Iterable[tuple[str, Any]]) -> pd.DataFrame:
    """Tidy frame from records with the documented fields, grouped by episode.

    Episodes keep their first-appearance order; within an episode, candidates follow
    :data:`SYSTEM_SLOTS`. Each (episode, slot) must appear once, every slot must be present,
    and all rows of an episode must carry the same transcript.
    """
    episodes: dict[str, dict[str, Any]] = {}
    for where, row in rows:
        episode_id = require_text(require_key(row, "episode_id", where), f"{where}: episode_id").strip()
        slot = require_text(require_key(row, "system_id", where), f"{where}: system_id").strip()
        origin = f"{where} (episode {episode_id}, system {slot})"
        if slot not in SYSTEM_SLOTS:
            raise DataValidationError(f"{origin}: unknown system_id {slot!r}; expected one of {list(SYSTEM_SLOTS)}")
        label = require_text(require_key(row, "score", origin), f"{origin}: score").strip()
        if label not in SCORE_LABELS:
            raise DataValidationError(f"{origin}: score {label!r} is not one of {sorted(SCORE_LABELS)}")
        transcript = require_text(require_key(row, "transcript", origin), f"{origin}: transcript")
        summary = require_text(require_key(row, "summary", origin), f"{origin}: summary")
        if "attributes" in row and row["attributes"] is not None:
            require_list(row["attributes"], f"{origin}: attributes")
        episode = episodes.setdefault(episode_id, {"transcript": transcript, "where": where, "slots": {}})
        if transcript != episode["transcript"]:
            raise DataValidationError(f"{origin}: transcript differs from the one at {episode['where']}")
        if slot in episode["slots"]:
            raise DataValidationError(f"{origin}: duplicate of {episode['slots'][slot][2]}")
        episode["slots"][slot] = (summary, SCORE_LABELS[label], origin)

    builder = FrameBuilder(INFO)
    for episode_id, episode in episodes.items():
        missing = [slot for slot in SYSTEM_SLOTS if slot not in episode["slots"]]
        if missing:
            raise DataValidationError(f"episode {episode_id} (first at {episode['where']}): missing system(s) {missing}")
        for slot in SYSTEM_SLOTS:
            summary, score, origin = episode["slots"][slot]
            builder.add(
                context_id=episode_id,
                source=episode["transcript"].strip(),
                references=[],
                candidate_id=slot,
                system=slot,
                text=summary.strip(),
                scores={"OVR": score},
                origin=origin,
            )
    return builder.frame()


def parse(located: Located, data_dir: str | os.PathLike[str] | None = None) -> pd.DataFrame:
    """Tidy frame from the manual-download JSON or from the hub rows."""
    if located.paths is not None:
        path = located.paths[JSON_FILE]
        records = require_list(read_json(path), f"{path}: top level")
        return parse_rows((f"{path}, record {i}", record) for i, record in enumerate(records))
    assert located.rows is not None and located.online is not None
    label = located.online.describe()
    return parse_rows((f"{label} row {i}", row) for i, row in enumerate(located.rows))


DEFINITION = DatasetDefinition(
    info=INFO,
    location=LOCATION,
    expected=ExpectedShape(n_contexts=N_EPISODES, candidates_per_context=len(SYSTEM_SLOTS)),
    parse=parse,
)
