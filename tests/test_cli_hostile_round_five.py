"""`nlgjudge rank` and `nlgjudge cache` against the fifth hostile probe (issue 59), one test per class
of finding: numbers no float can hold and short echoes from a server, the API key in still other
encodings, words that only looked like credentials, names and outputs that only look alike or blank,
files that appear while judging or that hold the output cache, a foreign manifest in an export
folder, special files named as the cache, compressed or spreadsheet-flavoured inputs, and answers
that put almost no probability on the labels. Each test of a finding failed on the code before the fix;
the guard that real credentials stay hidden passes on both."""

from __future__ import annotations

import codecs
import gzip
import json
import os
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from test_cli_hostile_round_two import GOOD

from nlgjudge.data.user_outputs import UserInputError, check_user_outputs, design_warnings, read_user_outputs
from nlgjudge.engine.server import ServerError

KEY = "sk-PROBE5keyQw7Rt2Yu9Io4Pa"


def _jsonl(path: Path, rows: list[dict[str, object]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


# ---- tracebacks --------------------------------------------------------------------------------
def test_an_integer_log_probability_beyond_a_float_is_refused_in_one_line() -> None:
    from nlgjudge.engine.server.answers import check_logprobs

    with pytest.raises(ServerError, match="a finite number, got an integer of"):
        check_logprobs({"top_logprobs": [{" A": -(10 ** 400), " B": -1.0}]}, "http://127.0.0.1:9/v1")
    with pytest.raises(ServerError, match="a finite number"):
        check_logprobs({"token_logprobs": [-(10 ** 5000)]}, "http://127.0.0.1:9/v1")


def count_checker() -> object:
    """A server scorer with nothing but its client's address: enough to call ``_check_count``."""
    from nlgjudge.engine.server.scoring import ServerScorer

    scorer = ServerScorer.__new__(ServerScorer)
    scorer.client = type("C", (), {"where": "http://127.0.0.1:9/v1"})()
    return scorer


def test_a_prompt_token_count_that_is_not_a_whole_number_is_refused_not_skipped() -> None:
    scorer = count_checker()
    for bad in (7.5, "7", float("nan")):
        with pytest.raises(ServerError, match="malformed usage.prompt_tokens"):
            scorer._check_count({"_prompt_tokens": bad}, 7)
    with pytest.raises(ServerError, match="read the prompt as 7 tokens"):
        scorer._check_count({"_prompt_tokens": 7.0}, 8)  # a whole number written as a float is still checked
    scorer._check_count({"_prompt_tokens": None}, 8)  # not reported: nothing to check


# ---- secrets -----------------------------------------------------------------------------------
@pytest.mark.parametrize("quoted", [
    "key bytes: " + ", ".join(str(b) for b in KEY.encode()),
    "key: " + "".join(chr(ord(c) + 0xFEE0) if 0x21 <= ord(c) <= 0x7E else c for c in KEY),
    "rot13: " + codecs.encode(KEY, "rot13"),
    "utf-16: " + KEY.encode("utf-16-be").hex(),
    "bytes " + " ".join(hex(b) for b in KEY.encode()),
])
def test_a_key_quoted_in_yet_another_encoding_is_not_shown(monkeypatch: pytest.MonkeyPatch, quoted: str) -> None:
    from nlgjudge.engine.server.client import KEY_HIDDEN, scrub

    monkeypatch.setenv("NLGJUDGE_SERVER_API_KEY", KEY)
    assert scrub(quoted) == KEY_HIDDEN
    assert scrub("served 3 models, 115 requests") == "served 3 models, 115 requests"


@pytest.mark.parametrize("words", ["Basic LSTM", "basic tier", "sk-learn-logreg", "sk-learn-svm", "Basic GRU"])
def test_words_that_only_look_like_a_credential_are_shown_as_they_are(words: str) -> None:
    from nlgjudge.engine.server.client import scrub

    assert scrub(f"system {words} is constant") == f"system {words} is constant"


@pytest.mark.parametrize("secret", ["Bearer sk-proj-AbC123xyz", "Basic dXNlcjpwYXNz", "sk-abcdef123456"])
def test_credentials_are_still_hidden(secret: str) -> None:
    from nlgjudge.engine.server.client import scrub

    assert "***" in scrub(f"refused ({secret})")


# ---- names and outputs that only look alike or blank --------------------------------------------
@pytest.mark.parametrize(("first", "second"), [("A", "\u13aa"), ("o1", "\u05851"), ("A", "A\u034f"), ("B", "B\ufe0f")])
def test_names_that_read_the_same_are_refused(first: str, second: str) -> None:
    rows = [dict(r) for r in GOOD]
    systems = sorted({r["system"] for r in rows})
    for row in rows:
        row["system"] = first if row["system"] == systems[0] else second if row["system"] == systems[1] else row["system"]
    with pytest.raises(UserInputError, match="look"):
        check_user_outputs(pd.DataFrame(rows))


@pytest.mark.parametrize("blank", ["\u3164", "\u2800", "\u034f\ufe0f"])
def test_a_system_name_that_shows_as_blank_is_refused(blank: str) -> None:
    rows = [dict(r) for r in GOOD]
    first = rows[0]["system"]
    for row in rows:
        if row["system"] == first:
            row["system"] = blank
    with pytest.raises(UserInputError, match="shows as blank"):
        check_user_outputs(pd.DataFrame(rows))


def test_outputs_made_only_of_combining_marks_get_the_blank_output_warning() -> None:
    rows = [dict(r) for r in GOOD]
    rows[0]["output"] = "\u0301\u0308\u20dd"
    assert any("blank" in note for note in design_warnings(check_user_outputs(pd.DataFrame(rows))))


def test_names_that_differ_by_a_leading_quote_stay_two_names_in_the_csv() -> None:
    from nlgjudge.ranking import neutralise_formulas

    shown = neutralise_formulas(pd.DataFrame({"system": ["=x", "'=x", "plain"]}))["system"].tolist()
    assert len(set(shown)) == 3 and shown[2] == "plain"


# ---- files that are not ours ---------------------------------------------------------------------
def test_the_output_cache_inside_the_out_folder_is_refused_even_with_force(tmp_path: Path) -> None:
    from nlgjudge.out_folder import prepare_out

    out = tmp_path / "out"
    out.mkdir()
    cache = out / "judgments.jsonl"
    cache.write_bytes(b"SQLite format 3\x00")
    for force in (False, True):
        with pytest.raises(UserInputError, match="the output cache"):
            prepare_out(out, force=force, cache_file=cache)
    assert cache.read_bytes() == b"SQLite format 3\x00"
    with pytest.raises(UserInputError, match="the output cache"):  # not there yet: the name is enough
        prepare_out(tmp_path / "other", cache_file=tmp_path / "other" / "report.md")


@pytest.mark.parametrize("planted", ["link", "folder"])
def test_a_link_or_folder_planted_while_judging_stops_the_writing(tmp_path: Path, planted: str) -> None:
    from test_cli_output_set import make_result

    from nlgjudge.ranking import write_outputs

    out = tmp_path / "out"
    write_outputs(make_result(4), out)
    before = (out / "leaderboard.csv").read_bytes()
    (out / "report.md").unlink()
    if planted == "link":
        (tmp_path / "elsewhere.md").write_text("mine", encoding="utf-8")
        (out / "report.md").symlink_to(tmp_path / "elsewhere.md")
    else:
        (out / "report.md").mkdir()
    with pytest.raises(UserInputError, match="appeared there while judging as a folder or link"):
        write_outputs(make_result(5), out)
    assert (out / "leaderboard.csv").read_bytes() == before  # the earlier set is left as it was
    assert planted == "folder" or (tmp_path / "elsewhere.md").read_text(encoding="utf-8") == "mine"


def test_an_export_into_a_folder_with_someone_elses_manifest_or_jsonl_is_refused(tmp_path: Path) -> None:
    from nlgjudge.cache.release import _refuse_foreign_files

    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "MANIFEST.json").write_text('{"my": "own"}', encoding="utf-8")
    with pytest.raises(FileExistsError, match="not a manifest of released outputs"):
        _refuse_foreign_files(mine)
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "notes.jsonl").write_text("", encoding="utf-8")
    with pytest.raises(FileExistsError, match="notes.jsonl, which no release manifest there lists"):
        _refuse_foreign_files(notes)
    assert (notes / "notes.jsonl").exists() and (mine / "MANIFEST.json").read_text(encoding="utf-8") == '{"my": "own"}'


