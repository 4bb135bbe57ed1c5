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
import re
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from nlgjudge.json_objects import DuplicateKeyError, unique_keys
from nlgjudge.safety import shown_path
from nlgjudge.config import expand_path
from nlgjudge.data.aimed_at_judge import (  # noqa: F401 (addressed_to_judge, hides_text: the module's former names)
    CONFUSABLE_SCRIPTS,
    LOOK_ALIKES,
    addressed_to_judge,
    hides_text,
    text_warnings,
)

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
    if not str(path).strip():
        raise UserInputError("the outputs file's path is empty; pass the path of a .jsonl, .csv or .parquet file")
    file = expand_path(path)
    name = shown_path(path)
    _check_field_names(fields, with_reference)
    try:
        file.stat()
    except FileNotFoundError:
        pass
    except OSError as error:  # a name too long, a path through a file, ...: say which argument
        raise UserInputError(f"{name}: cannot read the outputs file ({error.strerror or type(error).__name__}); "
                             "pass the path of a .jsonl, .csv or .parquet file") from None
    if not file.exists():
        raise UserInputError(f"{name}: no such file; pass the path of a .jsonl, .csv or .parquet file of system outputs")
    if file.is_dir():
        raise UserInputError(f"{name}: is a folder, not a file; pass the path of a .jsonl, .csv or .parquet file")
    if not file.is_file():  # a named pipe, a device, a socket: read once, it would be gone for the check
        raise UserInputError(f"{name}: is a named pipe or another special file, not a regular file; save the outputs "
                             "to a .jsonl, .csv or .parquet file and pass its path")
    kind = READERS.get(file.suffix.lower())
    if kind is None:
        raise UserInputError(
            f"{name}: unknown file type {file.suffix or '(no extension)'!r}; use .jsonl (one JSON object per line), "
            ".csv or .parquet"
        )
    if file.stat().st_size == 0:
        raise UserInputError(f"{name}: the file is empty; it needs one row per (context, system) with the fields "
                             f"{', '.join(fields.required(with_reference).values())}")
    if kind in ("jsonl", "csv"):
        _refuse_compressed(file, name, kind)
    if kind == "jsonl":
        records, lines = _read_jsonl(file, name)
        frame = pd.DataFrame.from_records(records)
        where = [f"line {line}" for line in lines]
    elif kind == "csv":
        frame, where = _read_csv(file, name, fields, with_reference)
    else:
        frame = _read_table(file, name, kind)
        where = [f"row {k + 1}" for k in range(len(frame))]
    return check_user_outputs(frame, fields, with_reference=with_reference, origin=name, where=where)


#: The first bytes of compressed files, and how to unpack each.
_COMPRESSED = {b"\x1f\x8b": ("gzip", "gunzip"), b"PK\x03\x04": ("zip", "unzip"), b"BZh": ("bzip2", "bunzip2"),
               b"\xfd7zXZ": ("xz", "unxz"), b"\x28\xb5\x2f\xfd": ("zstd", "unzstd")}


def _refuse_compressed(file: Path, name: str, kind: str) -> None:
    """A compressed file named like text is named for what it is, not read as broken text."""
    with file.open("rb") as stream:
        head = stream.read(4)
    if head.startswith(b"PK\x03\x04"):
        office = _office_document(file)
        if office:  # a spreadsheet or document is a zip of XML parts: unpacking it gives no table
            raise UserInputError(f"{name}: is {office}, not {kind.upper()} text; export it from its program as CSV "
                                 "(UTF-8) and pass that file (unpacking it gives XML parts, not a table)")
    for magic, (what, unpack) in _COMPRESSED.items():
        if head.startswith(magic):
            raise UserInputError(f"{name}: is a {what}-compressed file, not {kind.upper()} text; unpack it first "
                                 f"({unpack} {shown_path(file)}) and pass the unpacked file")


def _office_document(file: Path) -> str:
    """What office document a zip file is ("an Excel workbook", ...), or "" for another zip."""
    import zipfile

    try:
        with zipfile.ZipFile(file) as archive:
            names = set(archive.namelist()[:2000])
    except (zipfile.BadZipFile, OSError, ValueError):
        return ""
    for part, what in (("xl/workbook.xml", "an Excel workbook"), ("word/document.xml", "a Word document"),
                       ("content.xml", "an OpenDocument file")):
        if part in names:
            return what
    return ""


