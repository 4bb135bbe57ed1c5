"""Background runner: compute a study's model outputs, resumable, exporting as it goes.

    python -m nlgjudge.studies list
    python -m nlgjudge.studies comparative --dataset summeval --model qwen2.5-coder-1.5b-instruct --n-contexts 6
    python -m nlgjudge.studies plan          # print the plan's jobs (nothing runs)
    python -m nlgjudge.studies plan --run    # run them in order (``make outputs``; CPU-hours)

Studies are looked up in the registry (:mod:`nlgjudge.studies.registry`). Released outputs already
in ``data/outputs/<study>-<dataset>`` are imported first, so nothing is computed twice. The judge
commits its outputs to the cache in steps of about :data:`STEP_SECONDS` of computing
(the judge's ``commit_seconds``), so a run killed at any moment loses at most the step in flight; after
every context the study is exported again (``data/outputs``), so the export lags the cache by at
most the context in progress, and a rerun computes only what the cache does not hold.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
import time
from typing import TYPE_CHECKING

from nlgjudge.studies.plan import N_SAMPLES
from nlgjudge.studies.registry import Study, StudyOptions, get_study, list_studies, released_folder, run_study, study_names

if TYPE_CHECKING:
    from nlgjudge.data import JudgeDataset
    from nlgjudge.models import ModelHandle


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m nlgjudge.studies",
        description=__doc__.split("\n\n")[0],
        epilog="Also: `list` (the registered studies), `plan` (print the released-outputs plan) and `plan --run` (run it).",
    )
    parser.add_argument("study", choices=study_names(), help="which registered study")
    from nlgjudge.data import list_datasets

    parser.add_argument("--dataset", required=True, choices=list_datasets())
    parser.add_argument("--model", required=True, help="short name of a packaged model, hub id or local folder")
    parser.add_argument("--n-contexts", type=int, default=None, help="seeded subset of contexts (default: all)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the context subset and of sampled readings")
    parser.add_argument(
        "--max-contexts", type=int, default=None, help="compute only the first N contexts of the subset (in its order)"
    )
    parser.add_argument("--aspects", nargs="*", default=None)
    parser.add_argument("--templates", nargs="*", type=int, default=None, help="prompt templates (default: the study's)")
    parser.add_argument("--samples", type=int, default=N_SAMPLES, help=f"sampled readings: samples per prompt (K; default {N_SAMPLES})")
    parser.add_argument(
        "--backend", default=None, choices=("auto", "torch", "llamacpp", "server"),
        help="model runtime (default: $NLGJUDGE_BACKEND or auto: llama.cpp for packaged GGUF models)",
    )
    parser.add_argument("--server-url", default=None,
                        help="with --backend server: the OpenAI-compatible server's URL (default $NLGJUDGE_SERVER_URL); "
                        "--model is the name it serves")
    parser.add_argument("--server-tokenizer", default=None,
                        help="with --backend server: the packaged model whose tokenizer and chat template build the "
                        "prompts (default: --model), or, with --model a packaged name, a local folder with its tokenizer "
                        "or a hub id")
    parser.add_argument("--server-identity", default=None,
                        help="with --backend server: what the cache keys name as the served weights and settings, for "
                        "a server that reports no system_fingerprint (default $NLGJUDGE_SERVER_IDENTITY)")
    parser.add_argument("--max-concurrency", type=int, default=4, help="with --backend server: requests in flight (default 4)")
    parser.add_argument("--data-dir", default=None, help="data directory (default: $NLGJUDGE_DATA_DIR)")
    parser.add_argument("--db", default=None, help="cache database (default: the user cache)")
    parser.add_argument("--no-export", action="store_true", help="do not write data/outputs")
    return parser


class UsageError(ValueError):
    """A bad argument, found before anything is loaded or written (the message names the option)."""


#: The judge stores its outputs in steps of about this many seconds of computing (its ``commit_seconds``):
#: a run killed at any moment loses at most the step in flight, not a chunk of 256 requests (minutes on a CPU).
STEP_SECONDS = 15.0


def main(argv: list[str] | None = None) -> int:
    """Run the command line; a bad argument or a known failure (bad data directory, unknown model,
    damaged cache, missing runtime) is one ``error:`` line on stderr and exit status 2, never a
    traceback. Every argument is checked before the cache is opened or the model loaded."""
    from nlgjudge.cache import CacheError, OutputsFormatError, StaleExportError
    from nlgjudge.data import DataNotFoundError, DataValidationError
    from nlgjudge.engine import EngineInputError
    from nlgjudge.engine.server import ServerError
    from nlgjudge.models import ModelError

    known = (UsageError, CacheError, OutputsFormatError, StaleExportError, DataNotFoundError, DataValidationError,
             EngineInputError, ModelError, ServerError, ImportError)
    try:
        return _main(argv)
    except known as error:
        line = _data_not_found(error) if isinstance(error, DataNotFoundError) else _one_line(error)
        print(f"error: {line}", file=sys.stderr)
        return 2
    except OSError as error:  # a file or folder the run needs (the options are checked first; this is the rest)
        where = f" ({error.filename})" if error.filename else ""
        print(f"error: {error.strerror or _one_line(error)}{where}", file=sys.stderr)
        return 2


def _data_not_found(error: BaseException) -> str:
    """A dataset's long not-found message (where it looked, how to fix it, several lines) as one line
    with what was looked for on disk and the command line's fix."""
    lines = [line.strip() for line in str(error).splitlines() if line.strip()]
    local = next((line.removeprefix("- local:").strip() for line in lines if line.startswith("- local:")), None)
    where = f" ({local})" if local else ""
    return (f"{lines[0].rstrip('.') if lines else 'the dataset was not found'}{where}; pass --data-dir, or set "
            "NLGJUDGE_DATA_DIR, to the data directory that holds it (one sub-folder per dataset)")


