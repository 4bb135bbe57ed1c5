"""Execute the chapter notebooks and build the HTML book.

Command line (the Makefile's ``book``, ``chapter`` and ``html`` targets call it)::

    python -m nlgjudge.book list                          # chapters, their default parameters and types
    python -m nlgjudge.book chapter datasets -p n_contexts 10 -p datasets "[summeval, webnlg]"
    python -m nlgjudge.book html                          # jupyter-book build, warnings are errors
    python -m nlgjudge.book build [--force]               # every chapter with defaults, then html

Notebook execution belongs to papermill: ``notebooks/<nb>.ipynb`` runs in the ``nlgjudge`` kernel
and is written to ``book/<name>.ipynb``, which is committed. Each executed notebook carries a stamp
(a hash of the source notebook, its parameters, the library's code and the chapter's declared
inputs) in its metadata; ``build`` re-executes a chapter only when that stamp is stale, so a fresh
clone rebuilds the book without running any model.

``-p`` values are read as YAML and then checked against the chapter's declared parameter types
(:mod:`nlgjudge.chapters`) before papermill starts: a wrong value exits with status 2 and one line
naming the chapter, the parameter, the expected type and the value, and leaves ``book/`` alone.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import logging
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import warnings
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import yaml

from nlgjudge.config import DOWNLOADS_ENV
from nlgjudge.chapters import (
    Chapter,
    ParameterError,
    UnknownChapterError,
    get_chapter,
    list_chapters,
    shell_quoted,
    yaml_text,
)
from nlgjudge.config import REPO_ROOT

KERNEL_NAME = "nlgjudge"
STAMP_KEY = "nlgjudge"
HTML_DIRNAME = Path("_build") / "html"
#: Path of the MathJax entry point inside the built HTML (see book/_ext/offline_book.py).
LOCAL_MATHJAX = Path("_static") / "mathjax" / "tex-chtml.js"


class BookError(RuntimeError):
    """A chapter could not be executed or the book could not be built; the message says why."""


# --------------------------------------------------------------------------------------------
# Parameters


def parse_parameter_value(text: str) -> Any:
    """Type a command-line value: YAML (``10`` -> int, ``[a, b]`` -> list, ``true`` -> bool),
    with Python's ``None``/``True``/``False`` spellings accepted as papermill does."""
    python_literals = {"None": None, "True": True, "False": False}
    if text in python_literals:
        return python_literals[text]
    hidden = next(((k, ch) for k, ch in enumerate(text, start=1) if not ch.isprintable() and ch not in "\t"), None)
    if hidden is not None:  # YAML cannot read it either, and its own error would point elsewhere
        raise ParameterError(f"parameter value {text!r} holds a control character (U+{ord(hidden[1]):04X} at character "
                             f"{hidden[0]}); pass the value without it")
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError:
        raise ParameterError(
            f"cannot read parameter value {text!r}: it is not valid YAML; quote lists as "
            "-p name \"[a, b]\" and strings containing ':' as -p name \"'a: b'\""
        ) from None


def parse_overrides(pairs: Iterable[Sequence[str]]) -> dict[str, Any]:
    """``[("n_contexts", "10"), ...]`` -> ``{"n_contexts": 10, ...}``; a repeated name is an error."""
    overrides: dict[str, Any] = {}
    for name, value in pairs:
        if name in overrides:
            raise ParameterError(f"parameter {name!r} is given twice")
        overrides[name] = parse_parameter_value(value)
    return overrides


def parameters_from_environment(variable: str) -> list[tuple[str, str]]:
    """The ``-p NAME VALUE`` pairs of ``make chapter PARAMS=...``, which the Makefile hands over
    unsplit in ``$variable`` so that a bad quoting is named here in one line (bash would only say
    "unexpected EOF"). The text is split like a shell command line (:func:`shlex.split`)."""
    import os
    import shlex

    text = os.environ.get(variable, "")
    example = "e.g. PARAMS='-p n_contexts 3 -p datasets \"[summeval, webnlg]\"'"
    try:
        words = shlex.split(text)
    except ValueError as error:  # an unmatched quote or a trailing backslash
        raise ParameterError(f"PARAMS {text!r}: cannot split it into words ({error}); close every quote, "
                             f"{example}") from None
    pairs: list[tuple[str, str]] = []
    while words:
        flag, *rest = words
        if flag not in ("-p", "--parameter") or len(rest) < 2:
            got = "a name and no value" if flag in ("-p", "--parameter") and rest else repr(flag)
            raise ParameterError(f"PARAMS {text!r}: expected '-p NAME VALUE' pairs, got {got}; quote a value "
                                 f"with spaces, {example}")
        pairs.append((rest[0], rest[1]))
        words = rest[2:]
    return pairs


