"""Persistent, content-addressed cache of every model output, and the released-output files.

>>> from nlgjudge.cache import OutputCache, CacheEntry, request_key   # doctest: +SKIP
>>> cache = OutputCache()                     # config.cache_dir() / "outputs.sqlite"; opened on first use
>>> entry = CacheEntry.create("m", "fp", "label_probs", {"prompt": "...", "labels": ["A", "B"]},
...                           value={"probs": [0.7, 0.3]}, study="demo", meta={"context_id": "c1"})
>>> cache.put_many([entry]); cache.get_many([entry.key])
>>> cache.export_study("demo")                # data/outputs/demo/*.jsonl + MANIFEST.json, swapped in as one set
>>> cache.import_outputs("data/outputs/demo")  # files must match their MANIFEST.json
>>> cache.check()                             # [] when SQLite finds nothing wrong with the file

Command line: ``python -m nlgjudge.cache export STUDY | import PATH | stats | check`` (``--db`` picks the file).

Modules import one way only: ``errors``, ``records``, ``canonical``, ``keys`` are leaves; ``release``
uses them; ``store`` uses ``release``; this file and ``__main__`` use everything.
"""

from nlgjudge.cache.canonical import NotJSONableError, canonical_json
from nlgjudge.cache.errors import (
    CacheBusyError,
    CacheDamagedError,
    CacheError,
    ImportConflictWarning,
    OutputsFormatError,
    StaleExportError,
)
from nlgjudge.cache.keys import is_valid_key, request_key
from nlgjudge.cache.records import validate_study_name
from nlgjudge.cache.release import read_released_file, recover_interrupted_exports
from nlgjudge.cache.stats import CacheStats, OperationCounts
from nlgjudge.cache.store import CacheEntry, OutputCache

__all__ = [
    "OutputCache",
    "CacheEntry",
    "request_key",
    "is_valid_key",
    "canonical_json",
    "CacheStats",
    "OperationCounts",
    "read_released_file",
    "recover_interrupted_exports",
    "validate_study_name",
    "NotJSONableError",
    "OutputsFormatError",
    "StaleExportError",
    "CacheError",
    "CacheBusyError",
    "CacheDamagedError",
    "ImportConflictWarning",
]
