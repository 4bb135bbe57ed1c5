"""WebNLG 2017 human-evaluation loader on a synthetic CSV in the released format."""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Any

import pytest

from nlgjudge.data import DataValidationError, load_dataset
from nlgjudge.data.webnlg import render_triples

TEAMS = ["adapt", "baseline", "melbourne", "pkuwriter", "tilburg-nmt", "tilburg-pipe", "tilburg-smt", "upf-forge", "vietnam", "webnlg"]
HEADER = ["id", "mr", "team", "text", "category", "type", "bleu", "meteor", "ter", "systemtype", "triplesize", "fluency", "grammar", "semantics"]


def records() -> list[dict[str, Any]]:
    rows = []
    for m in range(223):
        size = 1 + m % 5
        triples = [f"Entity_{m} | property{t} | Value_{m}_{t}" for t in range(size)]
        for k, team in enumerate(TEAMS):
            empty = team == "tilburg-pipe" and m % 9 == 0
            rows.append(
                {
                    "id": str(len(rows) + 1),
                    "mr": "<br>".join(triples),
                    "team": team,
                    "text": "" if empty else f"entity {m} has value {k} .\n" + ("second line" if m == 1 else ""),
                    "category": "Astronaut",
                    "type": "seen",
                    "bleu": "0.1",
                    "meteor": "0.2",
                    "ter": "50",
                    "systemtype": "neural",
                    "triplesize": f"{size}triple",
                    "fluency": "1.0" if empty else str(1 + (m + k) % 3),
                    "grammar": "1.0" if empty else "2.3333333333333335",
                    "semantics": "1.0" if empty else "2.5",
                }
            )
    return rows


def write_csv(root: Path, mutate: Any = None) -> Path:
    rows = records()
    if mutate is not None:
        mutate(rows)
    folder = root / "webnlg2017_human_eval"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "all_data_final_averaged.csv"
    with path.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    return path


def test_valid_file_groups_triple_sets(tmp_path: Path) -> None:
    write_csv(tmp_path)
    ds = load_dataset("webnlg", data_dir=tmp_path)
    assert ds.frame.shape == (2230, 9) and ds.n_contexts == 223
    assert ds.context_ids()[:2] == ["mr000", "mr001"]
    cands = ds.candidates("mr002")
    assert cands["system"].tolist() == TEAMS
    assert cands.loc[0, "source"] == "Entity_2 | property0 | Value_2_0\nEntity_2 | property1 | Value_2_1\nEntity_2 | property2 | Value_2_2"
    assert cands.loc[1, "FLU"] == 1.0 and cands.loc[1, "GRA"] == pytest.approx(7 / 3) and cands.loc[1, "SEM"] == 2.5
    assert ds.candidates("mr001").loc[0, "text"] == "entity 1 has value 0 .\nsecond line"
    empty = ds.frame[ds.frame["text"] == ""]
    assert len(empty) == 25 and set(empty["system"]) == {"tilburg-pipe"}


@pytest.mark.parametrize(
    ("mutate", "expected"),
    [
        (lambda rs: rs[33].__setitem__("semantics", "3.5"), r"record 33 \(id 34, team pkuwriter, mr003\): semantics: score 3\.5 outside"),
        (lambda rs: rs[33].__setitem__("grammar", "n/a"), r"record 33 \(id 34, team pkuwriter, mr003\): grammar: 'n/a' is not a number"),
        (lambda rs: rs[15].__setitem__("text", ""), r"record 15 \(id 16, team tilburg-pipe, mr001\): empty text but ratings"),
        (lambda rs: rs[21].__setitem__("team", "adapt"), r"candidate id 'adapt' appears twice in context 'mr002'"),
        (lambda rs: rs.pop(), r"context 'mr222' .*: expected 10 candidates, found 9"),
        (lambda rs: [r.__setitem__("mr", "A | b") for r in rs[40:50]], r"record 40 \(id 41\): mr: triple 1 'A \| b' is not 'subject \| predicate \| object'"),
        (lambda rs: [r.__setitem__("triplesize", "4triple") for r in rs[0:10]], r"record 0 \(id 1\): triplesize says 4 triples but mr holds 1"),
    ],
)
def test_malformed_rows_are_errors(tmp_path: Path, mutate: Any, expected: str) -> None:
    path = write_csv(tmp_path, mutate)
    with pytest.raises(DataValidationError, match=expected) as caught:
        load_dataset("webnlg", data_dir=tmp_path)
    assert str(path) in str(caught.value)


def test_missing_column_is_named(tmp_path: Path) -> None:
    path = write_csv(tmp_path, lambda rs: [r.pop("fluency") for r in rs])
    with pytest.raises(DataValidationError, match=r"missing column\(s\) \['fluency'\]"):
        load_dataset("webnlg", data_dir=tmp_path)
    assert path.exists()


def test_render_triples_one_per_line() -> None:
    assert render_triples("A | b | C<br>C | d | E_F", "here") == "A | b | C\nC | d | E_F"
