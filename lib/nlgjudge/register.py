"""The book's analysis plan: the claims register (``register.toml``), read by every chapter.

Every claim a chapter gives a verdict on is declared once in ``register.toml``, before its data:
its words and place in the paper, the estimand, the unit of inference, its kind, the threshold (and
for an equivalence claim the margin), the minimal effect of interest with its reason, the family it
is corrected in, the comparator, the minimum number of units and the paper's reported value. The
chapters take the rule of each verdict from here (:func:`verdict`, :func:`claim`), so no verdict
rule is set in a chapter; a test fails when a built chapter glues a verdict for a claim the register
does not hold. The file lies inside the library, so the book's stamp (a hash of the library) makes
any change to it re-execute every chapter.

``make book`` writes the book's register page (``book/register.md``, :func:`page_markdown`) before
the HTML, so the page cannot drift from the file.
"""

from __future__ import annotations

import math
import statistics
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

from scipy.stats import norm

from nlgjudge.config import REPO_ROOT
from nlgjudge.stats.claims import (
    CONTRADICTED,
    NOT_RESOLVED,
    SUPPORTED,
    ClaimVerdict,
    claim_verdict,
    contexts_needed,
    equivalence_units_needed,
    units_needed_from_interval,
)

if TYPE_CHECKING:  # the register reads frames duck-typed: it imports no pandas at run time
    import numpy as np
    import pandas as pd

#: The register itself, beside this module.
REGISTER_PATH = Path(__file__).with_name("register.toml")
#: The kinds of claim, each read by one test (the glossary's claim rule).
KINDS = ("directional", "equivalence", "universal", "existence", "ordering")
#: The chapters' titles, for the register page (the chapter files' names are the keys).
_FIELDS = ("id", "chapter", "paper", "words", "estimand", "unit", "kind", "test", "direction", "threshold",
           "minimal_effect", "effect_reason", "family", "comparator", "min_units", "reported", "reported_how",
           "verdict_glue", "section")


class RegisterError(ValueError):
    """The register file breaks its own rules (a missing field, an unknown family or kind)."""


@dataclass(frozen=True)
class Claim:
    """One registered claim (see ``register.toml``'s header for each field)."""

    id: str
    chapter: str
    paper: str
    words: str
    estimand: str
    unit: str
    kind: str
    test: str
    direction: str
    threshold: float
    minimal_effect: float
    effect_reason: str
    family: str
    comparator: str
    min_units: int
    reported: str
    reported_how: str
    verdict_glue: tuple[str, ...]
    section: str  # the heading, in the chapter, of the section where the verdict is read
    margin: float | None = None
    borderline: float = 0.0
    comparator_method: str | None = None
    history: str = ""  # the plan's amendments to this claim, when and why (shown on the register page)
    after_data: bool | None = None  # whether the history is an amendment made after the claim's data were read

    @property
    def amended_after_data(self) -> bool:
        """Whether the plan's rule for this claim was set or changed after its data were read: any history
        is, unless the register says otherwise (a claim declared late, but before its own data)."""
        return bool(self.history) if self.after_data is None else self.after_data

    @property
    def is_equivalence(self) -> bool:
        return self.direction == "within"

    def effect_target(self) -> float:
        """The value the minimal effect of interest puts the estimand at, on the claim's side of its
        threshold: where "contexts needed" asks for power."""
        sign = -1.0 if self.direction == "below" else 1.0
        return self.threshold + sign * self.minimal_effect


#: The judge screen's fields in the register's [screen] table.
_SCREEN_FIELDS = ("words", "unit", "minimum", "min_units", "otherwise", "history")


