"""The eleventh held-out probe of ``nlgjudge`` (issue 59): the book's commands run where the chapters' notebooks
are not; a constant system disguised by rotating its sentences or by a nonce appended; an ``--aspect`` holding a
terminal escape; a binary file imported as released outputs; a negative prompt-token count from a server; and
one very long word that kept a tokenizer busy for minutes before any message."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from engine_utils import tiny_handle
from test_cli_hostile_rank import no_model, one_error, rank_cli  # noqa: F401 - the fixture: a model loaded is a failure
from test_cli_hostile_round_five import count_checker
from test_cli_hostile_round_two import GOOD

import nlgjudge.book as book
from nlgjudge.cache import OutputCache
from nlgjudge.cache.__main__ import main as cache_main
from nlgjudge.data.aimed_at_judge import text_warnings
from nlgjudge.engine import Judge
from nlgjudge.engine.server.client import ServerError


def test_the_books_commands_say_where_the_notebooks_are_missing(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(book, "REPO_ROOT", tmp_path)  # a package installed without its repository
    for command in (["list"], ["html"], ["chapter", "elo"]):
        line = one_error(book.main(command), capsys.readouterr().err)
        assert "notebooks are not in" in line and "clone of the repository" in line, line


def _frame(outputs: list[str]) -> pd.DataFrame:
    sources = ["The council met on Monday.", "Rain fell on the city all week.", "The team won the final."]
    rows = [{"context_id": f"c{k}", "source": src, "system": "attacker", "output": out}
            for k, (src, out) in enumerate(zip(sources, outputs, strict=True))]
    rows += [{"context_id": f"c{k}", "source": src, "system": "honest", "output": f"In short: {src}"} for k, src in enumerate(sources)]
    return pd.DataFrame(rows)


@pytest.mark.parametrize("outputs", [
    ["Great summary. Very accurate. Highly relevant.", "Very accurate. Highly relevant. Great summary.",
     "Highly relevant. Great summary. Very accurate."],  # its sentences rotated
    ["An excellent and faithful summary of the article. ref a83f2e9c",
     "An excellent and faithful summary of the article. ref zq71kxw0",
     "An excellent and faithful summary of the article. ref p0o9i8u7"],  # a nonce appended
], ids=["rotated", "nonce"])
def test_a_constant_system_in_disguise_is_named_before_judging(outputs: list[str]) -> None:
    notes = [n for n in text_warnings(_frame(outputs)) if "same or nearly the same output" in n]
    assert len(notes) == 1 and "'attacker'" in notes[0] and "in 3 of its 3 contexts" in notes[0], notes


@pytest.mark.parametrize(("option", "value"), [("--aspect", "\x1b[2Jclear"), ("--noun", "sum\u200bmary")])
def test_an_aspect_or_noun_holding_a_control_character_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                                   no_model: None, option: str, value: str) -> None:
    line = one_error(rank_cli(tmp_path, option, value), capsys.readouterr().err)
    assert f"{option} holds a control character" in line and "\x1b" not in line and "pass words" in line, line
    assert not (tmp_path / "out").exists()


def test_a_binary_file_imported_as_outputs_says_it_is_not_json_not_which_python_argument(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # a file in the working folder: its folder has no name to read a study from
    Path("c2.jsonl").write_bytes(b"\x00\x01garbage")
    status = cache_main(["import", "c2.jsonl", "--allow-unverified", "--db", str(tmp_path / "c.sqlite")])
    err = capsys.readouterr().err
    assert status != 0 and "Traceback" not in err and "study=" not in err.split("--study")[0], err
    assert "not valid JSON" in err or "--study" in err, err


def test_a_negative_prompt_token_count_is_a_malformed_field_not_a_tokenizer_mismatch() -> None:
    scorer = count_checker()
    with pytest.raises(ServerError, match=r"malformed usage.prompt_tokens: expected a whole number of tokens, 0 or more"):
        scorer._check_count({"_prompt_tokens": -5}, 81)


def test_one_very_long_word_is_refused_before_it_is_tokenized(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    import nlgjudge.engine.prompting as prompting

    rows = [dict(r) for r in GOOD]
    rows[0]["output"] = "x" * 300_000  # a tokenizer takes minutes over one such word
    encode = prompting.encode_prompt
    tokenized: list[int] = []

    def counting(tokenizer, prompt, *args, **kwargs):  # type: ignore[no-untyped-def]
        tokenized.append(len(str(prompt)))
        return encode(tokenizer, prompt, *args, **kwargs)

    monkeypatch.setattr(prompting, "encode_prompt", counting)
    monkeypatch.setattr("nlgjudge.ranking._load_judge", lambda model, backend, truncate: Judge(
        tiny_handle("qwen2"), cache=OutputCache(tmp_path / "c.sqlite"), study="rank", progress=False, truncate=truncate))
    monkeypatch.setenv("NLGJUDGE_OUTPUT_CACHE", str(tmp_path / "c.sqlite"))
    line = one_error(rank_cli(tmp_path, rows=rows), capsys.readouterr().err.replace("rank: ", "").split("\n", 1)[-1])
    assert "characters exceeds the context window" in line and "whatever its tokens" in line, line
    assert tokenized and max(tokenized) < 300_000  # the long prompt never reached the tokenizer
