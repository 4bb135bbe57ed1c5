"""The common load path: locate, parse, validate, cache, subset.

Each dataset module declares a :class:`DatasetDefinition` (metadata, where the files live,
expected counts, and a parser); :func:`load_definition` runs the same steps for all of them.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from dataclasses import dataclass

import pandas as pd

from nlgjudge.data.base import DatasetInfo, ExpectedShape, JudgeDataset, copy_frame, validate_frame
from nlgjudge.data.sources import DatasetLocation, Located, file_signature, locate

#: A parser turns located files (or online rows) into a tidy frame with an origin column.
#: It receives the data directory argument too, for datasets joined with another dataset.
Parser = Callable[[Located, "str | os.PathLike[str] | None"], pd.DataFrame]


@dataclass(frozen=True)
class DatasetDefinition:
    """Everything the common load path needs to know about one dataset."""

    info: DatasetInfo
    location: DatasetLocation
    expected: ExpectedShape
    parse: Parser
    #: False for datasets joined with files outside their own folder (the cache key would not
    #: see those files change).
    cacheable: bool = True


# Parsed, validated frames of local files, keyed by (dataset, file paths and content hashes). Parsing the
# mirror takes a fraction of a second per dataset, but notebooks and tests load the same
# dataset many times. Online copies are not cached here (`datasets` keeps its own disk cache).
_FRAME_CACHE: dict[tuple[object, ...], pd.DataFrame] = {}
_CACHE_LOCK = threading.Lock()


def clear_cache() -> None:
    """Forget every parsed frame (the next load re-reads the files)."""
    with _CACHE_LOCK:
        _FRAME_CACHE.clear()


def load_frame(definition: DatasetDefinition, data_dir: str | os.PathLike[str] | None) -> pd.DataFrame:
    """The validated tidy frame of a dataset (a fresh copy on every call)."""
    located = locate(definition.location, data_dir)
    key: tuple[object, ...] | None = None
    if located.paths is not None and definition.cacheable:
        key = (definition.info.name, file_signature(located.paths))
        with _CACHE_LOCK:
            cached = _FRAME_CACHE.get(key)
        if cached is not None:
            return copy_frame(cached)
    frame = validate_frame(
        definition.parse(located, data_dir), definition.info, definition.expected, read_from=located.describe()
    )
    if key is not None:
        with _CACHE_LOCK:
            _FRAME_CACHE[key] = frame
    return copy_frame(frame)


def load_definition(
    definition: DatasetDefinition,
    data_dir: str | os.PathLike[str] | None = None,
    n_contexts: int | None = None,
    seed: int = 0,
) -> JudgeDataset:
    """Load a dataset, optionally keeping a seeded subset of ``n_contexts`` contexts."""
    dataset = JudgeDataset(load_frame(definition, data_dir), definition.info)
    if n_contexts is not None:
        dataset = dataset.select_contexts(n_contexts, seed=seed)
    return dataset

