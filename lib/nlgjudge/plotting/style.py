"""The book's one plotting style: palette, one colour per model, colour maps, panel sizes, theme,
and inline display at the page's width.

Every figure helper in :mod:`nlgjudge.plotting` builds and returns a
:class:`matplotlib.figure.Figure` without saving it anywhere; a notebook shows it inline with
:func:`show` (which fits it to the page, displays, then closes it, so nothing is drawn twice and no
figure state leaks into the next cell). Call :func:`set_style` once per notebook.

Sizes: a figure is drawn at :data:`FIGURE_DPI` and shown at most as wide as the article's content
column, 948 px in a 1280 px window and 721 px in an 800 px one. A figure no wider than :data:`CONTENT_WIDTH`
inches is shown at its own size at 1280 px, so a font of :data:`MIN_FONT_PT` points reads as
11 / 72 x 100 = 15.3 px, and at 800 px, shrunk to the column, at least 11 px; a wider one
would be shrunk by the browser, text and all (multi-panel figures read at 5-7 px), so :func:`show`
narrows it to that width first and lets the constrained layout rearrange the panels.
"""

from __future__ import annotations

from collections.abc import Sequence

import re
import zlib

import matplotlib.pyplot as plt
import pandas as pd
import seaborn as sns
from matplotlib.figure import Figure
from matplotlib.text import Text

#: Colour-blind-safe qualitative palette shared by all chapters.
PALETTE = "colorblind"
#: Diverging colour map for correlations (centred on 0).
CORRELATION_CMAP = "vlag"
#: Pixels per inch of the figures shown in the book.
FIGURE_DPI = 100
#: The widest figure, in inches: shown at its own size in a 1280 px window (the content column is 948
#: px), and shrunk to the 721 px column of an 800 px window (by a factor of 0.74 or more, the tight
#: bounding box's margins included: 11 pt text stays above 11 px).
CONTENT_WIDTH = 9.4
#: The smallest font on a figure, in points (15.3 px at its own size; at least 11 px in an 800 px window).
MIN_FONT_PT = 11.0
#: The narrow window a reader may have, and the smallest figure text it must still show, in pixels.
NARROW_WINDOW_PX, MIN_TEXT_PX = 800, 11.0
#: Width of one small-multiple panel, in inches (three a row fit the content width).
PANEL_WIDTH = 3.1
PANEL_HEIGHT = 2.6
#: Score columns with at most this many distinct values, spaced at least 1/MIN_BARS_PER_SCALE of
#: the scale apart, are drawn as one bar per value; others as a histogram.
MAX_DISCRETE_VALUES = 25
MIN_BARS_PER_SCALE = 15
HISTOGRAM_BINS_PER_SCALE = 8


#: One colour per model across the whole book (names as :func:`model_key` reads them): our packaged
#: models first, then the papers' models and the Elo chapter's contestants. A model has its colour in
#: every figure; whether it is the paper's or ours is told by :func:`model_style` (marker, line,
#: filling), never by the colour.
MODEL_COLOURS: dict[str, str] = {
    # ours
    "qwen2.5-coder-1.5b-instruct": "#0173b2",  # blue
    "qwen2.5-coder-0.5b-instruct": "#de8f05",  # orange
    "smollm2-135m-instruct": "#029e73",  # green
    "gemma-3-270m": "#cc78bc",  # pink (vermilion read as the 0.5B's orange in a scatter)
    # seed 000's judges
    "flant5-220m": "#fbafe4",
    "flant5-770m": "#ece133",
    "flant5-3b": "#8c613c",
    "flant5-7b": "#d55e00",
    "flant5-11b": "#ca9161",
    "llama2-chat-7b": "#56b4e9",
    "llama2-chat-13b": "#5d3a9b",
    "chatgpt": "#e7298a",
    # seed 004's contestants (ChatGPT above)
    "gpt-3": "#66a61e",
    "gpt-4": "#a6761d",
    "bart": "#7570b3",
    "pegasus": "#e6ab02",
    "brio": "#1b9e77",
    "reference": "#404040",
}
#: Colours for a model the mapping does not name (a reader's own), picked by a hash of its name so
#: that it keeps its colour from chapter to chapter.
EXTRA_COLOURS = ("#8dd3c7", "#bc80bd", "#fb8072", "#80b1d3", "#b3de69", "#fdb462", "#bebada", "#ccebc5")
#: How the papers' models and ours are told apart (the colour is the model's).
OURS_STYLE = {"marker": "o", "linestyle": "-", "fillstyle": "full", "hatch": ""}
PAPER_STYLE = {"marker": "s", "linestyle": "--", "fillstyle": "none", "hatch": "//"}


