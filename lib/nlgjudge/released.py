"""What the released build of a chapter said, so that a rerun can show it beside the new verdicts.

A class reruns a chapter with other parameters (``make chapter NAME=bias PARAMS="-p ..."``) to see
how a verdict changes; the rerun replaces the page, so without help the page never shows what the
verdict was. The released build is the page built with the chapter's default parameters (what
``make book`` writes). :func:`compare_with_released`, called at the top of a chapter, decides
whether this run is a rerun (any parameter differs from the defaults) and, if so, hands the
released build's glued values to :mod:`nlgjudge.prose`, whose :func:`~nlgjudge.prose.glue_all`
then writes "(was: ...)" after every verdict that changed.

Where the released values come from: the chapter's page ``book/<name>.ipynb`` while it is still the
default build (a rerun writes the page only when it has run through), copied once to
``_build/released/<name>.json`` so that a second rerun still compares with the released build and
not with the first rerun.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from nlgjudge.config import REPO_ROOT

#: Where the released build's glued values are kept for later reruns (a build folder, not data).
RELEASED_DIRNAME = Path("_build") / "released"


def glued_values(notebook: Mapping[str, Any]) -> dict[str, str]:
    """Every value an executed notebook glued (myst-nb / scrapbook records), as display strings."""
    values: dict[str, str] = {}
    for cell in notebook.get("cells", []):
        for output in cell.get("outputs", []):
            name = output.get("metadata", {}).get("scrapbook", {}).get("name")
            data = output.get("data", {})
            text = data.get("application/papermill.record/text/plain")
            if name and isinstance(text, str):
                values[name] = _literal(text)
    return values


def _literal(text: str) -> str:
    import ast

    try:
        value = ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return text
    return value if isinstance(value, str) else text


def _comparable(value: Any) -> Any:
    return json.loads(json.dumps(value, sort_keys=True, default=str))


def is_default_run(chapter: str, parameters: Mapping[str, Any]) -> bool:
    """Whether ``parameters`` (a notebook's namespace or its recorded papermill parameters) hold the
    chapter's defaults for every parameter the chapter declares."""
    from nlgjudge.chapters import get_chapter

    defaults = get_chapter(chapter).parameters()
    return all(_comparable(parameters.get(name)) == _comparable(value) for name, value in defaults.items())


def released_values(chapter: str, root: Path = REPO_ROOT) -> dict[str, str] | None:
    """The released build's glued values of ``chapter``: from its page when that is still the default
    build (and then kept under :data:`RELEASED_DIRNAME`), else from what was kept; ``None`` when
    neither exists (e.g. a fresh clone whose first run is a rerun of a page built otherwise)."""
    kept = root / RELEASED_DIRNAME / f"{chapter}.json"
    page = root / "book" / f"{chapter}.ipynb"
    if page.is_file():
        try:
            notebook = json.loads(page.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError):
            notebook = None
        recorded = (notebook or {}).get("metadata", {}).get("papermill", {}).get("parameters")
        if notebook is not None and isinstance(recorded, dict) and is_default_run(chapter, recorded):
            values = glued_values(notebook)
            kept.parent.mkdir(parents=True, exist_ok=True)
            kept.write_text(json.dumps(values, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
            return values
    if kept.is_file():
        try:
            return {str(k): str(v) for k, v in json.loads(kept.read_text(encoding="utf-8")).items()}
        except (OSError, json.JSONDecodeError, AttributeError):
            return None
    return None


def compare_with_released(chapter: str, namespace: Mapping[str, Any], root: Path = REPO_ROOT) -> bool:
    """At the top of a chapter: on a rerun (parameters other than the defaults), make
    :func:`nlgjudge.prose.glue_all` mark every changed verdict with the released build's; returns
    whether it will."""
    from nlgjudge import prose

    previous = None if is_default_run(chapter, namespace) else released_values(chapter, root)
    prose.set_previous_values(previous)
    return previous is not None


def previous_build_time(chapter: str, root: Path = REPO_ROOT) -> str:
    """How long the page's previous build took (papermill's record in ``book/<name>.ipynb``), in words,
    for a chapter's exercises to say what a rerun costs; "unknown" without a record."""
    from nlgjudge.prose import duration_text

    page = root / "book" / f"{chapter}.ipynb"
    try:
        seconds = json.loads(page.read_text(encoding="utf-8"))["metadata"]["papermill"]["duration"]
    except (OSError, json.JSONDecodeError, KeyError, TypeError):
        return "unknown"
    return duration_text(float(seconds)) if isinstance(seconds, (int, float)) else "unknown"
