"""Ctrl-C and SIGTERM at the command line: one line, the right exit status, nothing left behind.

:func:`run_interruptible` runs a command's ``main``: SIGTERM (and SIGHUP) are turned into the same
clean unwinding as Ctrl-C, so every ``with`` block and ``finally`` runs (the ``--out`` lock and a
staging folder are removed, the output cache's transaction is rolled back or committed whole); then
one line says how many model outputs this run stored in the output cache, which a rerun of the
same command reads instead of computing them again, and the exit status is the shell's for the
signal: 130 for Ctrl-C, 143 for SIGTERM, 129 for SIGHUP. No traceback.
"""

from __future__ import annotations

import signal
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from typing import Any

#: Model outputs stored in the output cache by this process (counted by the cache's writes).
STORED = [0]


class Terminated(KeyboardInterrupt):
    """A termination signal (SIGTERM, SIGHUP) unwinding the command like Ctrl-C."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


def _raise_terminated(signum: int, frame: object) -> None:
    raise Terminated(signum)


@contextmanager
def _handling(signals: Sequence[int | None], handler: Any) -> Iterator[None]:
    """``handler`` for each of ``signals`` (None: one this platform lacks) for the block, then the previous ones."""
    previous = {}
    for sig in signals:
        if sig is None:
            continue
        try:
            previous[sig] = signal.signal(sig, handler)
        except (ValueError, OSError):  # not the main thread
            pass
    try:
        yield
    finally:
        for sig, before in previous.items():
            signal.signal(sig, before)


def termination_as_interrupt() -> AbstractContextManager[None]:
    """SIGTERM and SIGHUP raise :class:`Terminated` in the main thread for the block."""
    return _handling((signal.SIGTERM, getattr(signal, "SIGHUP", None)), _raise_terminated)


def interrupts_held() -> AbstractContextManager[None]:
    """Ctrl-C, SIGTERM and SIGHUP ignored for the block: a run whose results are all written finishes its
    printing and its model's release, instead of ending in a traceback (or a silent 130) with its files there."""
    return _handling((signal.SIGINT, signal.SIGTERM, getattr(signal, "SIGHUP", None)), signal.SIG_IGN)


def interrupted_line(signum: int) -> str:
    kept = STORED[0]
    name = {signal.SIGINT: "interrupted", signal.SIGTERM: "terminated"}.get(signum, "stopped by a hang-up")
    if kept:
        what = f"{kept} model output{'s' if kept != 1 else ''} of this run kept in the output cache"
    else:
        what = "no model output of this run was finished yet (those of earlier runs stay in the output cache)"
    return f"{name}: {what}; run the same command to resume (nothing is computed twice)"


def run_interruptible(main: Callable[[Sequence[str] | None], int | None], argv: Sequence[str] | None = None) -> int:
    """``main(argv)``, with Ctrl-C/SIGTERM/SIGHUP ending it in one line and the shell's exit status."""
    try:
        with termination_as_interrupt():
            return int(main(argv) or 0)
    except Terminated as stop:
        print(interrupted_line(stop.signum), file=sys.stderr)
        return 128 + int(stop.signum)
    except KeyboardInterrupt:
        print(interrupted_line(signal.SIGINT), file=sys.stderr)
        return 130
