"""`nlgjudge cache` against hostile use (issue 48): a folder given as the cache is called a folder."""

from __future__ import annotations

from pathlib import Path

import pytest

from nlgjudge.cache.__main__ import main


@pytest.mark.parametrize("command", [["check"], ["stats"], ["export", "demo"]])
def test_a_folder_as_the_cache_is_called_a_folder(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                  command: list[str]) -> None:
    status = main([*command, "--db", str(tmp_path)])
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if line.strip()]
    assert status == 2 and len(lines) == 1 and "Traceback" not in err, err
    assert f"{tmp_path}: it is a folder, not a cache file" in lines[0] and "does not exist" not in lines[0], lines[0]
    assert list(tmp_path.iterdir()) == []  # nothing created in it
