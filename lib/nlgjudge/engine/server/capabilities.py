"""What the server can do, asked once: the model it serves, logprobs, echo alignment, forced tokens.

What it guarantees: before any output is computed the judge knows (a) that the server serves the
model by the name the judge was given (else one line listing what it serves), (b) whether
completions return top-k log-probabilities, (c) whether ``echo`` prompt log-probabilities are
aligned, shifted by one position (llama-cpp-python 0.3.36's server reports, for each prompt token,
the log-probability of that token under the distribution *after* it) or unusable, (d) whether a
``logit_bias`` forces a token while the reported log-probability stays the model's own (so any
token's exact log-probability can be read, in or out of the top-k), and (e) whether ``seed`` makes
sampling reproducible. Each is measured on the server, not assumed from its name; an operation
that needs what is missing is refused with one line saying why (:meth:`Capabilities.refuse`).
The cache-key fingerprint (:func:`fingerprint`) holds what identifies the computation and nothing
that changes when the same server restarts: the served id, the server's ``system_fingerprint``
(vLLM's hashes its version and its whole configuration: the weights, dtype, context length...,
so an fp32 and a bf16 server never share a key), the revision fields of its ``/v1/models`` entry
(:data:`KEYED_ENTRY_FIELDS`; a ``root`` only when it is a hub id, never a path on the serving
machine), and the identity the user states (``server_identity=`` / ``--server-identity`` /
``$NLGJUDGE_SERVER_IDENTITY``); never the URL or a key. A server that reports nothing identifying
(llama-cpp-python's) is :func:`identified` only through that statement.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

from nlgjudge.engine.server.answers import check_choices
from nlgjudge.engine.server.client import ServerClient, ServerError, holds_secret, scrub

#: Fields of a /v1/models entry keyed as they are (vLLM: parent, max_model_len; llama.cpp's C++
#: server: meta, which names the file's parameters). Timestamps ("created") change at every start,
#: and vLLM's "root" is the served folder's path on the serving machine: neither is keyed as such.
KEYED_ENTRY_FIELDS = ("parent", "revision", "max_model_len", "meta")
#: Of those, what says which weights (max_model_len alone is a setting, not an identity).
IDENTIFYING_ENTRY_FIELDS = ("parent", "revision", "meta")
IDENTITY_ENV = "NLGJUDGE_SERVER_IDENTITY"
PROBE_TEXT = "The cat sat on the mat"
PROBE_CUT = len("The cat sat on the")
#: Two log-probabilities of the same distribution read through two requests agree to this.
SAME_VALUE = 2e-3
FORCE_BIAS = 100.0


def served_entry(client: ServerClient, model: str) -> dict[str, Any]:
    """The /v1/models entry of ``model``, or a one-line error naming what the server serves."""
    data = client.get("/models")
    entries = data.get("data") if isinstance(data, dict) else None
    if not isinstance(entries, list):
        raise ServerError(f"{client.where}/models answered {type(data).__name__ if not isinstance(data, dict) else 'an object'} "
                          "without a 'data' list of models, which an OpenAI-compatible server gives; check server_url")
    ids = [str(e.get("id")) for e in entries if isinstance(e, dict)]
    for entry in entries:
        if isinstance(entry, dict) and entry.get("id") == model:
            return entry
    raise ServerError(
        f"{client.where} serves {served_summary(ids, model)}, not {model!r}; "
        "name the model as the server serves it (or start the server with that alias)"
    )


def served_summary(ids: list[str], model: str, shown: int = 5) -> str:
    """What a server serves, in one short line: the names closest to ``model`` first, at most ``shown``
    of them, each cut to 80 characters, and how many more."""
    if not ids:
        return "no model"
    import difflib

    close = difflib.get_close_matches(model, ids, n=shown, cutoff=0.0) if len(ids) > shown else ids
    # a server's names are its text: the API key it may hold is hidden, as in every message
    names = ", ".join(scrub(repr(name if len(name) <= 80 else name[:77] + "...")) for name in close[:shown])
    more = len(ids) - min(len(ids), shown)
    return f"{len(ids):,} models ({names}{f' and {more:,} more' if more else ''})" if more else names


def system_fingerprint(client: ServerClient, model: str) -> str | None:
    """The ``system_fingerprint`` a one-token completion reports (vLLM: ``vllm-<version>-<config hash>``)."""
    body = {"model": model, "prompt": PROBE_TEXT, "max_tokens": 1, "temperature": 0.0}
    answer = client.post("/completions", body)
    if not isinstance(answer, dict):
        from nlgjudge.engine.server.answers import _shown

        raise ServerError(f"{client.where}/completions answered {_shown(answer)} where an object with 'choices' belongs; "
                          "check that the URL is an OpenAI-compatible server's API root (ending in /v1)")
    value = answer.get("system_fingerprint")
    return str(value) if value else None


def hub_root(entry: dict[str, Any]) -> str | None:
    """The entry's ``root`` when it names a hub model (``org/name``), not a path on the serving machine."""
    root = entry.get("root")
    if not isinstance(root, str) or not root.strip():
        return None
    root = root.strip()
    looks_like_path = root.startswith(("/", "~", ".", "\\")) or (len(root) > 1 and root[1] == ":") or root.count("/") != 1
    return None if looks_like_path else root


