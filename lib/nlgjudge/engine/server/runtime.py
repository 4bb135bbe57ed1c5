"""The served runtime the judge drives: one model on one server, its tokenizer, requests in flight.

What it guarantees: a request means the same text as on the in-process runtimes (rendered by the
same Hugging Face tokenizer and chat template, sent raw to ``/v1/completions``); the server is
asked once what it serves and what it can do (:mod:`~nlgjudge.engine.server.capabilities`) and an
operation it cannot do exactly is refused with one line before anything is sent; at most
``max_concurrency`` requests are in flight, submitted in the order the judge gives them (sorted by
prompt, so neighbours share a prefix and the server's prefix cache can hit); results come back in
that order whatever order the server answers in.
"""

from __future__ import annotations

import json
import logging
import os
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from nlgjudge.engine.prompting import control_strings_in, encode_labels, escape_control, render_prompt
from nlgjudge.engine.requests import EngineInputError
from nlgjudge.engine.server import generation
from nlgjudge.engine.server.answers import AnswerWatch
from nlgjudge.engine.server.capabilities import (
    IDENTITY_ENV,
    Capabilities,
    fingerprint,
    identified,
    probe,
    served_entry,
    system_fingerprint,
)
from nlgjudge.engine.server.client import ServerClient, ServerError, holds_secret, scrub
from nlgjudge.engine.server.scoring import ServerScorer, piece_texts
from nlgjudge.config import expand_path

DEFAULT_TOP_LOGPROBS = 20  # vLLM's default cap (max_logprobs); OpenAI's own API allows 5

log = logging.getLogger(__name__)


