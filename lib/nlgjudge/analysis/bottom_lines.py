"""Each chapter's bottom line: one or two plain sentences that open its answer box.

A bottom line is generated from the chapter's computed verdicts (never typed), so it changes with a
rerun; it has at most :data:`MAX_WORDS` words and no brackets, parentheses or code names, so that a
student understands it without reading further. The verdict words of the claim rule are translated
into plain words here, one meaning each: "supported" reads "the data show it", "contradicted" (for a
claim about every row) "fails for at least one", "not resolved" "these data cannot tell", "not
tested" "could not be tested here". :func:`plain` checks every line it returns.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence

from nlgjudge.stats.claims import CONTRADICTED, NOT_RESOLVED, NOT_TESTED, SUPPORTED

#: The longest bottom line, in words.
MAX_WORDS = 45
#: The answer box prints each line after this label, and a reader counts it with the line.
LABEL = "Bottom line."


def words_shown(text: str) -> int:
    """The words a reader sees: the line with the box's :data:`LABEL` before it."""
    return len(f"{LABEL} {text}".split())
_NOT_PLAIN = re.compile(r"[()\[\]{}<>`=|\\]")
_CODE_NAME = re.compile(r"\b[a-z]+_[a-z_]+\b")


def plain(text: str) -> str:
    """``text`` when it is a plain bottom line: at most :data:`MAX_WORDS` words, no brackets,
    parentheses or code names; a :class:`ValueError` naming what is wrong otherwise."""
    words = text.split()
    if not words:
        raise ValueError("a bottom line needs words")
    if words_shown(text) > MAX_WORDS:
        raise ValueError(f"a bottom line has at most {MAX_WORDS} words with its label {LABEL!r}; this one has "
                         f"{words_shown(text)}: {text!r}")
    found = _NOT_PLAIN.search(text) or _CODE_NAME.search(text)
    if found:
        raise ValueError(f"a bottom line has no brackets or code names; found {found.group(0)!r} in {text!r}")
    return text


def name(text: str) -> str:
    """A name as a bottom line can carry it: brackets and underscores become spaces, and at most four
    words are kept (a user's model path may be long or hold them; the line must stay plain)."""
    words = re.sub(r"[()\[\]{}<>`=|\\_]", " ", str(text)).split()
    return " ".join(words[:4]) or "the judge"


def _fit(*sentences: str) -> str:
    """The sentences joined, dropping trailing ones (the least important) until the line has at
    most :data:`MAX_WORDS` words; then :func:`plain`."""
    kept = list(sentences)
    while len(kept) > 1 and words_shown(" ".join(kept)) > MAX_WORDS:
        kept.pop()
    return plain(" ".join(kept))


def _count(verdicts: Sequence[str]) -> dict[str, int]:
    return {v: sum(1 for x in verdicts if x == v) for v in (SUPPORTED, CONTRADICTED, NOT_RESOLVED, NOT_TESTED)}


def _of(k: int, n: int) -> str:
    return f"{k} of {n}"


def _rest(counts: Mapping[str, int], *, against: str, untested_why: str = "") -> str:
    """"worse in 1, these data cannot tell in 3 and 2 could not be tested" from the counts; ``untested_why``
    the reason in words, where one reason holds for every row not tested."""
    parts = []
    if counts[CONTRADICTED]:
        parts.append(f"{against} in {counts[CONTRADICTED]}")
    if counts[NOT_RESOLVED]:
        parts.append(f"these data cannot tell in {counts[NOT_RESOLVED]}")
    if counts[NOT_TESTED]:
        parts.append(f"{counts[NOT_TESTED]} could not be tested" + (f", {untested_why}" if untested_why else ""))
    if not parts:
        return ""
    return "; " + (", ".join(parts[:-1]) + " and " + parts[-1] if len(parts) > 1 else parts[0])


