"""A judge run killed with SIGKILL mid-run resumes without losing or duplicating outputs."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest

from nlgjudge.cache import OutputCache

CHILD = textwrap.dedent(
    """
    import sys, time
    sys.path.insert(0, {tests!r})
    from engine_utils import tiny_handle
    from test_engine_judge import _requests
    from nlgjudge.cache import OutputCache
    from nlgjudge.engine import Judge

    cache = OutputCache({db!r})
    original = cache.put_many
    def slow_put_many(entries):
        written = original(entries)
        time.sleep(0.4)  # room for the parent to kill us between chunks (or inside one)
        return written
    cache.put_many = slow_put_many
    Judge(tiny_handle("gpt2"), cache=cache, progress=False, chunk_size=2).label_probs(_requests())
    """
)


@pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="needs SIGKILL")
def test_sigkill_then_resume(tmp_path):
    from engine_utils import tiny_handle
    from test_engine_judge import _requests

    from nlgjudge.engine import Judge

    db = tmp_path / "outputs.sqlite"
    tests = str(Path(__file__).parent)
    child = subprocess.Popen([sys.executable, "-c", CHILD.format(tests=tests, db=str(db))])
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            if db.exists():
                with OutputCache(db) as probe:
                    if len(probe) >= 6:
                        break
            time.sleep(0.05)
        os.kill(child.pid, signal.SIGKILL)
    finally:
        child.wait()
    requests = _requests()
    with OutputCache(db) as cache:
        done_before = len(cache)
        assert 6 <= done_before < len(requests)
        judge = Judge(tiny_handle("gpt2"), cache=cache, progress=False)
        resumed = judge.label_probs(requests)
        assert judge.last_run.from_cache == done_before
        assert judge.last_run.computed == len(requests) - done_before
        assert len(cache) == len(requests)  # every output exactly once
    fresh = Judge(tiny_handle("gpt2"), cache=False, progress=False).label_probs(requests)
    for a, b in zip(resumed, fresh):
        np.testing.assert_allclose(a.probs, b.probs, atol=1e-6)
