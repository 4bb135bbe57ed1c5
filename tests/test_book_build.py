"""nlgjudge.book: parameter parsing, staleness stamps, papermill execution, the HTML build, offline check."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_notebook

from nlgjudge import book
from nlgjudge.book import (
    BookError,
    build_html,
    compute_stamp,
    execute_chapter,
    external_resources,
    is_up_to_date,
    parse_overrides,
    parse_parameter_value,
    remote_urls_in_css,
    remote_urls_in_html,
    rerun_overrides,
)
from nlgjudge.chapters import Chapter, ParameterError, ParameterTypeError
from nlgjudge.config import REPO_ROOT

# --------------------------------------------------------------------------------------------
# Parameters


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("10", 10),
        ("0.5", 0.5),
        ("None", None),
        ("null", None),
        ("True", True),
        ("false", False),
        ("summeval", "summeval"),
        ("[summeval, webnlg]", ["summeval", "webnlg"]),
        ('["a b", c]', ["a b", "c"]),
        ("'10'", "10"),
        ("Qwen/Qwen2.5-1.5B-Instruct", "Qwen/Qwen2.5-1.5B-Instruct"),
    ],
)
def test_parameter_values_are_typed(text: str, expected: object) -> None:
    assert parse_parameter_value(text) == expected
    assert type(parse_parameter_value(text)) is type(expected)


def test_unreadable_value_says_how_to_quote() -> None:
    with pytest.raises(ParameterError, match="quote"):
        parse_parameter_value("[summeval, webnlg")


def test_overrides_reject_a_repeated_name() -> None:
    assert parse_overrides([("n_contexts", "10"), ("seed", "1")]) == {"n_contexts": 10, "seed": 1}
    with pytest.raises(ParameterError, match="twice"):
        parse_overrides([("seed", "1"), ("seed", "2")])


def test_a_rerun_with_new_parameters_computes_unless_told_otherwise() -> None:
    from nlgjudge.chapters import get_chapter

    judge_chapter, plain_chapter = get_chapter("comparative"), get_chapter("datasets")
    assert judge_chapter.defaults["released_only"] is True  # the book itself never loads a model
    assert rerun_overrides(judge_chapter, {"model": "x"}) == {"model": "x", "released_only": False}
    assert rerun_overrides(judge_chapter, {"model": "x", "released_only": True})["released_only"] is True
    assert rerun_overrides(judge_chapter, {}) == {}  # no new parameter: the book's run, released only
    assert rerun_overrides(plain_chapter, {"seed": 1}) == {"seed": 1}  # a chapter without the switch


# --------------------------------------------------------------------------------------------
# A toy chapter in a temporary repository


def _toy_root(tmp_path: Path, cells: list[str]) -> tuple[Path, Chapter]:
    root = tmp_path / "repo"
    (root / "notebooks").mkdir(parents=True)
    (root / "lib" / "nlgjudge").mkdir(parents=True)
    (root / "lib" / "nlgjudge" / "module.py").write_text("VALUE = 1\n")
    (root / "data" / "outputs" / "toy").mkdir(parents=True)
    (root / "data" / "outputs" / "toy" / "outputs.jsonl").write_text("{}\n")
    notebook = new_notebook(
        cells=[new_code_cell("count = 3\nlabel = 'x'", metadata={"tags": ["parameters"]})]
        + [new_code_cell(source) for source in cells],
        metadata={"kernelspec": {"name": "nlgjudge", "display_name": "Python (nlgjudge)", "language": "python"}},
    )
    nbformat.write(notebook, root / "notebooks" / "toy.ipynb")
    chapter = Chapter(
        name="toy", title="Toy", notebook="toy.ipynb", defaults={"count": 3, "label": "x"}, inputs=("data/outputs/toy",),
        meanings={"count": "how many", "label": "a label"},
    )
    return root, chapter


def test_stamp_changes_with_parameters_notebook_library_and_inputs(tmp_path: Path) -> None:
    root, chapter = _toy_root(tmp_path, ["print(count * 2)"])
    base = compute_stamp(chapter, chapter.parameters(), root)
    assert compute_stamp(chapter, chapter.parameters(), root) == base  # deterministic
    assert compute_stamp(chapter, chapter.parameters({"count": 4}), root) != base

    changes = [
        root / "notebooks" / "toy.ipynb",
        root / "lib" / "nlgjudge" / "module.py",
        root / "data" / "outputs" / "toy" / "outputs.jsonl",
    ]
    for path in changes:
        original = path.read_bytes()
        path.write_bytes(original + b" ")
        assert compute_stamp(chapter, chapter.parameters(), root) != base, f"editing {path.name} did not change the stamp"
        path.write_bytes(original)
    assert compute_stamp(chapter, chapter.parameters(), root) == base
    # bytecode caches are not code changes
    (root / "lib" / "nlgjudge" / "__pycache__").mkdir()
    (root / "lib" / "nlgjudge" / "__pycache__" / "module.cpython-311.pyc").write_bytes(b"\0")
    assert compute_stamp(chapter, chapter.parameters(), root) == base


def test_execute_chapter_injects_typed_parameters_and_stamps_the_output(tmp_path: Path) -> None:
    root, chapter = _toy_root(tmp_path, ["print('result', count * 2, label.upper())"])
    assert not is_up_to_date(chapter, root)  # never executed

    output = execute_chapter(chapter, {"count": 5}, root=root, progress_bar=False)
    assert output == root / "book" / "toy.ipynb"
    notebook = nbformat.read(output, as_version=4)
    printed = "".join(o.get("text", "") for c in notebook.cells if c.cell_type == "code" for o in c.outputs)
    assert "result 10 X" in printed  # 5 arrived as an int, not the string "5"
    assert notebook.metadata["nlgjudge"]["parameters"] == {"count": 5, "label": "x"}
    assert notebook.metadata["nlgjudge"]["defaults"] is False
    injected = [c for c in notebook.cells if "injected-parameters" in c.metadata.get("tags", [])]
    assert len(injected) == 1 and "remove-cell" in injected[0].metadata["tags"]  # the page's table shows the values
    assert not is_up_to_date(chapter, root)  # executed, but not with the defaults

    execute_chapter(chapter, root=root, progress_bar=False)
    assert is_up_to_date(chapter, root)
    (root / "lib" / "nlgjudge" / "module.py").write_text("VALUE = 2\n")
    assert not is_up_to_date(chapter, root)  # the library changed: make book re-executes


def test_failing_cell_names_the_chapter_and_keeps_the_committed_output(tmp_path: Path) -> None:
    root, chapter = _toy_root(tmp_path, ["if count > 3:\n    raise ValueError('broken on purpose')"])
    good = execute_chapter(chapter, root=root, progress_bar=False)
    committed = good.read_bytes()
    with pytest.raises(BookError, match=r"chapter 'toy' failed .*ValueError: broken on purpose") as failure:
        execute_chapter(chapter, {"count": 4}, root=root, progress_bar=False)
    assert good.read_bytes() == committed  # the failed run did not overwrite the good one
    assert "_build/papermill/toy.ipynb" in str(failure.value)
    assert is_up_to_date(chapter, root)


def test_unknown_parameter_is_rejected_before_running(tmp_path: Path) -> None:
    root, chapter = _toy_root(tmp_path, [])
    with pytest.raises(ParameterError, match="count"):
        execute_chapter(chapter, {"cuont": 1}, root=root, progress_bar=False)
    assert not (root / "book" / "toy.ipynb").exists()


def test_wrongly_typed_parameter_is_rejected_before_papermill_starts(tmp_path: Path, monkeypatch) -> None:
    import papermill

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("papermill ran although the parameter check should have failed first")

    monkeypatch.setattr(papermill, "execute_notebook", refuse)
    root, chapter = _toy_root(tmp_path, [])
    with pytest.raises(ParameterTypeError, match=r"^chapter 'toy': parameter 'count' must be an integer; got '5'"):
        execute_chapter(chapter, {"count": "5"}, root=root, progress_bar=False)
    assert not (root / "book" / "toy.ipynb").exists()
    assert not (root / "_build" / "papermill").exists()  # nothing was even prepared


def test_cli_rejects_a_wrong_type_in_one_line_without_running(monkeypatch, capsys) -> None:
    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("execute_chapter was called although the parameter check should have failed first")

    monkeypatch.setattr(book, "execute_chapter", refuse)
    assert book.main(["chapter", "bias", "-p", "seed", "{a: 1}"]) == 2
    captured = capsys.readouterr()
    assert captured.err == "error: chapter 'bias': parameter 'seed' must be an integer >= 0; got {'a': 1} (dict)\n"
    assert "released_only" not in captured.out  # not even the rerun note is printed
    assert book.main(["chapter", "bias", "-p", "n_contexts", "{sumeval: 3}"]) == 2
    assert "n_contexts names ['sumeval']" in capsys.readouterr().err


def test_python_m_nlgjudge_book_exits_2_without_traceback_and_leaves_the_chapter_alone() -> None:
    import subprocess
    import sys

    committed = REPO_ROOT / "book" / "bias.ipynb"
    before = (committed.read_bytes(), committed.stat().st_mtime_ns) if committed.exists() else None
    # `python -m nlgjudge.book ...` with papermill disarmed, so that a broken check cannot start the real
    # chapter: if papermill were reached the process would exit 99, not 2.
    script = (
        "import runpy, sys, papermill\n"
        "papermill.execute_notebook = lambda *a, **k: sys.exit(99)\n"
        "sys.argv = ['nlgjudge.book', 'chapter', 'bias', '-p', 'seed', '{a: 1}']\n"
        "runpy.run_module('nlgjudge.book', run_name='__main__', alter_sys=True)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", script], cwd=REPO_ROOT, capture_output=True, text=True, timeout=120, check=False
    )
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr
    assert result.stderr.strip().splitlines() == [
        "error: chapter 'bias': parameter 'seed' must be an integer >= 0; got {'a': 1} (dict)"
    ]
    after = (committed.read_bytes(), committed.stat().st_mtime_ns) if committed.exists() else None
    assert after == before


def test_missing_kernel_says_how_to_register_it(tmp_path: Path) -> None:
    root, chapter = _toy_root(tmp_path, [])
    with pytest.raises(BookError, match="make install"):
        execute_chapter(chapter, root=root, kernel_name="no-such-kernel-xyz", progress_bar=False)


def test_html_refuses_a_chapter_that_was_never_executed(tmp_path: Path) -> None:
    root, chapter = _toy_root(tmp_path, [])
    (root / "_toc.yml").write_text("format: jb-book\nroot: book/intro\nchapters:\n  - file: book/toy\n")
    with pytest.raises(BookError, match="make chapter NAME=toy"):
        book.check_toc(root, [chapter])
    (root / "_toc.yml").write_text("format: jb-book\nroot: book/intro\n")
    with pytest.raises(BookError, match="not listed"):
        book.check_toc(root, [chapter])


# --------------------------------------------------------------------------------------------
# Offline check on hand-written pages (so that the check itself can fail)

PAGE = """<html><head>
<script src="_static/local.js"></script>
<script src="https://cdn.example.org/lib.js"></script>
<script src="//cdn.example.org/protocol-relative.js"></script>
<link rel="stylesheet" href="http://fonts.example.org/font.css">
<link rel="preload" as="font" href="https://fonts.example.org/font.woff2">
<link rel="canonical" href="https://example.org/book/">
<style>@import url("https://example.org/imported.css"); .x { background: url(data:image/png;base64,AAA) }</style>
</head><body>
<a href="https://arxiv.org/abs/2307.07889">a link a reader may click</a>
<img src="../_images/figure.png"><img src="https://example.org/tracker.gif">
<div style="background-image: url('https://example.org/bg.png')"></div>
</body></html>"""


def test_remote_resources_are_found_and_links_are_not() -> None:
    assert sorted(remote_urls_in_html(PAGE)) == sorted(
        [
            "https://cdn.example.org/lib.js",
            "//cdn.example.org/protocol-relative.js",
            "http://fonts.example.org/font.css",
            "https://fonts.example.org/font.woff2",
            "https://example.org/imported.css",
            "https://example.org/tracker.gif",
            "https://example.org/bg.png",
        ]
    )
    assert remote_urls_in_css("a{b:url(\"https://x.org/f.woff\")} @import 'http://x.org/a.css';") == [
        "https://x.org/f.woff",
        "http://x.org/a.css",
    ]
    assert remote_urls_in_css("svg{background:url(\"data:image/svg+xml;xmlns='http://www.w3.org/2000/svg'\")}") == []


def test_external_resources_reports_the_page(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "page.html").write_text(PAGE)
    (tmp_path / "clean.html").write_text('<script src="_static/a.js"></script>')
    found = external_resources(tmp_path)
    assert {page for page, _ in found} == {"sub/page.html"}
    with pytest.raises(BookError, match="build the book first"):
        external_resources(tmp_path / "missing")


# --------------------------------------------------------------------------------------------
# The real book, built once into a temporary folder


@pytest.fixture(scope="module")
def built_book(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if importlib.util.find_spec("jupyter_book") is None:
        pytest.fail("jupyter-book is not installed in this environment; run `make install`")
    return build_html(REPO_ROOT, output_dir=tmp_path_factory.mktemp("book"))


def _script_sources(page: str) -> list[str]:
    return re.findall(r'<script[^>]*\ssrc="([^"]+)"', page)


def test_book_has_the_intro_and_every_chapter(built_book: Path) -> None:
    assert (built_book / "index.html").is_file()
    assert "book/intro.html" in (built_book / "index.html").read_text()
    for chapter in book.list_chapters():
        page = built_book / "book" / f"{chapter.name}.html"
        assert page.is_file(), f"{page} was not built"
        assert chapter.title in page.read_text(encoding="utf-8")


def test_every_citation_in_the_text_reads_as_its_label_on_the_references_page(built_book: Path) -> None:
    import html as html_lib

    listed = {html_lib.unescape(label) for label in re.findall(
        r'<span class="label"><span class="fn-bracket">\[</span>([^<]+)<span class="fn-bracket">\]</span>',
        (built_book / "book" / "references.html").read_text(encoding="utf-8"))}
    assert "Liu et al., 2023a" in listed  # four works share "Liu" and 2023: the letters tell them apart
    cited: dict[str, set[str]] = {}
    for page in sorted((built_book / "book").glob("*.html")):
        for text in re.findall(r'<a class="reference internal" href="references\.html#id\d+"[^>]*>(.*?)</a>',
                               page.read_text(encoding="utf-8")):
            cited.setdefault(html_lib.unescape(re.sub(r"<[^>]+>", "", text)), set()).add(page.name)  # "<em>et al.</em>"
    assert cited, "no citation found in the built chapters"
    unknown = {text: pages for text, pages in cited.items() if text not in listed}
    assert not unknown, f"citations whose text is no label of the references page: {unknown}"


def test_book_loads_nothing_from_the_network(built_book: Path) -> None:
    assert external_resources(built_book) == []
    # a blunt second look: no script or stylesheet tag anywhere names an http(s) address
    for page in built_book.rglob("*.html"):
        text = page.read_text(encoding="utf-8")
        tags = re.findall(r"<(?:script|link)\b[^>]*>", text)
        remote = [t for t in tags if re.search(r"""(src|href)=["']?(https?:)?//""", t) and "canonical" not in t]
        assert not remote, f"{page.relative_to(built_book)} loads {remote}"
        assert "unpkg.com" not in text and "cdn.jsdelivr" not in text and "cdnjs" not in text, page