def identified(entry: dict[str, Any], system: str | None, identity: str | None) -> bool:
    """Whether the key says which weights and settings computed: the server says it, or the user does."""
    return bool(system or identity or hub_root(entry) or any(entry.get(f) is not None for f in IDENTIFYING_ENTRY_FIELDS))


def fingerprint(model: str, entry: dict[str, Any], system: str | None = None, identity: str | None = None) -> str:
    """``served:<id>|runtime=server`` plus the server's system fingerprint, its entry's revision fields,
    a hub ``root`` and the identity the user stated (see the module docstring). A server's value that
    could pass for another field (a ``|``, a line break or control character) or holds a token is
    keyed by its hash (:func:`keyed_value`): a server can neither forge another's key nor store a secret."""
    parts = [f"served:{model}|runtime=server"]
    if system:
        parts.append(f"system={keyed_value(system)}")
    root = hub_root(entry)
    if root is not None and root != model:
        parts.append(f"root={keyed_value(root)}")
    for name in KEYED_ENTRY_FIELDS:
        value = entry.get(name)
        if value is None:
            continue
        if isinstance(value, dict):
            value = ",".join(f"{k}={value[k]}" for k in sorted(value, key=str))
        parts.append(f"{name}={keyed_value(value)}")
    if identity:
        parts.append(f"identity={identity}")
    return "|".join(parts)


def keyed_value(value: object) -> str:
    """A server's value as a cache key's field: as it is when it is one plain line, else ``sha256:`` and
    its hash (a value holding ``|``, a line break, a control character or a token, or longer than 200
    characters, would forge another field, store a secret or bloat every key)."""
    text = str(value)
    if len(text) <= 200 and text.isprintable() and "|" not in text and not holds_secret(text):
        return text
    return "sha256:" + hashlib.sha256(text.encode("utf-8", "surrogateescape")).hexdigest()[:32]


@dataclass
class Capabilities:
    """What the probe measured on the server (see the module docstring)."""

    logprobs: bool
    top_k: int
    echo_shift: int | None  # 0 aligned, 1 shifted by one position, None unusable
    forced_raw: bool  # logit_bias forces a token and its reported log-probability is the model's own
    seeded: bool
    eos_id: int | None
    notes: tuple[str, ...] = ()

    def refuse(self, operation: str, where: str) -> None:
        """Raise a one-line :class:`ServerError` if ``operation`` cannot be computed exactly here."""
        if operation in ("label_probs", "loglikelihood") and not self.logprobs:
            raise ServerError(f"{where} returns no log-probabilities for completions, so {operation} cannot be computed there")
        if operation == "loglikelihood" and self.echo_shift is None and not self.forced_raw:
            raise ServerError(
                f"{where} neither echoes prompt log-probabilities consistently nor keeps them unbiased under logit_bias, "
                "so log-likelihoods of a given text cannot be read exactly there"
            )
        if operation == "sample" and not self.seeded:
            raise ServerError(f"{where} ignores the sampling seed, so samples would not be reproducible (their cache keys name the seed)")

    def describe(self) -> str:
        echo = {0: "aligned", 1: "shifted by one (corrected)", None: "unusable"}[self.echo_shift]
        return (f"logprobs {'top-' + str(self.top_k) if self.logprobs else 'none'}, echo {echo}, "
                f"forced tokens {'exact' if self.forced_raw else 'no'}, seed {'honoured' if self.seeded else 'ignored'}")


