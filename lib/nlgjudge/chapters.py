"""The registry of book chapters: the one place that says which notebooks make the book.

Each chapter is a parameterized source notebook in ``notebooks/`` that papermill executes into
``book/<name>.ipynb`` (the executed copy is committed, so the book rebuilds without re-running).
``make book`` executes every chapter here with its ``defaults``; the notebook tests execute it with
``ci`` (small parameters, merged over the defaults); ``make chapter NAME=... PARAMS="-p k v"``
reruns one chapter with overrides. ``_toc.yml`` must list every chapter (a test checks it).

Every parameter has a declared type (a :class:`ParamType`, given in ``types`` or inferred from a
default that is not None or empty). :meth:`Chapter.parameters` checks overrides against it, so
``-p seed "{a: 1}"`` fails with one line naming the chapter, the parameter, the expected type and
the value, before papermill starts and before the committed ``book/<name>.ipynb`` is touched;
inside the notebook the same value would fail (or, worse, run) far from its cause.

``n_contexts`` is shared by the chapters: None (every context), one integer for every dataset, or a
mapping dataset -> integer or None. Notebooks turn it into one size per dataset with
:func:`contexts_per_dataset`.

To add a chapter: write ``notebooks/<notebook>.ipynb`` with a cell tagged ``parameters`` that
assigns every default parameter, append a :class:`Chapter` to :data:`CHAPTERS` (declare ``types``
for parameters whose default is None or empty, or that accept more than the default's type), add
``book/<name>`` to ``_toc.yml``, then ``make chapter NAME=<name>``.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

from nlgjudge.config import REPO_ROOT
from nlgjudge.prompts.narcissism import DATASET_BUDGETS
from nlgjudge.studies.plan import (
    BACKEND,
    CHAPTER_N_CONTEXTS,
    ELO_BACKEND,
    JUDGE,
    N_CONTEXTS,
    N_SAMPLES,
    NARCISSISM_BENCHMARKS,
    NARCISSISM_DATASETS,
    NARCISSISM_DOCUMENTS,
    NARCISSISM_MODELS,
    SEED,
    SELFPREF_DATASET,
    SMALL_JUDGES,
    TORCH_BACKEND,
)

NOTEBOOKS_DIRNAME = "notebooks"
BOOK_DIRNAME = "book"


class UnknownChapterError(KeyError):
    """Raised for a chapter name that is not in the registry."""

    def __str__(self) -> str:  # KeyError would quote the whole message
        return str(self.args[0])


class ParameterError(ValueError):
    """Raised for a parameter override that the chapter does not declare, or that does not fit."""


class ParameterTypeError(ParameterError, TypeError):
    """Raised for a parameter value of the wrong type (e.g. ``seed = {a: 1}``)."""


def _frozen(mapping: Mapping[str, Any]) -> Mapping[str, Any]:
    return MappingProxyType(dict(mapping))


# --------------------------------------------------------------------------------------------
# Parameter types


@dataclass(frozen=True)
class ParamType:
    """The type a chapter parameter accepts: a test and the words that describe it in an error.

    Built from the constructors below (:func:`integer`, :func:`list_of`, ``a | b`` for a union, ...)
    rather than from Python annotations, because the values come from YAML on the command line and
    the useful checks are narrower than Python types (``templates`` is a list of 1 or 2, not of int).
    """

    description: str
    """As in "must be <description>", e.g. ``"an integer >= 1"``."""
    plural: str
    """As in "a list of <plural>", e.g. ``"integers >= 1"``."""
    test: Callable[[Any], bool] = field(repr=False, compare=False)

    def accepts(self, value: Any) -> bool:
        return self.test(value)

    def __or__(self, other: ParamType) -> ParamType:
        return ParamType(
            f"{self.description} or {other.description}",
            f"{self.plural} or {other.plural}",
            lambda value: self.test(value) or other.test(value),
        )

    def __str__(self) -> str:
        return self.description


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)  # YAML's true is not 1


def integer(minimum: int | None = None) -> ParamType:
    """An integer (not a bool), at least ``minimum``."""
    bound = "" if minimum is None else f" >= {minimum}"
    return ParamType(
        f"an integer{bound}", f"integers{bound}", lambda v: _is_int(v) and (minimum is None or v >= minimum)
    )


STRING = ParamType("a non-empty string", "non-empty strings", lambda v: isinstance(v, str) and v != "")
BOOLEAN = ParamType("true or false", "booleans", lambda v: isinstance(v, bool))
NONE = ParamType("None (null)", "None", lambda v: v is None)


def choice(values: Iterable[Any], what: str = "values") -> ParamType:
    """One of ``values`` (compared by type and value, so ``True`` is not ``1``)."""
    allowed = tuple(values)
    listing = ", ".join(repr(v) for v in allowed)
    return ParamType(
        f"one of {listing}", f"{what} from {listing}", lambda v: any(type(v) is type(a) and v == a for a in allowed)
    )


def list_of(item: ParamType, min_length: int = 0) -> ParamType:
    """A list (or tuple) whose every item is ``item``, with at least ``min_length`` items."""
    size = "" if min_length == 0 else ("a non-empty " if min_length == 1 else f"at least {min_length}, ")
    article = "" if size else "a "
    return ParamType(
        f"{article}{size}list of {item.plural}",
        f"lists of {item.plural}",
        lambda v: isinstance(v, list | tuple) and len(v) >= min_length and all(item.accepts(x) for x in v),
    )


def mapping_of(key: ParamType, value: ParamType) -> ParamType:
    """A mapping (dict) from ``key`` to ``value``."""
    return ParamType(
        f"a mapping of {key.plural} to {value.plural}",
        f"mappings of {key.plural} to {value.plural}",
        lambda v: isinstance(v, Mapping) and all(key.accepts(k) and value.accepts(x) for k, x in v.items()),
    )


def infer_type(default: Any) -> ParamType | None:
    """The type of a default value, or None when it cannot say (None, an empty or mixed list, ...)."""
    if isinstance(default, bool):
        return BOOLEAN
    if _is_int(default):
        return integer()
    if isinstance(default, float):
        return ParamType("a number", "numbers", lambda v: isinstance(v, int | float) and not isinstance(v, bool))
    if isinstance(default, str):
        return STRING
    if isinstance(default, list | tuple) and default:
        items = [infer_type(x) for x in default]
        if all(t is not None and t == items[0] for t in items):
            return list_of(items[0])  # type: ignore[arg-type]
    return None


def _shown(value: Any, limit: int = 80) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def type_error(chapter: str, name: str, expected: ParamType, value: Any) -> ParameterTypeError:
    """The one-line error for ``value`` given to parameter ``name`` of ``chapter``."""
    message = (
        f"chapter {chapter!r}: parameter {name!r} must be {expected}; got {_shown(value)} ({type(value).__name__})"
    )
    if isinstance(value, int | float) and expected.accepts(str(value)):
        # YAML read the text as a number or a bool; quoting keeps it a string.
        message += f"; to pass it as text, quote it: -p {name} \"'{value}'\""
    return ParameterTypeError(message)


# --------------------------------------------------------------------------------------------
# n_contexts: the number of contexts per dataset


def contexts_per_dataset(
    n_contexts: Any, datasets: Sequence[str], planned: Mapping[str, int | None] = CHAPTER_N_CONTEXTS
) -> dict[str, int | None]:
    """One context count per dataset (None = every context) from a chapter's ``n_contexts``.

    ``n_contexts`` may be None (every context of every dataset), one integer >= 1 (the same
    seeded subset size for every dataset), or a mapping dataset -> integer >= 1 or None. A dataset
    the mapping leaves out gets its size in ``planned`` (the first paper's chapters' subsets,
    ``plan.CHAPTER_N_CONTEXTS``; the runtime chapter passes the torch release's ``plan.N_CONTEXTS``;
    None, every context, for a dataset the plan does not cover), so ``-p n_contexts "{summeval: 2}"`` changes
    SummEval only. Keys naming a known dataset that this run does not read are ignored (the default
    mapping names every planned dataset, and ``-p datasets "[summeval]"`` alone must work); a key
    that is no dataset at all is an error listing the known ones (a misspelt name would otherwise
    be silently ignored). Returns a dict in the order of ``datasets``.
    """
    if isinstance(datasets, str) or not all(isinstance(d, str) for d in datasets):
        raise ParameterTypeError(f"datasets must be a list of dataset names; got {_shown(datasets)}")
    if n_contexts is None or (_is_int(n_contexts) and n_contexts >= 1):
        return {name: n_contexts for name in datasets}
    if not N_CONTEXTS_TYPE.accepts(n_contexts):
        raise ParameterTypeError(
            f"n_contexts must be {N_CONTEXTS_TYPE}; got {_shown(n_contexts)} ({type(n_contexts).__name__})"
        )
    unknown = [key for key in n_contexts if key not in datasets and key not in ALL_DATASETS]
    if unknown:
        it, verb = ("it", "is") if len(unknown) == 1 else ("them", "are")
        raise ParameterError(
            f"n_contexts names {unknown}, which {verb} no dataset; the datasets are {list(ALL_DATASETS)} "
            f"(fix or remove {it})"
        )
    return {name: n_contexts[name] if name in n_contexts else planned.get(name) for name in datasets}


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
    types: Mapping[str, ParamType] = field(default_factory=dict)
    """Declared parameter types; a parameter left out gets the type of its default (see
    :func:`infer_type`). After construction this holds the type of every parameter."""

    def __post_init__(self) -> None:
        unknown_ci = set(self.ci) - set(self.defaults)
        if unknown_ci:
            raise ParameterError(
                f"chapter {self.name!r}: CI parameters {sorted(unknown_ci)} are not among its "
                f"default parameters {sorted(self.defaults)}"
            )
        unknown_types = set(self.types) - set(self.defaults)
        if unknown_types:
            raise ParameterError(
                f"chapter {self.name!r}: types are declared for {sorted(unknown_types)}, which are not among "
                f"its default parameters {sorted(self.defaults)}"
            )
        types: dict[str, ParamType] = {}
        for name, default in self.defaults.items():
            declared = self.types.get(name) or infer_type(default)
            if declared is None:
                raise ParameterError(
                    f"chapter {self.name!r}: parameter {name!r} defaults to {default!r}, which does not say "
                    "what type it takes; declare it in the chapter's types (e.g. NONE | integer(1))"
                )
            types[name] = declared
        object.__setattr__(self, "defaults", _frozen(self.defaults))
        object.__setattr__(self, "ci", _frozen(self.ci))
        object.__setattr__(self, "types", _frozen(types))
        # The registry's own values must fit too: a wrong default would fail every build.
        self.check_types(self.defaults)
        self.ci_parameters()

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
        """The defaults merged with ``overrides``, checked before anything runs.

        An undeclared name is an error, not ignored; a value of the wrong type raises
        :class:`ParameterTypeError` naming the chapter, the parameter, the expected type and the
        value; ``n_contexts`` must not name an unknown dataset (:func:`contexts_per_dataset`).
        """
        overrides = dict(overrides or {})
        unknown = set(overrides) - set(self.defaults)
        if unknown:
            raise ParameterError(
                f"chapter {self.name!r} has no parameter(s) {sorted(unknown)}; "
                f"its parameters are: {', '.join(sorted(self.defaults))}"
            )
        self.check_types(overrides)
        # deep copies: a notebook run must never mutate the registry's default lists
        merged = copy.deepcopy(dict(self.defaults))
        merged.update(copy.deepcopy(overrides))
        if "n_contexts" in merged and "datasets" in merged:
            try:
                contexts_per_dataset(merged["n_contexts"], merged["datasets"])
            except ParameterError as error:
                raise type(error)(f"chapter {self.name!r}: {error}") from None
        return merged

    def check_types(self, values: Mapping[str, Any]) -> None:
        """Raise :class:`ParameterTypeError` for the first value whose type the chapter does not accept."""
        for name, value in values.items():
            expected = self.types[name]
            if not expected.accepts(value):
                raise type_error(self.name, name, expected, value)

    def describe_types(self) -> dict[str, str]:
        """Parameter -> the words for its type (for ``python -m nlgjudge.book list``)."""
        return {name: str(kind) for name, kind in self.types.items()}

    def ci_parameters(self) -> dict[str, Any]:
        """The small parameters the notebook tests run with."""
        return self.parameters(self.ci)


#: The contestants of the Elo chapter (nlgjudge.data.contest.CONTESTANTS; a test keeps them equal;
#: importing the data package here would slow every ``python -m nlgjudge.book`` call).
CONTEST_CONTESTANTS = ("BART", "PEGASUS", "BRIO", "GPT-4", "ChatGPT", "GPT-3", "reference")

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
    "cnndm_contest",
)

#: Types shared by the chapters' parameters.
DATASET_TYPE = choice(ALL_DATASETS, "dataset names")
DATASETS_TYPE = list_of(DATASET_TYPE, min_length=1)
N_CONTEXTS_TYPE = (
    NONE
    | integer(minimum=1)
    | mapping_of(
        ParamType("a dataset name", "dataset names", lambda v: isinstance(v, str)), integer(minimum=1) | NONE
    )
)
SEED_TYPE = integer(minimum=0)  # numpy seeds are non-negative
DATA_DIR_TYPE = NONE | STRING
TEMPLATES_TYPE = list_of(choice((1, 2), "prompt templates"), min_length=1)
ASPECTS_TYPE = NONE | list_of(STRING, min_length=1)
MODELS_TYPE = list_of(STRING)
#: A fraction strictly between 0 and 1 (e.g. a comparison budget below "all of them").
FRACTION_TYPE = ParamType(
    "a number in (0, 1)", "numbers in (0, 1)",
    lambda v: isinstance(v, (int, float)) and not isinstance(v, bool) and 0 < v < 1,
)
#: Model runtimes of :class:`nlgjudge.engine.Judge` (outputs of different runtimes never mix).
BACKEND_TYPE = choice(("auto", "torch", "llamacpp"), "model runtimes")
#: Two different runtimes, the reference first (the runtime chapter compares them).
RUNTIME_PAIR_TYPE = ParamType(
    "a list of two different runtimes from 'torch', 'llamacpp'", "pairs of runtimes",
    lambda v: isinstance(v, list | tuple) and len(v) == 2 and set(v) == {"torch", "llamacpp"},
)
#: Selection strategies of :data:`nlgjudge.stats.selection.STRATEGIES` (a test keeps them equal;
#: importing nlgjudge.stats here would make every ``python -m nlgjudge.book`` call seconds slower).
STRATEGY_NAMES = ("full", "random", "no-repeat", "symmetric", "active")
#: Datasets whose documents have a summary length budget (the narcissism chapter's generators need one).
BUDGETED_DATASETS = tuple(DATASET_BUDGETS)

#: The parameters every judge chapter shares, with their types.
_JUDGE_TYPES: dict[str, ParamType] = {
    "model": STRING,
    "backend": BACKEND_TYPE,
    "datasets": DATASETS_TYPE,
    "n_contexts": N_CONTEXTS_TYPE,
    "aspects": ASPECTS_TYPE,
    "templates": TEMPLATES_TYPE,
    "seed": SEED_TYPE,
    "released_only": BOOLEAN,
    "data_dir": DATA_DIR_TYPE,
}

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
        types={
            "datasets": DATASETS_TYPE,
            "optional_datasets": list_of(DATASET_TYPE),
            # datasets.ipynb hands n_contexts to load_dataset as it is; widen to N_CONTEXTS_TYPE
            # when it calls contexts_per_dataset like the other chapters.
            "n_contexts": NONE | integer(minimum=1),
            "seed": SEED_TYPE,
            "data_dir": DATA_DIR_TYPE,
        },
    ),
    # One SummEval article end to end, from the comparative chapter's released outputs (teaching).
    Chapter(
        name="worked",
        title="A worked example",
        notebook="worked.ipynb",
        defaults={
            "model": JUDGE,
            "small_model": SMALL_JUDGES[1],
            "dataset": "summeval",
            "n_contexts": N_CONTEXTS["summeval"],
            "article": 0,
            "aspect": "COH",
            "template": 1,
            "seed": SEED,
            "backend": BACKEND,
            "released_only": True,
            "data_dir": None,
        },
        ci={"model": "smollm2-135m-instruct", "n_contexts": 1, "released_only": False},
        inputs=("data/outputs",),
        types={
            "model": STRING, "small_model": STRING, "dataset": DATASET_TYPE, "n_contexts": integer(minimum=1),
            "article": integer(minimum=0), "aspect": STRING, "template": choice((1, 2), "prompt templates"),
            "seed": SEED_TYPE, "backend": BACKEND_TYPE, "released_only": BOOLEAN, "data_dir": DATA_DIR_TYPE,
        },
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
            "n_contexts": dict(CHAPTER_N_CONTEXTS),
            "aspects": None,
            "templates": [1, 2],
            "n_samples": N_SAMPLES,
            "seed": SEED,
            "released_only": True,
            # the runtime of the released outputs: reading them with another one finds nothing
            "backend": BACKEND,
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
        types={**_JUDGE_TYPES, "small_models": MODELS_TYPE, "n_samples": integer(minimum=1)},
    ),
    Chapter(
        name="bias",
        title="Positional bias and debiasing",
        notebook="bias.ipynb",
        defaults={
            "model": JUDGE,
            "small_models": list(SMALL_JUDGES),
            "datasets": ["summeval", "topicalchat", "webnlg"],
            "n_contexts": dict(CHAPTER_N_CONTEXTS),
            "aspects": None,
            "templates": [1, 2],
            "seed": SEED,
            "released_only": True,
            # the runtime of the released outputs: reading them with another one finds nothing
            "backend": BACKEND,
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
        types={**_JUDGE_TYPES, "small_models": MODELS_TYPE},
    ),
    Chapter(
        name="subsets",
        title="Fewer comparisons",
        notebook="subsets.ipynb",
        defaults={
            "model": JUDGE,
            "datasets": ["summeval", "topicalchat", "webnlg"],
            "n_contexts": dict(CHAPTER_N_CONTEXTS),
            "aspects": None,
            "templates": [1, 2],
            "strategies": ["random", "no-repeat", "symmetric", "active"],
            "n_draws": 50,
            "self_consistency_sizes": [2, 3, 4, 6, 8, 12, 16],  # the paper's Table 8 sizes
            "seed": SEED,
            "released_only": True,
            # the runtime of the released outputs: reading them with another one finds nothing
            "backend": BACKEND,
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
        types={
            **_JUDGE_TYPES,
            "strategies": list_of(choice(STRATEGY_NAMES, "selection strategies"), min_length=1),
            "n_draws": integer(minimum=2),  # the curves' band needs a spread over draws
            "self_consistency_sizes": list_of(integer(minimum=2), min_length=1),
        },
    ),
    # Issue 12: the first paper's released comparisons and scores of the judge under both runtimes (torch's
    # release and llama.cpp's recomputation of the same contexts), side by side.
    Chapter(
        name="runtime",
        title="Does the runtime matter?",
        notebook="runtime.ipynb",
        defaults={
            "model": JUDGE,
            "datasets": ["summeval", "topicalchat", "webnlg"],
            "n_contexts": dict(N_CONTEXTS),  # the torch release's contexts: both runtimes computed them
            "aspects": None,
            "templates": [1, 2],
            "seed": SEED,
            "n_samples": N_SAMPLES,  # the comparative chapter's, to find its released sampled scores
            "backends": [TORCH_BACKEND, BACKEND],
            "released_only": True,
            "data_dir": None,
        },
        ci={
            "model": "smollm2-135m-instruct",
            "datasets": ["topicalchat"],
            "n_contexts": {"topicalchat": 2},
            "aspects": ["COH"],
            "templates": [1],
            "n_samples": 2,
            "released_only": False,
        },
        inputs=("data/outputs",),
        types={
            **{name: kind for name, kind in _JUDGE_TYPES.items() if name != "backend"},
            "n_samples": integer(minimum=1),
            "backends": RUNTIME_PAIR_TYPE,
        },
    ),
    # Seed 004 (Harang): the contest's released LLM judgements are data/outputs/elo-cnndm_contest.
    Chapter(
        name="elo",
        title="Elo vs ROUGE",
        notebook="elo.ipynb",
        defaults={
            "contestants": list(CONTEST_CONTESTANTS),
            # The judge and both small judges: their Elo judgements are released for all 99 articles.
            "judge_models": [JUDGE, *SMALL_JUDGES],
            "backend": ELO_BACKEND,
            "templates": [1],
            "n_articles": None,
            "n_orders": 200,
            "n_boot": 1000,
            "seed": SEED,
            "released_only": True,
            "data_dir": None,
        },
        ci={
            "judge_models": ["smollm2-135m-instruct"],
            "backend": "torch",
            "n_articles": 2,
            "n_orders": 5,
            "n_boot": 20,
            "released_only": False,
        },
        inputs=("data/outputs", "data/reported"),
        types={
            "contestants": list_of(choice(CONTEST_CONTESTANTS, "contestants of the cnndm_contest dataset"), min_length=2),
            "judge_models": MODELS_TYPE,
            "backend": BACKEND_TYPE,
            "templates": TEMPLATES_TYPE,
            "n_articles": NONE | integer(minimum=1),
            "n_orders": integer(minimum=2),
            "n_boot": integer(minimum=10),
            "seed": SEED_TYPE,
            "released_only": BOOLEAN,
            "data_dir": DATA_DIR_TYPE,
        },
    ),
    # Seed 003 (Liu, Moosavi & Lin): generators x evaluators, released as data/outputs/generation-* and
    # likelihood-* (every packaged decoder-only model is both a generator and an evaluator).
    Chapter(
        name="narcissism",
        title="Narcissistic evaluators",
        notebook="narcissism.ipynb",
        defaults={
            "generators": list(NARCISSISM_MODELS),
            "evaluators": list(NARCISSISM_MODELS),
            "datasets": list(NARCISSISM_DATASETS),
            "n_documents": NARCISSISM_DOCUMENTS,
            "benchmarks": list(NARCISSISM_BENCHMARKS),
            "benchmark_documents": None,
            "selfpref_judges": [JUDGE, *SMALL_JUDGES],
            "selfpref_dataset": SELFPREF_DATASET,
            "backend": ELO_BACKEND,
            "n_boot": 1000,
            "seed": SEED,
            "released_only": True,
            "data_dir": None,
        },
        ci={
            "generators": ["smollm2-135m-instruct", "gemma-3-270m"],
            "evaluators": ["smollm2-135m-instruct", "gemma-3-270m"],
            "datasets": ["qags_xsum", "rose"],  # rose: the reference-based setting and its comparison
            "n_documents": 3,
            "benchmark_documents": 3,
            "selfpref_judges": ["smollm2-135m-instruct", "gemma-3-270m"],
            "selfpref_dataset": "qags_xsum",
            "backend": "torch",
            "n_boot": 20,
            "released_only": False,
        },
        inputs=("data/outputs", "data/reported"),
        types={
            "generators": list_of(STRING, min_length=1),
            "evaluators": list_of(STRING, min_length=1),
            "datasets": list_of(choice(BUDGETED_DATASETS, "datasets with a summary length budget"), min_length=1),
            "n_documents": NONE | integer(minimum=1),
            "benchmarks": list_of(choice(NARCISSISM_BENCHMARKS, "human-annotated benchmarks of seed 003")),
            "benchmark_documents": NONE | integer(minimum=3),
            "selfpref_judges": list_of(STRING),
            "selfpref_dataset": NONE | choice(BUDGETED_DATASETS, "datasets with a summary length budget"),
            "backend": BACKEND_TYPE,
            "n_boot": integer(minimum=10),
            "seed": SEED_TYPE,
            "released_only": BOOLEAN,
            "data_dir": DATA_DIR_TYPE,
        },
    ),
    # Issue 16: the rank tool on the contest's released Elo judgments (no model needed to rebuild).
    Chapter(
        name="rank",
        title="Rank your own outputs",
        notebook="rank.ipynb",
        defaults={
            "judge_model": JUDGE,
            "backend": ELO_BACKEND,
            "contestants": list(CONTEST_CONTESTANTS),
            "n_articles": None,
            "budgets": [0.5, 0.25],
            "n_boot": 500,
            "seed": SEED,
            "released_only": True,
            "data_dir": None,
        },
        ci={
            "judge_model": "smollm2-135m-instruct",
            "backend": "torch",
            "n_articles": 2,
            "budgets": [0.5],
            "n_boot": 20,
            "released_only": False,
        },
        inputs=("data/outputs",),
        types={
            "judge_model": STRING,
            "backend": BACKEND_TYPE,
            "contestants": list_of(choice(CONTEST_CONTESTANTS, "contestants of the cnndm_contest dataset"), min_length=2),
            "n_articles": NONE | integer(minimum=1),
            "budgets": list_of(FRACTION_TYPE, min_length=1),
            "n_boot": integer(minimum=10),
            "seed": SEED_TYPE,
            "released_only": BOOLEAN,
            "data_dir": DATA_DIR_TYPE,
        },
    ),
)


#: Static pages listed in ``_toc.yml`` after the chapters (Markdown, not executed).
STATIC_PAGES: tuple[str, ...] = ("book/glossary", "book/references")


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
