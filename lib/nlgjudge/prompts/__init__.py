"""Prompt templates and output parsers for LLM judges.

* :mod:`~nlgjudge.prompts.templates`: the first paper's comparative and scoring prompts 1-2
  (pure functions of source, candidates, aspect and wording) and :class:`PromptEnding`, the
  explicit convention for how a prompt ends and which label words are scored;
* :mod:`~nlgjudge.prompts.geval`: G-Eval's SummEval prompts from the data directory;
* :mod:`~nlgjudge.prompts.narcissism`: seed 003's per-family generation and likelihood prompts;
* :mod:`~nlgjudge.prompts.parsers`: sampled text -> decision / score, None when unclear, counted.

Only the templates and parsers are imported here; G-Eval and the seed 003 prompts are loaded
from their modules (they read files).
"""

from nlgjudge.prompts.parsers import Decision, ParseReport, fraction_first, parse_all, parse_comparative, parse_score
from nlgjudge.prompts.templates import (
    ANSWER_SUFFIX,
    ASPECTS,
    DIALOGUE_RESPONSE,
    SCORE_SUFFIX,
    SUMMARY,
    AspectWording,
    PromptEnding,
    PromptSegments,
    Wording,
    comparative_ending,
    comparative_prompt,
    comparative_question,
    comparative_segments,
    every_prompt,
    scoring_ending,
    scoring_prompt,
    scoring_question,
    scoring_segments,
)

__all__ = [
    "ANSWER_SUFFIX", "ASPECTS", "DIALOGUE_RESPONSE", "SCORE_SUFFIX", "SUMMARY", "AspectWording", "Decision",
    "ParseReport", "PromptEnding", "PromptSegments", "Wording", "comparative_ending", "comparative_prompt",
    "comparative_question", "comparative_segments", "every_prompt", "fraction_first", "parse_all", "parse_comparative",
    "parse_score", "scoring_ending", "scoring_prompt", "scoring_question", "scoring_segments",
]