def datasets_line(n_datasets: int, n_candidates: int, n_scored: int) -> str:
    """``n_scored``: how many of the datasets carry people's scores of their candidates."""
    scored = "all of them" if n_scored == n_datasets else f"{_of(n_scored, n_datasets)}"
    return _fit(f"{n_datasets} public datasets, {n_candidates:,} candidate texts in all; {scored} carry people's scores.",
                "This chapter only describes them and tests no claim; every later chapter reads its judges against these scores.")


def worked_line(judge: str, n_summaries: int, rho: float, typical: tuple[float, int] | None = None) -> str:
    """``typical``: the judge's mean correlation over the articles whose comparisons are released, and how
    many, said beside this article's so that one draw is not read as the judge's level."""
    if not math.isfinite(rho):
        said = "gives no correlation with people's ranking"
    else:
        said = f"ranks its {n_summaries} summaries with a correlation of {rho:+.2f} to people's ranking"
    if typical is not None and math.isfinite(typical[0]) and typical[1] > 1:
        line = (f"On one article, {name(judge)} {said}; over {typical[1]} articles it averages {typical[0]:+.2f}. "
                "One article is one draw, so this page tests nothing; the next chapters run the same steps on every article.")
        if words_shown(line) <= MAX_WORDS:
            return plain(line)
    return plain(f"On one article, {name(judge)} {said}. One article is one draw, so this page tests nothing; "
                 "the next chapters run the same steps on every article.")


def comparative_line(judge: str, verdicts: Sequence[str], lead: bool = False) -> str:
    """``lead``: the claim's rule was chosen after its data were read, said in the line (a lead, not a finding)."""
    n = len(verdicts)
    if not n:
        return plain(f"This run has no comparison of {name(judge)} with its own prompt scoring, so the paper's claim is not tested here.")
    counts = _count(verdicts)
    rule = ", by a rule chosen after the data" if lead else ""
    return _fit(f"Comparing two candidates beat the same model's sampled one-to-ten scores for {name(judge)} in "
                f"{_of(counts[SUPPORTED], n)} benchmark aspects{rule}{_rest(counts, against='scoring was better')}.",
                "The paper found comparing far better with larger judges.")


def bias_line(judge: str, mean_p_a: float, verdicts: Sequence[str], sets: tuple[int, int, int] | None = None) -> str:
    """``sets``: comparison sets whose P(A) interval lies above one half, below it, and in all, after
    Holm's correction over the sets (a description): said instead of the mean, which hides sets that
    lean the other way."""
    lean = (("one position, on average the first candidate" if mean_p_a > 0.5 else "one position, on average the second candidate")
            if math.isfinite(mean_p_a) else "no position")
    n = len(verdicts)
    counts = _count(verdicts)
    if n and counts[NOT_RESOLVED] == n:
        fix = f"whether removing that lean brings it closer to people, these data cannot tell on any of the {n} datasets"
    else:
        fix = (f"removing that lean raised agreement with people in {_of(counts[SUPPORTED], n)} datasets"
               f"{_rest(counts, against='it lowered agreement')}") if n else "no dataset tests the fix"
    leans = [f"leans towards {lean}"]
    if sets is not None:  # a set leans when its interval excludes one half after Holm's correction (a description,
        # so said without a verdict's words such as "clearly")
        toward_a, toward_b, n_sets = sets
        leans = [f"leans towards the candidate shown first in {toward_a} of its {n_sets} prompt-and-aspect settings"
                 + (f", and towards the one shown second in {toward_b}" if toward_b else ""),
                 f"leans towards the first candidate in {toward_a} of {n_sets} prompt-and-aspect settings"
                 + (f" and the second in {toward_b}" if toward_b else ""), *leans]
    for said in leans:  # the fullest that fits
        if words_shown(f"{name(judge)} {said}; {fix}.") <= MAX_WORDS:
            return plain(f"{name(judge)} {said}; {fix}.")
    return plain(f"{name(judge)} {leans[-1]}; {fix}.")


