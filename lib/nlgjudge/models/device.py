"""Where the torch runtime computes: the device, the dtype and batch budgets that fit its memory.

The device is, in order: the ``device`` a judge is given, ``$NLGJUDGE_DEVICE``, CUDA when torch
sees a CUDA device, else the CPU. The dtype is fp32 on the CPU (the released outputs' numbers);
on a GPU bf16 where the GPU computes it natively (compute capability 8.0 and later), else fp16;
``dtype`` / ``$NLGJUDGE_DTYPE`` override it. A placement other than CPU fp32 is part of the cache
key's runtime (:attr:`Placement.fingerprint_suffix`), so half-precision GPU outputs never mix with
the CPU's fp32 ones, and the CPU fp32 keys stay those of earlier releases.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

DEVICE_ENV = "NLGJUDGE_DEVICE"
DTYPE_ENV = "NLGJUDGE_DTYPE"
#: How the torch runtime lays out its prefix tree: "levels" (padded rows, level by level: the CPU's
#: default and the layout of every released output), "packed" (one depth-first token stream in
#: few wide passes: a GPU's default), or "auto"; optionally "packed:<chunk tokens>:<sdpa|flex>".
RUNNER_ENV = "NLGJUDGE_TORCH_RUNNER"
#: New tokens per pass of the packed layout on a GPU (gpu-speed measured 2048-8192 on an H100).
PACKED_CHUNK_TOKENS = 4096
#: dtype names accepted in a setting -> torch attribute name
DTYPES = {"float32": "float32", "fp32": "float32", "bfloat16": "bfloat16", "bf16": "bfloat16",
          "float16": "float16", "fp16": "float16"}
#: Share of the free GPU memory the key/values of one forward pass may take (the rest: weights'
#: activations, the output layer's rows, the kept prompt states and the allocator's slack).
KV_MEMORY_SHARE = 0.25


@dataclass(frozen=True)
class RunnerLayout:
    """Which prefix-tree runner the torch runtime uses, and the packed runner's settings."""

    name: str  # "levels" | "packed"
    chunk_tokens: int = PACKED_CHUNK_TOKENS
    attention: str = "sdpa"


def choose_torch_runner(placement: "Placement", setting: str | None = None) -> RunnerLayout:
    """``setting`` (else ``$NLGJUDGE_TORCH_RUNNER``, else "auto"): "auto" is "packed" on a GPU and
    "levels" elsewhere, so the CPU computes exactly as before. "packed:2048:flex" sets the chunk
    size and the attention of the packed runner. Both layouts give the same numbers up to
    floating-point reassociation, so the choice is not part of the cache key."""
    raw = (setting if setting is not None else os.environ.get(RUNNER_ENV, "")).strip() or "auto"
    name, *rest = raw.split(":")
    source = "runner" if setting is not None else RUNNER_ENV
    if name == "auto":
        if rest:
            raise ValueError(f"{source}={raw!r}: options go with 'packed' only, e.g. packed:4096:sdpa")
        name = "packed" if placement.device_type == "cuda" else "levels"
    if name not in ("levels", "packed"):
        raise ValueError(f"{source}={raw!r} is not a runner; choose auto, levels or packed[:<chunk tokens>[:sdpa|flex]]")
    if name == "levels":
        if rest:
            raise ValueError(f"{source}={raw!r}: options go with 'packed' only, e.g. packed:4096:sdpa")
        return RunnerLayout("levels")
    chunk, attention = PACKED_CHUNK_TOKENS, "sdpa"
    if len(rest) > 2:
        raise ValueError(f"{source}={raw!r}: write packed[:<chunk tokens>[:sdpa|flex]]")
    if rest and rest[0]:
        if not rest[0].isdigit() or int(rest[0]) < 1:
            raise ValueError(f"{source}={raw!r}: the chunk size must be a positive whole number of tokens, e.g. packed:4096")
        chunk = int(rest[0])
    if len(rest) == 2:
        if rest[1] not in ("sdpa", "flex"):
            raise ValueError(f"{source}={raw!r}: the attention must be sdpa or flex, e.g. packed:4096:flex")
        attention = rest[1]
    return RunnerLayout("packed", chunk, attention)


class DeviceUnavailableError(RuntimeError):
    """The device a judge was told to use is not there (one line, for the command line)."""


