"""The errors and warnings of the cache package, in a leaf module so that every other module can raise them.

Nothing here imports another module of :mod:`nlgjudge.cache`; ``store`` and ``release`` both import it,
which keeps the package free of import circles.
"""

from __future__ import annotations

__all__ = [
    "CacheError",
    "CacheBusyError",
    "CacheDamagedError",
    "ImportConflictWarning",
    "OutputsFormatError",
    "StaleExportError",
]


class CacheError(RuntimeError):
    """The cache database cannot be used (not a database, not ours, newer schema, damaged, WAL unsupported...)."""


class CacheBusyError(CacheError):
    """Another process held the database lock for longer than the busy timeout."""


class CacheDamagedError(CacheError):
    """SQLite reports the database file as damaged (malformed pages, not a database, I/O errors)."""


class ImportConflictWarning(UserWarning):
    """Imported records whose key is already cached with a different value (the cached value is kept)."""


class OutputsFormatError(ValueError):
    """A released outputs file (or its manifest) is malformed, or unverifiable; the message names the file."""


class StaleExportError(RuntimeError):
    """Exporting would overwrite released outputs that are not in the cache."""
