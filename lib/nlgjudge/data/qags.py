"""QAGS factual-consistency benchmarks (Wang, Cho & Lewis, ACL 2020), UniEval copy.

``qags_cnndm``: 235 CNN/DailyMail test articles, ``qags_xsum``: 239 XSum test articles, each with
one model summary and a human consistency judgement (fraction of annotators who found the
summary's sentences supported by the article: 0-1; binary for XSum). Aspect ``CON`` as in
SummEval. Liu, Moosavi & Lin (narcissistic evaluators) draw CNN/DM and XSum test articles; these
small test subsets are the offline stand-in for such articles.

Local files: ``qags_cnndm_xsum/qags_cnndm.json`` and ``qags_xsum.json`` (records with
``doc_id, system_id, source, reference (= source), system_output, scores``). No online copy.
"""

from __future__ import annotations

import ast
import os
from collections.abc import Mapping
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
from nlgjudge.data.loading import DatasetDefinition, Parser
from nlgjudge.data.sources import DatasetLocation, Located, LocalFiles, read_json

_CITATION = (
    "Wang, Cho, Lewis (2020). Asking and Answering Questions to Evaluate the Factual Consistency "
    "of Summaries. ACL 2020, 5008-5020. Files from UniEval (Zhong et al., 2022), reproduce/data/fact/."
)
_NOTES = (
    "One summary per article, so every context has a single candidate. CON is people's consistency "
    "judgement in [0, 1]. The files' reference field repeats the article, so there are no references. "
    "The files name no summarizer (a numeric id, 0 throughout), so every summary has the one system 'system0'."
)
_MANUAL = "github.com/maszhongming/UniEval, reproduce/data/fact/{file}; see the mirror's qags_cnndm_xsum/PROVENANCE.md"


def _info(name: str, title: str) -> DatasetInfo:
    return DatasetInfo(
        name=name,
        title=title,
        aspects={"CON": "consistency"},
        noun="summary",
        source_kind="passage",
        score_ranges={"CON": (0.0, 1.0)},
        has_references=False,
        citation=_CITATION,
        notes=_NOTES,
    )


def _scores(value: Any, where: str) -> Mapping[str, Any]:
    """The ``scores`` field: an object, or (as PROVENANCE documents) its Python-literal string."""
    if isinstance(value, str):
        try:
            value = ast.literal_eval(value)
        except (ValueError, SyntaxError):
            raise DataValidationError(f"{where}: scores {value!r:.60} is not a readable mapping") from None
    if not isinstance(value, Mapping):
        raise DataValidationError(f"{where}: scores must be a mapping, got {type(value).__name__}")
    return value


def _make_parser(info: DatasetInfo, file_name: str) -> Parser:
    def parse(located: Located, data_dir: str | os.PathLike[str] | None = None) -> pd.DataFrame:
        assert located.paths is not None  # no online source
        path = located.paths[file_name]
        records = require_list(read_json(path), f"{path}: top level")
        builder = FrameBuilder(info)
        for index, record in enumerate(records):
            where = f"{path}, record {index}"
            doc_id = require_key(record, "doc_id", where)
            if isinstance(doc_id, bool) or not isinstance(doc_id, int):
                raise DataValidationError(f"{where}: doc_id must be an integer, got {doc_id!r}")
            system_id = require_key(record, "system_id", where)
            origin = f"{where} (doc_id {doc_id})"
            consistency = require_key(_scores(require_key(record, "scores", origin), origin), "consistency", f"{origin}: scores")
            builder.add(
                context_id=f"doc{doc_id:03d}",
                source=require_text(require_key(record, "source", origin), f"{origin}: source").strip(),
                references=[],
                candidate_id=f"system{system_id}",
                system=f"system{system_id}",
                text=require_text(require_key(record, "system_output", origin), f"{origin}: system_output").strip(),
                scores={"CON": require_score(consistency, f"{origin}: consistency", info.score_ranges["CON"])},
                origin=origin,
            )
        return builder.frame()

    return parse


CNNDM_FILE = "qags_cnndm.json"
XSUM_FILE = "qags_xsum.json"

CNNDM_INFO = _info("qags_cnndm", "QAGS-CNNDM (factual consistency of CNN/DM summaries)")
XSUM_INFO = _info("qags_xsum", "QAGS-XSum (factual consistency of XSum summaries)")

CNNDM_DEFINITION = DatasetDefinition(
    info=CNNDM_INFO,
    location=DatasetLocation(
        name=CNNDM_INFO.name,
        title=CNNDM_INFO.title,
        local=LocalFiles("qags_cnndm_xsum", (CNNDM_FILE,)),
        online=None,
        manual_source=_MANUAL.format(file=CNNDM_FILE),
    ),
    expected=ExpectedShape(n_contexts=235, candidates_per_context=1),
    parse=_make_parser(CNNDM_INFO, CNNDM_FILE),
)
XSUM_DEFINITION = DatasetDefinition(
    info=XSUM_INFO,
    location=DatasetLocation(
        name=XSUM_INFO.name,
        title=XSUM_INFO.title,
        local=LocalFiles("qags_cnndm_xsum", (XSUM_FILE,)),
        online=None,
        manual_source=_MANUAL.format(file=XSUM_FILE),
    ),
    expected=ExpectedShape(n_contexts=239, candidates_per_context=1),
    parse=_make_parser(XSUM_INFO, XSUM_FILE),
)
