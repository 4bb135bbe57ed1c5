"""Reader-facing names in a chapter's tables: "SummEval" and "Qwen2.5-Coder-1.5B-Instruct", never
the library's ids ("summeval", "qwen2.5-coder-1.5b-instruct").

The analysis modules key their frames by ids (they are what ``-p model ...`` takes and what the
downloads keep); a reader of the book sees names. :func:`nlgjudge.display.readable_tables` makes
every table a chapter displays show names (:func:`reader_html`), the prose's glued values
(:func:`nlgjudge.prose.glue_all`) and the figures (:func:`nlgjudge.plotting.style.with_reader_names`)
too: the text is rewritten on display, the data are left as computed. The parameters table is left
alone: its values are what a reader types.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from functools import lru_cache

#: Each dataset's name in the book (the papers' spelling).
DATASET_NAMES = {
    "summeval": "SummEval", "topicalchat": "TopicalChat", "webnlg": "WebNLG", "podcast": "Podcast",
    "rose": "RoSE", "rose_llm": "RoSE with LLMs", "sumllm": "SumLLM", "qags_cnndm": "QAGS-CNNDM",
    "qags_xsum": "QAGS-XSum", "cnndm_contest": "CNN/DM contest",
}
#: A table whose values a reader types (the chapter's parameters) keeps its ids.
KEEP_IDS_CLASS = "nlg-parameters"


#: Each model's name, registered by the notebook's set-up (:func:`use_model_names`): this module must
#: not import the model runtimes, which analysis code may never reach.
_MODEL_NAMES: dict[str, str] = {}


def use_model_names(names: Mapping[str, str]) -> None:
    """Show these model ids by these names from now on (``nlgjudge.display.readable_tables`` registers
    the packaged models' titles)."""
    _MODEL_NAMES.update({str(k): str(v) for k, v in names.items()})
    _pattern.cache_clear()


@lru_cache(maxsize=1)
def _pattern() -> tuple[re.Pattern[str], dict[str, str]]:
    names = {**DATASET_NAMES, **_MODEL_NAMES}
    # an id counts only whole: not inside a longer id ("qwen2.5-coder-1.5b-instruct-summaries"),
    # a path or a file name
    ids = "|".join(re.escape(key) for key in sorted(names, key=len, reverse=True))
    return re.compile(rf"(?<![\w./-])({ids})(?![\w/-]|\.\w)"), names


def reader_text(text: str) -> str:
    """``text`` with every dataset and packaged model id replaced by its name; a command (``python -m
    ...``, ``-p name value``) keeps its ids, which are what a reader types."""
    if "python -m" in text or re.search(r"(^|\s)-p \w", text):
        return text
    pattern, names = _pattern()
    return pattern.sub(lambda m: names[m.group(1)], text)


_TEXT_NODE = re.compile(r">([^<>]+)<")


def reader_html(html: str) -> str:
    """An HTML table with the ids in its text (never in its tags or attributes) replaced by names."""
    return _TEXT_NODE.sub(lambda m: ">" + reader_text(m.group(1)) + "<", html)
