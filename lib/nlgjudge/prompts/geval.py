"""G-Eval's SummEval prompts (Liu et al. 2023), read from the data directory and filled in.

The prompt files live in the folder ``geval_prompts`` of the data directory
(``nlgjudge.config.data_dir()``, env ``NLGJUDGE_DATA_DIR``); see its ``PROVENANCE.md``.
Coherence, fluency and relevance use the published single-agent prompts as they are. The
single-agent consistency prompt is not available offline, so it is *derived* from the later
multi-agent file ``con_scorer.txt``: its task line without "discussing with other agents", its
criteria, its first two evaluation steps and the first sentence of step 3, then the source,
the summary and an evaluation form "- Consistency:" in the shape of the other three prompts
(the derivation is visible in :func:`derive_consistency_prompt` and flagged by ``derived``).

The score range comes from each prompt's criteria line ("Coherence (1-5)", "Fluency (1-3)"), so
G-Eval's expected score is computed over the range the prompt itself asks for.
"""

from __future__ import annotations

import hashlib
import os
import re
from dataclasses import dataclass
from pathlib import Path

from nlgjudge import config
from nlgjudge.config import DATA_DIR_ENV
from nlgjudge.data import DataNotFoundError

GEVAL_FOLDER = "geval_prompts"

#: Aspect abbreviation -> file in the G-Eval folder.
GEVAL_FILES: dict[str, str] = {
    "COH": "coh_detailed.txt",
    "CON": "con_scorer.txt",
    "FLU": "flu_detailed.txt",
    "REL": "rel_detailed.txt",
}

DOCUMENT_PLACEHOLDER = "{{Document}}"
SUMMARY_PLACEHOLDER = "{{Summary}}"
_PLACEHOLDER = re.compile(r"\{\{(Document|Summary)\}\}")
_RANGE = re.compile(r"^\s*(Coherence|Consistency|Fluency|Relevance)\s*\((\d+)-(\d+)\)", re.MULTILINE)


class GEvalPromptsNotFoundError(DataNotFoundError):
    """The G-Eval prompt folder or one of its files is missing."""


class GEvalPromptError(ValueError):
    """A G-Eval prompt file does not have the shape this module expects."""


@dataclass(frozen=True)
class GEvalPrompt:
    """One aspect's G-Eval prompt template with its score range."""

    aspect: str
    template: str
    score_range: tuple[int, int]
    source_file: str
    source_sha256: str
    derived: bool  # True where the template was rebuilt from another file (consistency)

    @property
    def needs_document(self) -> bool:
        return DOCUMENT_PLACEHOLDER in self.template

    def fill(self, document: str, summary: str) -> str:
        """The prompt with the source document and the summary put in (one pass, so text that
        itself contains "{{Summary}}" is never substituted again)."""
        if not summary.strip():
            raise ValueError("G-Eval: the summary is empty")
        if self.needs_document and not document.strip():
            raise ValueError(f"G-Eval {self.aspect}: the source document is empty")
        values = {"Document": document, "Summary": summary}
        return _PLACEHOLDER.sub(lambda m: values[m.group(1)], self.template)


def geval_folder(data_dir: str | os.PathLike[str] | None = None) -> Path:
    """The G-Eval prompt folder, or a clear error saying how to provide it."""
    root = config.data_dir(data_dir)
    if root is None:
        raise GEvalPromptsNotFoundError(
            f"G-Eval prompts: no data directory is set. Set {DATA_DIR_ENV} to the folder holding "
            f"'{GEVAL_FOLDER}/' (e.g. the shared data mirror) or pass data_dir=..."
        )
    folder = Path(root) / GEVAL_FOLDER
    if not folder.is_dir():
        raise GEvalPromptsNotFoundError(
            f"G-Eval prompts: folder '{GEVAL_FOLDER}' not found in the data directory {root}. "
            f"It should hold {sorted(GEVAL_FILES.values())} (from github.com/nlpyang/geval, "
            f"prompts/summeval/); put them there or point {DATA_DIR_ENV} at a directory that has them."
        )
    return folder