def _read_jsonl(file: Path, name: str) -> tuple[list[dict[str, Any]], list[int]]:
    records, lines = [], []
    try:
        # utf-8-sig: a byte-order mark (as some editors write) is read as nothing, as it is in CSV.
        text = file.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as error:
        raise UserInputError(f"{name}: not UTF-8 text ({error.reason} at byte {error.start}); save the file as UTF-8") from None
    # lines end at \n, \r\n or \r only: str.splitlines would also cut at U+2028, U+0085 and other
    # characters that JSON strings may hold raw
    for number, line in enumerate(re.split(r"\r\n|\r|\n", text), 1):
        if not line.strip():
            continue
        try:
            value = json.loads(line, object_pairs_hook=unique_keys)
        except DuplicateKeyError as error:
            raise UserInputError(f"{name}, line {number}: key {error.key!r} appears twice in one JSON object; "
                                 "keep one (a second one would silently replace the first)") from None
        except RecursionError:
            raise UserInputError(f"{name}, line {number}: JSON nested too deeply to read (hundreds of levels of "
                                 "[ or {); each line must be one flat JSON object of text fields") from None
        except json.JSONDecodeError as error:
            raise UserInputError(
                f"{name}, line {number}: not valid JSON ({error.msg}, column {error.colno}); "
                "each line must be one JSON object such as {\"context_id\": ..., \"system\": ..., ...}"
            ) from None
        except ValueError:  # Python's limit on integer digits (4300), the one other way json.loads fails
            raise UserInputError(f"{name}, line {number}: a number with thousands of digits, too long to read as a "
                                 "number; write it as text in quotes (an id is text: \"context_id\": \"...\")") from None
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




#: Separators a file saved as "CSV" by a spreadsheet in some locales uses instead of commas.
OTHER_DELIMITERS = {";": "semicolons", "\t": "tabs", "|": "vertical bars"}


def _read_csv(file: Path, name: str, fields: FieldNames, with_reference: bool) -> tuple[pd.DataFrame, list[str]]:
    """A CSV file read with Python's own reader, so that every refusal can name its line: the line a
    row starts on (a quoted cell may span lines), a row with too few or too many cells, a header
    naming a column twice, and files that are not comma-separated CSV with a header (other
    delimiters, no header line, JSON Lines) named for what they are. Every cell is text: an id
    "007" stays "007"; an empty cell is "" (reported as empty where a value is needed)."""
    import csv
    import io

    try:
        # utf-8-sig: a byte-order mark (as spreadsheets write) is read as nothing; newline="": the
        # reader sees line breaks inside quoted cells as they are.
        with file.open(encoding="utf-8-sig", newline="") as stream:
            text = stream.read()
    except UnicodeDecodeError as error:
        raise UserInputError(f"{name}: not UTF-8 text ({error.reason} at byte {error.start}); save the file as UTF-8") from None
    if re.match(r"sep=.?\r?\n", text, flags=re.IGNORECASE):
        raise UserInputError(f"{name}: its first line {text.splitlines()[0]!r} is a hint spreadsheets write for themselves, "
                             "not the header; delete that line (the header is the line after it)")
    if text.lstrip()[:1] in ("{", "["):
        raise UserInputError(f"{name}: holds JSON (its first line starts with {text.lstrip()[0]!r}), not CSV; "
                             "rename the file to .jsonl if it has one JSON object per line")
    csv.field_size_limit(2**31 - 1)  # a long output is one cell; the default limit is 128 KiB
    reader = csv.reader(io.StringIO(text, newline=""), strict=True)
    header: list[str] | None = None
    rows: list[list[str]] = []
    where: list[str] = []
    end = 0
    try:
        for record in reader:
            start, end = end + 1, reader.line_num
            if not record or (len(record) == 1 and not record[0].strip() and header is None):
                continue  # a blank line
            if header is None:
                header = record
                _check_header(header, name, fields, with_reference)
                continue
            if len(record) != len(header):
                few = len(record) < len(header)
                raise UserInputError(
                    f"{name}, line {start}: {len(record)} cells where the header (line 1) names {len(header)}; "
                    + ("a cell is missing (every row needs every column, an empty one as two commas)" if few else
                       "too many cells (quote a text that holds commas: \"like, this\")")
                )
            rows.append(record)
            where.append(f"line {start}")
    except csv.Error as error:
        raise UserInputError(f"{name}, line {reader.line_num}: cannot be read as CSV ({error}); check the file's "
                             "quoting (a quote inside a quoted cell is written twice: \"\")") from None
    if header is None:
        raise UserInputError(f"{name}: the file holds no table; write a header line and one row per (context, system)")
    if not rows:
        raise UserInputError(f"{name}: the table has a header but no rows; add one row per (context, system)")
    return pd.DataFrame(rows, columns=header, dtype=object), where