class ServerRuntime:
    """One served model: ``model`` as the server names it, prompts built with ``tokenizer``'s tokenizer."""

    def __init__(self, model: str, url: str | None = None, *, tokenizer: str | None = None,
                 max_concurrency: int = 4, timeout: float = 120.0, retries: int = 3, backoff: float = 0.5,
                 top_logprobs: int = DEFAULT_TOP_LOGPROBS, identity: str | None = None) -> None:
        if not isinstance(max_concurrency, int) or max_concurrency < 1:
            raise ValueError(f"max_concurrency must be a whole number >= 1, got {max_concurrency!r}")
        if not (timeout > 0):
            raise ValueError(f"timeout must be > 0 seconds, got {timeout!r}")
        self.model = model
        self.tokenizer_name = tokenizer
        stated = identity if identity is not None else os.environ.get(IDENTITY_ENV, "")
        self.identity = check_identity(stated) or None
        self.max_concurrency = max_concurrency
        self.top_logprobs = int(top_logprobs)
        self.client = ServerClient(url, timeout=timeout, retries=retries, backoff=backoff, pool=max_concurrency)
        self._lock = threading.Lock()
        self._entry: dict[str, Any] | None = None
        self._system: tuple[str | None] | None = None  # (system_fingerprint,) once asked
        self._caps: Capabilities | None = None
        self._tokenizer: Any = None
        self._escape_warned = False
        self._fingerprint: str | None = None  # computed once: every request key reads it
        self._answer_watch: AnswerWatch | None = None

    # ---- what the server serves -----------------------------------------------------------------
    @property
    def fingerprint(self) -> str:
        """The cache keys' fingerprint: served id, ``runtime=server``, the server's system fingerprint
        and revision fields, the stated identity (:mod:`~nlgjudge.engine.server.capabilities`)."""
        if self._fingerprint is not None:
            return self._fingerprint
        value = fingerprint(self.model, self.entry(), self.system_fingerprint(), self.identity) + self._template_part()
        reported = f"{self.system_fingerprint()} {self.entry()}"  # what the server said, before any field is keyed
        if scrub(value) != value or scrub(reported) != reported:  # a server that reflects the Authorization header
            raise ServerError(
                f"{self.client.where} reports an identity (its system_fingerprint or model entry) that holds what looks "
                "like a credential, so it is not stored in the cache keys nor printed; state the served weights with "
                "--server-identity TEXT (server_identity=) and have the server stop echoing the key")
        self._fingerprint = value
        return value

    def _template_part(self) -> str:
        """A tokenizer from a folder or hub id renders the prompts with its own chat template, which is then
        part of the computation: its hash goes into the keys (a packaged tokenizer's template is the package's)."""
        from nlgjudge.models import PACKAGED_MODELS

        if (self.tokenizer_name or self.model) in PACKAGED_MODELS:
            return ""
        import hashlib

        template = getattr(self.tokenizer(), "chat_template", None)
        text = template if isinstance(template, str) else json.dumps(template, sort_keys=True, default=str)
        return f"|template=sha256:{hashlib.sha256(text.encode('utf-8', 'surrogatepass')).hexdigest()[:16]}"

    def system_fingerprint(self) -> str | None:
        self.entry()  # the model is served under this name (else one line) before anything else is asked
        with self._lock:
            if self._system is None:
                self._system = (system_fingerprint(self.client, self.model),)
            return self._system[0]

    @property
    def identified(self) -> bool:
        """Whether the keys say which weights and settings computed (the server's word or the user's)."""
        return identified(self.entry(), self.system_fingerprint(), self.identity)

    def require_identity(self) -> None:
        """One line when cached outputs could be another model's: the server says nothing identifying
        and the user stated nothing, so any model served under this name would share the keys."""
        if not self.identified:
            raise ServerError(
                f"{self.client.where} reports nothing that identifies the weights it serves as {self.model!r} "
                "(no system_fingerprint, revision or model metadata), so cached outputs of another model served "
                f"under that name would be read back: state it with --server-identity TEXT (server_identity=, "
                f"${IDENTITY_ENV}), e.g. the weight file's sha256 and the server's settings, or run without a cache")

    def entry(self) -> dict[str, Any]:
        with self._lock:
            if self._entry is None:
                self._entry = served_entry(self.client, self.model)
            return self._entry

    def window(self) -> int | None:
        """The served model's context window: the server's own ``max_model_len`` (vLLM), else the packaged
        model's (a served copy of it reads no more), else None (the server checks its own)."""
        from nlgjudge.models.packaged import PACKAGED_MODELS

        value = self.entry().get("max_model_len")
        if isinstance(value, int) and not isinstance(value, bool) and value > 0:
            return value
        packaged = PACKAGED_MODELS.get(self.tokenizer_name or self.model) or PACKAGED_MODELS.get(self.model)
        return packaged.context_window if packaged else None

    def capabilities(self) -> Capabilities:
        tokenizer = self.tokenizer()
        self.system_fingerprint()  # with the entry: what the keys name, asked with the probe
        with self._lock:
            if self._caps is None:
                self._caps = probe(self.client, self.model, tokenizer, self.top_logprobs)
            return self._caps

    def tokenizer(self) -> Any:
        """The tokenizer that builds the prompts: a packaged model's (loaded offline, as on the in-process
        runtimes), or one from a local Hugging Face folder or a hub id (``server_tokenizer``), so a
        client needs none of the weight packages -- e.g. the folder the torch runtime converts a
        packaged model into, which is what a vLLM server of that model serves."""
        if self._tokenizer is None:
            from nlgjudge.models import PACKAGED_MODELS

            name = self.tokenizer_name or self.model
            spec = PACKAGED_MODELS.get(name)
            if spec is None:
                self._tokenizer = load_named_tokenizer(name, self.model)
            elif spec.gguf_file is not None:
                from nlgjudge.engine.llamacpp.loading import load_tokenizer
                from nlgjudge.models.packaged import gguf_path

                self._tokenizer = load_tokenizer(spec.name, str(gguf_path(spec)))
            else:
                from nlgjudge.models import resolve_model

                self._tokenizer = resolve_model(spec.name).load()[1]
        return self._tokenizer

    def describe(self) -> str:
        caps = f"; {self._caps.describe()}" if self._caps is not None else ""
        return f"an OpenAI-compatible server ({self.client.where}, model {self.model!r} as served{caps})"

    def close(self) -> None:
        self.client.close()

    # ---- the four operations ----------------------------------------------------------------------
    def compute(self, operation: str, requests: list[Any]) -> list[dict[str, Any]]:
        """One output per request, in order; ``requests`` are the judge's request objects."""
        caps = self.capabilities()
        caps.refuse(operation, self.client.where)
        one = {"label_probs": self._label_probs, "loglikelihood": self._loglik,
               "sample": self._sample, "generate": self._generate}[operation]
        scorer = ServerScorer(self.client, self.model, caps, self._watch())
        if self.max_concurrency == 1 or len(requests) < 2:
            return [one(r, scorer) for r in requests]
        with ThreadPoolExecutor(max_workers=self.max_concurrency, thread_name_prefix="nlgjudge-server") as pool:
            try:
                return list(pool.map(lambda r: one(r, scorer), requests))
            except BaseException:  # Ctrl-C or a failed request: the other threads stop waiting to ask again
                self.client.cancel()
                pool.shutdown(wait=True, cancel_futures=True)
                raise

    def _watch(self) -> AnswerWatch:
        """One watch per run over who answers (:class:`~nlgjudge.engine.server.answers.AnswerWatch`)."""
        system = self.system_fingerprint()  # asked once (its own lock), before this one is taken
        with self._lock:
            if self._answer_watch is None:
                self._answer_watch = AnswerWatch(self.client.where, self.model, system)
            return self._answer_watch

    def _escaped(self, text: str) -> str:
        """A text under judgment with its control strings escaped (the server tokenizes text itself and
        would read them as control tokens); said once per runtime in a warning line."""
        escaped = escape_control(self.tokenizer(), text)
        if escaped != text and not self._escape_warned:
            self._escape_warned = True
            found = ", ".join(control_strings_in(self.tokenizer(), [text]))
            log.warning("texts sent to %s hold the judge's control strings (%s): they are sent escaped, with a "
                        "zero-width space after their first character, so the server reads them as plain text",
                        self.client.where, found)
        return escaped

    def _prompt(self, prompt: Any, response_prefix: str) -> tuple[str, int]:
        tokenizer = self.tokenizer()
        if not isinstance(prompt, str):
            prompt = [{"role": m["role"], "content": self._escaped(str(m["content"]))} for m in prompt]
        else:
            prompt = self._escaped(prompt)
        text, special = render_prompt(tokenizer, prompt, response_prefix)
        count = len(tokenizer(text, add_special_tokens=special)["input_ids"])
        if not count:
            raise EngineInputError("the prompt encodes to no tokens")
        return text, count

    def _label_probs(self, r: Any, scorer: ServerScorer) -> dict[str, Any]:
        tokenizer = self.tokenizer()
        text, count = self._prompt(r.prompt, r.response_prefix)
        labels = encode_labels(tokenizer, r.labels, r.label_end)
        texts = [piece_texts(tokenizer, ids) for ids in labels]
        return {"logprobs": scorer.label_logprobs(text, count, labels, texts)}

    def _loglik(self, r: Any, scorer: ServerScorer) -> dict[str, Any]:
        tokenizer = self.tokenizer()
        condition_text, target_text = self._escaped(r.condition), self._escaped(r.target)
        condition = list(tokenizer(condition_text, add_special_tokens=True)["input_ids"])
        target = list(tokenizer(target_text, add_special_tokens=False)["input_ids"])
        if not condition or not target:
            raise EngineInputError("condition or target encodes to no tokens")
        values = scorer.continuation(condition_text, len(condition), target, piece_texts(tokenizer, target))
        return {"token_logprobs": values, "tokens": tokenizer.convert_ids_to_tokens(target)}

    def _generate(self, r: Any, scorer: ServerScorer) -> dict[str, Any]:
        text, _ = self._prompt(r.prompt, r.response_prefix)
        return {"text": generation.generate(self.client, self.model, text, r.max_new_tokens)}

    def _sample(self, r: Any, scorer: ServerScorer) -> dict[str, Any]:
        text, _ = self._prompt(r.prompt, r.response_prefix)
        return {"texts": generation.sample(self.client, self.model, text, r.n_samples, float(r.temperature),
                                           r.max_new_tokens, r.seed)}