def _score_range(aspect: str, text: str, source: str) -> tuple[int, int]:
    match = _RANGE.search(text)
    if match is None:
        raise GEvalPromptError(f"{source}: no criteria line like 'Coherence (1-5)' to read the score range from")
    low, high = int(match.group(2)), int(match.group(3))
    if not low < high:
        raise GEvalPromptError(f"{source}: empty score range {low}-{high}")
    return low, high


def derive_consistency_prompt(scorer_text: str) -> str:
    """Single-agent consistency prompt rebuilt from the multi-agent ``con_scorer.txt`` text."""

    def section(start: str, end: str) -> str:
        match = re.search(re.escape(start) + r"(.*?)" + re.escape(end), scorer_text, re.DOTALL)
        if match is None:
            raise GEvalPromptError(f"con_scorer.txt: cannot find the part between {start!r} and {end!r}")
        return match.group(1).strip()

    intro = section("", "Evaluation Criteria:").replace(", discussing with other agents", "")
    criteria = section("Evaluation Criteria:", "Evaluation Steps:")
    steps_text = section("Evaluation Steps:", "Source Text:")
    steps = [line.strip() for line in steps_text.splitlines() if re.match(r"\s*\d+\.", line)]
    if len(steps) < 3:
        raise GEvalPromptError("con_scorer.txt: expected at least three numbered evaluation steps")
    # Keep steps 1-2; step 3 up to its first sentence ("... based on the Evaluation Criteria.").
    step3 = steps[2].split(". Tell me")[0].rstrip(".") + "."
    body = "\n".join([steps[0], steps[1], step3])
    return (
        f"{intro}\n\nEvaluation Criteria:\n\n{criteria}\n\nEvaluation Steps:\n\n{body}\n\n\n"
        f"Example:\n\n\nSource Text:\n\n{DOCUMENT_PLACEHOLDER}\n\nSummary:\n\n{SUMMARY_PLACEHOLDER}\n\n\n"
        "Evaluation Form (scores ONLY):\n\n- Consistency:"
    )


def load_geval_prompt(aspect: str, data_dir: str | os.PathLike[str] | None = None) -> GEvalPrompt:
    """G-Eval's SummEval prompt for one aspect (COH, CON, FLU, REL)."""
    if aspect not in GEVAL_FILES:
        raise ValueError(f"G-Eval has SummEval prompts for {sorted(GEVAL_FILES)}, not {aspect!r}")
    folder = geval_folder(data_dir)
    path = folder / GEVAL_FILES[aspect]
    if not path.is_file():
        raise GEvalPromptsNotFoundError(
            f"G-Eval prompts: file '{GEVAL_FILES[aspect]}' is missing from {folder}; "
            "restore it from github.com/nlpyang/geval (prompts/summeval/)"
        )
    raw = path.read_bytes()
    text = raw.decode("utf-8")
    derived = aspect == "CON"
    template = derive_consistency_prompt(text) if derived else text
    if SUMMARY_PLACEHOLDER not in template:
        raise GEvalPromptError(f"{path}: no {SUMMARY_PLACEHOLDER} placeholder")
    return GEvalPrompt(
        aspect=aspect,
        template=template,
        score_range=_score_range(aspect, template, str(path)),
        source_file=path.name,
        source_sha256=hashlib.sha256(raw).hexdigest(),
        derived=derived,
    )


def load_geval_prompts(data_dir: str | os.PathLike[str] | None = None) -> dict[str, GEvalPrompt]:
    """All four SummEval G-Eval prompts, by aspect."""
    return {aspect: load_geval_prompt(aspect, data_dir) for aspect in GEVAL_FILES}


def geval_prompt(aspect: str, document: str, summary: str, data_dir: str | os.PathLike[str] | None = None) -> str:
    """The filled G-Eval prompt for one summary of one document."""
    return load_geval_prompt(aspect, data_dir).fill(document, summary)
