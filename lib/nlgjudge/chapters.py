"""The registry of book chapters: the one place that says which notebooks make the book.

Each chapter is a parameterized source notebook in ``notebooks/`` that papermill executes into
``book/<name>.ipynb`` (the executed copy is committed, so the book rebuilds without re-running).
``make book`` executes every chapter here with its ``defaults``; the notebook tests execute it with
``ci`` (small parameters, merged over the defaults); ``make chapter NAME=... PARAMS="-p k v"``
reruns one chapter with overrides. ``_toc.yml`` must list every chapter (a test checks it).

To add a chapter: write ``notebooks/<notebook>.ipynb`` with a cell tagged ``parameters`` that
assigns every default parameter, append a :class:`Chapter` to :data:`CHAPTERS`, add
``book/<name>`` to ``_toc.yml``, then ``make chapter NAME=<name>``.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

from nlgjudge.config import REPO_ROOT
from nlgjudge.studies.plan import JUDGE, N_CONTEXTS, SEED, SMALL_JUDGES

NOTEBOOKS_DIRNAME = "notebooks"
BOOK_DIRNAME = "book"


class UnknownChapterError(KeyError):
    """Raised for a chapter name that is not in the registry."""

    def __str__(self) -> str:  # KeyError would quote the whole message
        return str(self.args[0])


class ParameterError(ValueError):
    """Raised for a parameter override that the chapter does not declare."""


def _frozen(mapping: Mapping[str, Any]) -> Mapping[str, Any]:
    return MappingProxyType(dict(mapping))


@dataclass(frozen=True)
class Chapter:
    """One book chapter.

    ``defaults`` are the parameters ``make book`` uses; ``ci`` are overrides for the fast notebook
    tests; ``inputs`` are extra repository-relative paths (files or folders, e.g. released outputs
    under ``data/outputs/<study>``) whose content decides whether the committed execution is stale.
    """

    name: str
    title: str
    notebook: str
    defaults: Mapping[str, Any]
    ci: Mapping[str, Any] = field(default_factory=dict)
    inputs: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        unknown_ci = set(self.ci) - set(self.defaults)
        if unknown_ci:
            raise ParameterError(
                f"chapter {self.name!r}: CI parameters {sorted(unknown_ci)} are not among its "
                f"default parameters {sorted(self.defaults)}"
            )
        object.__setattr__(self, "defaults", _frozen(self.defaults))
        object.__setattr__(self, "ci", _frozen(self.ci))

    def source_path(self, root: Path = REPO_ROOT) -> Path:
        """The parameterized source notebook."""
        return root / NOTEBOOKS_DIRNAME / self.notebook

    def output_path(self, root: Path = REPO_ROOT) -> Path:
        """Where papermill writes the executed notebook (a page of the book)."""
        return root / BOOK_DIRNAME / f"{self.name}.ipynb"

    @property
    def toc_entry(self) -> str:
        """The entry for this chapter in ``_toc.yml`` (path without suffix, from the root)."""
        return f"{BOOK_DIRNAME}/{self.name}"

    def parameters(self, overrides: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """The defaults merged with ``overrides``; an undeclared name is an error, not ignored."""
        overrides = dict(overrides or {})
        unknown = set(overrides) - set(self.defaults)
        if unknown:
            raise ParameterError(
                f"chapter {self.name!r} has no parameter(s) {sorted(unknown)}; "
                f"its parameters are: {', '.join(sorted(self.defaults))}"
            )
        # deep copies: a notebook run must never mutate the registry's default lists
        merged = copy.deepcopy(dict(self.defaults))
        merged.update(copy.deepcopy(overrides))
        return merged

    def ci_parameters(self) -> dict[str, Any]:
        """The small parameters the notebook tests run with."""
        return self.parameters(self.ci)


#: The datasets every study reads, in the order the book presents them.
ALL_DATASETS: tuple[str, ...] = (
    "summeval",
    "topicalchat",
    "webnlg",
    "podcast",
    "rose",
    "rose_llm",
    "sumllm",
    "qags_cnndm",
    "qags_xsum",
)

CHAPTERS: tuple[Chapter, ...] = (
    Chapter(
        name="datasets",
        title="The datasets",
        notebook="datasets.ipynb",
        defaults={
            "datasets": list(ALL_DATASETS),
            # Online-only datasets: shown with a note when they cannot be loaded here.
            "optional_datasets": ["podcast"],
            "n_contexts": None,
            "seed": 0,
            "data_dir": None,
        },
        ci={"datasets": ["summeval", "topicalchat", "webnlg", "podcast"], "n_contexts": 4},
    ),
    # The three chapters of the first paper (Liusie et al. 2024) read the same released outputs
    # (data/outputs/comparative-*, scoring-*); defaults are the plan in nlgjudge.studies.plan.
    # released_only=True: use the planned contexts whose outputs are all released, and say how
    # many that is; a reader who reruns with another model sets it to False to compute.
    Chapter(
        name="comparative",
        title="Comparative assessment vs prompt scoring",
        notebook="comparative.ipynb",
        defaults={
            "model": JUDGE,
            "small_models": list(SMALL_JUDGES),
            "datasets": ["summeval", "topicalchat", "webnlg"],
            "n_contexts": dict(N_CONTEXTS),
            "aspects": None,
            "templates": [1, 2],
            "n_samples": 10,
            "seed": SEED,
            "released_only": True,
            "data_dir": None,
        },
        ci={
            "model": "smollm2-135m-instruct",
            "small_models": [],
            "datasets": ["summeval"],
            "n_contexts": {"summeval": 1},
            "aspects": ["COH"],
            "templates": [1],
            "n_samples": 2,
            "released_only": False,
        },
        inputs=("data/outputs", "data/reported"),
    ),
    Chapter(
        name="bias",
        title="Positional bias and debiasing",
        notebook="bias.ipynb",
        defaults={
            "model": JUDGE,
            "small_models": list(SMALL_JUDGES),
            "datasets": ["summeval", "topicalchat", "webnlg"],
            "n_contexts": dict(N_CONTEXTS),
            "aspects": None,
            "templates": [1, 2],
            "seed": SEED,
            "released_only": True,
            "data_dir": None,
        },
        ci={
            "model": "smollm2-135m-instruct",
            "small_models": [],
            "datasets": ["summeval"],
            "n_contexts": {"summeval": 1},
            "aspects": ["COH"],
            "templates": [1],
            "released_only": False,
        },
        inputs=("data/outputs", "data/reported"),
    ),
    Chapter(
        name="subsets",
        title="Fewer comparisons",
        notebook="subsets.ipynb",
        defaults={
            "model": JUDGE,
            "datasets": ["summeval", "topicalchat", "webnlg"],
            "n_contexts": dict(N_CONTEXTS),
            "aspects": None,
            "templates": [1, 2],
            "strategies": ["random", "no-repeat", "symmetric", "active"],
            "n_draws": 50,
            "self_consistency_sizes": [4, 8, 12],
            "seed": SEED,
            "released_only": True,
            "data_dir": None,
        },
        ci={
            "model": "smollm2-135m-instruct",
            "datasets": ["summeval"],
            "n_contexts": {"summeval": 1},
            "aspects": ["COH"],
            "templates": [1],
            "n_draws": 3,
            "self_consistency_sizes": [4],
            "released_only": False,
        },
        inputs=("data/outputs", "data/reported"),
    ),
)


def list_chapters() -> tuple[Chapter, ...]:
    """Every registered chapter, in book order."""
    return CHAPTERS


def get_chapter(name: str) -> Chapter:
    """The chapter called ``name``; an unknown name lists the known ones."""
    for chapter in CHAPTERS:
        if chapter.name == name:
            return chapter
    known = ", ".join(c.name for c in CHAPTERS)
    raise UnknownChapterError(f"no chapter named {name!r}; the chapters are: {known}")
