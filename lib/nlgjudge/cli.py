"""The ``nlgjudge`` command (also ``python -m nlgjudge``): one entry point, one subcommand per tool.

    nlgjudge book build            # execute stale chapters, build the HTML book
    nlgjudge studies list          # the registered studies; `nlgjudge studies comparative ...` runs one
    nlgjudge cache stats           # what the output cache holds
    nlgjudge bench --quick         # the judge-engine benchmark (nlgjudge bench NAME ...: any benchmark)
    nlgjudge rank outputs.jsonl --model NAME --out DIR   # rank your own systems' outputs

Each subcommand is the module of the same name (``python -m nlgjudge.book`` and so on); the rest
of the command line goes to it unchanged. Modules are imported only for the subcommand asked for.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Sequence

#: Subcommand -> (module whose ``main(argv)`` it runs, one line of help).
SUBCOMMANDS: dict[str, tuple[str, str]] = {
    "book": ("nlgjudge.book", "execute the chapters and build the book (list | chapter NAME -p k v | html | build)"),
    "studies": ("nlgjudge.studies.__main__", "compute a registered study's model outputs (list | plan [--run] | STUDY ...)"),
    "cache": ("nlgjudge.cache.__main__", "the model-output cache and released outputs (stats | export | import ...)"),
    "bench": ("nlgjudge.bench", "the benchmarks: NAME (engine, sharing, decoding, floating-trunk, label-leaves, server, gpu-check) [ARGS]"),
    "rank": ("nlgjudge.ranking", "rank your own systems' outputs with a judge (INPUT --model NAME --out DIR)"),
}


def usage() -> str:
    width = max(map(len, SUBCOMMANDS))
    lines = ["usage: nlgjudge SUBCOMMAND [ARGS...]   (or python -m nlgjudge ...)", "", "subcommands:"]
    lines += [f"  {name:<{width}}  {help_text}" for name, (_, help_text) in SUBCOMMANDS.items()]
    lines += ["", "`nlgjudge SUBCOMMAND --help` shows a subcommand's own options."]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] in ("-h", "--help", "help"):
        if len(args) > 1:
            print(f"nlgjudge: {args[0]} takes no arguments; got {' '.join(args[1:])}\n\n{usage()}", file=sys.stderr)
            return 2
        print(usage())
        return 0 if args else 2
    name, rest = args[0], args[1:]
    if name not in SUBCOMMANDS:
        print(f"nlgjudge: unknown subcommand {name!r}\n\n{usage()}", file=sys.stderr)
        return 2
    from nlgjudge.interrupt import run_interruptible

    def entry(argv: Sequence[str] | None) -> int:  # imported inside: a signal while the subcommand loads ends in one line too
        command: Callable[[Sequence[str] | None], int] = importlib.import_module(SUBCOMMANDS[name][0]).main
        return command(argv)

    return run_interruptible(entry, rest)


if __name__ == "__main__":
    sys.exit(main())