def _check_header(header: list[str], name: str, fields: FieldNames, with_reference: bool) -> None:
    padded = [column for column in header if column != column.strip()]
    if padded:
        raise UserInputError(
            f"{name}, line 1: column name {padded[0]!r} has spaces around it (the header reads {_short(','.join(header))}); "
            "a CSV cell keeps every character, so the columns would not be found and every value after a comma would "
            "start with a space: write the file without spaces after the commas, or save it as .jsonl")
    empty = sum(1 for column in header if not column)
    if empty and any(column for column in header):
        raise UserInputError(f"{name}, line 1: the header has {empty} column{'s' if empty != 1 else ''} without a name "
                             f"(it reads {_short(','.join(header))}: commas at the end of the line?); name every column, "
                             "or remove the extra commas")
    repeated = sorted({column for column in header if header.count(column) > 1})
    if repeated:
        raise UserInputError(f"{name}, line 1: the header names column {repeated[0]!r} more than once; keep one "
                             "(the other would be silently ignored)")
    needed = list(fields.required(with_reference).values())
    if any(column in header for column in needed):
        return  # a missing field is reported row by row, with the option that names it
    joined = ",".join(header)
    if joined and not joined.strip("\x00"):  # nothing but NUL bytes: no text at all
        raise UserInputError(f"{name}: holds only NUL bytes, no text at all (an unwritten or damaged file); "
                             "give the file of system outputs itself")
    if "\x00" in joined:  # every other byte NUL: UTF-16 text without its byte-order mark
        raise UserInputError(f"{name}: looks like UTF-16 text (a NUL byte beside each character), not UTF-8; "
                             "save the file as UTF-8")
    for delimiter, what in OTHER_DELIMITERS.items():
        if len(header) == 1 and delimiter in joined:
            raise UserInputError(f"{name}: its columns are separated by {what}, not commas (line 1: {_short(joined)}); "
                                 "save it as comma-separated CSV, or as .jsonl")
    raise UserInputError(f"{name}, line 1: the header names none of the fields {', '.join(needed)} (it reads "
                         f"{_short(joined)}); if the file has no header line, add one naming them; if your columns "
                         "have other names, name them with --context-field, --source-field, --system-field, --output-field")


