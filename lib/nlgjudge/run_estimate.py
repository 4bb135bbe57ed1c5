"""How long a ``nlgjudge rank`` run will take, from the rate measured on this machine: the estimate the
command line prints before and while judging, and the rate it keeps for the next run (beside the
output cache, in a file it writes and never replaces when another file sits under its name)."""

from __future__ import annotations

import json
import os
import re
import sys
import tempfile
from pathlib import Path
from typing import Any

import pandas as pd

from nlgjudge.printing import emit

#: A run longer than this is told how to make it shorter (``--budget``).
LONG_RUN_SECONDS = 15 * 60



#: The mark of the rates file this tool writes: a file under its name without it is a user's, never replaced.
RATES_WRITER = "nlgjudge rank"


def rates_path() -> Path:
    """Where measured rates are kept: beside the output cache (one machine's cache, one machine's rates)."""
    from nlgjudge.config import output_cache_path

    return output_cache_path("outputs.sqlite").parent / "rank-rates.json"


def _duration(seconds: float) -> str:
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 90 * 60:
        return f"{seconds / 60:.0f} min"
    return f"{int(seconds // 3600)} h {int(seconds % 3600 // 60)} min"


def stored_rate(stored: Any) -> dict[str, Any] | None:
    """An earlier run's stored rate, or None unless it reads as one: a number of seconds per comparison
    (above 0, below a day), a count of comparisons and a date (the file is the user's to edit or damage)."""
    def number(value: Any) -> bool:
        return isinstance(value, (int, float)) and not isinstance(value, bool)

    valid = (isinstance(stored, dict) and number(stored.get("seconds_per_comparison"))
             and 0 < stored["seconds_per_comparison"] < 86_400 and number(stored.get("comparisons"))
             and isinstance(stored["comparisons"], int) and stored["comparisons"] > 0
             and isinstance(stored.get("measured_on"), str) and re.fullmatch(r"\d{4}-\d{2}-\d{2}", stored["measured_on"]))
    return stored if valid else None


class RunEstimate:
    """What the command line says about a run's size and duration: before judging, the number of
    comparisons and (if this model's rate was measured on this machine by an earlier run) the time
    they should take; once the first comparisons are made, the time the rest should take at the rate
    measured on them. Over :data:`LONG_RUN_SECONDS` it suggests ``--budget``. The run's own rate is
    stored at the end, for the next run's estimate."""

    #: The rate of this run is reported once this many comparisons, or this many seconds, are measured.
    MEASURE_COMPARISONS, MEASURE_SECONDS = 8, 5.0

    def __init__(self, judge: Any, frame: pd.DataFrame, prompt: Any, budget: float, stream: Any = None) -> None:
        import platform

        from nlgjudge.studies.prompting import prompt_style
        from nlgjudge.studies.rank import comparison_request, context_plans, planned_counts

        self.stream = stream if stream is not None else sys.stderr
        self.budget = budget
        # A rate holds for one model on one runtime with one thread setting on one machine.
        threads = getattr(judge, "threads", None) or "auto"
        self.key = f"{judge.handle.name} | {getattr(judge, 'backend', '?')} | threads {threads} | {platform.node()}"
        self.name = judge.handle.name
        systems = list(dict.fromkeys(frame["system"]))
        self.plans = context_plans(frame, systems)
        self.planned = sum(planned_counts(self.plans, budget).values())
        self.cached = 0
        if budget == 1.0 and self.planned:
            style = prompt_style(judge.handle, "auto")
            requests = [comparison_request(plan, i, j, prompt, style, systems)
                        for plan in self.plans for i, j in plan.judged_pairs()]
            self.cached = int(sum(judge.cached_mask("label_probs", requests)))
        self.stored = stored_rate((self._read() or {}).get(self.key))
        self.measured_shown = False
        self.last: Any = None

    def _read(self) -> dict[str, Any] | None:
        """The kept rates; None when the file there is not this tool's, marked as written by it (it is then
        never replaced: a user's file of that name, or a link, is left as it is)."""
        path = rates_path()
        if path.is_symlink():
            return None
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return {}
        except (OSError, ValueError):
            return None
        if not (isinstance(data, dict) and data.get("written_by") == RATES_WRITER and isinstance(data.get("rates"), dict)):
            return None
        return {k: v for k, v in data["rates"].items() if isinstance(v, dict)}

    def _say(self, text: str) -> None:
        emit(text, self.stream)

    def _advice(self, seconds: float, rate: float) -> str:
        if seconds <= LONG_RUN_SECONDS:
            return ""
        from nlgjudge.studies.rank import planned_counts

        for budget in (0.5, 0.25, 0.1, 0.05, 0.02, 0.01):
            count = sum(planned_counts(self.plans, budget).values())
            if budget < self.budget and count * rate <= LONG_RUN_SECONDS:
                break
        return (f" That is long: --budget {budget:g} judges {count} of the comparisons, chosen by active selection "
                f"(about {_duration(count * rate)}); a run stopped with Ctrl-C keeps the judgments made so far.")

    def announce(self) -> None:
        todo = self.planned - self.cached
        what = f"rank: {self.planned} comparisons to make ({len(self.plans)} contexts"
        what += f"; {self.cached} already in the output cache)." if self.budget == 1.0 else f", budget {self.budget:g})."
        if not todo:
            self._say(what)
        elif self.stored:
            rate = float(self.stored["seconds_per_comparison"])
            self._say(f"{what} At {rate:.3g} s per comparison (measured on this machine by an earlier run of {self.name}, "
                      f"over {self.stored['comparisons']} comparisons on {self.stored['measured_on']}) they should take "
                      f"about {_duration(todo * rate)}.{self._advice(todo * rate, rate)}")
        else:
            self._say(f"{what} How long they take is printed after the first ones (no rate of {self.name} measured "
                      "on this machine yet).")

    def step(self, state: Any) -> None:
        """After each step of judging (:class:`nlgjudge.studies.rank.JudgingProgress`)."""
        self.last = state
        left = state.total - state.done
        # Told even after a stored rate's estimate: this run's texts may be longer or shorter.
        if self.measured_shown or not state.computed or not left:
            return
        if state.computed < self.MEASURE_COMPARISONS and state.computed_seconds < self.MEASURE_SECONDS:
            return
        self.measured_shown = True
        rate = state.seconds_per_comparison
        self._say(f"rank: measured {rate:.3g} s per comparison over the first {state.computed} on this machine: the "
                  f"other {left} should take about {_duration(left * rate)}.{self._advice(left * rate, rate)}")

    def store(self) -> None:
        """Keep this run's measured rate for the next run's estimate (best effort: an estimate is optional)."""
        state = self.last
        if state is None or not state.computed:
            return
        from datetime import date

        data = self._read()
        if data is None:  # a file the tool did not write sits under its name: left as it is
            return
        data[self.key] = {"seconds_per_comparison": state.computed_seconds / state.computed,
                          "comparisons": state.computed, "measured_on": date.today().isoformat()}
        path = rates_path()
        temporary = None
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            handle, temporary = tempfile.mkstemp(prefix=".rank-rates.", dir=path.parent)
            with os.fdopen(handle, "w", encoding="utf-8") as stream:
                json.dump({"written_by": RATES_WRITER, "rates": data}, stream, indent=1, sort_keys=True)
            os.replace(temporary, path)
        except OSError:
            if temporary is not None and os.path.exists(temporary):
                os.unlink(temporary)
