"""The judge: one interface over decoder-only and encoder-decoder models, every output cached.

For each call the judge first computes every request's cache key (model name, weight
fingerprint, operation, the exact prompt, labels and decoding settings, seed) and looks them all
up; the model is loaded only when something is missing. Missing requests are sorted so that those
sharing a prefix are neighbours, computed in chunks through the prefix tree (decoder-only) or the
encoder-once runner (encoder-decoder), and each chunk's results are written to the cache as soon
as it completes, so a killed run resumes where it stopped.

Two runtimes compute behind the one interface (``backend``):

- ``"llamacpp"``: llama.cpp runs the packaged GGUF file as shipped (quantised), see
  :mod:`nlgjudge.engine.llamacpp`; the default (``"auto"``) for the packaged GGUF models;
- ``"torch"``: transformers with the GGUF de-quantised; the default for hub ids, local folders,
  in-memory models and encoder-decoder models, and the only runtime for those; fp32 on the CPU, or
  on a GPU when there is one (``device``/``$NLGJUDGE_DEVICE``, bf16 or fp16, see
  :mod:`nlgjudge.models.device`), whose keys append ``|device=cuda|dtype=<dtype>``;
- ``"server"``: a model behind an OpenAI-compatible inference server (``server_url`` or
  ``$NLGJUDGE_SERVER_URL``), named as the server serves it, see :mod:`nlgjudge.engine.server`;
  its keys use the fingerprint ``served:<model>|runtime=server`` plus what identifies the computation
  (the server's ``system_fingerprint``, revision fields, the identity the user states).

``"auto"`` depends on the model, unless an installed llama-cpp-python fails its smoke check on this
CPU (:mod:`nlgjudge.engine.llamacpp.health`): then torch computes, under its own keys, with one
warning line. A missing llama-cpp-python, or an explicit ``backend="llamacpp"`` that fails its check,
raises :class:`~nlgjudge.engine.llamacpp.BackendUnavailableError` at the first computation, saying
how to install or rebuild it or to pass ``backend="torch"`` (cache hits need no runtime). The environment variable
``NLGJUDGE_BACKEND`` sets the default of ``backend`` for judges created without one.

Outputs of the two runtimes never mix: the torch cache keys are exactly the keys of earlier
releases (``request_key(model, fingerprint, operation, request)``), and the llama.cpp keys use
the fingerprint with ``|runtime=llama.cpp`` appended. :meth:`Judge.runtime_description` says which
runtime produced a judge's numbers.
"""

from __future__ import annotations

import importlib
import logging
import math
import os
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from nlgjudge.engine.prompting import UNPROTECTED_ON_SERVER, encode_labels, encode_prompt, encode_text
from nlgjudge.engine.request_keys import _KEYED_FIELDS, _keyed
from nlgjudge.engine.requests import (
    ClassifyRequest,
    ClassifyResult,
    ContextTooLongError,
    EngineInputError,
    GenerateRequest,
    GenerateResult,
    LoglikRequest,
    LoglikResult,
    NumericalError,
    SampleRequest,
    SampleResult,
)
from nlgjudge.engine.stats import ForwardStats
from nlgjudge.engine.tree import DecodeJob
from nlgjudge.models import PACKAGED_MODELS, ModelHandle, resolve_model
from nlgjudge.models.device import Placement
from nlgjudge.models.handle import DEFAULT_PLACEMENT

if TYPE_CHECKING:  # torch and transformers load only when something must be computed
    from nlgjudge.engine.llamacpp import LlamaCppRunner
    from nlgjudge.engine.prefix_tree import CausalRunner
    from nlgjudge.engine.seq2seq import Seq2SeqRunner

log = logging.getLogger(__name__)

#: The runtimes a judge can compute with ("auto": llama.cpp for packaged GGUF models, else torch).
BACKENDS = ("auto", "torch", "llamacpp", "server")
BACKEND_ENV = "NLGJUDGE_BACKEND"
#: With ``commit_seconds``, the requests of an operation's first step, before its rate is measured.
FIRST_STEP = 4


def runs_on_llamacpp(handle: ModelHandle) -> bool:
    """True for the packaged models shipped as GGUF files (the ones llama.cpp can run)."""
    if handle.source != "packaged":
        return False
    spec = PACKAGED_MODELS[handle.location]
    return spec.gguf_file is not None and spec.kind == "causal"


def choose_backend(handle: ModelHandle, backend: str | None = None) -> str:
    """The runtime for ``handle``: "torch" or "llamacpp" (``backend=None``: ``$NLGJUDGE_BACKEND`` or "auto")."""
    source = "backend"
    if backend is None:
        backend = os.environ.get(BACKEND_ENV, "").strip() or "auto"
        source = BACKEND_ENV
    if backend not in BACKENDS:
        raise ValueError(f"{source}={backend!r} is not a runtime; choose one of {', '.join(BACKENDS)}")
    if backend == "server" or handle.source == "server":
        if handle.source != "server":
            raise ValueError(f"{source}='server' takes the model's name as the server serves it (a string), not a {handle.source} model handle")
        if backend != "server":
            raise ValueError(f"{source}={backend!r}: a served model runs on backend='server' only")
        return "server"
    gguf = runs_on_llamacpp(handle)
    if backend == "auto":
        return "llamacpp" if gguf else "torch"
    if backend == "llamacpp" and not gguf:
        raise ValueError(
            f"{source}='llamacpp' runs the packaged GGUF models only ({', '.join(n for n, m in PACKAGED_MODELS.items() if m.gguf_file)}); "
            f"{handle.name!r} is a {handle.source} model: use backend='torch' (or 'auto')"
        )
    return backend