def _read_table(file: Path, name: str, kind: str) -> pd.DataFrame:
    try:
        import pyarrow.parquet as pq

        names = pq.read_schema(file).names
    except Exception:  # noqa: BLE001 - not readable as Parquet: the reader below says so in its own words
        names = []
    repeated = sorted({column for column in names if names.count(column) > 1})
    if repeated:
        raise UserInputError(f"{name}: the table has {names.count(repeated[0])} columns named {repeated[0]!r}; keep one "
                             "(which one holds the data cannot be told)")
    try:
        try:
            frame = pd.read_parquet(file)
        except (TypeError, KeyError, IndexError, AttributeError):  # the file's pandas metadata is malformed: the table alone
            import pyarrow.parquet as pq

            frame = pq.read_table(file).to_pandas(ignore_metadata=True)
    except pd.errors.EmptyDataError:
        raise UserInputError(f"{name}: the file holds no table; write a header line and one row per (context, system)") from None
    except (pd.errors.ParserError, ValueError, OSError, ImportError, TypeError, KeyError, IndexError, AttributeError) as error:
        first = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        raise UserInputError(f"{name}: cannot be read as {kind.upper()} ({first}); check the file's format") from None
    if frame.empty:
        raise UserInputError(f"{name}: the table has a header but no rows; add one row per (context, system)")
    named = [level for level in frame.index.names if level is not None]
    if named:  # pandas writes a named index (context_id, say) into Parquet as the index, not a column
        clash = sorted(set(named) & set(map(str, frame.columns)))
        if clash:
            raise UserInputError(f"{name}: {clash[0]!r} is both the table's index and one of its columns; "
                                 "keep one (write the file with index=False)")
        frame = frame.reset_index()
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
    _check_field_names(fields, with_reference)
    places = where if where is not None else [f"row {k}" for k in range(len(frame))]
    required = fields.required(with_reference)
    rows = []
    for place, record in zip(places, frame.to_dict("records"), strict=True):
        row: dict[str, Any] = {}
        for column, field in required.items():
            row[column] = _field(record, field, column, f"{origin}, {place}")
        if not with_reference:
            raw = record.get(fields.reference)
            # a reference-free run does not read it: an empty cell (what a spreadsheet writes) is no reference
            blank = _absent(raw) or (isinstance(raw, str) and not raw.strip())
            if not blank and not isinstance(raw, str):
                raise UserInputError(f"{origin}, {place}: field {fields.reference!r} is {_a(type(raw).__name__)} "
                                     f"({_short(raw)}); this run does not read references (it is ranked without them), "
                                     "but the column is kept with the outputs: drop or rename the column, or write it as text")
            row["reference"] = None if blank else _field(record, fields.reference, "reference", f"{origin}, {place}")
        row["_place"] = place
        rows.append(row)
    checked = pd.DataFrame(rows)
    _check_name_variants(checked, origin)
    _check_look_alikes(checked, origin)
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


def _a(noun: str) -> str:
    """``"an int"``, ``"a list"``: the type named in a sentence."""
    return f"{'an' if noun[:1].lower() in 'aeiou' else 'a'} {noun}"


def _absent(value: Any) -> bool:
    return value is None or value is pd.NA or (isinstance(value, float) and math.isnan(value))


def _field(record: Mapping[str, Any], field: str, column: str, where: str) -> str:
    if field in record and _absent(record[field]):  # there, but null (JSON null, an empty Parquet cell)
        raise UserInputError(f"{where}: field {field!r} has no value (null); give every row its "
                             f"{column.replace('_', ' ')} as text")
    if field not in record:
        present = ", ".join(repr(k) for k, v in record.items() if not _absent(v)) or "none"
        # a name that looks like the field but is spelt with another script's letters ("оutput", Cyrillic о)
        twins = [str(k) for k in record if str(k) != field and unicodedata.normalize("NFKC", str(k)).casefold()
                 != field.casefold() and _skeleton(str(k)) == _skeleton(field)]
        spaced = [str(k) for k in record if str(k) != field and str(k).strip() == field]
        twin = (f"; {spaced[0]!r} is {field!r} with spaces around it: remove them from the name" if spaced else
                f"; {twins[0]!r} looks like {field!r} but is spelt with other letters "
                f"({', '.join(f'U+{ord(c):04X}' for c in twins[0] if not c.isascii())}): retype that name" if twins else "")
        raise UserInputError(f"{where}: missing field {field!r} (fields present: {present}){twin}; every row needs it, "
                             f"or name the field that holds the {column.replace('_', ' ')} with {FIELD_OPTIONS[column]}")
    value = record[field]
    if column in ("context_id", "system") and isinstance(value, numbers.Integral) and not isinstance(value, bool):
        value = str(int(value))  # integer ids (also numpy's, from Parquet) are common and unambiguous
    if not isinstance(value, str):
        raise UserInputError(
            f"{where}: field {field!r} is {_a(type(value).__name__)} ({_short(value)}), not a string; "
            f"write the {column.replace('_', ' ')} as text"
        )
    _check_encodable(value, field, where)
    if column in ("context_id", "system"):
        _check_label(value, field, column, where)
    if column == "output":
        return value  # an empty output is a real output (a system that wrote nothing) and is judged as such
    if not value.strip():
        raise UserInputError(f"{where}: field {field!r} is empty; every row needs a non-empty {column.replace('_', ' ')}")
    return value


#: A system's name is a label in the leaderboard, the report and the figure: at most this many characters.
MAX_NAME_LENGTH = 200


