"""The released-outputs plan: which study runs on which data with which model, in order.

The chapters' default parameters read their subsets from here, so the book's defaults are
exactly what ``make outputs`` computes (and what is committed under ``data/outputs``).
Sizes are chosen for a 2-core CPU: the 1.5B judge computes about 1.4 comparisons a second
with prefix sharing, so SummEval's 6 articles x 240 ordered pairs x 4 aspects x 2 templates
take about 2.5 hours; everything below is about 5 CPU-hours.
"""

from __future__ import annotations

from dataclasses import dataclass

JUDGE = "qwen2.5-coder-1.5b-instruct"
SMALL_JUDGES = ("qwen2.5-coder-0.5b-instruct", "smollm2-135m-instruct")

#: Default context subsets (seeded, nested: smaller subsets of one seed are inside larger ones).
N_CONTEXTS = {"summeval": 6, "topicalchat": 30, "webnlg": 12}
SEED = 0


@dataclass(frozen=True)
class Job:
    study: str  # "comparative" | "scoring"
    dataset: str
    model: str
    n_contexts: int | None
    seed: int = SEED

    def argv(self) -> list[str]:
        args = [self.study, "--dataset", self.dataset, "--model", self.model, "--seed", str(self.seed)]
        if self.n_contexts is not None:
            args += ["--n-contexts", str(self.n_contexts)]
        return args


PLAN: tuple[Job, ...] = (
    Job("comparative", "summeval", JUDGE, N_CONTEXTS["summeval"]),
    Job("scoring", "summeval", JUDGE, N_CONTEXTS["summeval"]),
    Job("comparative", "topicalchat", JUDGE, N_CONTEXTS["topicalchat"]),
    Job("comparative", "webnlg", JUDGE, N_CONTEXTS["webnlg"]),
    Job("comparative", "summeval", SMALL_JUDGES[1], N_CONTEXTS["summeval"]),
    Job("comparative", "summeval", SMALL_JUDGES[0], N_CONTEXTS["summeval"]),
    Job("scoring", "topicalchat", JUDGE, N_CONTEXTS["topicalchat"]),
    Job("scoring", "webnlg", JUDGE, N_CONTEXTS["webnlg"]),
    Job("scoring", "summeval", SMALL_JUDGES[1], N_CONTEXTS["summeval"]),
    Job("scoring", "summeval", SMALL_JUDGES[0], N_CONTEXTS["summeval"]),
)
