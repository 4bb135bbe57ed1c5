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
``report.md`` (judge, prompt, P(A) before and after debiasing, budget used, warnings). The four
files are one set: written only after every judgment is made, into a staging folder inside
``--out``, then the old set is removed (``leaderboard.csv`` first) and the new one moved in
(``leaderboard.csv`` last). A kill leaves the old complete set, the new complete set, or an
incomplete one without ``leaderboard.csv`` (whose presence means the set is whole), never files of
two runs; the next run removes a killed run's leftovers: only staging folders with this program's
marker whose process is gone, never a user's file or folder, whatever its name. A run holds a lock
on ``--out`` (``flock`` on a hidden file there) from its checks to its last file, so a second run
into the same folder refuses at once, in one line. Judgments reach the output cache after
every context (or every few seconds, :mod:`nlgjudge.studies.rank`), so a run killed half-way and
started again judges none of the finished contexts twice.

Every argument is checked before the model loads, and the ``--out`` folder is created and written
to (a test file, removed) then too. Bad input (missing file, bad JSON, missing field, non-text
output, empty file, a repeated (context, system), a context with one system, a budget outside
(0, 1], a negative seed, an unknown model, an unwritable ``--out``...) is one ``error:`` line naming
the option, file, line and fix, exit status 2, and nothing written. Also refused before judging: a
``--bootstrap`` or ``--max-concurrency`` out of bounds, an encoder as ``--model``, a folder where an
output file goes, and (counted with the judge's tokenizer once it is loaded) a prompt too long for
its context window; ``~`` in the paths is the home folder. Text cells of ``leaderboard.csv`` that a
spreadsheet would run as formulas start with ``'``. Before judging, the command
prints how many comparisons it will make and, from the rate measured on this machine (by an earlier
run of the same model; then again on the first comparisons of this one), how long they should take,
suggesting ``--budget`` for a long run.
"""

from __future__ import annotations

import argparse
import json
import logging
import errno
import gc
import os
import re
import unicodedata
import shutil
import sys
from collections.abc import Callable, Sequence
from contextlib import ExitStack, nullcontext
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import pandas as pd

from nlgjudge.out_folder import (  # noqa: F401 - the output folder's names, as before the split
    LOCK_NAME,
    MANIFEST_NAME,
    OUTPUT_FILES,
    STAGING_MARKER,
    STAGING_PREFIX,
    _clean_leftovers,
    _make_staging,
    _reason,
    _remove_created,
    _sha256,
    _write_manifest,
    foreign_files,
    out_lock,
    prepare_out,
    written_by_rank,
)
from nlgjudge.interrupt import STORED, interrupts_held
from nlgjudge.prompts.ranking import KNOWN_CONTROL_STRINGS, prompt_control_warnings
from nlgjudge.safety import shown_path
from nlgjudge.data.user_outputs import (
    FieldNames,
    UserInputError,
    check_user_outputs,
    design_warnings,
    read_user_outputs,
    row_place,
)
from nlgjudge.config import expand_path, expand_user

#: A text cell starting with one of these is a formula to a spreadsheet (see :func:`neutralise_formulas`).
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
#: Below this total probability on the answer labels a comparison is named: the judge would have said something else.
LOW_LABEL_MASS = 0.1


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


def _check_seed(seed: Any, option: str = "--seed") -> int:
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise UserInputError(f"{option} {seed!r}: must be a non-negative integer (it seeds the active selection and "
                             f"the bootstrap), e.g. {option} 0")
    return seed


def build_prompt(aspect: str, noun: str, prompt_file: str | os.PathLike[str] | None, with_reference: bool,
                 *, cli: bool = False) -> Any:
    """The run's :class:`nlgjudge.prompts.ranking.RankPrompt`; every problem is a :class:`UserInputError`
    naming the option (``--noun`` with ``cli``) or the argument (``noun``) it comes from."""
    from nlgjudge.prompts.ranking import RankPrompt, prompt_from_file

    def option(name: str) -> str:
        return f"--{name}" if cli else name

    for name, value in (("aspect", aspect), ("noun", noun)):  # words the judge reads: a control character is no word
        hidden = next(((k, ch) for k, ch in enumerate(value, start=1) if unicodedata.category(ch) in ("Cc", "Cf")), None) \
            if isinstance(value, str) else None
        if hidden:
            raise UserInputError(f"{option(name)} holds a control character (U+{ord(hidden[1]):04X} at character {hidden[0]} "
                                 f"of {len(value)}), which the judge's prompt would carry; pass words, e.g. "
                                 f"{option(name)} {'coherence' if name == 'aspect' else 'summary'}")
    if isinstance(aspect, str) and aspect != aspect.strip():
        raise UserInputError(f"{option('aspect')} {aspect!r}: has spaces around it; pass {option('aspect')} "
                             f"{aspect.strip() or 'OVR'}")
    if not isinstance(noun, str) or not noun.strip() or noun != noun.strip() or "\n" in noun:
        raise UserInputError(f"{option('noun')} {noun!r}: what an output is called in the prompt must be words without "
                             f"surrounding spaces, e.g. {option('noun')} summary")
    marker = next((c for c in KNOWN_CONTROL_STRINGS if c in noun), None) or next(iter(re.findall(r"<\|[^|<>]*\|>", noun)), None)
    if marker:  # the noun is in the judge's own answer ("{noun} A"), which no escaping may change: refused
        raise UserInputError(f"{option('noun')} {noun!r}: holds the chat-template control string {marker}, and the noun is "
                             f"part of the judge's own answer ({noun} A), where it would read as a turn marker; pass words, "
                             f"e.g. {option('noun')} summary")
    if re.search(r"(?<![\w-])[AB](?![\w-])", noun):  # "answer B": the prompt's labels "{noun} A" would read "answer B A"
        raise UserInputError(f"{option('noun')} {noun!r}: holds the letter A or B on its own, which the prompt uses as the "
                             f"two labels ({noun} A, {noun} B), so the judge could not tell them apart; pass a noun "
                             f"without them, e.g. {option('noun')} summary")
    if prompt_file is not None:
        try:
            Path(prompt_file).stat()
        except FileNotFoundError:
            pass  # prompt_from_file says so, with its fix
        except OSError as error:  # a name too long, a path through a file, ...
            raise UserInputError(f"{option('prompt') if cli else 'prompt_file'} {prompt_file}: cannot read it "
                                 f"({error.strerror or type(error).__name__}); pass a text file with {{output_a}} and "
                                 "{output_b}") from None
        if Path(prompt_file).is_dir():
            raise UserInputError(f"{option('prompt') if cli else 'prompt_file'} {prompt_file}: is a folder, not a prompt "
                                 "file; pass a text file with {output_a} and {output_b}")
        return prompt_from_file(prompt_file, noun=noun, with_reference=with_reference)
    try:
        prompt = RankPrompt(aspect=aspect, noun=noun, with_reference=with_reference)
        prompt.question  # noqa: B018 - an aspect with no comparative question fails here, not at the first prompt
    except ValueError as error:
        raise UserInputError(f"{option('aspect')} {aspect!r}: {error}") from None
    return prompt


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
    server_url: str | None = None,
    server_tokenizer: str | None = None,
    max_concurrency: int = 4,
    truncate: bool = False,
    server_identity: str | None = None,
    allow_compute: bool = True,
    progress: bool = True,
    n_boot: int = 500,
    out: str | os.PathLike[str] | None = None,
    on_step: Callable[[Any], None] | None = None,
    force: bool = False,
    out_option: str = "out",
) -> RankResult:
    """Rank the systems of ``outputs`` (a frame or a file path) with the judge ``model``.

    ``out_option``: how messages about ``out`` name it (the command line passes ``--out``).

    ``judge`` may be passed instead of ``model`` (an :class:`nlgjudge.engine.Judge`). ``cache`` is the
    output cache (default: the user's). ``allow_compute=False`` uses cached judgments only and raises
    :class:`nlgjudge.studies.rank.NotCachedError` if one is missing (the book's chapter does this).
    ``truncate``: cut prompts too long for the judge from the left (only where ``model`` is given; a
    ``judge`` keeps its own setting); the report counts them. ``out``: a folder to write the four
    files to (see the module docstring); it is checked (created, written to) before any judging.
    Files in ``out`` that an earlier run did not write (its manifest says which it did) stop the run
    before judging; ``force=True`` replaces them, but never the input file. ``on_step``: called after every step of judging (:class:`nlgjudge.studies.rank.JudgingProgress`).
    ``server_url`` (implies ``backend="server"``; or ``backend="server"`` with ``$NLGJUDGE_SERVER_URL``):
    judge with ``model`` as an inference server serves it, prompts built by the packaged model
    ``server_tokenizer`` (default ``model``), at most ``max_concurrency`` requests in flight;
    ``server_identity``: what the cache keys name as the served weights and settings when the server
    reports no identity (``system_fingerprint``) of its own (default ``$NLGJUDGE_SERVER_IDENTITY``).
    """
    budget = _check_budget(budget)
    seed = _check_seed(seed, "seed")
    if isinstance(outputs, pd.DataFrame):
        frame = check_user_outputs(outputs, fields, with_reference=with_reference)
    else:
        frame = read_user_outputs(outputs, fields, with_reference=with_reference)
    prompt = build_prompt(aspect, noun, prompt_file, with_reference)
    inputs = {"the input file": None if isinstance(outputs, pd.DataFrame) else outputs, "the prompt file": prompt_file}
    created = prepare_out(out, out_option, force=force, inputs=inputs, cache_file=_cache_file(judge, cache)) if out is not None else []
    try:
        with out_lock(out, out_option) if out is not None else nullcontext():
            return _rank_checked(frame, model, judge, prompt, budget, seed, cache, backend, server_url, server_tokenizer,
                                 max_concurrency, truncate, allow_compute, progress, n_boot, out, on_step,
                                 server_identity, force=force)
    except BaseException:
        _remove_created(created)
        raise


def _rank_checked(frame: pd.DataFrame, model: str | None, judge: Any, prompt: Any, budget: float, seed: int, cache: Any,
                  backend: str | None, server_url: str | None, server_tokenizer: str | None, max_concurrency: int,
                  truncate: bool, allow_compute: bool, progress: bool, n_boot: int, out: str | os.PathLike[str] | None,
                  on_step: Callable[[Any], None] | None, server_identity: str | None = None, *,
                  force: bool = False) -> RankResult:
    """:func:`rank_outputs` once its arguments are checked (and ``out`` created and locked)."""
    from nlgjudge.analysis.rank import analyse, family_warnings, pair_records, report_markdown
    from nlgjudge.studies.rank import ComparisonTooLongError, JudgingProgress, context_plans, judge_comparisons, planned_counts

    if judge is None:
        if model is None:
            raise UserInputError("no judge: pass model= (a packaged short name, hub id or local folder)")
        from nlgjudge.engine import Judge

        judge = Judge(model, cache=cache, study="rank", truncate=truncate, progress=False,
                      **judge_runtime(backend, server_url, server_tokenizer, max_concurrency, server_identity))
    systems = list(dict.fromkeys(frame["system"]))
    plans = context_plans(frame, systems)
    planned = sum(planned_counts(plans, budget).values())
    possible = sum(len(p.judged_pairs()) for p in plans)
    last: list[JudgingProgress] = []

    def step(state: JudgingProgress) -> None:
        last[:] = [state]
        if on_step is not None:
            on_step(state)

    server_said = _ServerWarnings()  # what the served judge's answers warned of while judging, for the report too
    try:
        if allow_compute:
            check_prompt_lengths(judge, plans, systems, prompt)
        with server_said:
            judgments = judge_comparisons(judge, frame, systems, prompt, budget=budget, seed=seed,
                                          allow_compute=allow_compute, progress=progress, on_step=step)
    except ComparisonTooLongError as error:
        raise UserInputError(_too_long_message(frame, error, judge)) from None
    analysis = analyse(judgments, systems, n_boot=n_boot, seed=seed)
    controls = judge_control_strings(judge, load=allow_compute)
    notes = design_warnings(frame, controls, with_reference=bool(getattr(prompt, "with_reference", True)))  # a reference is read when shown
    notes += [f"the served judge, while judging: {message}" for message in server_said.messages]
    notes += family_warnings(judge.handle.name, judge_family(judge.handle), systems)
    notes += prompt_control_warnings(prompt, controls)
    formulas = [s for s in systems if is_formula(s)]
    if formulas:  # leaderboard.csv shows them with a ' in front (neutralise_formulas): said, so a join by name can allow for it
        notes.append(f"system names starting with =, +, -, @, ' or a tab ({', '.join(repr(s) for s in formulas[:5])}"
                     f"{' and more' if len(formulas) > 5 else ''}) are written to leaderboard.csv with a ' in front, so that "
                     "a spreadsheet shows them instead of running them as formulas; report.md and judgments.jsonl keep them as they are")
    truncated = last[0].truncated if last else 0
    if truncated:
        notes.append(f"truncated prompts: {truncated} of {len(judgments)} comparisons had prompts longer than the "
                     f"judge's context window and were cut from the left (their first tokens dropped: the prompt's "
                     "opening and the start of the source, never the outputs); those judgments saw only part of the source")
    low = judgments[judgments["label_mass"] < LOW_LABEL_MASS] if "label_mass" in judgments else judgments.iloc[:0]
    if len(low):  # the labels were not what the judge would have said: their normalised share is a remainder
        notes.append(f"answers off the labels: in {len(low)} of {int((~judgments['identical']).sum())} comparisons the judge "
                     f"gave its answer labels together less than {LOW_LABEL_MASS:.0%} of its probability (the lowest "
                     f"{judgments['label_mass'].min():.1e}), so it would have answered something else and p(A) is read from a "
                     "small remainder; check the prompt, or use a judge that answers with the labels")
    runtime = judge.runtime_description() if hasattr(judge, "runtime_description") else "unknown runtime"
    report = report_markdown(analysis, judge=judge.handle.name, runtime=runtime, prompt=prompt.describe(),
                             budget=budget, planned=planned, possible=possible, extra_warnings=notes, seed=seed)
    result = RankResult(
        leaderboard=analysis.leaderboard, pairs=pair_records(analysis, systems), analysis=analysis, report=report,
        judge=judge.handle.name, runtime=runtime, warnings=notes + analysis.warnings,
    )
    if out is not None:
        result.written.extend(write_outputs(result, Path(out), force=force))
    return result


#: More characters a token than any tokenizer's tokens hold: a prompt this many times the window is refused untokenized.
MOST_CHARACTERS_PER_TOKEN = 16


def check_prompt_lengths(judge: Any, plans: list[Any], systems: list[str], prompt: Any) -> None:
    """Count every comparison's prompt tokens before any judging, where the runtime can tell (an
    in-process judge, or a served one whose window is known): a prompt too long for the judge's context
    window fails the run now, not after the comparisons before it (:class:`ComparisonTooLongError`). A
    server whose window is not known checks its own; a judge without these parts (a fake) is not checked."""
    from nlgjudge.engine.prompting import encode_labels, encode_prompt
    from nlgjudge.studies.prompting import prompt_style
    from nlgjudge.studies.rank import ComparisonTooLongError, comparison_request

    if not hasattr(judge, "window") or not hasattr(judge, "_load"):
        return
    # Cut from the left (--truncate), a prompt must still fit with the whole source gone (else the outputs are cut).
    truncate = bool(getattr(judge, "truncate", False))
    style = prompt_style(judge.handle, "auto")
    picks = [(plan, i, j) for plan in plans for i, j in plan.judged_pairs()]
    requests = [comparison_request(plan, i, j, prompt, style, systems) for plan, i, j in picks]
    todo = [k for k, cached in enumerate(judge.cached_mask("label_probs", requests)) if not cached]
    if not todo:
        return
    model, tokenizer = judge._load()  # loaded anyway for the first comparison
    limit = judge.window(model)
    if limit is None:
        return
    plan, i, j = picks[todo[0]]  # the prompt's own words, with no text in it: too long, no text is to blame
    # (each text one character: a prompt refuses an empty one)
    bare = comparison_request(replace(plan, source=".", reference="." if plan.reference is not None else None,
                                      texts={**plan.texts, i: ".", j: "."}), i, j, prompt, style, systems)
    words = len(encode_prompt(tokenizer, bare.prompt, bare.response_prefix))
    if words >= limit:
        raise UserInputError(f"the prompt alone (its words, with every text left out) is {words} tokens, as many as "
                             f"{judge.handle.name}'s context window of {limit} or more: shorten the prompt file")
    for k in todo:
        plan, i, j = picks[k]
        request = requests[k] if not truncate else comparison_request(replace(plan, source="."), i, j, prompt, style, systems)
        # longer than the window at even the longest tokens: refused untokenized (one long word takes a tokenizer minutes)
        chars = sum(len(str(m.get("content", ""))) for m in request.prompt) if isinstance(request.prompt, list) \
            else len(str(request.prompt))
        if chars > MOST_CHARACTERS_PER_TOKEN * limit:
            raise ComparisonTooLongError(plan.context_id, systems[i], systems[j], (
                f"prompt of {chars:,} characters exceeds the context window of {limit} tokens for {judge.handle.name} "
                f"whatever its tokens (it would take more than {MOST_CHARACTERS_PER_TOKEN} characters a token)"))
        extra = max(len(label) for label in encode_labels(tokenizer, request.labels, request.label_end))
        length = len(encode_prompt(tokenizer, request.prompt, request.response_prefix))
        if length + extra > limit:
            said = "even with its whole source cut, the prompt" if truncate else "prompt"
            raise ComparisonTooLongError(plan.context_id, systems[i], systems[j], (
                f"{said} of {length} tokens + {extra} continuation tokens exceeds the context window of {limit} "
                f"tokens for {judge.handle.name}"))


def _too_long_message(frame: pd.DataFrame, error: Any, judge: Any) -> str:
    """One line for a comparison whose prompt does not fit the judge: where its texts are, and the fixes."""
    first = row_place(frame, error.context_id, error.first)
    second = row_place(frame, error.context_id, error.second).rsplit(", ", 1)[-1]
    detail = error.detail.split(";")[0]
    if getattr(judge, "truncate", False):  # the cut would reach the outputs: no cut can make it fair
        return (f"{first} and {second} (context {error.context_id!r}, system {error.first!r} against {error.second!r}): "
                f"{detail}; --truncate cuts only the source, so shorten these outputs (or the prompt file's words)")
    served = getattr(judge, "backend", None) == "server" or getattr(getattr(judge, "handle", None), "source", None) == "server"
    if served:  # a server reads the prompt's text: --truncate, which cuts token ids here, cannot help it
        return (f"{first} and {second} (context {error.context_id!r}, system {error.first!r} against {error.second!r}): "
                f"{detail}; shorten that context's source or outputs (or the prompt file's words)")
    return (f"{first} and {second} (context {error.context_id!r}, system {error.first!r} against {error.second!r}): "
            f"{detail}; shorten that context's source or outputs (or the prompt file's words), or pass --truncate to "
            "cut such prompts from the left (counted in report.md)")


def judge_runtime(backend: str | None, server_url: str | None = None, server_tokenizer: str | None = None,
                  max_concurrency: int = 4, server_identity: str | None = None, *, cli: bool = False) -> dict[str, Any]:
    """The Judge's runtime arguments, checked before any model or server work (a :class:`UserInputError`
    naming the option otherwise): ``server_url`` implies ``backend="server"``; the server options need it."""
    def option(name: str) -> str:
        return f"--{name.replace('_', '-')}" if cli else name

    # Refused with any backend: a value that would be ignored is still a mistake the user should hear of.
    if isinstance(max_concurrency, bool) or not isinstance(max_concurrency, int) or max_concurrency < 1:
        raise UserInputError(f"{option('max_concurrency')} {max_concurrency!r}: must be a whole number >= 1 "
                             f"(requests in flight), e.g. {option('max_concurrency')} 4")
    if server_url is not None:
        if backend not in (None, "server"):
            raise UserInputError(f"{option('server_url')} judges on a server: drop {option('backend')} {backend} "
                                 f"(or pass {option('backend')} server)")
        backend = "server"
    if backend == "server":
        from nlgjudge.engine.server import ServerError
        from nlgjudge.engine.server.client import URL_ENV, base_url

        try:
            base_url(server_url)  # a missing or malformed URL fails here, before anything is read
        except ServerError as error:
            # name where the URL came from: the option, or the environment variable it defaults to
            from_env = not server_url and os.environ.get(URL_ENV, "").strip()
            where = f"${URL_ENV} (the default of {option('server_url')})" if from_env else option("server_url")
            raise UserInputError(f"{where}: {error}") from None
        from nlgjudge.engine.server.runtime import check_identity

        try:
            identity = check_identity(server_identity) or None if server_identity is not None else None
        except ValueError as error:
            raise UserInputError(f"{option('server_identity')}: {error}") from None
        return {"backend": "server", "server_url": server_url, "server_tokenizer": server_tokenizer,
                "max_concurrency": max_concurrency, "server_identity": identity}
    for name, value in (("server_tokenizer", server_tokenizer), ("server_identity", server_identity)):
        if value is not None:
            raise UserInputError(f"{option(name)} is for a judge on a server: pass {option('server_url')} too")
    return {"backend": backend}


def rank(outputs: pd.DataFrame | str | os.PathLike[str], model: str | None = None, **options: Any) -> pd.DataFrame:
    """The leaderboard of :func:`rank_outputs` (system, rank, score, ci_low, ci_high, wins, comparisons, ...)."""
    return rank_outputs(outputs, model, **options).leaderboard


def judge_family(handle: Any) -> str:
    """The judge's model family, for the self-preference warning: a packaged model's own, else its name's first word."""
    from nlgjudge.models import PACKAGED_MODELS

    if getattr(handle, "source", None) == "packaged" and handle.location in PACKAGED_MODELS:
        return PACKAGED_MODELS[handle.location].family
    # A hub id or folder: its first word ("Qwen/Qwen2.5-7B" -> "qwen2"), a rough family for the warning.
    base = str(getattr(handle, "name", "")).rsplit("/", 1)[-1].lower()
    word = "".join(ch for ch in base.split("-")[0] if ch.isalpha())
    return word


def _cache_file(judge: Any, cache: Any) -> Any:
    """The output cache's file a run will write to: the judge's, the one passed, or the configured one."""
    from nlgjudge.config import output_cache_path

    given = getattr(judge, "cache", None) if judge is not None else cache
    if given is None:
        return output_cache_path()
    path = getattr(given, "path", given)
    return path if isinstance(path, (str, os.PathLike)) else None


def _refuse_cache_on_input(cache_file: Any, inputs: dict[str, Any]) -> None:
    """The output cache must not be one of the run's own input files (it would be refused as a damaged
    cache, with advice to move the input aside): say so, naming the setting to change."""
    if cache_file is None:
        return
    for what, path in inputs.items():
        if path is None or str(path) == "-":
            continue
        try:
            same = os.path.samefile(expand_user(path), cache_file)
        except OSError:
            continue
        if same:
            raise UserInputError(f"the output cache ({shown_path(cache_file)}, from NLGJUDGE_OUTPUT_CACHE or the default) is "
                                 f"{what}: set NLGJUDGE_OUTPUT_CACHE to another file; nothing was written")


def is_formula(value: object) -> bool:
    """Whether a spreadsheet would read ``value`` as a formula (or strip its leading ')."""
    return isinstance(value, str) and value[:1] in (*FORMULA_STARTS, "'")


def neutralise_formulas(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` with every text cell that a spreadsheet would run as a formula (starting with
    ``=``, ``+``, ``-``, ``@``, a tab or a carriage return) prefixed with ``'``: a system named
    ``=cmd|' /C calc'!A0`` is shown, not executed, when ``leaderboard.csv`` is opened. A text that
    already starts with ``'`` gets one more, so that two names never become one (``=x`` and ``'=x``)."""
    def safe(value: Any) -> Any:
        return "'" + value if is_formula(value) else value

    out = frame.copy()
    for column in out.columns:
        if pd.api.types.is_object_dtype(out[column]) or pd.api.types.is_string_dtype(out[column]):
            out[column] = out[column].map(safe).astype(object)
    return out


def write_outputs(result: RankResult, folder: Path, *, force: bool = False) -> list[Path]:
    """Write the four files into ``folder`` (created if missing) as one set: each is written into a
    staging folder first, then the old set is removed (``leaderboard.csv`` first) and the new one
    moved in (``leaderboard.csv`` last), so a kill leaves either set whole or one without
    ``leaderboard.csv``, never files of two runs. The files get the user's umask; other files in
    the folder are left alone, and only this run's staging folder and those of dead runs are removed."""
    from nlgjudge.plotting.rank import save_win_matrix

    folder = expand_path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    with out_lock(folder):
        foreign = foreign_files(folder)  # again: a file may have come while the judge worked
        odd = [name for name in OUTPUT_FILES if (folder / name).is_symlink()
               or ((folder / name).exists() and not (folder / name).is_file())]
        if odd:  # a folder or link put there while judging: never removed or followed, whatever --force says
            raise UserInputError(f"{folder}: {', '.join(odd)} appeared there while judging as a folder or link, which a run "
                                 "never replaces, so nothing was written; the judgments are in the output cache: move it "
                                 "away or run again with another --out, and none is judged twice")
        if foreign and not force:
            raise UserInputError(f"{folder}: {', '.join(foreign)} appeared there while judging and was not written by "
                                 "nlgjudge rank, so nothing was written; the judgments are in the output cache: run "
                                 "again with another --out (or --force to replace it), and none is judged twice")
        _clean_leftovers(folder)
        staging = _make_staging(folder)
        try:
            with (staging / "judgments.jsonl").open("w", encoding="utf-8") as stream:
                for record in result.pairs.to_dict("records"):
                    clean = {k: (None if isinstance(v, float) and v != v else v) for k, v in record.items()}
                    stream.write(json.dumps(clean, ensure_ascii=False, sort_keys=False) + "\n")
            order = list(result.leaderboard["system"])
            save_win_matrix(result.analysis.win_rates, order, staging / "win_matrix.png",
                            title=f"Pairwise win rates, judge {result.judge} (debiased)")
            (staging / "report.md").write_text(result.report, encoding="utf-8")
            neutralise_formulas(result.leaderboard).to_csv(staging / "leaderboard.csv", index=False, float_format="%.6g")
            # The leaderboard's presence means the set is whole: it goes first and comes back last.
            for name in ("leaderboard.csv", "report.md", "win_matrix.png", "judgments.jsonl"):
                (folder / name).unlink(missing_ok=True)
            # The manifest names the new set once the old one is gone, before it moves in: a kill leaves only listed files.
            _write_manifest(folder, {name: {_sha256(staging / name)} for name in OUTPUT_FILES}, staging)
            for name in ("judgments.jsonl", "win_matrix.png", "report.md", "leaderboard.csv"):
                os.replace(staging / name, folder / name)
        finally:
            shutil.rmtree(staging, ignore_errors=True)
    return [folder / name for name in ("judgments.jsonl", "win_matrix.png", "report.md", "leaderboard.csv")]


from nlgjudge.run_estimate import LONG_RUN_SECONDS, RunEstimate, rates_path, stored_rate  # noqa: E402,F401 - as before the split


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
    parser.add_argument("--aspect", default=None,
                        help="what 'better' means: an abbreviation (OVR, COH, CON, FLU, REL, ...) or an adjective (default OVR: 'better')")
    parser.add_argument("--noun", default="summary", help="what an output is called in the prompt (default: summary)")
    parser.add_argument("--prompt", default=None, help="a prompt file with {output_a}, {output_b} [, {source}, {reference}]")
    parser.add_argument("--budget", default="1", help="fraction of all ordered pairs to judge, in (0, 1] (default 1)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the active selection and of the bootstrap")
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--reference-free", dest="with_reference", action="store_false", help="the judge sees no reference (default)")
    group.add_argument("--with-reference", dest="with_reference", action="store_true", help="show each context's reference to the judge")
    parser.set_defaults(with_reference=False)  # reference-free unless asked (store_false alone would default to True)
    parser.add_argument("--backend", default=None, choices=("auto", "torch", "llamacpp", "server"),
                        help="model runtime (default: auto; server with --server-url)")
    parser.add_argument("--server-url", default=None,
                        help="judge on an OpenAI-compatible server at this URL (e.g. http://127.0.0.1:8000/v1); "
                        "--model is the name it serves (default with --backend server: $NLGJUDGE_SERVER_URL); "
                        "a key the server needs goes in $NLGJUDGE_SERVER_API_KEY, never on the command line")
    parser.add_argument("--server-tokenizer", default=None,
                        help="the packaged model whose tokenizer and chat template build the prompts (default: --model), "
                        "or a local folder with the tokenizer (e.g. the folder a vLLM server serves) or a hub id, "
                        "so the client needs no weight packages")
    parser.add_argument("--server-identity", default=None,
                        help="what the cache keys name as the served weights and settings, for a server that reports "
                        "no system_fingerprint of its own (llama.cpp's; e.g. the GGUF file's sha256 and --n_ctx); "
                        "default $NLGJUDGE_SERVER_IDENTITY")
    parser.add_argument("--max-concurrency", type=int, default=4, help="requests in flight to the server (default 4)")
    parser.add_argument("--bootstrap", type=int, default=500, help="bootstrap resamples of contexts (default 500)")
    parser.add_argument("--truncate", action="store_true",
                        help="cut prompts longer than the judge's context window from the left (default: refuse them); "
                        "report.md and the warnings count the cut prompts")
    parser.add_argument("--force", action="store_true",
                        help="replace files in --out named like the outputs that an earlier run did not write "
                        "(never the input file)")
    for name in ("context", "source", "system", "output", "reference"):
        column = "context_id" if name == "context" else name
        parser.add_argument(f"--{name}-field", default=column, help=f"input field holding the {name} (default {column})")
    return parser


from nlgjudge.printing import UNWRITTEN, emit  # noqa: E402 - the one printer, as before the split


def main(argv: Sequence[str] | None = None) -> int:
    """``nlgjudge rank``: exit 0 with the leaderboard printed, or 2 with one ``error:`` line."""
    args = _parser().parse_args(list(sys.argv[1:] if argv is None else argv))
    from nlgjudge.cache import CacheError
    from nlgjudge.engine import EngineInputError
    from nlgjudge.engine.server import ServerError
    from nlgjudge.models import ModelError
    from nlgjudge.prompts.ranking import PromptFileError

    fields = FieldNames(args.context_field, args.source_field, args.system_field, args.output_field, args.reference_field)
    created: list[Path] = []
    judging = False  # once judging starts, what was judged is in the output cache
    early: list[str] = []  # warnings printed before judging, not repeated after
    finishing = ExitStack()  # once the set is written: interrupts held until the command returns
    stored_before = STORED[0]  # the model outputs this process had stored before this run
    try:
        with ExitStack() as held:
            _check_sizes(args)
            _refuse_credentials(args)
            budget = _check_budget(args.budget)
            _check_seed(args.seed)
            _check_cache_folders()
            runtime = judge_runtime(args.backend, args.server_url, args.server_tokenizer, args.max_concurrency,
                                    args.server_identity, cli=True)
            if args.truncate and runtime["backend"] == "server":
                raise UserInputError("--truncate is for a judge computed here: a server reads the prompt's text, not cut "
                                     "token ids; leave --truncate out and shorten the long contexts' sources or outputs")
            from nlgjudge.engine.server.runtime import served_prompts_known
            from nlgjudge.models import PACKAGED_MODELS, judge_names, resolve_model

            if runtime["backend"] != "server":
                _check_judge_kind(args.model, "--model")
                resolve_model(args.model)  # an unknown name fails first, before anything is read
            elif not served_prompts_known(args.model, args.server_tokenizer):
                what = f"--server-tokenizer {args.server_tokenizer}" if args.server_tokenizer else f"--model {args.model}"
                raise UserInputError(f"{what}: the prompts for a served judge are built with a packaged model's tokenizer "
                                     f"and chat template; pass --server-tokenizer one of {judge_names()}, "
                                     "or, with --model a packaged name, a local folder with its tokenizer or a hub id")
            else:
                tokenizer_packaged = args.server_tokenizer in PACKAGED_MODELS
                _check_judge_kind(args.server_tokenizer if tokenizer_packaged else args.model,
                                  "--server-tokenizer" if tokenizer_packaged else "--model")
            # Everything about the input is checked before the model is loaded (which takes a while).
            frame = read_user_outputs(expand_user(args.input), fields, with_reference=args.with_reference)
            _refuse_key_in_input(frame)
            prompt_file = expand_user(args.prompt) if args.prompt is not None else None
            if prompt_file is not None and args.aspect is not None:
                raise UserInputError(f"--aspect {args.aspect}: a prompt file asks its own question, so --aspect would be "
                                     "ignored; write the quality into the prompt file, or leave --prompt out")
            aspect = args.aspect if args.aspect is not None else "OVR"
            prompt = build_prompt(aspect, args.noun, prompt_file, args.with_reference, cli=True)
            _refuse_secret_in_prompt(prompt_file)
            out = expand_user(args.out)
            _refuse_cache_on_input(_cache_file(None, None), {"the input file": args.input, "the prompt file": prompt_file})
            created = prepare_out(out, force=args.force, cache_file=_cache_file(None, None),
                                  inputs={"the input file": expand_user(args.input), "the prompt file": prompt_file})
            held.enter_context(out_lock(out))  # a second run into the same folder refuses here, at once
            judge = _load_judge(args.model, runtime, args.truncate)
            held.callback(getattr(getattr(judge, "_server", None), "close", lambda: None))  # a server's connections closed
            controls = judge_control_strings(judge)
            early = design_warnings(frame, controls, with_reference=args.with_reference)
            early += prompt_control_warnings(prompt, controls)
            for note in early:  # before judging: the user may stop here (report.md says them again)
                emit(f"warning: {note}", sys.stderr)
            estimate = RunEstimate(judge, frame, prompt, budget)
            estimate.announce()
            judging = True
            result = rank_outputs(
                frame, judge=judge, aspect=aspect, noun=args.noun, prompt_file=prompt_file, budget=budget,
                seed=args.seed, with_reference=args.with_reference, n_boot=args.bootstrap, out=out,
                on_step=estimate.step, force=args.force, out_option="--out",
            )
            # the set is written: a Ctrl-C now could only break the printing and the model's release
            finishing.enter_context(interrupts_held())
            estimate.store()
            judge = None  # the model released here, while interrupts are held, not in a finalizer at exit
            gc.collect()
    except (UserInputError, PromptFileError, ModelError, CacheError, EngineInputError, ServerError, ValueError, ImportError,
            OSError, RecursionError, MemoryError) as error:
        finishing.close()
        _remove_created(created)
        # every line of the message, joined: a cut after the first line could drop the reason and the fix
        message = " ".join(line.strip() for line in str(error).splitlines() if line.strip()) or type(error).__name__
        if isinstance(error, CacheError):  # rank has neither --db nor a Python call: its one way to another cache file
            message = re.sub(r"\(--db, NLGJUDGE_OUTPUT_CACHE\s+or OutputCache\(path=\.\.\.\)\)", "(set NLGJUDGE_OUTPUT_CACHE)", message)
        if isinstance(error, OSError) and error.errno in (errno.ENOSPC, errno.EDQUOT):
            message = (f"the disk is full: cannot write {error.filename or 'a file'} ({error.strerror}); free some space, "
                       "or pass --out a folder on another disk (set NLGJUDGE_OUTPUT_CACHE for the output cache)")
        if judging and isinstance(error, (OSError, ServerError)) and not isinstance(error, UserInputError):
            message += ("; the judgments made are in the output cache, a rerun does not judge them again"
                        if STORED[0] > stored_before
                        else "; no judgment of this run was finished, so a rerun starts from the beginning")
        emit(f"error: {message}", sys.stderr)
        return 2
    except BaseException:  # an interrupt before the set was written: the folder this run made goes with it
        finishing.close()
        _remove_created(created)
        raise
    with finishing:
        with pd.option_context("display.max_columns", None, "display.width", 200, "display.max_rows", None):
            emit(result.leaderboard.to_string(index=False, float_format=lambda v: f"{v:.3f}"), secrets=False)
        for note in result.warnings:
            if note not in early:
                emit(f"warning: {note}", sys.stderr)
        emit(f"wrote {', '.join(shown_path(p) for p in result.written)}", sys.stderr)
        if UNWRITTEN:  # said where it still can be, with a failing status
            emit(f"error: {UNWRITTEN[0]}", sys.stderr if UNWRITTEN[0].startswith("cannot write to standard") else sys.stdout)
            return 1
        return 0


def _refuse_credentials(args: Any) -> None:
    """A text option that holds the API key (or another credential) would be written into report.md and
    the cache keys: refused before anything is read, without showing it."""
    from urllib.parse import unquote

    from nlgjudge.engine.server.client import API_KEY_ENV, ServerError, check_api_key, holds_secret

    key = os.environ.get(API_KEY_ENV, "").strip()
    if key:  # a key the header cannot carry as it is (the client's own check), refused before anything is read
        try:
            check_api_key(key)
        except ServerError as error:
            raise UserInputError(str(error)) from None
    for option in ("noun", "aspect", "model", "server_tokenizer", "server_identity", "prompt", "input", "out", "server_url"):
        value = getattr(args, option, None)
        if option == "server_url":  # a route may look random; only the key itself is refused there
            if isinstance(value, str) and len(key) >= 8 and key.casefold() in unquote(value).casefold():
                raise UserInputError(f"--server-url holds the API key of {API_KEY_ENV}, which would be shown and stored "
                                     "with the server's address; give the server's address without it (the key is sent "
                                     "in a header)")
            continue
        if isinstance(value, str) and (holds_secret(value) or (len(key) >= 8 and key.casefold() in value.casefold())):
            what = "the input file's path" if option == "input" else f"--{option.replace('_', '-')}"
            raise UserInputError(f"{what} holds what looks like the API key or another credential, "
                                 "which would be written into the report and the cache; pass the value it is meant to have "
                                 f"(the key goes only in {API_KEY_ENV})")


class _ServerWarnings(logging.Handler):
    """The served judge's warnings while it judges (another model or build answering, ...): printed as they
    come, and kept here so that report.md says them too (a line in a progress bar is easily lost)."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        message = record.getMessage()
        if message not in self.messages:
            self.messages.append(message)

    def __enter__(self) -> _ServerWarnings:
        logging.getLogger("nlgjudge.engine.server").addHandler(self)
        return self

    def __exit__(self, *exc: object) -> None:
        logging.getLogger("nlgjudge.engine.server").removeHandler(self)


def _refuse_key_in_input(frame: pd.DataFrame) -> None:
    """The API key in a field of the input (a system name, a context id, an output) would be written into
    the leaderboard, the report and the cache: refused before judging, naming the field, never the key."""
    from nlgjudge.engine.server.client import API_KEY_ENV

    key = os.environ.get(API_KEY_ENV, "").strip().casefold()
    if len(key) < 8:
        return
    for column in frame.columns:
        if column.startswith("_"):
            continue
        held = frame[column].map(lambda value: isinstance(value, str) and key in value.casefold())
        if held.any():
            row = frame.loc[held.idxmax()]
            where = row["_place"] if "_place" in frame.columns else f"context {row.get('context_id', '?')!r}"
            raise UserInputError(f"the input file's field {column!r} ({where}) holds the API key of {API_KEY_ENV}, "
                                 "which would be written into the leaderboard, the report and the output cache; take it "
                                 "out of the input (the key goes only in the environment variable)")


def _refuse_secret_in_prompt(prompt_file: str | None) -> None:
    """A prompt file that holds the API key (or an issued token) would put it into every request the
    output cache stores: refused before judging, without showing it."""
    from nlgjudge.engine.server.client import _ISSUED_TOKEN, API_KEY_ENV

    if prompt_file is None:
        return
    text = Path(prompt_file).read_text(encoding="utf-8", errors="replace")
    key = os.environ.get(API_KEY_ENV, "").strip()
    if (len(key) >= 8 and key.casefold() in text.casefold()) or _ISSUED_TOKEN.search(text):
        raise UserInputError(f"--prompt {shown_path(prompt_file)}: the prompt holds what looks like the API key or another "
                             "credential, which would be stored with every request in the output cache; take it out of "
                             f"the prompt (the key goes only in {API_KEY_ENV})")


#: Upper bounds of the size options: beyond them a run takes hours doing nothing useful.
MAX_BOOTSTRAP = 100_000
MAX_CONCURRENCY = 1024


def _check_cache_folders() -> None:
    """The user cache folder and the output cache's folder exist or can be made, before anything is
    read: a setting that names an impossible place is one line naming the variable."""
    from nlgjudge.config import CACHE_DIR_ENV, OUTPUT_CACHE_ENV, cache_dir, output_cache_path

    for variable, make in ((CACHE_DIR_ENV, cache_dir), (OUTPUT_CACHE_ENV, output_cache_path)):
        try:
            make()
        except ValueError as error:  # a setting that names no file (":memory:", an SQLite URI)
            raise UserInputError(str(error)) from None
        except OSError as error:
            setting = os.environ.get(variable, "").strip()
            what = f"{variable}={setting!r}" if setting else f"the user cache folder (set {CACHE_DIR_ENV} to move it)"
            raise UserInputError(f"{what}: cannot create the folder {error.filename or ''} ({_reason(error)}); "
                                 f"set {variable} to a place you can write to") from None


def _check_sizes(args: argparse.Namespace) -> None:
    """The size options, checked before anything is read (each message names its option)."""
    if not 2 <= args.bootstrap <= MAX_BOOTSTRAP:
        raise UserInputError(f"--bootstrap {args.bootstrap}: must be between 2 and {MAX_BOOTSTRAP} resamples of contexts "
                             "(e.g. 500; a few thousand already give stable intervals)")
    if not 1 <= args.max_concurrency <= MAX_CONCURRENCY:
        raise UserInputError(f"--max-concurrency {args.max_concurrency}: must be a whole number >= 1 and at most "
                             f"{MAX_CONCURRENCY} (requests in flight to a server), e.g. --max-concurrency 4")


def _check_judge_kind(model: str, option: str) -> None:
    """Refuse a packaged encoder (e.g. ``minilm-l6``) as a judge before it is loaded: it has no
    language-model head to read the answer's label probabilities from."""
    from nlgjudge.models import PACKAGED_MODELS, judge_names

    spec = PACKAGED_MODELS.get(model)
    if spec is not None and spec.kind == "encoder":
        judges = judge_names()
        raise UserInputError(f"{option} {model}: a sentence encoder, which cannot judge (it has no language-model head "
                             f"to answer with); pass a generative model, e.g. one of {judges}")


def judge_control_strings(judge: Any, *, load: bool = True) -> tuple[str, ...]:
    """The control strings of ``judge``'s tokenizer (its special tokens) and of common chat templates;
    the tokenizer is read only where the judge is loaded anyway (``load``: a run that computes)."""
    from nlgjudge.engine.prompting import control_strings

    found = set(KNOWN_CONTROL_STRINGS)
    tokenizer = None
    try:
        if getattr(judge, "backend", None) == "server" and getattr(judge, "_server", None) is not None:
            tokenizer = judge._server.tokenizer()
        elif load and hasattr(judge, "_load"):
            tokenizer = judge._load()[1]
    except Exception:  # noqa: BLE001 - a tokenizer that cannot be had: the common strings still count
        tokenizer = None
    if tokenizer is not None:
        found |= {c for c in control_strings(tokenizer) if len(c) > 3}  # not "<s>"-like short markers
    return tuple(sorted(found, key=lambda c: (-len(c), c)))


def _load_judge(model: str, runtime: dict[str, Any], truncate: bool) -> Any:
    """The judge for the command line: built and loaded before any judging, so that a model that
    cannot be loaded (unknown hub id offline, missing runtime) is one clear error, not a failure mid-run.
    Its own progress bar is off: judging shows one bar for the whole run (:mod:`nlgjudge.studies.rank`)."""
    from nlgjudge.engine import Judge

    judge = Judge(model, study="rank", truncate=truncate, progress=False, **runtime)
    try:
        judge.load()  # on a server: the one probe (what it serves, what it can do); a ServerError passes through
    except (OSError, ValueError, ImportError) as error:  # a ModelError (RuntimeError) passes through as it is
        raise UserInputError(_load_failure(model, error)) from None
    return judge


def _load_failure(model: str, error: BaseException) -> str:
    """The one line for a judge that cannot be loaded, with the fix that fits the cause: a setting
    (an environment variable) that already names its fix, a damaged file in the model cache folder
    of a packaged model, or a name that does not lead to a model."""
    from nlgjudge.models import PACKAGED_MODELS

    from nlgjudge.engine.llamacpp import BackendUnavailableError

    first = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
    if isinstance(error, BackendUnavailableError):  # the runtime, not the model: its message names the fix
        return f"cannot judge with {model!r}: {first}"
    if "NLGJUDGE_" in first:  # e.g. NLGJUDGE_THREADS=abc: the message says what to set
        return f"cannot load the model {model!r}: {first}"
    if model in PACKAGED_MODELS:
        from nlgjudge import config

        if isinstance(error, json.JSONDecodeError):
            return (f"cannot load the packaged model {model!r}: a JSON file in the model cache folder {config.cache_dir()} "
                    f"is damaged ({first}); remove it there (file_sha256.json is a memo, rebuilt on the next run) "
                    "or set NLGJUDGE_CACHE_DIR to another folder")
        return (f"cannot load the packaged model {model!r}: {first}; check the model cache folder {config.cache_dir()} "
                "(NLGJUDGE_CACHE_DIR) and the installed model packages")
    return (f"cannot load the model {model!r}: {first}; pass a packaged short name, a local model folder, "
            "or a hub id reachable from here")


if __name__ == "__main__":
    from nlgjudge.interrupt import run_interruptible

    sys.exit(run_interruptible(main))
