"""Shared test settings: everything runs offline."""

from __future__ import annotations

import os

# No test may reach a model or dataset hub; fail fast rather than wait on the network.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
