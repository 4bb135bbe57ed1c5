"""Shared test settings: everything runs offline and never touches the user's output cache."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

# No test may reach a model or dataset hub; fail fast rather than wait on the network.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
# Model outputs computed by tests (and by notebooks they execute, which inherit the environment)
# go to a throw-away database; converted model weights stay in the shared user cache.
os.environ["NLGJUDGE_OUTPUT_CACHE"] = str(Path(tempfile.mkdtemp(prefix="nlgjudge-tests-")) / "outputs.sqlite")
