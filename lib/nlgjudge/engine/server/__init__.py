"""The served runtime: the judge's four operations on a model behind an OpenAI-compatible server.

What it guarantees: ``Judge(model, backend="server", server_url=URL)`` (or ``$NLGJUDGE_SERVER_URL``;
an API key only from ``$NLGJUDGE_SERVER_API_KEY``) computes the same requests as the in-process
runtimes -- the same prompt text, built by the same tokenizer and chat template, sent raw to
``/v1/completions`` -- and every label probability or log-likelihood is the model's exact
log-probability of the tokens the in-process runtime scores, or a one-line error, never a floor.
Its cache keys carry the fingerprint ``served:<model as served>|runtime=server`` plus what
identifies the computation -- the server's ``system_fingerprint`` (vLLM: its version and a hash of
its configuration, so an fp32 and a bf16 server differ), the revision fields of its ``/v1/models``
entry, the identity the user states (``server_identity``, required with a cache when the server
reports none) -- never the URL, a key or a path on the serving machine, so served outputs never mix
with in-process ones or with another server's computation; the judge's cache-first driver writes each chunk as it completes, so a killed or failed run
resumes where it stopped, losing and duplicating nothing.

One module per concern, each saying in its first lines what it guarantees:

- :mod:`~nlgjudge.engine.server.client`: HTTP, retries with backoff on 429/5xx/connection errors,
  the per-request timeout, one-line :class:`ServerError` messages without credentials;
- :mod:`~nlgjudge.engine.server.capabilities`: the one probe of what the server serves and can do
  (logprobs, echo alignment -- llama-cpp-python 0.3.36 shifts echoed log-probabilities by one
  position --, exact forced tokens, seeds) and the cache-key fingerprint;
- :mod:`~nlgjudge.engine.server.scoring`: label probabilities and log-likelihoods from top-k,
  echo (corrected when shifted) or forced tokens;
- :mod:`~nlgjudge.engine.server.generation`: greedy generation and seeded sampling with plain
  decoding (the server's default top-k/top-p/min-p/repetition penalty switched off);
- :mod:`~nlgjudge.engine.server.runtime`: :class:`ServerRuntime`, what the judge drives, with
  bounded concurrency in shared-prefix order.

- :mod:`~nlgjudge.engine.server.local`: llama-cpp-python's and vLLM's servers started on a free
  loopback port for the tests and benchmarks, stopped with their process group.

Tested against llama-cpp-python's own server on the packaged SmolLM2 (tests/test_engine_server.py)
and against vLLM's CPU build serving the torch runtime's converted folder in float32, to the torch
runtime's values within 1e-4 (tests/test_engine_server_vllm.py).
"""

from nlgjudge.engine.server.capabilities import Capabilities, fingerprint, probe
from nlgjudge.engine.server.client import API_KEY_ENV, URL_ENV, ServerClient, ServerError, ServerUnavailableError
from nlgjudge.engine.server.runtime import DEFAULT_TOP_LOGPROBS, ServerRuntime
from nlgjudge.engine.server.scoring import ServerScorer, piece_texts

__all__ = [
    "API_KEY_ENV",
    "DEFAULT_TOP_LOGPROBS",
    "URL_ENV",
    "Capabilities",
    "ServerClient",
    "ServerError",
    "ServerRuntime",
    "ServerScorer",
    "ServerUnavailableError",
    "fingerprint",
    "piece_texts",
    "probe",
]