def model_key(name: str) -> str:
    """A model's name as :data:`MODEL_COLOURS` spells it: lower case, words joined by "-", a
    "reported:"/"ours:"/"paper:" label removed ("reported: FlanT5 3B" -> "flant5-3b")."""
    text = re.sub(r"^\s*(reported|ours|paper)\s*[:(]\s*", "", str(name).strip(), flags=re.I).rstrip(")")
    text = re.sub(r"[\s_]+", "-", text.strip().lower())
    return text.replace("llama-2", "llama2").replace("flan-t5", "flant5")


def model_colour(name: str) -> str:
    """The colour of model ``name`` in every figure of the book."""
    key = model_key(name)
    if key in MODEL_COLOURS:
        return MODEL_COLOURS[key]
    return EXTRA_COLOURS[zlib.crc32(key.encode()) % len(EXTRA_COLOURS)]


def model_style(name: str, paper: bool) -> dict[str, str]:
    """Colour, marker, line style, filling and hatch of model ``name``: the paper's hollow squares,
    dashed lines and hatched bars; ours filled circles, solid lines and plain bars."""
    return {"color": model_colour(name), **(PAPER_STYLE if paper else OURS_STYLE)}


def set_style(font_scale: float = 1.0) -> None:
    """Apply the book's seaborn theme and figure defaults (every font at least :data:`MIN_FONT_PT`)."""
    sns.set_theme(context="notebook", style="whitegrid", palette=PALETTE, font_scale=font_scale)
    plt.rcParams.update(
        {
            # relative sizes ("small", "x-small") are fractions of font.size: 13.2 pt keeps "small" at 11 pt
            "font.size": 13.2,
            "axes.titlesize": 13,
            "axes.labelsize": 12,
            "xtick.labelsize": MIN_FONT_PT,
            "ytick.labelsize": MIN_FONT_PT,
            "legend.fontsize": MIN_FONT_PT,
            "legend.title_fontsize": MIN_FONT_PT,
            "figure.titlesize": 14,
            "figure.dpi": FIGURE_DPI,
            "figure.autolayout": False,
            "axes.titleweight": "bold",
            "axes.spines.top": False,
            "axes.spines.right": False,
        }
    )


def fit_to_page(fig: Figure, width: float = CONTENT_WIDTH, min_font: float = MIN_FONT_PT) -> Figure:
    """Make ``fig`` read at the page's width: no wider than ``width`` inches (the browser would
    shrink it, text and all; its height is kept, and the constrained layout rearranges the panels),
    and no text smaller than ``min_font`` points. Returns ``fig``."""
    fig_width, fig_height = fig.get_size_inches()
    if fig_width > width:
        fig.set_size_inches(width, fig_height)
    for text in fig.findobj(Text):
        if text.get_text() and text.get_fontsize() < min_font:
            text.set_fontsize(min_font)
    return fig


def legibility_problems(fig: Figure, width: float = CONTENT_WIDTH, min_font: float = MIN_FONT_PT) -> list[str]:
    """What would make ``fig`` hard to read at the page's width: too wide, text too small, or tick
    labels of one axis that overlap one another (drawn first, so the layout is final)."""
    problems = []
    if fig.get_size_inches()[0] > width + 1e-6:
        problems.append(f"{fig.get_size_inches()[0]:.1f} in wide (at most {width})")
    small = sorted({t.get_text()[:30] for t in fig.findobj(Text) if t.get_text() and t.get_visible()
                    and t.get_fontsize() < min_font - 1e-6})
    if small:
        problems.append(f"text below {min_font} pt: {small[:5]}")
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    for ax in fig.axes:
        if not ax.get_visible():
            continue
        for axis in (ax.xaxis, ax.yaxis):
            labels = [t for t in axis.get_ticklabels() if t.get_text() and t.get_visible()]
            for left, right in zip(labels, labels[1:]):
                if _labels_overlap(left, right, renderer):
                    problems.append(f"overlapping tick labels {left.get_text()!r} and {right.get_text()!r}")
    return problems


def _labels_overlap(first: Text, second: Text, renderer: object) -> bool:
    """Whether two neighbouring tick labels run into each other. Level labels overlap when their boxes
    do; slanted ones (parallel lines of text) when the distance between their lines, the gap between
    the ticks times the sine of the angle, is less than a line's height (their upright boxes overlap
    even when the text does not)."""
    import math

    angle = first.get_rotation() % 180
    if angle in (0.0, 90.0):
        return first.get_window_extent(renderer).overlaps(second.get_window_extent(renderer))
    (x1, y1), (x2, y2) = (t.get_transform().transform(t.get_position()) for t in (first, second))
    gap = math.hypot(x2 - x1, y2 - y1)
    line_height = first.get_fontsize() * first.figure.dpi / 72
    return gap * abs(math.sin(math.radians(angle))) < line_height


