"""Dataset loaders over a configurable data directory.

Every dataset comes back in the same tidy shape (see :class:`JudgeDataset`): one row per
candidate with ``context_id, source, references, candidate_id, system, text`` and one float
column per human-scored aspect, plus :class:`DatasetInfo` metadata (aspect abbreviations as in
the papers, the noun used in prompts, score ranges, citation).

Files are read from ``<data_dir>/<folder>/...`` where ``data_dir`` is the argument or
``$NLGJUDGE_DATA_DIR``; a dataset that is not there is fetched from its public online copy when
one exists, and otherwise :class:`DataNotFoundError` explains where it looked and how to fix it.

>>> from nlgjudge.data import load_dataset
>>> ds = load_dataset("summeval", n_contexts=10, seed=0)   # doctest: +SKIP
"""

from __future__ import annotations

import os

from nlgjudge.data import contest, podcast, qags, rose, summeval, sumllm, topicalchat, webnlg
from nlgjudge.data.base import (
    DataNotFoundError,
    DatasetInfo,
    DataValidationError,
    JudgeDataset,
    select_context_ids,
)
from nlgjudge.data.loading import DatasetDefinition, clear_cache, load_definition
from nlgjudge.data.sources import DatasetLocation

__all__ = [
    "DataNotFoundError",
    "DataValidationError",
    "DatasetInfo",
    "JudgeDataset",
    "clear_cache",
    "dataset_info",
    "dataset_locations",
    "list_datasets",
    "load_dataset",
    "select_context_ids",
]

# Registry in the order the book presents the datasets.
_DEFINITIONS: dict[str, DatasetDefinition] = {
    definition.info.name: definition
    for definition in (
        summeval.DEFINITION,
        topicalchat.DEFINITION,
        webnlg.DEFINITION,
        rose.DEFINITION,
        rose.LLM_DEFINITION,
        sumllm.DEFINITION,
        qags.CNNDM_DEFINITION,
        qags.XSUM_DEFINITION,
        contest.DEFINITION,
        podcast.DEFINITION,
    )
}


def list_datasets() -> list[str]:
    """Names accepted by :func:`load_dataset`."""
    return list(_DEFINITIONS)


def _definition(name: str) -> DatasetDefinition:
    try:
        return _DEFINITIONS[name]
    except KeyError:
        raise ValueError(f"unknown dataset {name!r}; available: {', '.join(_DEFINITIONS)}") from None


def dataset_locations() -> list[DatasetLocation]:
    """Where each dataset is read from, in the book's order: its folder and files in the data
    directory, its online copy (if any) and where its files can be obtained by hand. Reads no file."""
    return [definition.location for definition in _DEFINITIONS.values()]


def dataset_info(name: str) -> DatasetInfo:
    """Metadata of a dataset, without reading any file."""
    return _definition(name).info


def load_dataset(
    name: str,
    data_dir: str | os.PathLike[str] | None = None,
    n_contexts: int | None = None,
    seed: int = 0,
) -> JudgeDataset:
    """Load a dataset in the tidy shape.

    ``data_dir`` overrides ``$NLGJUDGE_DATA_DIR``. ``n_contexts`` keeps a deterministic random
    subset of that many contexts (``numpy.random.default_rng(seed)``), in their original order.
    Raises :class:`DataNotFoundError` when the dataset cannot be found anywhere and
    :class:`DataValidationError` when its files are malformed.
    """
    return load_definition(_definition(name), data_dir=data_dir, n_contexts=n_contexts, seed=seed)