@dataclass(frozen=True)
class Register:
    """The whole register: claims by id, the families, the chapters that draw no verdict and the
    secondary readings (corrected over their own family, no claim)."""

    claims: dict[str, Claim]
    families: dict[str, str]
    no_claims: dict[str, str]
    secondary: dict[str, str] = field(default_factory=dict)
    screen: dict[str, object] = field(default_factory=dict)
    choices: dict[str, str] = field(default_factory=dict)
    plan_written: str = ""  # the date the plan was first written ([plan] written)
    first_release: dict[str, str] = field(default_factory=dict)  # chapter -> the date its first release was read

    def of_chapter(self, chapter: str) -> list[Claim]:
        return [c for c in self.claims.values() if c.chapter == chapter]

    def written_after_data(self, spec: Claim) -> bool:
        """Whether ``spec`` was written after its chapter's first release had been read (the chapter's
        release is older than the plan), unless the register says it was declared before its own data."""
        released = self.first_release.get(spec.chapter, "")
        return spec.after_data is not False and bool(released) and released < self.plan_written


def _claim_from(entry: dict, families: dict[str, str], where: str) -> Claim:
    missing = [f for f in _FIELDS if f not in entry]
    if missing:
        raise RegisterError(f"{where}: claim {entry.get('id', '?')!r} lacks {', '.join(missing)}")
    unknown = sorted(set(entry) - set(_FIELDS) - {"margin", "borderline", "comparator_method", "history", "after_data"})
    if unknown:
        raise RegisterError(f"{where}: claim {entry['id']!r} has unknown field(s) {', '.join(unknown)}")
    if entry["kind"] not in KINDS:
        raise RegisterError(f"{where}: claim {entry['id']!r} has kind {entry['kind']!r}; one of {', '.join(KINDS)}")
    if entry["direction"] not in ("above", "below", "within"):
        raise RegisterError(f"{where}: claim {entry['id']!r}: direction must be above, below or within")
    if (entry["direction"] == "within") != ("margin" in entry):
        raise RegisterError(f"{where}: claim {entry['id']!r}: a margin goes with direction 'within', and only with it")
    if entry["kind"] == "equivalence" and entry["direction"] != "within":
        raise RegisterError(f"{where}: claim {entry['id']!r}: an equivalence claim is read within a margin")
    if entry["family"] not in families:
        raise RegisterError(f"{where}: claim {entry['id']!r} names family {entry['family']!r}, not declared in [families]")
    if not entry["id"].startswith(entry["chapter"] + "."):
        raise RegisterError(f"{where}: claim {entry['id']!r} must start with its chapter's name {entry['chapter']!r}")
    if not entry["verdict_glue"]:
        raise RegisterError(f"{where}: claim {entry['id']!r} names no glued value carrying its verdict")
    effect = float(entry["minimal_effect"])
    if not (math.isfinite(effect) and effect > 0):
        raise RegisterError(f"{where}: claim {entry['id']!r}: minimal_effect must be a positive number")
    return Claim(**{**entry, "threshold": float(entry["threshold"]), "minimal_effect": effect,
                    "min_units": int(entry["min_units"]), "verdict_glue": tuple(entry["verdict_glue"]),
                    "margin": float(entry["margin"]) if "margin" in entry else None,
                    "borderline": float(entry.get("borderline", 0.0))})


def load_register(path: str | Path = REGISTER_PATH) -> Register:
    """The register at ``path``, checked against its own rules (:class:`RegisterError` otherwise)."""
    path = Path(path)
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as error:
        raise RegisterError(f"{path.name}: not valid TOML ({error})") from None
    families = dict(data.get("families", {}))
    claims: dict[str, Claim] = {}
    for entry in data.get("claim", []):
        found = _claim_from(entry, families, path.name)
        if found.id in claims:
            raise RegisterError(f"{path.name}: claim {found.id!r} is declared twice")
        claims[found.id] = found
    no_claims = dict(data.get("no_claims", {}))
    secondary = {str(k): str(v) for k, v in data.get("secondary", {}).items()}
    screen = dict(data.get("screen", {}))
    if screen:
        missing = [f for f in _SCREEN_FIELDS if f not in screen]
        if missing or set(screen) - set(_SCREEN_FIELDS):
            raise RegisterError(f"{path.name}: [screen] must have exactly the fields {', '.join(_SCREEN_FIELDS)}")
        if not isinstance(screen["history"], list) or not isinstance(screen["min_units"], int):
            raise RegisterError(f"{path.name}: [screen] history is a list of amendments and min_units a whole number")
    clash = sorted({c.chapter for c in claims.values()} & set(no_claims))
    if clash:
        raise RegisterError(f"{path.name}: {', '.join(clash)} both draw no verdict and hold claims")
    choices = {str(k): str(v) for k, v in data.get("choices", {}).items()}
    plan = dict(data.get("plan", {}))
    first_release = {str(k): str(v) for k, v in dict(plan.get("first_release", {})).items()}
    if set(plan) - {"written", "first_release"} or (first_release and not plan.get("written")):
        raise RegisterError(f"{path.name}: [plan] holds written (a date) and [plan.first_release] (chapter = date) only")
    undated = sorted({c.chapter for c in claims.values()} - set(first_release)) if first_release else []
    if undated:
        raise RegisterError(f"{path.name}: [plan.first_release] lacks the chapter(s) {', '.join(undated)}")
    return Register(claims, families, no_claims, secondary, screen, choices, str(plan.get("written", "")), first_release)


