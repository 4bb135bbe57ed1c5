"""Every registered chapter notebook runs under nbval with its small CI parameters.

nbval executes a notebook as it is, so papermill first writes a copy with the CI parameters
injected (``prepare_only``: nothing is executed twice), then nbval runs that copy in this
environment's kernel (``--nbval-current-env``). ``--nbval-lax`` checks that every cell runs
without error; outputs are compared only where a cell asks for it (``# NBVAL_CHECK_OUTPUT``).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import papermill
import pytest

from nlgjudge.book import KERNEL_NAME
from nlgjudge.chapters import CHAPTERS, Chapter
from nlgjudge.config import DATA_DIR_ENV

pytestmark = [pytest.mark.notebook, pytest.mark.slow]


def _require_data() -> None:
    if os.environ.get(DATA_DIR_ENV):
        return
    if os.environ.get("CI") == "true":
        pytest.fail(f"{DATA_DIR_ENV} is not set: in CI the dataset mirror must be available")
    pytest.skip(f"{DATA_DIR_ENV} is not set (the chapters read the public datasets)")


@pytest.mark.parametrize("chapter", CHAPTERS, ids=lambda c: c.name)
def test_chapter_runs_under_nbval_with_ci_parameters(chapter: Chapter, tmp_path: Path) -> None:
    _require_data()
    parameterized = tmp_path / f"{chapter.name}.ipynb"
    papermill.execute_notebook(
        str(chapter.source_path()),
        str(parameterized),
        parameters=chapter.ci_parameters(),
        kernel_name=KERNEL_NAME,
        prepare_only=True,
    )
    result = subprocess.run(
        [
            sys.executable, "-m", "pytest", str(parameterized),
            "--nbval-lax", "--nbval-current-env", "--nbval-cell-timeout=600",
            "-p", "no:cacheprovider", "-q", "--no-header", "-o", "addopts=",
            f"--rootdir={tmp_path}",
        ],
        cwd=tmp_path,  # no project pytest configuration applies to the copy
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, (
        f"chapter {chapter.name!r} failed under nbval with {chapter.ci_parameters()}:\n"
        + result.stdout[-6000:] + result.stderr[-2000:]
    )
    assert " passed" in result.stdout and " failed" not in result.stdout