# --------------------------------------------------------------------------------------------
# Staleness stamp


def _hash_path(digest: "hashlib._Hash", path: Path, root: Path) -> None:
    files = sorted(p for p in path.rglob("*") if p.is_file()) if path.is_dir() else [path]
    for file in files:
        if "__pycache__" in file.parts or file.suffix in {".pyc", ".pyo"}:
            continue
        digest.update(file.relative_to(root).as_posix().encode())
        digest.update(b"\0")
        digest.update(file.read_bytes())
        digest.update(b"\0")


def compute_stamp(chapter: Chapter, parameters: Mapping[str, Any], root: Path = REPO_ROOT) -> str:
    """A hash of everything an executed chapter depends on: its source notebook, its parameters,
    the library's code and the chapter's declared inputs (released outputs, reported numbers)."""
    digest = hashlib.sha256()
    digest.update(json.dumps(dict(parameters), sort_keys=True, default=str).encode())
    _hash_path(digest, chapter.source_path(root), root)
    library = root / "lib" / "nlgjudge"
    if library.is_dir():
        _hash_path(digest, library, root)
    for relative in chapter.inputs:
        path = root / relative
        if path.exists():
            _hash_path(digest, path, root)
        else:
            digest.update(f"missing:{relative}".encode())
    return digest.hexdigest()


def recorded_stamp(chapter: Chapter, root: Path = REPO_ROOT) -> str | None:
    """The stamp stored in the executed notebook, or None when there is none."""
    output = chapter.output_path(root)
    if not output.is_file():
        return None
    try:
        metadata = json.loads(output.read_text(encoding="utf-8")).get("metadata", {})
    except json.JSONDecodeError:
        return None
    value = metadata.get(STAMP_KEY, {}).get("stamp")
    return value if isinstance(value, str) else None


def is_up_to_date(chapter: Chapter, root: Path = REPO_ROOT) -> bool:
    """Whether ``book/<name>.ipynb`` was executed with the default parameters from the current code."""
    return recorded_stamp(chapter, root) == compute_stamp(chapter, chapter.parameters(), root)


# --------------------------------------------------------------------------------------------
# Execution


def _check_kernel(kernel_name: str) -> None:
    from jupyter_client.kernelspec import KernelSpecManager, NoSuchKernel

    try:
        KernelSpecManager().get_kernel_spec(kernel_name)
    except NoSuchKernel:
        raise BookError(
            f"the Jupyter kernel {kernel_name!r} is not registered in this environment; run "
            f"`make install` (it runs `python -m ipykernel install --sys-prefix --name {kernel_name}`)"
        ) from None


def scrub_machine_paths(text: str, root: Path) -> str:
    """Replace this machine's paths in an executed notebook (committed, read on other machines).

    Papermill records absolute input/output paths, and messages may print the data directory;
    both become placeholders (``<repo>``, ``$NLGJUDGE_DATA_DIR``) so no machine path is committed.
    """
    from nlgjudge.config import data_dir

    replacements = [(str(Path(root).resolve()), "<repo>")]
    data = data_dir()
    if data is not None:
        replacements.insert(0, (str(Path(data).resolve()), "$NLGJUDGE_DATA_DIR"))
        replacements.insert(1, (str(data), "$NLGJUDGE_DATA_DIR"))
    for old, new in replacements:
        if old and old != "/":
            text = text.replace(json.dumps(old)[1:-1], new)
    return text


# --------------------------------------------------------------------------------------------
# Running a chapter: quiet pages, one progress line on the terminal