def served_handle(name: str, tokenizer: str | None = None) -> ModelHandle:
    """The handle of a model served as ``name`` whose prompts are built by the packaged model
    ``tokenizer`` (default ``name``). When that model is packaged the handle is its packaged entry
    under the served name (so prompt style, answer end, family and kind are the in-process ones,
    known without loading anything) with the served fingerprint; its weights are never loaded here.
    Otherwise a ``server`` handle: the runtime refuses it with one line at the first computation."""
    # A tokenizer given as a folder or hub id builds the prompts; the style is still the packaged
    # model's when the served name is one (a vLLM server of the torch runtime's converted folder).
    prompt_model = PACKAGED_MODELS.get(tokenizer) if tokenizer in PACKAGED_MODELS else PACKAGED_MODELS.get(name)
    if prompt_model is not None:
        return ModelHandle(name=name, source="packaged", location=prompt_model.name, _fingerprint=f"served:{name}",
                           _kind=prompt_model.kind)
    return ModelHandle(name=name, source="server", location=name, _fingerprint=f"served:{name}", _kind="causal")


@dataclass
class RunReport:
    """What the last call did: outputs computed vs read from the cache, truncations, compute."""

    operation: str
    computed: int = 0
    from_cache: int = 0
    truncated: int = 0
    stats: ForwardStats = field(default_factory=ForwardStats)
    #: Outputs that were missing when the call began and that another run sharing the cache stored
    #: while this call ran (counted in ``from_cache``, not computed here).
    computed_elsewhere: int = 0

    def summary(self) -> str:
        return (
            f"{self.operation}: computed {self.computed}, from cache {self.from_cache}, truncated {self.truncated}, "
            f"tokens computed {self.stats.tokens_computed}, rows computed {self.stats.padded_tokens}"
        )


@dataclass
class _Prepared:
    """A missing request turned into token ids (and how it was truncated)."""

    index: int  # position in the caller's list
    key: str
    request: dict[str, Any]
    payload: Any
    truncated: bool = False


#: How one operation computes a step of prepared requests: (step, model, tokenizer, report, progress) -> outputs.
_Compute = Callable[[list[_Prepared], Any, Any, RunReport, Callable[[int], None] | None], list[dict[str, Any]]]


