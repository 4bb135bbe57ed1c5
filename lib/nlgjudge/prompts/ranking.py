"""What the judge of ``nlgjudge rank`` reads: the book's comparative prompt 1, or the user's own.

By default a comparison is the first paper's comparative prompt 1 (the context, "Summary A: ...",
"Summary B: ...", then the question) with the question of ``aspect``: an abbreviation the book uses
(``OVR`` "Which Summary is better, ...", ``COH`` "... more coherent ...", see
:data:`nlgjudge.prompts.ASPECTS`) or any adjective ("concise" -> "Which Summary is more concise, Summary A
or Summary B?"). With ``OVR`` and the noun "summary" the prompt is exactly the Elo chapter's, so the
released Elo judgments are reused. With a reference, the context is followed by
"Reference summary: <reference>".

A prompt file replaces the template: plain text with the fields ``{output_a}`` and ``{output_b}``
(required) and ``{source}``, ``{reference}`` (optional); write ``{{`` and ``}}`` for literal braces.
It should end with a question answered by "<Noun> A" or "<Noun> B": the answer is read as the
probabilities of " A" and " B" after the noun, as everywhere in the book.
"""

from __future__ import annotations

import string
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from nlgjudge.prompts.templates import ASPECTS, PromptEnding, Wording, comparative_ending, comparative_prompt
from nlgjudge.safety import shown_path

#: Chat-template control strings of common judge families, for a judge whose tokenizer is not at hand.
KNOWN_CONTROL_STRINGS = (
    "<|im_start|>", "<|im_end|>", "<|endoftext|>", "<|eot_id|>", "<|start_header_id|>", "<|end_header_id|>",
    "<|begin_of_text|>", "<start_of_turn>", "<end_of_turn>", "[INST]", "[/INST]", "<|user|>", "<|assistant|>",
    "<|system|>", "<|end|>",
)

PROMPT_FIELDS = ("source", "output_a", "output_b", "reference")
DEFAULT_ASPECT = "OVR"


def reference_context(source: str, reference: str, noun: str = "summary") -> str:
    """The context of a reference-based comparison: the source, then "Reference <noun>: <reference>"
    (``nlgjudge rank --with-reference`` and the gaming chapter's reference-based defense)."""
    return f"{source}\n\nReference {noun}: {reference}"


class PromptFileError(ValueError):
    """A prompt file that cannot be used (the message says why and how to fix it)."""


@dataclass(frozen=True)
class RankPrompt:
    """The comparison prompt of a ranking run."""

    aspect: str = DEFAULT_ASPECT
    noun: str = "summary"
    with_reference: bool = False
    template: str | None = None
    """A user's prompt text with ``{output_a}``, ``{output_b}`` [, ``{source}``, ``{reference}``]; None: the book's."""
    template_name: str = ""

    def __post_init__(self) -> None:
        Wording(self.noun)  # checks the noun
        if self.template is None:
            if not self.aspect or not self.aspect.strip() or "\n" in self.aspect:
                raise ValueError(f"aspect must be an abbreviation ({', '.join(ASPECTS)}) or one line of words; got {self.aspect!r}")
        else:
            used = template_fields(self.template, self.template_name or "the prompt")
            if "reference" in used and not self.with_reference:
                raise PromptFileError(
                    f"{self.template_name or 'the prompt'}: uses {{reference}}; rank with references (--with-reference) "
                    "or remove the field"
                )

    @property
    def wording(self) -> Wording:
        return Wording(self.noun)

    @property
    def ending(self) -> PromptEnding:
        return comparative_ending(self.wording)

    @property
    def question(self) -> str:
        """The question the default template ends with (empty for a user's prompt)."""
        if self.template is not None:
            return ""
        N = self.wording.Noun
        known = ASPECTS.get(self.aspect.upper())
        if known is not None and known.adjective is not None:
            adjective = known.adjective
        elif known is not None:
            raise ValueError(f"aspect {self.aspect!r} has its own WebNLG questions; choose another aspect or an adjective")
        elif self.aspect.strip().isalpha() and self.aspect.strip().isupper():
            # "COHR" is a typo of an abbreviation, not an adjective: the judge would be asked "more COHR"
            raise ValueError(f"looks like an abbreviation but is none the book knows ({', '.join(ASPECTS)}); pass one of "
                             f"them, or the adjective itself in lower case (e.g. concise)")
        else:
            adjective = self.aspect.strip()
        return f"Which {N} is more {adjective}, {N} A or {N} B?".replace("is more good", "is better")

    def text(self, source: str, output_a: str, output_b: str, reference: str | None = None) -> str:
        """The prompt for one comparison (``output_a`` in position A)."""
        if self.with_reference and reference is None:
            raise ValueError("this prompt shows the reference; pass reference=")
        if self.template is not None:
            values = {"source": source, "output_a": output_a, "output_b": output_b, "reference": reference or ""}
            return self.template.format(**values)
        context = reference_context(source, str(reference), self.noun) if self.with_reference else source
        known = ASPECTS.get(self.aspect.upper())
        if known is not None and known.adjective is not None:
            return comparative_prompt(1, context, output_a, output_b, known.abbreviation, self.wording)
        # The same layout as comparative prompt 1, with the user's adjective in the question.
        N = self.wording.Noun
        return f"{context}\n\n{N} A: {output_a}\n\n{N} B: {output_b}\n\n{self.question}"

    def describe(self) -> str:
        """One line for the report."""
        if self.template is not None:
            return f"the user's prompt {self.template_name or '(given as text)'}; answer read after {self.ending.answer_prefix!r}"
        reference = ", the reference after the context" if self.with_reference else ", no reference"
        return f"the book's comparative prompt 1{reference}, asking {self.question!r}"


