"""SummEval (Fabbri et al., 2021): 100 CNN/DailyMail test articles x 16 system summaries.

Each summary carries the mean of three expert ratings (1-5) for coherence, consistency,
fluency and relevance. Liusie et al. (2024, Table 1) abbreviate these COH/CON/FLU/REL; Liu et
al. (narcissistic evaluators, Table 3) use the same four aspects.

Local file: ``summeval/summeval_merged.jsonl`` (one line per article: ``id``, untokenized
``text``, 11 ``human_summaries``, 16 ``model_ids`` aligned with ``machine_summaries`` and with
the four score lists). Online: ``datasets.load_dataset("mteb/summeval")["test"]`` has the same
fields except ``model_ids``.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from typing import Any

import pandas as pd

from nlgjudge.data.base import (
    DatasetInfo,
    ExpectedShape,
    FrameBuilder,
    require_key,
    require_list,
    require_score,
    require_text,
)
from nlgjudge.data.loading import DatasetDefinition
from nlgjudge.data.sources import DatasetLocation, Located, LocalFiles, OnlineSource, read_jsonl

N_ARTICLES = 100
N_SYSTEMS = 16
N_REFERENCES = 11
MERGED_FILE = "summeval_merged.jsonl"

#: Abbreviation -> field name in the files, in the papers' column order.
_FIELDS = {"COH": "coherence", "CON": "consistency", "FLU": "fluency", "REL": "relevance"}

INFO = DatasetInfo(
    name="summeval",
    title="SummEval (CNN/DailyMail summaries, expert ratings)",
    aspects=dict(_FIELDS),
    noun="summary",
    source_kind="passage",
    score_ranges={aspect: (1.0, 5.0) for aspect in _FIELDS},
    has_references=True,
    citation=(
        "Fabbri, Kryscinski, McCann, Xiong, Socher, Radev (2021). SummEval: Re-evaluating "
        "Summarization Evaluation. TACL 9:391-409."
    ),
    notes=(
        "Scores are the mean of 3 expert annotators (1-5). The source is the untokenized article; the "
        "references are its 11 reference summaries (the first is the original CNN/DM highlights; tokenized). "
        "The systems are named by SummEval's model ids (M0 to M23); the online copy of the data has no model "
        "ids, so read from it they are the article's slots S0 to S15."
    ),
)

LOCATION = DatasetLocation(
    name=INFO.name,
    title=INFO.title,
    local=LocalFiles("summeval", (MERGED_FILE,)),
    online=OnlineSource("mteb/summeval", None, "test"),
    manual_source=(
        "summeval_merged.jsonl is derived from github.com/neulab/BARTScore (SUM/SummEval/data.pkl) and "
        "github.com/maiush/PPairS (data/summeval.jsonl); see the mirror's summeval/PROVENANCE.md"
    ),
)


def _parse_records(records: Iterable[tuple[str, Mapping[str, Any]]], has_model_ids: bool) -> pd.DataFrame:
    builder = FrameBuilder(INFO)
    for where, record in records:
        doc_id = require_text(require_key(record, "id", where), f"{where}: id")
        where = f"{where} (id {doc_id})"
        article = require_text(require_key(record, "text", where), f"{where}: text")
        references = [
            require_text(ref, f"{where}: human_summaries[{i}]")
            for i, ref in enumerate(
                require_list(require_key(record, "human_summaries", where), f"{where}: human_summaries", N_REFERENCES)
            )
        ]
        summaries = require_list(
            require_key(record, "machine_summaries", where), f"{where}: machine_summaries", N_SYSTEMS
        )
        if has_model_ids:
            model_ids = [
                require_text(m, f"{where}: model_ids[{i}]")
                for i, m in enumerate(require_list(require_key(record, "model_ids", where), f"{where}: model_ids", N_SYSTEMS))
            ]
        else:
            model_ids = [f"S{i}" for i in range(N_SYSTEMS)]
        score_lists = {
            aspect: require_list(require_key(record, field, where), f"{where}: {field}", N_SYSTEMS)
            for aspect, field in _FIELDS.items()
        }
        for k, (model_id, summary) in enumerate(zip(model_ids, summaries, strict=True)):
            origin = f"{where}, summary {k} ({model_id})"
            builder.add(
                context_id=doc_id,
                source=article,
                references=references,
                candidate_id=model_id,
                system=model_id,
                text=require_text(summary, f"{origin}: machine_summaries").strip(),
                scores={
                    aspect: require_score(values[k], f"{origin}: {_FIELDS[aspect]}", INFO.score_ranges[aspect])
                    for aspect, values in score_lists.items()
                },
                origin=origin,
            )
    return builder.frame()


def parse(located: Located, data_dir: str | os.PathLike[str] | None = None) -> pd.DataFrame:
    """Tidy frame from the merged local file or from the mteb/summeval rows."""
    if located.paths is not None:
        path = located.paths[MERGED_FILE]
        return _parse_records(((f"{path}, line {n}", rec) for n, rec in read_jsonl(path)), has_model_ids=True)
    assert located.rows is not None and located.online is not None
    label = located.online.describe()
    return _parse_records(((f"{label} row {i}", row) for i, row in enumerate(located.rows)), has_model_ids=False)


DEFINITION = DatasetDefinition(
    info=INFO,
    location=LOCATION,
    expected=ExpectedShape(n_contexts=N_ARTICLES, candidates_per_context=N_SYSTEMS),
    parse=parse,
)
