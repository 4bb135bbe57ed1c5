"""Persistent, content-addressed cache of every model output, and the released-output files.

>>> from nlgjudge.cache import OutputCache, CacheEntry, request_key   # doctest: +SKIP
>>> cache = OutputCache()                     # config.cache_dir() / "outputs.sqlite"; opened on first use
>>> entry = CacheEntry.create("m", "fp", "label_probs", {"prompt": "...", "labels": ["A", "B"]},
...                           value={"probs": [0.7, 0.3]}, study="demo", meta={"context_id": "c1"})
>>> cache.put_many([entry]); cache.get_many([entry.key])
>>> cache.export_study("demo")                # data/outputs/demo/*.jsonl + MANIFEST.json
>>> cache.import_outputs("data/outputs/demo")

Command line: ``python -m nlgjudge.cache export STUDY | import PATH | stats`` (``--db`` picks the file).
"""

from nlgjudge.cache.canonical import NotJSONableError, canonical_json
from nlgjudge.cache.keys import is_valid_key, request_key
from nlgjudge.cache.release import OutputsFormatError, StaleExportError, read_released_file
from nlgjudge.cache.stats import CacheStats, OperationCounts
from nlgjudge.cache.store import (
    CacheBusyError,
    CacheEntry,
    CacheError,
    ImportConflictWarning,
    OutputCache,
    validate_study_name,
)

__all__ = [
    "OutputCache",
    "CacheEntry",
    "request_key",
    "is_valid_key",
    "canonical_json",
    "CacheStats",
    "OperationCounts",
    "read_released_file",
    "validate_study_name",
    "NotJSONableError",
    "OutputsFormatError",
    "StaleExportError",
    "CacheError",
    "CacheBusyError",
    "ImportConflictWarning",
]