def template_fields(text: str, name: str) -> set[str]:
    """The fields a prompt template uses; raises :class:`PromptFileError` on unknown or missing ones."""
    try:
        parsed = list(string.Formatter().parse(text))
    except ValueError as error:
        raise PromptFileError(f"{name}: {error}; write {{{{ and }}}} for literal braces") from None
    used: set[str] = set()
    for _, field, spec, conversion in parsed:
        if field is None:
            continue
        if field not in PROMPT_FIELDS or spec or conversion:
            raise PromptFileError(
                f"{name}: unknown field {{{field}{'!' + conversion if conversion else ''}{':' + spec if spec else ''}}}; "
                f"the fields are {', '.join('{' + f + '}' for f in PROMPT_FIELDS)} (write {{{{ and }}}} for literal braces)"
            )
        used.add(field)
    missing = [f for f in ("output_a", "output_b") if f not in used]
    if missing:
        raise PromptFileError(f"{name}: the prompt must contain {' and '.join('{' + f + '}' for f in missing)}")
    return used


def prompt_from_file(path: str | Path, *, noun: str = "summary", with_reference: bool = False) -> RankPrompt:
    """A :class:`RankPrompt` from a user's prompt file."""
    file = Path(path)
    shown = shown_path(path)
    if not file.exists():
        raise PromptFileError(f"{shown}: no such prompt file; pass a text file with {{output_a}} and {{output_b}}")
    if not file.is_file():
        raise PromptFileError(f"{shown}: not a regular file (a folder, device or pipe); pass a text file with "
                              "{output_a} and {output_b}")
    try:
        # utf-8-sig: a byte-order mark (as some editors write) is read as nothing, never sent to the judge
        text = file.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError:
        raise PromptFileError(f"{shown}: not UTF-8 text; save the prompt file as UTF-8") from None
    if not text.strip():
        raise PromptFileError(f"{shown}: the prompt file has no text" + (" (only spaces and line breaks)" if text else "")
                              + "; write a prompt with {output_a} and {output_b}")
    try:
        fields = {field for _, field, _, _ in string.Formatter().parse(text) if field}
    except ValueError:  # an unmatched brace: the template's own check says where
        fields = {"reference"}
    if with_reference and "reference" not in fields:
        raise PromptFileError(f"{shown}: the reference is to be shown to the judge (--with-reference), but the prompt "
                              "file has no {reference}; add {reference} where the judge should read it, or leave "
                              "--with-reference out")
    return RankPrompt(noun=noun, with_reference=with_reference, template=text.rstrip("\n"), template_name=str(path))


def prompt_control_warnings(prompt: RankPrompt, control_strings: Sequence[str]) -> list[str]:
    """A prompt file that holds the judge's chat-template control strings (an end of turn, a turn's start):
    they are read as plain text like every text of the run, never as turn markers, so a turn the user wrote
    into the file is not one; said, as it is for the outputs."""
    text = getattr(prompt, "template", None)
    found = sorted({c for c in control_strings if c and text and c in text})
    if not found:
        return []
    return [f"the prompt file ({getattr(prompt, 'template_name', '') or 'the prompt'}) holds the judge's control strings "
            f"{', '.join(repr(c) for c in found[:5])}: they are read as plain text, never as the judge's own turn markers, "
            "so a turn written in the file is not a turn; the judge's chat template frames the whole prompt as one user turn"]
