"""The registry of book chapters: the one place that says which notebooks make the book.

Each chapter is a parameterized source notebook in ``notebooks/`` that papermill executes into
``book/<name>.ipynb`` (the executed copy is committed, so the book rebuilds without re-running).
``make book`` executes every chapter here with its ``defaults``; the notebook tests execute it with
``ci`` (small parameters, merged over the defaults); ``make chapter NAME=... PARAMS="-p k v"``
reruns one chapter with overrides. ``_toc.yml`` must list every chapter (a test checks it).

Every parameter has a declared type (a :class:`~nlgjudge.parameters.ParamType`, given in ``types``
or inferred from a default that is not None or empty) and a one-line meaning (:data:`MEANINGS`,
or the chapter's own ``meanings``). :meth:`Chapter.parameters` checks overrides against it, so
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
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

from nlgjudge.config import REPO_ROOT
from nlgjudge.parameters import (
    BOOLEAN,
    NONE,
    STRING,
    ParameterError,
    ParameterTypeError,
    ParamType,
    choice,
    infer_type,
    integer,
    list_of,
    mapping_of,
    is_int,
    shown,
    type_error,
)
from nlgjudge.prompts.narcissism import DATASET_BUDGETS
from nlgjudge.studies.plan import (
    BACKEND,
    CHAPTER_N_CONTEXTS,
    ELO_BACKEND,
    GAMING_ARTICLES,
    GAMING_ASPECTS,
    GAMING_JUDGES,
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


def _frozen(mapping: Mapping[str, Any]) -> Mapping[str, Any]:
    return MappingProxyType(dict(mapping))


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
        raise ParameterTypeError(f"datasets must be a list of dataset names; got {shown(datasets)}")
    if n_contexts is None or (is_int(n_contexts) and n_contexts >= 1):
        return {name: n_contexts for name in datasets}
    if not N_CONTEXTS_TYPE.accepts(n_contexts):
        raise ParameterTypeError(
            f"n_contexts must be {N_CONTEXTS_TYPE}; got {shown(n_contexts)} ({type(n_contexts).__name__})"
        )
    unknown = [key for key in n_contexts if key not in datasets and key not in ALL_DATASETS]
    if unknown:
        it, verb = ("it", "is") if len(unknown) == 1 else ("them", "are")
        raise ParameterError(
            f"n_contexts names {unknown}, which {verb} no dataset; the datasets are {list(ALL_DATASETS)} "
            f"(fix or remove {it})"
        )
    return {name: n_contexts[name] if name in n_contexts else planned.get(name) for name in datasets}


def yaml_text(value: Any) -> str:
    """A parameter value as ``-p NAME VALUE`` reads it back (YAML flow style, one line)."""
    import yaml  # a dependency of papermill; imported here to keep the registry's import light

    return yaml.safe_dump(_plain(value), default_flow_style=True, width=10_000).strip().removesuffix("\n...").strip()


def _plain(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value


def shell_quoted(text: str) -> str:
    """``text`` quoted for the shell when it holds spaces or YAML brackets."""
    import shlex

    return text if text.replace("-", "").replace("_", "").replace(".", "").isalnum() else shlex.quote(text)


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
    meanings: Mapping[str, str] = field(default_factory=dict)
    """What a parameter means in this chapter where :data:`MEANINGS` is too general. After
    construction this holds the meaning of every parameter."""

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
        unknown_meanings = set(self.meanings) - set(self.defaults)
        if unknown_meanings:
            raise ParameterError(f"chapter {self.name!r}: meanings are given for {sorted(unknown_meanings)}, which are "
                                 f"not among its default parameters {sorted(self.defaults)}")
        meanings = {name: self.meanings.get(name) or MEANINGS.get(name, "") for name in self.defaults}
        missing = [name for name, meaning in meanings.items() if not meaning]
        if missing:
            raise ParameterError(f"chapter {self.name!r}: parameter(s) {missing} have no meaning; add one line each "
                                 "to MEANINGS or to the chapter's meanings")
        object.__setattr__(self, "meanings", _frozen(meanings))

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

    def parameter_rows(self, values: Mapping[str, Any]) -> list[dict[str, str]]:
        """One row per parameter for the chapter's "Parameters of this chapter" table: its name, its
        value in this build (read from ``values``, e.g. the notebook's globals), its meaning and a
        runnable ``make chapter`` command that sets it to another value (:meth:`change_command`)."""
        rows = []
        for name in self.defaults:
            if name not in values:
                raise ParameterError(f"chapter {self.name!r}: no value for parameter {name!r} in this build")
            value = values[name]
            rows.append({"parameter": name, "value in this build": yaml_text(value),
                         "meaning": self.meanings[name], "to change it": self.change_command(name, value)})
        return rows

    def example_value(self, name: str, value: Any) -> Any:
        """A value of parameter ``name`` other than ``value`` that the chapter accepts (its type, and
        n_contexts against datasets), or None when none can be made up; smaller runs come first,
        so an example is quick to try."""
        for candidate in _example_candidates(name, value, self.types[name]):
            if candidate == value or candidate is None:
                continue
            try:
                self.parameters({name: candidate})
            except ParameterError:
                continue
            return candidate
        return None

    def change_command(self, name: str, value: Any) -> str:
        """``make chapter NAME=<chapter> PARAMS="-p <name> <another value>"``: a command a reader can
        paste to rerun the chapter with parameter ``name`` changed from ``value``."""
        options = COMPANION_OPTIONS.get(name, "")
        example = self.example_value(name, value)
        shown_value = "VALUE" if example is None else shell_quoted(yaml_text(example))
        return f'make chapter NAME={self.name} PARAMS="{options}-p {name} {shown_value}"'

    def ci_parameters(self) -> dict[str, Any]:
        """The small parameters the notebook tests run with."""
        return self.parameters(self.ci)


#: Example values where a parameter's type cannot make one up: the packaged judges that answer (not
#: the 135M model, which answers by position), a data directory where the Makefile looks for one,
#: a local server, one aspect.
EXAMPLE_VALUES: dict[str, tuple[Any, ...]] = {
    "model": (JUDGE, SMALL_JUDGES[0]),
    "small_model": (SMALL_JUDGES[0], JUDGE),
    "judge_model": (JUDGE, SMALL_JUDGES[0]),
    "data_dir": ("../shared/data",),
    "server_url": ("http://localhost:8000/v1",),
    "aspects": (["COH"],),
    "aspect": ("REL", "COH"),
    "backend": ("torch", "llamacpp"),
}
#: Options an example needs beside its own (a server's URL is read only with the server runtime).
COMPANION_OPTIONS: dict[str, str] = {"server_url": "-p backend server "}


def _example_candidates(name: str, value: Any, kind: ParamType) -> list[Any]:
    """Values to try, in order, as another value of parameter ``name`` than ``value``."""
    candidates: list[Any] = list(EXAMPLE_VALUES.get(name, ()))
    if isinstance(value, bool):
        candidates.append(not value)
    elif is_int(value):
        candidates += [value // 2, value + 1] if value >= 2 else [value + 1]
    elif isinstance(value, float):
        candidates += [round(value / 2, 3), round(min(0.99, value * 1.5), 3)]
    elif isinstance(value, Mapping):
        candidates.append({key: count // 2 if is_int(count) and count >= 2 else count for key, count in value.items()})
    elif isinstance(value, list | tuple):
        if len(value) > 1:
            candidates.append(list(value[:-1]))  # one item fewer: a shorter run
            candidates.append(list(reversed(value)))  # another order (the reference of a pair first)
        candidates += [list(value) + [x for x in example if x not in value] for example in kind.examples
                       if isinstance(example, list)]
    elif value is None:
        candidates += [10, 5]  # a number of contexts, documents, articles
    candidates += [example for example in kind.examples if not isinstance(example, list)]
    return candidates


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
BACKEND_TYPE = choice(("auto", "torch", "llamacpp", "server"), "model runtimes")
#: The URL of the OpenAI-compatible server for backend "server" (None: $NLGJUDGE_SERVER_URL).
SERVER_URL_TYPE = NONE | STRING
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
    "server_url": SERVER_URL_TYPE,
    "datasets": DATASETS_TYPE,
    "n_contexts": N_CONTEXTS_TYPE,
    "aspects": ASPECTS_TYPE,
    "templates": TEMPLATES_TYPE,
    "seed": SEED_TYPE,
    "released_only": BOOLEAN,
    "data_dir": DATA_DIR_TYPE,
}

#: What each parameter means, in one line (shown in every chapter's "Parameters of this chapter"
#: table and by ``python -m nlgjudge.book list``). A chapter whose parameter means something
#: narrower says so in its own ``meanings``.
MEANINGS: dict[str, str] = {
    "model": "the judge: a packaged short name, a Hugging Face id or a local folder",
    "small_models": "smaller judges shown beside the judge (SummEval rows only)",
    "small_model": "a small judge whose positional bias the example debiases",
    "judge_model": "the judge whose released Elo judgments the rank tool reads",
    "judge_models": "the LLM judges of the contest (their released judgments are read)",
    "datasets": "the datasets the chapter reads",
    "dataset": "the dataset of the example",
    "optional_datasets": "datasets shown with a note when they cannot be loaded here (online only)",
    "n_contexts": "contexts per dataset: one number, a mapping dataset -> number, or None for all",
    "aspects": "the aspects judged (None: every aspect of each dataset), e.g. [COH]",
    "aspect": "the aspect of the example",
    "templates": "the paper's prompt templates used (1, 2 or both)",
    "template": "the prompt template of the example",
    "article": "which article of the subset the example follows (0: the first)",
    "n_samples": "answers sampled per prompt-scoring prompt (the paper's K)",
    "seed": "the seed of the subset of contexts (and of every random choice without resample_seed)",
    "resample_seed": "the seed of the bootstraps, permutations and random draws only; the contexts stay those of seed",
    "backend": "the runtime of the outputs read or computed: llamacpp, torch, auto or server (an inference server)",
    "server_url": "with backend server: the server's URL, e.g. http://host:8000/v1 (None: NLGJUDGE_SERVER_URL)",
    "backends": "the two runtimes compared, the reference first",
    "released_only": "true: read only the released outputs (no model); false: compute what is missing",
    "data_dir": "the data directory (None: the NLGJUDGE_DATA_DIR environment variable)",
    "strategies": "the selection strategies drawn as curves",
    "n_draws": "random draws per budget (the curves' bands)",
    "claim_draws": "random draws per budget for the findings' tests (more: stable verdicts)",
    "self_consistency_sizes": "subset sizes n of the self-consistency table (the paper's Table 8)",
    "contestants": "the summarizers ranked (the reference summary counts as one)",
    "n_articles": "articles of the contest read (None: all 99)",
    "n_orders": "random visiting orders of the encounters (the Elo trajectories' spread)",
    "n_boot": "bootstrap resamples for the intervals",
    "generators": "the models that write the summaries",
    "evaluators": "the models that score the summaries by likelihood",
    "n_documents": "documents per dataset (None: every document)",
    "benchmarks": "the human-annotated benchmarks the evaluators are correlated with",
    "benchmark_documents": "documents per benchmark (None: all of them)",
    "selfpref_judges": "the pairwise judges of the self-preference section",
    "selfpref_dataset": "the dataset of the self-preference section (None: skip it)",
    "budgets": "fractions of all comparisons for the active-selection runs",
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
        meanings={"datasets": "the datasets described", "n_contexts": "contexts loaded per dataset (None: every context)"},
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
            "server_url": None,
            "released_only": True,
            "data_dir": None,
        },
        ci={"model": "smollm2-135m-instruct", "n_contexts": 1, "released_only": False},
        inputs=("data/outputs",),
        meanings={"model": "the judge whose released comparisons the example reads", "n_contexts": "the seeded SummEval subset the article is taken from"},
        types={
            "model": STRING, "small_model": STRING, "dataset": DATASET_TYPE, "n_contexts": integer(minimum=1),
            "article": integer(minimum=0), "aspect": STRING, "template": choice((1, 2), "prompt templates"),
            "seed": SEED_TYPE, "backend": BACKEND_TYPE, "server_url": SERVER_URL_TYPE, "released_only": BOOLEAN,
            "data_dir": DATA_DIR_TYPE,
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
            "server_url": None,
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
            "resample_seed": SEED,
            "released_only": True,
            # the runtime of the released outputs: reading them with another one finds nothing
            "backend": BACKEND,
            "server_url": None,
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
        types={**_JUDGE_TYPES, "small_models": MODELS_TYPE, "resample_seed": SEED_TYPE},
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
            "claim_draws": 200,
            "self_consistency_sizes": [2, 3, 4, 6, 8, 12, 16],  # the paper's Table 8 sizes
            "seed": SEED,
            "resample_seed": SEED,
            "released_only": True,
            # the runtime of the released outputs: reading them with another one finds nothing
            "backend": BACKEND,
            "server_url": None,
            "data_dir": None,
        },
        ci={
            "model": "smollm2-135m-instruct",
            "datasets": ["summeval"],
            "n_contexts": {"summeval": 1},
            "aspects": ["COH"],
            "templates": [1],
            "n_draws": 3,
            "claim_draws": 3,
            "self_consistency_sizes": [4],
            "released_only": False,
        },
        inputs=("data/outputs", "data/reported"),
        types={
            **_JUDGE_TYPES,
            "strategies": list_of(choice(STRATEGY_NAMES, "selection strategies"), min_length=1),
            "n_draws": integer(minimum=2),  # the curves' band needs a spread over draws
            "claim_draws": integer(minimum=2),  # the Monte Carlo error needs a spread over draws
            "self_consistency_sizes": list_of(integer(minimum=2), min_length=1),
            "resample_seed": SEED_TYPE,
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
        meanings={"model": "the judge whose two runtimes are compared", "n_contexts": "contexts per dataset: the torch release's subset, which both runtimes computed"},
        types={
            **{name: kind for name, kind in _JUDGE_TYPES.items() if name not in ("backend", "server_url")},
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
            "server_url": None,
            "templates": [1],
            "n_articles": None,
            "n_orders": 200,
            "n_boot": 1000,
            "seed": SEED,
            "resample_seed": SEED,
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
        meanings={"templates": "the comparative prompt templates of the judgments read", "n_boot": "bootstrap resamples of the articles for the intervals"},
        types={
            "contestants": list_of(choice(CONTEST_CONTESTANTS, "contestants of the cnndm_contest dataset"), min_length=2),
            "judge_models": MODELS_TYPE,
            "backend": BACKEND_TYPE,
            "server_url": SERVER_URL_TYPE,
            "templates": TEMPLATES_TYPE,
            "n_articles": NONE | integer(minimum=1),
            "n_orders": integer(minimum=2),
            "n_boot": integer(minimum=10),
            "seed": SEED_TYPE,
            "resample_seed": SEED_TYPE,
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
            "server_url": None,
            "n_boot": 1000,
            "seed": SEED,
            "resample_seed": SEED,
            "released_only": True,
            "data_dir": None,
        },
        ci={
            "generators": ["smollm2-135m-instruct", "gemma-3-270m"],
            "evaluators": ["smollm2-135m-instruct", "gemma-3-270m"],
            "datasets": ["qags_xsum", "rose"],  # rose: the reference-based setting and its comparison
            "n_documents": 3,
            "benchmark_documents": 3,
            "benchmarks": ["rose_llm"],  # one benchmark: the same code path as two, at half the CI time
            "selfpref_judges": ["smollm2-135m-instruct", "gemma-3-270m"],
            "selfpref_dataset": "qags_xsum",
            "backend": "torch",
            "n_boot": 20,
            "released_only": False,
        },
        inputs=("data/outputs", "data/reported"),
        meanings={"backend": "the runtime of the generations and likelihoods read or computed"},
        types={
            "generators": list_of(STRING, min_length=1),
            "evaluators": list_of(STRING, min_length=1),
            "datasets": list_of(choice(BUDGETED_DATASETS, "datasets with a summary length budget"), min_length=1),
            "n_documents": NONE | integer(minimum=1),
            "benchmarks": list_of(choice(NARCISSISM_BENCHMARKS, "human-annotated benchmarks of Liu, Moosavi and Lin (2023)")),
            "benchmark_documents": NONE | integer(minimum=3),
            "selfpref_judges": list_of(STRING),
            "selfpref_dataset": NONE | choice(BUDGETED_DATASETS, "datasets with a summary length budget"),
            "backend": BACKEND_TYPE,
            "server_url": SERVER_URL_TYPE,
            "n_boot": integer(minimum=10),
            "seed": SEED_TYPE,
            "resample_seed": SEED_TYPE,
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
            "server_url": None,
            "contestants": list(CONTEST_CONTESTANTS),
            "n_articles": None,
            "budgets": [0.5, 0.25],
            "n_boot": 4000,  # enough resamples that no neighbouring pair rides on their Monte Carlo error
            "seed": SEED,
            "resample_seed": SEED,
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
            "server_url": SERVER_URL_TYPE,
            "contestants": list_of(choice(CONTEST_CONTESTANTS, "contestants of the cnndm_contest dataset"), min_length=2),
            "n_articles": NONE | integer(minimum=1),
            "budgets": list_of(FRACTION_TYPE, min_length=1),
            "n_boot": integer(minimum=10),
            "seed": SEED_TYPE,
            "resample_seed": SEED_TYPE,
            "released_only": BOOLEAN,
            "data_dir": DATA_DIR_TYPE,
        },
    ),
    # Issue 60: attacks on the judge (Zheng et al., ICLR 2025), released as data/outputs/gaming-summeval.
    Chapter(
        name="gaming",
        title="Can a system game the judge?",
        notebook="gaming.ipynb",
        defaults={
            "judge_models": list(GAMING_JUDGES),
            "backend": BACKEND,
            "n_contexts": GAMING_ARTICLES,
            "aspects": list(GAMING_ASPECTS),
            "seed": SEED,
            "released_only": True,
            "data_dir": None,
        },
        ci={"judge_models": ["smollm2-135m-instruct"], "n_contexts": 3, "aspects": ["REL"]},
        inputs=("data/outputs",),
        meanings={"judge_models": "the judges the attacks are tried on",
                  "n_contexts": "SummEval articles (a seeded subset)",
                  "aspects": "the aspects judged: those a text that ignores the article cannot deserve to win",
                  "backend": "the runtime of the judgments: llamacpp, torch or auto (the unprotected reading needs one of them)"},
        types={
            "judge_models": list_of(STRING, min_length=1),
            "backend": choice(("auto", "torch", "llamacpp"), "in-process model runtimes"),
            "n_contexts": integer(minimum=2),
            "aspects": list_of(choice(("COH", "CON", "FLU", "REL"), "SummEval aspects"), min_length=1),
            "seed": SEED_TYPE,
            "released_only": BOOLEAN,
            "data_dir": DATA_DIR_TYPE,
        },
    ),
)


#: Static pages listed in ``_toc.yml`` after the chapters (Markdown, not executed; the book build writes
#: register and teachers from the claims register and the built chapters).
STATIC_PAGES: tuple[str, ...] = ("book/gpu", "book/teachers", "book/register", "book/glossary", "book/references")


def list_chapters() -> tuple[Chapter, ...]:
    """Every registered chapter, in book order."""
    return CHAPTERS


def parameters_table(name: str, values: Mapping[str, Any]) -> Any:
    """Chapter ``name``'s "Parameters of this chapter" table for this build (a pandas Styler over
    one row per parameter: value, meaning, the ``-p`` option that changes it; never cut with
    "..."), read from ``values`` (a notebook passes its ``globals()``, where papermill injected the
    run's values)."""
    import pandas as pd  # imported here: ``python -m nlgjudge.book`` stays quick

    frame = pd.DataFrame(get_chapter(name).parameter_rows(values))
    styled = (frame.style.hide(axis="index")
              .set_table_attributes('class="nlg-parameters"')  # outputs.css keeps the parameter names whole
              .set_properties(**{"text-align": "left", "vertical-align": "top"})
              .set_properties(subset=["parameter", "to change it"], **{"font-family": "monospace"})
              .set_table_styles([{"selector": "th", "props": "text-align: left"}]))
    return FoldedTable(styled, f"Show the {len(frame)} parameters and the command that changes each")


class FoldedTable:
    """A table folded under a one-line summary the reader opens (an HTML ``<details>``): the
    parameters and commands a student rerunning the chapter needs, out of the way of one reading it."""

    def __init__(self, styled: Any, summary: str) -> None:
        self.styled, self.summary = styled, summary

    def _repr_html_(self) -> str:
        return (f'<details class="nlg-fold"><summary>{self.summary}</summary>\n'
                f"{self.styled.to_html()}\n</details>")


def get_chapter(name: str) -> Chapter:
    """The chapter called ``name``; an unknown name lists the known ones."""
    for chapter in CHAPTERS:
        if chapter.name == name:
            return chapter
    known = ", ".join(c.name for c in CHAPTERS)
    raise UnknownChapterError(f"no chapter named {name!r}; the chapters are: {known}")
