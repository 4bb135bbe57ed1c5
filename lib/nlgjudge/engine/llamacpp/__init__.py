"""The llama.cpp runtime: the judge's four operations on the packaged GGUF files, as shipped.

What it guarantees: every output (label probabilities, log-likelihoods, samples, greedy
generations) is bitwise the output of its sequence computed alone -- independent of chunking,
batching, the other requests in the chunk, the prefix-sharing scheme and the prompt cache, and
identical after a kill and resume; its cache keys are the torch keys' with ``|runtime=llama.cpp``
appended to the fingerprint, so the outputs of the two runtimes never mix.

``Judge(model, backend="llamacpp")`` (the default, ``"auto"``, for the packaged GGUF models) runs
the quantised GGUF file itself through llama-cpp-python's low-level API (``llama_batch``,
``llama_decode``, ``llama_get_logits_ith``, ``llama_memory_seq_cp`` / ``llama_memory_seq_rm``)
instead of de-quantising it to fp32 for torch. Requests, results, cache and token ids are the
torch path's: prompts are tokenised by the same Hugging Face tokenizer (read from the GGUF file;
llama.cpp's own tokenizer gives the same ids on the chat prompts tried), so both runtimes see
identical token ids; only the forward pass differs. One context per model and thread count,
shared by the judges that use it, with a *unified* KV cache (one pool of cells for all
sequences, so a sequence copy shares cells instead of copying data).

One module per concern, each saying in its first lines what it guarantees:

- :mod:`~nlgjudge.engine.llamacpp.backend`: the pinned llama-cpp-python release, importing it with
  a clear error, the thread count, quiet logs, the fingerprint suffix of the cache keys;
- :mod:`~nlgjudge.engine.llamacpp.cells`: the mirror of llama.cpp's KV-cell allocator;
- :mod:`~nlgjudge.engine.llamacpp.context`: :class:`LlamaCppModel`, one model and its context, and
  the cell layout and batch padding that make outputs batch-independent;
- :mod:`~nlgjudge.engine.llamacpp.scoring`: label probabilities and log-likelihoods, a prefix tree
  computed by the sequential or the parallel scheme (:class:`TreeScoring`);
- :mod:`~nlgjudge.engine.llamacpp.generation`: sampling and greedy generation, and
  :class:`LlamaCppRunner` (scoring plus generation, what the judge drives);
- :mod:`~nlgjudge.engine.llamacpp.prompt_cache_loop`: the plain prompt-cache loop the benchmark
  compares the runner against;
- :mod:`~nlgjudge.engine.llamacpp.loading`: one shared model per file and thread count, the
  tokenizer, the stop tokens.

Every name is importable from here as before the split (``from nlgjudge.engine.llamacpp import
LlamaCppRunner``). To replace a function for a test or a benchmark, patch it in the module that
calls it (e.g. ``nlgjudge.engine.llamacpp.generation.draw``): a patch here reaches no caller.
Class attributes (``LlamaCppRunner.drop_floating_trunk``, ``LlamaCppModel.place``) can be
patched on the classes re-exported here.

**Numerics against torch.** llama.cpp computes with the quantised weights (activations quantised
to 8 bits for the dot products, an f16 KV cache), torch with de-quantised fp32 weights: label
log-probabilities differ by a few hundredths (SmolLM2: P(A) within 0.05; see the bounds tested
in ``tests/test_engine_llamacpp_smollm2.py``). Outputs of the two runtimes never mix in the
cache: llama.cpp keys carry ``|runtime=llama.cpp`` in their fingerprint (torch keys unchanged).
"""

from nlgjudge.engine.llamacpp.backend import (
    FINGERPRINT_SUFFIX,
    PINNED_VERSION,
    THREADS_ENV,
    BackendUnavailableError,
    _quiet_llama_cpp,
    import_llama_cpp,
    install_hint,
    is_available,
    thread_count,
    version,
)
from nlgjudge.engine.llamacpp.cells import _Block, _Cells, _Row
from nlgjudge.engine.llamacpp.context import (
    OUTPUT_PADDING_COMMIT,
    TRUNK,
    UNPADDED_OUTPUT_NOISE,
    KVCacheFullError,
    LlamaCppModel,
    _log_softmax_rows,
)
from nlgjudge.engine.llamacpp.generation import LlamaCppRunner, draw
from nlgjudge.engine.llamacpp.loading import _MODELS, _MODELS_LOCK, load_model, load_tokenizer, stop_ids
from nlgjudge.engine.llamacpp.prompt_cache_loop import prefix_cache_loop_label_logprobs
from nlgjudge.engine.llamacpp.scoring import (
    SCHEME_ENV,
    SCHEMES,
    TreeScoring,
    _add_delta,
    _clear_states,
    _common_length,
    _first_path,
    _Handle,
    _has_kept,
    _nodes,
    _snapshot,
    _tail,
)

__all__ = [
    "FINGERPRINT_SUFFIX",
    "OUTPUT_PADDING_COMMIT",
    "PINNED_VERSION",
    "SCHEMES",
    "SCHEME_ENV",
    "THREADS_ENV",
    "TRUNK",
    "UNPADDED_OUTPUT_NOISE",
    "BackendUnavailableError",
    "KVCacheFullError",
    "LlamaCppModel",
    "LlamaCppRunner",
    "TreeScoring",
    "draw",
    "import_llama_cpp",
    "install_hint",
    "is_available",
    "load_model",
    "load_tokenizer",
    "prefix_cache_loop_label_logprobs",
    "stop_ids",
    "thread_count",
    "version",
]