#: The chapter kernel's environment, set for the run only: progress bars (tqdm's, Hugging Face's
#: downloads and "Loading weights") would be pasted into the page as dozens of boxes, and
#: transformers' advisory warnings with them. The terminal has its own line (:class:`ChapterProgress`).
KERNEL_ENVIRONMENT: dict[str, str] = {
    "TQDM_DISABLE": "1",
    "HF_HUB_DISABLE_PROGRESS_BARS": "1",
    "TRANSFORMERS_VERBOSITY": "error",
    "TRANSFORMERS_NO_ADVISORY_WARNINGS": "1",
}

#: Name under which :class:`ProgressEngine` is registered with papermill.
ENGINE_NAME = "nlgjudge"


@contextmanager
def kernel_environment(variables: Mapping[str, str] = KERNEL_ENVIRONMENT) -> Iterator[None]:
    """Set ``variables`` for the kernel papermill starts (it inherits this process's
    environment), and restore the previous values afterwards."""
    previous = {name: os.environ.get(name) for name in variables}
    os.environ.update(variables)
    try:
        yield
    finally:
        for name, value in previous.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def _ipc_kernel_manager(socket_dir: Path) -> type:
    """A kernel manager whose kernel talks over local sockets in ``socket_dir``: over TCP on the
    loopback, ipykernel warns at every start that the traffic is not encrypted."""
    from jupyter_client.manager import KernelManager

    class IpcKernelManager(KernelManager):
        def __init__(self, **kwargs: Any) -> None:
            super().__init__(**kwargs)
            self.transport = "ipc"
            self.ip = str(socket_dir / "kernel")

    return IpcKernelManager


from nlgjudge.prose import duration_text  # noqa: E402 - kept importable as book.duration_text


class ChapterProgress:
    """One line on the terminal for a chapter being executed: cells done, time taken and, where the
    last execution ran the same parameters, the time left.

    The estimate is the last execution's time for the cells still to run, scaled by how this run's
    pace compares so far (``previous`` holds that execution's seconds per cell). Without them (a first
    run, or new parameters, which may compute what the last run only read) it says so rather than
    guessing. On a terminal the line is rewritten in place; in a log, only the last state is printed.
    """

    def __init__(self, name: str, n_cells: int, previous: Sequence[float] | None, stream: Any = None,
                 clock: Callable[[], float] = time.perf_counter) -> None:
        self.name = name
        self.n_cells = n_cells
        self.previous = list(previous) if previous is not None and len(previous) == n_cells else None
        self.stream = stream if stream is not None else sys.stdout
        self.clock = clock
        self.started = clock()
        self.done = 0
        self.interactive = bool(getattr(self.stream, "isatty", lambda: False)())

    def seconds_left(self) -> float | None:
        if self.previous is None:
            return None
        expected_so_far = sum(self.previous[: self.done])
        remaining = sum(self.previous[self.done :])
        pace = (self.clock() - self.started) / expected_so_far if expected_so_far >= 1.0 else 1.0
        return remaining * pace

    def line(self) -> str:
        elapsed = duration_text(self.clock() - self.started)
        text = f"[nlgjudge.book] {self.name}: cell {self.done}/{self.n_cells}, {elapsed}"
        left = self.seconds_left()
        if self.done < self.n_cells:
            if left is not None:
                text += f", about {duration_text(left)} left"
            else:
                text += " (no estimate: the last execution ran other parameters)"
        return text

    def cell_done(self) -> None:
        self.done += 1
        if self.interactive:
            self.stream.write("\r\033[K" + self.line())
            self.stream.flush()

    def finish(self, failed: bool = False) -> None:
        outcome = "failed" if failed else "done"
        line = f"[nlgjudge.book] {self.name}: {outcome} after {self.done}/{self.n_cells} cells in " \
               f"{duration_text(self.clock() - self.started)}"
        self.stream.write(("\r\033[K" if self.interactive else "") + line + "\n")
        self.stream.flush()