@lru_cache(maxsize=1)
def register() -> Register:
    """The book's register (read once per process)."""
    return load_register()


def claim(claim_id: str) -> Claim:
    """The registered claim ``claim_id``; a chapter asking for one the register lacks is an error."""
    found = register().claims.get(claim_id)
    if found is None:
        raise KeyError(f"claim {claim_id!r} is not in the register ({REGISTER_PATH.name}); declare it there first")
    return found


#: An interval end within this many Monte Carlo standard errors of a boundary is borderline: the
#: random draws, not the data, would decide it (a resampling risk of about 0.1% per side).
MONTE_CARLO_Z = 3.0


def verdict(claim_id: str, estimate: float, low: float, high: float, n: int, *,
            degenerate: str | None = None, monte_carlo_se: float = 0.0) -> ClaimVerdict:
    """The claim rule's verdict on ``claim_id`` with its registered direction, threshold, margin,
    borderline and minimum units (:func:`nlgjudge.stats.claims.claim_verdict`).

    ``monte_carlo_se``: the estimate's Monte Carlo standard error where random draws made it; an end
    within :data:`MONTE_CARLO_Z` of them of a boundary is borderline (not resolved), never flipped."""
    spec = claim(claim_id)
    if not (monte_carlo_se >= 0 and math.isfinite(monte_carlo_se)):
        raise ValueError(f"monte_carlo_se must be a finite distance >= 0; got {monte_carlo_se}")
    band = MONTE_CARLO_Z * monte_carlo_se
    reason = (f"borderline: an end of the interval lies within the random draws' Monte Carlo error "
              f"({MONTE_CARLO_Z:g} x {monte_carlo_se:.2g}) of {{edge}}; more draws would settle it"
              if band > spec.borderline else None)
    found = claim_verdict(estimate, low, high, n, threshold=spec.threshold, direction=spec.direction,  # type: ignore[arg-type]
                          margin=spec.margin, min_n=spec.min_units, degenerate=degenerate,
                          borderline=max(spec.borderline, band), borderline_reason=reason)
    # a directional verdict whose whole interval lies nearer the threshold than the smallest effect that
    # matters says so: the direction is shown, but not a difference the plan counts as one
    if (spec.margin is None and found.verdict in (SUPPORTED, CONTRADICTED)
            and abs(low - spec.threshold) < spec.minimal_effect and abs(high - spec.threshold) < spec.minimal_effect):
        return ClaimVerdict(found.verdict, f"{found.reason}; negligible: smaller than the smallest effect that matters, "
                                           f"{spec.minimal_effect:g}")
    if spec.margin is None and found.verdict == NOT_RESOLVED and _inside_effect(spec, low, high):
        # open on its direction, but the interval already rules out an effect as large as the one that matters
        return ClaimVerdict(found.verdict, f"{found.reason}; the interval already excludes the smallest effect that "
                                           f"matters, {spec.minimal_effect:g}, either way: any effect left is smaller")
    return found


