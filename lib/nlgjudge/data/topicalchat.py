"""Topical-Chat with the USR annotations (Mehri & Eskenazi, 2020): 60 dialogues x 6 responses.

Each response was rated by three annotators. Liusie et al. (2024, Table 3) report coherency
(COH), continuity (CNT), engagingness (ENG) and naturalness (NAT); their loader (public code,
see the mirror's topicalchat_usr/PROVENANCE.md) maps them to the USR fields
Understandable -> COH (0-1), Maintains Context -> CNT (1-3), Engaging -> ENG (1-3),
Natural -> NAT (1-3) and averages the three annotators. We do the same.

Local file: ``topicalchat_usr/usr_topical_chat.json`` (the format of USR's ``tc_usr_data.json``).
There is no online copy the authors used.
"""

from __future__ import annotations

import os
import re

import pandas as pd

from nlgjudge.data.base import (
    DatasetInfo,
    DataValidationError,
    ExpectedShape,
    FrameBuilder,
    require_key,
    require_list,
    require_score,
    require_text,
)
from nlgjudge.data.loading import DatasetDefinition
from nlgjudge.data.sources import DatasetLocation, Located, LocalFiles, read_json

N_DIALOGUES = 60
N_RESPONSES = 6
USR_FILE = "usr_topical_chat.json"

#: Abbreviation -> (full name, USR field, per-annotator range).
_ASPECTS: dict[str, tuple[str, str, tuple[float, float]]] = {
    "COH": ("coherence", "Understandable", (0.0, 1.0)),
    "CNT": ("continuity", "Maintains Context", (1.0, 3.0)),
    "ENG": ("engagingness", "Engaging", (1.0, 3.0)),
    "NAT": ("naturalness", "Natural", (1.0, 3.0)),
}

INFO = DatasetInfo(
    name="topicalchat",
    title="TopicalChat (dialogue responses, USR annotator means)",
    aspects={abbrev: full for abbrev, (full, _, _) in _ASPECTS.items()},
    noun="response",
    source_kind="dialogue",
    score_ranges={abbrev: score_range for abbrev, (_, _, score_range) in _ASPECTS.items()},
    has_references=False,
    citation=(
        "Mehri, Eskenazi (2020). USR: An Unsupervised and Reference Free Evaluation Metric for "
        "Dialog Generation. ACL 2020, 681-707. Data: Gopalakrishnan et al. (2019), Topical-Chat."
    ),
    notes=(
        "Scores are the mean of 3 annotators. Mapping of Liusie et al.: COH = Understandable (0-1), "
        "CNT = Maintains Context, ENG = Engaging, NAT = Natural (1-3). USR's Uses Knowledge and "
        "Overall ratings and the knowledge fact are not used by the paper's prompts and are not loaded. "
        "The source is the dialogue history, one turn per line. The 'Original Ground Truth' and "
        "'New Human Generated' responses are human-written candidates, kept as in the paper."
    ),
)

LOCATION = DatasetLocation(
    name=INFO.name,
    title=INFO.title,
    local=LocalFiles("topicalchat_usr", (USR_FILE,)),
    online=None,
    manual_source=(
        "USR's tc_usr_data.json (shikib.com/usr), also as data/usr_topical_chat.json in "
        "github.com/SmartDataAnalytics/proxy_indicators; see the mirror's topicalchat_usr/PROVENANCE.md"
    ),
)


def _slug(name: str) -> str:
    """A short identifier for a USR model name, e.g. 'Nucleus Decoding (p = 0.3)' -> 'nucleus-decoding-p-0-3'."""
    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")


def _dialogue_lines(context: str) -> str:
    """The dialogue history with one turn per line (the file pads turns with spaces)."""
    return "\n".join(turn.strip() for turn in context.strip().split("\n"))


def parse(located: Located, data_dir: str | os.PathLike[str] | None = None) -> pd.DataFrame:
    """Tidy frame from ``usr_topical_chat.json``."""
    assert located.paths is not None  # no online source
    path = located.paths[USR_FILE]
    dialogues = require_list(read_json(path), f"{path}: top level")
    builder = FrameBuilder(INFO)
    width = len(str(max(len(dialogues) - 1, 0)))
    for index, dialogue in enumerate(dialogues):
        context_id = f"dialogue{index:0{width}d}"
        where = f"{path}, dialogue {index}"
        context = _dialogue_lines(require_text(require_key(dialogue, "context", where), f"{where}: context"))
        responses = require_list(require_key(dialogue, "responses", where), f"{where}: responses")
        for k, response in enumerate(responses):
            model = require_text(require_key(response, "model", f"{where}, response {k}"), f"{where}, response {k}: model")
            origin = f"{where}, response {k} ({model})"
            text = require_text(require_key(response, "response", origin), f"{origin}: response")
            scores: dict[str, float] = {}
            n_annotators: int | None = None
            for abbrev, (_, field, score_range) in _ASPECTS.items():
                ratings = require_list(require_key(response, field, origin), f"{origin}: {field}")
                if not ratings:
                    raise DataValidationError(f"{origin}: {field} has no ratings")
                if n_annotators is not None and len(ratings) != n_annotators:
                    raise DataValidationError(
                        f"{origin}: {field} has {len(ratings)} ratings but other aspects have {n_annotators}"
                    )
                n_annotators = len(ratings)
                values = [require_score(v, f"{origin}: {field}[{j}]", score_range) for j, v in enumerate(ratings)]
                scores[abbrev] = sum(values) / len(values)
            builder.add(
                context_id=context_id,
                source=context,
                references=[],
                candidate_id=_slug(model),
                system=model,
                text=text.strip(),
                scores=scores,
                origin=origin,
            )
    return builder.frame()


DEFINITION = DatasetDefinition(
    info=INFO,
    location=LOCATION,
    expected=ExpectedShape(n_contexts=N_DIALOGUES, candidates_per_context=N_RESPONSES),
    parse=parse,
)