def _one_line(error: BaseException) -> str:
    text = str(error).strip()
    return text.splitlines()[0] if text else type(error).__name__


def _main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["plan"]:
        return run_plan(argv[1:])
    if argv[:1] == ["list"]:
        if argv[1:]:
            raise UsageError(f"list takes no options; got {' '.join(argv[1:])}")
        for study in list_studies():
            print(f"{study.name:<12} {study.description}  [operations: {', '.join(study.operations)}]")
        return 0
    return _run_study(argv)


def _run_study(argv: list[str]) -> int:
    """One study job: ``STUDY --dataset ... --model ...`` (the parser's arguments)."""
    args = _parser().parse_args(argv)
    for option, value, least in (("--n-contexts", args.n_contexts, 1), ("--max-contexts", args.max_contexts, 1),
                                 ("--samples", args.samples, 1), ("--seed", args.seed, 0)):
        if value is not None and value < least:
            raise UsageError(f"{option} {value}: must be at least {least}"
                             + (" (or left out: every context)" if option.endswith("contexts") else ""))
    runtime = _runtime_options(args)
    args.data_dir = _check_data_dir(args.data_dir)
    args.db = _check_db(args.db)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    # httpx logs every request's URL at INFO: the study's own lines are what the log is for.
    logging.getLogger("httpx").setLevel(logging.WARNING)

    from nlgjudge.cache import OutputCache
    from nlgjudge.data import load_dataset
    from nlgjudge.engine import Judge
    from nlgjudge.studies.released import export_released, import_released

    from nlgjudge.engine.judge import served_handle
    from nlgjudge.models import resolve_model

    if runtime["backend"] == "server":  # the packaged model that builds the prompts stands for the served one
        handle = served_handle(args.model, args.server_tokenizer)
    else:
        handle = resolve_model(args.model)  # an unknown name fails now, before data and cache are read
        if handle.kind == "encoder":  # otherwise its prompts fail to build (or its tokenizer is sought online)
            from nlgjudge.models import judge_names

            judges = judge_names()
            raise UsageError(f"--model {args.model}: a sentence encoder, which cannot judge (it has no language-model "
                             f"head to answer with); pass a generative model, e.g. one of {judges}")
    study = get_study(args.study)
    try:
        ds = load_dataset(args.dataset, data_dir=args.data_dir, n_contexts=args.n_contexts, seed=args.seed)
    except ValueError:
        if args.n_contexts is None:
            raise
        available = load_dataset(args.dataset, data_dir=args.data_dir).n_contexts
        raise UsageError(f"--n-contexts {args.n_contexts}: {args.dataset} has {available} contexts; pass at most "
                         f"{available}, or leave --n-contexts out for all of them") from None
    if args.max_contexts is not None:
        ds = ds.first_contexts(min(args.max_contexts, ds.n_contexts))
    options = StudyOptions(
        aspects=args.aspects, templates=None if args.templates is None else tuple(args.templates),
        n_samples=args.samples, seed=args.seed,
        data_dir=args.data_dir,
    )
    _check_requests(study, handle, ds, options)
    folder = released_folder(study, ds.info.name)
    cache = OutputCache(args.db)
    try:
        cache.count()  # opened (created if new) now: a path that cannot hold it is one line naming --db
    except OSError as error:
        raise UsageError(f"--db {args.db}: cannot open or create the cache file there "
                         f"({error.strerror or type(error).__name__}); pass --db a file in a folder you can write to") from None
    imported = import_released(folder, cache)
    for dependency in study.depends_on:  # e.g. the likelihood study scores the released summaries
        import_released(released_folder(dependency, ds.info.name), cache)
    print(f"{folder}: {ds.n_contexts} contexts; imported {imported} released outputs", flush=True)
    judge = Judge(args.model, cache=cache, study=folder, commit_seconds=STEP_SECONDS, **runtime)
    if runtime["backend"] == "server":
        judge.load()  # the one probe of the server: a server that is down or cannot do it fails here, in one line
    started = time.time()
    done = 0

    def exported(context_id: str) -> None:
        nonlocal done
        done += 1
        if not args.no_export:
            export_released(folder, cache)
        elapsed = time.time() - started
        print(f"[{done}/{ds.n_contexts}] {context_id} done; {elapsed / 60:.1f} min so far", flush=True)

    run_study(study, judge, ds, options, on_context_done=exported)
    print(judge.cache_stats.summary(), flush=True)
    return 0