#: The subsets findings a bottom line reads: how a count is said, and how "too small to matter" is said.
_SUBSET_WORDS = {
    "no_repeat_minus_random": ("asking each pair once beats random pairs", "asking each pair once, not at random,"),
    "debias_gain_small_budgets": ("correcting for position helps with few comparisons",
                                  "correcting for position with few comparisons"),
}


def _where(names: Sequence[str], n: int) -> str:
    """"on SummEval" where one dataset is meant, "on 2 of 3 datasets" otherwise."""
    return f"on {name(names[0])}" if len(names) == 1 else f"on {_of(len(names), n)} datasets"


def _symmetric_words(symmetric: Mapping[str, object] | None) -> str:
    """Finding 2 in words, where its datasets go against the paper's cost of asking half the pairs in
    both orders at the same number of comparisons (``better``/``worse``: the datasets whose interval lies
    wholly beyond the paper's band on that side, by name; ``n``: datasets)."""
    if not symmetric:
        return ""
    better, worse, n = list(symmetric.get("better", ())), list(symmetric.get("worse", ())), int(symmetric["n"])  # type: ignore[call-overload]
    parts = ([f"{_where(better, n)}, half the pairs in both orders ranked better, unlike the paper"] if better else []) + (
        [f"{_where(worse, n)}, half the pairs in both orders ranked worse than the paper found"] if worse else [])
    return "; ".join(parts)


def subsets_line(judge: str, verdicts: Mapping[str, Sequence[str]], small: Mapping[str, float] | None = None,
                 symmetric: Mapping[str, object] | None = None) -> str:
    """``verdicts``: per finding's comparison key, its datasets' verdicts after Holm. ``small``: per
    key, the registered minimal effect where every dataset's interval lies within it either way: the
    line then says the two ways rank alike instead of counting directions that do not matter.
    ``symmetric``: finding 2's datasets against the paper (:func:`_symmetric_words`). The smallest
    budgets' debiasing, where it hurts, is always said: it goes against the paper's finding 3."""
    sizes = small or {}

    def first_finding(at_cost: bool) -> str:
        lead = "at equal cost, " if at_cost else ""
        if "no_repeat_minus_random" in sizes:
            return f"{lead}asking pairs once or at random ranks alike"
        found = list(verdicts.get("no_repeat_minus_random", ()))
        if not found:
            return f"{lead}no dataset tests whether asking each pair once beats random pairs"
        counts, n = _count(found), len(found)
        if counts[SUPPORTED] == 0:
            return (f"{lead}no dataset of {n} shows that asking each pair once beats random pairs"
                    + (f", and the reverse holds on {counts[CONTRADICTED]}" if counts[CONTRADICTED] else ""))
        where = f"all {n}" if counts[SUPPORTED] == n else _of(counts[SUPPORTED], n)
        return (f"{lead}asking each pair once beats random pairs on {where} datasets"
                + (f" and loses on {counts[CONTRADICTED]}" if counts[CONTRADICTED] else ""))

    def debiasing() -> str:
        found = list(verdicts.get("debias_gain_small_budgets", ()))
        tiny = _count(list(verdicts.get("debias_gain_tiny_budgets", ())))
        hurts = f"at the smallest budgets, hurt on {tiny[CONTRADICTED]}" if tiny[CONTRADICTED] else ""
        if "debias_gain_small_budgets" in sizes:
            said = f"Correcting for position with few comparisons moved agreement by under {sizes['debias_gain_small_budgets']:g} point"
        elif not found:
            said = "No dataset tests whether correcting for position helps with few comparisons"
        else:
            counts, n = _count(found), len(found)
            said = (f"Correcting for position helped on {_of(counts[SUPPORTED], n)} datasets" if counts[SUPPORTED] else
                    f"Correcting for position helped on none of the {n} datasets")
        return f"{said} and, {hurts}." if hurts else f"{said}."

    second = _symmetric_words(symmetric)
    third = debiasing()
    # the fullest that fits: "at equal cost" gives way first, then finding 2 against the paper; the smallest
    # budgets' harm (against the paper's finding 3) is kept longest
    for at_cost, with_second in ((True, True), (False, True), (True, False), (False, False)):
        first = first_finding(at_cost)
        opening = first[0].upper() + first[1:] + (f"; {second}." if second and with_second else ".")
        if words_shown(f"{opening} {third}") <= MAX_WORDS:
            return plain(f"{opening} {third}")
    return _fit(third, opening)


