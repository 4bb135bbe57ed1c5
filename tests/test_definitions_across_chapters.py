"""One definition per quantity: the same named number is computed the same way in every chapter.

Issue 41 item 5: the WebNLG candidate set changed between chapters (the comparative chapter's
headline left out the teams with placeholder outputs; the bias and runtime chapters ranked all ten
teams), so "the judge's WebNLG Spearman without debiasing" was 17.1 in one chapter and 34.7 in
another for the same judge and contexts. Here each chapter's own function computes it from the
released outputs, through the reading that chapter uses (:func:`headline_reading`), and they must
agree. Needs the mirrored data (``NLGJUDGE_DATA_DIR``); skipped where it is absent.
"""

from __future__ import annotations

import numpy as np
import pytest

from nlgjudge.analysis import bias, runtime, subsets
from nlgjudge.analysis.comparative import (
    COMPARATIVE,
    TEMPLATE_MEAN,
    comparative_correlations,
    headline_reading,
    placeholder_team_candidates,
)
from nlgjudge.studies.plan import BACKEND, CHAPTER_N_CONTEXTS

JUDGE = "qwen2.5-coder-1.5b-instruct"


@pytest.fixture(scope="module")
def webnlg_headline():
    from nlgjudge.data import DataNotFoundError, load_dataset
    from nlgjudge.studies.collect import prepare_comparisons

    try:
        loaded = {"webnlg": load_dataset("webnlg", n_contexts=CHAPTER_N_CONTEXTS["webnlg"], seed=0)}
    except DataNotFoundError as error:  # pragma: no cover - depends on the machine
        pytest.skip(str(error))
    prepared = prepare_comparisons([JUDGE], loaded, aspects=None, templates=[1, 2], released_only=True, backend=BACKEND)
    frame, scored = headline_reading(prepared.frame, loaded)
    return loaded, prepared.frame, frame, scored


def test_the_headline_reading_leaves_out_exactly_the_placeholder_teams(webnlg_headline) -> None:
    loaded, everything, frame, scored = webnlg_headline
    dropped = placeholder_team_candidates(loaded["webnlg"])
    assert dropped  # the released WebNLG subset has placeholder teams
    assert not (set(frame["candidate_a"]) | set(frame["candidate_b"])) & dropped
    assert set(scored["webnlg"].frame["candidate_id"]) == set(loaded["webnlg"].frame["candidate_id"]) - dropped
    n_kept = scored["webnlg"].frame.groupby("context_id").size()
    per_context = frame.groupby(["context_id", "template", "aspect"]).size()
    assert (per_context == n_kept.reindex(per_context.index.get_level_values(0)).to_numpy() * (n_kept.max() - 1)).all()
    assert len(everything) > len(frame)


def test_the_judges_webnlg_spearman_is_one_number_in_every_chapter(webnlg_headline) -> None:
    _, _, frame, scored = webnlg_headline
    ds = scored["webnlg"]
    comparative = comparative_correlations(frame, ds)
    comparative = comparative[(comparative["template"].astype(str) == TEMPLATE_MEAN) & (comparative["method"] == COMPARATIVE)]
    by_comparative = comparative.set_index("aspect")["spearman"]

    plain = bias.debiasing_table(frame, scored)
    plain = bias.average_over_templates(plain[~plain["debiased"]], ["spearman_x100"])
    by_bias = plain.set_index("aspect")["spearman_x100"]

    humans = runtime.human_agreement_table(runtime.pair_runtimes(frame, frame.copy()), scored)
    by_runtime = humans.set_index("aspect")["reference"]

    methods = subsets.ranking_methods_frame(frame, scored)  # the subsets chapter's Table 11, win-ratio row
    win_ratio = methods[methods["method"] == "win ratio"]
    by_subsets = win_ratio.groupby("aspect")["spearman_x100"].mean()

    assert set(by_comparative.index) == set(by_bias.index) == set(by_runtime.index) == {"FLU", "GRA", "SEM"}
    assert set(by_subsets.index) == set(by_comparative.index)
    for aspect in by_comparative.index:
        np.testing.assert_allclose([by_bias[aspect], by_runtime[aspect], by_subsets[aspect]], by_comparative[aspect],
                                   atol=1e-9,
                                   err_msg=f"WebNLG {aspect}: the chapters compute the judge's Spearman differently")


@pytest.mark.parametrize("chapter", ["bias", "runtime", "subsets"])
def test_chapters_that_read_a_comparison_frame_rank_the_headline_webnlg_candidates(chapter: str) -> None:
    """The bias, runtime and subsets chapters read the WebNLG comparisons through
    :func:`headline_reading` before any table: one candidate set in the book."""
    import json
    import re

    from nlgjudge.config import REPO_ROOT

    cells = json.loads((REPO_ROOT / "notebooks" / f"{chapter}.ipynb").read_text(encoding="utf-8"))["cells"]
    code = ["".join(c["source"]) for c in cells if c["cell_type"] == "code"]
    first_reading = next(k for k, text in enumerate(code) if "headline_reading(" in text)
    first_table = next(k for k, text in enumerate(code) if re.search(r"analysis\.\w*_(table|frame)\(", text))
    assert first_reading <= first_table
