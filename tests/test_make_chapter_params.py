"""`make chapter NAME=... PARAMS=...` (issue 48): both reach Python unsplit, so a bad quoting is one
`error:` line naming PARAMS and how to quote it, not bash's "unexpected EOF"; values with spaces
still arrive as one value. Nothing is executed: every case here is refused before papermill."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from nlgjudge.book import main as book_main
from nlgjudge.config import REPO_ROOT


def make_chapter(tmp_path: Path, params: str, name: str = "datasets") -> subprocess.CompletedProcess[str]:
    """``make chapter`` with a stand-in virtual environment that runs this interpreter (its install
    stamp marked old-and-fine with ``-o``, so nothing is installed)."""
    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True)
    python = venv / "bin" / "python"
    python.write_text(f'#!/bin/sh\nexec "{sys.executable}" "$@"\n')
    python.chmod(0o755)
    (venv / ".installed").touch()
    return subprocess.run(
        ["make", "--no-print-directory", "-o", str(venv / ".installed"), "chapter", f"VENV={venv}", f"NAME={name}",
         f"PARAMS={params}"],
        cwd=REPO_ROOT, capture_output=True, text=True, timeout=120, env={**os.environ, "HF_HUB_OFFLINE": "1"},
    )


def errors(err: str) -> list[str]:
    return [line for line in err.splitlines() if line.startswith("error:")]


@pytest.mark.parametrize(("params", "message"), [
    ('-p "n_contexts 3', "error: PARAMS '-p \"n_contexts 3': cannot split it into words (No closing quotation)"),
    ("-p n_contexts", "expected '-p NAME VALUE' pairs, got a name and no value"),
    ("n_contexts 3", "expected '-p NAME VALUE' pairs, got 'n_contexts'"),
])
def test_a_bad_params_is_one_line_from_python(tmp_path: Path, params: str, message: str) -> None:
    done = make_chapter(tmp_path, params)
    assert done.returncode != 0 and "unexpected EOF" not in done.stderr and "Traceback" not in done.stderr, done.stderr
    assert len(errors(done.stderr)) == 1 and message in errors(done.stderr)[0], done.stderr


def test_a_quoted_value_with_spaces_arrives_as_one_value(tmp_path: Path) -> None:
    done = make_chapter(tmp_path, '-p no_such_parameter "[summeval, webnlg]"')
    # Refused by the chapter's own check (so split into exactly NAME and VALUE), before anything runs.
    assert done.returncode != 0 and len(errors(done.stderr)) == 1 and "no_such_parameter" in done.stderr, done.stderr
    assert "expected '-p NAME VALUE'" not in done.stderr


def test_the_variable_is_split_like_a_shell_line(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("NLGJUDGE_CHAPTER_PARAMS", "-p n_contexts 'three'")
    assert book_main(["chapter", "datasets", "--parameters-from", "NLGJUDGE_CHAPTER_PARAMS"]) == 2
    err = capsys.readouterr().err
    # The shell quotes are gone: the chapter's type check sees the word three.
    assert len(errors(err)) == 1 and "parameter 'n_contexts'" in err and "got 'three' (str)" in err, err


def test_a_name_with_a_quote_is_one_line_from_python(tmp_path: Path) -> None:
    done = make_chapter(tmp_path, "", name='da"tasets')
    assert done.returncode != 0 and "unexpected EOF" not in done.stderr, done.stderr
    assert len(errors(done.stderr)) == 1 and "no chapter named 'da\"tasets'" in errors(done.stderr)[0], done.stderr