class Judge:
    """Label probabilities, sampling, sequence log-likelihoods and generation for one model.

    ``cache``: an :class:`nlgjudge.cache.OutputCache` (``None`` = the default cache file,
    ``False`` = no caching, for experiments only). ``truncate``: cut prompts that exceed the
    context window from the left (counted in :attr:`last_run`) instead of raising.
    ``backend``: "auto" (llama.cpp for the packaged GGUF models, torch otherwise), "torch" or
    "llamacpp" (see the module docstring); ``None`` reads ``$NLGJUDGE_BACKEND`` (default "auto").
    ``threads``: llama.cpp threads (default ``$NLGJUDGE_THREADS``, else the usable cores).
    ``backend="server"``: ``model`` is the name the server serves; ``server_url`` (default
    ``$NLGJUDGE_SERVER_URL``), ``server_tokenizer`` (the packaged model whose tokenizer and chat
    template build the prompts; default ``model``), ``server_identity`` (default
    ``$NLGJUDGE_SERVER_IDENTITY``: what the cache keys name as the served weights and settings; needed
    with a cache when the server reports no identity of its own), ``max_concurrency`` requests in flight,
    ``request_timeout`` seconds per try, ``request_retries`` extra tries on 429/5xx/connection errors.
    ``chunk_size``: the most requests computed in one step and stored in one cache transaction;
    ``commit_seconds``: steps of about that many seconds of computing instead (a run killed at any
    moment loses at most the step in flight; long studies use it). Runs sharing a cache file do
    not compute the same request at the same time (:mod:`nlgjudge.cache.claims`): one waits for the
    other's output.
    ``device``/``dtype`` (torch only; defaults ``$NLGJUDGE_DEVICE``/``$NLGJUDGE_DTYPE``, else CUDA
    when available with bf16 or fp16, else the CPU in fp32): see :mod:`nlgjudge.models.device`.
    """

    def __init__(
        self,
        model: str | ModelHandle,
        cache: Any = None,
        study: str | None = None,
        *,
        truncate: bool = False,
        context_window: int | None = None,
        token_budget: int = 1024,
        state_budget: int = 16384,
        chunk_size: int = 256,
        commit_seconds: float | None = None,
        progress: bool = True,
        backend: str | None = None,
        threads: int | None = None,
        server_url: str | None = None,
        server_tokenizer: str | None = None,
        server_identity: str | None = None,
        max_concurrency: int = 4,
        request_timeout: float = 120.0,
        request_retries: int = 3,
        device: str | None = None,
        dtype: str | None = None,
    ) -> None:
        self._server: Any = None
        wanted = backend if backend is not None else (os.environ.get(BACKEND_ENV, "").strip() or None)
        if wanted == "server" and not isinstance(model, ModelHandle):
            from nlgjudge.engine.server import ServerRuntime

            if truncate:
                raise ValueError("truncate=True is not available with backend='server' (the server reads text, not cut token ids)")
            name = str(model).strip()
            self.handle = served_handle(name, server_tokenizer)
            self._server = ServerRuntime(
                name, server_url, tokenizer=server_tokenizer, max_concurrency=max_concurrency,
                timeout=request_timeout, retries=request_retries, identity=server_identity,
            )
        else:
            if server_identity is not None:
                raise ValueError("server_identity names the weights a server serves: it is for backend='server' only")
            self.handle = model if isinstance(model, ModelHandle) else resolve_model(model)
        # A served handle may describe its packaged prompt model (source "packaged"): the runtime is the server's.
        self.backend = "server" if self._server is not None else choose_backend(self.handle, backend)
        if self.backend == "llamacpp" and (wanted or "auto") == "auto":  # torch if llama.cpp fails its check
            self.backend = importlib.import_module("nlgjudge.engine.llamacpp.health").auto_backend(self.handle.name)
        if threads is not None:
            from nlgjudge.engine.llamacpp import thread_count

            thread_count(threads)  # validate now, not at the first computation
        self.threads = threads
        if (device is not None or dtype is not None) and self.backend != "torch":
            raise ValueError(f"device/dtype choose where the torch runtime computes; this judge runs on {self.backend}")
        self._device_setting, self._dtype_setting = device, dtype
        self._placement: Placement | None = None
        self._runner_layout: Any = None  # the torch runtime's tree layout (models.device.choose_torch_runner)
        self._llama: Any = None  # the llama.cpp model, loaded on the first computation
        self._llama_tokenizer: Any = None
        if cache is None:
            from nlgjudge.cache import OutputCache

            cache = OutputCache()
        self.cache = cache if cache is not False else None
        self.study = study
        self.truncate = truncate
        self.context_window = context_window
        self.token_budget = token_budget
        self.state_budget = state_budget
        self.chunk_size = chunk_size
        if commit_seconds is not None and not commit_seconds > 0:
            raise ValueError(f"commit_seconds must be a positive number of seconds (or None), got {commit_seconds!r}")
        self.commit_seconds = commit_seconds
        self._seconds_per_request: dict[str, float] = {}  # operation -> measured compute seconds per request
        self.progress = progress
        self.last_run = RunReport("none")
        self.reports: list[RunReport] = []
        from nlgjudge.cache import CacheStats

        self.cache_stats = CacheStats()  # computed vs cached over this judge's lifetime, per operation
        # Prompt key/values shared from label_probs to sample/generate, only inside sharing_prompts().
        self._shared_prompts: dict[tuple[int, ...], Any] | None = None
        self._shared_bytes_left = 0

    # ---- runtime ------------------------------------------------------------------------------
    @property
    def fingerprint(self) -> str:
        """The weight fingerprint in this judge's cache keys: the model's own for torch (the keys
        of earlier releases), with ``|runtime=llama.cpp`` appended for llama.cpp."""
        if self.backend == "llamacpp":
            from nlgjudge.engine.llamacpp import FINGERPRINT_SUFFIX

            return self.handle.fingerprint + FINGERPRINT_SUFFIX
        if self.backend == "server":
            if self.cache is not None:  # keys that could be another model's are never written or read
                self._server.require_identity()
            return self._server.fingerprint  # asks the server once what it serves
        # CPU fp32 adds nothing: the keys of every earlier release.
        return self.handle.fingerprint + self.placement.fingerprint_suffix

    @property
    def placement(self) -> Placement:
        """Where the torch runtime computes (device and dtype), chosen once per judge."""
        if self.backend != "torch":
            return DEFAULT_PLACEMENT
        if self._placement is None:
            from nlgjudge.models.device import choose_placement

            self._placement = choose_placement(self._device_setting, self._dtype_setting)
        return self._placement

    def runtime_description(self) -> str:
        """Which runtime computes this judge's outputs, for chapters to state under their numbers."""
        from importlib import metadata

        def installed(name: str) -> str:
            try:
                return metadata.version(name)
            except metadata.PackageNotFoundError:
                return "not installed"

        if self.backend == "server":
            return self._server.describe()
        spec = PACKAGED_MODELS.get(self.handle.location) if self.handle.source == "packaged" else None
        quant = f"GGUF {spec.quantisation}" if spec is not None and spec.quantisation else "GGUF"
        if self.backend == "llamacpp":
            from nlgjudge.engine.llamacpp import PINNED_VERSION

            # A book built without the backend reads outputs computed on the pinned release: name it,
            # so the page does not depend on what the building machine has installed.
            version = installed("llama-cpp-python")
            if version not in (PINNED_VERSION, "not installed"):
                version = f"{version}, not the pinned {PINNED_VERSION}"
            else:
                version = PINNED_VERSION
            built = ""
            if self._llama is not None:  # computed in this process: say how the library was built
                from nlgjudge.engine.llamacpp import health

                built = f", {health.build_summary() or 'built without a record of its flags'}"
            return f"llama.cpp (llama-cpp-python {version}, {quant} as shipped{built})"
        weights = f", de-quantised {quant}" if spec is not None and spec.gguf_file else ""
        where = "fp32" if self.placement.is_default else f"{self.placement.dtype} on {self.placement.device}"
        return f"transformers (transformers {installed('transformers')}, torch {installed('torch')} {where}{weights})"

    def load(self) -> None:
        """Load this judge's runtime now (otherwise it loads at the first computation)."""
        self._load()

    def _load(self) -> tuple[Any, Any]:
        """(model, tokenizer) of this judge's runtime: the torch model, or the llama.cpp model."""
        if self.backend == "torch":
            return self.handle.load(self.placement)
        if self.backend == "server":
            self._server.capabilities()  # the one probe: refuses early, with one line, what it cannot do
            if self.cache is not None:
                self._server.require_identity()  # and, before any judging, keys that could be another model's
            return self._server, self._server.tokenizer()
        if self._llama is None:
            from nlgjudge.engine import llamacpp
            from nlgjudge.models.packaged import gguf_path

            llamacpp.import_llama_cpp()  # the clear error first, before assembling or reading weights
            spec = PACKAGED_MODELS[self.handle.location]
            path = gguf_path(spec)
            self._llama_tokenizer = llamacpp.load_tokenizer(spec.name, str(path))
            self._llama = llamacpp.load_model(path, self.threads)
        return self._llama, self._llama_tokenizer

    # ---- public operations ------------------------------------------------------------------
    def label_probs(self, requests: Sequence[ClassifyRequest]) -> list[ClassifyResult]:
        """P(label | prompt) for each request, normalised over its labels (seed 000 eq. 3)."""
        if self.backend == "server" and any(r.protect_texts is False for r in requests):
            raise EngineInputError(UNPROTECTED_ON_SERVER)  # before the server is asked anything
        values = self._run("label_probs", requests, _keyed("label_probs", requests), self._compute_label_probs)
        results = []
        for r, value in zip(requests, values, strict=True):
            logprobs = self._cached_logprobs(value, len(r.labels)) if value["_from_cache"] else np.asarray(value["logprobs"], dtype=float)
            results.append(
                ClassifyResult(
                    probs=normalise(logprobs),
                    logprobs=logprobs,
                    from_cache=value["_from_cache"],
                    truncated=value["truncated"],
                    meta=r.meta,
                )
            )
        return results

    def _cached_logprobs(self, value: Any, n_labels: int) -> np.ndarray:
        """A stored answer's log-probabilities, checked as strictly as a server's (the cache is a file anyone
        can edit or damage): one number per label, none above 0, none NaN."""
        from nlgjudge.cache import CacheDamagedError
        from nlgjudge.cache.store import damaged_advice

        raw = value.get("logprobs")
        try:
            found = np.asarray(raw, dtype=float)
        except (TypeError, ValueError):
            found = None
        if (found is None or found.ndim != 1 or len(found) != n_labels or np.isnan(found).any() or (found > 1e-3).any()
                or isinstance(raw, (str, bytes))):
            path = getattr(self.cache, "path", "the output cache")
            raise CacheDamagedError(f"{path}: a stored judgment is damaged (its log-probabilities read {str(raw)[:60]!r}, "
                                    f"where {n_labels} numbers at most 0 belong); {damaged_advice(Path(str(path)))}.")
        return found

    def sample(self, requests: Sequence[SampleRequest]) -> list[SampleResult]:
        """K samples per request at a temperature (seed 000 eqs. 4-5), seeded per request."""
        values = self._run("sample", requests, _keyed("sample", requests), self._compute_samples)
        return [
            SampleResult(texts=list(v["texts"]), from_cache=v["_from_cache"], truncated=v["truncated"], meta=r.meta)
            for r, v in zip(requests, values, strict=True)
        ]

    def generate(self, requests: Sequence[GenerateRequest]) -> list[GenerateResult]:
        """Greedy generation, batched (e.g. summaries, seed 003 Table 4)."""
        values = self._run("generate", requests, _keyed("generate", requests), self._compute_generate)
        return [
            GenerateResult(text=v["text"], from_cache=v["_from_cache"], truncated=v["truncated"], meta=r.meta)
            for r, v in zip(requests, values, strict=True)
        ]

    def loglikelihood(self, requests: Sequence[LoglikRequest]) -> list[LoglikResult]:
        """Per-token log p(target | condition) (seed 003 eq. 2 before weighting)."""
        values = self._run("loglikelihood", requests, _keyed("loglikelihood", requests), self._compute_loglik)
        return [
            LoglikResult(
                token_logprobs=np.asarray(v["token_logprobs"], dtype=float),
                tokens=list(v["tokens"]),
                from_cache=v["_from_cache"],
                truncated=v["truncated"],
                meta=r.meta,
            )
            for r, v in zip(requests, values, strict=True)
        ]

    def cached_mask(self, operation: str, requests: Sequence[Any]) -> list[bool]:
        """Which requests already have an output in the cache (loads no model, computes nothing)."""
        if operation not in _KEYED_FIELDS:
            raise ValueError(f"unknown operation {operation!r}; choose one of {sorted(_KEYED_FIELDS)}")
        if self.cache is None or not requests:
            return [False] * len(requests)
        keys = [self._key(operation, k) for k in _keyed(operation, requests)]
        found = self.cache.get_many(keys)
        return [k in found for k in keys]

    @contextmanager
    def sharing_prompts(self, max_bytes: int = 3 * 2**30) -> Iterator[None]:
        """Within this block, a prompt whose label probabilities are computed keeps its key/values,
        and sampling or generation from the same prompt starts from them instead of computing the
        prompt again (prompt scoring reads one prompt both ways: about a third of its compute).

        At most ``max_bytes`` of key/values are held (prompts beyond that are simply recomputed);
        all are released when the block ends. Decoder-only models without sliding-window layers
        on the torch runtime only; elsewhere the block changes nothing (llama.cpp keeps the last
        prompt's key/values between calls anyway). Results equal those computed without it up to
        floating-point reassociation (the same tokens, positions and attended keys).
        """
        if self._shared_prompts is not None:
            raise RuntimeError("sharing_prompts() blocks cannot be nested")
        self._shared_prompts, self._shared_bytes_left = {}, int(max_bytes)
        try:
            yield
        finally:
            self._shared_prompts, self._shared_bytes_left = None, 0

    def _prompts_to_keep(self, prompts: Sequence[list[int]], model: Any, runner: CausalRunner) -> list[list[int]]:
        """Prompts whose key/values fit in what is left of the sharing budget (none outside a block)."""
        if self._shared_prompts is None or runner.sliding_window is not None:
            return []
        per_token = _kv_bytes_per_token(model)
        chosen: dict[tuple[int, ...], list[int]] = {}
        for ids in prompts:
            key = tuple(ids)
            if key in chosen or key in self._shared_prompts:
                continue
            cost = per_token * len(ids)
            if cost > self._shared_bytes_left:
                break
            self._shared_bytes_left -= cost
            chosen[key] = ids
        return list(chosen.values())

    # ---- the cache-first driver ---------------------------------------------------------------
    def request_keys(self, operation: str, requests: Sequence[Any]) -> list[str]:
        """The cache keys this judge stores the outputs of ``requests`` under (no model is loaded):
        what a study records so that every request, also one sharing an output, has its line."""
        return [self._key(operation, keyed) for keyed in _keyed(operation, requests)]

    def _key(self, operation: str, request: dict[str, Any]) -> str:
        from nlgjudge.cache import request_key

        if self.truncate:
            request = {**request, "truncate": "left"}
        return request_key(self.handle.name, self.fingerprint, operation, request)

    def _run(
        self,
        operation: str,
        requests: Sequence[Any],
        keyed: list[dict[str, Any]],
        compute: _Compute,
    ) -> list[dict[str, Any]]:
        report = RunReport(operation)
        keys = [self._key(operation, k) for k in keyed]
        found: dict[str, Any] = {}
        if self.cache is not None and keys:
            found = self.cache.get_many(keys, study=self.study) if self.study else self.cache.get_many(keys)
        values: dict[str, dict[str, Any]] = {k: {**v, "_from_cache": True} for k, v in found.items()}
        missing_first: dict[str, int] = {}
        for index, key in enumerate(keys):
            if key not in values and key not in missing_first:
                missing_first[key] = index
        report.from_cache = sum(1 for k in keys if k in found)
        if missing_first:
            model, tokenizer = self._load()
            todo = [
                _Prepared(index=i, key=k, request=keyed[i], payload=requests[i]) for k, i in missing_first.items()
            ]
            # Neighbours in sorted prompt order share prefixes; steps are written as they finish.
            todo.sort(key=lambda p: _sort_text(p.request))
            bar = self._progress_bar(operation, len(todo))
            try:
                while todo:
                    deferred: list[_Prepared] = []
                    for step in self._steps(operation, todo):
                        others = self._compute_step(operation, step, requests, values, model, tokenizer, report, compute)
                        deferred += others
                        if bar is not None:
                            bar.update(len(step) - len(others))
                    # Steps another run sharing the cache was computing: wait for it to store them and
                    # read them; what it left undone (it was killed) is computed here, in a next round.
                    todo = self._after_other_runs(deferred, values, report)
                    if bar is not None:
                        bar.update(len(deferred) - len(todo))
            finally:
                if bar is not None:
                    bar.close()
        report.computed = len(missing_first) - report.computed_elsewhere
        self.cache_stats.record(operation, computed=report.computed, from_cache=report.from_cache)
        self.last_run = report
        self.reports.append(report)
        if keys:
            log.info("%s", report.summary())
        return [values[k] for k in keys]

    def _steps(self, operation: str, todo: list[_Prepared]) -> Iterator[list[_Prepared]]:
        """``todo`` cut into steps, each computed in one call and stored in one cache transaction:
        :attr:`chunk_size` requests, or with :attr:`commit_seconds` about that many seconds of
        computing each (sized by this judge's measured rate for the operation, :data:`FIRST_STEP`
        requests before there is one, never more than :attr:`chunk_size`)."""
        position = 0
        while position < len(todo):
            size = self.chunk_size
            if self.commit_seconds is not None:
                rate = self._seconds_per_request.get(operation)
                size = FIRST_STEP if rate is None else max(1, int(self.commit_seconds / rate))
                size = min(size, self.chunk_size)
            yield todo[position : position + size]
            position += size

    def _compute_step(
        self,
        operation: str,
        step: list[_Prepared],
        requests: Sequence[Any],
        values: dict[str, dict[str, Any]],
        model: Any,
        tokenizer: Any,
        report: RunReport,
        compute: _Compute,
    ) -> list[_Prepared]:
        """Compute and store one step (into ``values``); returns the requests another run sharing the
        cache is computing now (claimed by it, :mod:`nlgjudge.cache.claims`), left to it."""
        from nlgjudge.cache.claims import claim

        if self.cache is None:
            self._compute_and_store(operation, step, requests, values, model, tokenizer, report, compute)
            return []
        with claim(self.cache, [p.key for p in step]) as mine:
            others = [p for p in step if p.key not in mine]
            step = [p for p in step if p.key in mine]
            # Another run may have stored some of them since this call read the cache.
            self._read_stored(step, values, report)
            step = [p for p in step if p.key not in values]
            if step:
                self._compute_and_store(operation, step, requests, values, model, tokenizer, report, compute)
        return others

    def _read_stored(self, prepared: list[_Prepared], values: dict[str, dict[str, Any]], report: RunReport) -> None:
        """Outputs of ``prepared`` that another run stored meanwhile, into ``values`` (as cached)."""
        if self.cache is None or not prepared:
            return
        keys = [p.key for p in prepared]
        found = self.cache.get_many(keys, study=self.study) if self.study else self.cache.get_many(keys)
        for key, value in found.items():
            if key not in values:
                values[key] = {**value, "_from_cache": True}
                report.computed_elsewhere += 1
                report.from_cache += 1

    def _after_other_runs(self, deferred: list[_Prepared], values: dict[str, dict[str, Any]],
                          report: RunReport) -> list[_Prepared]:
        """Wait for the runs computing ``deferred`` to let go of them (one claim at a time, so two
        waiting runs never wait on each other), read what they stored; returns what is still missing."""
        if not deferred:
            return []
        from nlgjudge.cache.claims import claim

        log.info("%s: %d outputs are being computed by another run sharing the cache; waiting for them",
                 self.handle.name, len(deferred))
        for key in sorted({p.key for p in deferred}):
            with claim(self.cache, [key], wait=True):
                pass
        self._read_stored(deferred, values, report)
        return [p for p in deferred if p.key not in values]

    def _compute_and_store(
        self,
        operation: str,
        step: list[_Prepared],
        requests: Sequence[Any],
        values: dict[str, dict[str, Any]],
        model: Any,
        tokenizer: Any,
        report: RunReport,
        compute: _Compute,
    ) -> None:
        started = time.perf_counter()
        computed = compute(step, model, tokenizer, report, None)
        # The measured rate sizes the next steps (commit_seconds): a kill loses about one step.
        self._seconds_per_request[operation] = max((time.perf_counter() - started) / len(step), 1e-9)
        entries = []
        for prepared, value in zip(step, computed, strict=True):
            _check_finite(value, operation)
            value = {**value, "truncated": prepared.truncated}
            report.truncated += prepared.truncated
            values[prepared.key] = {**value, "_from_cache": False}
            if self.cache is not None:
                from nlgjudge.cache import CacheEntry

                request = dict(prepared.request)
                if self.truncate:
                    request["truncate"] = "left"
                entries.append(
                    CacheEntry(
                        key=prepared.key,
                        model_id=self.handle.name,
                        fingerprint=self.fingerprint,
                        operation=operation,
                        request=request,
                        value=value,
                        study=self.study,
                        meta=dict(getattr(requests[prepared.index], "meta", {}) or {}),
                    )
                )
        if entries:
            self.cache.put_many(entries)

    def _progress_bar(self, operation: str, total: int) -> Any:
        if not self.progress or total < 2:
            return None
        from tqdm.auto import tqdm

        return tqdm(total=total, desc=f"{self.handle.name} {operation}", unit="req", mininterval=2.0)

    # ---- helpers shared by the computations -----------------------------------------------------
    def window(self, model: Any) -> int | None:
        if self.context_window is not None:
            return self.context_window
        if self.backend == "server":  # what the server says it reads, else the packaged model's; None: its own check
            return self._server.window() if self._server is not None else None
        if self.backend == "llamacpp":
            return int(model.n_ctx_train) or None
        cfg = model.config
        for name in ("max_position_embeddings", "n_positions"):
            value = getattr(cfg, name, None)
            if isinstance(value, int) and value > 0:
                # T5 has relative positions: its n_positions is only advisory, no hard window.
                if getattr(cfg, "model_type", "") in {"t5", "mt5", "umt5"}:
                    return None
                return value
        return None

    def _fit(self, prepared: _Prepared, prompt_ids: list[int], extra: int, model: Any) -> list[int]:
        """Check prompt + ``extra`` tokens against the context window; left-truncate if allowed."""
        limit = self.window(model)
        if limit is None or len(prompt_ids) + extra <= limit:
            return prompt_ids
        excess = len(prompt_ids) + extra - limit
        if not self.truncate or excess >= len(prompt_ids):
            raise ContextTooLongError(
                f"prompt of {len(prompt_ids)} tokens + {extra} continuation tokens exceeds the context window of "
                f"{limit} tokens for {self.handle.name}; shorten the text or create the Judge with truncate=True "
                "(drops the oldest prompt tokens; truncations are counted)"
            )
        prepared.truncated = True
        return prompt_ids[excess:]

    def _causal_runner(self, model: Any, report: RunReport) -> CausalRunner | LlamaCppRunner:
        if self.backend == "llamacpp":
            from nlgjudge.engine.llamacpp import LlamaCppRunner

            return LlamaCppRunner(model, stats=report.stats)
        from nlgjudge.engine.prefix_tree import CausalRunner
        from nlgjudge.models.device import choose_torch_runner

        token_budget, state_budget = self._budgets(model)
        if self._runner_layout is None:  # chosen once per judge, like its placement
            self._runner_layout = choose_torch_runner(self.placement)
        layout = self._runner_layout
        if layout.name == "packed":
            from nlgjudge.engine.packed_tree import PackedRunner

            runner: CausalRunner = PackedRunner(model, chunk_tokens=layout.chunk_tokens, attention=layout.attention,
                                                token_budget=token_budget, state_budget=state_budget)
        else:
            runner = CausalRunner(model, token_budget=token_budget, state_budget=state_budget)
        runner.stats = report.stats
        return runner

    def _budgets(self, model: Any) -> tuple[int, int]:
        """(token_budget, state_budget): the judge's own on the CPU, grown to the GPU's free memory there."""
        if self.placement.device_type == "cpu":
            return self.token_budget, self.state_budget
        from nlgjudge.models.device import batch_budgets

        return batch_budgets(self.placement, self.token_budget, self.state_budget, _kv_bytes_per_token(model))

    def _seq2seq_runner(self, model: Any, report: RunReport) -> Seq2SeqRunner:
        from nlgjudge.engine.seq2seq import Seq2SeqRunner

        runner = Seq2SeqRunner(model, token_budget=max(self._budgets(model)[0], 512))
        runner.stats = report.stats
        return runner

    # ---- computations per operation -------------------------------------------------------------
    def _compute_label_probs(self, chunk: list[_Prepared], model: Any, tokenizer: Any, report: RunReport, _: Any) -> list[dict[str, Any]]:
        if self.backend == "server":
            return model.compute("label_probs", [p.payload for p in chunk])
        items: list[tuple[list[int], Any]] = []
        spans: list[tuple[int, int]] = []
        for prepared in chunk:
            r: ClassifyRequest = prepared.payload
            labels = encode_labels(tokenizer, r.labels, r.label_end)
            prompt_ids = self._fit(prepared, encode_prompt(tokenizer, r.prompt, r.response_prefix, protect_texts=r.protect_texts),
                                   max(map(len, labels)), model)
            spans.append((len(items), len(labels)))
            for label in labels:
                if self.handle.kind == "seq2seq":
                    items.append((prompt_ids, label))
                else:
                    items.append((prompt_ids + label, len(prompt_ids)))
        if self.handle.kind == "seq2seq":
            scores = self._seq2seq_runner(model, report).score(items)
        elif self.backend == "llamacpp":
            from nlgjudge.engine.tree import score_continuations

            scores = score_continuations(self._causal_runner(model, report), items)
        else:
            from nlgjudge.engine.decoding import PromptState
            from nlgjudge.engine.prefix_tree import score_continuations_keeping

            runner = self._causal_runner(model, report)
            prompts = [items[start][0][: items[start][1]] for start, _ in spans]
            scores, kept = score_continuations_keeping(runner, items, self._prompts_to_keep(prompts, model, runner))
            if self._shared_prompts is not None:
                for key, node in kept.items():
                    self._shared_prompts[key] = PromptState(node.state, node.last_logprobs)
        return [
            {"logprobs": [float(sum(scores[start + j])) for j in range(count)]}
            for start, count in spans
        ]

    def _compute_loglik(self, chunk: list[_Prepared], model: Any, tokenizer: Any, report: RunReport, _: Any) -> list[dict[str, Any]]:
        if self.backend == "server":
            return model.compute("loglikelihood", [p.payload for p in chunk])
        items: list[Any] = []
        targets: list[list[int]] = []
        for prepared in chunk:
            r: LoglikRequest = prepared.payload
            if self.handle.kind == "seq2seq":
                # Texts under judgment are data: control strings in them stay plain text.
                cond = list(tokenizer(r.condition, split_special_tokens=True)["input_ids"])
                target = list(tokenizer(text_target=r.target, split_special_tokens=True)["input_ids"])
                cond = self._fit(prepared, cond, 0, model)
                items.append((cond, target))
            else:
                cond = encode_text(tokenizer, r.condition, True)
                target = encode_text(tokenizer, r.target, False)
                if not cond or not target:
                    raise EngineInputError("condition or target encodes to no tokens")
                cond = self._fit(prepared, cond, len(target), model)
                items.append((cond + target, len(cond)))
            targets.append(target)
        if self.handle.kind == "seq2seq":
            scores = self._seq2seq_runner(model, report).score(items)
        else:
            from nlgjudge.engine.tree import score_continuations

            scores = score_continuations(self._causal_runner(model, report), items)
        return [
            {"token_logprobs": list(s), "tokens": tokenizer.convert_ids_to_tokens(t)}
            for s, t in zip(scores, targets, strict=True)
        ]

    def _decode(self, chunk: list[_Prepared], model: Any, tokenizer: Any, report: RunReport, jobs_of: Callable[[Any, list[int]], DecodeJob]) -> list[list[list[int]]]:
        jobs = []
        for prepared in chunk:
            r = prepared.payload
            prompt_ids = encode_prompt(tokenizer, r.prompt, r.response_prefix)
            extra = r.max_new_tokens if self.handle.kind != "seq2seq" else 0
            jobs.append(jobs_of(r, self._fit(prepared, prompt_ids, extra, model)))
        if self.backend == "llamacpp":
            from nlgjudge.engine.llamacpp import stop_ids

            runner = self._causal_runner(model, report)
            return runner.decode(jobs, stop_ids(model, tokenizer))  # type: ignore[union-attr]
        from nlgjudge.engine.decoding import decode_causal, decode_seq2seq

        if self.handle.kind == "seq2seq":
            if self.placement.device_type != "cpu":
                raise EngineInputError(
                    f"sampling and generation with the encoder-decoder {self.handle.name!r} run on the CPU only; "
                    f"create the Judge with device='cpu' (label probabilities and log-likelihoods run on {self.placement.device})"
                )
            return decode_seq2seq(self._seq2seq_runner(model, report), tokenizer, jobs)
        return decode_causal(self._causal_runner(model, report), tokenizer, jobs, known=self._shared_prompts)

    def _compute_samples(self, chunk: list[_Prepared], model: Any, tokenizer: Any, report: RunReport, _: Any) -> list[dict[str, Any]]:
        if self.backend == "server":
            return model.compute("sample", [p.payload for p in chunk])
        outputs = self._decode(
            chunk, model, tokenizer, report,
            lambda r, ids: DecodeJob(ids, r.n_samples, float(r.temperature), r.max_new_tokens, r.seed),
        )
        return [{"texts": [tokenizer.decode(s, skip_special_tokens=True) for s in samples]} for samples in outputs]

    def _compute_generate(self, chunk: list[_Prepared], model: Any, tokenizer: Any, report: RunReport, _: Any) -> list[dict[str, Any]]:
        if self.backend == "server":
            return model.compute("generate", [p.payload for p in chunk])
        outputs = self._decode(chunk, model, tokenizer, report, lambda r, ids: DecodeJob(ids, 1, 0.0, r.max_new_tokens, 0))
        return [{"text": tokenizer.decode(samples[0], skip_special_tokens=True)} for samples in outputs]


