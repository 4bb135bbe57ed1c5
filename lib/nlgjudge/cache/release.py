"""Released outputs: deterministic, diff-friendly JSONL files that are committed with the project.

Layout of one study folder (default ``config.outputs_dir() / <study>``)::

    <model-slug>__<operation-slug>.jsonl   one file per model x operation
    MANIFEST.json                          study name, record count and sha256 of every file

Each line of a JSONL file is one output, as canonical JSON (sorted keys, no spaces, floats in Python's
shortest round-trip form, so reading them back gives the very same floats)::

    {"fingerprint":"...","key":"<sha256>","meta":{...},"model_id":"...","operation":"...","value":...}

Lines are sorted by key, so re-exporting unchanged data gives byte-identical files and new outputs
show up as added lines in a diff. The full request (prompt text) stays in the local cache only: the
key already commits to it, and the files stay small.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from nlgjudge.cache.canonical import canonical_json, canonical_json_of_parsed, loads_strict
from nlgjudge.cache.keys import is_valid_key
from nlgjudge.cache.store import _Row, validate_study_name

if TYPE_CHECKING:
    from nlgjudge.cache.store import OutputCache

__all__ = [
    "OutputsFormatError",
    "StaleExportError",
    "export_study",
    "import_outputs",
    "read_released_file",
    "output_file_name",
    "MANIFEST_NAME",
    "RECORD_FIELDS",
    "FORMAT",
]

MANIFEST_NAME = "MANIFEST.json"
FORMAT = "nlgjudge-outputs/1"
#: The fields of one released record, exactly.
RECORD_FIELDS = frozenset({"fingerprint", "key", "meta", "model_id", "operation", "value"})


class OutputsFormatError(ValueError):
    """A released outputs file (or its manifest) is malformed; the message names file and line."""


class StaleExportError(RuntimeError):
    """Exporting would overwrite released outputs that are not in the cache."""


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


# -- writing ---------------------------------------------------------------------------------------


def _write_if_changed(path: Path, content: bytes) -> None:
    """Atomically replace ``path`` with ``content``, leaving it untouched when it already matches."""
    if path.exists() and path.read_bytes() == content:
        return
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "wb") as stream:
            stream.write(content)
            stream.flush()
            os.fsync(stream.fileno())
        os.chmod(temporary, 0o644)  # mkstemp makes 0600; released files are meant to be read by all
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def _record_line(key: str, model_id: str, fingerprint: str, operation: str, meta: str, value: str) -> str:
    # meta and value are canonical JSON text already; splicing keeps them byte-for-byte, keys sorted.
    head = canonical_json({"fingerprint": fingerprint, "key": key})[:-1]
    tail = canonical_json({"model_id": model_id, "operation": operation})[1:-1]
    return f'{head},"meta":{meta},{tail},"value":{value}}}\n'


def export_study(cache: OutputCache, study: str, out_dir: str | os.PathLike[str] | None = None) -> list[Path]:
    """Write ``study``'s outputs to ``out_dir`` (default ``outputs_dir()/study``); returns the files.

    The returned list holds the JSONL files (sorted by name) and then ``MANIFEST.json``. Files whose
    content is unchanged are not rewritten. Raises :class:`StaleExportError` rather than overwrite or
    leave behind released records that are missing from the cache (import them first).
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
    names = _file_names({(model_id, operation) for _, model_id, _, operation, _, _ in records})

    contents: dict[str, list[str]] = {name: [] for name in sorted(set(names.values()))}
    for key, model_id, fingerprint, operation, meta, value in records:  # already sorted by key
        contents[names[(model_id, operation)]].append(_record_line(key, model_id, fingerprint, operation, meta, value))

    _refuse_to_drop_released(target, exported_keys={record[0] for record in records}, study=study, db=cache.path)

    target.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    manifest_files = []
    pair_of = {name: pair for pair, name in names.items()}
    for name, lines in contents.items():
        content = "".join(lines).encode("utf-8")
        _write_if_changed(target / name, content)
        written.append(target / name)
        model_id, operation = pair_of[name]
        manifest_files.append(
            {
                "file": name,
                "model_id": model_id,
                "operation": operation,
                "records": len(lines),
                "sha256": hashlib.sha256(content).hexdigest(),
            }
        )
    for stale in sorted(target.glob("*.jsonl")):  # e.g. renamed after a slug collision; records kept above
        if stale.name not in contents:
            stale.unlink()
    manifest = {"files": manifest_files, "format": FORMAT, "records": len(records), "study": study}
    manifest_text = json.dumps(manifest, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
    _write_if_changed(target / MANIFEST_NAME, manifest_text.encode("utf-8"))
    written.append(target / MANIFEST_NAME)
    return written


def _refuse_to_drop_released(target: Path, *, exported_keys: set[str], study: str, db: Path) -> None:
    if not target.is_dir():
        return
    for existing in sorted(target.glob("*.jsonl")):
        dropped = [record.key for record in read_released_file(existing) if record.key not in exported_keys]
        if dropped:
            raise StaleExportError(
                f"exporting study {study!r} from {db} would drop {len(dropped)} released output(s) of {existing} "
                f"that are not in the cache (e.g. {dropped[0]}). Import them first "
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

    def as_row(self) -> _Row:
        return _Row(
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
        raise OutputsFormatError(
            f"{where}: a record has exactly the fields {sorted(RECORD_FIELDS)}; "
            f"missing {missing or 'none'}, unexpected {extra or 'none'}"
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
    """Parse and validate one JSONL file of released outputs (blank lines are allowed and skipped)."""
    path = Path(path)
    records: list[ReleasedRecord] = []
    first_line: dict[str, int] = {}
    try:
        text = (path.read_bytes() if content is None else content).decode("utf-8")
    except UnicodeDecodeError as error:
        raise OutputsFormatError(f"{path}: not UTF-8 text ({error})") from None
    for number, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        record = _parse_line(path, number, line)
        if record.key in first_line:
            raise OutputsFormatError(
                f"{path}:{number}: key {record.key} already appears on line {first_line[record.key]}; "
                "each output appears once per file"
            )
        first_line[record.key] = number
        records.append(record)
    return records


def _released_files(path: Path) -> Iterator[Path]:
    if path.is_file():
        yield path
        return
    files = sorted(path.rglob("*.jsonl"))
    if not files:
        raise FileNotFoundError(f"no *.jsonl files of released outputs under {path}")
    yield from files


def _manifest_of(folder: Path) -> dict[str, Any] | None:
    manifest_path = folder / MANIFEST_NAME
    if not manifest_path.exists():
        return None
    try:
        manifest = loads_strict(manifest_path.read_text(encoding="utf-8"))
    except ValueError as error:
        raise OutputsFormatError(f"{manifest_path}: not valid JSON ({error})") from None
    if not isinstance(manifest, dict) or not isinstance(manifest.get("files"), list):
        raise OutputsFormatError(f"{manifest_path}: expected an object with a 'files' list")
    return manifest


def _check_against_manifest(path: Path, manifest: dict[str, Any], digest: str, records: int) -> None:
    manifest_path = path.parent / MANIFEST_NAME
    entries = {entry.get("file"): entry for entry in manifest["files"] if isinstance(entry, dict)}
    entry = entries.get(path.name)
    if entry is None:
        raise OutputsFormatError(
            f"{path} is not listed in {manifest_path}; re-export the study or remove the stray file"
        )
    if entry.get("sha256") != digest or entry.get("records") != records:
        raise OutputsFormatError(
            f"{path} does not match {manifest_path} (sha256 {digest[:12]}..., {records} records; manifest says "
            f"{str(entry.get('sha256'))[:12]}..., {entry.get('records')} records): the file was edited by hand or "
            "a merge went wrong; re-export it from a cache that holds the right outputs"
        )


def import_outputs(cache: OutputCache, path: str | os.PathLike[str], *, study: str | None = None) -> int:
    """Import released outputs from one file, a study folder, or a folder of study folders.

    Each file's study is ``study`` when given, else the ``study`` named by the ``MANIFEST.json`` beside
    it, else its folder's name. Everything is validated before anything is written (one transaction);
    importing again adds nothing, and a file whose exact content was imported before into the same
    study is skipped without being parsed again. Returns the number of outputs that were new to the cache.
    """
    root = Path(path)
    if not root.exists():
        raise FileNotFoundError(f"{root} does not exist; give a study folder (e.g. data/outputs/<study>) or a .jsonl file")
    if study is not None:
        validate_study_name(study)

    already_imported = cache._imported_files()
    rows: dict[str, tuple[ReleasedRecord, Path]] = {}
    links: set[tuple[str, str]] = set()
    files: list[tuple[str, str, int]] = []
    manifests: dict[Path, dict[str, Any] | None] = {}
    for file in _released_files(root):
        folder = file.parent
        if folder not in manifests:
            manifests[folder] = _manifest_of(folder)
        manifest = manifests[folder]
        file_study = study or (manifest or {}).get("study") or folder.name
        try:
            validate_study_name(file_study)
        except ValueError as error:
            raise OutputsFormatError(f"{file}: {error}; pass study=... to choose one") from None
        content = file.read_bytes()
        digest = hashlib.sha256(content).hexdigest()
        if (digest, file_study) in already_imported:
            continue  # this very content is in the cache already (the cache never deletes)
        records = read_released_file(file, content)
        if manifest is not None:
            _check_against_manifest(file, manifest, digest, len(records))
        for record in records:
            previous = rows.get(record.key)
            if previous is not None and previous[0].value != record.value:
                raise OutputsFormatError(
                    f"{file}:{record.line}: key {record.key} has a different value in "
                    f"{previous[1]}:{previous[0].line}; released files disagree, fix one of them"
                )
            rows.setdefault(record.key, (record, file))
            links.add((file_study, record.key))
        files.append((digest, file_study, len(records)))
    if not files:
        return 0
    return cache._insert_released([record.as_row() for record, _ in rows.values()], sorted(links), files)