def runtime_line(judge: str, verdicts: Sequence[str], margin: float, contexts: tuple[int, int] | None = None) -> str:
    """``contexts``: the fewest and most contexts a row's change rests on, said where no row is resolved
    (the design, not the runtimes, is then what the line reports)."""
    n = len(verdicts)
    if not n:
        return plain(f"No benchmark aspect has both runtimes' outputs for {name(judge)}, so this run cannot compare them.")
    counts = _count(verdicts)
    change = f"changes the main result by {margin:g} points or more"

    def line(running: str) -> str:
        if counts[NOT_RESOLVED] == n:
            if contexts:
                few = f"{contexts[0]}" if contexts[0] == contexts[1] else f"{contexts[0]} to {contexts[1]}"
                return (f"These data cannot tell whether {running} {change}: "
                        f"{few} contexts per dataset are too few in all {n} benchmark aspects.")
            return (f"These data cannot tell whether {running} {change}: "
                    f"in all {n} benchmark aspects the interval of the change is too wide.")
        where = f"all {n}" if counts[SUPPORTED] == n else _of(counts[SUPPORTED], n)
        rest = "" if counts[SUPPORTED] == n else _rest(counts, against="it moves it more")
        return (f"{running[0].upper() + running[1:]} moves the main result by less than {margin:g} points "
                f"in {where} benchmark aspects{rest}.")

    # the runtimes glossed where the line has room: a student need not know either program
    glossed = line(f"running {name(judge)} with torch rather than llama.cpp, two programs that run the same model,")
    return plain(glossed if words_shown(glossed) <= MAX_WORDS else line(f"running {name(judge)} under torch rather than llama.cpp"))


_KAPPA_WORDS = {
    SUPPORTED: "agrees with ROUGE no better than chance, as the paper found",
    CONTRADICTED: "agrees with ROUGE more, or less, than chance would, unlike the paper",
    NOT_RESOLVED: "agrees with ROUGE either about as often as chance would or not; these data cannot tell which",
    NOT_TESTED: "could not be compared with ROUGE here",
}
_REFERENCE_WORDS = {
    SUPPORTED: "It rates at least one system's summary above the human reference",
    CONTRADICTED: "It rates the human reference above every system",
    NOT_RESOLVED: "Whether it ever rates a system above the human reference, these data cannot tell",
    NOT_TESTED: "Its view of the human reference could not be tested",
}


def _picks_words(with_people: bool | float) -> str:
    """The judge's single picks against people's: a kappa (a float) is said as a number beside chance's 0,
    with no test's words (no claim is registered on it); a bool keeps the reading of its interval."""
    if isinstance(with_people, float):
        return f"Its picks match people's at kappa {with_people:.2f}; chance is 0."
    return ("Its picks agree with people's more often than chance." if with_people
            else "Its picks are not shown to match people's beyond chance.")


def elo_line(judge: str, n_articles: int, kappa_verdict: str, reference_verdict: str, *, kappa_below_zero: bool = False,
             above_reference: str | None = None, above_point: str | None = None, with_people: bool | float | None = None,
             kappa_lead: bool = False) -> str:
    """``kappa_below_zero``: the kappa's whole interval lies below 0 (the plan's secondary reading, a
    description); ``above_reference``: "k of n" contestants above the reference after Holm's correction;
    ``above_point``: "m of n" above it by point estimate (said first, with the k "clearly"); ``with_people``:
    whether the judge's kappa with people's choices lies wholly above 0 (a description), None: not known;
    ``kappa_lead``: the kappa claim's test was chosen after its data were read, so its verdict is a lead,
    said so in the line (beside the secondary "slightly less often")."""
    people = f" {_picks_words(with_people)}" if with_people is not None else ""
    # the fullest that fits: the count by point estimate gives way first, then the picks against people's
    for point, picks in ((above_point, people), (None, people), (above_point, ""), (None, "")):
        line = _elo_line(judge, n_articles, kappa_verdict, reference_verdict, kappa_below_zero, above_reference, point,
                         kappa_lead) + picks
        if words_shown(line) <= MAX_WORDS:
            return plain(line)
    return plain(line)