def normalise(logprobs: np.ndarray) -> np.ndarray:
    """Softmax over the labels' whole-sequence log-probabilities (seed 000 eq. 3)."""
    if not np.all(np.isfinite(logprobs)):
        raise NumericalError(f"non-finite label log-probabilities {logprobs.tolist()}")
    shifted = np.exp(logprobs - logprobs.max())
    return shifted / shifted.sum()


def _sort_text(request: dict[str, Any]) -> str:
    if "text" in request:
        return str(request["text"])
    if "messages" in request:
        return "\x00".join(m["content"] for m in request["messages"]) + "\x00" + str(request.get("response_prefix", ""))
    return str(request.get("condition", "")) + "\x00" + str(request.get("target", ""))


def _check_finite(value: dict[str, Any], operation: str) -> None:
    for name in ("logprobs", "token_logprobs"):
        if name in value and not all(math.isfinite(x) for x in value[name]):
            raise NumericalError(
                f"{operation}: the model produced NaN or infinite log-probabilities {value[name]!r}; check the "
                "weights (fp32) and the inputs"
            )



def _kv_bytes_per_token(model: Any) -> int:
    """Bytes of key/values one token occupies in every layer (keys and values)."""
    cfg = model.config
    heads = getattr(cfg, "num_key_value_heads", None) or getattr(cfg, "num_attention_heads", None) or cfg.n_head
    head_dim = getattr(cfg, "head_dim", None) or cfg.hidden_size // (getattr(cfg, "num_attention_heads", None) or cfg.n_head)
    layers = getattr(cfg, "num_hidden_layers", None) or cfg.n_layer
    element = next(model.parameters()).element_size()
    return 2 * int(layers) * int(heads) * int(head_dim) * element