def _inside_effect(spec: Claim, low: float, high: float) -> bool:
    """Both ends of a finite interval lie nearer the threshold than the claim's smallest effect that matters."""
    return (math.isfinite(low) and math.isfinite(high) and abs(low - spec.threshold) < spec.minimal_effect
            and abs(high - spec.threshold) < spec.minimal_effect)


def family_p(rows: pd.DataFrame) -> np.ndarray:
    """The p-values Holm's correction reads over a family of claim rows: each row's largest p within
    its random draws' Monte Carlo band (column ``p_family``, from
    :func:`nlgjudge.stats.multiplicity.p_within_error`), so a row the correction keeps stays kept
    whatever the draws (Holm rejects no fewer rows when a p is smaller); the rows' own ``p_value``
    where the frame has no Monte Carlo band (no draws, or a frame from before the band was read)."""
    column = "p_family" if "p_family" in rows.columns else "p_value"
    return rows[column].to_numpy(dtype=float)


def contexts_needed_for(claim_id: str, sd: float, alpha: float = 0.05) -> int | None:
    """How many units a paired t test needs to tell the registered minimal effect of interest from
    the threshold with 80% power at per-unit spread ``sd`` (None: out of reach). Set by the plan,
    not by the observed effect: post-hoc power at the observed effect adds nothing to the interval.
    ``alpha``: the test's level (a row read in a family of k: 0.05 / k, Holm's strictest step)."""
    spec = claim(claim_id)
    if spec.margin is not None:  # an equivalence claim: two one-sided tests, power split between the band's ends
        return equivalence_units_needed(sd, spec.margin, alpha=alpha)
    return contexts_needed(spec.effect_target(), sd, threshold=spec.threshold, alpha=alpha)


def units_needed_for(claim_id: str, low: float, high: float, n: int, alpha: float = 0.05) -> float:
    """Units that would tell the registered minimal effect of interest of ``claim_id`` from its threshold
    with 80% power, reading the per-unit spread back from this interval (its standard error scaled as
    1/sqrt(n), :func:`~nlgjudge.stats.claims.units_needed_from_interval`). NaN when out of reach or
    when there is no interval. Never at the observed effect: post-hoc power adds nothing to the interval.
    ``alpha``: the test's level (a flag in a family of k: 0.05 / k, Holm's strictest step)."""
    if not (math.isfinite(low) and math.isfinite(high)) or n < 2:
        return float("nan")
    spec = claim(claim_id)
    if spec.margin is None and _inside_effect(spec, low, high):
        # the run already excludes an effect as large as the one that matters: its own size is enough
        # (needed_cell then says "design size met", and that any effect left is smaller)
        return float(n)
    if spec.margin is not None:  # an equivalence claim: the interval's SE as a per-unit spread, two one-sided tests
        se = (high - low) / (2.0 * float(norm.ppf(0.975)))
        needed = equivalence_units_needed(se * math.sqrt(n), spec.margin, alpha=alpha)
    else:
        needed = units_needed_from_interval(spec.effect_target(), low, high, n, threshold=spec.threshold, alpha=alpha)
    return float("nan") if needed is None else float(needed)


#: What "contexts needed" says of a row whose design size the run already has: a true effect as large
#: as the smallest that matters would have been detected with 80% power, so what is left open is smaller.
ALREADY_ENOUGH = "already enough for the smallest effect that matters: what is left open is smaller"


def already_enough(needed: float | None, n: int) -> bool:
    """True when a not-resolved row already has the units its claim's design size asks for."""
    return needed is not None and math.isfinite(float(needed)) and float(needed) <= n


def needed_cell(needed: float | None, n: int, equivalence: bool = False) -> str:
    """A "contexts needed" cell: the design size, "out of reach", or, when the run already has at least
    that many units, "design size met" with the size and the run's units beside it. ``equivalence``: the
    claim is a band (two one-sided tests), whose design size holds for a value at the band's centre;
    an interval left open at that size reaches past the band's edge, which more units settle only slowly."""
    if needed is None or not math.isfinite(float(needed)):
        return "out of reach"
    if float(needed) <= n and equivalence:
        return (f"design size met ({int(needed)} would do for a value at the band's centre; this run has {n}): still "
                "open because the estimate lies near the band's edge, where more units settle it only slowly")
    if float(needed) <= n:
        return (f"design size met ({int(needed)} would do; this run has {n}): still open, but an effect as large as the "
                "smallest that matters would likely have been found, so any effect left is smaller")
    if equivalence:  # the design size of two one-sided tests holds for a value at the band's centre only
        return f"{int(needed)} for a value at the band's centre; more near an edge, none outside it"
    return str(int(needed))