def _elo_line(judge: str, n_articles: int, kappa_verdict: str, reference_verdict: str, kappa_below_zero: bool,
              above_reference: str | None, above_point: str | None, kappa_lead: bool = False) -> str:
    kappa = _KAPPA_WORDS.get(kappa_verdict, _KAPPA_WORDS[NOT_TESTED])
    if kappa_verdict == SUPPORTED and kappa_lead:  # the side of chance, where the interval shows it, said first:
        # the plan's first test (kappa against 0, declared before the data) reads that side against the paper
        kappa = ("agrees with ROUGE slightly less often than chance: unlike the paper by the test declared first, "
                 "like it only by a band chosen after the data" if kappa_below_zero else
                 "agrees with ROUGE about as often as chance, by a rule chosen after the data")
    elif kappa_verdict == SUPPORTED and kappa_below_zero:
        kappa = "agrees with ROUGE about as often as chance would, as the paper found, if slightly less often"
    reference = _REFERENCE_WORDS.get(reference_verdict, _REFERENCE_WORDS[NOT_TESTED])
    if reference_verdict == SUPPORTED and above_reference:
        reference = f"It rates {above_reference} systems' summaries clearly above the human reference"
        if above_point:
            clear, point = above_reference.split(" of ")[0], above_point.split(" of ")
            everyone = f"all {point[1]}" if point[0] == point[1] else above_point
            reference = (f"It rates {everyone} systems' summaries above the human reference by point estimate, "
                         + ("each of them clearly" if clear == point[0] else f"{clear} of them clearly"))
    return f"On {n_articles} articles, {name(judge)} {kappa}. {reference}."


_EVERY_WORDS = {
    SUPPORTED: "holds for every evaluator tested",
    CONTRADICTED: "fails for at least one evaluator",
    NOT_RESOLVED: "cannot be told from these data",
    NOT_TESTED: "could not be tested here",
}


def every_row_words(verdict: str, rows: str = "evaluator") -> str:
    """A claim about every row's verdict in plain words, said beside the verdict word so that
    "contradicted" reads "fails for at least one evaluator", never "the opposite holds"."""
    return {SUPPORTED: f"holds for every {rows} tested", CONTRADICTED: f"fails for at least one {rows}"}.get(
        verdict, _EVERY_WORDS.get(verdict, _EVERY_WORDS[NOT_TESTED]))


#: Whether evaluators score their own summaries higher than the other evaluators do, in plain words.
_OWN_WORDS = {
    SUPPORTED: "every evaluator tested scores its own summaries higher than the others do",
    CONTRADICTED: "at least one evaluator tested does not score its own summaries higher than the others do",
    NOT_RESOLVED: "these data cannot tell whether evaluators score their own summaries higher than the others do",
    NOT_TESTED: "whether evaluators score their own summaries higher could not be tested here",
}
_OWN_SHORT = {SUPPORTED: "shows it for every evaluator", CONTRADICTED: "fails to show it for at least one evaluator",
              NOT_RESOLVED: "leaves it open on these data", NOT_TESTED: "could not be read here"}