def _completion(client: ServerClient, model: str, prompt: str, **fields: Any) -> dict[str, Any]:
    body = {"model": model, "prompt": prompt, "max_tokens": 1, "temperature": 0.0, **fields}
    return check_choices(client.post("/completions", body), client.where)


def _same(a: dict[str, float] | None, b: dict[str, float] | None) -> bool:
    if not isinstance(a, dict) or not isinstance(b, dict) or not a or not b:
        return False
    number = (int, float)
    common = [k for k in a if k in b and isinstance(a[k], number) and isinstance(b[k], number)]
    return len(common) >= 2 and all(abs(a[k] - b[k]) <= SAME_VALUE for k in common)


def probe(client: ServerClient, model: str, tokenizer: Any, top_k: int) -> Capabilities:
    """Measure :class:`Capabilities` with a few one-token completions on :data:`PROBE_TEXT`."""
    eos = getattr(tokenizer, "eos_token_id", None)
    eos = eos if isinstance(eos, int) else None
    notes: list[str] = []
    # (b) top-k log-probabilities of the next token after the probe's prefix.
    head = _completion(client, model, PROBE_TEXT[:PROBE_CUT], logprobs=top_k)
    lp = head.get("logprobs") or {}
    top = (lp.get("top_logprobs") or [None])[0]
    if not top:
        return Capabilities(False, top_k, None, False, False, eos, ("no logprobs",))
    # (d) logit_bias forcing the second-ranked token: forced, and its value unchanged?
    ranked = sorted(top.items(), key=lambda kv: -kv[1])
    forced_raw = False
    if len(ranked) >= 2:
        text, value = ranked[1]
        ids = tokenizer(text, add_special_tokens=False)["input_ids"]
        if len(ids) == 1:
            try:
                forced = _completion(client, model, PROBE_TEXT[:PROBE_CUT], logprobs=1,
                                     logit_bias={str(ids[0]): FORCE_BIAS})
                got = ((forced.get("logprobs") or {}).get("token_logprobs") or [None])[0]
                forced_raw = forced.get("text") == text and got is not None and abs(got - value) <= SAME_VALUE
            except ServerError as err:
                notes.append(f"logit_bias refused: {err}")
    # (c) echo: which echoed position carries the distribution measured in (b)?
    echo_shift: int | None = None
    try:
        echoed = _completion(client, model, PROBE_TEXT, logprobs=top_k, echo=True)
        elp = echoed.get("logprobs") or {}
        offsets, tops = (elp.get("text_offset") or [], elp.get("top_logprobs") or []) if isinstance(elp, dict) else ([], [])
        if not isinstance(offsets, list) or not isinstance(tops, list):  # a malformed echo: no alignment can be read
            raise ServerError(f"{client.where}/completions answered a malformed echo (text_offset and top_logprobs must be lists)")
        if PROBE_CUT in offsets:
            at = offsets.index(PROBE_CUT)
            # D is P(next | "The cat sat on the"): an aligned server lists it as the alternatives of
            # " mat" (position at); a server shifted by one lists it one position earlier.
            if at < len(tops) and _same(tops[at], top):
                echo_shift = 0
            elif 1 <= at <= len(tops) and _same(tops[at - 1], top):
                echo_shift = 1
    except ServerError as err:
        notes.append(f"echo refused: {err}")
    # (e) seed: the same seed twice gives the same sample?
    seeded = False
    try:
        draws = [_completion(client, model, PROBE_TEXT, max_tokens=6, temperature=1.0, seed=1234, top_p=1.0)
                 .get("text") for _ in range(2)]
        other = _completion(client, model, PROBE_TEXT, max_tokens=6, temperature=1.0, seed=4321, top_p=1.0).get("text")
        seeded = draws[0] == draws[1] and draws[0] is not None and (other is not None)
    except ServerError as err:
        notes.append(f"seeded sampling refused: {err}")
    return Capabilities(True, top_k, echo_shift, forced_raw, seeded, eos, tuple(notes))
