"""Reading a user's system outputs for `nlgjudge rank`: the formats, and every refusal names file, line and fix."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from nlgjudge.data.user_outputs import COLUMNS, FieldNames, UserInputError, check_user_outputs, read_user_outputs

ROWS = [
    {"context_id": "c1", "source": "The council met.", "system": "alpha", "output": "Council met."},
    {"context_id": "c1", "source": "The council met.", "system": "beta", "output": "A meeting."},
    {"context_id": "c2", "source": "Rain fell.", "system": "alpha", "output": "It rained."},
    {"context_id": "c2", "source": "Rain fell.", "system": "beta", "output": ""},
]


def write_jsonl(path: Path, rows: list[object]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def test_jsonl_csv_and_parquet_read_the_same(tmp_path: Path) -> None:
    from_jsonl = read_user_outputs(write_jsonl(tmp_path / "o.jsonl", ROWS))
    pd.DataFrame(ROWS).to_csv(tmp_path / "o.csv", index=False)
    pd.DataFrame(ROWS).to_parquet(tmp_path / "o.parquet")
    assert list(from_jsonl.columns) == list(COLUMNS)
    assert from_jsonl["output"].tolist() == ["Council met.", "A meeting.", "It rained.", ""]  # empty output kept
    for name in ("o.csv", "o.parquet"):
        pd.testing.assert_frame_equal(read_user_outputs(tmp_path / name), from_jsonl)


def test_field_names_can_be_renamed_and_integer_ids_are_text(tmp_path: Path) -> None:
    rows = [{"doc": k // 2, "article": "x", "model": f"m{k % 2}", "summary": "s"} for k in range(4)]
    frame = read_user_outputs(write_jsonl(tmp_path / "o.jsonl", rows), FieldNames("doc", "article", "model", "summary"))
    assert frame["context_id"].tolist() == ["0", "0", "1", "1"] and frame["system"].tolist() == ["m0", "m1"] * 2


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ('{"context_id": "c1", "source": "s", "system": "a", "output": "x"}\n{"context_id": "c1", oops}\n',
         r"o\.jsonl, line 2: not valid JSON"),
        ('{"context_id": "c1", "source": "s", "system": "a"}\n', r"line 1: missing field 'output'.*--output-field"),
        ('{"context_id": "c1", "source": "s", "system": "a", "output": ["x"]}\n',
         r"line 1: field 'output' is a list .*not a string"),
        ('{"context_id": "c1", "source": "s", "system": "a", "output": 3.5}\n', r"line 1: field 'output' is a float"),
        ("", r"o\.jsonl: the file is empty"),
        ("\n\n", r"no rows"),
        ('[1, 2]\n', r"line 1: a JSON list, not an object"),
        ('{"context_id": "c1", "source": "s", "system": "a", "output": "x"}\n'
         '{"context_id": "c1", "source": "s", "system": "a", "output": "y"}\n',
         r"line 1 and line 2: system 'a' appears more than once in context 'c1'"),
        ('{"context_id": "c1", "source": "s", "system": "a", "output": "x"}\n'
         '{"context_id": "c2", "source": "s", "system": "b", "output": "y"}\n'
         '{"context_id": "c2", "source": "s", "system": "a", "output": "y"}\n',
         r"line 1: context 'c1' has one system .*at least two systems"),
        ('{"context_id": "c1", "source": "s", "system": "a", "output": "x"}\n'
         '{"context_id": "c1", "source": "t", "system": "b", "output": "y"}\n',
         r"context 'c1' has 2 different source texts"),
        ('{"context_id": "", "source": "s", "system": "a", "output": "x"}\n', r"line 1: field 'context_id' is empty"),
    ],
)
def test_malformed_jsonl_is_refused_with_file_line_and_fix(tmp_path: Path, content: str, message: str) -> None:
    path = tmp_path / "o.jsonl"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(UserInputError, match=message):
        read_user_outputs(path)


def test_files_that_cannot_be_read(tmp_path: Path) -> None:
    with pytest.raises(UserInputError, match="no such file"):
        read_user_outputs(tmp_path / "missing.jsonl")
    with pytest.raises(UserInputError, match="is a folder"):
        read_user_outputs(tmp_path)
    (tmp_path / "o.txt").write_text("x")
    with pytest.raises(UserInputError, match="unknown file type '.txt'"):
        read_user_outputs(tmp_path / "o.txt")
    (tmp_path / "bad.parquet").write_text("not parquet")
    with pytest.raises(UserInputError, match="cannot be read as PARQUET"):
        read_user_outputs(tmp_path / "bad.parquet")
    (tmp_path / "latin.jsonl").write_bytes('{"output": "caf\xe9"}\n'.encode("latin-1"))
    with pytest.raises(UserInputError, match="not UTF-8"):
        read_user_outputs(tmp_path / "latin.jsonl")
    (tmp_path / "header.csv").write_text("context_id,source,system,output\n")
    with pytest.raises(UserInputError, match="header but no rows"):
        read_user_outputs(tmp_path / "header.csv")


def test_csv_lines_count_the_header(tmp_path: Path) -> None:
    frame = pd.DataFrame(ROWS)
    frame.loc[2, "source"] = ""
    frame.to_csv(tmp_path / "o.csv", index=False)
    with pytest.raises(UserInputError, match=r"o\.csv, line 4: field 'source' is empty"):
        read_user_outputs(tmp_path / "o.csv")


def test_references_are_required_only_when_asked_for() -> None:
    frame = pd.DataFrame(ROWS)
    assert check_user_outputs(frame)["reference"].isna().all()
    with pytest.raises(UserInputError, match=r"row 0: missing field 'reference'.*--reference-field"):
        check_user_outputs(frame, with_reference=True)
    with_refs = frame.assign(reference=["r1", "r1", "r2", "r2"])
    assert check_user_outputs(with_refs, with_reference=True)["reference"].tolist() == ["r1", "r1", "r2", "r2"]
    with pytest.raises(UserInputError, match="different reference texts"):
        check_user_outputs(frame.assign(reference=["r1", "r9", "r2", "r2"]), with_reference=True)
    with pytest.raises(UserInputError, match="expected a pandas DataFrame"):
        check_user_outputs(ROWS)  # type: ignore[arg-type]


# Issue 39: messages that say what to fix


def test_a_missing_context_field_names_the_option_that_exists(tmp_path: Path) -> None:
    rows = [{k: v for k, v in r.items() if k != "context_id"} for r in ROWS]
    with pytest.raises(UserInputError, match="line 1: missing field 'context_id'") as caught:
        read_user_outputs(write_jsonl(tmp_path / "o.jsonl", rows))
    assert "with --context-field" in str(caught.value) and "--context-id-field" not in str(caught.value)


@pytest.mark.parametrize("suffix", [".jsonl", ".csv"])
def test_a_byte_order_mark_is_accepted_in_both_text_formats(tmp_path: Path, suffix: str) -> None:
    plain = tmp_path / f"plain{suffix}"
    if suffix == ".jsonl":
        write_jsonl(plain, ROWS)
    else:
        pd.DataFrame(ROWS).to_csv(plain, index=False)
    marked = tmp_path / f"marked{suffix}"
    marked.write_bytes(b"\xef\xbb\xbf" + plain.read_bytes())
    pd.testing.assert_frame_equal(read_user_outputs(marked), read_user_outputs(plain))


def test_a_lone_surrogate_names_its_line_and_field(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "o.jsonl", ROWS[:2])
    # json.dumps writes "\ud800" as an escape that json.loads turns back into a lone surrogate.
    path.write_text(path.read_text() + json.dumps({**ROWS[2], "output": "It rained \ud800 hard."}) + "\n" + json.dumps(ROWS[3]) + "\n")
    with pytest.raises(UserInputError, match=r"o\.jsonl, line 3: field 'output' holds '\\ud800' at character 11") as caught:
        read_user_outputs(path)
    assert "valid Unicode" in str(caught.value)


def test_rows_remember_where_they_were_read(tmp_path: Path) -> None:
    from nlgjudge.data.user_outputs import row_place

    frame = read_user_outputs(write_jsonl(tmp_path / "o.jsonl", ROWS))
    assert row_place(frame, "c2", "beta") == f"{tmp_path / 'o.jsonl'}, line 4"