#: How :func:`flag_needed_cell` counts, in words for the chapters (beside the contexts-needed method).
FLAG_NEEDED_METHOD = (
    "a flag (resolved on its own interval, not after Holm's correction over its k rows) is counted the same way "
    "at alpha 0.05 / k, Holm's strictest step, so that the row would survive the correction wherever it stands"
)


def flag_needed_cell(claim_id: str, flag: str, per_unit: Mapping[str, float] | None, family_size: int, n_now: int) -> str:
    """A flag's "contexts needed" cell (``flag``: its words, resolved on its own interval but not
    after Holm's correction): the units at which a paired t test tells the registered minimal effect
    from the threshold with 80% power at alpha 0.05 / ``family_size`` (Holm's strictest step, so the
    row survives the correction whatever its place), at the spread of ``per_unit`` (unit -> value);
    the design size, never the observed effect. Without two values (or no mapping), the flag's words alone."""
    values = [float(v) for v in per_unit.values()] if isinstance(per_unit, Mapping) else []
    if len(values) < 2 or family_size < 1:
        return flag
    needed = contexts_needed_for(claim_id, statistics.stdev(values), alpha=0.05 / family_size)
    at = f" at alpha 0.05 / {family_size}" if family_size > 1 else ""
    return f"{needed_cell(needed, n_now)}{at} ({flag})"


# --------------------------------------------------------------------------------------------
# The register page of the book

#: The register page's title (its first line), for the pages that link to it.
PAGE_TITLE = "The analysis plan"
_KIND_WORDS = {
    "directional": "directional", "equivalence": "equivalence", "universal": "every row",
    "existence": "some row", "ordering": "every pair",
}


_REGISTER_COLUMNS = ("claim", "estimand and unit", "kind and test", "threshold and effect of interest", "family",
                     "the paper's value")


def _html(text: object) -> str:
    import html

    return html.escape(" ".join(str(text).split()), quote=False)  # quotes are text; attributes use "..."


def amended_note(chapter: str, reg: Register | None = None, datasets: Sequence[str] = ()) -> str:
    """The answer box's line on the plan's amendments: how many of ``chapter``'s claims had their rule
    set or changed after their data were read (the register page gives each amendment and the verdicts
    it moved), the judge screen's, which every chapter with a pairwise judge applies, and the candidate
    set of any of ``datasets`` (those the chapter read) chosen after the data (:data:`CHOICE_AFTER_DATA`)."""
    from nlgjudge.reader_names import DATASET_NAMES

    reg = reg or register()
    claims = reg.of_chapter(chapter)
    late = [spec for spec in claims if spec.amended_after_data]
    written = [spec for spec in claims if reg.written_after_data(spec)]
    screen = any("after the data" in str(entry) for entry in reg.screen.get("history", []))  # type: ignore[union-attr]
    first = (f"Written after the results were seen: this chapter's claims, on {reg.plan_written}, after its first "
             f"release of {reg.first_release[chapter]} had been read, so every verdict here is a lead that new data "
             "must confirm, marked in its row. ") if written else ""
    parts = [f"the rule for {len(late)} of this chapter's {len(claims)} claims"
             + ("" if written else ", so treat those verdicts as leads that new data must confirm") if late else "",
             "the pass mark of the judge screen, which every chapter uses" if screen else "",
             *[f"{DATASET_NAMES.get(d, d)}'s candidate set, so its rows are leads too" for d in dict.fromkeys(datasets)
               if CHOICE_AFTER_DATA.get(d) in reg.choices]]
    kept = [p for p in parts if p]
    said = "; and ".join(["; ".join(kept[:-1]), kept[-1]] if len(kept) > 2 else kept)
    if not said:
        return first + ("No rule was changed later" if first else "No rule of this chapter's claims was changed after its results were seen")
    return first + ("Changed later still: " if first else "Changed after the results were seen: ") + said