def test_cache_stats_on_a_named_pipe_says_what_it_is(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from nlgjudge.cache.__main__ import main

    fifo = tmp_path / "pipe.sqlite"
    os.mkfifo(fifo)
    assert main(["stats", "--db", str(fifo)]) == 2
    err = capsys.readouterr().err
    assert "not a regular file" in err and "does not exist" not in err


# ---- unclear -----------------------------------------------------------------------------------
def test_a_compressed_input_is_named_as_compressed(tmp_path: Path) -> None:
    path = tmp_path / "outputs.jsonl"
    path.write_bytes(gzip.compress(b"".join(json.dumps(r).encode() + b"\n" for r in GOOD)))
    with pytest.raises(UserInputError, match="gzip-compressed file.*gunzip"):
        read_user_outputs(path)


def test_a_spreadsheets_separator_line_is_named_not_called_a_missing_header(tmp_path: Path) -> None:
    path = tmp_path / "outputs.csv"
    pd.DataFrame(GOOD).to_csv(path, index=False)
    path.write_text("sep=,\n" + path.read_text(encoding="utf-8"), encoding="utf-8")
    with pytest.raises(UserInputError, match="hint spreadsheets write for themselves"):
        read_user_outputs(path)


# ---- silent: answers off the labels ------------------------------------------------------------
def test_the_probability_left_on_the_labels_is_measured() -> None:
    from nlgjudge.studies.rank import label_mass

    class Result:
        def __init__(self, logprobs: list[float]) -> None:
            self.logprobs = np.asarray(logprobs)

    assert label_mass(Result([np.log(0.6), np.log(0.3)])) == pytest.approx(0.9)
    assert label_mass(Result([-60.0, -61.0])) < 1e-20
    assert np.isnan(label_mass(object()))


def test_a_short_echo_is_no_alignment_not_an_index_error(monkeypatch: pytest.MonkeyPatch) -> None:
    from nlgjudge.engine.server import capabilities

    def answer(client: object, model: str, prompt: str, **fields: object) -> dict[str, object]:
        if fields.get("echo"):  # the cut's offset listed, but no distributions at all
            return {"text": "", "logprobs": {"text_offset": [0, capabilities.PROBE_CUT], "top_logprobs": []}}
        return {"text": " mat", "logprobs": {"top_logprobs": [{" mat": -0.1}], "token_logprobs": [-0.1]}}

    monkeypatch.setattr(capabilities, "_completion", answer)
    caps = capabilities.probe(type("C", (), {"where": "http://127.0.0.1:9/v1"})(), "judge", None, 5)
    assert caps.echo_shift is None  # no alignment can be read from it: echo is not used


def test_the_api_key_given_as_an_option_value_is_refused_and_not_shown(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    from nlgjudge.cli import main as cli_main

    monkeypatch.setenv("NLGJUDGE_SERVER_API_KEY", KEY)
    status = cli_main(["rank", str(_jsonl(tmp_path / "in.jsonl", GOOD)), "--model", "smollm2-135m-instruct",
                       "--noun", KEY, "--out", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert status == 2 and "--noun holds what looks like the API key" in err and KEY not in err
    assert not (tmp_path / "out").exists()


def test_the_api_key_in_the_input_path_is_named_as_the_input_path_not_an_option(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    from nlgjudge.cli import main as cli_main

    monkeypatch.setenv("NLGJUDGE_SERVER_API_KEY", KEY)
    status = cli_main(["rank", str(tmp_path / f"{KEY}.jsonl"), "--model", "smollm2-135m-instruct",
                       "--out", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert status == 2 and "the input file's path holds what looks like the API key" in err
    assert "--input" not in err and KEY not in err


def test_an_sqlite_failure_on_a_full_disk_is_named_as_a_full_disk(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import shutil
    import sqlite3

    from nlgjudge.cache import OutputCache

    cache = OutputCache(tmp_path / "outputs.sqlite")
    monkeypatch.setattr(shutil, "disk_usage", lambda path: shutil._ntuple_diskusage(160 * 1024, 160 * 1024, 0))
    said = str(cache._cache_error(sqlite3.DatabaseError("database disk image is malformed")))
    assert "is full" in said and "damaged" not in said


def test_a_chat_template_that_refuses_the_prompt_is_one_clear_error() -> None:
    from nlgjudge.engine.prompting import render_prompt
    from nlgjudge.engine.requests import EngineInputError

    class Refusing:
        chat_template = "{{ raise_exception('roles must alternate') }}"

        def apply_chat_template(self, *args: object, **kwargs: object) -> str:
            raise RuntimeError("roles must alternate")  # what jinja2's TemplateError carries

    with pytest.raises(EngineInputError, match="chat template refused this prompt.*roles must alternate"):
        render_prompt(Refusing(), [{"role": "system", "content": "s"}, {"role": "user", "content": "u"}])


def test_a_damaged_tokenizer_folder_is_one_server_error(tmp_path: Path) -> None:
    from nlgjudge.engine.server.runtime import load_named_tokenizer

    (tmp_path / "tokenizer.json").write_text('{"version": "1.0", "model": {"type": "Nope"}}', encoding="utf-8")
    (tmp_path / "tokenizer_config.json").write_text('{"tokenizer_class": "PreTrainedTokenizerFast"}', encoding="utf-8")
    with pytest.raises(ServerError, match="cannot load the tokenizer"):
        load_named_tokenizer(str(tmp_path), "judge")


def test_a_tokenizer_folders_chat_template_is_part_of_the_served_keys() -> None:
    from nlgjudge.engine.server.runtime import ServerRuntime

    def part(template: str, name: str = "/models/judge-tokenizer") -> str:
        runtime = ServerRuntime.__new__(ServerRuntime)
        runtime.model, runtime.tokenizer_name = "judge", name
        runtime._tokenizer = type("T", (), {"chat_template": template})()
        return runtime._template_part()

    assert part("{{ a }}").startswith("|template=sha256:") and part("{{ a }}") != part("{{ b }}")
    assert part("{{ a }}", name="smollm2-135m-instruct") == ""  # a packaged tokenizer: its template is the package's