def _check_field_names(fields: FieldNames, with_reference: bool) -> None:
    """Two columns read from one input field (``--context-field system``) is a mistake in the options."""
    names = {"context_id": fields.context_id, "source": fields.source, "system": fields.system, "output": fields.output,
             "reference": fields.reference}
    seen: dict[str, str] = {}
    for column, field in names.items():
        if field in seen:
            raise UserInputError(f"{FIELD_OPTIONS[seen[field]]} and {FIELD_OPTIONS[column]} both name the field {field!r}; "
                                 "each must name its own field of the input")
        seen[field] = column


#: Characters that reorder the display of text around them (embeddings, overrides, isolates, marks).
BIDI_CONTROLS = frozenset("\u200e\u200f\u061c\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")


def _check_label(value: str, field: str, column: str, where: str) -> None:
    """A system name or context id is printed in every output file: no control characters (a newline
    would start a heading in report.md) and, for a system, a length a table and a figure can show."""
    bad = next((ch for ch in value if unicodedata.category(ch) == "Cc" or ch in "\u2028\u2029"), None)
    if bad is not None:
        raise UserInputError(f"{where}: field {field!r} ({_short(value)!r}) holds the control character {bad!r}; "
                             f"a {column.replace('_', ' ')} must be one line of printable text")
    bidi = next((ch for ch in value if ch in BIDI_CONTROLS), None)
    if bidi is not None:  # shown, the name would read differently from what it is ("\u202eateb" reads "beta")
        raise UserInputError(f"{where}: field {field!r} ({_short(value)!r}) holds the bidirectional control character "
                             f"U+{ord(bidi):04X} ({unicodedata.name(bidi, 'unnamed')}), which reorders how the name is "
                             f"shown; remove it")
    if column == "system" and len(value) > MAX_NAME_LENGTH:
        raise UserInputError(f"{where}: field {field!r} is {len(value)} characters long ({_short(value)!r}); a system "
                             f"name is a label in the leaderboard and the figure: use at most {MAX_NAME_LENGTH} characters")


def _invisible(ch: str) -> bool:
    """A character that shows as nothing: a format character (zero-width spaces, joiners, a byte-order
    mark), a combining grapheme joiner, a variation selector, a Hangul filler or a braille blank."""
    return (unicodedata.category(ch) == "Cf" or ch == "\u034f" or "\ufe00" <= ch <= "\ufe0f"
            or "\U000e0100" <= ch <= "\U000e01ef" or ch in _SHOWS_AS_BLANK)


def _shown_as(name: str) -> str:
    """What a reader sees of ``name``: Unicode-normalised (NFKC: an accent composed or not), without
    invisible characters (:func:`_invisible`) and surrounding spaces."""
    visible = "".join(ch for ch in unicodedata.normalize("NFKC", name) if not _invisible(ch))
    return " ".join(visible.split())


def _check_name_variants(checked: pd.DataFrame, origin: str) -> None:
    """``"A "`` and ``"A"`` would be two systems that look alike: names that differ only in surrounding
    spaces, invisible characters or Unicode normalisation are refused."""
    for column, what in (("system", "system"), ("context_id", "context")):
        names = list(dict.fromkeys(checked[column]))
        by_shown: dict[str, list[str]] = {}
        for value in names:
            if not visible_text(_shown_as(value)):
                place = checked["_place"][checked[column] == value].iloc[0]
                raise UserInputError(f"{origin}, {place}: the {what} name {value!r} shows as blank (it holds only "
                                     f"invisible or blank characters), so a reader could not tell which {what} it is; "
                                     "give it a visible name")
            by_shown.setdefault(_shown_as(value), []).append(value)
        for variants in by_shown.values():
            if len(variants) > 1:
                first, second = variants[:2]
                places = [checked["_place"][checked[column] == v].iloc[0] for v in (first, second)]
                how = ("spaces around them" if first.strip() == second.strip()
                       else "invisible characters, spacing or how their accents are encoded (Unicode normalisation)")
                raise UserInputError(
                    f"{origin}, {' and '.join(places)}: {what} names {first!r} and {second!r} differ only in "
                    f"{how}, so they would count as two {what}s that look the same; write the name the same way everywhere"
                )




#: Dashes and minus signs drawn like the hyphen-minus: "model‐v1" (U+2010) reads as "model-v1".
_DASH_LIKE = re.compile("[\u2010\u2011\u2012\u2013\u2212\ufe63\uff0d]")


