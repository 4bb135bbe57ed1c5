"""`nlgjudge rank` against the third hostile probe (issue 59), one test per class of finding: a lock
file that is not ours, secrets in forms other than their own, truncation said in full, prompt files
and input lines read as the user wrote them, names the plots must not parse, and messages that name
the real cause. Each test failed on the code before the fix."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pandas as pd
import pytest
from engine_utils import tiny_handle
from test_cli_hostile_rank import no_model  # noqa: F401 - the fixture: a model loaded is a failure
from test_cli_hostile_round_two import GOOD, tiny_judge  # the same rows and judge as the second probe's tests

from nlgjudge.cache import OutputCache
from nlgjudge.cli import main as cli_main
from nlgjudge.data.user_outputs import UserInputError
from nlgjudge.engine import Judge
from nlgjudge.out_folder import LOCK_NAME, out_lock

def _jsonl(path: Path, rows: list[dict[str, object]], **dumps: object) -> Path:
    path.write_text("".join(json.dumps(r, **dumps) + "\n" for r in rows), encoding="utf-8")  # type: ignore[arg-type]
    return path


def _one_error(status: int, err: str) -> str:
    lines = err.strip().splitlines()
    assert status == 2 and len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


# ---- files that are not ours: the lock file ----------------------------------------------------
def test_a_link_named_like_the_lock_is_never_followed(tmp_path: Path) -> None:
    victim = tmp_path / "victim.txt"
    victim.write_text("precious")
    out = tmp_path / "out"
    out.mkdir()
    (out / LOCK_NAME).symlink_to(victim)
    with pytest.raises(UserInputError, match="did not write .*never writes through it"):
        with out_lock(out):
            pass
    assert victim.read_text() == "precious" and (out / LOCK_NAME).is_symlink()


def test_a_users_file_named_like_the_lock_is_left_as_it_is(tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    (out / LOCK_NAME).write_text("my notes")
    with pytest.raises(UserInputError, match="move or rename it"):
        with out_lock(out):
            pass
    assert (out / LOCK_NAME).read_text() == "my notes"


def test_a_lock_left_by_a_run_that_ended_is_taken_and_removed(tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    (out / LOCK_NAME).write_text("12345\n")  # what a killed run leaves: its process id
    with out_lock(out):
        assert (out / LOCK_NAME).read_text() == f"{os.getpid()}\n"
    assert not (out / LOCK_NAME).exists()


# ---- input lines read as the user wrote them ---------------------------------------------------
@pytest.mark.parametrize("character", ["\u2028", "\u2029", "\u0085"])
def test_a_raw_unicode_line_separator_inside_a_string_is_text_not_a_line_end(tmp_path: Path, character: str) -> None:
    from nlgjudge.data.user_outputs import read_user_outputs

    rows = [{**r, "output": f"line one{character}line two"} if i == 0 else r for i, r in enumerate(GOOD)]
    path = _jsonl(tmp_path / "in.jsonl", rows, ensure_ascii=False)
    assert character in path.read_text(encoding="utf-8")  # written raw, as JSON allows
    frame = read_user_outputs(path)
    assert len(frame) == len(GOOD) and character in frame["output"].iloc[0]


def test_a_number_of_thousands_of_digits_is_named_with_its_line_and_fix(no_model, tmp_path: Path,
                                                                       capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "in.jsonl"
    path.write_text('{"context_id": ' + "7" * 5000 + ', "source": "s", "system": "a", "output": "o"}\n')
    status = cli_main(["rank", str(path), "--model", "smollm2-135m-instruct", "--out", str(tmp_path / "out")])
    line = _one_error(status, capsys.readouterr().err)
    assert "line 1" in line and "write it as text in quotes" in line and "set_int_max_str_digits" not in line


# ---- truncation said in full, and blamed on the right text -------------------------------------
def _window_judge(tmp_path: Path, window: int, truncate: bool) -> Judge:
    return Judge(tiny_handle("qwen2"), cache=OutputCache(tmp_path / "c.sqlite"), study="rank", progress=False,
                 truncate=truncate, context_window=window)


def test_truncate_never_cuts_into_the_outputs_it_compares(tmp_path: Path) -> None:
    from nlgjudge.ranking import rank_outputs

    rows = [{**r, "output": "word " * 400} if r["system"] == "alpha" and r["context_id"] == "c0" else r for r in GOOD]
    with pytest.raises(UserInputError, match="even with its whole source cut.*--truncate cuts only the source, so shorten "
                                             "these outputs"):
        rank_outputs(pd.DataFrame(rows), judge=_window_judge(tmp_path, 256, truncate=True), n_boot=20, progress=False)


def test_a_long_source_is_still_cut_and_said_to_be_the_sources_start(tmp_path: Path) -> None:
    from nlgjudge.ranking import rank_outputs

    rows = [{**r, "source": "the council met . " * 100} if r["context_id"] == "c0" else r for r in GOOD]
    result = rank_outputs(pd.DataFrame(rows), judge=_window_judge(tmp_path, 256, truncate=True), n_boot=20, progress=False)
    note = next(w for w in result.warnings if w.startswith("truncated prompts"))
    assert "never the outputs" in note and "start of the source" in note


def test_a_prompt_file_longer_than_the_window_is_blamed_on_the_prompt_file(tmp_path: Path) -> None:
    from nlgjudge.prompts.ranking import prompt_from_file
    from nlgjudge.ranking import rank_outputs

    prompt_file = tmp_path / "p.txt"
    prompt_file.write_text("Read carefully. " * 300 + "A: {output_a}\nB: {output_b}\nWhich is better?")
    assert prompt_from_file(prompt_file)  # a valid prompt file, only too long
    with pytest.raises(UserInputError, match="the prompt alone .* shorten the prompt file"):
        rank_outputs(pd.DataFrame(GOOD), judge=_window_judge(tmp_path, 256, truncate=False), prompt_file=prompt_file,
                     n_boot=20, progress=False)


# ---- prompt files read as written ---------------------------------------------------------------
def test_a_byte_order_mark_in_a_prompt_file_is_not_sent_to_the_judge(tmp_path: Path) -> None:
    from nlgjudge.prompts.ranking import prompt_from_file

    path = tmp_path / "p.txt"
    path.write_bytes("\ufeffText: {source}\nA: {output_a}\nB: {output_b}".encode())
    assert "\ufeff" not in prompt_from_file(path).text("s", "a", "b")


@pytest.mark.parametrize(("make", "words"), [
    (lambda d: Path("/dev/null"), "not a regular file"),
    (lambda d: d, "is a folder"),
    (lambda d: (d / "blank.txt", (d / "blank.txt").write_text(" \n\t\n"))[0], "has no text (only spaces and line breaks)"),
    (lambda d: d / "p.txt\n", "no such prompt file"),
])
def test_a_prompt_path_that_is_no_text_file_says_what_it_is(no_model, tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                            make, words: str) -> None:
    path = make(tmp_path)
    status = cli_main(["rank", str(_jsonl(tmp_path / "in.jsonl", GOOD)), "--model", "smollm2-135m-instruct", "--out",
                       str(tmp_path / "out"), "--prompt", str(path)])
    line = _one_error(status, capsys.readouterr().err)
    assert words in line and "{output_a}" in line, line
    if str(path).endswith("\n"):
        assert repr(str(path)) in line  # the newline is shown, not a line break that hides the reason


def test_an_input_path_with_a_newline_keeps_its_reason_on_the_one_error_line(no_model, tmp_path: Path,
                                                                             capsys: pytest.CaptureFixture[str]) -> None:
    path = str(_jsonl(tmp_path / "in.jsonl", GOOD)) + "\n"
    status = cli_main(["rank", path, "--model", "smollm2-135m-instruct", "--out", str(tmp_path / "out")])
    line = _one_error(status, capsys.readouterr().err)
    assert repr(path) in line and "no such file" in line


# ---- names the figures must not parse ------------------------------------------------------------
def test_system_names_that_look_like_formulas_are_drawn_as_written(tmp_path: Path) -> None:
    from nlgjudge.ranking import rank_outputs

    names = {"alpha": "$x^{$", "beta": "$\\undefinedcmd{y}$"}
    rows = [{**r, "system": names[r["system"]]} for r in GOOD]
    result = rank_outputs(pd.DataFrame(rows), judge=tiny_judge(tmp_path), out=tmp_path / "out", n_boot=20, progress=False)
    assert (tmp_path / "out" / "win_matrix.png").stat().st_size > 0
    assert set(result.leaderboard["system"]) == set(names.values())


# ---- messages that name the real cause -----------------------------------------------------------
def test_a_bad_url_from_the_environment_is_blamed_on_the_environment(no_model, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("NLGJUDGE_SERVER_URL", "http://user:pw@127.0.0.1:9/v1")
    status = cli_main(["rank", str(_jsonl(tmp_path / "in.jsonl", GOOD)), "--model", "smollm2-135m-instruct",
                       "--backend", "server", "--out", str(tmp_path / "out")])
    line = _one_error(status, capsys.readouterr().err)
    assert line.startswith("error: $NLGJUDGE_SERVER_URL (the default of --server-url):") and "pw" not in line


def test_a_sentence_encoder_is_never_offered_as_a_tokenizer(no_model, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    status = cli_main(["rank", str(_jsonl(tmp_path / "in.jsonl", GOOD)), "--model", "served", "--server-url",
                       "http://127.0.0.1:9/v1", "--server-tokenizer", "nosuch", "--out", str(tmp_path / "out")])
    line = _one_error(status, capsys.readouterr().err)
    assert "smollm2-135m-instruct" in line and "minilm-l6" not in line


# ---- secrets in forms other than their own ---------------------------------------------------------
KEY = "sk-PROBE3SECRETabcdef0123456789XYZ"


def test_an_api_key_echoed_reversed_encoded_or_upper_cased_is_masked(monkeypatch: pytest.MonkeyPatch) -> None:
    import base64

    from nlgjudge.engine.server.client import scrub

    monkeypatch.setenv("NLGJUDGE_SERVER_API_KEY", KEY)
    encoded = base64.b64encode(KEY.encode()).decode()
    said = scrub(f"401: tried {KEY[::-1]} and SK***{KEY[15:21].upper()}*** b64={encoded} url={base64.urlsafe_b64encode(KEY.encode()).decode()}")
    assert KEY[::-1] not in said and KEY[15:21].upper() not in said and encoded[:-4] not in said
    assert base64.b64encode(KEY.encode()).decode()[4:16] not in said


@pytest.mark.parametrize("shift", [0, 1, 2])
def test_a_fingerprint_carrying_the_key_base64_encoded_is_refused(monkeypatch: pytest.MonkeyPatch, shift: int) -> None:
    import base64

    from nlgjudge.engine.server.client import holds_secret

    monkeypatch.setenv("NLGJUDGE_SERVER_API_KEY", KEY)
    assert holds_secret("fp-" + base64.b64encode(b"x" * shift + KEY.encode()).decode())
    assert not holds_secret("fp-3f2a1b4c")  # an ordinary fingerprint


@pytest.mark.parametrize("segment", ["tok_9f8e7d6c5b4a39281706f5e4d3c2b1a0", "3f2a1b4c-5d6e-4f80-9a1b-2c3d4e5f6a7b"])
def test_a_token_or_uuid_in_the_server_urls_path_is_never_shown(segment: str) -> None:
    from nlgjudge.engine.server.client import redact

    assert redact(f"http://127.0.0.1:8000/{segment}/v1") == "http://127.0.0.1:8000/***/v1"
    assert redact("http://127.0.0.1:8000/qwen2.5-coder-1.5b-instruct/v1").endswith("/qwen2.5-coder-1.5b-instruct/v1")
