"""Claims on requests being computed, shared by every process using one cache file.

Two runs sharing a cache (two ``nlgjudge rank`` of the same outputs, a study and a chapter) would
otherwise both compute every request neither has stored yet. Before computing a step of requests a
judge claims their keys here: an advisory ``flock`` on one empty file per key in the folder
``<cache file>.claims`` beside the cache. A key another process holds is left to it and read from
the cache once that process lets go (its claim is released when its step is stored, or when it
dies: the kernel drops a dead process's locks, so a killed run blocks no one).

A claim that cannot be made (a read-only folder, a cache that is not a file) is not an error: the
step is computed unclaimed, as before claims existed; claims only save work, they never decide an
output (each output is stored under its own key, and the same request gives the same output).
"""

from __future__ import annotations

import contextlib
import fcntl
import os
from collections.abc import Iterator, Sequence
from pathlib import Path

from nlgjudge.cache.keys import is_valid_key

#: The suffix of the claims folder beside the cache file (``outputs.sqlite.claims``).
CLAIMS_SUFFIX = ".claims"


def claims_folder(cache: object) -> Path | None:
    """The claims folder of ``cache`` (an :class:`~nlgjudge.cache.OutputCache`), or ``None`` for a
    cache without a file (claims are then not made)."""
    path = getattr(cache, "path", None)
    if not isinstance(path, (str, os.PathLike)) or str(path) in ("", ":memory:"):
        return None
    path = Path(path)
    return path.with_name(path.name + CLAIMS_SUFFIX)


def _lock_one(folder: Path, key: str, wait: bool) -> int | None:
    """A descriptor holding ``key``'s claim, or ``None`` when another process holds it (``wait``
    False) or it cannot be made here."""
    path = folder / key
    for _ in range(5):  # the file may be removed between our open and our lock by its last holder
        try:
            folder.mkdir(exist_ok=True)
            fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError:
            return None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | (0 if wait else fcntl.LOCK_NB))
        except OSError:  # BlockingIOError: held by another process now
            os.close(fd)
            return None
        try:
            same = os.fstat(fd).st_ino == os.stat(path).st_ino
        except FileNotFoundError:
            same = False
        if same:
            return fd
        os.close(fd)  # its holder removed the file after we opened it: claim the new one
    return None


def _release(folder: Path, held: dict[str, int]) -> None:
    for key, fd in held.items():
        with contextlib.suppress(OSError):
            os.unlink(folder / key)  # before unlocking: a waiter finds its file gone and claims afresh
        os.close(fd)
    with contextlib.suppress(OSError):
        folder.rmdir()  # only when empty: no claims folder is left behind by a finished run


@contextlib.contextmanager
def claim(cache: object, keys: Sequence[str], wait: bool = False) -> Iterator[set[str]]:
    """Claim ``keys`` for the block; yields the keys this process may compute. Without ``wait`` a
    key held by another process is left out at once; with it, the claim waits for that process to
    let go (and the caller reads the cache again: the output is usually there by then). A key that
    cannot be claimed for another reason (no claims folder, a read-only one) is yielded: computed
    unclaimed."""
    folder = claims_folder(cache)
    if folder is None:
        yield set(keys)
        return
    held: dict[str, int] = {}
    mine: set[str] = set()
    try:
        for key in dict.fromkeys(keys):
            if not is_valid_key(key):  # never a path of the caller's choosing
                mine.add(key)
                continue
            fd = _lock_one(folder, key, wait)
            if fd is not None:
                held[key] = fd
                mine.add(key)
            elif not _held_elsewhere(folder, key):
                mine.add(key)  # not claimable here at all (e.g. a read-only folder): computed unclaimed
        yield mine
    finally:
        _release(folder, held)


def _held_elsewhere(folder: Path, key: str) -> bool:
    """Whether ``key``'s claim file exists and is locked by another process now."""
    try:
        fd = os.open(folder / key, os.O_RDONLY)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except OSError:
        return True
    finally:
        os.close(fd)
    return False
