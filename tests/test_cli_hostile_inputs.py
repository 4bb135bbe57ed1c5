"""Hostile input files for `nlgjudge rank` (issue 48): what would be silently wrong is refused, and
every refusal names the file, the line and what the file really is, in one line."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from nlgjudge.cli import main as cli_main
from nlgjudge.data.user_outputs import UserInputError, read_user_outputs

HEADER = "context_id,source,system,output\n"
ROWS = [
    {"context_id": "c1", "source": "The council met.", "system": "alpha", "output": "Council met."},
    {"context_id": "c1", "source": "The council met.", "system": "beta", "output": "A meeting."},
    {"context_id": "c2", "source": "Rain fell.", "system": "alpha", "output": "It rained."},
    {"context_id": "c2", "source": "Rain fell.", "system": "beta", "output": "Wet."},
]


def jsonl(path: Path, rows: list[dict[str, str]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def refused(path: Path, pattern: str) -> str:
    with pytest.raises(UserInputError, match=pattern) as caught:
        read_user_outputs(path)
    message = str(caught.value)
    assert "\n" not in message
    return message


def test_systems_that_never_meet_are_refused_naming_the_groups(tmp_path: Path) -> None:
    rows = [{**r, "system": {"alpha": "A", "beta": "B"}[r["system"]]} for r in ROWS[:2]]
    rows += [{**r, "system": {"alpha": "C", "beta": "D"}[r["system"]]} for r in ROWS[2:]]
    message = refused(jsonl(tmp_path / "o.jsonl", rows), "2 groups that are never compared")
    assert "{'A', 'B'} and {'C', 'D'}" in message


def test_systems_joined_through_a_third_are_ranked(tmp_path: Path) -> None:
    rows = [{**ROWS[0], "system": "A"}, {**ROWS[1], "system": "B"}, {**ROWS[2], "system": "B"}, {**ROWS[3], "system": "C"}]
    assert sorted(read_user_outputs(jsonl(tmp_path / "o.jsonl", rows))["system"].unique()) == ["A", "B", "C"]


def test_names_that_differ_only_in_spaces_are_refused(tmp_path: Path) -> None:
    rows = [dict(r) for r in ROWS]
    rows[2]["system"] = "alpha "
    message = refused(jsonl(tmp_path / "o.jsonl", rows), "differ only in spaces")
    assert "'alpha'" in message and "'alpha '" in message and "line 1 and line 3" in message


@pytest.mark.parametrize("name", ["alpha\n# pwned", "al\tpha", "alpha\x00", "alpha\u2028x"])
def test_control_characters_in_a_system_name_are_refused(tmp_path: Path, name: str) -> None:
    rows = [dict(r) for r in ROWS]
    rows[0]["system"] = rows[2]["system"] = name
    refused(jsonl(tmp_path / "o.jsonl", rows), r"line 1: field 'system' .* holds the control character")


def test_a_very_long_system_name_is_refused(tmp_path: Path) -> None:
    rows = [dict(r) for r in ROWS]
    rows[0]["system"] = rows[2]["system"] = "x" * 5000
    refused(jsonl(tmp_path / "o.jsonl", rows), "line 1: field 'system' is 5000 characters long")


def test_a_key_given_twice_in_a_json_object_is_refused(tmp_path: Path) -> None:
    path = jsonl(tmp_path / "o.jsonl", ROWS)
    lines = path.read_text().splitlines()
    lines[1] = lines[1][:-1] + ', "output": "the second one"}'
    path.write_text("\n".join(lines) + "\n")
    refused(path, "line 2: key 'output' appears twice")


@pytest.mark.parametrize("where", ["whole line", "unused field"])
def test_deeply_nested_json_is_one_line(tmp_path: Path, where: str) -> None:
    path = jsonl(tmp_path / "o.jsonl", ROWS)
    deep = "[" * 200_000
    extra = deep if where == "whole line" else '{"context_id": "c3", "junk": ' + deep
    path.write_text(path.read_text() + extra + "\n")
    refused(path, "line 5: JSON nested too deeply")


def csv_file(tmp_path: Path, text: str, name: str = "o.csv") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_a_csv_with_two_columns_of_one_name_is_refused(tmp_path: Path) -> None:
    text = "context_id,source,system,output,output\n" + "".join(
        f"{r['context_id']},{r['source']},{r['system']},{r['output']},other\n" for r in ROWS)
    refused(csv_file(tmp_path, text), "line 1: the header names column 'output' more than once")


def test_a_short_csv_row_is_refused_with_its_line(tmp_path: Path) -> None:
    text = HEADER + "".join(f"{r['context_id']},{r['source']},{r['system']},{r['output']}\n" for r in ROWS)
    text = text.replace("c2,Rain fell.,beta,Wet.\n", "c2,Rain fell.,beta\n")
    refused(csv_file(tmp_path, text), r"o\.csv, line 5: 3 cells where the header \(line 1\) names 4; a cell is missing")


def test_lines_after_a_multi_line_cell_are_counted_from_the_file(tmp_path: Path) -> None:
    frame = pd.DataFrame(ROWS)
    frame.loc[0, "output"] = "Council\nmet\non\nMonday."
    frame.loc[2, "source"] = frame.loc[3, "source"] = "Rain fell."
    frame.loc[3, "output"] = frame.loc[2, "output"]
    frame.loc[3, "system"] = "alpha"  # a repeated (context, system) on the row that starts on line 8
    path = tmp_path / "o.csv"
    frame.to_csv(path, index=False)
    refused(path, r"o\.csv, line 7 and line 8: system 'alpha' appears more than once")


@pytest.mark.parametrize(("text", "message"), [
    (HEADER.replace(",", ";") + "c1;s;alpha;x\nc1;s;beta;y\n", "separated by semicolons, not commas"),
    (HEADER.replace(",", "\t") + "c1\ts\talpha\tx\nc1\ts\tbeta\ty\n", "separated by tabs, not commas"),
    ("c1,The council met.,alpha,x\nc1,The council met.,beta,y\n", "line 1: the header names none of the fields"),
    ('{"context_id": "c1", "source": "s", "system": "a", "output": "x"}\n', "holds JSON"),
])
def test_a_csv_that_is_not_comma_separated_with_a_header_says_what_it_is(tmp_path: Path, text: str, message: str) -> None:
    found = refused(csv_file(tmp_path, text), message)
    assert "--context-field" not in found or "header" in found


def test_the_command_line_names_the_delimiter(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = csv_file(tmp_path, HEADER.replace(",", ";") + "c1;s;alpha;x\nc1;s;beta;y\n")
    status = cli_main(["rank", str(path), "--model", "smollm2-135m-instruct", "--out", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert status == 2 and err.count("\n") == 1 and "separated by semicolons" in err and "Traceback" not in err


def test_a_null_output_is_called_null_not_missing(tmp_path: Path) -> None:
    rows = [dict(r) for r in ROWS]
    rows[1]["output"] = None  # type: ignore[assignment]
    message = refused(jsonl(tmp_path / "o.jsonl", rows), r"line 2: field 'output' has no value \(null\)")
    assert "missing field" not in message


def test_a_wrong_type_is_named_with_its_article(tmp_path: Path) -> None:
    rows = [dict(r) for r in ROWS]
    rows[0]["output"] = 5  # type: ignore[assignment]
    refused(jsonl(tmp_path / "o.jsonl", rows), r"line 1: field 'output' is an int \(5\), not a string")


@pytest.mark.parametrize(("first", "second"), [
    ("alpha", "alpha\u200b"),  # a zero-width space: two systems that both read 'alpha'
    ("caf\u00e9", "cafe\u0301"),  # 'café' with its accent composed, and decomposed
])
def test_names_that_look_the_same_are_refused(tmp_path: Path, first: str, second: str) -> None:
    rows = [dict(r) for r in ROWS]
    rows[0]["system"] = rows[2]["system"] = first
    rows[1]["system"] = rows[3]["system"] = second
    refused(jsonl(tmp_path / "o.jsonl", rows), r"line 1 and line 2: system names .* differ only in invisible characters, "
                                                r"spacing or how their accents are encoded")


def test_a_bidirectional_override_in_a_name_is_refused(tmp_path: Path) -> None:
    rows = [dict(r) for r in ROWS]
    rows[1]["system"] = rows[3]["system"] = "\u202eateb"  # shown as 'beta'
    refused(jsonl(tmp_path / "o.jsonl", rows), r"line 2: field 'system' .* bidirectional control character U\+202E")