def narcissism_line(excess_verdict: str, selfpref_verdict: str, gamma_verdict: str | None = None,
                    excess_rows: tuple[int, int] | None = None, excess_lead: bool = False,
                    excess_first: str | None = None) -> str:
    """``gamma_verdict``: the same claim controlling for length, said first where given (the
    length-controlled reading is the stricter one). ``excess_rows``: the paper's measure's rows that hold
    and all its rows, said where the claim about every row is left open (so that "cannot tell" never
    reads as "no sign" when most rows hold). ``excess_lead``: the paper's measure's rule was changed
    after its data were read, so its verdict is a lead, said so in the line; ``excess_first``: its verdict by
    the rule declared first, said first where it differs (the amended rule's verdict then only beside it)."""
    def words(verdict: str) -> str:
        return _EVERY_WORDS.get(verdict, _EVERY_WORDS[NOT_TESTED])

    short = _OWN_SHORT.get(excess_verdict, _OWN_SHORT[NOT_TESTED])
    if excess_verdict == NOT_RESOLVED and excess_rows is not None and excess_rows[0]:
        held, rows = excess_rows
        short = f"shows it clearly in {held} of {rows} evaluator-dataset pairs"
    if excess_lead and excess_verdict in (SUPPORTED, CONTRADICTED):
        short = {SUPPORTED: "shows it", CONTRADICTED: "fails to show it for one evaluator"}[excess_verdict]
        short += " by a rule chosen after the data"
        if excess_first == NOT_RESOLVED and excess_verdict == SUPPORTED:
            short = "cannot tell by the rule declared first, and shows it only by a rule chosen after the data"
    own = (f"Once length is accounted for, {_OWN_WORDS.get(gamma_verdict, _OWN_WORDS[NOT_TESTED])}. "
           f"The paper's measure, ignoring length, {short}" if gamma_verdict is not None else
           _OWN_WORDS.get(excess_verdict, _OWN_WORDS[NOT_TESTED]).capitalize())
    # the chapter's own caveat, where the claim holds: a model's greedy summary is likely under it by construction
    built_in = ("Part of it is built in: models find their own text likely."
                if SUPPORTED in (gamma_verdict, excess_verdict) else "")
    return _fit(*[part for part in (f"{own}.", built_in, f"That a pairwise judge picks its own summary {words(selfpref_verdict)}.")
                  if part])


_PEOPLE_WORDS = {
    SUPPORTED: "its order agrees with people's",
    CONTRADICTED: "its order runs against people's",
    NOT_RESOLVED: "whether its order agrees with people's, these data cannot tell",
    NOT_TESTED: "too few systems to test its agreement with people",
}


def _system(text: str) -> str:
    return "the human reference" if str(text) == "reference" else name(text)


def rank_line(judge: str, top: str, bottom: str, n_resolved: int, n_adjacent: int, people_verdict: str,
              picks_with_people: bool | float | None = None) -> str:
    """``picks_with_people``: whether the judge's picks between two systems agree with people's more
    often than chance (a kappa interval wholly above 0, a description), or their kappa itself (a float, said as a
    number beside chance's 0), None: not known. Said where the
    order itself cannot be set against people's (too few systems), so the line never leaves the judge's
    agreement with people unsaid when the data hold it."""
    # "last by its estimates": the Elo chapter rates several systems clearly above the reference in another family
    order = (f"{name(judge)} puts {_system(top)} first and {_system(bottom)} last by its estimates, but the data settle only "
             f"{_of(n_resolved, n_adjacent)} neighbouring places; the order of the others stays open.")
    people = _PEOPLE_WORDS.get(people_verdict, _PEOPLE_WORDS[NOT_TESTED]).capitalize()
    if picks_with_people is not None and people_verdict not in (SUPPORTED, CONTRADICTED, NOT_RESOLVED):
        picks = (_picks_words(picks_with_people) if isinstance(picks_with_people, float) else
                 "Its picks between two summaries agree with people's more often than chance."
                 if picks_with_people else "Its picks are not shown to match people's beyond chance.")
        if words_shown(f"{order} {picks}") <= MAX_WORDS:
            return plain(f"{order} {picks}")
    return plain(f"{order} {people}.")


#: The gaming chapter's attack titles as a bottom line's subject (the titles are table labels).
_ATTACK_WORDS = {"self-praise": "The self-praising text", "irrelevant text": "The irrelevant text",
                 "imitated answer": "The text imitating an answer", "forged chat turns": "The forged chat turns"}


