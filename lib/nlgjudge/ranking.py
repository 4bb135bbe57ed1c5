"""Rank your own systems' outputs the way the book does: ``nlgjudge rank`` and :func:`rank`.

    nlgjudge rank outputs.jsonl --model qwen2.5-coder-1.5b-instruct --out ranking/
    python -m nlgjudge rank outputs.csv --model smollm2-135m-instruct --out ranking/ --budget 0.5

Input: one row per (context, system) with ``context_id``, ``source``, ``system``, ``output`` and
optionally ``reference`` (JSON Lines, CSV or Parquet; other field names with ``--context-field`` ...).
Method (the book's chapters): every ordered pair of a context's systems is compared by the judge's
label probabilities of " A" and " B", in both orders; the positional bias is removed with the
debiasing threshold fitted on the run; Bradley-Terry scores are fitted on the debiased decisions,
with intervals from a bootstrap over contexts (:mod:`nlgjudge.analysis.rank`). ``--budget`` below 1
makes that fraction of the comparisons, chosen by active selection (:mod:`nlgjudge.studies.rank`).

Output folder: ``leaderboard.csv`` (system, rank, score, ci_low, ci_high, wins, comparisons, ...),
``judgments.jsonl`` (every context and pair with both orders' P(A)), ``win_matrix.png`` and
``report.md`` (judge, prompt, P(A) before and after debiasing, budget used, warnings). The files are
written only after every judgment is made, each replaced whole; judgments go through the output
cache, so a run killed half-way and started again computes nothing twice.

Bad input (missing file, bad JSON, missing field, non-text output, empty file, a repeated
(context, system), a context with one system, a budget outside (0, 1], an unknown model) is one
``error:`` line naming the file, line and fix, exit status 2, and nothing written.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from nlgjudge.data.user_outputs import FieldNames, UserInputError, check_user_outputs, read_user_outputs

OUTPUT_FILES = ("leaderboard.csv", "judgments.jsonl", "win_matrix.png", "report.md")


@dataclass(frozen=True)
class RankResult:
    """Everything a ranking run produced (``leaderboard`` is what :func:`rank` returns)."""

    leaderboard: pd.DataFrame
    pairs: pd.DataFrame
    analysis: Any  # nlgjudge.analysis.rank.RankAnalysis
    report: str
    judge: str
    runtime: str
    warnings: list[str] = field(default_factory=list)
    written: list[Path] = field(default_factory=list)


def _check_budget(budget: float) -> float:
    try:
        value = float(budget)
    except (TypeError, ValueError):
        raise UserInputError(f"budget {budget!r} is not a number; pass a fraction in (0, 1], e.g. --budget 0.5") from None
    if not 0.0 < value <= 1.0:
        raise UserInputError(f"budget {budget!r} is outside (0, 1]; it is the fraction of all ordered pairs to judge "
                             "(1 = every pair in both orders), e.g. --budget 0.5")
    return value


def rank_outputs(
    outputs: pd.DataFrame | str | os.PathLike[str],
    model: str | None = None,
    *,
    judge: Any = None,
    aspect: str = "OVR",
    noun: str = "summary",
    prompt_file: str | os.PathLike[str] | None = None,
    budget: float = 1.0,
    seed: int = 0,
    with_reference: bool = False,
    fields: FieldNames = FieldNames(),
    cache: Any = None,
    backend: str | None = None,
    allow_compute: bool = True,
    progress: bool = True,
    n_boot: int = 500,
    out: str | os.PathLike[str] | None = None,
) -> RankResult:
    """Rank the systems of ``outputs`` (a frame or a file path) with the judge ``model``.

    ``judge`` may be passed instead of ``model`` (an :class:`nlgjudge.engine.Judge`). ``cache`` is the
    output cache (default: the user's). ``allow_compute=False`` uses cached judgments only and raises
    :class:`nlgjudge.studies.rank.NotCachedError` if one is missing (the book's chapter does this).
    ``out``: a folder to write the four files to (see the module docstring).
    """
    from nlgjudge.analysis.rank import analyse, family_warnings, pair_records, report_markdown
    from nlgjudge.prompts.ranking import RankPrompt, prompt_from_file
    from nlgjudge.studies.rank import context_plans, judge_comparisons, planned_counts

    budget = _check_budget(budget)
    if isinstance(outputs, pd.DataFrame):
        frame = check_user_outputs(outputs, fields, with_reference=with_reference)
    else:
        frame = read_user_outputs(outputs, fields, with_reference=with_reference)
    prompt = (prompt_from_file(prompt_file, noun=noun, with_reference=with_reference) if prompt_file is not None
              else RankPrompt(aspect=aspect, noun=noun, with_reference=with_reference))
    if out is not None:
        _check_out(Path(out))
    if judge is None:
        if model is None:
            raise UserInputError("no judge: pass model= (a packaged short name, hub id or local folder)")
        from nlgjudge.engine import Judge

        judge = Judge(model, cache=cache, study="rank", backend=backend, progress=progress and budget == 1.0)
    systems = list(dict.fromkeys(frame["system"]))
    plans = context_plans(frame, systems)
    planned = sum(planned_counts(plans, budget).values())
    possible = sum(len(p.judged_pairs()) for p in plans)
    judgments = judge_comparisons(judge, frame, systems, prompt, budget=budget, seed=seed, allow_compute=allow_compute,
                                  progress=progress)
    analysis = analyse(judgments, systems, n_boot=n_boot, seed=seed)
    spec_family = _family(judge.handle)
    family_notes = family_warnings(judge.handle.name, spec_family, systems)
    runtime = judge.runtime_description() if hasattr(judge, "runtime_description") else "unknown runtime"
    report = report_markdown(analysis, judge=judge.handle.name, runtime=runtime, prompt=prompt.describe(), budget=budget,
                             planned=planned, possible=possible, extra_warnings=family_notes)
    result = RankResult(
        leaderboard=analysis.leaderboard, pairs=pair_records(analysis, systems), analysis=analysis, report=report,
        judge=judge.handle.name, runtime=runtime, warnings=family_notes + analysis.warnings,
    )
    if out is not None:
        result.written.extend(write_outputs(result, Path(out)))
    return result


def rank(outputs: pd.DataFrame | str | os.PathLike[str], model: str | None = None, **options: Any) -> pd.DataFrame:
    """The leaderboard of :func:`rank_outputs` (system, rank, score, ci_low, ci_high, wins, comparisons, ...)."""
    return rank_outputs(outputs, model, **options).leaderboard


def _family(handle: Any) -> str:
    from nlgjudge.models import PACKAGED_MODELS

    if getattr(handle, "source", None) == "packaged" and handle.location in PACKAGED_MODELS:
        return PACKAGED_MODELS[handle.location].family
    # A hub id or folder: its first word ("Qwen/Qwen2.5-7B" -> "qwen2"), a rough family for the warning.
    base = str(getattr(handle, "name", "")).rsplit("/", 1)[-1].lower()
    word = "".join(ch for ch in base.split("-")[0] if ch.isalpha())
    return word


def _check_out(folder: Path) -> None:
    if folder.exists() and not folder.is_dir():
        raise UserInputError(f"{folder}: exists and is not a folder; pass --out a folder (it is created if missing)")
    parent = folder if folder.exists() else folder.parent
    if parent.exists() and not os.access(parent, os.W_OK):
        raise UserInputError(f"{folder}: cannot write there; pass --out a folder you can write to")


def write_outputs(result: RankResult, folder: Path) -> list[Path]:
    """Write the four files into ``folder`` (created if missing), each replaced whole (written beside
    and renamed), so a killed write leaves the previous complete file or none. Other files in the
    folder are left alone."""
    from nlgjudge.plotting.rank import save_win_matrix

    folder.mkdir(parents=True, exist_ok=True)
    written = []

    def replace(name: str, write: Any) -> None:
        handle, temporary = tempfile.mkstemp(prefix=f".{name}.", dir=folder)
        os.close(handle)
        try:
            write(Path(temporary))
            os.replace(temporary, folder / name)
        finally:
            if os.path.exists(temporary):
                os.unlink(temporary)
        written.append(folder / name)

    def judgments(path: Path) -> None:
        with path.open("w", encoding="utf-8") as stream:
            for record in result.pairs.to_dict("records"):
                clean = {k: (None if isinstance(v, float) and v != v else v) for k, v in record.items()}
                stream.write(json.dumps(clean, ensure_ascii=False, sort_keys=False) + "\n")

    def figure(path: Path) -> None:
        order = list(result.leaderboard["system"])
        save_win_matrix(result.analysis.win_rates, order, path, title=f"Pairwise win rates, judge {result.judge} (debiased)")

    replace("judgments.jsonl", judgments)
    replace("win_matrix.png", figure)
    replace("report.md", lambda path: path.write_text(result.report, encoding="utf-8"))
    # The leaderboard last: its presence means the run finished.
    replace("leaderboard.csv", lambda path: result.leaderboard.to_csv(path, index=False, float_format="%.6g"))
    return written


# --------------------------------------------------------------------------------------------
# The command line


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="nlgjudge rank",
        description="Rank systems from their outputs with an LLM judge: pairwise comparisons in both orders, "
        "debiasing, Bradley-Terry scores with intervals over contexts.",
    )
    parser.add_argument("input", help="outputs file: .jsonl, .csv or .parquet, one row per (context, system)")
    parser.add_argument("--model", required=True, help="the judge: packaged short name, hub id or local folder")
    parser.add_argument("--out", required=True, help="folder for leaderboard.csv, judgments.jsonl, win_matrix.png, report.md")
    parser.add_argument("--aspect", default="OVR",
                        help="what 'better' means: an abbreviation (OVR, COH, CON, FLU, REL, ...) or an adjective (default OVR: 'better')")
    parser.add_argument("--noun", default="summary", help="what an output is called in the prompt (default: summary)")
    parser.add_argument("--prompt", default=None, help="a prompt file with {output_a}, {output_b} [, {source}, {reference}]")
    parser.add_argument("--budget", default="1", help="fraction of all ordered pairs to judge, in (0, 1] (default 1)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the active selection and of the bootstrap")
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--reference-free", dest="with_reference", action="store_false", help="the judge sees no reference (default)")
    group.add_argument("--with-reference", dest="with_reference", action="store_true", help="show each context's reference to the judge")
    # Reference-free unless asked (store_false's own default would be True).
    parser.set_defaults(with_reference=False)
    parser.add_argument("--backend", default=None, choices=("auto", "torch", "llamacpp"), help="model runtime (default: auto)")
    parser.add_argument("--bootstrap", type=int, default=500, help="bootstrap resamples of contexts (default 500)")
    for name in ("context", "source", "system", "output", "reference"):
        column = "context_id" if name == "context" else name
        parser.add_argument(f"--{name}-field", default=column, help=f"input field holding the {name} (default {column})")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """``nlgjudge rank``: exit 0 with the leaderboard printed, or 2 with one ``error:`` line."""
    args = _parser().parse_args(list(sys.argv[1:] if argv is None else argv))
    from nlgjudge.cache import CacheError
    from nlgjudge.engine import EngineInputError
    from nlgjudge.models import ModelError
    from nlgjudge.prompts.ranking import PromptFileError

    fields = FieldNames(args.context_field, args.source_field, args.system_field, args.output_field, args.reference_field)
    try:
        if args.bootstrap < 2:
            raise UserInputError(f"--bootstrap {args.bootstrap}: needs at least 2 resamples (e.g. 500)")
        budget = _check_budget(args.budget)
        from nlgjudge.models import resolve_model
        from nlgjudge.prompts.ranking import prompt_from_file

        resolve_model(args.model)  # an unknown name fails first, before anything is read
        # Everything about the input is checked before the model is loaded (which takes a while).
        frame = read_user_outputs(args.input, fields, with_reference=args.with_reference)
        if args.prompt is not None:
            prompt_from_file(args.prompt, noun=args.noun, with_reference=args.with_reference)
        _check_out(Path(args.out))
        judge = _load_judge(args.model, args.backend, budget)
        result = rank_outputs(
            frame, judge=judge, aspect=args.aspect, noun=args.noun, prompt_file=args.prompt, budget=budget,
            seed=args.seed, with_reference=args.with_reference, n_boot=args.bootstrap, out=args.out,
        )
    except (UserInputError, PromptFileError, ModelError, CacheError, EngineInputError, ValueError, ImportError, OSError) as error:
        message = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        print(f"error: {message}", file=sys.stderr)
        return 2
    with pd.option_context("display.max_columns", None, "display.width", 200, "display.max_rows", None):
        print(result.leaderboard.to_string(index=False, float_format=lambda v: f"{v:.3f}"))
    for note in result.warnings:
        print(f"warning: {note}", file=sys.stderr)
    print(f"wrote {', '.join(str(p) for p in result.written)}", file=sys.stderr)
    return 0


def _load_judge(model: str, backend: str | None, budget: float) -> Any:
    """The judge for the command line: built and loaded before any judging, so that a model that
    cannot be loaded (unknown hub id offline, missing runtime) is one clear error, not a failure mid-run."""
    from nlgjudge.engine import Judge

    judge = Judge(model, study="rank", backend=backend, progress=budget == 1.0)
    try:
        judge.load()
    except (OSError, ValueError, ImportError) as error:  # a ModelError (RuntimeError) passes through as it is
        first = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        raise UserInputError(f"cannot load the model {model!r}: {first}; pass a packaged short name, "
                             "a local model folder, or a hub id reachable from here") from None
    return judge


if __name__ == "__main__":
    sys.exit(main())