def _runtime_options(args: argparse.Namespace) -> dict[str, object]:
    """The Judge's runtime arguments, checked before anything is loaded (a :class:`UsageError` otherwise)."""
    from nlgjudge.engine.judge import BACKEND_ENV

    if args.max_concurrency < 1:  # refused with any backend: a value that is ignored is still a mistake
        raise UsageError(f"--max-concurrency {args.max_concurrency}: must be at least 1 (requests in flight to a server)")
    backend = args.backend or os.environ.get(BACKEND_ENV, "").strip() or None
    server_only = [name for name, value in (("--server-url", args.server_url), ("--server-tokenizer", args.server_tokenizer),
                                            ("--server-identity", args.server_identity))
                   if value is not None]
    if backend != "server":
        if server_only:
            raise UsageError(f"{server_only[0]} is for a judge on a server: pass --backend server too")
        from nlgjudge.engine.llamacpp import THREADS_ENV, thread_count

        if os.environ.get(THREADS_ENV, "").strip():  # a bad setting is named now, even if all is in the cache
            try:
                thread_count(None)
            except ValueError as error:
                raise UsageError(str(error)) from None
        return {"backend": args.backend}
    from nlgjudge.engine.server import ServerError
    from nlgjudge.engine.server.client import base_url
    from nlgjudge.models import PACKAGED_MODELS, judge_names

    try:
        base_url(args.server_url)
    except ServerError as error:
        raise UsageError(f"--server-url: {error}") from None
    from nlgjudge.engine.server.runtime import served_prompts_known

    prompt_model = PACKAGED_MODELS.get(args.server_tokenizer or args.model)
    if prompt_model is not None and prompt_model.kind == "encoder":  # no chat template: sought on the hub otherwise
        what = f"--server-tokenizer {args.server_tokenizer}" if args.server_tokenizer else f"--model {args.model}"
        judges = judge_names()
        raise UsageError(f"{what}: a sentence encoder, which has no chat template to build a judge's prompts with; "
                         f"pass --server-tokenizer one of {judges}")
    if not served_prompts_known(args.model, args.server_tokenizer):
        what = f"--server-tokenizer {args.server_tokenizer}" if args.server_tokenizer else f"--model {args.model}"
        raise UsageError(f"{what}: the prompts for a served model are built with a packaged model's tokenizer and "
                         f"chat template; pass --server-tokenizer one of {judge_names()}, or, with --model "
                         "a packaged name, a local folder with its tokenizer or a hub id")
    from nlgjudge.engine.server.runtime import check_identity

    try:
        identity = check_identity(args.server_identity) or None if args.server_identity is not None else None
    except ValueError as error:
        raise UsageError(f"--server-identity: {error}") from None
    return {"backend": "server", "server_url": args.server_url, "server_tokenizer": args.server_tokenizer,
            "max_concurrency": args.max_concurrency, "server_identity": identity}


