"""Sampling and greedy generation on a server, with the decoding the in-process runtimes use.

What it guarantees: greedy generation is temperature 0 with every other logit transformation
switched off (top-k, top-p, min-p, repetition penalty: llama-cpp-python's server defaults to
top-k 40, top-p 0.95, min-p 0.05 and a 1.1 repetition penalty, none of which the in-process
runtimes apply); sampling is plain temperature sampling, one request per sample, each with its
own seed derived from the request's seed, so a sample is reproducible on a server that honours
seeds (the probe refuses sampling on one that does not). The texts are what the server
generates: samples differ from the in-process runtimes' (another random stream); greedy texts
agree up to the servers' numerics.
"""

from __future__ import annotations

from typing import Any

from nlgjudge.engine.server.client import ServerClient, ServerError

#: Switch off the samplers' extras (names as llama.cpp, llama-cpp-python, vLLM and SGLang read them).
PLAIN_DECODING = {"top_p": 1.0, "top_k": 0, "min_p": 0.0, "repeat_penalty": 1.0, "repetition_penalty": 1.0,
                  "presence_penalty": 0.0, "frequency_penalty": 0.0}


def sample_seed(seed: int, index: int) -> int:
    """The seed of the ``index``-th sample of a request seeded ``seed`` (fits a signed 32-bit int)."""
    return (int(seed) * 1_000_003 + index) % (2**31 - 1)


def complete_text(client: ServerClient, model: str, prompt: str, *, max_tokens: int, temperature: float,
                  seed: int) -> str:
    body: dict[str, Any] = {"model": model, "prompt": prompt, "max_tokens": int(max_tokens),
                            "temperature": float(temperature), "seed": int(seed), **PLAIN_DECODING}
    choices = client.post("/completions", body).get("choices") or []
    if not choices or not isinstance(choices[0].get("text"), str):
        raise ServerError(f"{client.where}/completions answered without a text")
    return choices[0]["text"]


def generate(client: ServerClient, model: str, prompt: str, max_new_tokens: int) -> str:
    return complete_text(client, model, prompt, max_tokens=max_new_tokens, temperature=0.0, seed=0)


def sample(client: ServerClient, model: str, prompt: str, n: int, temperature: float, max_new_tokens: int,
           seed: int) -> list[str]:
    return [
        complete_text(client, model, prompt, max_tokens=max_new_tokens, temperature=temperature,
                      seed=sample_seed(seed, i))
        for i in range(n)
    ]
