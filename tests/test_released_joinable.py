"""Every released file has one line per request, so a reader joins requests to outputs by meta.

Reads every released folder under ``data/outputs`` and checks, per file:

(a) no two lines share runtime, operation and meta (a reader could not tell them apart);
(b) every request the plan (``studies/plan.py``) makes on a released context resolves to exactly one
    line, with its key and its meta: requests that share an output (identical inputs, e.g. two
    contestants with identical summaries) each have a line of their own, the same key repeated;
(c) every line of a planned context is a planned request (no outputs of unplanned requests, no
    meta of another study's request on a shared output).

The planned requests are built by the studies from the datasets (no model). A context counts as
released when one of its planned outputs is in the file (the plan is finished a context at a time).
Needs the mirrored data (``NLGJUDGE_DATA_DIR``); skipped where it is absent.
"""

from __future__ import annotations

import json
from collections import Counter, defaultdict

import pytest

from nlgjudge.config import outputs_dir

ELO_FOLDER = "elo-cnndm_contest"
ELO_ARTICLES, ELO_ORDERED_PAIRS = 99, 42


def _runtime(fingerprint: str) -> str:
    return "llamacpp" if fingerprint.endswith("|runtime=llama.cpp") else "torch"


@pytest.fixture(scope="module")
def released() -> dict[str, dict[str, list[dict]]]:
    """folder -> file -> its lines (decoded), for every released folder."""
    root = outputs_dir()
    folders = sorted(p for p in root.glob("*") if p.is_dir() and not p.name.startswith(".")) if root.is_dir() else []
    if not folders:
        pytest.skip(f"no released outputs under {root}")
    return {
        folder.name: {path.name: [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
                      for path in sorted(folder.glob("*.jsonl"))}
        for folder in folders
    }


@pytest.fixture(scope="module")
def planned(released):
    from nlgjudge.data import DataNotFoundError
    from nlgjudge.studies.released import planned_requests

    try:
        return planned_requests(folders=list(released))
    except DataNotFoundError as error:  # pragma: no cover - depends on the machine
        pytest.skip(str(error))


def _line_id(line: dict) -> tuple[str, str]:
    from nlgjudge.cache import canonical_json

    return line["key"], canonical_json(line["meta"])


def test_no_two_lines_share_runtime_operation_and_meta(released) -> None:
    from nlgjudge.cache import canonical_json

    shared = {}
    for folder, files in released.items():
        for name, lines in files.items():
            seen = Counter((_runtime(r["fingerprint"]), r["operation"], canonical_json(r["meta"])) for r in lines)
            repeated = {labels: n for labels, n in seen.items() if n > 1}
            if repeated:
                shared[f"{folder}/{name}"] = (sum(repeated.values()) - len(repeated), next(iter(repeated)))
    assert not shared, f"lines a reader cannot tell apart (extra lines, e.g. runtime/operation/meta): {shared}"


@pytest.mark.slow  # builds every planned request of the plan from the datasets (~40 s CPU)
def test_every_planned_request_of_a_released_context_has_exactly_one_line(released, planned) -> None:
    problems = {}
    for folder, files in released.items():
        by_file = defaultdict(list)
        for request in planned.get(folder, []):
            by_file[request.file].append(request)
        for name, lines in files.items():
            counts = Counter(_line_id(r) for r in lines)
            keys = {key for key, _ in counts}
            requests = by_file.get(name, [])
            released_contexts = {r.context_id for r in requests if r.key in keys}
            due = [r for r in requests if r.context_id in released_contexts]
            missing = [r for r in due if counts[(r.key, r.meta)] == 0]
            repeated = [r for r in due if counts[(r.key, r.meta)] > 1]
            if missing or repeated:
                example = (missing or repeated)[0]
                problems[f"{folder}/{name}"] = (len(missing), len(repeated), example.meta)
    assert not problems, f"planned requests without exactly one line (missing, repeated, e.g. meta): {problems}"


@pytest.mark.slow  # builds every planned request of the plan from the datasets (~40 s CPU)
def test_every_line_of_a_planned_context_is_a_planned_request(released, planned) -> None:
    problems = {}
    for folder, files in released.items():
        wanted = {(r.file, r.key, r.meta) for r in planned.get(folder, [])}
        contexts = {(r.file, r.context_id) for r in planned.get(folder, [])}
        for name, lines in files.items():
            unplanned = [r for r in lines if (name, r["meta"].get("context_id")) in contexts
                         and (name, *_line_id(r)) not in wanted]
            if unplanned:
                problems[f"{folder}/{name}"] = (len(unplanned), unplanned[0]["meta"])
    assert not problems, f"lines no planned request resolves to (count, e.g. meta): {problems}"


def test_each_elo_judge_has_a_line_for_every_ordered_pair_of_every_article(released) -> None:
    files = released.get(ELO_FOLDER)
    if not files:
        pytest.skip(f"no {ELO_FOLDER} release")
    for name, lines in files.items():
        pairs = {(r["meta"]["context_id"], r["meta"]["a"], r["meta"]["b"]) for r in lines}
        per_article = Counter(context for context, _, _ in pairs)
        assert len(per_article) == ELO_ARTICLES, name
        assert set(per_article.values()) == {ELO_ORDERED_PAIRS}, name
        assert len(lines) == len(pairs) == ELO_ARTICLES * ELO_ORDERED_PAIRS, name
