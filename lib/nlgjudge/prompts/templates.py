"""The first paper's prompt templates (Liusie et al. 2024, seed 000), as pure functions.

Wording sources, in order of authority:

* the paper's Figures 2 and 3 (readable in seed 001's text): comparative prompt 1
  "Which Summary is more consistent, Summary A or Summary B?", comparative prompt 2 with
  "Passage:" and "... more consistent relative to the passage, Summary A or Summary B?",
  scoring prompt 1 "Provide a score between 1 and 10 that measures the summary's consistency",
  scoring prompt 2 with "Passage:" and "Score the response between 1 and 10 based on how
  consistent the summary is"; "only the attribute is changed ... and 'summary' -> 'response'";
* facts from the authors' public code listed in ``shared/papers/README.md`` and its prompt module:
  the attribute adjectives and score names, the context placed first, "Summary A: <A>",
  parts separated by blank lines, "is more good" -> "is better", WebNLG semantics' own questions,
  "Passage"/"passage" -> "Dialogue"/"dialogue" for dialogue contexts, and the decoder prefix
  "Summary"/"Response" used when label probabilities are read;
* section 4.4: Llama-2 comparative prompts are appended with "Answer:" and scoring prompts end
  with "Score:" (see :class:`PromptEnding`).

Our choices where the sources are silent are marked "(our choice)" below. Every builder returns
the prompt as ``"".join(parts)`` of its *segments* in the order context, candidate A, candidate B,
question, so that all prompts of one context share their beginning (the engine computes a shared
prefix once), and those with the same candidate A share context + A.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

SCORE_LOW, SCORE_HIGH = 1, 10  # the paper's scoring prompts ask for a score between 1 and 10


@dataclass(frozen=True)
class AspectWording:
    """How an aspect is named inside a prompt."""

    abbreviation: str
    score_name: str  # noun used by scoring prompt 1 ("the summary's coherency")
    adjective: str | None  # used by comparative prompts and scoring prompt 2; None: own questions


#: Aspect abbreviations (as in the papers' tables and the data layer) -> prompt wording.
#: Adjectives and score names as in the authors' code (see module docstring); COH is
#: "coherency" there, for SummEval and TopicalChat alike.
ASPECTS: dict[str, AspectWording] = {
    a.abbreviation: a
    for a in (
        AspectWording("COH", "coherency", "coherent"),
        AspectWording("CON", "consistency", "consistent"),
        AspectWording("FLU", "fluency", "fluent"),
        AspectWording("REL", "relevance", "relevant"),
        AspectWording("NAT", "naturalness", "natural"),
        AspectWording("CNT", "continuity", "good a continuation"),
        AspectWording("ENG", "engagingness", "engaging"),
        AspectWording("GRA", "grammar", "grammatically correct"),
        AspectWording("SEM", "semantics", None),
        # Overall quality, for seed 004's judge ("the better summary", §3.1): with the authors'
        # "is more good" -> "is better" rule, comparative prompt 1 asks "Which Summary is better,
        # Summary A or Summary B?" (our choice; the paper does not print its instructions).
        AspectWording("OVR", "overall quality", "good"),
    )
}

#: WebNLG semantics (SEM) uses its own questions instead of an adjective; "{N}"/"{n}" stand for
#: the capitalised/lower-case noun. Comparative wording from the papers README; scoring
#: wording from the authors' code.
SEM_COMPARATIVE_QUESTIONS: dict[int, str] = {
    1: "Which {N} best aligns with the given semantic triples, {N} A or {N} B?",
    2: "Which {N} captures the most information from the semantic triples, {N} A or {N} B?",
}
SEM_SCORING_QUESTIONS: dict[int, str] = {
    1: "Provide a score between 1 and 10 that measures how well the {n} captures the information of the semantic triples",
    2: "Score the {n} out of 10 based on how well the {n} relates with the semantic triples",
}


class _HasWording(Protocol):
    @property
    def noun(self) -> str: ...

    @property
    def source_kind(self) -> str: ...


@dataclass(frozen=True)
class Wording:
    """The dataset-specific words of a prompt: the candidate noun and the context's name.

    ``noun`` is "summary" or "response" (``DatasetInfo.noun``); ``context_label`` names the
    context in prompt 2 ("passage", or "dialogue" for dialogue contexts as in the authors' code).
    WebNLG triples keep "passage" (our choice: the paper says only the attribute and the noun
    change between tasks).
    """

    noun: str = "summary"
    context_label: str = "passage"

    def __post_init__(self) -> None:
        for name in ("noun", "context_label"):
            value = getattr(self, name)
            if not value or not value.strip() or value != value.strip():
                raise ValueError(f"Wording.{name} must be a non-empty word without surrounding spaces, got {value!r}")

    @property
    def Noun(self) -> str:  # noqa: N802 - the capitalised form, as printed in prompts
        return self.noun[:1].upper() + self.noun[1:]

    @property
    def Label(self) -> str:  # noqa: N802
        return self.context_label[:1].upper() + self.context_label[1:]

    @classmethod
    def for_dataset(cls, info: _HasWording) -> Wording:
        """Wording for a dataset from its ``DatasetInfo`` (``noun`` and ``source_kind``)."""
        return cls(noun=info.noun, context_label="dialogue" if info.source_kind == "dialogue" else "passage")


SUMMARY = Wording("summary", "passage")
DIALOGUE_RESPONSE = Wording("response", "dialogue")


def _aspect(aspect: str) -> AspectWording:
    if aspect not in ASPECTS:
        raise ValueError(f"unknown aspect {aspect!r}; known abbreviations: {sorted(ASPECTS)}")
    return ASPECTS[aspect]


def _template(template: int) -> int:
    if template not in (1, 2):
        raise ValueError(f"the paper has prompt templates 1 and 2, got {template!r}")
    return template


def _text(name: str, value: str, allow_empty: bool = False) -> str:
    """Check a prompt part. Candidates may be empty: a system that produced nothing (WebNLG 2017
    has such outputs, rated by the annotators) is judged as it is, with its heading followed by nothing."""
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a string, got {type(value).__name__}")
    if not allow_empty and not value.strip():
        raise ValueError(f"{name} is empty; a prompt needs its text")
    return value


@dataclass(frozen=True)
class PromptSegments:
    """A prompt split where prompts of one context stop sharing text.

    ``text == context + candidate_a + candidate_b + question`` (``candidate_b`` is "" for scoring
    prompts). Prompts with equal ``context`` share it as a prefix; with equal ``context`` and
    ``candidate_a`` they share both.
    """

    context: str
    candidate_a: str
    candidate_b: str
    question: str

    @property
    def text(self) -> str:
        return self.context + self.candidate_a + self.candidate_b + self.question


def comparative_question(template: int, aspect: str, wording: Wording = SUMMARY) -> str:
    """The final question of a comparative prompt, e.g. "Which Summary is more coherent, Summary A or Summary B?"."""
    template, spec = _template(template), _aspect(aspect)
    N, label = wording.Noun, wording.context_label
    if spec.adjective is None:
        return SEM_COMPARATIVE_QUESTIONS[template].format(N=N, n=wording.noun)
    relative = f" relative to the {label}" if template == 2 else ""
    question = f"Which {N} is more {spec.adjective}{relative}, {N} A or {N} B?"
    # As in the authors' code: "is more good a continuation" reads "is better a continuation".
    return question.replace("is more good", "is better")


def comparative_segments(
    template: int, source: str, candidate_a: str, candidate_b: str, aspect: str, wording: Wording = SUMMARY
) -> PromptSegments:
    """Comparative prompt 1 or 2 as segments (context, candidate A, candidate B, question).

    Prompt 1: ``<context>\\n\\nSummary A: <A>\\n\\nSummary B: <B>\\n\\n<question>``;
    prompt 2 labels the context: ``Passage:\\n<context>\\n\\n...``. WebNLG semantics (SEM)
    never labels the context (as in the authors' code).
    """
    template = _template(template)
    spec = _aspect(aspect)
    source = _text("source", source)
    a, b = _text("candidate_a", candidate_a, allow_empty=True), _text("candidate_b", candidate_b, allow_empty=True)
    N = wording.Noun
    labelled = template == 2 and spec.adjective is not None
    context = (f"{wording.Label}:\n{source}" if labelled else source) + "\n\n"
    return PromptSegments(
        context=context,
        candidate_a=f"{N} A: {a}\n\n",
        candidate_b=f"{N} B: {b}\n\n",
        question=comparative_question(template, aspect, wording),
    )


def comparative_prompt(
    template: int, source: str, candidate_a: str, candidate_b: str, aspect: str, wording: Wording = SUMMARY
) -> str:
    """The paper's comparative prompt ``template`` (1 or 2) for one ordered pair of candidates."""
    return comparative_segments(template, source, candidate_a, candidate_b, aspect, wording).text


def scoring_question(template: int, aspect: str, wording: Wording = SUMMARY) -> str:
    """The instruction closing a scoring prompt (a score between 1 and 10)."""
    template, spec = _template(template), _aspect(aspect)
    n = wording.noun
    if spec.adjective is None:
        return SEM_SCORING_QUESTIONS[template].format(N=wording.Noun, n=n)
    if template == 1:
        return f"Provide a score between {SCORE_LOW} and {SCORE_HIGH} that measures the {n}'s {spec.score_name}"
    # "Score the response ..." is the paper's wording for summaries too (Figure 3).
    return f"Score the response between {SCORE_LOW} and {SCORE_HIGH} based on how {spec.adjective} the {n} is"


def scoring_segments(template: int, source: str, candidate: str, aspect: str, wording: Wording = SUMMARY) -> PromptSegments:
    """Scoring prompt 1 or 2 as segments (context, candidate, "", question).

    Prompt 1: ``<context>\\n\\nSummary: <x>\\n\\n<question>``; prompt 2 starts
    ``Passage: <context>`` (label and context on one line, as in the authors' code).
    """
    template = _template(template)
    spec = _aspect(aspect)
    source, x = _text("source", source), _text("candidate", candidate, allow_empty=True)
    labelled = template == 2 and spec.adjective is not None
    context = (f"{wording.Label}: {source}" if labelled else source) + "\n\n"
    return PromptSegments(
        context=context,
        candidate_a=f"{wording.Noun}: {x}\n\n",
        candidate_b="",
        question=scoring_question(template, aspect, wording),
    )


def scoring_prompt(template: int, source: str, candidate: str, aspect: str, wording: Wording = SUMMARY) -> str:
    """The paper's scoring prompt ``template`` (1 or 2) for one candidate."""
    return scoring_segments(template, source, candidate, aspect, wording).text


# --------------------------------------------------------------------------------------------
# How a prompt ends when sent to a model
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class PromptEnding:
    """The explicit end of a prompt: what follows the template text, and what the answer starts with.

    * ``user_suffix`` is appended to the prompt text (inside the user turn of a chat model), e.g.
      the paper's "Answer:" for Llama-2 comparative prompts.
    * ``answer_prefix`` is text the answer is *given* to start with, not generated: the decoder
      prefix of an encoder-decoder model, or the opened assistant turn of a chat model
      (rendered with the chat template's generation prompt, then this text, left open).
      The paper reads label probabilities after the prefix "Summary".
    * ``labels`` are the continuations scored after ``answer_prefix`` (whole sequences), e.g.
      ``(" A", " B")`` so the model scores "Summary A" against "Summary B".
    * ``answer_separator`` joins prompt (+ suffix) and ``answer_prefix`` for plain-text
      (non-chat, decoder-only) models.

    Callers pass ``prompt_text``/``chat_messages`` and ``labels`` to the engine; nothing is added
    behind the reader's back.
    """

    name: str
    user_suffix: str = ""
    answer_prefix: str = ""
    labels: tuple[str, ...] = ()
    answer_separator: str = "\n"
    decisions: tuple[str, ...] = field(default=())  # what each label means ("A", "B" or a score)

    def __post_init__(self) -> None:
        if len(set(self.labels)) != len(self.labels):
            raise ValueError(f"PromptEnding {self.name!r}: labels must differ, got {self.labels}")
        if self.decisions and len(self.decisions) != len(self.labels):
            raise ValueError(f"PromptEnding {self.name!r}: one decision per label is needed")

    def prompt_text(self, prompt: str) -> str:
        """The prompt as one string for a plain (non-chat) model, ending with the answer prefix."""
        text = prompt + self.user_suffix
        return text + self.answer_separator + self.answer_prefix if self.answer_prefix else text

    def user_text(self, prompt: str) -> str:
        """The user turn of a chat model (or the encoder input of a seq2seq model)."""
        return prompt + self.user_suffix

    def chat_messages(self, prompt: str) -> list[dict[str, str]]:
        """Chat messages: the user turn, then an assistant turn opened with ``answer_prefix``
        (to be continued by the model: render it without closing the assistant turn)."""
        messages = [{"role": "user", "content": self.user_text(prompt)}]
        if self.answer_prefix:
            messages.append({"role": "assistant", "content": self.answer_prefix})
        return messages

    @property
    def full_labels(self) -> tuple[str, ...]:
        """The label sequences including the answer prefix, e.g. ("Summary A", "Summary B")."""
        return tuple(self.answer_prefix + label for label in self.labels)

    def in_words(self) -> str:
        """How the prompts end and what is scored, for a reader: no code names or quoted strings."""
        after = "after the prompt" + (f" and \"{self.user_suffix.strip()}\"" if self.user_suffix.strip() else "")
        labels = " and ".join(f"\"{label.strip()}\"" for label in self.labels)
        if self.answer_prefix.strip():
            return (f"{after}, the judge's answer is begun with \"{self.answer_prefix.strip()}\", and the probabilities of "
                    f"{labels} as its next word are read")
        return f"{after}, the probabilities of {labels} as the judge's next word are read"

    def describe(self) -> str:
        """One line for a chapter: exactly how prompts end and what is scored."""
        return (
            f"{self.name}: prompt + {self.user_suffix!r}, answer starts with {self.answer_prefix!r}, "
            f"labels {list(self.labels)}"
        )


ANSWER_SUFFIX = "\n\nAnswer:"  # paper 4.4: Llama-2 comparative prompts are appended with "Answer:"
SCORE_SUFFIX = "\n\nScore:"  # paper 4.4: Llama-2 scoring prompts end with "Score:"
# The blank line before "Answer:"/"Score:" is our choice, matching the template's separators.


def comparative_ending(wording: Wording = SUMMARY, user_suffix: str = "") -> PromptEnding:
    """Comparative prompts read as a classifier over "Summary A" vs "Summary B".

    The answer starts with the noun ("Summary"/"Response", as the paper's decoder prefix), so
    the labels are the single letters " A" and " B". Pass ``user_suffix=ANSWER_SUFFIX`` for the
    paper's Llama-2 set-up.
    """
    return PromptEnding(
        name=f"comparative[{wording.Noun}{' + Answer:' if user_suffix else ''}]",
        user_suffix=user_suffix,
        answer_prefix=wording.Noun,
        labels=(" A", " B"),
        answer_separator=" " if user_suffix.endswith(":") else "\n",
        decisions=("A", "B"),
    )


def scoring_ending(user_suffix: str = "", low: int = SCORE_LOW, high: int = SCORE_HIGH, space_before: bool = False) -> PromptEnding:
    """Scoring prompts read as a distribution over the score words ``low``..``high``.

    Labels are the numbers as text ("1" ... "10"), scored as whole sequences (so "10" is not
    confused with "1"). ``space_before`` prefixes each with a space, for models that continue
    "Score:" with " 7". Pass ``user_suffix=SCORE_SUFFIX`` for the paper's Llama-2 set-up.
    """
    if not low < high:
        raise ValueError(f"empty score range {low}..{high}")
    scores = tuple(str(s) for s in range(low, high + 1))
    return PromptEnding(
        name=f"scoring[{low}-{high}{' + Score:' if user_suffix else ''}]",
        user_suffix=user_suffix,
        labels=tuple((" " if space_before else "") + s for s in scores),
        decisions=scores,
    )



def every_prompt(
    source: str, candidate_a: str, candidate_b: str, aspect: str, wording: Wording = SUMMARY
) -> dict[str, str]:
    """The four prompts of the first paper for one context and aspect, by name: comparative
    prompts 1 and 2 (A and B as given) and scoring prompts 1 and 2 (of ``candidate_a``), as the
    paper's Figures 2 and 3 show them. G-Eval's prompts are files (:mod:`nlgjudge.prompts.geval`)."""
    return {
        "comparative prompt 1": comparative_prompt(1, source, candidate_a, candidate_b, aspect, wording),
        "comparative prompt 2": comparative_prompt(2, source, candidate_a, candidate_b, aspect, wording),
        "scoring prompt 1": scoring_prompt(1, source, candidate_a, aspect, wording),
        "scoring prompt 2": scoring_prompt(2, source, candidate_a, aspect, wording),
    }
