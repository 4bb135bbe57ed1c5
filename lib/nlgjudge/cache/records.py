"""What the database (``store``) and the released files (``release``) share: rows, study names, and the
small part of the cache that ``release`` needs.

``release`` talks to the cache only through :class:`ReleaseBackend`, so it never imports ``store``;
``store`` imports ``release`` to offer ``OutputCache.export_study``/``import_outputs``. Imports go one
way, and this module imports nothing else from the package.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

__all__ = ["Row", "ReleaseBackend", "StudyRecord", "validate_study_name"]

#: ``(key, model_id, fingerprint, operation, meta, value)`` of one request's output, as stored (meta/value
#: canonical JSON); an output shared by several requests of a study comes once per request's meta.
StudyRecord = tuple[str, str, str, str, str, str]

_STUDY_CHARACTERS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-")


def validate_study_name(study: object) -> str:
    """A study name is used as a folder name: letters, digits, '.', '_' and '-', not starting with '.'."""
    if not isinstance(study, str) or not study:
        raise ValueError(f"study must be a non-empty str, got {study!r}")
    if study.startswith(".") or not set(study) <= _STUDY_CHARACTERS:
        raise ValueError(
            f"study name {study!r} is not usable as a folder name; use letters, digits, '.', '_' and '-' "
            "(not starting with '.'), e.g. 'comparative-summeval'"
        )
    return study


@dataclass(frozen=True)
class Row:
    """A validated output row, ready for the database (JSON fields already canonical text)."""

    key: str
    model_id: str
    fingerprint: str
    operation: str
    request: str | None
    meta: str
    value: str


class ReleaseBackend(Protocol):
    """The part of :class:`nlgjudge.cache.OutputCache` that exporting and importing released files use."""

    @property
    def path(self) -> Path: ...

    def studies(self) -> dict[str, int]: ...

    def _study_records(self, study: str) -> list[StudyRecord]: ...

    def _imported_files(self) -> set[tuple[str, str]]: ...

    def _insert_released(
        self, rows: Sequence[Row], requests: Sequence[tuple[str, str, str]], files: Sequence[tuple[str, str, int]]
    ) -> int: ...
