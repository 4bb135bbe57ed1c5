"""What an OpenAI-compatible server answers, checked before it is read: one clear line naming the
server, the field and what was expected, never a traceback from deep inside the client.

Used by the capability probe (:mod:`nlgjudge.engine.server.capabilities`) and by every scoring
request (:mod:`nlgjudge.engine.server.scoring`), so the first request a run makes is checked as
strictly as the last.
"""

from __future__ import annotations

import math
from typing import Any

from nlgjudge.engine.server.client import ServerError

#: Probabilities of one position's top_logprobs may sum to a little above 1 by rounding, never more.
DISTRIBUTION_SLACK = 1e-2


def _shown(value: Any, limit: int = 60) -> str:
    """A server's value in a message: its type and a short, one-line beginning (huge answers summarised)."""
    from nlgjudge.engine.server.client import scrub

    text = scrub(repr(value))  # a server may echo the API key in what it answers
    text = text if len(text) <= limit else f"{text[:limit]}... ({len(text):,} characters)"
    return f"{type(value).__name__} {text}"


def _logprob_problem(value: Any) -> str | None:
    """Why ``value`` is no log-probability (a real number <= 0, finite), or None when it is one."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return f"a number, got {_shown(value)}"
    if isinstance(value, int) and abs(value) > 1e300:  # an integer beyond a float's range: no log-probability
        return f"a finite number, got an integer of {value.bit_length()} bits"
    if math.isnan(value) or math.isinf(value):
        return f"a finite number, got {value!r}"
    if value > 1e-3:
        return f"a log-probability (at most 0), got {value!r}"
    return None


def check_logprobs(logprobs: Any, where: str) -> None:
    """Refuse, in one line naming the server and the field, a ``logprobs`` object of the wrong shape:
    not an object, ``top_logprobs`` not a list of {token: number} objects, ``token_logprobs`` not a list
    of numbers (None allowed), ``tokens`` not a list of strings, or values that are NaN, infinite,
    positive or strings."""
    def fail(field: str, expected: str) -> ServerError:
        return ServerError(f"{where}/completions answered a malformed logprobs.{field}: expected {expected}")

    if not isinstance(logprobs, dict):
        raise ServerError(f"{where}/completions answered a malformed logprobs: expected an object, got {_shown(logprobs)}")
    if "content" in logprobs and not any(k in logprobs for k in ("top_logprobs", "token_logprobs", "tokens")):
        raise ServerError(f"{where}/completions answered log-probabilities in the chat-completions format (logprobs.content); "
                          "this client reads the completions format (logprobs.tokens, token_logprobs and top_logprobs as "
                          "{token: log-probability} objects): check the server or the proxy in front of it")
    tops = logprobs.get("top_logprobs")
    if tops is not None:
        if not isinstance(tops, list):
            raise fail("top_logprobs", f"a list of {{token: log-probability}} objects, got {_shown(tops)}")
        for k, row in enumerate(tops):
            if row is None:
                continue
            if not isinstance(row, dict):
                raise fail(f"top_logprobs[{k}]", f"an object {{token: log-probability}}, got {_shown(row)}")
            for token, value in row.items():
                problem = _logprob_problem(value)
                if problem:
                    raise fail(f"top_logprobs[{k}][{_shown(token).split(' ', 1)[1]}]", problem)
            total = sum(math.exp(float(v)) for v in row.values())
            if total > 1.0 + DISTRIBUTION_SLACK:
                raise fail(f"top_logprobs[{k}]", f"log-probabilities of one distribution, whose probabilities sum to at "
                                                 f"most 1; theirs sum to {total:.3g}")
    values = logprobs.get("token_logprobs")
    if values is not None:
        if not isinstance(values, list):
            raise fail("token_logprobs", f"a list of log-probabilities, got {_shown(values)}")
        for k, value in enumerate(values):
            problem = None if value is None else _logprob_problem(value)
            if problem:
                raise fail(f"token_logprobs[{k}]", problem)
    tokens = logprobs.get("tokens")
    if tokens is not None and (not isinstance(tokens, list) or not all(isinstance(t, str) for t in tokens)):
        raise fail("tokens", f"a list of strings, got {_shown(tokens)}")



def check_choices(answer: Any, where: str) -> dict[str, Any]:
    """The first of a completion answer's ``choices``, refused in one line unless the answer is an
    object whose ``choices`` is a non-empty list of objects (and its ``logprobs``, where given, passes
    :func:`check_logprobs`)."""
    if not isinstance(answer, dict):
        raise ServerError(f"{where}/completions answered {_shown(answer)}: expected a JSON object with choices")
    choices = answer.get("choices")
    if not isinstance(choices, list) or not choices:
        raise ServerError(f"{where}/completions answered a malformed choices: expected a non-empty list of objects, "
                          f"got {_shown(choices)}")
    if len(choices) > 1:  # every request asks for one completion: which of several is the prompt's is not known
        raise ServerError(f"{where}/completions answered {len(choices)} choices to a request for one; it is not known which "
                          "belongs to the prompt, so none is used: check the server (or a proxy in front of it)")
    choice = choices[0]
    if not isinstance(choice, dict):
        raise ServerError(f"{where}/completions answered a malformed choices[0]: expected an object, got {_shown(choice)}")
    if choice.get("logprobs") is not None:
        check_logprobs(choice["logprobs"], where)
    return choice


class AnswerWatch:
    """What a run's answers say about who answered, checked on every answer and warned about once each:
    an answer that names another model than the one asked for (a proxy's fallback), or a
    ``system_fingerprint`` other than the one the run's cache keys were made with (several builds behind
    one address). Thread-safe."""

    def __init__(self, where: str, model: str, system: str | None) -> None:
        import threading

        self.where, self.model, self.system = where, model, system
        self._lock = threading.Lock()
        self._warned: set[str] = set()

    def check(self, answer: Any) -> None:
        from nlgjudge.engine.server.client import scrub

        if not isinstance(answer, dict):
            return
        said = answer.get("model")
        if isinstance(said, str) and said and said != self.model and said.rsplit("/", 1)[-1] != self.model:
            self._warn("model", f"{self.where} answers name the model {scrub(said)[:80]!r}, not the requested "
                                f"{self.model!r}: a proxy may be sending the requests to another model; the judgments are "
                                f"stored under {self.model!r}, so check the server before reading them")
        system = answer.get("system_fingerprint")
        if self.system is not None and isinstance(system, str) and system != self.system:
            self._warn("system", f"{self.where} answers with the system_fingerprint {scrub(system)[:80]!r}, not the "
                                 f"{scrub(self.system)[:80]!r} this run's cache keys were made with: several builds may "
                                 "answer behind this address, and their judgments are stored as one; point --server-url "
                                 "at one build")

    def _warn(self, kind: str, message: str) -> None:
        import logging

        with self._lock:
            if kind in self._warned:
                return
            self._warned.add(kind)
        logging.getLogger("nlgjudge.engine.server").warning("%s", message)
