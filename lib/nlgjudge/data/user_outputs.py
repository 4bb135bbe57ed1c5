"""A user's own system outputs, read and checked for ``nlgjudge rank``.

One row per (context, system): ``context_id``, ``source``, ``system``, ``output`` and, optionally,
``reference``. JSON Lines (one object per line), CSV and Parquet are read; the field names can be
changed (:class:`FieldNames`). Everything is checked before any model is loaded, and every problem
is a :class:`UserInputError` whose message names the file, the line (or row) and the fix, e.g.

    outputs.jsonl, line 7: field 'output' is a list, not a string; write the system's text as one string

Nothing is dropped silently: a row that cannot be used stops the run with its line number.
"""

from __future__ import annotations

import json
import math
import numbers
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

#: Columns of the checked frame, in this order.
COLUMNS = ("context_id", "source", "system", "output", "reference")
#: Our column -> the command-line option naming the user's field for it (``nlgjudge rank --help``).
FIELD_OPTIONS = {"context_id": "--context-field", "source": "--source-field", "system": "--system-field",
                 "output": "--output-field", "reference": "--reference-field"}
#: ``frame.attrs`` key of a checked frame: (context_id, system) -> "file, line N" of its row.
PLACES_ATTR = "places"
READERS = {".jsonl": "jsonl", ".json": "jsonl", ".ndjson": "jsonl", ".csv": "csv", ".parquet": "parquet", ".pq": "parquet"}


class UserInputError(ValueError):
    """A user's input file or frame that cannot be ranked as it is (the message says where and how to fix it)."""


@dataclass(frozen=True)
class FieldNames:
    """Which input field holds each column (``--context-field`` ... on the command line)."""

    context_id: str = "context_id"
    source: str = "source"
    system: str = "system"
    output: str = "output"
    reference: str = "reference"

    def required(self, with_reference: bool) -> dict[str, str]:
        """Our column -> the user's field name, for the fields every row must have."""
        names = {"context_id": self.context_id, "source": self.source, "system": self.system, "output": self.output}
        if with_reference:
            names["reference"] = self.reference
        return names


def read_user_outputs(path: str | Path, fields: FieldNames = FieldNames(), *, with_reference: bool = False) -> pd.DataFrame:
    """Read and check a file of system outputs; returns the frame of :func:`check_user_outputs`."""
    file = Path(path)
    name = str(path)
    if not file.exists():
        raise UserInputError(f"{name}: no such file; pass the path of a .jsonl, .csv or .parquet file of system outputs")
    if file.is_dir():
        raise UserInputError(f"{name}: is a folder, not a file; pass the path of a .jsonl, .csv or .parquet file")
    kind = READERS.get(file.suffix.lower())
    if kind is None:
        raise UserInputError(
            f"{name}: unknown file type {file.suffix or '(no extension)'!r}; use .jsonl (one JSON object per line), "
            ".csv or .parquet"
        )
    if file.stat().st_size == 0:
        raise UserInputError(f"{name}: the file is empty; it needs one row per (context, system) with the fields "
                             f"{', '.join(fields.required(with_reference).values())}")
    if kind == "jsonl":
        records, lines = _read_jsonl(file, name)
        frame = pd.DataFrame.from_records(records)
        where = [f"line {line}" for line in lines]
    else:
        frame = _read_table(file, name, kind)
        # A CSV's first data row is line 2 of the file (line 1 holds the header).
        where = [f"line {k + 2}" if kind == "csv" else f"row {k + 1}" for k in range(len(frame))]
    return check_user_outputs(frame, fields, with_reference=with_reference, origin=name, where=where)


def _read_jsonl(file: Path, name: str) -> tuple[list[dict[str, Any]], list[int]]:
    records, lines = [], []
    try:
        # utf-8-sig: a byte-order mark (as some editors write) is read as nothing, as it is in CSV.
        text = file.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as error:
        raise UserInputError(f"{name}: not UTF-8 text ({error.reason} at byte {error.start}); save the file as UTF-8") from None
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            value = json.loads(line)
        except json.JSONDecodeError as error:
            raise UserInputError(
                f"{name}, line {number}: not valid JSON ({error.msg}, column {error.colno}); "
                "each line must be one JSON object such as {\"context_id\": ..., \"system\": ..., ...}"
            ) from None
        if not isinstance(value, dict):
            raise UserInputError(
                f"{name}, line {number}: a JSON {type(value).__name__}, not an object; each line must be one JSON object"
            )
        for field, item in value.items():  # before the frame is built: its string storage refuses them
            if isinstance(item, str):
                _check_encodable(item, field, f"{name}, line {number}")
        records.append(value)
        lines.append(number)
    if not records:
        raise UserInputError(f"{name}: no rows (only blank lines); write one JSON object per line")
    return records, lines


def _read_table(file: Path, name: str, kind: str) -> pd.DataFrame:
    try:
        if kind == "csv":
            # Everything as text: an id "007" stays "007"; empty cells become "" and are reported as empty.
            frame = pd.read_csv(file, dtype=str, keep_default_na=False)
        else:
            frame = pd.read_parquet(file)
    except pd.errors.EmptyDataError:
        raise UserInputError(f"{name}: the file holds no table; write a header line and one row per (context, system)") from None
    except (pd.errors.ParserError, ValueError, OSError, ImportError) as error:
        first = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        raise UserInputError(f"{name}: cannot be read as {kind.upper()} ({first}); check the file's format") from None
    if frame.empty:
        raise UserInputError(f"{name}: the table has a header but no rows; add one row per (context, system)")
    return frame


