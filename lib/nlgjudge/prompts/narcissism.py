"""Per-model-family prompts of the narcissistic-evaluators paper (Liu et al., seed 003, Tables 4-6).

Table 4 gives each generator's summarisation prompt (a prefix such as "Summarize:" before the
document, or a suffix such as "TL;DR:" after it); Table 5 the evaluators' prefixes/suffixes in the
reference-free setting (condition = the source document) and Table 6 in the reference-based
setting (condition = the reference, e.g. "in other words:" for BART, "Paraphrase:" for T5).
The tables are transcribed in ``data/reported/liu2023_table0{4,5,6}.csv`` ("✗" = none) and read
through :mod:`nlgjudge.reported`.

The paper prints the words but not how they are joined to the text; we join with one space
(``"Summarize: <document>"``, ``"<document> TL;DR:"``) (our choice), overridable by ``joiner``.
The scored target (the summary) follows the condition in the likelihood of seed 003 eq. 2.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Literal

from nlgjudge.reported import load_reported

Setting = Literal["generation", "reference_free", "reference_based"]

#: Setting -> table number in seed 003.
SETTING_TABLES: dict[str, int] = {"generation": 4, "reference_free": 5, "reference_based": 6}

_NONE_MARK = "✗"


@dataclass(frozen=True)
class FamilyPrompt:
    """The prompt words one model uses in one setting (Table 4, 5 or 6 of seed 003)."""

    name: str  # e.g. "BART-Large-CNN"
    checkpoint: str  # as printed in the paper
    prefix: str  # "" where the paper prints ✗
    suffix: str
    setting: str
    table: int

    def wrap(self, text: str, joiner: str = " ") -> str:
        """``prefix + joiner + text + joiner + suffix``, leaving out empty parts."""
        if not text.strip():
            raise ValueError(f"{self.name}: the text to wrap is empty")
        parts = [p for p in (self.prefix, text, self.suffix) if p]
        return joiner.join(parts)


def family_prompts(setting: Setting, data_dir: str | os.PathLike[str] | None = None) -> dict[str, FamilyPrompt]:
    """Every model's prompt words for a setting, by the paper's model name, in printed order."""
    if setting not in SETTING_TABLES:
        raise ValueError(f"unknown setting {setting!r}; choose one of {sorted(SETTING_TABLES)}")
    table = SETTING_TABLES[setting]
    frame = load_reported("liu2023", table, data_dir)
    prompts: dict[str, FamilyPrompt] = {}
    for rec in frame.to_dict("records"):
        prompts[rec["row"]] = FamilyPrompt(
            name=rec["row"],
            checkpoint=rec["checkpoint"],
            prefix="" if rec["prefix"] == _NONE_MARK else rec["prefix"],
            suffix="" if rec["suffix"] == _NONE_MARK else rec["suffix"],
            setting=setting,
            table=table,
        )
    return prompts


def family_prompt(name: str, setting: Setting, data_dir: str | os.PathLike[str] | None = None) -> FamilyPrompt:
    """One model's prompt words; a clear error lists the known names."""
    prompts = family_prompts(setting, data_dir)
    if name not in prompts:
        raise KeyError(f"no {setting} prompt for model {name!r} in seed 003 Table {SETTING_TABLES[setting]}; known: {list(prompts)}")
    return prompts[name]


def generation_prompt(document: str, prompt: FamilyPrompt, joiner: str = " ") -> str:
    """The input a generator summarises from (seed 003 Table 4 prompt around the document)."""
    if prompt.setting != "generation":
        raise ValueError(f"{prompt.name}: a generation prompt needs Table 4's words, got the {prompt.setting} ones")
    return prompt.wrap(document, joiner)


def likelihood_condition(condition: str, prompt: FamilyPrompt, joiner: str = " ") -> str:
    """The conditioning text of a likelihood evaluator: the source document (reference-free) or
    the reference summary (reference-based) wrapped in the evaluator's prefix/suffix."""
    if prompt.setting == "generation":
        raise ValueError(f"{prompt.name}: evaluators use Table 5 or 6 words, not the generation prompt")
    return prompt.wrap(condition, joiner)


# --- Our generators' prompts -------------------------------------------------------------------
# Seed 003 prompts its base models with Table 4's words ("Summarize:" before the document for
# BART/T5, "TL;DR:" after it for GPT-2). Our base model (Gemma-3-270m) gets the GPT-2 row, the
# decoder-only one. The instruction-tuned models get a user turn that states the length budget
# (the paper's models were fine-tuned or prompted towards each dataset's summary length; ours
# learn it only from the words). The words below are our choice, shown in the chapter.

#: The decoder-only base models' summarisation prompt: Table 4's GPT-2 row.
BASE_GENERATOR_ROW = "GPT2"


@dataclass(frozen=True)
class SummaryBudget:
    """How long a generated summary may be on one kind of document (stated in the chapter)."""

    kind: str  # "cnndm" (a few sentences) or "xsum" (one sentence)
    instruction: str  # the instruction-tuned models' words before the document
    max_new_tokens: int  # greedy decoding stops here or at the end-of-turn token


SUMMARY_BUDGETS: dict[str, SummaryBudget] = {
    "cnndm": SummaryBudget("cnndm", "Summarize the following news article in three sentences.", 96),
    "xsum": SummaryBudget("xsum", "Summarize the following news article in one sentence.", 48),
}

#: Which budget each dataset's documents get (CNN/DailyMail articles or XSum articles).
DATASET_BUDGETS: dict[str, str] = {
    "qags_cnndm": "cnndm",
    "qags_xsum": "xsum",
    "rose": "cnndm",
    "cnndm_contest": "cnndm",
    "summeval": "cnndm",
}


def summary_budget(dataset: str) -> SummaryBudget:
    """The length budget for a dataset's documents; a clear error names the datasets that have one."""
    if dataset not in DATASET_BUDGETS:
        raise KeyError(
            f"no summary length budget for dataset {dataset!r}; known: {sorted(DATASET_BUDGETS)} "
            "(add it to nlgjudge.prompts.narcissism.DATASET_BUDGETS)"
        )
    return SUMMARY_BUDGETS[DATASET_BUDGETS[dataset]]


def chat_summary_prompt(document: str, budget: SummaryBudget) -> str:
    """The user turn an instruction-tuned generator answers with its summary."""
    if not document.strip():
        raise ValueError("the document to summarise is empty")
    return f"{budget.instruction}\n\nArticle: {document}"