@dataclass(frozen=True)
class Placement:
    """A device type ("cpu", "cuda", "meta", ...) with an index where it has one, and a dtype name."""

    device: str  # as torch names it: "cpu", "cuda", "cuda:1", "meta"
    dtype: str  # "float32" | "bfloat16" | "float16"

    @property
    def device_type(self) -> str:
        return self.device.split(":", 1)[0]

    @property
    def is_default(self) -> bool:
        """CPU fp32: the runtime of every released output (no suffix in the cache keys)."""
        return self.device_type == "cpu" and self.dtype == "float32"

    @property
    def fingerprint_suffix(self) -> str:
        # The device index does not change the numbers, so it stays out of the key.
        return "" if self.is_default else f"|device={self.device_type}|dtype={self.dtype}"

    def torch_dtype(self) -> Any:
        import torch

        return getattr(torch, self.dtype)


def _setting(value: str | None, env: str) -> tuple[str | None, str]:
    if value is not None and str(value).strip():
        return str(value).strip(), "device" if env == DEVICE_ENV else "dtype"
    from_env = os.environ.get(env, "").strip()
    return (from_env or None), env


def choose_device(device: str | None = None) -> str:
    """The device name: ``device``, else ``$NLGJUDGE_DEVICE``, else "cuda" when available, else "cpu"."""
    import torch

    wanted, source = _setting(device, DEVICE_ENV)
    if wanted is None or wanted == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    try:
        parsed = torch.device(wanted)
    except (RuntimeError, ValueError) as error:
        raise ValueError(f"{source}={wanted!r} is not a torch device (e.g. 'cpu', 'cuda', 'cuda:1', 'auto')") from error
    if parsed.type == "cuda":
        if not torch.cuda.is_available():
            raise DeviceUnavailableError(
                f"{source}={wanted!r} but torch sees no CUDA device (torch {torch.__version__}, CUDA build: "
                f"{torch.version.cuda or 'no'}); install the CUDA build of torch or use the CPU"
            )
        if parsed.index is not None and parsed.index >= torch.cuda.device_count():
            raise DeviceUnavailableError(f"{source}={wanted!r} but torch sees {torch.cuda.device_count()} CUDA device(s)")
    return str(parsed)


def choose_dtype(device: str, dtype: str | None = None) -> str:
    """fp32 on the CPU; bf16 on a GPU that computes it natively (capability >= 8.0), else fp16."""
    wanted, source = _setting(dtype, DTYPE_ENV)
    if wanted is not None and wanted != "auto":
        if wanted not in DTYPES:
            raise ValueError(f"{source}={wanted!r} is not a dtype; choose one of float32, bfloat16, float16 (or auto)")
        return DTYPES[wanted]
    if not device.startswith("cuda"):
        return "float32"
    import torch

    index = torch.device(device).index or 0
    major, _ = torch.cuda.get_device_capability(index)
    return "bfloat16" if major >= 8 else "float16"


def choose_placement(device: str | None = None, dtype: str | None = None) -> Placement:
    """The device and dtype of a torch judge (see the module docstring)."""
    chosen = choose_device(device)
    return Placement(chosen, choose_dtype(chosen, dtype))


def place_model(model: Any, placement: Placement) -> Any:
    """Move ``model`` (in place) to the placement's device and dtype; a no-op where it already is."""
    parameter = next(model.parameters(), None)
    if parameter is not None and str(parameter.device) == _canonical(placement.device) and str(parameter.dtype) == f"torch.{placement.dtype}":
        return model
    return model.to(device=placement.device, dtype=placement.torch_dtype())


def _canonical(device: str) -> str:
    return "cuda:0" if device == "cuda" else device


def batch_budgets(placement: Placement, token_budget: int, state_budget: int, kv_bytes_per_token: int) -> tuple[int, int]:
    """(token_budget, state_budget) for one forward pass on ``placement``.

    The CPU keeps the given budgets (tuned for a CPU's caches). On a GPU the key/value budget grows
    to what ``KV_MEMORY_SHARE`` of the free memory holds (never below the given one) and the new
    tokens per pass to a quarter of that, at most 16384: a GPU needs wide batches to be busy.
    """
    if placement.device_type != "cuda":
        return token_budget, state_budget
    import torch

    free, _ = torch.cuda.mem_get_info(torch.device(placement.device).index or 0)
    fits = int(free * KV_MEMORY_SHARE) // max(kv_bytes_per_token, 1)
    state = max(state_budget, fits)
    return max(token_budget, min(16384, state // 4)), state
