"""The ``--out`` folder of ``nlgjudge rank``: checked before any work, locked while a run writes there,
and never a place where a file the run did not write is replaced.

What it guarantees: the folder is created and written to (a test file) before judging, or one
:class:`~nlgjudge.data.user_outputs.UserInputError` line names the problem and the fix; a second run
into the same folder refuses at once (``flock`` on :data:`LOCK_NAME`); a run's files are listed with
their sha256 in :data:`MANIFEST_NAME`, and any other file named like an output (a user's own
``report.md``, the input file itself) stops the run before judging unless ``force`` (never for the
input); killed runs' staging folders are removed only when they carry this program's marker and
their process is gone.
"""

from __future__ import annotations

import errno
import fcntl
import json
import os
import re
import secrets
import shutil
import stat
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path

from nlgjudge.data.user_outputs import UserInputError
from nlgjudge.safety import shown_path
from nlgjudge.config import expand_path

OUTPUT_FILES = ("leaderboard.csv", "judgments.jsonl", "win_matrix.png", "report.md")
#: Hidden folder (inside ``--out``) where a run writes its set before swapping it in.
STAGING_PREFIX = ".nlgjudge-staging-"
#: The file inside a staging folder naming the process that made it (see :func:`_clean_leftovers`).
STAGING_MARKER = ".nlgjudge-staging-owner"
#: The lock file inside ``--out`` held while a run writes there (see :func:`out_lock`).
LOCK_NAME = ".nlgjudge-rank.lock"
#: The list of the files a run wrote into ``--out``, with their sha256: only those are ever replaced.
MANIFEST_NAME = ".nlgjudge-rank-manifest.json"


def _sha256(path: Path) -> str:
    import hashlib

    digest = hashlib.sha256()
    with open(path, "rb") as stream:
        for block in iter(lambda: stream.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def written_by_rank(folder: Path) -> dict[str, set[str]]:
    """``{file name: sha256s}`` of the files earlier runs wrote into ``folder`` (its manifest), or {}."""
    try:
        data = json.loads((folder / MANIFEST_NAME).read_text(encoding="utf-8"))
        files = data.get("files", {}) if isinstance(data, dict) else {}
        return {str(k): {str(h) for h in (v if isinstance(v, list) else [v])}
                for k, v in files.items() if k in OUTPUT_FILES}
    except (OSError, ValueError, UnicodeDecodeError, AttributeError):
        return {}


def _is_our_manifest(path: Path) -> bool:
    """True for a regular file holding a manifest that :func:`_write_manifest` wrote."""
    try:
        if not path.is_file() or path.stat().st_size > 1 << 20:
            return False
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, UnicodeDecodeError):
        return False
    return isinstance(data, dict) and data.get("written_by") == "nlgjudge rank" and isinstance(data.get("files"), dict)


def _write_manifest(folder: Path, files: dict[str, set[str]], staging: Path) -> None:
    """Write the manifest through ``staging`` (a kill leaves no half file in ``folder``)."""
    manifest = {"written_by": "nlgjudge rank", "files": {name: sorted(hashes) for name, hashes in files.items()}}
    tmp = staging / MANIFEST_NAME
    tmp.write_text(json.dumps(manifest, indent=1) + "\n", encoding="utf-8")
    os.replace(tmp, folder / MANIFEST_NAME)


def foreign_files(folder: Path) -> list[str]:
    """The output names in ``folder`` held by files rank did not write (or that changed since it did)."""
    ours = written_by_rank(folder)
    foreign = []
    for name in OUTPUT_FILES:
        target = folder / name
        if target.is_file() and not target.is_symlink():
            try:
                if _sha256(target) not in ours.get(name, set()):
                    foreign.append(name)
            except OSError:
                foreign.append(name)
    return foreign


def _same_file(a: Path, b: Path) -> bool:
    try:
        return a.exists() and b.exists() and os.path.samefile(a, b)
    except OSError:
        return False


#: Less free space than this where the results go and a run is refused before any judging: the
#: judgments file of a large run, the figure and the report fit well within it.
MIN_FREE_BYTES = 64 * 2**20