def test_math_is_typeset_by_the_local_mathjax(built_book: Path) -> None:
    intro = (built_book / "book" / "intro.html").read_text(encoding="utf-8")
    assert 'class="math' in intro, "the intro should contain display math"
    mathjax = [src for src in _script_sources(intro) if "mathjax" in src.lower()]
    assert len(mathjax) == 1, mathjax
    local = (built_book / "book" / mathjax[0].split("?")[0]).resolve()
    assert local == (built_book / "_static" / "mathjax" / "tex-chtml.js").resolve()
    assert local.stat().st_size > 500_000  # the real MathJax bundle, not a placeholder
    # CommonHTML output needs its web fonts next to it
    assert any((built_book / "_static" / "mathjax" / "output" / "chtml" / "fonts" / "woff-v2").glob("*.woff"))


def test_chapter_figures_are_in_the_page(built_book: Path) -> None:
    page = (built_book / "book" / "datasets.html").read_text(encoding="utf-8")
    images = re.findall(r'<img[^>]*\ssrc="([^"]+)"', page)
    assert len(images) >= 2, "the datasets chapter should show its figures"
    for src in images:
        assert (built_book / "book" / src).resolve().is_file(), f"missing image {src}"


def test_every_page_ships_the_output_style(built_book: Path) -> None:
    """Padded table cells and wrapped printed lines (book/_ext/static/outputs.css) on every chapter."""
    style = built_book / "_static" / "outputs.css"
    assert "pre-wrap" in style.read_text(encoding="utf-8")
    for chapter in book.list_chapters():
        page = (built_book / "book" / f"{chapter.name}.html").read_text(encoding="utf-8")
        assert re.search(r'<link[^>]*href="[^"]*_static/outputs\.css', page), chapter.name


