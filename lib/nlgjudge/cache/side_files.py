"""SQLite's side files of the output cache (``<cache>-wal``, ``-shm``, ``-journal``): told from a user's files.

SQLite opens, replays, rewrites or deletes these files on its own whenever it opens the database, so a
user's file that only happens to carry one of these names would be changed or lost without a word. A
side file is taken as SQLite's own only when the database exists and the side file is empty or starts
as SQLite writes it; anything else stops the cache before any connection is opened.
"""

from __future__ import annotations

import struct
from pathlib import Path

#: The first bytes SQLite writes in each side file (a write-ahead log's two magic numbers, the rollback
#: journal's header, and the shared-memory index's version number, 3007000, in either byte order).
#: A user's text file starts with none of them.
_SIDE_MAGIC = {
    "-wal": (bytes.fromhex("377f0682"), bytes.fromhex("377f0683")),
    "-journal": (bytes.fromhex("d9d505f920a163d7"), bytes(8)),  # a journal SQLite has finished with is zeroed
    # the index is zero-filled while another process sets it up: zeros are SQLite's too
    "-shm": (struct.pack("<I", 3007000), struct.pack(">I", 3007000), bytes(4)),
}


def foreign_side_file(database: Path) -> str | None:
    """Why a file beside ``database`` with one of SQLite's side-file names is not SQLite's own side file
    of it (so that opening the database would change or remove someone's file), or None."""
    for suffix, magics in _SIDE_MAGIC.items():
        side = Path(f"{database}{suffix}")
        if side.is_symlink() or (side.exists() and not side.is_file()):
            return f"{side.name} beside it is {'a link' if side.is_symlink() else 'not a file'}, not SQLite's own side file"
        try:  # another process's last connection may remove its side files at any moment: gone is fine
            if side.stat().st_size == 0:
                continue  # an empty leftover SQLite reuses: nothing of anyone's to lose
            with open(side, "rb") as stream:
                head = stream.read(max(len(m) for m in magics))
        except FileNotFoundError:
            continue
        if not _database_exists(database):  # asked after the side file: a database made meanwhile is seen
            return (f"{side.name} beside it exists while the cache itself does not, so it is not SQLite's side file of "
                    "this cache (SQLite would delete or replay it)")
        if head and not any(head.startswith(m) for m in magics):
            return f"{side.name} beside it does not start as SQLite writes it, so it is someone else's file (SQLite would overwrite or delete it)"
    return None


def _database_exists(database: Path) -> bool:
    try:
        return database.is_file() and database.stat().st_size > 0
    except FileNotFoundError:
        return False