def prepare_out(out: str | os.PathLike[str], option: str = "--out", *, force: bool = False,
                inputs: Sequence[str | os.PathLike[str]] | Mapping[str, str | os.PathLike[str] | None] = (),
                cache_file: str | os.PathLike[str] | None = None) -> list[Path]:
    """Check the output folder before any work: refuse an empty name, a path through a file, or an
    output file's name taken by a folder, an input file where an output goes (even with ``force``),
    ``inputs``: the files the run reads (paths, or what each is -> its path: "the prompt file" -> ...),
    never replaced; the output cache (``cache_file``) where an output goes (even with ``force``: a run would replace the
    database it is writing its judgments to), and a file there that rank did not write (its manifest, :data:`MANIFEST_NAME`, lists what it
    wrote; ``force`` replaces such files); create it, and write and remove a test file there (writing
    is the only test that holds for every user: root ignores permission bits, an immutable folder or
    ``/proc`` refuses root too), and refuse a disk with less than :data:`MIN_FREE_BYTES` free. Returns the folders it created, for :func:`_remove_created` to take
    back if the run fails."""
    # every file the run reads (the input, a prompt file): never replaced, not even with force
    read_files = ([(what, path) for what, path in inputs.items() if path is not None] if isinstance(inputs, Mapping)
                  else [("the input file", path) for path in inputs])
    if not str(os.fspath(out)).strip():  # Path("") would be the current folder
        raise UserInputError(f"{option} {os.fspath(out)!r} is empty; pass the folder to write the results to, "
                             f"e.g. {option} ranking")
    folder = expand_path(out)
    try:
        for part in [folder, *folder.parents]:
            if part.exists() and not part.is_dir():
                where = "exists and is not a folder" if part == folder else f"goes through {part}, which is a file, not a folder"
                raise UserInputError(f"{option} {folder}: {where}; pass {option} a folder (it is created if missing)")
        for name in OUTPUT_FILES:  # found now, not when the finished set is moved in
            target = folder / name
            if target.is_symlink() or (target.exists() and not target.is_file()):
                raise UserInputError(f"{option} {folder}: {name} there is not a regular file (a folder, link, pipe or device); move it away "
                                     f"or pass {option} another folder (the run writes its own {name})")
            if cache_file is not None and (_same_file(target, expand_path(cache_file))
                                           or os.path.realpath(target) == os.path.realpath(expand_path(cache_file))):
                raise UserInputError(f"{option} {folder}: {name} there is the output cache the judgments are stored in "
                                     f"({shown_path(cache_file)}), which a run never replaces; set NLGJUDGE_OUTPUT_CACHE to a "
                                     f"file outside {folder}, or pass {option} another folder")
            for what, given in read_files:
                if _same_file(target, expand_path(given)):
                    raise UserInputError(f"{option} {folder}: {name} there is {what} {os.fspath(given)}, which a "
                                         f"run never replaces, not even with --force; pass {option} another folder")
        if cache_file is not None:  # the run's own bookkeeping files are no place for the cache either
            cache = os.path.realpath(expand_path(cache_file))
            for name in (LOCK_NAME, MANIFEST_NAME):
                if cache == os.path.realpath(folder / name):
                    raise UserInputError(f"{option} {folder}: the output cache ({shown_path(cache_file)}) is named like "
                                         f"the run's own {'lock' if name == LOCK_NAME else 'list of its files'} there, "
                                         f"{name}; set NLGJUDGE_OUTPUT_CACHE to a file outside {folder}")
        manifest = folder / MANIFEST_NAME
        if manifest.is_symlink() or (manifest.exists() and not _is_our_manifest(manifest)):
            # rank's own list of its files: a file by that name that rank did not write is a user's,
            # and is never replaced (not even with --force, which is about files named like the outputs)
            raise UserInputError(f"{option} {folder}: {MANIFEST_NAME} there is not a list written by nlgjudge rank "
                                 f"(a {'link' if manifest.is_symlink() else 'file'} of someone else's); move it away "
                                 f"or pass {option} another folder")
        if folder.is_dir():
            foreign = foreign_files(folder)
            if foreign and not force:
                raise UserInputError(
                    f"{option} {folder}: {', '.join(foreign)} there {'was' if len(foreign) == 1 else 'were'} not written "
                    f"by nlgjudge rank (or changed since); pass {option} another folder, or --force to replace "
                    f"{'it' if len(foreign) == 1 else 'them'}")
        missing = [part for part in [folder, *folder.parents] if not part.exists()]
    except OSError as error:  # a name too long for the file system, ...
        raise UserInputError(f"{option} {os.fspath(out)}: cannot use that path ({_reason(error)}); "
                             f"pass {option} a folder you can write to") from None
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        _remove_created(missing)
        raise UserInputError(f"{option} {folder}: cannot create the folder ({_reason(error)}); "
                             f"pass {option} a folder you can write to") from None
    test = folder / f".nlgjudge-write-test-{os.getpid()}-{secrets.token_hex(4)}"
    try:
        with open(test, "x", encoding="utf-8") as stream:
            stream.write("test")
        test.unlink()
    except OSError as error:
        try:  # made but not written (a full disk): the test file is ours to take back
            test.unlink(missing_ok=True)
        except OSError:
            pass
        _remove_created(missing)
        raise UserInputError(f"{option} {folder}: cannot write there ({_reason(error)}); "
                             f"pass {option} a folder you can write to") from None
    try:
        usage = shutil.disk_usage(folder)
        free = usage.free if usage.total > 0 else None  # /proc and its kind report no size at all
    except OSError:
        free = None
    if free is not None and free < MIN_FREE_BYTES:
        _remove_created(missing)
        raise UserInputError(f"{option} {folder}: the disk there has {free / 2**20:.1f} MiB free, less than the "
                             f"{MIN_FREE_BYTES / 2**20:.0f} MiB a run may write (judgments, figure, report); free some "
                             f"space or pass {option} a folder on another disk")
    return missing


