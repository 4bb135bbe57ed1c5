"""Label probabilities and log-likelihoods read from a server's log-probabilities, exactly or not at all.

What it guarantees: every value is the model's log-probability of the very token the in-process
runtime scores, read from the server -- never a floor for a token outside the top-k, never a
value from a misaligned position. The prompt is sent as text (the text the in-process runtime
tokenizes); where the server says how many prompt tokens it read, a count different from the
in-process tokenizer's is refused, and so is an echoed continuation whose tokens differ.

Where each value comes from, cheapest first:

1. label probabilities: one 1-token completion on the prompt with top-k log-probabilities covers
   every single-token label found in the top-k;
2. any other token: the server's ``echo`` prompt log-probabilities of prompt + continuation,
   read at the right position (aligned servers) or, on servers that shift them by one position
   (llama-cpp-python 0.3.36), from the previous position's top-k, which holds the distribution
   that predicts the token;
3. still missing: a 1-token completion on the text before the token with a ``logit_bias`` that
   forces it, when the probe showed that the reported log-probability stays the model's own;
4. otherwise a :class:`~nlgjudge.engine.server.client.ServerError` saying which token is missing.

A first generated token that is end-of-text makes llama-cpp-python's server drop all
log-probabilities; where forcing is exact, end-of-text is banned in the 1-token scoring requests
(the reported values are unchanged by the ban, as the probe measured) and an echo that comes back
without log-probabilities falls back to forcing each token. Echo requests carry no ``logit_bias``:
llama-cpp-python 0.3.36 echoes different, wrong values when one is set.
"""

from __future__ import annotations

from typing import Any

from nlgjudge.engine.server.answers import AnswerWatch, check_choices, check_logprobs
from nlgjudge.engine.server.capabilities import FORCE_BIAS, Capabilities, _same
from nlgjudge.engine.server.client import ServerClient, ServerError, scrub


def piece_texts(tokenizer: Any, ids: list[int]) -> list[str]:
    """The text each token adds when ``ids`` are decoded in order (what a server echoes)."""
    texts, done = [], ""
    for j in range(len(ids)):
        text = tokenizer.decode(ids[: j + 1], skip_special_tokens=False, clean_up_tokenization_spaces=False)
        texts.append(text[len(done):])
        done = text
    return texts


class NoLogprobsError(ServerError):
    """A completion came back without log-probabilities (e.g. its first token was end-of-text)."""


