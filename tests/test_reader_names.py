"""Reader names in displayed tables (reader_names): ids become names in text, never in tags or commands."""

from __future__ import annotations

import pandas as pd
import pytest

from nlgjudge.reader_names import DATASET_NAMES, reader_html, reader_text


@pytest.fixture(autouse=True)
def _model_names():
    """The packaged models' names, as a notebook's set-up registers them (and no more after the test)."""
    from nlgjudge import reader_names
    from nlgjudge.models.packaged import PACKAGED_MODELS, model_title

    before = dict(reader_names._MODEL_NAMES)
    reader_names.use_model_names({model: model_title(model) for model in PACKAGED_MODELS})
    yield
    reader_names._MODEL_NAMES.clear()
    reader_names.use_model_names(before)


@pytest.mark.parametrize(("text", "shown"), [
    ("qwen2.5-coder-1.5b-instruct (one order)", "Qwen2.5-Coder-1.5B-Instruct (one order)"),
    ("summeval COH", "SummEval COH"),
    ("smollm2-135m-instruct, topicalchat", "SmolLM2-135M-Instruct, TopicalChat"),
    ("rose_llm", "RoSE with LLMs"),
    # whole ids only: a longer system name, a path, a file, a command keep theirs
    ("qwen2.5-coder-1.5b-instruct-summaries", "qwen2.5-coder-1.5b-instruct-summaries"),
    ("data/summeval/x", "data/summeval/x"),
    ("summeval.csv", "summeval.csv"),
    ("python -m nlgjudge.book chapter bias -p model smollm2-135m-instruct", "python -m nlgjudge.book chapter bias -p model smollm2-135m-instruct"),
])
def test_ids_become_names_only_where_whole(text: str, shown: str) -> None:
    assert reader_text(text) == shown


def test_html_keeps_its_tags_and_attributes() -> None:
    assert reader_html('<td class="summeval">summeval</td><th>qags_xsum</th>') == '<td class="summeval">SummEval</td><th>QAGS-XSum</th>'
    assert set(DATASET_NAMES) >= {"summeval", "topicalchat", "webnlg"}


def test_displayed_frames_and_styled_tables_show_names_but_the_parameters_table_keeps_its_ids() -> None:
    from nlgjudge.display import _frame_html, _styler_html

    frame = pd.DataFrame({"dataset": ["summeval"], "rho": [0.5]}, index=pd.Index(["qwen2.5-coder-0.5b-instruct"], name="model"))
    html = _frame_html(frame)
    assert "SummEval" in html and "Qwen2.5-Coder-0.5B-Instruct" in html and "summeval" not in html
    assert frame.loc["qwen2.5-coder-0.5b-instruct", "dataset"] == "summeval"  # the frame itself is untouched
    assert "SummEval" in _styler_html(frame.style)
    assert ">summeval<" in _styler_html(frame.style.set_table_attributes('class="nlg-parameters"'))


def test_a_figure_shows_names_in_titles_legends_and_category_ticks() -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from nlgjudge.plotting.style import with_reader_names

    fig, (left, right) = plt.subplots(1, 2)
    left.bar(["summeval", "topicalchat"], [1, 2], label="smollm2-135m-instruct")
    left.legend()
    left.set_title("qwen2.5-coder-1.5b-instruct on webnlg")
    right.plot([0, 1], [0, 1])
    right.set_xticks([0, 1], ["qags_xsum", "summeval.csv"])
    with_reader_names(fig)
    fig.canvas.draw()
    texts = {t.get_text() for t in fig.findobj(matplotlib.text.Text)}
    assert {"SummEval", "TopicalChat", "SmolLM2-135M-Instruct", "Qwen2.5-Coder-1.5B-Instruct on WebNLG", "QAGS-XSum",
            "summeval.csv"} <= texts
    assert not texts & {"summeval", "topicalchat", "qags_xsum"}
    plt.close(fig)


def test_printed_lines_and_html_blocks_show_names_and_commands_keep_their_ids() -> None:
    import io

    from nlgjudge.display import _ReaderStream, clean_table_html

    buffer = io.StringIO()
    stream = _ReaderStream(buffer)
    stream.write("qwen2.5-coder-1.5b-instruct: P(A) = 0.93 on summeval\n")
    stream.write("rerun: python -m nlgjudge.book chapter bias -p model smollm2-135m-instruct\n")
    stream.flush()  # everything else is the wrapped stream's
    assert buffer.getvalue() == ("Qwen2.5-Coder-1.5B-Instruct: P(A) = 0.93 on SummEval\n"
                                 "rerun: python -m nlgjudge.book chapter bias -p model smollm2-135m-instruct\n")
    assert ">WebNLG (N=8)<" in clean_table_html("<table><tr><th>webnlg (N=8)</th></tr></table>")