def previous_cell_seconds(executed: Path, parameters: Mapping[str, Any]) -> list[float] | None:
    """Seconds per cell of the last execution in ``executed`` (papermill records them), or None when
    it ran other parameters or has no timings."""
    import nbformat

    if not executed.is_file():
        return None
    try:
        notebook = nbformat.reads(executed.read_text(encoding="utf-8"), as_version=4)
    except Exception:  # an unreadable page gives no estimate; the run itself will say what is wrong
        return None
    recorded = notebook.metadata.get(STAMP_KEY, {}).get("parameters")
    if recorded != json.loads(json.dumps(dict(parameters), default=str)):
        return None
    seconds = [cell.metadata.get("papermill", {}).get("duration") for cell in notebook.cells]
    if any(value is None for value in seconds[1:]):  # markdown cells record 0, never None
        return None
    return [float(value or 0.0) for value in seconds]


def _register_progress_engine() -> None:
    from papermill.engines import NBClientEngine, papermill_engines

    class ProgressEngine(NBClientEngine):
        """papermill's nbclient engine, telling a :class:`ChapterProgress` when each cell is done
        (in place of papermill's per-cell bar, whose estimate assumes every cell takes as long)."""

        @classmethod
        def execute_managed_notebook(cls, nb_man: Any, kernel_name: str, **kwargs: Any) -> Any:
            progress: ChapterProgress | None = kwargs.pop("chapter_progress", None)
            if progress is not None:
                complete = nb_man.cell_complete

                def cell_complete(cell: Any, cell_index: Any = None, **more: Any) -> Any:
                    result = complete(cell, cell_index=cell_index, **more)
                    progress.cell_done()
                    return result

                nb_man.cell_complete = cell_complete
            return super().execute_managed_notebook(nb_man, kernel_name, **kwargs)

    papermill_engines.register(ENGINE_NAME, ProgressEngine)


class _RegisteredParameterNotice(logging.Filter):
    """Drops papermill's "Passed unknown parameter" and "Unable to parse line" warnings about a
    chapter's registered parameters: the registry, not the notebook's parameters cell, declares
    them (and has type-checked the values), and papermill injects them all the same. A name the
    registry does not know never reaches papermill (it is an error before the run)."""

    def __init__(self, names: Iterable[str]) -> None:
        super().__init__()
        self.names = set(names)

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        unknown = re.match(r"Passed unknown parameter: (\w+)", message)
        if unknown:
            return unknown.group(1) not in self.names
        unparsed = re.match(r"Unable to parse line \d+ '(\w+)\s*=", message)
        return not (unparsed and unparsed.group(1) in self.names)