def _skeleton(name: str) -> str:
    """What ``name`` reads as: :func:`_shown_as` with Cyrillic and Greek look-alikes as Latin letters and
    dash-like characters as the hyphen-minus."""
    return _DASH_LIKE.sub("-", _shown_as(name).translate(LOOK_ALIKES))


def _scripts(name: str) -> set[str]:
    """The scripts of the letters of ``name`` (LATIN, CYRILLIC, GREEK, ...), from their Unicode names."""
    found = set()
    for ch in name:
        if ch.isalpha():
            found.add(unicodedata.name(ch, "UNKNOWN").split(" ")[0])
    return found


def _check_look_alikes(checked: pd.DataFrame, origin: str) -> None:
    """Two system names that read the same but are written in different scripts (a Latin ``a`` and a
    Cyrillic ``а``) would be two systems a reader cannot tell apart: refused, naming both rows."""
    names = list(dict.fromkeys(checked["system"]))
    by_skeleton: dict[str, list[str]] = {}
    for value in names:
        by_skeleton.setdefault(_skeleton(value), []).append(value)
    for variants in by_skeleton.values():
        if len(variants) > 1:
            first, second = variants[:2]
            places = [checked["_place"][checked["system"] == v].iloc[0] for v in (first, second)]
            scripts = sorted(_scripts(first) ^ _scripts(second))
            how = (f"with letters of different scripts ({', '.join(s.title() for s in scripts)})" if scripts
                   else "with look-alike characters (a dash or minus sign for a hyphen)")
            raise UserInputError(
                f"{origin}, {' and '.join(places)}: system names {first!r} and {second!r} read the same but are written "
                f"{how}, so they would count as two systems that look alike; write the name the same way everywhere")


#: Characters that show as nothing although ``str.strip`` keeps them (zero-width marks are category Cf).
_SHOWS_AS_BLANK = frozenset("\u2800\u3164\u115f\u1160\uffa0")


def visible_text(text: str) -> str:
    """``text`` without what shows as blank: spaces, zero-width and format characters, braille blanks
    and Hangul fillers (an output made only of them looks empty to a reader, and to a judge)."""
    shown = "".join(ch for ch in text if not (ch.isspace() or _invisible(ch)
                                              or unicodedata.category(ch) in ("Cc", "Zs", "Zl", "Zp")))
    # marks that combine with nothing (a text of accents alone) show no letter either
    return shown if any(unicodedata.category(ch) not in ("Mn", "Me") for ch in shown) else ""


def design_warnings(frame: pd.DataFrame, control_strings: tuple[str, ...] | list[str] = (),
                    with_reference: bool = True) -> list[str]:
    """What a ranking of ``frame`` (checked) should say before judging, each in one line: systems
    missing from some contexts (an unbalanced design), systems whose output is the same whatever the
    context (a constant or null system: its wins measure the judge, not the system), empty or blank
    outputs (nothing to judge), system names that mix look-alike scripts, copied contexts, outputs that read
    alike, and what :func:`~nlgjudge.data.aimed_at_judge.text_warnings` finds in the texts (the reference's
    only when ``with_reference``: the judge reads it then)."""
    notes: list[str] = []
    contexts = frame["context_id"].nunique()
    present = frame.groupby("system", sort=False)["context_id"].nunique()
    missing = present[present < contexts]
    if len(missing):
        shown = ", ".join(f"{name!r} missing from {contexts - count} of {contexts}" for name, count in missing.items())
        notes.append(f"unbalanced design: some systems have no output in some contexts ({shown}); their scores rest on "
                     "fewer comparisons, and a system in a single context gets no interval")
    blank = frame[frame["output"].map(lambda text: not visible_text(str(text)))]
    for system, part in blank.groupby("system", sort=False):
        where = ", ".join(repr(str(c)) for c in part["context_id"].head(3)) + (" ..." if len(part) > 3 else "")
        notes.append(f"system {system!r} has an empty or blank output in {len(part)} of its "
                     f"{int(present.get(system, len(part)))} contexts ({where}): the judge compares nothing with the "
                     "other system's text there, and its wins or losses say nothing about the system; fix those rows "
                     "or leave the system out")
    # Latin mixed with Cyrillic or Greek can hide a look-alike; Latin with Han or Arabic cannot
    mixed = [name for name in dict.fromkeys(frame["system"]) if len(_scripts(name) & CONFUSABLE_SCRIPTS) > 1]
    if mixed:
        notes.append(f"system names mixing letters of different scripts (look-alikes): {', '.join(map(repr, mixed))}")
    copies = _copied_contexts(frame)
    if copies:
        shown = "; ".join(f"{', '.join(map(repr, later[:3]))}{' ...' if len(later) > 3 else ''} repeat {first!r}"
                          for first, later in list(copies.items())[:3])
        notes.append(f"contexts that are copies of another (the same source and the same outputs): {shown}; each copy "
                     "counts as a separate context in the intervals, which then look surer than the data are: keep one")
    notes += text_warnings(frame, control_strings, with_reference)
    alike = _look_alike_outputs(frame)
    if alike:
        (first, second), where = next(iter(alike.items()))
        others = f"; {len(alike) - 1} other pair{'s' if len(alike) > 2 else ''} too" if len(alike) > 1 else ""
        notes.append(f"outputs that read the same but differ in their characters: systems {first!r} and {second!r} in "
                     f"{len(where)} context{'s' if len(where) != 1 else ''} ({', '.join(map(repr, where[:3]))}"
                     f"{' ...' if len(where) > 3 else ''}){others}. Texts equal once Unicode-normalised are ties; texts "
                     "with look-alike letters of another script are judged as different texts, and whichever the judge "
                     "prefers wins by a difference no reader sees: look at those outputs")
    return notes


