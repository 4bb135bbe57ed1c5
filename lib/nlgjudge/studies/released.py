"""Released outputs: the studies' model outputs committed under ``data/outputs/<study>``.

A study's outputs are exported from the cache after each completed context (deterministic,
diff-friendly files) and imported back before a chapter runs, so the book rebuilds on a fresh
clone without loading a model.
"""

from __future__ import annotations

from pathlib import Path

from nlgjudge.cache import OutputCache
from nlgjudge.config import outputs_dir


def study_name(study: str, dataset: str) -> str:
    """The released-outputs folder of one study on one dataset, e.g. ``comparative-summeval``."""
    return f"{study}-{dataset}"


def import_released(study: str, cache: OutputCache, root: Path | None = None) -> int:
    """Import ``<outputs>/<study>`` into ``cache`` if it exists; returns the number of new outputs."""
    folder = (root or outputs_dir()) / study
    if not folder.is_dir():
        return 0
    return int(cache.import_outputs(folder))


def export_released(study: str, cache: OutputCache, root: Path | None = None) -> list[Path]:
    """Write the study's outputs to ``<outputs>/<study>`` (unchanged files are left untouched)."""
    return list(cache.export_study(study, (root or outputs_dir()) / study))