def gaming_line(attack_verdicts: Sequence[str], position_verdicts: Sequence[str], protection_verdicts: Sequence[str],
                open_above_half: Sequence[tuple[str, str, float]] = (), untested_why: str = "", tries: str = "judge",
                judges: int = 0, screened_out: int = 0, read_names: Sequence[str] = (), out_names: Sequence[str] = (),
                per_judge: Sequence[tuple[str, Sequence[tuple[str, str]]]] = ()) -> str:
    """The gaming chapter: how many judge-and-attack rows a constant text wins, what judging both
    orders and reading texts as plain text take away (counts after Holm's correction). ``tries``: what
    the judges are, in a word ("small-judge" where the book's main judge is not among them); ``judges``: how
    many (each try is one attack against one judge).
    ``open_above_half``: (attack, judge, win rate) of each row left open whose estimate lies above one
    half, said next, so that the line never reads as more reassuring than the table. ``screened_out``: the
    judges every one of whose rows is not tested because they fail the judge screen (and no other row is
    untested): the line then speaks of the judges shown to read the texts, and says the others were not tested;
    ``read_names`` and ``out_names``: those judges by name, said where the line has room (else counted);
    ``per_judge``: (judge, [(attack, verdict after Holm), ...]) of each judge shown to read the texts, so that
    every win is said under the judge it was won from, where the line has room."""
    wins, position, protection = _count(attack_verdicts), _count(position_verdicts), _count(protection_verdicts)
    kind = "small judge" if tries == "small-judge" else tries
    if per_judge:
        line = _per_judge_line(per_judge, out_names)
        if line:
            return _fit(line, f"Both orders remove a positional win in {_of(position[SUPPORTED], len(position_verdicts))}.")
    if 0 < screened_out < judges:
        line = (_screened_line(wins, open_above_half, kind, judges - screened_out, screened_out, read_names, out_names)
                if read_names and out_names else "") or _screened_line(wins, open_above_half, kind, judges - screened_out,
                                                                      screened_out)
        if line:
            return line

    def rest(why: str) -> str:  # the rows not won, compactly: a bottom line holds one reading per row
        parts = [f"{wins[CONTRADICTED]} {'loses' if wins[CONTRADICTED] == 1 else 'lose'}"] if wins[CONTRADICTED] else []
        if wins[NOT_RESOLVED]:
            parts.append(f"{wins[NOT_RESOLVED]} undecided")
        if wins[NOT_TESTED]:
            parts.append(f"{wins[NOT_TESTED]} untested" + (f", {why}" if why else ""))
        return (": " + ", ".join(parts)) if parts else ""

    # "small-judge tries" read as jargon, "8 small judges' tries" as eight judges: a try is said as what it is
    n_tries = len(attack_verdicts)
    whose = (f"tries on {judges} {kind}s" if judges > 1 and n_tries % judges == 0 else f"tries, each one attack against one {kind}")
    opening = (f"One fixed text beats real summaries in {_of(wins[SUPPORTED], len(attack_verdicts))} "
               f"{whose}")
    open_row = ""
    if open_above_half:
        attack, judge, rate = max(open_above_half, key=lambda row: row[2])
        open_row = (f" {_ATTACK_WORDS.get(attack, f'The {attack} text')} wins {rate:.0%} under {name(judge)}, "
                    "too few articles to tell.")
    # the fullest that fits: the open row above one half is kept longest (the line must never read as more
    # reassuring than the table), then the reason the untested rows have
    candidates = [f"{opening}{rest(untested_why)}.{open_row}", f"{opening}{rest('')}.{open_row}",
                  f"{opening}{rest(untested_why)}."]
    first = next((c for c in candidates if words_shown(c) <= MAX_WORDS), candidates[-1])
    second = f"Both orders remove a positional win in {_of(position[SUPPORTED], len(position_verdicts))}."
    third = (f"Plain-text reading removes forged turns' wins for {_of(protection[SUPPORTED], len(protection_verdicts))} "
             f"judges{_rest(protection, against='it adds wins')}.")
    return _fit(first, second, third)