def normalised_source(source: Path, scratch_dir: Path) -> Path:
    """A copy of ``source`` with the cell ids nbformat 4.5 requires filled in (a notebook saved by an
    older tool lacks some, and nbformat warns at every read and write of it); ``source`` itself when
    nothing is missing."""
    import nbformat
    from nbformat.validator import normalize

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", category=nbformat.warnings.MissingIDFieldWarning)
        raw = json.loads(source.read_text(encoding="utf-8"))
        changes, fixed = normalize(raw)  # fills in missing and repeated cell ids
    if not changes:
        return source
    copy = scratch_dir / f"{source.stem}.source.ipynb"
    copy.write_text(json.dumps(fixed, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return copy


def command_line_hints(text: str, names: Iterable[str]) -> str:
    """Python-style settings in a failing cell's message (``backend="torch"``) as the chapter option
    that sets them (``-p backend torch``), for the chapter's parameters ``names``."""
    pattern = r"\b(" + "|".join(re.escape(name) for name in sorted(names, key=len, reverse=True)) + \
              r")\s*=\s*(['\"])([^'\"]*)\2"
    return re.sub(pattern, lambda m: f"`-p {m.group(1)} {shell_quoted(m.group(3))}`", text) if names else text


def execute_chapter(
    chapter: Chapter,
    overrides: Mapping[str, Any] | None = None,
    root: Path = REPO_ROOT,
    output: Path | None = None,
    kernel_name: str = KERNEL_NAME,
    progress_bar: bool = True,
) -> Path:
    """Run the chapter's source notebook with papermill (defaults merged with ``overrides``).

    Writes ``book/<name>.ipynb`` (or ``output``) and stamps it. Papermill writes into
    ``_build/papermill/`` first and the result replaces the target only when every cell ran, so a
    failure never overwrites the committed chapter; it raises :class:`BookError` naming the
    chapter, the failing cell and where the partially executed notebook can be read.
    """
    import nbformat
    import papermill

    source = chapter.source_path(root)
    if not source.is_file():
        raise BookError(f"chapter {chapter.name!r}: its notebook {source} does not exist")
    parameters = chapter.parameters(overrides)
    target = output if output is not None else chapter.output_path(root)
    scratch = root / "_build" / "papermill" / f"{chapter.name}.ipynb"
    scratch.parent.mkdir(parents=True, exist_ok=True)
    _check_kernel(kernel_name)
    print(f"[nlgjudge.book] executing {chapter.name}: {source.relative_to(root)} -> {target} with {parameters}")
    runnable = normalised_source(source, scratch.parent)
    n_cells = len(json.loads(runnable.read_text(encoding="utf-8"))["cells"]) + 1  # + papermill's parameters cell
    progress = ChapterProgress(chapter.name, n_cells, previous_cell_seconds(target, parameters)) if progress_bar else None
    _register_progress_engine()
    notice = _RegisteredParameterNotice(chapter.defaults)
    papermill_log = logging.getLogger("papermill")
    papermill_log.addFilter(notice)
    # The CSV files the page offers (nlgjudge.display.download_link) are written beside the scratch
    # copy and published beside the page only when every cell ran, like the page itself.
    downloads = scratch.parent / "downloads" / chapter.name
    shutil.rmtree(downloads, ignore_errors=True)
    downloads.mkdir(parents=True)
    try:
        with kernel_environment({**KERNEL_ENVIRONMENT, DOWNLOADS_ENV: str(downloads)}), \
                tempfile.TemporaryDirectory(prefix="nlgjudge-kernel-") as sockets:
            papermill.execute_notebook(
                str(runnable),
                str(scratch),
                parameters=parameters,
                kernel_name=kernel_name,
                cwd=str(root),
                progress_bar=False,  # papermill's bar is per cell, its estimate as if every cell took as long
                report_mode=False,
                engine_name=ENGINE_NAME,
                chapter_progress=progress,
                kernel_manager_class=_ipc_kernel_manager(Path(sockets)),
            )
    except papermill.PapermillExecutionError as error:
        if progress is not None:
            progress.finish(failed=True)
        message = command_line_hints(f"{error.ename}: {error.evalue}", chapter.defaults)
        raise BookError(
            f"chapter {chapter.name!r} failed in cell {error.exec_count}: {message}\n"
            f"(the partially executed notebook is {scratch}; {target} was left as it was)"
        ) from None
    finally:
        papermill_log.removeFilter(notice)
        if runnable != source:
            runnable.unlink(missing_ok=True)
    if progress is not None:
        progress.finish()
    notebook = nbformat.read(scratch, as_version=4)
    notebook.metadata.setdefault("papermill", {})["input_path"] = str(source)  # not the normalised copy
    for cell in notebook.cells:  # the values are on the page in "Parameters of this chapter", with their meanings
        tags = cell.metadata.get("tags", [])
        if "injected-parameters" in tags and "remove-cell" not in tags:
            cell.metadata["tags"] = [*tags, "remove-cell"]
    notebook.metadata[STAMP_KEY] = {
        "chapter": chapter.name,
        "parameters": json.loads(json.dumps(parameters, default=str)),
        "defaults": parameters == chapter.parameters(),
        "stamp": compute_stamp(chapter, parameters, root),
    }
    nbformat.write(notebook, scratch)
    scratch.write_text(scrub_machine_paths(scratch.read_text(encoding="utf-8"), root), encoding="utf-8")
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.move(scratch, target)
    published = target.parent / "downloads" / chapter.name  # the page links downloads/<chapter>/<name>.csv
    shutil.rmtree(published, ignore_errors=True)
    if any(downloads.iterdir()):
        shutil.copytree(downloads, published)
    shutil.rmtree(downloads, ignore_errors=True)
    return target


# --------------------------------------------------------------------------------------------
# HTML


def check_toc(root: Path = REPO_ROOT, chapters: Sequence[Chapter] | None = None) -> None:
    """Every registered chapter is in ``_toc.yml`` and has been executed into ``book/``."""
    chapters = list(list_chapters() if chapters is None else chapters)
    toc_path = root / "_toc.yml"
    toc = yaml.safe_load(toc_path.read_text(encoding="utf-8"))
    entries = {str(entry.get("file")) for entry in _toc_files(toc)}
    missing_toc = [c.name for c in chapters if c.toc_entry not in entries]
    if missing_toc:
        raise BookError(f"chapters {missing_toc} are registered but not listed in {toc_path}; add `- file: book/<name>`")
    missing_output = [c.name for c in chapters if not c.output_path(root).is_file()]
    if missing_output:
        raise BookError(
            f"chapters {missing_output} have not been executed into book/; run "
            + " and ".join(f"`make chapter NAME={name}`" for name in missing_output)
            + " (or `make book`)"
        )


def _toc_files(node: Any) -> Iterable[dict[str, Any]]:
    if isinstance(node, dict):
        if "file" in node:
            yield node
        for value in node.values():
            yield from _toc_files(value)
    elif isinstance(node, list):
        for item in node:
            yield from _toc_files(item)


def write_register_page(root: Path = REPO_ROOT) -> None:
    """``book/register.md``, the analysis plan's page, written from the claims register when it differs
    (the page is generated: the register is the one place a claim is declared)."""
    from nlgjudge.register import page_markdown

    page = root / "book" / "register.md"
    text = page_markdown({c.name: c.title for c in list_chapters()})
    if not page.exists() or page.read_text(encoding="utf-8") != text:
        page.write_text(text, encoding="utf-8")
        print("[nlgjudge.book] book/register.md written from the claims register")


def build_html(root: Path = REPO_ROOT, output_dir: Path | None = None) -> Path:
    """``jupyter-book build`` with warnings as errors; returns the HTML folder.

    MathJax is copied into the HTML by the book's ``offline_book`` extension; afterwards every
    page is checked to load nothing from the network.
    """
    check_toc(root)
    write_register_page(root)
    from nlgjudge.teaching import write_page as write_teachers_page

    if write_teachers_page(root):
        print("[nlgjudge.book] book/teachers.md written from the built chapters")
    # jupyter_book.cli.main has no __main__ guard; call its click entry point from this interpreter.
    launcher = "from jupyter_book.cli.main import main; main(prog_name='jupyter-book')"
    # --all: a fresh environment every time, so that a warning on an unchanged page still fails
    command = [sys.executable, "-c", launcher, "build", str(root), "-W", "-n", "--keep-going", "--all"]
    if output_dir is not None:
        command += ["--path-output", str(output_dir)]
    print("[nlgjudge.book] jupyter-book " + " ".join(command[3:]))
    result = subprocess.run(command, cwd=root, check=False)
    if result.returncode != 0:
        raise BookError(f"jupyter-book build failed (exit code {result.returncode}); see the warnings above")
    html = (output_dir if output_dir is not None else root) / HTML_DIRNAME
    problems = external_resources(html)
    if problems:
        listing = "\n".join(f"  {page}: {url}" for page, url in problems[:20])
        raise BookError(f"the built book loads {len(problems)} resource(s) from the network:\n{listing}")
    if not (html / LOCAL_MATHJAX).is_file():
        raise BookError(f"{html / LOCAL_MATHJAX} is missing: the offline_book extension (book/_ext) did not run")
    print(f"[nlgjudge.book] book written to {html / 'index.html'}")
    return html


# --------------------------------------------------------------------------------------------
# Offline check

_REMOTE = re.compile(r"^\s*(https?:)?//", re.IGNORECASE)
_CSS_REMOTE = re.compile(r"(@import\s+(url\()?\s*['\"]?|url\(\s*['\"]?)\s*((https?:)?//[^'\")\s]+)", re.IGNORECASE)


class _ResourceCollector(HTMLParser):
    """Collects the URLs a page makes the browser fetch by itself (not links a reader clicks)."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.urls: list[str] = []
        self._in_style = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = {name: value or "" for name, value in attrs}
        if tag in {"script", "img", "iframe", "audio", "video", "source", "embed", "track"} and values.get("src"):
            self.urls.append(values["src"])
        if tag == "object" and values.get("data"):
            self.urls.append(values["data"])
        if tag == "link":
            rel = values.get("rel", "").lower().split()
            # stylesheet, icons, preload/prefetch/modulepreload all make the browser fetch the href
            if rel and not set(rel) <= {"canonical", "alternate", "next", "prev", "search", "index", "author", "license", "help"}:
                self.urls.append(values.get("href", ""))
        if values.get("style"):
            self.urls.extend(match.group(3) for match in _CSS_REMOTE.finditer(values["style"]))
        if tag == "style":
            self._in_style = True

    def handle_endtag(self, tag: str) -> None:
        if tag == "style":
            self._in_style = False

    def handle_data(self, data: str) -> None:
        if self._in_style:
            self.urls.extend(match.group(3) for match in _CSS_REMOTE.finditer(data))


def remote_urls_in_html(text: str) -> list[str]:
    """The remote (http, https or protocol-relative) URLs a page loads automatically."""
    collector = _ResourceCollector()
    collector.feed(text)
    collector.close()
    return [url for url in collector.urls if _REMOTE.match(url)]


def remote_urls_in_css(text: str) -> list[str]:
    """Remote ``@import`` and ``url(...)`` references in a stylesheet."""
    return [match.group(3) for match in _CSS_REMOTE.finditer(text)]


def external_resources(html_dir: Path) -> list[tuple[str, str]]:
    """(file, url) for every remote resource loaded by a page or stylesheet under ``html_dir``."""
    if not html_dir.is_dir():
        raise BookError(f"{html_dir} does not exist; build the book first (`make html`)")
    found: list[tuple[str, str]] = []
    for page in sorted(html_dir.rglob("*.html")):
        for url in remote_urls_in_html(page.read_text(encoding="utf-8", errors="replace")):
            found.append((page.relative_to(html_dir).as_posix(), url))
    for sheet in sorted(html_dir.rglob("*.css")):
        for url in remote_urls_in_css(sheet.read_text(encoding="utf-8", errors="replace")):
            found.append((sheet.relative_to(html_dir).as_posix(), url))
    return found


# --------------------------------------------------------------------------------------------
# Whole book


def build(root: Path = REPO_ROOT, force: bool = False) -> Path:
    """Execute every chapter whose committed execution is stale (or all, with ``force``), then
    build the HTML."""
    for chapter in list_chapters():
        if not force and is_up_to_date(chapter, root):
            print(f"[nlgjudge.book] {chapter.name}: up to date (book/{chapter.name}.ipynb), not re-executed")
            continue
        execute_chapter(chapter, root=root)
    return build_html(root)


def rerun_overrides(chapter: Chapter, overrides: Mapping[str, Any]) -> dict[str, Any]:
    """The overrides of ``make chapter``: a rerun with new parameters computes what it lacks.

    The book's defaults read released outputs only (``released_only=True``, no model is loaded).
    A reader who changes a parameter (another model, other contexts) wants that run done, so
    unless the overrides set ``released_only`` themselves it becomes False for the rerun.
    """
    merged = dict(overrides)
    if merged and "released_only" in chapter.defaults and "released_only" not in merged:
        merged["released_only"] = False
        print(
            f"[nlgjudge.book] {chapter.name}: released_only=False for this rerun, so outputs missing from the "
            "cache are computed (a model is loaded); add `-p released_only true` to use released outputs only"
        )
    return merged


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m nlgjudge.book", description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    build_parser = commands.add_parser("build", help="execute every stale chapter with its defaults, then build HTML")
    build_parser.add_argument("--force", action="store_true", help="re-execute every chapter even if up to date")
    chapter_parser = commands.add_parser("chapter", help="execute one chapter (defaults merged with -p overrides)")
    chapter_parser.add_argument("name", help="chapter name (see `list`)")
    chapter_parser.add_argument(
        "-p", "--parameter", nargs=2, action="append", default=[], metavar=("NAME", "VALUE"),
        help="override a parameter; VALUE is read as YAML (10, null, true, \"[summeval, webnlg]\")",
    )
    # `make chapter` passes PARAMS in an environment variable, split here (see parameters_from_environment).
    chapter_parser.add_argument("--parameters-from", metavar="VARIABLE", default=None, help=argparse.SUPPRESS)
    commands.add_parser("html", help="build the HTML book from the executed chapters")
    commands.add_parser("list", help="list the chapters and their parameters: default, type and meaning")
    args = parser.parse_args(argv)

    try:
        if not (REPO_ROOT / "notebooks").is_dir():  # a package installed without its repository: no chapter to read
            raise BookError(f"the chapters' notebooks are not in {REPO_ROOT / 'notebooks'}: the book is built from a clone "
                            "of the repository, where notebooks/ sits beside lib/; run this command in such a clone")
        if args.command == "list":
            for chapter in list_chapters():
                state = "up to date" if is_up_to_date(chapter) else "stale or executed with other parameters"
                print(f"{chapter.name:<14} {chapter.title}  [{state}]")
                print(f"{'':<14} notebooks/{chapter.notebook} -> book/{chapter.name}.ipynb")
                print(f"{'':<14} parameters (default; type; meaning):")
                for name, kind in chapter.describe_types().items():
                    print(f"{'':<14}   {name} = {yaml_text(chapter.defaults[name])}; {kind}; {chapter.meanings[name]}")
        elif args.command == "chapter":
            chapter = get_chapter(args.name)
            from_make = parameters_from_environment(args.parameters_from) if args.parameters_from else []
            raw = [*args.parameter, *from_make]
            _refuse_credentials(chapter, raw)  # before any value is printed, executed or written into a notebook
            overrides = parse_overrides(raw)
            # Names, types and n_contexts vs datasets are checked before anything is printed,
            # executed or overwritten: a wrong value fails here in one line, not inside the notebook.
            _check_values(chapter, chapter.parameters(overrides), overrides)
            execute_chapter(chapter, rerun_overrides(chapter, overrides))
        elif args.command == "html":
            build_html()
        elif args.command == "build":
            build(force=args.force)
    except (BookError, ParameterError, UnknownChapterError) as error:
        # One line: a failing cell's message and where its notebook is are joined, not stacked.
        print(f"error: {' '.join(line.strip() for line in str(error).splitlines() if line.strip())}", file=sys.stderr)
        return 2
    return 0


def _refuse_credentials(chapter: Chapter, pairs: Sequence[Sequence[str]]) -> None:
    """A parameter value holding a credential (a password in a URL, a token, an API key) is refused
    before anything runs, and never printed: a chapter's parameters are written into its executed
    notebook and shown on its page. The key goes in ``NLGJUDGE_SERVER_API_KEY`` instead."""
    from nlgjudge.engine.server.client import holds_secret

    for pair in pairs:
        name, value = str(pair[0]), str(pair[1]) if len(pair) > 1 else ""
        if holds_secret(value):
            raise ParameterError(
                f"chapter {chapter.name!r}: parameter {name!r} holds a credential (a password, token or API key; its "
                "value is not shown), and a chapter's parameters are written into its notebook and page; pass the URL "
                "without it and the key in the environment variable NLGJUDGE_SERVER_API_KEY")


def _check_values(chapter: Chapter, parameters: Mapping[str, Any], overrides: Mapping[str, Any]) -> None:
    """What the parameter types cannot see, checked before anything runs: the models a reader names
    exist, and a data directory given is a folder (otherwise the notebook fails minutes later)."""
    from nlgjudge.models import ModelError, resolve_model

    for name in overrides:
        value = parameters[name]
        if "model" in name or "judge" in name:
            for model in [value] if isinstance(value, str) else list(value or []):
                try:
                    resolve_model(model)
                except (ModelError, ValueError) as error:
                    first = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
                    raise ParameterError(f"chapter {chapter.name!r}: parameter {name!r}: {first}") from None
        elif name == "data_dir" and value is not None and not Path(str(value)).is_dir():
            raise ParameterError(f"chapter {chapter.name!r}: parameter 'data_dir' {value!r} is not a folder; pass the "
                                 "data directory (the one NLGJUDGE_DATA_DIR names) or null")


if __name__ == "__main__":
    from nlgjudge.interrupt import run_interruptible

    sys.exit(run_interruptible(main))
