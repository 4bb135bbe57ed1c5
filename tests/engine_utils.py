"""Tiny randomly initialised models and a tokenizer built in the test, for the engine's tests."""

from __future__ import annotations

import functools
from typing import Any

import torch

SENTENCES = [
    "The cat sat on the mat and looked at the dog .",
    "Summary A : the council approved the new budget on Monday .",
    "Summary B : a storm closed the schools for two days .",
    "Which summary is more coherent ? Answer : Summary A",
    "Which summary is more fluent ? Answer : Summary B",
    "Score the summary from 1 to 10 . Score : 10",
    "The article says the team won the final after extra time .",
    "TL;DR : the team won . Paraphrase the sentence : in other words",
]
CHAT_TEMPLATE = (
    "{% for m in messages %}<|{{ m['role'] }}|> {{ m['content'] }} <|end|> {% endfor %}"
    "{% if add_generation_prompt %}<|assistant|> {% endif %}"
)


@functools.lru_cache(maxsize=None)
def tiny_tokenizer() -> Any:
    """A byte-level BPE tokenizer trained on a few sentences (vocabulary ~300)."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    specials = ["<pad>", "<s>", "</s>", "<|user|>", "<|assistant|>", "<|system|>", "<|end|>"]
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=300, special_tokens=specials, initial_alphabet=pre_tokenizers.ByteLevel.alphabet()
    )
    tok.train_from_iterator(SENTENCES, trainer)
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tok, pad_token="<pad>", bos_token="<s>", eos_token="</s>", unk_token=None
    )
    fast.chat_template = CHAT_TEMPLATE
    return fast


def _common(tok: Any) -> dict[str, int]:
    return {
        "vocab_size": len(tok),
        "pad_token_id": tok.pad_token_id,
        "bos_token_id": tok.bos_token_id,
        "eos_token_id": tok.eos_token_id,
    }


def tiny_model(family: str, seed: int = 0) -> Any:
    """A randomly initialised fp32 model of one family: gpt2, llama, qwen2, t5, bart."""
    import transformers as tf

    tok = tiny_tokenizer()
    torch.manual_seed(seed)
    c = _common(tok)
    if family == "gpt2":
        model = tf.GPT2LMHeadModel(tf.GPT2Config(n_embd=32, n_layer=2, n_head=4, n_positions=512, **c))
    elif family == "llama":
        model = tf.LlamaForCausalLM(
            tf.LlamaConfig(hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=4,
                           num_key_value_heads=2, max_position_embeddings=512, **c)
        )
    elif family == "qwen2":
        model = tf.Qwen2ForCausalLM(
            tf.Qwen2Config(hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=4,
                           num_key_value_heads=2, max_position_embeddings=512, **c)
        )
    elif family == "t5":
        model = tf.T5ForConditionalGeneration(
            tf.T5Config(d_model=32, d_ff=64, d_kv=8, num_layers=2, num_heads=4, decoder_start_token_id=tok.pad_token_id,
                        **{k: v for k, v in c.items() if k != "bos_token_id"})
        )
    elif family == "bart":
        model = tf.BartForConditionalGeneration(
            tf.BartConfig(d_model=32, encoder_layers=2, decoder_layers=2, encoder_attention_heads=4,
                          decoder_attention_heads=4, encoder_ffn_dim=64, decoder_ffn_dim=64,
                          max_position_embeddings=512, decoder_start_token_id=tok.eos_token_id, **c)
        )
    else:
        raise ValueError(family)
    model.eval()
    return model


def tiny_handle(family: str, seed: int = 0) -> Any:
    from nlgjudge.models import ModelHandle

    return ModelHandle.from_objects(f"tiny-{family}-{seed}", tiny_model(family, seed), tiny_tokenizer())


@torch.inference_mode()
def reference_label_logprobs(model: Any, prompt_ids: list[int], label_ids: list[list[int]]) -> list[float]:
    """Plain one-at-a-time forward passes: the whole-sequence log-probability of each label."""
    out = []
    for label in label_ids:
        if getattr(model.config, "is_encoder_decoder", False):
            start = model.config.decoder_start_token_id
            logits = model(input_ids=torch.tensor([prompt_ids]), decoder_input_ids=torch.tensor([[start, *label[:-1]]])).logits[0]
            lp = torch.log_softmax(logits, -1)
            out.append(float(sum(lp[t, label[t]] for t in range(len(label)))))
        else:
            seq = prompt_ids + label
            lp = torch.log_softmax(model(torch.tensor([seq])).logits[0], -1)
            out.append(float(sum(lp[t - 1, seq[t]] for t in range(len(prompt_ids), len(seq)))))
    return out


def comparison_items(vocab: int, seed: int = 0, second_root: bool = False) -> list[tuple[list[int], int]]:
    """Comparative-style scoring items over random token ids: a passage, every ordered pair of four
    candidates, two questions, three labels (one of them several tokens); ``second_root`` adds an
    unrelated passage, so the tree has two roots."""
    import random

    rng = random.Random(seed)
    passage = [rng.randrange(vocab) for _ in range(25)]
    candidates = [[rng.randrange(vocab) for _ in range(rng.randrange(2, 8))] for _ in range(4)]
    items = []
    for a in candidates:
        for b in candidates:
            if a is b:
                continue
            for question in ([5, 6, 7], [5, 6, 8, 9]):
                prompt = passage + a + [3] + b + question
                for label in ([11], [12], [13, 14, 15]):
                    items.append((prompt + label, len(prompt)))
    if second_root:
        other = [rng.randrange(vocab) for _ in range(9)]
        items.append((other + [11], len(other)))
    return items


@torch.inference_mode()
def plain_continuation_logprobs(model: Any, items: list[tuple[list[int], int]]) -> list[list[float]]:
    """One plain forward pass per item: ``log p(tokens[t] | tokens[:t])`` for t from ``first`` on."""
    out = []
    for tokens, first in items:
        lp = torch.log_softmax(model(torch.tensor([tokens])).logits[0], -1)
        out.append([float(lp[t - 1, tokens[t]]) for t in range(first, len(tokens))])
    return out
