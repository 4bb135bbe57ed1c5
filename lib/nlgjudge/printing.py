"""The command line's one printer: every message ``nlgjudge rank`` prints passes through :func:`emit`
(control characters escaped, the API key hidden, a closed or full output stream handled without a
traceback, :data:`UNWRITTEN` recording what could not be printed)."""

from __future__ import annotations

import os
import sys
from typing import Any

from nlgjudge.safety import terminal_text

#: Lines the command could not print (its output stream failed): the exit status says so.
UNWRITTEN: list[str] = []


def emit(text: str, stream: Any = None, *, secrets: bool = True) -> None:
    """``text`` printed for a terminal: control characters shown as escapes, the API key hidden in any
    form a server may have quoted it (every message the command prints passes here; ``secrets=False``
    for the leaderboard, the user's own names, which a pattern for keys could mistake: "sk-learn"), and
    characters the terminal's encoding cannot show escaped; a reader that stopped reading (``| head``)
    ends the output quietly, not with a traceback."""
    from nlgjudge.engine.server.client import scrub

    stream = stream if stream is not None else sys.stdout
    encoding = getattr(stream, "encoding", None) or "utf-8"
    prefix = next((p for p in ("error: ", "warning: ") if text.startswith(p)), "")
    body = terminal_text(text[len(prefix):])
    line = (prefix + (scrub(body) if secrets else body)).encode(encoding, "backslashreplace").decode(encoding, "replace")
    try:
        print(line, file=stream, flush=True)
    except OSError as error:  # a reader that stopped (| head), or a full disk behind the stream
        try:  # the rest of the output goes nowhere, and Python's own flush at exit finds nothing to fail on
            os.dup2(os.open(os.devnull, os.O_WRONLY), stream.fileno())
        except (OSError, ValueError, AttributeError):
            pass
        if not isinstance(error, BrokenPipeError):
            UNWRITTEN.append(f"cannot write to {'standard output' if stream is sys.stdout else 'the terminal'} "
                             f"({error.strerror or error}); the files in --out are what this run wrote")
