"""From sampled text to a comparative decision ("A"/"B") or a score; None when it cannot tell.

Sampling (seed 000 eq. 4-5; prompt scoring samples 5 tokens at T=1) gives free text. The parsers
here map it to a decision or a score and return ``None`` for anything ambiguous: an echo of the
prompt's own wording ("Summary A or Summary B?", "between 1 and 10", a candidate heading
"Summary A: <text>"), both labels without a decisive phrase, ties, several different numbers.
A None is never turned into a decision or a score: :func:`parse_all` counts and reports it.

Pass the :class:`~nlgjudge.prompts.templates.PromptEnding`'s ``answer_prefix`` when the sample
continues one (the sample " A is more coherent" after the prefix "Summary" reads "Summary A ...").
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Literal, TypeVar

Decision = Literal["A", "B"]
T = TypeVar("T")

_ECHO = " \x00 "  # stands in for removed prompt wording; never matches a label or a number
_NUMBER_WORDS = {
    "one": 1, "two": 2, "three": 3, "four": 4, "five": 5,
    "six": 6, "seven": 7, "eight": 8, "nine": 9, "ten": 10,
}
_TIE = re.compile(
    r"\b(neither|both|equally|equal|tie|tied|same|no difference|cannot (?:decide|determine|tell)|"
    r"can't (?:decide|determine|tell)|unable to)\b",
    re.IGNORECASE,
)
_LEAD_IN = (
    r"(?:(?:final\s+)?answer\s*(?:is)?\s*[:\-]?|the\s+answer\s+is\s*:?|output\s*:|my\s+(?:answer|choice)\s+is\s*:?|"
    r"i\s+(?:would\s+)?(?:choose|pick|select|say|prefer|think)\s*:?|"
    r"the\s+(?:better|best|more\s+\w+(?:\s+\w+)?)\s+(?:one|\w+)\s+is\s*:?)?\s*(?:the\s+)?"
)


def _normalise(text: str) -> str:
    text = re.sub(r"[*_`#>]+", " ", text)  # markdown emphasis, headings, quotes
    return " ".join(text.split())


def _label_pattern(noun: str) -> str:
    """A label: "<Noun> A"/"<noun> b", "(A)", "Option A", or a bare capital letter that is
    followed by an end, punctuation, or a verb (so the article in "A good summary" is not one)."""
    named = rf"(?:{re.escape(noun)}|option|candidate|response|summary|text)\s+(?P<L1>[AaBb])\b"
    # Bracketed and bare letters stay case-sensitive even under re.IGNORECASE.
    bracketed = r"[\(\[](?P<L2>(?-i:[AB]))[\)\]]"
    bare = r"(?<![\w'])(?P<L3>(?-i:[AB]))(?=$|\s*[.,:;!?)\]]|\s+(?:is|was|seems|wins|because|since|as|-|–)\b)"
    return rf"(?:{named}|{bracketed}|{bare})"


def _letter(match: re.Match[str]) -> Decision:
    for group in ("L1", "L2", "L3"):
        value = match.group(group)
        if value:
            return "A" if value.upper() == "A" else "B"
    raise AssertionError("label pattern matched without a letter")


def _other(decision: Decision) -> Decision:
    return "B" if decision == "A" else "A"


def _remove_comparative_echoes(text: str, noun: str) -> str:
    n = rf"(?:{re.escape(noun)}|response|summary)"
    patterns = [
        rf"\b{n}\s+[AaBb]\s*(?:,\s*)?(?:or|/|and|vs\.?|versus)\s*(?:{n}\s+)?[AaBb]\b",  # "Summary A or Summary B"
        r"\b[AB]\s*(?:or|/|vs\.?|versus)\s*[AB]\b",  # "A or B"
        rf"\b{n}\s+[AaBb]\s*:\s*(?=\S)",  # a candidate heading "Summary A: <text>" copied from the prompt
        rf"\bwhich\s+{n}\s+is\b",  # the question's own opening
    ]
    for pattern in patterns:
        text = re.sub(pattern, _ECHO, text, flags=re.IGNORECASE)
    return text


def parse_comparative(text: str, noun: str = "summary", answer_prefix: str = "") -> Decision | None:
    """The decision a sampled answer states, or None when it is unclear.

    Rules, in order: prompt echoes are removed; decisive phrases are read ("Summary A",
    "B." or "Answer: B" at the start, "<label> is more/better", "prefer/choose <label>",
    "<label> is worse/less/not ..." for the other one); if they agree, that is the decision and if
    they disagree, None. Without a decisive phrase, a tie word ("both", "neither", "equally")
    gives None, and otherwise a single label mentioned (one or more times) is the decision.
    """
    if not isinstance(text, str):
        raise TypeError(f"sampled text must be a string, got {type(text).__name__}")
    s = _normalise(_remove_comparative_echoes(_normalise(answer_prefix + text), noun))
    if not s.strip(" \x00"):
        return None
    label = _label_pattern(noun)
    decisive: list[Decision] = []
    leading = re.match(rf"^\s*{_LEAD_IN}{label}", s, re.IGNORECASE)
    if leading and not re.match(rf"^\s*{_LEAD_IN}{label}\s+is\s+(?:not|worse|less)\b", s, re.IGNORECASE):
        decisive.append(_letter(leading))
    positive = [
        rf"{label}\s+(?:is|seems|appears)\s+(?:clearly\s+|slightly\s+|much\s+)?(?:the\s+)?(?:more|better|best|superior|preferable|preferred|stronger)\b",
        rf"{label}\s+(?:wins|is\s+the\s+winner)\b",
        rf"\b(?:prefer|choose|chose|pick|picked|select|selected|favou?r|go\s+with)\s+{label}",
        rf"\b(?:answer|choice)\s*(?:is|:)\s*{label}",
        rf"{label}\s+over\s+",
    ]
    negative = [
        rf"{label}\s+(?:is|seems|appears)\s+(?:not|worse|less|inferior|weaker)\b",
    ]
    for pattern in positive:
        decisive.extend(_letter(m) for m in re.finditer(pattern, s, re.IGNORECASE))
    for pattern in negative:
        decisive.extend(_other(_letter(m)) for m in re.finditer(pattern, s, re.IGNORECASE))
    if decisive:
        return decisive[0] if len(set(decisive)) == 1 else None
    if _TIE.search(s):
        return None
    mentioned = {_letter(m) for m in re.finditer(label, s, re.IGNORECASE)}
    if len(mentioned) == 1:
        return mentioned.pop()
    return None


def _remove_score_echoes(text: str) -> str:
    patterns = [
        r"\bbetween\s+\d+\s+and\s+\d+\b",
        r"\bfrom\s+\d+\s+to\s+\d+\b",
        r"\b(?:on\s+)?a\s+scale\s+of\s+\d+\s*(?:-|–|to)\s*\d+\b",
        r"(?<![\d.])\d+\s*(?:-|–|to)\s*\d+(?![\d.])",  # "1-10", "7-8": a range is no single score
    ]
    for pattern in patterns:
        text = re.sub(pattern, _ECHO, text, flags=re.IGNORECASE)
    return text


def parse_score(text: str, low: float = 1, high: float = 10, answer_prefix: str = "") -> float | None:
    """The score a sampled answer states, within ``[low, high]``, or None when it is unclear.

    Accepts "7", " 8/10", "Score: 6", "I would give it a 9.", "seven", "7.5". Returns None for
    echoes of the prompt ("between 1 and 10"), ranges ("7-8", "7 or 8"), several different
    numbers without one stated first, "n/d" with d other than ``high``, and out-of-range values.
    """
    if not isinstance(text, str):
        raise TypeError(f"sampled text must be a string, got {type(text).__name__}")
    if not low < high:
        raise ValueError(f"empty score range [{low}, {high}]")
    s = _normalise(answer_prefix + text)
    # "8/10" or "8 out of 10": keep the 8 when the scale is the one asked for, else ambiguous.
    def fraction(match: re.Match[str]) -> str:
        return match.group(1) if float(match.group(2)) == float(high) else _ECHO

    s = re.sub(r"(\d+(?:\.\d+)?)\s*(?:/|out\s+of)\s*(\d+(?:\.\d+)?)", fraction, s, flags=re.IGNORECASE)
    s = re.sub(r"\bout\s+of\s+\d+\b", _ECHO, s, flags=re.IGNORECASE)
    s = _remove_score_echoes(s)
    words = "|".join(_NUMBER_WORDS)
    number = rf"(?<![\w.])(-?\d+(?:\.\d+)?|{words})(?![\w]|\.\d)"
    found = [(m.start(), m.group(1).lower()) for m in re.finditer(number, s, re.IGNORECASE)]
    if not found:
        return None
    values = [float(_NUMBER_WORDS.get(token, token)) for _, token in found]
    lead = rf"^\s*(?:(?:score|rating|answer|grade)\s*(?:is|:|=)?\s*|i\s+would\s+(?:give|rate|score)\s+(?:it|this|the\s+\w+)?\s*(?:an?\s+)?(?:score\s+of\s+)?|the\s+(?:score|rating)\s+is\s*:?\s*)?{number}"
    leading = re.match(lead, s, re.IGNORECASE)
    if leading and re.match(rf"\s*(?:or|and)\s+{number}", s[leading.end():], re.IGNORECASE):
        return None  # "7 or 8"
    if leading:
        value = values[0]
    elif len(set(values)) == 1:
        value = values[0]
    else:
        return None
    return value if low <= value <= high else None


@dataclass(frozen=True)
class ParseReport:
    """How many samples parsed, what they said, and examples of those that did not."""

    total: int
    parsed: int
    counts: dict[str, int]
    unparseable_examples: tuple[str, ...]

    @property
    def unparseable(self) -> int:
        return self.total - self.parsed

    @property
    def fraction_unparseable(self) -> float:
        return self.unparseable / self.total if self.total else 0.0

    def __str__(self) -> str:
        shown = "; ".join(repr(e) for e in self.unparseable_examples)
        return (
            f"{self.parsed}/{self.total} samples parsed, {self.unparseable} unparseable "
            f"({100 * self.fraction_unparseable:.1f}%); counts {self.counts}"
            + (f"; e.g. {shown}" if shown else "")
        )


def parse_all(
    texts: Iterable[str], parser: Callable[[str], T | None], max_examples: int = 5
) -> tuple[list[T | None], ParseReport]:
    """Parse every sample; the report counts unparseable ones (kept as None, never dropped)."""
    results: list[T | None] = []
    examples: list[str] = []
    for text in texts:
        result = parser(text)
        results.append(result)
        if result is None and len(examples) < max_examples:
            examples.append(text)
    counts = Counter(str(_as_label(r)) for r in results if r is not None)
    parsed = sum(r is not None for r in results)
    return results, ParseReport(len(results), parsed, dict(sorted(counts.items())), tuple(examples))


def _as_label(value: object) -> object:
    # 7.0 reads "7" in a report
    return int(value) if isinstance(value, float) and value.is_integer() else value


def fraction_first(decisions: Iterable[Decision | None]) -> tuple[float | None, int]:
    """Seed 000 eq. 5: the fraction of parsed samples choosing A, and how many parsed.
    None when no sample parsed (a comparison with no readable answer has no probability)."""
    parsed = [d for d in decisions if d is not None]
    if not parsed:
        return None, 0
    return sum(d == "A" for d in parsed) / len(parsed), len(parsed)