#: An attack inside a count ("it lost 3, and self-praise, winning 66%, stayed undecided").
_ATTACK_SHORT = {"self-praise": "self-praise", "irrelevant text": "the irrelevant text",
                 "imitated answer": "the imitated answer", "forged chat turns": "the forged turns"}


def _per_judge_line(per_judge: Sequence[tuple[str, Sequence[tuple[str, str]]]], out_names: Sequence[str]) -> str:
    """Each judge that reads the texts with its own count of fixed texts that beat real summaries, the winners
    and the undecided by name; then the judges set aside. "" when it does not fit a bottom line."""
    def names(attacks: Sequence[str]) -> str:
        said = [_ATTACK_SHORT.get(a, f"the {a} text") for a in attacks]
        return " and ".join([", ".join(said[:-1]), said[-1]]) if len(said) > 1 else said[0]

    parts = []
    for judge, rows in per_judge:
        tested = [(a, v) for a, v in rows if v != NOT_TESTED]
        won = [a for a, v in tested if v == SUPPORTED]
        undecided = [a for a, v in tested if v == NOT_RESOLVED]
        part = f"under {name(judge)} in {_of(len(won), len(tested))}" + (f": {names(won)}" if won else "")
        if undecided:
            part += f", with {names(undecided)} undecided"
        parts.append(part)
    line = "Fixed texts beat real summaries " + "; ".join(parts) + "."
    if out_names:
        line += (f" {' and '.join(name(n) for n in out_names)}, not shown to read the texts, "
                 f"{'was' if len(out_names) == 1 else 'were'} not tested.")
    line = line[0].upper() + line[1:]
    return plain(line) if words_shown(line) <= MAX_WORDS else ""


def _screened_line(wins: Mapping[str, int], open_above_half: Sequence[tuple[str, str, float]], kind: str, n_read: int,
                   screened_out: int, read_names: Sequence[str] = (), out_names: Sequence[str] = ()) -> str:
    """The gaming line where some judges fail the screen: their rows are set aside in words, the others counted;
    an open row above one half is said inside the count (by name where one judge is read). "" when nothing fits."""
    subject = f"the one {kind} shown to read the texts" if n_read == 1 else f"the {n_read} {kind}s shown to read the texts"
    if read_names:  # by name: the judges that pass the screen, then the others
        subject = " and ".join([", ".join(name(n) for n in read_names[:-1]), name(read_names[-1])] if len(read_names) > 1
                               else [name(read_names[0])])
    n_tested = sum(wins[v] for v in (SUPPORTED, CONTRADICTED, NOT_RESOLVED))
    opening = f"Under {subject}, a fixed text beat real summaries in {_of(wins[SUPPORTED], n_tested)} tries"
    others = ("the other judge, not shown to read the texts, could not be tested" if screened_out == 1 else
              f"the other {screened_out} judges, not shown to read the texts, could not be tested")
    if out_names:
        others = f"{' and '.join(name(n) for n in out_names)}, not shown to read the texts, could not be tested"
    lost = [f"it lost {wins[CONTRADICTED]}"] if wins[CONTRADICTED] else []
    plain_open = [f"{wins[NOT_RESOLVED]} stayed undecided"] if wins[NOT_RESOLVED] else []
    named = plain_open
    if open_above_half and wins[NOT_RESOLVED] == 1:
        attack, judge, rate = max(open_above_half, key=lambda row: row[2])
        who = "" if n_read == 1 else f" under {name(judge)}"
        named = [f"{_ATTACK_SHORT.get(attack, f'the {attack} text')}, winning {rate:.0%}{who}, stayed undecided"]
    for middle in (named, plain_open):
        parts = lost + middle
        said = (": " + (", and ".join(parts) if len(parts) == 2 else parts[0])) if parts else ""
        line = f"{opening}{said}; {others}."
        if words_shown(line) <= MAX_WORDS:
            return plain(line)
    return ""
