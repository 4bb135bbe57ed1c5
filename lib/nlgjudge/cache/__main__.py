"""``python -m nlgjudge.cache``: export a study's outputs, import released outputs, show or check what is cached.

Every failure is one line on stderr (``error: ...``, what is wrong and how to fix it) and a non-zero exit
status, never a traceback: 2 for errors, 1 when ``check`` finds the database damaged.
"""

from __future__ import annotations

import argparse
import os
import sqlite3
import sys
from collections.abc import Sequence
from pathlib import Path

from nlgjudge.cache.errors import CacheDamagedError, CacheError, OutputsFormatError, StaleExportError
from nlgjudge.cache.store import OutputCache, damaged_advice

EXIT_ERROR = 2
EXIT_DAMAGED = 1


def _db_path(text: str) -> Path:
    """``--db``: a non-empty path (an empty one would silently mean the current folder)."""
    if not text.strip():
        raise argparse.ArgumentTypeError("is empty: name the cache file, e.g. ~/.cache/nlgjudge/outputs.sqlite")
    return Path(text)


def _out_path(text: str) -> Path:
    if not text.strip():
        raise argparse.ArgumentTypeError("is empty: name the folder to write, or leave --out out for data/outputs/STUDY")
    return Path(text)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m nlgjudge.cache",
        description="Manage the model-output cache and the released outputs under data/outputs.",
    )
    commands = parser.add_subparsers(dest="command", required=True)
    db_help = "cache database (default: $NLGJUDGE_CACHE_DIR/outputs.sqlite or ~/.cache/nlgjudge/outputs.sqlite)"

    export = commands.add_parser("export", help="write a study's outputs as deterministic JSONL files")
    export.add_argument("study", help="study name, e.g. comparative-summeval")
    export.add_argument("--out", type=_out_path, default=None, help="folder to write (default: data/outputs/STUDY)")
    export.add_argument("--db", type=_db_path, default=None, help=db_help)

    imported = commands.add_parser("import", help="import released outputs (a study folder or a .jsonl file)")
    imported.add_argument("path", type=Path)
    imported.add_argument("--study", default=None, help="study to file them under (default: from the manifest/folder)")
    imported.add_argument(
        "--allow-unverified",
        action="store_true",
        help="also import .jsonl files that have no MANIFEST.json beside them (their content is not checked)",
    )
    imported.add_argument("--db", type=_db_path, default=None, help=db_help)

    stats = commands.add_parser("stats", help="count cached outputs by study, model and operation")
    stats.add_argument("--db", type=_db_path, default=None, help=db_help)

    check = commands.add_parser(
        "check", help="run SQLite's integrity check on the cache (exit 0 when sound, 1 when damaged)"
    )
    check.add_argument("--quick", action="store_true", help="PRAGMA quick_check instead of the full integrity_check")
    check.add_argument("--db", type=_db_path, default=None, help=db_help)
    return parser


def _one_line(error: BaseException) -> str:
    return " ".join(str(error).split("\n"))


def _check_before(args: argparse.Namespace, cache: OutputCache) -> None:
    """What can be refused before any work: a cache that does not exist for a command that only
    reads it (opening it would create an empty one and report 0 outputs), and an ``--out`` folder
    that cannot be written (found by creating it and writing a file, not by permission bits: root
    ignores them)."""
    if cache.path.is_dir():  # for every command: a folder is never a cache file, whatever is in it
        raise CacheError(f"no output cache at {cache.path}: it is a folder, not a cache file; name the file with --db "
                         f"(e.g. --db {cache.path / 'outputs.sqlite'})")
    if cache.path.exists() and not cache.path.is_file():  # a device, a named pipe or a socket is never a cache file
        raise CacheError(f"no output cache at {cache.path}: it exists but is not a regular file (a device, a named pipe "
                         "or a socket); name the cache file with --db")
    if args.command != "import" and not cache.path.is_file():
        raise CacheError(
            f"no output cache at {cache.path}: it does not exist (nothing has been computed or imported there); run a study, or "
            "`nlgjudge cache import data/outputs/STUDY`, or name another cache with --db"
        )
    if args.command == "export" and args.out is not None:
        cache.count(args.study)  # a foreign or damaged cache is refused before anything is written
        out = args.out.expanduser()
        if out.exists() and not out.is_dir():  # a file there is the user's: said as such, and left alone
            raise CacheError(f"--out {args.out}: exists and is not a folder; pass --out a folder (a new one is made)")
        created = [p for p in (out, *out.parents) if not p.exists()]
        try:
            out.mkdir(parents=True, exist_ok=True)
            probe = out / f".nlgjudge-write-test-{os.getpid()}"
            probe.write_bytes(b"")
            probe.unlink()
        except OSError as error:
            _remove_empty(created)
            raise CacheError(f"--out {args.out}: cannot write there ({error.strerror or error}); choose another folder") from None
        args.created = created


def _remove_empty(folders: Sequence[Path]) -> None:
    """Remove the folders this run created (innermost first) if they are still empty."""
    for folder in folders:
        try:
            folder.rmdir()
        except OSError:
            return


def _run(args: argparse.Namespace, cache: OutputCache) -> int:
    _check_before(args, cache)
    if args.command == "export":
        try:
            paths = cache.export_study(args.study, args.out)
        except BaseException:
            _remove_empty(getattr(args, "created", []))  # nothing written: no empty folder left behind
            raise
        records = cache.count(args.study)
        print(f"exported {records} outputs of study {args.study!r} from {cache.path}:")
        for path in paths:
            print(f"  {path}")
    elif args.command == "import":
        before = cache.count()
        new = cache.import_outputs(args.path, study=args.study, allow_unverified=args.allow_unverified)
        print(f"imported {new} new outputs from {args.path} into {cache.path} ({before + new} in all)")
    elif args.command == "check":
        try:
            problems = cache.check(quick=args.quick)
        except CacheDamagedError as error:
            print(f"error: {_one_line(error)}", file=sys.stderr)
            return EXIT_DAMAGED
        if problems:
            more = f" (and {len(problems) - 1} more problem(s))" if len(problems) > 1 else ""
            print(
                f"error: {cache.path} is damaged: {_one_line(problems[0])}{more}; {damaged_advice(cache.path)}.",
                file=sys.stderr,
            )
            return EXIT_DAMAGED
        print(f"{cache.path}: ok ({cache.count()} outputs)")
    else:
        total, rows = cache.count(), cache.summary()  # both read before anything is printed
        print(f"{cache.path}: {total} outputs")
        for study, model_id, operation, count in rows:
            print(f"  {study or '(no study)'}\t{model_id}\t{operation}\t{count}")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    cache = OutputCache(args.db)
    try:
        return _run(args, cache)
    except BrokenPipeError:  # whoever read our output left (e.g. `| head`); the work itself is done
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # no second error at exit
        return 0
    except (CacheError, OutputsFormatError, StaleExportError, OSError, ValueError, KeyError) as error:
        print(f"error: {_one_line(error)}", file=sys.stderr)
        return EXIT_ERROR
    except sqlite3.Error as error:  # anything the cache did not translate: still one line, never a traceback
        print(f"error: {cache.path}: {_one_line(error)}", file=sys.stderr)
        return EXIT_ERROR
    finally:
        cache.close()


if __name__ == "__main__":
    from nlgjudge.interrupt import run_interruptible

    sys.exit(run_interruptible(main))