class ServerScorer:
    """Reads log-probabilities for one model from one server (thread-safe: no mutable state)."""

    def __init__(self, client: ServerClient, model: str, capabilities: Capabilities, watch: AnswerWatch | None = None) -> None:
        self.client = client
        self.model = model
        self.caps = capabilities
        self.watch = watch  # who answered: another model, another build (warned once each)

    def _complete(self, prompt: str, *, ban_eos: bool = True, **fields: Any) -> dict[str, Any]:
        body: dict[str, Any] = {"model": self.model, "prompt": prompt, "max_tokens": 1, "temperature": 0.0,
                                "logprobs": self.caps.top_k, **fields}
        if ban_eos and self.caps.forced_raw and self.caps.eos_id is not None:
            bias = dict(body.get("logit_bias") or {})
            bias.setdefault(str(self.caps.eos_id), -FORCE_BIAS)
            body["logit_bias"] = bias
        data = self.client.post("/completions", body)
        choice = dict(check_choices(data, self.client.where))
        if self.watch is not None:
            self.watch.check(data)
        usage = (data.get("usage") if isinstance(data.get("usage"), dict) else None) or {}
        choice["_prompt_tokens"] = usage.get("prompt_tokens")
        choice["_completion_tokens"] = usage.get("completion_tokens")
        if not choice.get("logprobs"):
            raise NoLogprobsError(
                f"{self.client.where} returned no log-probabilities for a scoring request (finish_reason="
                f"{scrub(repr(choice.get('finish_reason')))}); it cannot score this prompt"
            )
        check_logprobs(choice["logprobs"], self.client.where)
        return choice

    def _check_count(self, choice: dict[str, Any], expected: int) -> None:
        got = choice.get("_prompt_tokens")
        if got is None:  # the server does not report it
            return
        if (isinstance(got, bool) or not isinstance(got, (int, float)) or (isinstance(got, float) and not got.is_integer())
                or got < 0):
            raise ServerError(f"{self.client.where}/completions answered a malformed usage.prompt_tokens: expected a whole "
                              f"number of tokens, 0 or more, got {scrub(repr(got))[:80]}")
        if int(got) != expected:
            raise ServerError(
                f"{self.client.where} read the prompt as {int(got)} tokens where the in-process tokenizer reads {expected}: "
                "the same request would not be the same input (different tokenizer, template or BOS handling)"
            )

    # ---- label probabilities ------------------------------------------------------------------
    def label_logprobs(self, prompt_text: str, prompt_count: int, labels: list[list[int]],
                       label_texts: list[list[str]]) -> list[float]:
        """Whole-sequence log p(label | prompt) of each label (token ids and their texts)."""
        head = self._complete(prompt_text)
        self._check_count(head, prompt_count)
        top = ((head["logprobs"].get("top_logprobs") or [None])[0]) or {}
        values: list[float] = []
        for ids, texts in zip(labels, label_texts, strict=True):
            if len(ids) == 1 and top.get(texts[0]) is not None:
                values.append(float(top[texts[0]]))
            else:
                values.append(sum(self.continuation(prompt_text, prompt_count, ids, texts, head=top)))
        return values

    # ---- continuations ------------------------------------------------------------------------
    def continuation(self, context: str, context_count: int, ids: list[int], texts: list[str],
                     head: dict[str, float] | None = None) -> list[float]:
        """log p(token_j | context + tokens before j) for each token of a continuation
        (``head``: the top-k after ``context`` if already read)."""
        values: list[float | None] = [None] * len(ids)
        if self.caps.echo_shift is not None:
            try:
                if head is None:
                    first = self._complete(context)
                    self._check_count(first, context_count)
                    head = (first["logprobs"].get("top_logprobs") or [None])[0] or {}
                values = self._from_echo(context, context_count, texts, head)
            except NoLogprobsError:
                if not self.caps.forced_raw:
                    raise
                # llama-cpp-python drops every log-probability when the generated token is
                # end-of-text; each token is then forced instead (same values, more requests).
        for j, value in enumerate(values):
            if value is None:
                values[j] = self._forced(context + "".join(texts[:j]), context_count + j, ids[j], texts[j])
        return [float(v) for v in values]  # type: ignore[arg-type]

    def _from_echo(self, context: str, context_count: int, texts: list[str], head: dict[str, float]) -> list[float | None]:
        # Sent as the probe measured echo: without logit_bias (llama-cpp-python 0.3.36 echoes other,
        # wrong prompt log-probabilities when a bias is set; the probe's alignment would not hold).
        choice = self._complete(context + "".join(texts), echo=True, ban_eos=False)
        self._check_count(choice, context_count + len(texts))
        lp = choice["logprobs"]
        tokens = list(lp.get("tokens") or [])
        token_lp, tops = list(lp.get("token_logprobs") or []), list(lp.get("top_logprobs") or [])
        # Located by position, not by text_offset: servers count offsets in detokenized text, which
        # may leave out special tokens (llama-cpp-python does), so offsets do not index the prompt.
        # The generated token may or may not be listed (llama-cpp-python lists it only when a BOS
        # was dropped); a wrong pick is caught by the alignment check against ``head`` below.
        generated = choice.get("_completion_tokens")
        generated = generated if isinstance(generated, int) else 1
        ends = [len(tokens) - g for g in dict.fromkeys((generated, 0))]
        end = next((e for e in ends if e - len(texts) >= 1 and tokens[e - len(texts): e] == texts), ends[0])
        start = end - len(texts)
        echoed = tokens[max(start, 0): end]
        if start < 1 or echoed != texts:
            raise ServerError(
                f"{self.client.where} tokenizes {''.join(texts)!r} after its context as {echoed!r}, the in-process "
                f"tokenizer as {texts!r}: the same request would not be the same tokens"
            )
        # The alignment is measured on every response, not only by the probe: llama-cpp-python
        # 0.3.36 shifts echoed rows by one, except when the prompt starts with the BOS token's text
        # (it drops that token from the echoed tokens but not from the rows: the shifts cancel).
        # The top-k after the context (``head``) is listed at the continuation's first token on an
        # aligned response, one position earlier on a shifted one.
        if start < len(tops) and _same(tops[start], head):
            shift = 0
        elif 0 <= start - 1 < len(tops) and _same(tops[start - 1], head):
            shift = 1
        else:
            return [None] * len(texts)  # neither: every token is forced (or refused) instead
        values: list[float | None] = []
        for j, text in enumerate(texts):
            position = start + j
            if shift == 0:
                value = token_lp[position] if position < len(token_lp) else None
            else:  # shifted: the distribution predicting this token is listed one position earlier
                row = tops[position - 1] if position >= 1 and position - 1 < len(tops) else None
                value = (row or {}).get(text)
            values.append(None if value is None else float(value))
        return values

    def _forced(self, context: str, context_count: int, token: int, text: str) -> float:
        if not self.caps.forced_raw:
            raise ServerError(
                f"{self.client.where}: the token {text!r} is outside the top-{self.caps.top_k} log-probabilities the server "
                "returns and the server cannot score it exactly otherwise (no aligned echo, no exact logit_bias); "
                "raise top_logprobs or use the in-process runtime"
            )
        choice = self._complete(context, logit_bias={str(token): FORCE_BIAS})
        self._check_count(choice, context_count)
        value = (choice["logprobs"].get("token_logprobs") or [None])[0]
        if choice.get("text") != text or value is None:
            raise ServerError(f"{self.client.where} did not produce the forced token {text!r} (got {choice.get('text')!r})")
        return float(value)
