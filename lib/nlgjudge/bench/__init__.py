"""The benchmarks, one module each, behind one entry point: ``python -m nlgjudge.bench NAME [ARGS...]``.

===================  ============================================================================
NAME                 what it times (each module's docstring says what it prints last)
===================  ============================================================================
``engine``           the judge engine against the paper code's naive loop on one SummEval
                     article; ``--compare-backends``: torch, the llama.cpp engine and a plain
                     llama.cpp prompt-cache loop (:mod:`nlgjudge.bench.engine`)
``sharing``          prompt scoring with and without ``Judge.sharing_prompts()``
                     (:mod:`nlgjudge.bench.sharing`)
``decoding``         llama.cpp sampling: decoding groups keeping their shared prefix, and the same
                     bits in any chunking (:mod:`nlgjudge.bench.decoding`)
``floating-trunk``   llama.cpp label probabilities right after sampling: the trunk computed again
                     from cell 0 or reused where it lies (:mod:`nlgjudge.bench.floating_trunk`)
``label-leaves``     llama.cpp score-word continuations side by side in one call or one call each
                     (:mod:`nlgjudge.bench.label_leaves`)
``gpu-check``        the torch runtime's P(A) and speed on a GPU against the CPU, 20 prompts
                     (:mod:`nlgjudge.bench.gpu_check`; exits 2 without a CUDA device)
``gpu-speed``        the torch runtime's prefix-tree runners (level by level, packed) against plain
                     batched forward passes on one article's comparisons; random weights at the
                     judge's config; ``--tiny`` runs on the CPU (:mod:`nlgjudge.bench.gpu_speed`)
``server``           a llama.cpp server against the in-process llama.cpp runtime on identical
                     prompts (:mod:`nlgjudge.bench.server`)
===================  ============================================================================

Without a NAME (the first argument an option, or none) it is the ``engine`` benchmark, so
``python -m nlgjudge.bench --quick`` and ``python -m nlgjudge.bench --compare-backends`` (and
``make bench BENCH_ARGS=...``, ``nlgjudge bench ...``) mean what they meant before the benchmarks
became a package; ``--gpu-check`` and ``--server`` as a first argument are the ``gpu-check`` and
``server`` benchmarks (the issue's spelling). The ``make bench*`` targets call this entry point.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Sequence

#: Benchmark name -> its module (imported only when it is run).
BENCHMARKS: dict[str, str] = {
    "engine": "nlgjudge.bench.engine",
    "sharing": "nlgjudge.bench.sharing",
    "decoding": "nlgjudge.bench.decoding",
    "floating-trunk": "nlgjudge.bench.floating_trunk",
    "label-leaves": "nlgjudge.bench.label_leaves",
    "gpu-check": "nlgjudge.bench.gpu_check",
    "gpu-speed": "nlgjudge.bench.gpu_speed",
    "server": "nlgjudge.bench.server",
}
DEFAULT = "engine"
#: Option spellings of a first argument that name a benchmark (not options of the engine benchmark).
OPTION_NAMES = {"--gpu-check": "gpu-check", "--server": "server"}


def main(argv: Sequence[str] | None = None) -> int:
    """Run benchmark NAME with the rest of the arguments; no NAME (an option first, or nothing): ``engine``."""
    args = list(sys.argv[1:] if argv is None else argv)
    if args and args[0] in OPTION_NAMES:
        name, rest = OPTION_NAMES[args[0]], args[1:]
    elif args and not args[0].startswith("-"):
        name, rest = args[0], args[1:]
        if name not in BENCHMARKS:
            print(f"python -m nlgjudge.bench: unknown benchmark {name!r}; choose one of {', '.join(BENCHMARKS)} "
                  f"(or give only options for {DEFAULT!r})", file=sys.stderr)
            return 2
    else:
        name, rest = DEFAULT, args
    return int(importlib.import_module(BENCHMARKS[name]).main(rest) or 0)