def _reason(error: OSError) -> str:
    name = error.filename
    if error.errno == errno.EEXIST and name and os.path.islink(name) and not os.path.exists(name):
        try:
            os.path.realpath(name, strict=True)
        except OSError as resolving:
            if resolving.errno == errno.ELOOP:  # the links lead back to themselves: no folder at the end of them
                return (f"it is a symbolic-link loop ({shown_path(name)} -> {shown_path(os.readlink(name))} -> ... leads "
                        "back to itself)")
        return f"it is a link to {shown_path(os.readlink(name))}, which does not exist"  # not "File exists"
    return error.strerror or type(error).__name__


def _remove_created(folders: list[Path]) -> None:
    """Remove the folders :func:`prepare_out` created, deepest first, if they are still empty."""
    for folder in folders:
        try:
            folder.rmdir()
        except OSError:
            pass


#: Output folders this process holds the lock of: resolved path -> (descriptor, holders).
_HELD_LOCKS: dict[Path, list[int]] = {}


@contextmanager
def out_lock(folder: str | os.PathLike[str], option: str = "--out") -> Iterator[None]:
    """Hold ``folder``'s lock (``flock`` on :data:`LOCK_NAME` inside it) for the block: a second run
    into the same folder refuses at once with one :class:`UserInputError` line instead of both
    swapping sets in and removing each other's staging folders. Re-entrant within a process (the
    command line holds it from the checks to the last file; :func:`rank_outputs` takes it again).
    The lock file is removed on release; a run that took the lock of a file removed meanwhile
    takes it again on the new file, so two runs never hold two different files."""
    path = expand_path(folder).resolve() / LOCK_NAME
    held = _HELD_LOCKS.get(path)
    if held is not None:
        held[1] += 1
        try:
            yield
        finally:
            held[1] -= 1
        return
    not_ours = (f"{option} {folder}: it holds a {LOCK_NAME} that nlgjudge rank did not write (a link, a file "
                "with another name elsewhere, or a file without a run's process id); this tool never writes through "
                f"it: move or rename it, or pass {option} another folder")
    while True:
        created = True
        try:  # never through a link, and never into a file an earlier run of ours did not leave
            fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
        except FileExistsError:
            created = False
            try:
                fd = os.open(path, os.O_RDWR | os.O_NOFOLLOW)
            except FileNotFoundError:
                continue  # its holder removed it meanwhile: create it
            except OSError as error:
                if error.errno == errno.ELOOP:
                    raise UserInputError(not_ours) from None
                if error.errno == errno.EISDIR:  # a folder of the user's under the lock's name
                    raise UserInputError(f"{option} {folder}: {LOCK_NAME} there is a folder, not this tool's lock file; "
                                         f"move it away, or pass {option} another folder") from None
                raise UserInputError(f"{option} {folder}: cannot open the lock file {LOCK_NAME} there "
                                     f"({_reason(error)}); pass {option} a folder you can write to") from None
        except OSError as error:
            raise UserInputError(f"{option} {folder}: cannot create the lock file {LOCK_NAME} there "
                                 f"({_reason(error)}); pass {option} a folder you can write to") from None
        status = os.fstat(fd)
        if not stat.S_ISREG(status.st_mode) or status.st_nlink > 1:  # a hard link's other name is someone's file
            os.close(fd)
            raise UserInputError(not_ours)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            raise UserInputError(f"{option} {folder}: another nlgjudge rank is writing to this folder now; wait for it "
                                 f"to finish or pass {option} another folder") from None
        try:
            same = os.stat(path).st_ino == os.fstat(fd).st_ino
        except FileNotFoundError:
            same = False
        if same:
            # a lock file left by a run that ended without removing it holds that run's process id
            if not created and not re.fullmatch(rb"\d+\n?", os.pread(fd, 64, 0)):
                os.close(fd)
                raise UserInputError(not_ours)
            break
        os.close(fd)  # the holder before us removed the file after we opened it: lock the new one
    _HELD_LOCKS[path] = [fd, 1]
    try:
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())
        yield
    finally:
        _HELD_LOCKS[path][1] -= 1
        if not _HELD_LOCKS[path][1]:
            del _HELD_LOCKS[path]
            try:
                path.unlink()  # before unlocking: whoever waits finds the file gone and starts again
            except OSError:
                pass
            os.close(fd)


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process: alive
        return True
    return True