# --------------------------------------------------------------------------------------------
# The book's Sphinx extension (book/_ext/offline_book.py)


def test_output_style_widens_the_article_and_fits_every_table_in_it() -> None:
    """What clipped tables at 1280 px was the theme's column, not the table's box (issue 47); a table
    wider than the column is wrapped to fit it, never scrolled, and a cell breaks at spaces and hyphens,
    never inside a word or a number: a frame too wide for that is shown as several tables (issue 58)."""
    style = (REPO_ROOT / "book" / "_ext" / "static" / "outputs.css").read_text(encoding="utf-8")
    style = re.sub(r"/\*.*?\*/\s*", "", style, flags=re.S)
    rules = {selector.strip(): body for selector, body in re.findall(r"([^{}]+)\{([^{}]*)\}", style)}
    # no cap on the page, and the article takes the table of contents' place below 1600 px
    assert "max-width: none" in rules[".bd-page-width"]
    assert "@media (max-width: 1599.98px)" in style
    assert "max-width: 100%" in rules[".bd-main .bd-content .bd-article-container"]
    assert "position: fixed" in rules[".bd-sidebar-secondary"]
    assert "display: inline-block" in rules[".bd-header-article button.sidebar-toggle.secondary-toggle"]
    # notebook outputs and markdown tables never scroll sideways: their cells wrap to the column
    boxes = rules[".bd-article div.cell_output .output,\n.bd-article .pst-scrollable-table-container"]
    assert "overflow-x: visible" in boxes
    cells = next(body for selector, body in rules.items() if "table td" in selector and "overflow-wrap" in body)
    assert "overflow-wrap: break-word" in cells and "white-space: normal" in cells and "anywhere" not in cells
    tables = next(body for selector, body in rules.items() if selector.endswith("table.table"))
    assert "max-width: 100%" in tables