def _expanded(option: str, value: str, empty_fix: str) -> str:
    """``value`` with ``~`` expanded; an empty value is refused naming ``option`` and how to fix it."""
    if not value.strip():
        raise UsageError(f"{option} {value!r} is empty; {empty_fix}")
    return os.path.expanduser(value)


def _check_data_dir(value: str | None) -> str | None:
    """``--data-dir`` with ``~`` expanded; a file, an empty name or a missing folder is refused naming the option."""
    if value is None:
        return None
    path = _expanded("--data-dir", value, "pass the data directory (one sub-folder per dataset), "
                                          "or leave it out for $NLGJUDGE_DATA_DIR")
    if os.path.exists(path) and not os.path.isdir(path):
        raise UsageError(f"--data-dir {value}: is a file, not a folder; pass the data directory (one sub-folder per dataset)")
    if not os.path.exists(path):
        raise UsageError(f"--data-dir {value}: no such folder; pass the data directory (one sub-folder per dataset)")
    return path


def _check_db(value: str | None) -> str | None:
    """``--db`` with ``~`` expanded; an empty name or a folder is refused naming the option."""
    if value is None:
        return None
    path = _expanded("--db", value, "pass the cache file (e.g. --db outputs.sqlite), or leave it out for the user cache")
    if os.path.isdir(path):
        raise UsageError(f"--db {value}: is a folder; pass the cache file's path (e.g. --db {os.path.join(value, 'outputs.sqlite')})")
    return path


def _check_requests(study: Study, handle: ModelHandle, ds: JudgeDataset, options: StudyOptions) -> None:
    """Build one context's requests (no model loaded, nothing written): ``--aspects`` the dataset does
    not have, or ``--templates`` the study does not have, fail here as a :class:`UsageError`."""
    info = ds.info
    if options.aspects is not None:
        unknown = [a for a in options.aspects if a not in info.aspects]
        if unknown or not options.aspects:
            raise UsageError(f"--aspects {' '.join(options.aspects) or '(none)'}: {info.name}'s aspects are "
                             f"{', '.join(info.aspects)}; pass some of them, or leave --aspects out for all")
    if options.templates is not None and not options.templates:
        raise UsageError("--templates is given without a number; pass the templates' numbers (e.g. --templates 1 2), "
                         "or leave --templates out for the study's own")
    one = ds.first_contexts(1)
    try:
        for _, build in study.checks(handle, one, options):
            build(one)
    except (ValueError, KeyError, IndexError, TypeError) as error:
        option = f"--templates {' '.join(map(str, options.templates))}" if options.templates is not None else "the options"
        first = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        raise UsageError(f"{option}: the {study.name} study cannot build its prompts with them ({first})") from None


def run_plan(argv: list[str]) -> int:
    """Print every job of :data:`nlgjudge.studies.plan.PLAN` in order; with ``--run``, run them too.

    Printing is the default because running is CPU-hours of work (``make outputs`` passes
    ``--run``); ``--list`` is accepted as the explicit form of the default.
    """
    from nlgjudge.studies.plan import PLAN

    unknown = [arg for arg in argv if arg not in ("--run", "--list")]
    if unknown or {"--run", "--list"} <= set(argv):
        print(f"error: plan takes --run (run the jobs) or nothing/--list (print them); got {' '.join(argv)}",
              file=sys.stderr)
        return 2
    run = "--run" in argv
    for number, job in enumerate(PLAN, 1):
        print(f"job {number}/{len(PLAN)}: {' '.join(job.argv())}", flush=True)
        if run:
            _run_study(job.argv())
    if not run:
        print("(printed only; `python -m nlgjudge.studies plan --run` or `make outputs` runs them)")
    return 0


if __name__ == "__main__":
    from nlgjudge.interrupt import run_interruptible

    sys.exit(run_interruptible(main))