def _clean_leftovers(folder: Path) -> None:
    """Remove the staging folders of killed runs from ``folder``: only a folder named
    ``.nlgjudge-staging-<pid>-<token>`` that holds :data:`STAGING_MARKER` naming that pid, whose
    process is gone. A user's own files and folders, whatever their names, are never touched, nor
    the staging folder of a run still alive."""
    for entry in folder.iterdir():
        name = entry.name
        if not name.startswith(STAGING_PREFIX) or entry.is_symlink() or not entry.is_dir():
            continue
        pid_text = name[len(STAGING_PREFIX):].split("-", 1)[0]
        try:
            marker = (entry / STAGING_MARKER).read_text(encoding="utf-8").strip()
        except (OSError, UnicodeDecodeError):
            continue  # no marker: not ours
        if not pid_text.isdigit() or marker != pid_text or _pid_alive(int(pid_text)):
            continue
        shutil.rmtree(entry, ignore_errors=True)


def _make_staging(folder: Path) -> Path:
    """This run's staging folder: a name no user picks by chance (pid and a random token), with the
    marker that lets a later run tell it from a user's folder once this process is gone."""
    while True:
        staging = folder / f"{STAGING_PREFIX}{os.getpid()}-{secrets.token_hex(8)}"
        try:
            staging.mkdir(mode=0o700)
        except FileExistsError:
            continue
        try:
            (staging / STAGING_MARKER).write_text(str(os.getpid()), encoding="utf-8")
        except BaseException:  # a full disk: the folder without its marker would be no one's to remove
            shutil.rmtree(staging, ignore_errors=True)
            raise
        return staging
