"""``python -m nlgjudge.cache``: export a study's outputs, import released outputs, show what is cached."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from nlgjudge.cache.release import OutputsFormatError, StaleExportError
from nlgjudge.cache.store import CacheError, OutputCache


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m nlgjudge.cache",
        description="Manage the model-output cache and the released outputs under data/outputs.",
    )
    commands = parser.add_subparsers(dest="command", required=True)
    db_help = "cache database (default: $NLGJUDGE_CACHE_DIR/outputs.sqlite or ~/.cache/nlgjudge/outputs.sqlite)"

    export = commands.add_parser("export", help="write a study's outputs as deterministic JSONL files")
    export.add_argument("study", help="study name, e.g. comparative-summeval")
    export.add_argument("--out", type=Path, default=None, help="folder to write (default: data/outputs/STUDY)")
    export.add_argument("--db", type=Path, default=None, help=db_help)

    imported = commands.add_parser("import", help="import released outputs (a study folder or a .jsonl file)")
    imported.add_argument("path", type=Path)
    imported.add_argument("--study", default=None, help="study to file them under (default: from the manifest/folder)")
    imported.add_argument("--db", type=Path, default=None, help=db_help)

    stats = commands.add_parser("stats", help="count cached outputs by study, model and operation")
    stats.add_argument("--db", type=Path, default=None, help=db_help)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    cache = OutputCache(args.db)
    try:
        if args.command == "export":
            paths = cache.export_study(args.study, args.out)
            records = cache.count(args.study)
            print(f"exported {records} outputs of study {args.study!r} from {cache.path}:")
            for path in paths:
                print(f"  {path}")
        elif args.command == "import":
            before = cache.count()
            new = cache.import_outputs(args.path, study=args.study)
            print(f"imported {new} new outputs from {args.path} into {cache.path} ({before + new} in all)")
        else:
            print(f"{cache.path}: {cache.count()} outputs")
            for study, model_id, operation, count in cache.summary():
                print(f"  {study or '(no study)'}\t{model_id}\t{operation}\t{count}")
    except (CacheError, OutputsFormatError, StaleExportError, FileNotFoundError, ValueError, KeyError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    finally:
        cache.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