def check_user_outputs(
    frame: pd.DataFrame,
    fields: FieldNames = FieldNames(),
    *,
    with_reference: bool = False,
    origin: str = "the frame",
    where: list[str] | None = None,
) -> pd.DataFrame:
    """Check a frame of system outputs and return it with the columns :data:`COLUMNS` (``reference``
    is None where absent). ``where`` names each row's place in the file, for the messages."""
    if not isinstance(frame, pd.DataFrame):
        raise UserInputError(f"{origin}: expected a pandas DataFrame of system outputs, got {type(frame).__name__}")
    if frame.empty:
        raise UserInputError(f"{origin}: no rows; it needs one row per (context, system)")
    places = where if where is not None else [f"row {k}" for k in range(len(frame))]
    required = fields.required(with_reference)
    rows = []
    for place, record in zip(places, frame.to_dict("records"), strict=True):
        row: dict[str, Any] = {}
        for column, field in required.items():
            row[column] = _field(record, field, column, f"{origin}, {place}")
        if not with_reference:
            raw = record.get(fields.reference)
            row["reference"] = None if _absent(raw) else _field(record, fields.reference, "reference", f"{origin}, {place}")
        row["_place"] = place
        rows.append(row)
    checked = pd.DataFrame(rows)
    _check_duplicates(checked, origin)
    _check_contexts(checked, origin, with_reference)
    result = checked[list(COLUMNS)].reset_index(drop=True)
    # Where each row came from, for messages about a row found later (a text too long for the model);
    # a frame checked again (the command line's, in rank_outputs) keeps the file's places.
    known = frame.attrs.get(PLACES_ATTR)
    result.attrs[PLACES_ATTR] = known if where is None and isinstance(known, _Places) else _Places(
        {(c, s): f"{origin}, {p}" for c, s, p in zip(checked["context_id"], checked["system"], checked["_place"], strict=True)})
    return result


class _Places(dict):  # type: ignore[type-arg]
    """(context_id, system) -> "file, line N". Never changed once made, so pandas' copies of a frame's
    ``attrs`` (a deep copy on every operation) share it instead of copying it row by row."""

    def __deepcopy__(self, memo: dict[int, Any]) -> _Places:
        return self


def row_place(frame: pd.DataFrame, context_id: str, system: str) -> str:
    """``"outputs.jsonl, line 7"``: where the row of (``context_id``, ``system``) of a checked frame was read."""
    return frame.attrs.get(PLACES_ATTR, {}).get((context_id, system), f"context {context_id!r}, system {system!r}")


def _absent(value: Any) -> bool:
    return value is None or value is pd.NA or (isinstance(value, float) and math.isnan(value))


def _field(record: Mapping[str, Any], field: str, column: str, where: str) -> str:
    if field not in record or _absent(record[field]):
        present = ", ".join(repr(k) for k, v in record.items() if not _absent(v)) or "none"
        raise UserInputError(f"{where}: missing field {field!r} (fields present: {present}); every row needs it, "
                             f"or name the field that holds the {column.replace('_', ' ')} with {FIELD_OPTIONS[column]}")
    value = record[field]
    if column in ("context_id", "system") and isinstance(value, numbers.Integral) and not isinstance(value, bool):
        value = str(int(value))  # integer ids (also numpy's, from Parquet) are common and unambiguous
    if not isinstance(value, str):
        raise UserInputError(
            f"{where}: field {field!r} is a {type(value).__name__} ({_short(value)}), not a string; "
            f"write the {column.replace('_', ' ')} as text"
        )
    _check_encodable(value, field, where)
    if column == "output":
        return value  # an empty output is a real output (a system that wrote nothing) and is judged as such
    if not value.strip():
        raise UserInputError(f"{where}: field {field!r} is empty; every row needs a non-empty {column.replace('_', ' ')}")
    return value


def _check_encodable(value: str, field: str, where: str) -> None:
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as error:  # a lone surrogate ("\\ud800" in JSON) is no text a model can read
        raise UserInputError(
            f"{where}: field {field!r} holds {value[error.start]!r} at character {error.start + 1}, half of a UTF-16 "
            "surrogate pair and not a character; write the text as valid Unicode (the whole pair, or remove it)"
        ) from None


def _short(value: Any) -> str:
    text = json.dumps(value, default=str) if not isinstance(value, str) else value
    return text if len(text) <= 40 else text[:37] + "..."


def _check_duplicates(checked: pd.DataFrame, origin: str) -> None:
    repeated = checked[checked.duplicated(["context_id", "system"], keep=False)]
    if repeated.empty:
        return
    (context_id, system), part = next(iter(repeated.groupby(["context_id", "system"], sort=False)))
    more = len(repeated.groupby(["context_id", "system"])) - 1
    tail = f" (and {more} more repeated pairs)" if more else ""
    raise UserInputError(
        f"{origin}, {' and '.join(part['_place'])}: system {system!r} appears more than once in context {context_id!r}"
        f"{tail}; keep one output per (context, system)"
    )


def _check_contexts(checked: pd.DataFrame, origin: str, with_reference: bool) -> None:
    for context_id, part in checked.groupby("context_id", sort=False):
        if len(part) < 2:
            raise UserInputError(
                f"{origin}, {part['_place'].iloc[0]}: context {context_id!r} has one system ({part['system'].iloc[0]!r}); "
                "a comparison needs at least two systems per context: add the others' outputs or remove the context"
            )
        for column in ("source",) + (("reference",) if with_reference else ()):
            values = part[column].unique()
            if len(values) > 1:
                raise UserInputError(
                    f"{origin}, {' and '.join(part['_place'].iloc[:2])}: context {context_id!r} has {len(values)} different "
                    f"{column} texts; every row of a context must carry the same {column}"
                )
    if checked["system"].nunique() < 2:
        raise UserInputError(f"{origin}: only one system ({checked['system'].iloc[0]!r}); ranking needs at least two")
