"""WebNLG Challenge 2017 human evaluation (Shimorina et al., 2018): 223 triple sets x 10 teams.

Nine submitted systems plus the human reference text (team ``webnlg``) were rated 1-3 for
fluency, grammar and semantics (means over raters). Liusie et al. (2024, Table 4) abbreviate
them FLU/GRA/SEM; their WebNLG prompts call a candidate a "Response" and the context "the
given semantic triples".

Local file: ``webnlg2017_human_eval/all_data_final_averaged.csv`` (one record per (triple set,
team); ``mr`` holds the triples as ``subject | predicate | object`` joined by ``<br>``).
There is no online copy on the hub.
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
    parse_number,
    require_score,
    require_text,
)
from nlgjudge.data.loading import DatasetDefinition
from nlgjudge.data.sources import DatasetLocation, Located, LocalFiles

N_TRIPLE_SETS = 223
N_TEAMS = 10
CSV_FILE = "all_data_final_averaged.csv"
REFERENCE_TEAM = "webnlg"

_FIELDS = {"FLU": "fluency", "GRA": "grammar", "SEM": "semantics"}
_REQUIRED_COLUMNS = ("id", "mr", "team", "text", *_FIELDS.values())

INFO = DatasetInfo(
    name="webnlg",
    title="WebNLG 2017 human evaluation (data-to-text)",
    aspects=dict(_FIELDS),
    noun="response",
    source_kind="triples",
    score_ranges={aspect: (1.0, 3.0) for aspect in _FIELDS},
    has_references=False,
    citation=(
        "Shimorina, Gardent, Narayan, Perez-Beltrachini (2018). WebNLG Challenge: Human Evaluation "
        "Results. Technical report, Loria & Inria Grand Est. Data: Gardent et al. (2017), The WebNLG "
        "Challenge: Generating Text from RDF Data. INLG 2017."
    ),
    notes=(
        "The 10 systems counted above are the 10 rated teams: 9 generation systems and the human-written "
        "reference text (its team is named webnlg), as in the released ratings (Liusie, Manakul and Gales "
        "describe 8 systems per triple set). Scores are mean human ratings on 1-3. The source is one triple "
        "per line, 'subject | predicate | object', entity "
        "names verbatim (underscores kept). The team tilburg-pipe produced empty outputs for 25 triple "
        "sets, and the team vietnam output the literal text 'null' for 168; both are kept verbatim with "
        "the ratings they received (1/1/1)."
    ),
)

LOCATION = DatasetLocation(
    name=INFO.name,
    title=INFO.title,
    local=LocalFiles("webnlg2017_human_eval", (CSV_FILE,)),
    online=None,
    manual_source=(
        "gitlab.com/webnlg/webnlg-human-evaluation (all_data_final_averaged.csv, fetched by "
        "github.com/ufal/nlgi_eval data/download_webnlg.sh); see the mirror's webnlg2017_human_eval/PROVENANCE.md"
    ),
)


def render_triples(mr: str, where: str) -> str:
    """One ``subject | predicate | object`` triple per line, from the ``<br>``-joined field."""
    triples = [triple.strip() for triple in mr.split("<br>")]
    for number, triple in enumerate(triples, start=1):
        parts = triple.split(" | ")
        if len(parts) != 3 or not all(part.strip() for part in parts):
            raise DataValidationError(
                f"{where}: triple {number} {triple!r} is not 'subject | predicate | object'"
            )
    return "\n".join(triples)


def parse(located: Located, data_dir: str | os.PathLike[str] | None = None) -> pd.DataFrame:
    """Tidy frame from the averaged human-evaluation CSV."""
    assert located.paths is not None  # no online source
    path = located.paths[CSV_FILE]
    try:
        table = pd.read_csv(path, dtype=str, keep_default_na=False, encoding="utf-8")
    except (pd.errors.ParserError, UnicodeDecodeError, pd.errors.EmptyDataError) as error:
        raise DataValidationError(f"{path}: not a readable CSV file ({error})") from None
    missing = [column for column in _REQUIRED_COLUMNS if column not in table.columns]
    if missing:
        raise DataValidationError(f"{path}: missing column(s) {missing}; found {list(table.columns)}")

    records = table.to_dict("records")
    groups: dict[str, list[tuple[int, dict[str, str]]]] = {}
    for index, record in enumerate(records):
        where = f"{path}, record {index} (id {record['id']})"
        mr = require_text(record["mr"], f"{where}: mr")
        groups.setdefault(mr, []).append((index, record))

    builder = FrameBuilder(INFO)
    width = len(str(max(len(groups) - 1, 0)))
    for number, (mr, members) in enumerate(groups.items()):
        context_id = f"mr{number:0{width}d}"
        first_where = f"{path}, record {members[0][0]} (id {members[0][1]['id']})"
        source = render_triples(mr, f"{first_where}: mr")
        _check_triple_count(members[0][1], source, first_where)
        for index, record in members:
            team = require_text(record["team"], f"{path}, record {index} (id {record['id']}): team").strip()
            origin = f"{path}, record {index} (id {record['id']}, team {team}, {context_id})"
            scores = {
                aspect: require_score(parse_number(record[field], f"{origin}: {field}"), f"{origin}: {field}", (1.0, 3.0))
                for aspect, field in _FIELDS.items()
            }
            text = record["text"].strip()
            if not text and any(score != 1.0 for score in scores.values()):
                # Empty outputs exist (tilburg-pipe) and were rated 1/1/1; anything else is damage.
                raise DataValidationError(f"{origin}: empty text but ratings {scores} (expected 1/1/1)")
            builder.add(
                context_id=context_id,
                source=source,
                references=[],
                candidate_id=team,
                system=team,
                text=text,
                scores=scores,
                origin=origin,
            )
    return builder.frame()


def _check_triple_count(record: dict[str, str], source: str, where: str) -> None:
    """The ``triplesize`` column ("3triple"), when present, must agree with the triples."""
    match = re.fullmatch(r"(\d+)triple", record.get("triplesize", "").strip())
    if match and int(match.group(1)) != source.count("\n") + 1:
        raise DataValidationError(
            f"{where}: triplesize says {match.group(1)} triples but mr holds {source.count(chr(10)) + 1}"
        )


DEFINITION = DatasetDefinition(
    info=INFO,
    location=LOCATION,
    expected=ExpectedShape(n_contexts=N_TRIPLE_SETS, candidates_per_context=N_TEAMS, allow_empty_text=True),
    parse=parse,
)
