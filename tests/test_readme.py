"""README.md opens for readers (issue 47): what the book is, the reading path, the two set-up commands;
engineering detail (commit hashes, issue numbers, plan names) below them or in CONTRIBUTING.md."""

from __future__ import annotations

import re

import yaml

from nlgjudge.chapters import list_chapters
from nlgjudge.config import REPO_ROOT

README = (REPO_ROOT / "README.md").read_text(encoding="utf-8")


def section(title: str) -> str:
    match = re.search(rf"^## {re.escape(title)}\n(.*?)(?=^## |\Z)", README, re.S | re.M)
    assert match, f"README has no section {title!r}"
    return match.group(1)


def test_the_reader_part_comes_first_without_engineering_detail() -> None:
    headings = re.findall(r"^## (.+)$", README, re.M)
    assert headings[:2] == ["Reading path", "Set-up: two commands"]
    opening = README[: README.index("## Set-up: two commands")]
    assert not re.search(r"\b[0-9a-f]{7,40}\b", opening), "a commit hash before the set-up"
    assert not re.search(r"\b[Ii]ssue \d+", opening), "an issue number before the set-up"
    assert not re.search(r"\b[A-Z]{2,}(?:_[A-Z]+)+\b", opening), "a plan name before the set-up"


def test_the_reading_path_follows_the_table_of_contents() -> None:
    path = section("Reading path")
    toc = yaml.safe_load((REPO_ROOT / "_toc.yml").read_text(encoding="utf-8"))
    chapters = {f"book/{c.name}": c.title for c in list_chapters()}
    titles = [chapters[entry["file"]] for entry in toc["chapters"] if entry["file"] in chapters]
    positions = [path.find(f"**{title}**") for title in titles]
    assert -1 not in positions, [t for t, p in zip(titles, positions) if p == -1]
    assert positions == sorted(positions), "the reading path is not in the table of contents' order"
    for page in ("Running the chapters on a GPU", "Glossary", "References"):
        assert f"**{page}**" in path


def test_the_set_up_has_exactly_the_two_commands() -> None:
    blocks = re.findall(r"```bash\n(.*?)```", section("Set-up: two commands"), re.S)
    commands = [line.split("#")[0].strip() for block in blocks for line in block.splitlines() if line.strip()]
    assert commands == ["make book", "make test"]


def test_the_release_history_lives_in_contributing() -> None:
    contributing = (REPO_ROOT / "CONTRIBUTING.md").read_text(encoding="utf-8")
    assert "16ae99d" in contributing and "16ae99d" not in README
    assert "CONTRIBUTING.md" in README