def _book_extension(name: str):
    """One of the book's Sphinx extensions (book/_ext/<name>.py), loaded as a module."""
    spec = importlib.util.spec_from_file_location(name, REPO_ROOT / "book" / "_ext" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def offline_book():
    return _book_extension("offline_book")


@pytest.mark.parametrize("path", ["https://cdn.jsdelivr.net/npm/mathjax@3/es5/tex-mml-chtml.js", "//cdn/x.js", "mathjax/other.js"])
def test_a_remote_or_unexpected_mathjax_path_is_a_configuration_error(offline_book, path: str) -> None:
    from types import SimpleNamespace

    from sphinx.errors import ConfigError

    with pytest.raises(ConfigError, match="mathjax_path"):
        offline_book._check_config(None, SimpleNamespace(mathjax_path=path))
    offline_book._check_config(None, SimpleNamespace(mathjax_path=offline_book.LOCAL_MATHJAX_PATH))


def test_pasted_prose_gets_typographic_apostrophes_but_code_and_math_keep_theirs(offline_book) -> None:
    from docutils import nodes

    doc = nodes.document(None, None)
    para = nodes.paragraph("", "", nodes.Text("people's ranking, the 'quoted' word, rock'n'roll 90's"),
                           nodes.literal("", "x = d['key']"))
    doc += [para, nodes.literal_block("", "print('it's')"), nodes.math("", "f'(x)")]
    offline_book._typographic_apostrophes(None, doc, "intro")
    assert para.astext().startswith("people\u2019s ranking, the 'quoted' word, rock\u2019n\u2019roll 90's")
    assert "d['key']" in para.astext()
    assert "print('it's')" in doc.astext() and "f'(x)" in doc.astext()


@pytest.fixture(scope="module")
def author_year_labels():
    return _book_extension("author_year_labels")


def test_references_are_labelled_by_authors_and_year_and_shared_labels_get_a_letter(author_year_labels) -> None:
    from pybtex.database import Entry, Person

    def entry(year: str, *names: str) -> Entry:
        return Entry("misc", fields={"year": year}, persons={"author": [Person(n) for n in names]})

    entries = [entry("2023", "Harang, Richard"), entry("1960", "Cohen, Jacob", "Elo, Arpad"),
               entry("2023", "Liu, Yiqi", "Moosavi, Nafise", "Lin, Chenghua"), entry("2023", "Liu, Yang", "Iter, Dan", "Xu, Y", "Wang, S"),
               entry("2023", "Liu, Yixin", "Fabbri, Alexander", "Liu, Pengfei", "Zhao, Yilun")]
    labels = list(author_year_labels.AuthorYearLabelStyle().format_labels(entries))
    # three authors are named, as the answer boxes name a paper; more share "et al." and get a letter
    assert labels == ["Harang, 2023", "Cohen and Elo, 1960", "Liu, Moosavi and Lin, 2023", "Liu et al., 2023a",
                      "Liu et al., 2023b"]


def test_the_installed_mathjax_is_version_3(offline_book) -> None:
    entry = offline_book.mathjax_distribution() / offline_book.ENTRY_POINT
    assert re.search(r"""VERSION\s*=\s*["']3\.""", entry.read_text(encoding="utf-8", errors="replace"))


def test_executed_notebooks_carry_no_machine_paths(tmp_path, monkeypatch) -> None:
    from nlgjudge.book import scrub_machine_paths

    monkeypatch.setenv("NLGJUDGE_DATA_DIR", str(tmp_path / "data"))
    text = f'"input_path": "{tmp_path}/repo/notebooks/x.ipynb", "missing {tmp_path}/data/podcast/x.json"'
    out = scrub_machine_paths(text, tmp_path / "repo")
    assert str(tmp_path) not in out
    assert "<repo>/notebooks/x.ipynb" in out and "$NLGJUDGE_DATA_DIR/podcast/x.json" in out


TABLE_FIT = REPO_ROOT.parent / "shared" / "tools" / "table_fit.py"


@pytest.mark.slow
@pytest.mark.parametrize("width", [1280, 800])
def test_every_table_fits_its_column_in_headless_chromium(built_book: Path, width: int) -> None:
    """Measured as a reader sees the pages: no table wider than the article column (nor clipped in a
    scrolling box) at a laptop's 1280 px and a narrow 800 px window."""
    import json
    import shutil
    import subprocess
    import sys

    if shutil.which("chromium") is None or not TABLE_FIT.is_file():
        pytest.skip("needs headless Chromium and ../shared/tools/table_fit.py (apt install chromium)")
    pages = [built_book / "book" / f"{c.name}.html" for c in book.list_chapters()]
    pages += [built_book / "book" / f"{name}.html" for name in ("register", "teachers", "intro", "glossary")]
    wide = {}
    for page in pages:
        result = subprocess.run([sys.executable, str(TABLE_FIT), str(page), str(width)], capture_output=True, text=True,
                                timeout=180, check=True)
        tables = json.loads(result.stdout)
        wide.update({f"{page.stem} #{t['i']} ({t['head']!r}: {t['width']} px in {t['col']} px)": t for t in tables if t["overflow"]})
    assert not wide, f"tables wider than their column at {width} px: {sorted(wide)}"


FIGURE_FIT = Path(__file__).with_name("figure_fit.py")


@pytest.mark.slow
def test_figure_text_is_at_least_11_px_in_an_800_px_window(built_book: Path) -> None:
    """Every figure is drawn with no text below MIN_FONT_PT points at FIGURE_DPI (fit_to_page); the
    browser then scales it to the column. Measured as a reader sees the pages at 800 px."""
    import json
    import shutil
    import subprocess
    import sys

    from nlgjudge.plotting.style import FIGURE_DPI, MIN_FONT_PT, MIN_TEXT_PX, NARROW_WINDOW_PX

    if shutil.which("chromium") is None:
        pytest.skip("needs headless Chromium (apt install chromium)")
    small = []
    for chapter in book.list_chapters():
        page = built_book / "book" / f"{chapter.name}.html"
        result = subprocess.run([sys.executable, str(FIGURE_FIT), str(page), str(NARROW_WINDOW_PX)], capture_output=True,
                                text=True, timeout=180, check=True)
        for figure in json.loads(result.stdout):
            text_px = MIN_FONT_PT * FIGURE_DPI / 72 * figure["shown"] / figure["natural"]
            if text_px < MIN_TEXT_PX - 0.05:
                small.append(f"{chapter.name} figure {figure['i']}: {text_px:.1f} px ({figure['natural']} px shown at {figure['shown']})")
    assert not small, f"figure text below {MIN_TEXT_PX} px at {NARROW_WINDOW_PX} px: {small}"


def test_a_group_author_sorts_by_its_name_not_after_every_letter(author_year_labels) -> None:
    from pybtex.database import Entry, Person

    group = Entry("misc", fields={"year": "2025", "title": "T"}, persons={"author": [Person("{Gemma Team}")]})
    others = [Entry("misc", fields={"year": "2024", "title": "T"}, persons={"author": [Person(name)]})
              for name in ("Zheng, Lianmin", "Allal, Loubna", "Harang, Richard")]
    order = author_year_labels.AuthorYearSorting().sort([group, *others])
    assert [entry.persons["author"][0].last_names[0] for entry in order] == ["Allal", "{Gemma Team}", "Harang", "Zheng"]