def check_identity(text: str) -> str:
    """The stated server identity, stripped; one line for what would break the key's ``|`` fields."""
    text = (text or "").strip()
    if any(c in text for c in "|\n\r\t") or any(ord(c) < 32 for c in text):
        raise ValueError(f"the server identity {text!r} must be one line without '|' or control characters "
                         "(it becomes a field of the cache keys)")
    if len(text) > 200:
        raise ValueError(f"the server identity must be at most 200 characters, got {len(text)}")
    if holds_secret(text):  # it is written into every cache key: never a key or token
        raise ValueError("the server identity looks like it holds a credential (its value is not shown), and it is "
                         "stored in every cache key; state the served weights instead, e.g. the GGUF file's sha256 "
                         "and the server's --n_ctx")
    return text


def served_prompts_known(model: str, tokenizer: str | None) -> bool:
    """Whether a served judge's prompts can be built as in-process: the tokenizer (default ``model``) is a
    packaged model, or ``model`` is (its prompt style) and the tokenizer a local folder or hub id.
    (Here, below both the command lines that ask it: ``nlgjudge rank`` and ``nlgjudge studies``.)"""
    from nlgjudge.models import PACKAGED_MODELS

    if (tokenizer or model) in PACKAGED_MODELS:
        return True
    return tokenizer is not None and model in PACKAGED_MODELS and tokenizer_source(tokenizer) is not None


def tokenizer_source(name: str) -> str | None:
    """``"folder"`` for a local folder holding a tokenizer, ``"hub"`` for an ``org/name`` hub id, else None."""
    from pathlib import Path

    path = expand_path(name)
    if path.is_dir():
        return "folder" if any((path / f).is_file() for f in ("tokenizer.json", "tokenizer_config.json", "tokenizer.model")) else None
    parts = name.split("/")
    if len(parts) == 2 and all(p.strip() for p in parts) and not name.startswith((".", "/", "~")):
        return "hub"
    return None


def load_named_tokenizer(name: str, served: str) -> Any:
    """A Hugging Face tokenizer from a local folder or hub id, or one line saying what to pass."""
    from pathlib import Path

    from nlgjudge.models import judge_names

    source = tokenizer_source(name)
    if source is None:
        raise ServerError(
            f"no tokenizer for the served model {served!r}: pass server_tokenizer= a packaged model name "
            f"({judge_names()}), a local folder with the model's tokenizer (e.g. the folder the "
            "server serves) or a hub id, so prompts are built as on the in-process runtimes"
        )
    from transformers import AutoTokenizer

    location = str(expand_path(name)) if source == "folder" else name
    try:
        return AutoTokenizer.from_pretrained(location)
    except Exception as error:  # noqa: BLE001 - a damaged tokenizer file fails with KeyError, TypeError or a bare Exception
        first = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        raise ServerError(f"cannot load the tokenizer {name!r} ({source}): {type(error).__name__}: {first[:200]}; pass "
                          "--server-tokenizer a folder with the served model's own tokenizer files, or a packaged name") from None