def _look_alike_outputs(frame: pd.DataFrame) -> dict[tuple[str, str], list[str]]:
    """{(system, system): contexts} where the two systems' outputs differ as strings but read the same
    (:func:`_skeleton` of their NFC forms: another normalisation, or look-alike letters of another script)."""
    found: dict[tuple[str, str], list[str]] = {}
    for context_id, part in frame.groupby("context_id", sort=False):
        rows = [(str(s), str(o)) for s, o in zip(part["system"], part["output"], strict=True)]
        for k, (one, text_one) in enumerate(rows):
            for two, text_two in rows[k + 1:]:
                if text_one != text_two and (_skeleton(unicodedata.normalize("NFC", text_one))
                                             == _skeleton(unicodedata.normalize("NFC", text_two))):
                    found.setdefault((one, two), []).append(str(context_id))
    return found


def _copied_contexts(frame: pd.DataFrame) -> dict[str, list[str]]:
    """{first context: the later contexts with the same source and the same output per system}."""
    seen: dict[tuple, str] = {}
    copies: dict[str, list[str]] = {}
    for context_id, part in frame.groupby("context_id", sort=False):
        key = (str(part["source"].iloc[0]), tuple(sorted(zip(part["system"].astype(str), part["output"].astype(str)))))
        if key in seen:
            copies.setdefault(seen[key], []).append(str(context_id))
        else:
            seen[key] = str(context_id)
    return copies


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
    _check_connected(checked, origin)


def _check_connected(checked: pd.DataFrame, origin: str) -> None:
    """Systems that never meet, directly or through others (the comparison graph in parts), have
    scores on no common scale: one leaderboard of them would be silently wrong, so it is refused."""
    parent = {name: name for name in checked["system"]}

    def root(name: str) -> str:
        while parent[name] != name:
            parent[name] = parent[parent[name]]
            name = parent[name]
        return name

    for _, part in checked.groupby("context_id", sort=False):
        first, *rest = list(part["system"])
        for other in rest:
            parent[root(other)] = root(first)
    groups: dict[str, list[str]] = {}
    for name in dict.fromkeys(checked["system"]):
        groups.setdefault(root(name), []).append(name)
    if len(groups) < 2:
        return
    parts = list(groups.values())

    def describe(names: list[str]) -> str:
        shown = ", ".join(repr(n) for n in names[:4]) + (f" and {len(names) - 4} more" if len(names) > 4 else "")
        return "{" + shown + "}"

    more = f" (and {len(parts) - 2} more groups)" if len(parts) > 2 else ""
    raise UserInputError(
        f"{origin}: the systems fall into {len(parts)} groups that are never compared with each other, "
        f"{describe(parts[0])} and {describe(parts[1])}{more}, so their scores have no common scale; add contexts "
        "where systems of different groups meet, or rank each group in its own run"
    )