def show(fig: Figure, finding: str | None = None) -> None:
    """Fit ``fig`` to the page (:func:`fit_to_page`), display it inline (as the cell's output) and
    close it. The output carries :func:`figure_description` as its text and as the PNG's ``alt`` (the
    book's ``figure_alt`` extension puts it on the page, where a screen reader would otherwise read
    the image file's hashed name), after ``finding``: what the figure shows, in a sentence made from
    the values it draws, so that a reader who cannot see it gets its point and not only its layout."""
    import base64

    from IPython.core.pylabtools import print_figure  # imported late: plotting is usable without IPython
    from IPython.display import display

    fig = fit_to_page(with_reader_names(fig))
    description = figure_description(fig)
    if finding:
        from nlgjudge.reader_names import reader_text

        description = f"{reader_text(' '.join(finding.split())).rstrip('.')}. {description}"
    png = print_figure(fig, "png")  # the bytes the inline backend would make (bbox_inches="tight")
    display({"image/png": base64.b64encode(png).decode("ascii"), "text/plain": description}, raw=True,
            metadata={"image/png": {"alt": description}})
    plt.close(fig)


def figure_description(fig: Figure, most: int = 400) -> str:
    """A figure in words from its own text, for readers who cannot see it: its title, its panels'
    titles and its axes' labels (each said once, in order), at most ``most`` characters."""
    def plain(text: str) -> str:  # mathtext as words a screen reader can say: "$P(A)$" -> "P(A)", "\\tau" -> "tau"
        text = re.sub(r"\\(mathrm|mathit|mathbf|text)\{([^}]*)\}", r"\2", text)
        text = re.sub(r"\\([A-Za-z]+)", r"\1", text).replace("$", "").replace("{", "").replace("}", "")
        return " ".join(text.split())

    def once(texts: list[str]) -> list[str]:
        return list(dict.fromkeys(plain(t) for t in texts if t and t.strip()))

    title = fig._suptitle.get_text() if fig._suptitle is not None else ""  # noqa: SLF001 (matplotlib has no getter)
    panels = once([ax.get_title() for ax in fig.axes])
    across = once([ax.get_xlabel() for ax in fig.axes])
    up = once([ax.get_ylabel() for ax in fig.axes])
    parts = [plain(title) or (panels.pop(0) if len(panels) == 1 else f"A figure in {len(panels)} panels" if panels
                              else "A figure")]
    if panels:
        parts.append(f"Panels: {'; '.join(panels)}")
    if across:
        parts.append(f"Horizontal axis: {'; '.join(across)}")
    if up:
        parts.append(f"Vertical axis: {'; '.join(up)}")
    said = "Figure: " + ". ".join(parts) + "."
    return said if len(said) <= most else said[: most - 3].rstrip() + "..."


def with_reader_names(fig: Figure) -> Figure:
    """``fig`` with every dataset and model id in its text (titles, labels, legends, category ticks)
    shown by its name (:func:`nlgjudge.reader_names.reader_text`): the data keep their ids."""
    from matplotlib.text import Text
    from matplotlib.ticker import FuncFormatter, LogFormatter, ScalarFormatter

    from nlgjudge.reader_names import reader_text

    for text in fig.findobj(Text):
        shown = reader_text(text.get_text())
        if shown != text.get_text():
            text.set_text(shown)
    for ax in fig.axes:
        for axis in (ax.xaxis, ax.yaxis):
            base = axis.get_major_formatter()
            # labels set by hand or categories are redrawn from their formatter on every draw; a
            # numeric axis keeps its own (its offset text would be lost in a wrapper)
            if not isinstance(base, (ScalarFormatter, LogFormatter)):
                axis.set_major_formatter(FuncFormatter(lambda x, pos, base=base: reader_text(str(base(x, pos)))))
    return fig


def panel_grid(
    n: int, max_columns: int, panel_width: float, panel_height: float, max_width: float = CONTENT_WIDTH,
    **subplots: object,
) -> tuple[Figure, list[plt.Axes]]:
    """A figure of ``n`` panels, at most ``max_columns`` a row and no more than fit ``max_width`` at
    ``panel_width`` each (legible at page width: more rows rather than narrower panels), and its ``n``
    axes in reading order; the grid's unused slots are hidden."""
    if n < 1:
        raise ValueError("nothing to draw")
    if max_columns < 1:
        raise ValueError(f"max_columns must be at least 1; got {max_columns}")
    columns = max(1, min(n, max_columns, int(max_width // panel_width)))
    rows = -(-n // columns)
    fig, axes = plt.subplots(rows, columns, figsize=(min(max_width, panel_width * columns), panel_height * rows),
                             layout="constrained", squeeze=False, **subplots)
    flat = list(axes.flat)
    for ax in flat[n:]:
        ax.set_visible(False)
    return fig, flat[:n]


def require_columns(frame: pd.DataFrame, columns: Sequence[str]) -> None:
    """Raise a KeyError naming the columns a figure needs that ``frame`` lacks."""
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise KeyError(
            f"columns {missing} are not in the frame (it has {list(frame.columns)}); "
            "pass aspect names that are column names"
        )
