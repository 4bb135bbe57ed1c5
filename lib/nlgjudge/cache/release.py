"""Released outputs: deterministic, diff-friendly JSONL files that are committed with the project.

Layout of one study folder (default ``config.outputs_dir() / <study>``)::

    <model-slug>__<operation-slug>.jsonl   one file per model x operation
    MANIFEST.json                          study name, record count and sha256 of every file

Each line of a JSONL file is one output, as canonical JSON (sorted keys, no spaces, floats in Python's
shortest round-trip form, so reading them back gives the very same floats)::

    {"fingerprint":"...","key":"<sha256>","meta":{...},"model_id":"...","operation":"...","value":...}

One line per request: two requests with the same inputs (two contestants whose summaries are
identical, two studies asking the same prompt) share one output and one key, and each gets its own
line, the same key and value with its own meta, so every request a study makes can be found by its
meta. A key never repeats with the same meta, nor with another value. Lines are sorted by key, then
meta, so re-exporting unchanged data gives byte-identical files and new outputs show up as added
lines in a diff. The full request (prompt text) stays in the local cache only: the key already
commits to it, and the files stay small. Importing stores each output once and every line's meta as
a request of the study.

Why a study folder is written as one set: the manifest vouches for the files beside it, so a folder
whose files and manifest come from two different exports is unusable. An export therefore writes the
complete new folder beside the target (``.<study>.tmp-XXXX``) and swaps it in with two renames
(old -> ``.<study>.old-XXXX``, new -> target); a run killed at any moment leaves the old folder or the
new one, and the next export or import restores or removes what is left over
(:func:`recover_interrupted_exports`). Swaps and reads take a lock on the parent folder (``flock`` on
the folder itself, so no lock file appears in the repository), so a reader never sees half a swap.
An export that would change nothing writes nothing.

Nothing here imports :mod:`nlgjudge.cache.store`; the cache is reached through
:class:`~nlgjudge.cache.records.ReleaseBackend`.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import shutil
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from nlgjudge.cache.canonical import canonical_json, canonical_json_of_parsed, loads_strict
from nlgjudge.cache.errors import OutputsFormatError, StaleExportError
from nlgjudge.cache.keys import is_valid_key
from nlgjudge.cache.records import ReleaseBackend, Row, StudyRecord, validate_study_name

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows: swaps are still atomic, only not serialised
    fcntl = None  # type: ignore[assignment]

__all__ = [
    "OutputsFormatError",
    "StaleExportError",
    "export_study",
    "import_outputs",
    "read_released_file",
    "recover_interrupted_exports",
    "output_file_name",
    "MANIFEST_NAME",
    "RECORD_FIELDS",
    "FORMAT",
]

MANIFEST_NAME = "MANIFEST.json"
FORMAT = "nlgjudge-outputs/1"
#: The fields of one released record, exactly.
RECORD_FIELDS = frozenset({"fingerprint", "key", "meta", "model_id", "operation", "value"})

# ``.<folder>.tmp-XXXXXXXX`` (a new folder being written) and ``.<folder>.old-XXXXXXXX`` (the folder it
# replaces); the tag is the 8 characters ``tempfile.mkdtemp`` chose, so no hand-made folder matches by chance.
_LEFTOVER = re.compile(r"^\.(?P<name>.+)\.(?P<kind>tmp|old)-(?P<tag>[a-z0-9_]{8})$")


# -- file names ------------------------------------------------------------------------------------


def _slug(text: str) -> str:
    slug = re.sub(r"[^a-z0-9._-]+", "-", text.lower()).strip("-.")
    return slug or "x"


def output_file_name(model_id: str, operation: str) -> str:
    """``google/flan-t5-xl`` + ``label_probs`` -> ``google-flan-t5-xl__label_probs.jsonl``."""
    return f"{_slug(model_id)}__{_slug(operation)}.jsonl"


def _file_names(pairs: set[tuple[str, str]]) -> dict[tuple[str, str], str]:
    """File name for every (model_id, operation); pairs whose slugs collide get a short hash suffix."""
    by_name: dict[str, list[tuple[str, str]]] = {}
    for pair in sorted(pairs):
        by_name.setdefault(output_file_name(*pair), []).append(pair)
    names: dict[tuple[str, str], str] = {}
    for name, members in by_name.items():
        for model_id, operation in members:
            if len(members) == 1:
                names[(model_id, operation)] = name
            else:
                digest = hashlib.sha256(f"{model_id}\0{operation}".encode()).hexdigest()[:8]
                names[(model_id, operation)] = f"{name[: -len('.jsonl')]}-{digest}.jsonl"
    return names


# -- the folder lock and leftovers of interrupted exports --------------------------------------------


@contextlib.contextmanager
def _folder_lock(folder: Path, *, exclusive: bool) -> Iterator[None]:
    """Hold ``flock`` on ``folder`` itself: exclusive while study folders in it are swapped, shared while read.

    Best effort: where the platform or file system has no ``flock``, the swap is still atomic per
    rename, and a reader that straddles it gets a clear manifest-mismatch error instead of bad data.
    """
    descriptor = None
    if fcntl is not None:
        try:
            descriptor = os.open(folder, os.O_RDONLY)
            fcntl.flock(descriptor, fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH)
        except OSError:
            if descriptor is not None:
                os.close(descriptor)
            descriptor = None
    try:
        yield
    finally:
        if descriptor is not None:
            os.close(descriptor)  # releases the lock


def _leftovers(parent: Path, name: str | None = None) -> dict[str, list[Path]]:
    """Leftover ``.tmp-``/``.old-`` folders in ``parent`` by the name of the folder they belong to."""
    found: dict[str, list[Path]] = {}
    try:
        entries = sorted(parent.iterdir())
    except (FileNotFoundError, NotADirectoryError):
        return found
    for entry in entries:
        match = _LEFTOVER.match(entry.name)
        if match and entry.is_dir() and not entry.is_symlink() and name in (None, match["name"]):
            found.setdefault(match["name"], []).append(entry)
    return found


def _recover(parent: Path, name: str | None = None) -> None:
    """Put back or remove what interrupted exports left in ``parent`` (the caller holds the exclusive lock).

    A missing folder with an ``.old-`` copy was being swapped: the old folder goes back (it is complete;
    the export is simply redone later). Every other leftover is superseded or was never finished.
    """
    for target_name, paths in _leftovers(parent, name).items():
        target = parent / target_name
        olds = sorted((path for path in paths if ".old-" in path.name), key=lambda p: (p.stat().st_mtime_ns, p.name))
        if olds and not os.path.lexists(target):
            os.rename(olds[-1], target)
            _fsync_folder(parent)
        for path in paths:
            if path.exists():
                shutil.rmtree(path)


def recover_interrupted_exports(path: str | os.PathLike[str]) -> None:
    """Finish what an export killed mid-swap left around ``path`` (a study folder, a file in one, or a
    folder of study folders): restore the previous folder if the new one never arrived, delete the rest.

    Cheap when there is nothing to do (one directory listing, no lock, no write).
    """
    root = Path(path)
    if root.is_file():
        places = [(root.parent.parent, root.parent.name)]
    elif root.is_dir():
        places = [(root.parent, root.name), (root, None)]
    else:
        places = [(root.parent, root.name)]
    for parent, name in places:
        if _leftovers(parent, name):
            with _folder_lock(parent, exclusive=True):
                _recover(parent, name)


# -- writing ---------------------------------------------------------------------------------------


def _fsync_folder(folder: Path) -> None:
    """Make renames inside ``folder`` durable (not every file system can; then the rename is still atomic)."""
    try:
        descriptor = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(descriptor)
    except OSError:
        pass
    finally:
        os.close(descriptor)


def _write_new(path: Path, content: bytes) -> None:
    with open(path, "xb") as stream:
        stream.write(content)
        stream.flush()
        os.fsync(stream.fileno())
    os.chmod(path, 0o644)  # released files are meant to be read by all


def _record_line(key: str, model_id: str, fingerprint: str, operation: str, meta: str, value: str) -> str:
    # meta and value are canonical JSON text already; splicing keeps them byte-for-byte, keys sorted.
    head = canonical_json({"fingerprint": fingerprint, "key": key})[:-1]
    tail = canonical_json({"model_id": model_id, "operation": operation})[1:-1]
    return f'{head},"meta":{meta},{tail},"value":{value}}}\n'


def _render(records: list[StudyRecord], study: str) -> dict[str, bytes]:
    """The complete content of a study folder: JSONL files sorted by name, then the manifest."""
    names = _file_names({(model_id, operation) for _, model_id, _, operation, _, _ in records})
    contents: dict[str, list[str]] = {name: [] for name in sorted(set(names.values()))}
    for key, model_id, fingerprint, operation, meta, value in records:  # already sorted by key
        contents[names[(model_id, operation)]].append(_record_line(key, model_id, fingerprint, operation, meta, value))
    files: dict[str, bytes] = {}
    manifest_files = []
    pair_of = {name: pair for pair, name in names.items()}
    for name, lines in contents.items():
        files[name] = "".join(lines).encode("utf-8")
        model_id, operation = pair_of[name]
        manifest_files.append(
            {
                "file": name,
                "model_id": model_id,
                "operation": operation,
                "records": len(lines),
                "sha256": hashlib.sha256(files[name]).hexdigest(),
            }
        )
    manifest = {"files": manifest_files, "format": FORMAT, "records": len(records), "study": study}
    files[MANIFEST_NAME] = (json.dumps(manifest, indent=2, sort_keys=True, ensure_ascii=False) + "\n").encode("utf-8")
    return files


def _folder_holds(target: Path, files: dict[str, bytes]) -> bool:
    """Whether ``target`` already holds exactly these released files (other files there do not count)."""
    if not target.is_dir():
        return False
    present = {path.name for path in target.glob("*.jsonl")}
    if (target / MANIFEST_NAME).exists():
        present.add(MANIFEST_NAME)
    if present != set(files):
        return False
    return all((target / name).read_bytes() == content for name, content in files.items())


def _carry_over(old: Path, new: Path) -> None:
    """Copy what else lives in a study folder (a README, .gitattributes...) into its replacement."""
    for entry in sorted(old.iterdir()):
        if entry.name == MANIFEST_NAME or (entry.suffix == ".jsonl" and entry.is_file()):
            continue  # the released files are written anew
        if entry.is_dir() and not entry.is_symlink():
            shutil.copytree(entry, new / entry.name, symlinks=True)
        else:
            shutil.copy2(entry, new / entry.name, follow_symlinks=False)


def _replace_folder(target: Path, files: dict[str, bytes]) -> None:
    """Write ``files`` as a complete new folder beside ``target``, then swap it in with two renames."""
    parent = target.parent
    staging = Path(tempfile.mkdtemp(dir=parent, prefix=f".{target.name}.tmp-"))
    old = parent / f".{target.name}.old-{staging.name.rsplit('-', 1)[1]}"
    moved_old = False
    try:
        for name, content in files.items():
            _write_new(staging / name, content)
        if target.is_dir():
            _carry_over(target, staging)
            os.chmod(staging, target.stat().st_mode & 0o7777)
        else:
            os.chmod(staging, 0o755)  # mkdtemp makes 0700; released folders are meant to be read by all
        _fsync_folder(staging)
        if target.exists():
            os.rename(target, old)
            moved_old = True
        os.rename(staging, target)
        _fsync_folder(parent)
    except BaseException:
        if moved_old and not os.path.lexists(target):
            os.rename(old, target)  # put the released folder back as it was
            moved_old = False
        shutil.rmtree(staging, ignore_errors=True)
        raise
    if moved_old:
        shutil.rmtree(old, ignore_errors=True)  # if this fails, the next export or import removes it


def export_study(
    cache: ReleaseBackend, study: str, out_dir: str | os.PathLike[str] | None = None, *, drop_released: bool = False
) -> list[Path]:
    """Write ``study``'s outputs to ``out_dir`` (default ``outputs_dir()/study``); returns the files.

    The returned list holds the JSONL files (sorted by name) and then ``MANIFEST.json``. The folder is
    replaced as one set (see the module docstring), and not touched at all when its released files
    would not change. Other files in the folder are kept. Raises :class:`StaleExportError` rather than
    overwrite or leave behind released records that are missing from the cache (import them first),
    unless ``drop_released`` says that lines the cache's study no longer holds are meant to go (a
    release aligned to its plan, :func:`nlgjudge.studies.released.align_release`).
    """
    validate_study_name(study)
    records = cache._study_records(study)
    if not records:
        known = ", ".join(cache.studies()) or "none"
        raise ValueError(f"study {study!r} has no outputs in {cache.path} (studies there: {known})")
    if out_dir is None:
        from nlgjudge.config import outputs_dir

        target = outputs_dir() / study
    else:
        target = Path(out_dir)
    given = target
    if target.is_symlink():
        target = target.resolve()  # swap the real folder, keep the link
    files = _render(records, study)

    target.parent.mkdir(parents=True, exist_ok=True)
    with _folder_lock(target.parent, exclusive=True):
        _recover(target.parent, target.name)
        if os.path.lexists(target) and not target.is_dir():
            raise FileExistsError(f"{target} exists and is not a folder; move it away or export elsewhere (--out)")
        _refuse_foreign_files(target)
        if not drop_released:
            exported = {(record[0], record[4]) for record in records}
            _refuse_to_drop_released(target, exported=exported, study=study, db=cache.path)
        if not _folder_holds(target, files):
            _replace_folder(target, files)
    return [given / name for name in files]


def _refuse_foreign_files(target: Path) -> None:
    """An export replaces a folder's manifest and its ``.jsonl`` files: refuse a folder where they are
    someone else's (a ``MANIFEST.json`` that is no release manifest, a ``.jsonl`` file it does not list),
    rather than replace or drop a file this program did not write."""
    if not target.is_dir():
        return
    manifest_path = target / MANIFEST_NAME
    listed: set[str] = set()
    if os.path.lexists(manifest_path):
        try:
            manifest = json.loads(manifest_path.read_text(encoding="utf-8")) if manifest_path.is_file() else None
        except (OSError, ValueError, UnicodeDecodeError):
            manifest = None
        if (not isinstance(manifest, dict) or manifest.get("format") != FORMAT or not isinstance(manifest.get("files"), list)
                or manifest_path.is_symlink()):
            raise FileExistsError(f"{manifest_path} is not a manifest of released outputs (nlgjudge writes its own there); "
                                  "move it away or export elsewhere (--out)")
        listed = {str(entry.get("file")) for entry in manifest["files"] if isinstance(entry, dict)}
    others = sorted(path.name for path in target.glob("*.jsonl") if path.name not in listed)
    if others:
        raise FileExistsError(f"{target} holds {', '.join(others)}, which no release manifest there lists, and an export "
                              "replaces the folder's .jsonl files; move them away or export elsewhere (--out)")


def _refuse_to_drop_released(target: Path, *, exported: set[tuple[str, str]], study: str, db: Path) -> None:
    """Refuse an export that would lose a released line (an output, or one request's meta of it)."""
    if not target.is_dir():
        return
    for existing in sorted(target.glob("*.jsonl")):
        dropped = [record.key for record in read_released_file(existing) if (record.key, record.meta) not in exported]
        if dropped:
            raise StaleExportError(
                f"exporting study {study!r} from {db} would drop {len(dropped)} released output(s) of {existing} "
                f"that are not in the cache as requests of this study (e.g. key {dropped[0]}). Import them first "
                f"(python -m nlgjudge.cache import {target} --db {db}) or delete the file if they should go."
            )


# -- reading ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ReleasedRecord:
    """One validated line of a released file; ``meta`` and ``value`` are canonical JSON text."""

    key: str
    model_id: str
    fingerprint: str
    operation: str
    meta: str
    value: str
    line: int

    def as_row(self) -> Row:
        return Row(
            key=self.key,
            model_id=self.model_id,
            fingerprint=self.fingerprint,
            operation=self.operation,
            request=None,
            meta=self.meta,
            value=self.value,
        )

    def decoded(self) -> dict[str, Any]:
        return {
            "key": self.key,
            "model_id": self.model_id,
            "fingerprint": self.fingerprint,
            "operation": self.operation,
            "meta": json.loads(self.meta),
            "value": json.loads(self.value),
        }


def _parse_line(path: Path, number: int, text: str) -> ReleasedRecord:
    where = f"{path}:{number}"
    try:
        record = loads_strict(text)
    except ValueError as error:
        raise OutputsFormatError(f"{where}: not valid JSON ({error})") from None
    if not isinstance(record, dict):
        raise OutputsFormatError(f"{where}: expected a JSON object, got {type(record).__name__}")
    missing = sorted(RECORD_FIELDS - record.keys())
    extra = sorted(record.keys() - RECORD_FIELDS)
    if missing or extra:
        # a file of system outputs (nlgjudge rank's input) is the likeliest mistake: named as such
        looks_like = ("; this looks like system outputs for nlgjudge rank (context_id, system, output), not model "
                      "outputs exported by nlgjudge cache export" if {"system", "output"} <= record.keys() else "")
        raise OutputsFormatError(
            f"{where}: a record must have exactly the fields {sorted(RECORD_FIELDS)}; "
            f"missing {missing or 'none'}, unexpected {extra or 'none'}{looks_like}"
        )
    if not is_valid_key(record["key"]):
        raise OutputsFormatError(f"{where}: key {record['key']!r} is not a 64-character lowercase sha256 hex digest")
    for name in ("model_id", "fingerprint", "operation"):
        if not isinstance(record[name], str) or not record[name]:
            raise OutputsFormatError(f"{where}: {name} must be a non-empty string, got {record[name]!r}")
    if not isinstance(record["meta"], dict):
        raise OutputsFormatError(f"{where}: meta must be a JSON object, got {type(record['meta']).__name__}")
    meta, value = canonical_json_of_parsed(record["meta"]), canonical_json_of_parsed(record["value"])
    return ReleasedRecord(record["key"], record["model_id"], record["fingerprint"], record["operation"], meta, value, number)


def read_released_file(path: str | os.PathLike[str], content: bytes | None = None) -> list[ReleasedRecord]:
    """Parse and validate one JSONL file of released outputs (blank lines are allowed and skipped).

    A key may repeat, once per request it answers: with another meta and the very same output."""
    path = Path(path)
    records: list[ReleasedRecord] = []
    first_line: dict[str, ReleasedRecord] = {}
    seen: set[tuple[str, str]] = set()
    try:
        text = (path.read_bytes() if content is None else content).decode("utf-8")
    except UnicodeDecodeError as error:
        raise OutputsFormatError(f"{path}: not UTF-8 text ({error})") from None
    for number, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        record = _parse_line(path, number, line)
        first = first_line.setdefault(record.key, record)
        if (record.key, record.meta) in seen:
            raise OutputsFormatError(
                f"{path}:{number}: key {record.key} with this meta already appears on line {first.line}; "
                "each request appears once per file"
            )
        same = (first.model_id, first.fingerprint, first.operation, first.value)
        if (record.model_id, record.fingerprint, record.operation, record.value) != same:
            raise OutputsFormatError(
                f"{path}:{number}: key {record.key} already appears on line {first.line} with another output; "
                "lines of one key are requests of one output and differ in their meta only"
            )
        seen.add((record.key, record.meta))
        records.append(record)
    return records


def _released_files(root: Path) -> list[Path]:
    """``root`` itself, or every ``*.jsonl`` below it outside hidden folders (where interrupted exports
    leave their ``.tmp-``/``.old-`` folders, which are never released data)."""
    if root.is_file():
        return [root]
    files = [
        path
        for path in sorted(root.rglob("*.jsonl"))
        if path.is_file() and not any(part.startswith(".") for part in path.relative_to(root).parts)
    ]
    if not files:
        raise FileNotFoundError(f"no *.jsonl files of released outputs under {root}")
    return files


@dataclass
class _FolderSnapshot:
    """The bytes of one folder's manifest (None when it has none) and of the files to import from it."""

    manifest: bytes | None
    contents: dict[Path, bytes]


def _snapshot(root: Path) -> dict[Path, _FolderSnapshot]:
    """Read every file to import (and its manifest) while holding shared locks, so no export swaps a folder
    between reading its manifest and reading its files."""
    lock_folders = [root.parent.parent] if root.is_file() else [root.parent, root]
    with contextlib.ExitStack() as locks:
        for folder in dict.fromkeys(lock_folders):
            if folder.is_dir():
                locks.enter_context(_folder_lock(folder, exclusive=False))
        if not root.exists():
            raise FileNotFoundError(
                f"{root} does not exist; give a study folder (e.g. data/outputs/<study>) or a .jsonl file"
            )
        folders: dict[Path, _FolderSnapshot] = {}
        for file in _released_files(root):
            snapshot = folders.get(file.parent)
            if snapshot is None:
                manifest_path = file.parent / MANIFEST_NAME
                manifest = manifest_path.read_bytes() if manifest_path.is_file() else None
                snapshot = folders[file.parent] = _FolderSnapshot(manifest, {})
            snapshot.contents[file] = file.read_bytes()
    return folders


def _parse_manifest(manifest_path: Path, content: bytes) -> dict[str, Any]:
    try:
        manifest = loads_strict(content.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as error:
        raise OutputsFormatError(f"{manifest_path}: not valid JSON ({error})") from None
    if not isinstance(manifest, dict) or not isinstance(manifest.get("files"), list):
        raise OutputsFormatError(f"{manifest_path}: expected an object with a 'files' list")
    return manifest


def _manifest_entry(path: Path, manifest: dict[str, Any], digest: str) -> dict[str, Any]:
    """The manifest's entry for ``path``, after checking that it vouches for exactly this content."""
    manifest_path = path.parent / MANIFEST_NAME
    entries = {entry.get("file"): entry for entry in manifest["files"] if isinstance(entry, dict)}
    entry = entries.get(path.name)
    if entry is None:
        raise OutputsFormatError(
            f"{path} is not listed in {manifest_path}; re-export the study or remove the stray file"
        )
    if entry.get("sha256") != digest:
        raise OutputsFormatError(
            f"{path} does not match {manifest_path} (sha256 {digest[:12]}...; the manifest says "
            f"{str(entry.get('sha256'))[:12]}..., {entry.get('records')} records): the file was edited by hand or "
            "a merge went wrong; restore it (git checkout) or re-export it from a cache that holds the right outputs"
        )
    return entry


def _unverified_error(file: Path) -> OutputsFormatError:
    return OutputsFormatError(
        f"{file} has no {MANIFEST_NAME} beside it, so nothing vouches that it is complete and unedited; "
        "re-export the study to write one (python -m nlgjudge.cache export STUDY), or, if you trust the file, "
        "import it unchecked with allow_unverified=True (command line: --allow-unverified)"
    )


def import_outputs(
    cache: ReleaseBackend,
    path: str | os.PathLike[str],
    *,
    study: str | None = None,
    allow_unverified: bool = False,
) -> int:
    """Import released outputs from one file, a study folder, or a folder of study folders.

    Every file must be vouched for by the ``MANIFEST.json`` beside it (listed, same sha256 and record
    count; importing a whole folder also needs every listed file); files without a manifest are refused
    unless ``allow_unverified=True``. Each file's study is ``study`` when given, else the ``study``
    named by its manifest, else its folder's name. Everything is validated before anything is written
    (one transaction); importing again adds nothing, and a file whose exact content was imported before
    into the same study is not parsed again. A key on several lines (one per request) is stored once,
    with every line's meta recorded as a request of the study. Returns the number of outputs that were
    new to the cache.
    """
    root = Path(path)
    if study is not None:
        validate_study_name(study)
    recover_interrupted_exports(root)
    snapshots = _snapshot(root)

    already_imported = cache._imported_files()
    rows: dict[str, tuple[ReleasedRecord, Path]] = {}
    requests: set[tuple[str, str, str]] = set()
    files: list[tuple[str, str, int]] = []
    for folder, snapshot in snapshots.items():
        manifest_path = folder / MANIFEST_NAME
        manifest = None if snapshot.manifest is None else _parse_manifest(manifest_path, snapshot.manifest)
        if manifest is None and not allow_unverified:
            raise _unverified_error(next(iter(snapshot.contents)))
        if manifest is not None and root.is_dir():  # the whole folder is imported: nothing may be missing
            present = {file.name for file in snapshot.contents}
            listed = [entry.get("file") for entry in manifest["files"] if isinstance(entry, dict)]
            missing = sorted(str(name) for name in listed if name not in present)
            if missing:
                raise OutputsFormatError(
                    f"{manifest_path} lists {missing[0]}, which is not in {folder}: the folder is incomplete; "
                    "restore the file (git checkout) or re-export the study"
                )
        for file, content in snapshot.contents.items():
            file_study = study or (manifest or {}).get("study") or folder.name
            try:
                validate_study_name(file_study)
            except ValueError as error:
                read_released_file(file, content)  # a file that is no released outputs says so first: the real problem
                raise OutputsFormatError(f"{file}: {error}; name the study (--study NAME on the command line, study=... "
                                         "from Python)") from None
            digest = hashlib.sha256(content).hexdigest()
            entry = None if manifest is None else _manifest_entry(file, manifest, digest)
            if (digest, file_study) in already_imported:
                continue  # this very content is in the cache already (the cache never deletes)
            records = read_released_file(file, content)
            if entry is not None and entry.get("records") != len(records):
                raise OutputsFormatError(
                    f"{file} has {len(records)} records but {manifest_path} says {entry.get('records')}; "
                    "the manifest was edited by hand; re-export the study"
                )
            for record in records:
                previous = rows.get(record.key)
                if previous is not None and previous[0].value != record.value:
                    raise OutputsFormatError(
                        f"{file}:{record.line}: key {record.key} has a different value in "
                        f"{previous[1]}:{previous[0].line}; released files disagree, fix one of them"
                    )
                rows.setdefault(record.key, (record, file))  # one output per key, whatever its requests
                requests.add((file_study, record.key, record.meta))
            files.append((digest, file_study, len(records)))
    if not files:
        return 0
    return cache._insert_released([record.as_row() for record, _ in rows.values()], sorted(requests), files)
