"""Do a chapter's verdicts move with its random draws? The analysis plan asks that they do not.

Every chapter with a ``resample_seed`` parameter (bootstraps and random draws only; its contexts stay
those of ``seed``) is executed again from the released outputs with resample seeds 1 and 2, into a
scratch folder (``book/`` is left alone), and each of its verdict-bearing glued values (the claims
register's ``verdict_glue``) is read as its verdict words beside the released build's, seed 0.

``python -m nlgjudge.seed_check`` writes :data:`TABLE` (one row per glued value) and exits 1 when a
verdict moved; the analysis plan's page reads the table (:func:`nlgjudge.register.seed_check_lines`). About twice the
chapters' build time (the subsets chapter's draws most of it).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from nlgjudge.config import REPO_ROOT
from nlgjudge.prose import VERDICT_WORDS

from nlgjudge.register import SEED_TABLE as TABLE  # the table the check writes and the register page reads
#: The resample seeds run beside the released build's (0).
SEEDS = (1, 2)
# the claim rule's words (one list, nlgjudge.prose's), and the one a Monte Carlo error adds
_WORDS = re.compile(r"\b(" + "|".join((*VERDICT_WORDS, "borderline")) + r")\b")


def verdict_words(text: str) -> str:
    """The verdict words of a glued value, in order ("supported / not resolved"), without its numbers:
    the numbers of a resampled interval move with the seed by design, its verdict must not."""
    # a rerun marks a value that differs from the released build's at its end (nlgjudge.prose.with_previous):
    # the released words it quotes are seed 0's, read from the released build itself
    text = text.split(" (was: ", 1)[0].replace(" (changed since the released build)", "")
    found = _WORDS.findall(text)
    return " / ".join(found) if found else "no verdict word"


def _glued(path: Path | dict) -> dict[str, str]:
    """The glued values of an executed notebook: its path, or the notebook already read."""
    from nlgjudge.released import glued_values

    return glued_values(path if isinstance(path, dict) else json.loads(path.read_text(encoding="utf-8")))


def released_words(chapter: str, names: Sequence[str], root: Path = REPO_ROOT) -> dict[str, str]:
    """The verdict words of ``names`` in the released build of ``chapter`` (``book/<chapter>.ipynb``)."""
    values = _glued(root / "book" / f"{chapter}.ipynb")
    return {name: verdict_words(values.get(name, "")) for name in names}


def check(root: Path = REPO_ROOT, seeds: Sequence[int] = SEEDS, chapters: Sequence[str] | None = None,
          scratch: Path | None = None) -> pd.DataFrame:
    """One row per verdict-bearing glued value of each chapter with a ``resample_seed``: its verdict
    words at seed 0 (the released build, ``book/<chapter>.ipynb``) and at each of ``seeds``."""
    from nlgjudge.book import STAMP_KEY, execute_chapter, list_chapters
    from nlgjudge.register import register

    reg = register()
    rows = []
    with tempfile.TemporaryDirectory(prefix="nlgjudge-seeds-") as temporary:
        folder = scratch or Path(temporary)
        for chapter in list_chapters():
            if "resample_seed" not in chapter.defaults or (chapters and chapter.name not in chapters):
                continue
            released = chapter.output_path(root)
            notebook = json.loads(released.read_text(encoding="utf-8"))  # read once: its stamp and its values
            if notebook.get("metadata", {}).get(STAMP_KEY, {}).get("defaults") is False:
                raise SystemExit(f"error: {released} was executed with other parameters than the defaults; "
                                 f"run `python -m nlgjudge.book build` first")
            values = {0: _glued(notebook)}
            for seed in seeds:
                out = folder / f"{chapter.name}-resample-seed-{seed}.ipynb"
                execute_chapter(chapter, {"resample_seed": seed}, root=root, output=out, progress_bar=False)
                values[seed] = _glued(out)
            names: dict[str, list[str]] = {}
            for spec in reg.of_chapter(chapter.name):
                for name in spec.verdict_glue:
                    names.setdefault(name, []).append(spec.id)
            for name, claims in names.items():
                words = {seed: verdict_words(values[seed].get(name, "")) for seed in (0, *seeds)}
                rows.append([chapter.name, ", ".join(claims), name, *words.values(), len(set(words.values())) == 1])
    return pd.DataFrame(rows, columns=["chapter", "claims", "glued value", *[f"seed {s}" for s in (0, *seeds)], "same"])


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m nlgjudge.seed_check", description=__doc__.split("\n\n")[0])
    parser.add_argument("--chapter", action="append", default=None, help="only this chapter (repeatable)")
    args = parser.parse_args(argv)
    table = check(chapters=args.chapter)
    path = REPO_ROOT / TABLE
    path.parent.mkdir(parents=True, exist_ok=True)
    table.to_csv(path, index=False)
    moved = table[~table["same"]]
    print(f"{len(table)} verdict-bearing values; {len(moved)} moved with the resample seed; written to {TABLE.as_posix()}")
    for _, row in moved.iterrows():
        print(f"  moved: {row['chapter']} {row['glued value']}: " + " | ".join(str(row[c]) for c in table.columns if c.startswith("seed ")))
    return 1 if len(moved) else 0


if __name__ == "__main__":
    sys.exit(main())