#: Beside the verdict of a claim whose rule was set or changed after its data were read (the glossary's "lead").
LEAD_WORDS = " (a lead: rule changed after the data)"
#: Beside the verdict of a claim written after its chapter's first release had been read (the plan is
#: younger than seven chapters' first releases): a lead too, though no rule of it changed since.
WRITTEN_LEAD_WORDS = " (a lead: claim written after the data)"


#: The datasets whose candidate set is a shared choice made after the data were read ([choices] in the register).
CHOICE_AFTER_DATA = {"webnlg": "webnlg_candidates"}
#: Beside a verdict read on such a dataset: its row is a lead whatever its claim's rule.
CHOICE_LEAD_WORDS = " (a lead: its candidate set chosen after the data)"


def choice_lead_words(dataset: str) -> str:
    """:data:`CHOICE_LEAD_WORDS` for a row read on a dataset whose candidate set the register declares as
    chosen after the data (:data:`CHOICE_AFTER_DATA`), "" for any other."""
    return CHOICE_LEAD_WORDS if CHOICE_AFTER_DATA.get(str(dataset)) in register().choices else ""


def lead_note(claim_id: str | None, dataset: str = "") -> str:
    """The lead qualifiers of one row merged into one bracket: :data:`LEAD_WORDS` for a claim amended after
    its data, :data:`CHOICE_LEAD_WORDS` for a dataset whose candidate set was chosen after the data, both as
    " (a lead: rule changed and its candidate set chosen after the data)"; "" for neither."""
    words = lead_words(str(claim_id)) if claim_id else ""
    choice = bool(choice_lead_words(dataset))
    if words and choice:
        what = "rule changed" if words == LEAD_WORDS else "claim written"
        return f" (a lead: {what} and its candidate set chosen after the data)"
    return words or (CHOICE_LEAD_WORDS if choice else "")


def lead_words(claim_id: str) -> str:
    """What a chapter puts beside a claim's verdict, so that the row itself says it is a lead, not a
    finding: :data:`LEAD_WORDS` for a claim amended after its data were read, :data:`WRITTEN_LEAD_WORDS`
    for one written after its chapter's first release had been read, "" for any other."""
    spec = claim(claim_id)
    if spec.amended_after_data:
        return LEAD_WORDS
    return WRITTEN_LEAD_WORDS if register().written_after_data(spec) else ""


def _effect_text(spec: Claim) -> str:
    band = f"within {spec.threshold:g} ± {spec.margin:g}" if spec.margin is not None else f"{spec.direction} {spec.threshold:g}"
    return f"{band}; minimal effect {spec.minimal_effect:g}: {spec.effect_reason}"


#: The pages outside the chapters that the register may name in ``[no_claims]``, with their titles.
STATIC_PAGE_TITLES = {"gpu": "Running the chapters on a GPU"}


#: The verdicts at several resample seeds (``python -m nlgjudge.seed_check`` writes it), relative to the repository.
SEED_TABLE = Path("data/seeds/verdicts.csv")


def seed_check_lines(titles: Mapping[str, str], root: Path | None = None) -> list[str]:
    """The register page's paragraph on :data:`SEED_TABLE` (none when the check was never run): whether the
    verdicts of the chapters that resample move with their resample seed. ``titles``: chapter name -> title."""
    import pandas as pd

    path = (root or REPO_ROOT) / SEED_TABLE
    if not path.is_file():
        return []
    table = pd.read_csv(path)
    same = table["same"].astype(bool)
    seeds = [c.split()[-1] for c in table.columns if c.startswith("seed ")]
    per_chapter = [f"{titles.get(chapter, chapter)}, {int(same[part.index].sum())} of {len(part)}"
                   for chapter, part in table.groupby("chapter", sort=False)]
    moved = table[~same]
    said = (f"every one gives the same verdict words at all {len(seeds)} seeds" if moved.empty else
            f"{len(moved)} give other verdict words at some seed")
    return [f"**Do the verdicts move with the random draws?** Each chapter that resamples was run again from the "
            f"released outputs with its resample seed set to {', '.join(seeds[1:-1])} and {seeds[-1]} as well as "
            f"{seeds[0]} (the bootstraps and random draws change; the contexts stay the same). Of the {len(table)} "
            f"values that carry the chapters' verdicts, {said}; the same at every seed, by chapter: "
            f"{'; '.join(per_chapter)}. What the check leaves out: a value that carries no verdict word (a number), and "
            "the subsets chapter's per-cell rows, which enter only through each finding's every-cell verdict; a cell's own "
            "verdict may move with the draws, and the chapter marks such a cell borderline. "
            "`python -m nlgjudge.seed_check` runs the check again.", ""]


