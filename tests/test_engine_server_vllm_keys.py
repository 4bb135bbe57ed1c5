"""Cache keys of served judges (issue 50), fast, against a stub server on loopback that answers as
vLLM does (a ``system_fingerprint`` in every completion, ``root`` the served folder's path on the
serving machine) or as llama-cpp-python's server does (nothing identifying). The same keys with real
vLLM servers (fp32, bf16, restarted): tests/test_engine_server_vllm.py.

Only 127.0.0.1 is ever contacted."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from nlgjudge.cache import OutputCache
from nlgjudge.cli import main as cli_main
from nlgjudge.engine import ClassifyRequest, Judge
from nlgjudge.engine.server import ServerError
from nlgjudge.engine.server.capabilities import fingerprint, hub_root, identified
from loopback_server import LoopbackServer, QuietJsonHandler

TOKENIZER = "smollm2-135m-instruct"


class VllmLikeStub(LoopbackServer):
    """Serves model 'judge'; ``system`` is the system_fingerprint of its completions (None: none),
    ``entry`` extra fields of its /v1/models entry. Every completion answers ' A' with fixed logprobs."""

    def __init__(self, system: str | None, name: str = "judge", **entry: object) -> None:
        self.system, self.entry, self.name = system, entry, name
        stub = self

        class Handler(QuietJsonHandler):
            def do_GET(self):
                self.send_json(200, {"object": "list", "data": [{"id": stub.name, "object": "model",
                                                                 "created": time.time(), **stub.entry}]})

            def do_POST(self):
                self.rfile.read(int(self.headers.get("Content-Length", 0)))
                lp = {"tokens": [" A"], "text_offset": [0], "token_logprobs": [-0.5],
                      "top_logprobs": [{" A": -0.5, " B": -1.25}]}
                body = {"choices": [{"text": " A", "index": 0, "logprobs": lp, "finish_reason": "length"}]}
                if stub.system is not None:
                    body["system_fingerprint"] = stub.system
                self.send_json(200, body)

        super().__init__(Handler)


def requests(n: int = 2) -> list[ClassifyRequest]:
    return [ClassifyRequest(f"Question {i}: A or B? Answer:", (" A", " B")) for i in range(n)]


def served(url: str, cache, **kw) -> Judge:
    return Judge("judge", backend="server", server_url=url, server_tokenizer=TOKENIZER, cache=cache, progress=False,
                 request_retries=0, **kw)


# ---- the fingerprint itself ---------------------------------------------------------------------------
def test_fingerprint_keys_the_system_fingerprint_and_settings_never_a_server_path():
    entry = {"root": "/srv/served/smollm2-135m-instruct", "parent": None, "max_model_len": 4096}
    assert fingerprint("judge", entry, "vllm-0.32.0-6717a39c") == \
        "served:judge|runtime=server|system=vllm-0.32.0-6717a39c|max_model_len=4096"
    # A restart elsewhere (another cache folder, another start time): the same fingerprint.
    moved = {**entry, "root": "/data/other-place/smollm2", "created": 1}
    assert fingerprint("judge", moved, "vllm-0.32.0-6717a39c") == fingerprint("judge", entry, "vllm-0.32.0-6717a39c")
    # Another dtype changes vLLM's configuration hash, hence the fingerprint.
    assert fingerprint("judge", entry, "vllm-0.32.0-0badbeef") != fingerprint("judge", entry, "vllm-0.32.0-6717a39c")


def test_a_hub_root_is_an_identity_a_path_is_not():
    assert hub_root({"root": "Qwen/Qwen2.5-Coder-1.5B-Instruct"}) == "Qwen/Qwen2.5-Coder-1.5B-Instruct"
    for path in ("/models/x", "./x", "~/x", "C:\\models\\x", "models/qwen/x", "x"):
        assert hub_root({"root": path}) is None, path
    assert fingerprint("judge", {"root": "Qwen/Qwen2.5-Coder-1.5B-Instruct"}) == \
        "served:judge|runtime=server|root=Qwen/Qwen2.5-Coder-1.5B-Instruct"
    assert identified({"root": "Qwen/Qwen2.5-Coder-1.5B-Instruct"}, None, None)
    assert not identified({"root": "/models/x", "max_model_len": 4096}, None, None)  # a setting is no identity
    assert identified({"root": "/models/x"}, None, "gguf sha256 cc324af0, n_ctx 4096")
    assert fingerprint("judge", {}, None, "q4 file cc324af0") == "served:judge|runtime=server|identity=q4 file cc324af0"


# ---- judges against stub servers ----------------------------------------------------------------------
def test_servers_with_other_system_fingerprints_share_no_cache_entry_and_a_restart_shares_all(tmp_path: Path):
    fp32 = VllmLikeStub("vllm-0.32.0-6717a39c", root="/srv/a/smollm2", max_model_len=4096)
    bf16 = VllmLikeStub("vllm-0.32.0-0badbeef", root="/srv/a/smollm2", max_model_len=4096)
    try:
        with OutputCache(tmp_path / "c.sqlite") as cache:
            first = served(fp32.url, cache)
            first.label_probs(requests())
            assert first.last_run.computed == 2
            other = served(bf16.url, cache)
            other.label_probs(requests())
            assert other.last_run.from_cache == 0 and other.last_run.computed == 2
            assert other.fingerprint != first.fingerprint
        fp32.close()
        # The "restarted" fp32 server: another port, another start time, another serving folder.
        again_server = VllmLikeStub("vllm-0.32.0-6717a39c", root="/elsewhere/smollm2", max_model_len=4096)
        try:
            with OutputCache(tmp_path / "c.sqlite") as cache:
                again = served(again_server.url, cache)
                again.label_probs(requests())
                assert again.last_run.from_cache == 2 and again.last_run.computed == 0
        finally:
            again_server.close()
    finally:
        bf16.close()


def test_a_server_without_identity_is_refused_with_a_cache_and_keyed_by_the_stated_one(tmp_path: Path, monkeypatch):
    monkeypatch.delenv("NLGJUDGE_SERVER_IDENTITY", raising=False)
    stub = VllmLikeStub(None)  # llama-cpp-python's server: no system_fingerprint, no revision fields
    try:
        with OutputCache(tmp_path / "c.sqlite") as cache:
            with pytest.raises(ServerError, match="reports nothing that identifies the weights") as err:
                served(stub.url, cache).label_probs(requests())
            assert "--server-identity" in str(err.value) and "\n" not in str(err.value)
            assert served(stub.url, False).label_probs(requests())  # without a cache nothing can be mixed up
            smollm2 = served(stub.url, cache, server_identity="smollm2 q8_0 sha256 0123")
            smollm2.label_probs(requests())
            gemma = served(stub.url, cache, server_identity="gemma-3-270m q4_k_m")
            gemma.label_probs(requests())
            assert gemma.last_run.from_cache == 0  # another model under the same name: nothing read back
            monkeypatch.setenv("NLGJUDGE_SERVER_IDENTITY", "smollm2 q8_0 sha256 0123")
            again = served(stub.url, cache)
            again.label_probs(requests())
            assert again.last_run.from_cache == 2
    finally:
        stub.close()
    with pytest.raises(ValueError, match="one line without '|'"):
        served("http://127.0.0.1:9/v1", False, server_identity="a|b")
    with pytest.raises(ValueError, match="for backend='server' only"):
        Judge(TOKENIZER, backend="torch", cache=False, server_identity="x")


#: Outputs that differ in words, not only in a number: a system whose outputs differ only in a number reads as constant.
WEATHER = ("rain", "sun", "snow", "wind", "fog", "hail", "storm", "frost", "mist", "dew")
ROWS = [{"context_id": f"c{c}", "source": f"Article {c} .", "system": s, "output": f"{s} says {WEATHER[c % len(WEATHER)]} {c} ."}
        for c in range(2) for s in ("alpha", "beta")]


@pytest.mark.parametrize("options, message", [
    ([], "reports nothing that identifies the weights it serves as 'judge'"),
    (["--server-identity", "a|b"], "--server-identity: the server identity 'a|b' must be one line"),
])
def test_rank_cli_refuses_an_unidentified_server_in_one_line(tmp_path: Path, monkeypatch, capsys, options, message):
    monkeypatch.setenv("NLGJUDGE_OUTPUT_CACHE", str(tmp_path / "cache.sqlite"))
    monkeypatch.delenv("NLGJUDGE_SERVER_IDENTITY", raising=False)
    path = tmp_path / "in.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in ROWS))
    stub = VllmLikeStub(None)
    try:
        status = cli_main(["rank", str(path), "--out", str(tmp_path / "out"), "--model", "judge", "--server-tokenizer",
                           TOKENIZER, "--server-url", stub.url, *options])
    finally:
        stub.close()
    err = capsys.readouterr().err
    errors = [line for line in err.splitlines() if line.startswith("error:")]
    assert status == 2 and len(errors) == 1 and "Traceback" not in err, err
    assert message in errors[0], errors[0]
    assert not (tmp_path / "out" / "leaderboard.csv").exists()


def test_server_identity_without_a_server_is_refused(tmp_path: Path, capsys):
    status = cli_main(["rank", str(tmp_path / "in.jsonl"), "--out", str(tmp_path / "out"), "--model", TOKENIZER,
                       "--server-identity", "x"])
    err = capsys.readouterr().err
    assert status == 2 and "--server-identity is for a judge on a server: pass --server-url too" in err, err


# ---- a tokenizer from a folder: no weight packages on the client -----------------------------------
def test_the_converted_folder_builds_the_packaged_models_prompts_and_rank_takes_it(tmp_path: Path, monkeypatch, capsys):
    from vllm_utils import MODEL, served_folder

    from nlgjudge.engine.prompting import render_prompt
    from nlgjudge.engine.server import ServerRuntime

    folder = served_folder()  # what a vLLM server of the packaged model serves
    nowhere = "http://127.0.0.1:9/v1"  # never contacted: only the tokenizers are compared
    from_folder = ServerRuntime(MODEL, nowhere, tokenizer=str(folder)).tokenizer()
    packaged = ServerRuntime(MODEL, nowhere).tokenizer()
    for prompt, prefix in (([{"role": "user", "content": "Which summary is better, A or B? A: the cat. B: a dog."}], "Answer:"),
                           ("Is the sky green? Answer:", "")):
        text, special = render_prompt(from_folder, prompt, prefix)
        assert (text, special) == render_prompt(packaged, prompt, prefix)
        assert from_folder(text, add_special_tokens=special)["input_ids"] == packaged(text, add_special_tokens=special)["input_ids"]

    monkeypatch.setenv("NLGJUDGE_OUTPUT_CACHE", str(tmp_path / "cache.sqlite"))
    path = tmp_path / "in.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in ROWS))
    stub = VllmLikeStub("vllm-0.32.0-6717a39c", name=MODEL)
    try:
        status = cli_main(["rank", str(path), "--out", str(tmp_path / "out"), "--model", MODEL, "--server-tokenizer",
                           str(folder), "--server-url", stub.url, "--bootstrap", "20"])
    finally:
        stub.close()
    assert status == 0, capsys.readouterr().err
    assert (tmp_path / "out" / "leaderboard.csv").is_file()
    status = cli_main(["rank", str(path), "--out", str(tmp_path / "out2"), "--model", MODEL, "--server-tokenizer",
                       str(tmp_path / "no-such-folder"), "--server-url", nowhere])
    assert status == 2 and "the prompts for a served judge are built with" in capsys.readouterr().err
