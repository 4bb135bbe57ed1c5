"""The book's one plotting style (issue 47): one colour per model across the book, the paper's models
and ours told apart by marker, line or hatch; figures that read at page width (no wider than the
content column, no text under 10 pt, no overlapping tick labels)."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest
from matplotlib.colors import to_rgb

from nlgjudge.plotting.style import (
    CONTENT_WIDTH,
    MIN_FONT_PT,
    MODEL_COLOURS,
    fit_to_page,
    legibility_problems,
    model_colour,
    model_key,
    model_style,
    panel_grid,
    set_style,
)

OURS = ["qwen2.5-coder-1.5b-instruct", "qwen2.5-coder-0.5b-instruct", "smollm2-135m-instruct", "gemma-3-270m"]
PAPER = ["FlanT5 3B", "FlanT5 11B", "Llama2-chat 7B", "Llama2-chat 13B"]


@pytest.fixture(autouse=True)
def book_style():
    set_style()
    yield
    plt.close("all")


def test_every_model_has_its_own_colour() -> None:
    colours = list(MODEL_COLOURS.values())
    assert len(set(colours)) == len(colours)
    # the models one figure shows together are clearly apart (RGB distance)
    together = [model_colour(m) for m in OURS + PAPER]
    rgb = np.array([to_rgb(c) for c in together])
    distances = np.sqrt(((rgb[:, None] - rgb[None]) ** 2).sum(-1))[np.triu_indices(len(together), 1)]
    assert distances.min() > 0.15


@pytest.mark.parametrize(
    ("spellings", "key"),
    [
        (["FlanT5 3B", "FlanT5-3B", "reported: FlanT5-3B", "Flan-T5 3B"], "flant5-3b"),
        (["Llama2-chat 13B", "Llama2-chat-13B", "llama-2-chat-13b"], "llama2-chat-13b"),
        (["ours: qwen2.5-coder-1.5b-instruct", "qwen2.5-coder-1.5b-instruct"], "qwen2.5-coder-1.5b-instruct"),
    ],
)
def test_a_model_keeps_its_colour_however_a_table_spells_it(spellings: list[str], key: str) -> None:
    assert {model_key(s) for s in spellings} == {key}
    assert {model_colour(s) for s in spellings} == {MODEL_COLOURS[key]}


def test_an_unknown_model_gets_the_same_colour_every_time() -> None:
    assert model_colour("my-own-model") == model_colour("my-own-model")
    assert model_colour("my-own-model") not in MODEL_COLOURS.values()


def test_the_paper_and_ours_differ_by_marker_line_and_hatch_not_colour() -> None:
    paper, ours = model_style("FlanT5 3B", paper=True), model_style("FlanT5 3B", paper=False)
    assert paper["color"] == ours["color"]
    assert paper["marker"] != ours["marker"] and paper["linestyle"] != ours["linestyle"]
    assert paper["fillstyle"] != ours["fillstyle"] and paper["hatch"] != ours["hatch"]


def test_fit_to_page_narrows_a_wide_figure_and_raises_small_text() -> None:
    fig, ax = plt.subplots(figsize=(14, 3), layout="constrained")
    ax.set_title("tiny", fontsize=6)
    ax.text(0.5, 0.5, "also tiny", fontsize="x-small")
    assert legibility_problems(fig)
    fit_to_page(fig)
    assert fig.get_size_inches()[0] == pytest.approx(CONTENT_WIDTH)
    assert fig.get_size_inches()[1] == pytest.approx(3)
    assert all(t.get_fontsize() >= MIN_FONT_PT for t in fig.findobj(matplotlib.text.Text) if t.get_text())
    assert legibility_problems(fig) == []


def test_overlapping_tick_labels_are_found() -> None:
    fig, ax = plt.subplots(figsize=(2, 2))
    ax.set_xticks(range(4), ["qwen2.5-coder"] * 4)
    assert any("overlapping" in p for p in legibility_problems(fig))


def test_slanted_labels_overlap_only_when_their_lines_are_too_close() -> None:
    fig, ax = plt.subplots(figsize=(6, 3))
    ax.set_xticks(range(3), ["a system with a long descriptive name", "B", "C"], rotation=30, ha="right")
    assert legibility_problems(fig) == []  # upright boxes overlap, the slanted lines do not
    crowded, ax = plt.subplots(figsize=(1.2, 3))
    ax.set_xticks(range(6), ["some long name"] * 6, rotation=30, ha="right")
    assert any("overlapping" in p for p in legibility_problems(crowded))


def test_panel_grid_wraps_rather_than_shrinking_panels() -> None:
    fig, axes = panel_grid(4, 4, 3.1, 2.5)
    grid = axes[0].get_subplotspec().get_gridspec()
    assert (grid.nrows, grid.ncols) == (2, 3) and fig.get_size_inches()[0] <= CONTENT_WIDTH


# --------------------------------------------------------------------------------------------
# The figures the issue found hard to read


def test_bias_figure_colours_each_model_once_and_hollows_the_papers() -> None:
    from nlgjudge.plotting.bias import bias_figure

    rows = [(m, d, t, a, 0.5 + 0.1 * k) for k, m in enumerate(OURS[:3]) for d in ("summeval", "topicalchat", "webnlg")
            for t in (1, 2) for a in ("COH", "CON")]
    ours = pd.DataFrame(rows, columns=["model", "dataset", "template", "aspect", "p_a"])
    reported = ours.assign(model=ours["model"].map(dict(zip(OURS[:3], PAPER[:3]))))
    fig = bias_figure(ours, reported, title="P(A)")
    colours_by_row: list[set[str]] = []
    for ax in fig.axes[::3]:  # the first panel of each row: the paper's, then ours
        faces = set()
        for collection in ax.collections:
            face, edge = collection.get_facecolor(), collection.get_edgecolor()
            faces.add(tuple(np.round(edge[0][:3] if face.size == 0 or face[0][3] == 0 else face[0][:3], 3)))
        colours_by_row.append(faces)
    paper_colours, our_colours = colours_by_row
    assert not paper_colours & our_colours  # no colour means a paper model above and one of ours below
    hollow = [c for c in fig.axes[0].collections if c.get_facecolor().size == 0 or c.get_facecolor()[0][3] == 0]
    assert hollow, "the paper's models are drawn hollow"
    assert legibility_problems(fit_to_page(fig)) == []


def test_narcissism_heatmap_labels_do_not_run_together() -> None:
    from nlgjudge.plotting.narcissism import heatmap_panels

    table = pd.DataFrame(np.linspace(0, 1, 16).reshape(4, 4), index=OURS, columns=OURS)
    words = pd.Series(dict(zip(OURS, [52.0, 61.0, 48.0, 70.0])))
    fig = heatmap_panels({"reference-free": table, "reference-based": table},
                         {"reference-free": words, "reference-based": words}, title="t")
    assert legibility_problems(fit_to_page(fig)) == []


def test_comparative_bars_hatch_the_papers_bars() -> None:
    from nlgjudge.plotting.comparative import paper_vs_ours_bars

    frame = pd.DataFrame({
        "aspect": ["COH"] * 3, "group": ["comparative"] * 3,
        "who": ["reported: FlanT5-3B", "reported: Llama2-chat-13B", "ours: qwen2.5-coder-1.5b-instruct"],
        "source": ["reported", "reported", "ours"], "spearman": [50.0, 40.0, 30.0],
    })
    fig = paper_vs_ours_bars(frame, ["COH"], ["comparative"])
    bars = [p for p in fig.axes[0].patches if p.get_height()]
    by_height = {round(p.get_height()): p for p in bars}
    assert by_height[50].get_hatch() and not by_height[30].get_hatch()
    assert to_rgb(by_height[50].get_facecolor()) == pytest.approx(to_rgb(model_colour("FlanT5-3B")))
    assert legibility_problems(fit_to_page(fig)) == []


def test_a_figure_is_described_from_its_own_titles_and_labels() -> None:
    from nlgjudge.plotting.style import figure_description

    fig, axes = plt.subplots(1, 2)
    fig.suptitle("Spearman against the number of comparisons")
    axes[0].set(title="SummEval", xlabel="comparisons", ylabel="Spearman x100")
    axes[1].set(title="WebNLG", xlabel="comparisons", ylabel="Spearman x100")
    said = figure_description(fig)
    plt.close(fig)
    assert said == ("Figure: Spearman against the number of comparisons. Panels: SummEval; WebNLG. Horizontal axis: "
                    "comparisons. Vertical axis: Spearman x100.")
    bare, _ = plt.subplots()
    assert figure_description(bare) == "Figure: A figure."
    plt.close(bare)


def test_show_puts_the_description_beside_the_image_for_the_page(monkeypatch: pytest.MonkeyPatch, tmp_path) -> None:
    import base64
    import hashlib
    import importlib.util
    import json

    import IPython.display

    from nlgjudge.config import REPO_ROOT
    from nlgjudge.plotting.style import show

    shown = []
    monkeypatch.setattr(IPython.display, "display", lambda data, **kwargs: shown.append((data, kwargs)))
    fig, ax = plt.subplots()
    ax.set(title="Positional bias", xlabel="P(A)")
    show(fig)
    (data, kwargs), = shown
    alt = kwargs["metadata"]["image/png"]["alt"]
    assert alt == data["text/plain"] == "Figure: Positional bias. Horizontal axis: P(A)." and kwargs["raw"]
    # the book's extension finds it by the hash myst-nb names the image file with
    notebook = {"cells": [{"cell_type": "code", "outputs": [{"output_type": "display_data", "data": data,
                                                              "metadata": kwargs["metadata"]}]}]}
    (tmp_path / "x.ipynb").write_text(json.dumps(notebook), encoding="utf-8")
    spec = importlib.util.spec_from_file_location("figure_alt", REPO_ROOT / "book" / "_ext" / "figure_alt.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    digest = hashlib.sha256(base64.b64decode(data["image/png"])).hexdigest()
    assert module.descriptions([tmp_path / "x.ipynb"]) == {digest: alt}


def test_a_figures_finding_comes_first_in_its_description(monkeypatch: pytest.MonkeyPatch) -> None:
    import IPython.display

    from nlgjudge.plotting.style import show

    shown = []
    monkeypatch.setattr(IPython.display, "display", lambda data, **kwargs: shown.append((data, kwargs)))
    fig, ax = plt.subplots()
    ax.set(title="Positional bias", xlabel="P(A)")
    show(fig, finding="The judge picks\nposition A in 0.84 to 0.95 of the comparisons.")
    (data, kwargs), = shown
    assert kwargs["metadata"]["image/png"]["alt"] == (
        "The judge picks position A in 0.84 to 0.95 of the comparisons. Figure: Positional bias. Horizontal axis: P(A).")
