"""RoSE protocol-comparison sets (Liu et al., ACL 2023, "Revisiting the Gold Standard").

Two sets of 100 CNN/DailyMail test articles share the same documents:

* ``rose``: 12 systems (bart, brio, brio-ext, cliff, ctrlsum, frost, glob, gold, gsum, matchsum,
  pegasus, simcls), HF config ``cnndm_protocol``;
* ``rose_llm``: GPT-3, T0, BART and BRIO, HF config ``cnndm_protocol_gpt3``.
  Liu, Moosavi & Lin (narcissistic evaluators, section 3.3 and Table 2) use its BART and GPT-3
  summaries with their ACU scores.

Every summary has an ACU score (fraction of the reference's atomic content units it contains,
0-1), its length-normalized variant, and three 1-5 ratings (means of 3 annotators) under the
prior, reference-free and reference-based protocols.

Local files: ``rose/protocol-comparison.json`` and ``rose/protocol-comparison-llm.json``
(the RoSE project page's data, identical to the two HF configs).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from typing import Any

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
from nlgjudge.data.sources import DatasetLocation, Located, LocalFiles, OnlineSource, read_json

N_DOCUMENTS = 100
PROTOCOL_FILE = "protocol-comparison.json"
PROTOCOL_LLM_FILE = "protocol-comparison-llm.json"

PROTOCOL_SYSTEMS = (
    "bart", "brio", "brio-ext", "cliff", "ctrlsum", "frost", "glob", "gold", "gsum", "matchsum", "pegasus", "simcls",
)  # fmt: skip
LLM_SYSTEMS = ("bart", "brio", "gpt3", "t0")

#: Abbreviation -> (full name, annotation field, range).
_ASPECTS: dict[str, tuple[str, str, tuple[float, float]]] = {
    "ACU": ("ACU score", "acu", (0.0, 1.0)),
    "NACU": ("length-normalized ACU score", "normalized_acu", (0.0, 1.0)),
    "PRIOR": ("overall quality, prior protocol (no input shown)", "prior", (1.0, 5.0)),
    "REF_FREE": ("overall quality, reference-free protocol (article shown)", "ref_free", (1.0, 5.0)),
    "REF_BASED": ("overall quality, reference-based protocol (reference shown)", "ref_based", (1.0, 5.0)),
}

_CITATION = (
    "Liu, Fabbri, Liu, Zhao, Nan, Han, Han, Joty, Wu, Xiong, Radev (2023). Revisiting the Gold "
    "Standard: Grounding Summarization Evaluation with Robust Human Evaluation. ACL 2023."
)
_COMMON_NOTES = (
    "ACU and NACU are 0-1; PRIOR, REF_FREE and REF_BASED are means of 3 annotators on 1-5. "
    "The source is the article; its one reference is the CNN/DM reference summary."
)


def _info(name: str, title: str, notes: str) -> DatasetInfo:
    return DatasetInfo(
        name=name,
        title=title,
        aspects={abbrev: full for abbrev, (full, _, _) in _ASPECTS.items()},
        noun="summary",
        source_kind="passage",
        score_ranges={abbrev: score_range for abbrev, (_, _, score_range) in _ASPECTS.items()},
        has_references=True,
        citation=_CITATION,
        notes=notes,
    )


INFO = _info(
    "rose",
    "RoSE CNN/DM protocol set (12 summarizers)",
    _COMMON_NOTES + " Candidates are the 12 systems of the set, including 'gold' as a system.",
)
LLM_INFO = _info(
    "rose_llm",
    "RoSE CNN/DM protocol set with GPT-3 / T0 / BART / BRIO",
    _COMMON_NOTES
    + " Candidates are the 4 systems' summaries; the file's extra ratings of the reference summary "
    "itself (prior and reference-free only) are not loaded as a candidate. The reference ACUs are not loaded.",
)

_MANUAL = (
    "github.com/Yale-LILY/ROSE, branch 'page', docs/_data/{file}; see the mirror's rose/PROVENANCE.md"
)

LOCATION = DatasetLocation(
    name=INFO.name,
    title=INFO.title,
    local=LocalFiles("rose", (PROTOCOL_FILE,)),
    online=OnlineSource("Salesforce/rose", "cnndm_protocol", "data"),
    manual_source=_MANUAL.format(file=PROTOCOL_FILE),
)
LLM_LOCATION = DatasetLocation(
    name=LLM_INFO.name,
    title=LLM_INFO.title,
    local=LocalFiles("rose", (PROTOCOL_LLM_FILE,)),
    online=OnlineSource("Salesforce/rose", "cnndm_protocol_gpt3", "data"),
    manual_source=_MANUAL.format(file=PROTOCOL_LLM_FILE),
)


def _parse_records(
    records: Iterable[tuple[str, Any]], info: DatasetInfo, systems: tuple[str, ...]
) -> pd.DataFrame:
    builder = FrameBuilder(info)
    for where, record in records:
        example_id = require_text(require_key(record, "example_id", where), f"{where}: example_id").strip()
        where = f"{where} (example_id {example_id})"
        article = require_text(require_key(record, "source", where), f"{where}: source")
        reference = require_text(require_key(record, "reference", where), f"{where}: reference").strip()
        outputs = require_key(record, "system_outputs", where)
        annotations = require_key(record, "annotations", where)
        if not isinstance(outputs, Mapping) or not isinstance(annotations, Mapping):
            raise DataValidationError(f"{where}: system_outputs and annotations must be objects")
        present = sorted(name for name, text in outputs.items() if text is not None)
        if present != sorted(systems):
            raise DataValidationError(f"{where}: system_outputs has systems {present}, expected {sorted(systems)}")
        for system in systems:
            origin = f"{where}, system {system}"
            annotation = require_key(annotations, system, f"{where}: annotations")
            scores = {
                abbrev: require_score(require_key(annotation, field, origin), f"{origin}: {field}", score_range)
                for abbrev, (_, field, score_range) in _ASPECTS.items()
            }
            builder.add(
                context_id=example_id,
                source=article,
                references=[reference],
                candidate_id=system,
                system=system,
                text=require_text(outputs[system], f"{origin}: system_outputs").strip(),
                scores=scores,
                origin=origin,
            )
    return builder.frame()


def _records(located: Located, file_name: str) -> Iterable[tuple[str, Any]]:
    if located.paths is not None:
        path = located.paths[file_name]
        documents = require_list(read_json(path), f"{path}: top level")
        return ((f"{path}, record {i}", record) for i, record in enumerate(documents))
    assert located.rows is not None and located.online is not None
    label = located.online.describe()
    return ((f"{label} row {i}", row) for i, row in enumerate(located.rows))


def parse(located: Located, data_dir: str | os.PathLike[str] | None = None) -> pd.DataFrame:
    """Tidy frame of the 12-system protocol set."""
    return _parse_records(_records(located, PROTOCOL_FILE), INFO, PROTOCOL_SYSTEMS)


def parse_llm(located: Located, data_dir: str | os.PathLike[str] | None = None) -> pd.DataFrame:
    """Tidy frame of the GPT-3 / T0 / BART / BRIO protocol set."""
    return _parse_records(_records(located, PROTOCOL_LLM_FILE), LLM_INFO, LLM_SYSTEMS)


DEFINITION = DatasetDefinition(
    info=INFO,
    location=LOCATION,
    expected=ExpectedShape(n_contexts=N_DOCUMENTS, candidates_per_context=len(PROTOCOL_SYSTEMS)),
    parse=parse,
)
LLM_DEFINITION = DatasetDefinition(
    info=LLM_INFO,
    location=LLM_LOCATION,
    expected=ExpectedShape(n_contexts=N_DOCUMENTS, candidates_per_context=len(LLM_SYSTEMS)),
    parse=parse_llm,
)