def section_anchor(heading: str) -> str:
    """The id the book's HTML gives a section with this heading (docutils' rule: Sphinx makes the ids)."""
    from docutils.nodes import make_id

    return make_id(heading)


def number_word(n: int) -> str:
    return ("no", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten")[n] if 0 <= n <= 10 else str(n)


def when_written_lines(titles: Mapping[str, str], reg: Register | None = None) -> list[str]:
    """The register page's paragraph on when the plan was written, from [plan]: which chapters' first
    releases it follows (their claims are leads, row by row) and which chapters' claims came before their data."""
    reg = reg or register()
    days: dict[str, list[str]] = {}
    for chapter, day in sorted(reg.first_release.items(), key=lambda item: item[1]):
        if chapter in titles and reg.of_chapter(chapter):  # the chapters that read verdicts
            days.setdefault(day, []).append(titles[chapter])
    before = {day: names for day, names in days.items() if day < reg.plan_written}
    after = {day: names for day, names in days.items() if day >= reg.plan_written}
    def listed(groups: Mapping[str, list[str]]) -> str:
        return "; ".join(f"{', '.join(names)} on {day}" for day, names in groups.items())
    n_before = sum(len(names) for names in before.values())
    text = (f"**When this plan was written.** It was first written on {reg.plan_written}, after the first releases of "
            f"{number_word(n_before)} chapter{'' if n_before == 1 else 's'} had been read: {listed(before)}. Their claims were written from the "
            "papers' claims, but by authors who had seen those results, so every verdict of those chapters is a lead, "
            "a disclosed exploratory reading that fresh data must confirm, and each row says so: *a lead: claim "
            "written after the data*. A rule changed after that date says *a lead: rule changed after the data* "
            "instead, and its history below gives the date and what it moved.")
    if after:
        text += f" The claims of the chapters released later ({listed(after)}) were written before their judgments were made."
    return [text]


def page_markdown(titles: Mapping[str, str], reg: Register | None = None) -> str:
    """The register as the book's page: one section per chapter of ``titles`` (name -> title, in the
    book's order), one table row per claim."""
    reg = reg or register()
    before = [c for c, day in reg.first_release.items() if day < reg.plan_written and reg.of_chapter(c)]
    lines = [
        f"# {PAGE_TITLE}",
        "",
        ":::{admonition} The answer",
        ":class: tip",
        f"**Bottom line.** Every verdict in this book answers a claim written down here. The plan came after "
        f"the first results of {number_word(len(before))} chapters, so their verdicts are leads, exploratory, "
        "marked row by row; a rule changed later is marked amended, with its date and former wording.",
        "",
        "**Question.** What does each chapter test, and by which rule?",
        "",
        "**How to read it.** Each row is one claim: what the paper says and where, what is estimated and over",
        "which units, the kind of claim and its test, the band or direction with the smallest effect of interest,",
        "the family in which Holm's correction is applied, and the paper's own value. The chapters take every",
        "verdict's rule from this list, and no chapter may state a verdict on a claim that is not here.",
        ":::",
        "",
        "The kinds of claim, each with one test (the {term}`claim rule`): **directional**, a paired interval",
        "on one side of the threshold; **equivalence**, two one-sided tests, the interval inside the band;",
        "**every row**, each row of the family on the claim's side, none against it after Holm's correction;",
        "**some row**, at least one row on the claim's side after Holm's correction; **every pair**, each pair",
        "of an ordering resolved by its own paired interval. *Contexts needed* in the chapters is computed at",
        "the minimal effect below, never at the observed effect.",
        "",
        *when_written_lines(titles, reg),
        "",
    ]
    if reg.screen:
        screen = reg.screen
        amended = " ".join(f"*Amended {_html(str(entry).split(':', 1)[0])}:* {_html(str(entry).split(':', 1)[1].strip())}."
                           for entry in screen["history"])  # type: ignore[union-attr]
        lines += [
            "**The judge screen**, the same for every judge and chapter, its pass mark chance, a level no judge's "
            "agreement sets, adopted after the data were read (the {term}`judge screen`; its history below says "
            "what was changed, and the verdict it moved): "
            f"{_html(str(screen['words']))}. Unit: {_html(str(screen['unit']))}, on at least {screen['min_units']} "
            f"contexts. Minimum: {_html(str(screen['minimum']))}. Otherwise {_html(str(screen['otherwise']))}. {amended}",
            "",
        ]
    lines += seed_check_lines(titles)  # the verdicts at three resample seeds, where the check was run
    if reg.choices:
        lines += ["**Choices every chapter shares**, declared here as the claims are:", ""]
        lines += [f"- {_html(text)}." for text in reg.choices.values()]
        lines += [""]
    if reg.secondary:
        lines += ["**Secondary readings**, declared here as the claims are, each drawing no claim (a reading of several rows is corrected over them):", ""]
        lines += [f"- {_html(text)}." for text in reg.secondary.values()]
        lines += [""]
    # a page outside the chapters that makes no claim (the GPU page) is listed after them, by its title
    pages = {**titles, **{page: title for page, title in STATIC_PAGE_TITLES.items() if page in reg.no_claims}}
    for chapter, title in pages.items():
        lines += [f"## {title}", ""]
        if chapter in reg.no_claims:
            lines += [f"No claim: {reg.no_claims[chapter]}. Its page says so in plain words. See {{doc}}`{chapter}`.", ""]
            continue
        claims = reg.of_chapter(chapter)
        if not claims:
            lines += ["No claim registered.", ""]
            continue
        # An HTML table whose cells carry their column's name: a narrow window shows each claim as a
        # stack of labelled fields (outputs.css) instead of six columns broken mid-word.
        late = sum(spec.amended_after_data for spec in claims)
        lines += [f"Verdicts read in {{doc}}`{chapter}`. Rules amended after their data were read: {late} of its "
                  f"{len(claims)} claims.", "", '<table class="nlg-register">',
                  "<thead><tr>" + "".join(f"<th>{_html(label)}</th>" for label in _REGISTER_COLUMNS) + "</tr></thead>",
                  "<tbody>"]
        for spec in claims:
            paper_value = spec.reported if spec.reported_how == "none" else f"{spec.reported} ({spec.reported_how})"
            where = f'<a href="{chapter}.html#{section_anchor(spec.section)}">{_html(spec.words)}</a>'  # where it is read
            label = "Amended after its data were read" if spec.amended_after_data else "Declared late, before its data"
            amended = f"<br><i>{label}:</i> {_html(spec.history)}" if spec.history else ""
            cells = (
                f"<b>{where}</b>; {_html(spec.paper)}{amended}",
                _html(f"{spec.estimand}; unit: {spec.unit}; at least {spec.min_units}; comparator: {spec.comparator}"),
                _html(f"{_KIND_WORDS[spec.kind]}: {spec.test}"),
                _html(_effect_text(spec)),
                _html(reg.families[spec.family]),
                _html(paper_value),
            )
            lines.append("<tr>" + "".join(f'<td data-label="{_html(label).replace(chr(34), "&quot;")}">{cell}</td>'
                                          for label, cell in zip(_REGISTER_COLUMNS, cells, strict=True)) + "</tr>")
        lines += ["</tbody>", "</table>", ""]
    return "\n".join(lines).rstrip() + "\n"

