"""Sphinx extension: the references page labels each work by its authors and year, as the text cites it.

The text cites author-year ("Liusie et al., 2024"), but pybtex's default bibliography labels are
alphabetic codes ("[LML24]") that a reader cannot match to the citation. This registers a pybtex
label style that writes "Zheng et al., 2025" (one author: "Harang, 2023"; two: "Cohen and Elo,
1978"; three, as the answer boxes name a paper: "Liusie, Manakul and Gales, 2024"), with a letter after the year when two works would share a label ("Liu et al., 2023a"), and a
formatting style, ``authoryear``, that uses it and sorts by author and year.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator
from typing import Any

from pybtex.plugin import register_plugin
from pybtex.style.formatting.unsrt import Style as UnsrtStyle
from pybtex.style.labels import BaseLabelStyle
from pybtex.style.sorting.author_year_title import SortingStyle as AuthorYearTitleSorting
from sphinx.application import Sphinx


def _surname(person: Any) -> str:
    return " ".join(str(part) for part in person.prelast_names + person.last_names).replace("{", "").replace("}", "")


class AuthorYearLabelStyle(BaseLabelStyle):
    """Labels "Surname, Year", "A and B, Year", "A, B and C, Year" or "A et al., Year", made unique by a letter after the year."""

    def format_label(self, entry: Any) -> str:
        people = entry.persons.get("author") or entry.persons.get("editor") or []
        if not people:
            names = entry.fields.get("organization") or entry.fields.get("key") or entry.key
        elif len(people) == 1:
            names = _surname(people[0])
        elif len(people) == 2:
            names = f"{_surname(people[0])} and {_surname(people[1])}"
        elif len(people) == 3:  # as the answer boxes name a paper: "Liu, Moosavi and Lin"
            names = f"{_surname(people[0])}, {_surname(people[1])} and {_surname(people[2])}"
        else:
            names = f"{_surname(people[0])} et al."
        return f"{names}, {entry.fields.get('year', 'n.d.')}"

    def format_labels(self, sorted_entries: Iterable[Any]) -> Iterator[str]:
        labels = [self.format_label(entry) for entry in sorted_entries]
        count = Counter(labels)
        seen: Counter[str] = Counter()
        for label in labels:
            if count[label] == 1:
                yield label
            else:
                yield label + chr(ord("a") + seen[label])
                seen[label] += 1


class AuthorYearSorting(AuthorYearTitleSorting):
    """pybtex's author-year-title order, with a group author's protecting braces ("{Gemma Team}")
    left out of the key: a brace sorts after every letter, which put such a work last."""

    def sorting_key(self, entry: Any) -> tuple[str, ...]:
        return tuple(part.replace("{", "").replace("}", "") for part in super().sorting_key(entry))


class AuthorYearStyle(UnsrtStyle):
    """pybtex's unsrt formatting, labelled by :class:`AuthorYearLabelStyle` and sorted by author and year."""

    default_label_style = "authoryear"
    default_sorting_style = "authoryear"


def setup(app: Sphinx) -> dict[str, Any]:
    register_plugin("pybtex.style.labels", "authoryear", AuthorYearLabelStyle)
    register_plugin("pybtex.style.sorting", "authoryear", AuthorYearSorting)
    register_plugin("pybtex.style.formatting", "authoryear", AuthorYearStyle)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
