"""Released outputs: the studies' model outputs committed under ``data/outputs/<study>``.

A study's outputs are exported from the cache after each completed context (deterministic,
diff-friendly files) and imported back before a chapter runs, so the book rebuilds on a fresh
clone without loading a model.
"""

from __future__ import annotations

import atexit
import shutil
import tempfile
from collections.abc import Iterable
from pathlib import Path

from nlgjudge.cache import OutputCache, recover_interrupted_exports
from nlgjudge.config import outputs_dir


def import_released(study: str, cache: OutputCache, root: Path | None = None) -> int:
    """Import ``<outputs>/<study>`` into ``cache`` if it exists; returns the number of new outputs.

    An export killed while swapping the folder in can leave it missing with its previous version
    beside it (``.<study>.old-XXXX``); that version is put back first, so the run sees it.
    """
    folder = (root or outputs_dir()) / study
    recover_interrupted_exports(folder)
    if not folder.is_dir():
        return 0
    return int(cache.import_outputs(folder))


def export_released(study: str, cache: OutputCache, root: Path | None = None) -> list[Path]:
    """Write the study's outputs to ``<outputs>/<study>``, swapped in as one set (an export that changes
    nothing writes nothing)."""
    return list(cache.export_study(study, (root or outputs_dir()) / study))


def chapter_cache(released_only: bool, studies: Iterable[str], root: Path | None = None) -> tuple[OutputCache, dict[str, int]]:
    """The output cache a chapter reads, with the released outputs of ``studies`` imported.

    ``released_only=True`` (how the book is built): a new temporary database that holds exactly
    the released outputs, so the chapter shows the same numbers on every machine whatever the
    user's own cache holds (outputs of other runs, a context half computed). Otherwise the user's
    cache, so that what was computed before is reused and what is computed now is kept.
    Returns the cache and, per study, how many released outputs were new to it.
    """
    if released_only:
        folder = Path(tempfile.mkdtemp(prefix="nlgjudge-released-"))
        atexit.register(shutil.rmtree, folder, ignore_errors=True)
        cache = OutputCache(folder / "outputs.sqlite")
    else:
        cache = OutputCache()
    imported = {study: import_released(study, cache, root) for study in dict.fromkeys(studies)}
    return cache, imported
