"""Chapter parameter types: what a parameter accepts, and the one-line error when it does not.

Built from small constructors (:func:`integer`, :func:`list_of`, ``a | b`` for a union, ...)
rather than from Python annotations, because the values come from YAML on the command line and the
useful checks are narrower than Python types (``templates`` is a list of 1 or 2, not of int). The
chapter registry (:mod:`nlgjudge.chapters`) declares each chapter's parameters with these types;
this module knows nothing about chapters.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any


class ParameterError(ValueError):
    """Raised for a parameter override that the chapter does not declare, or that does not fit."""


class ParameterTypeError(ParameterError, TypeError):
    """Raised for a parameter value of the wrong type (e.g. ``seed = {a: 1}``)."""


@dataclass(frozen=True)
class ParamType:
    """The type a chapter parameter accepts: a test and the words that describe it in an error.

    Built from the constructors below (:func:`integer`, :func:`list_of`, ``a | b`` for a union, ...)
    rather than from Python annotations, because the values come from YAML on the command line and
    the useful checks are narrower than Python types (``templates`` is a list of 1 or 2, not of int).
    """

    description: str
    """As in "must be <description>", e.g. ``"an integer >= 1"``."""
    plural: str
    """As in "a list of <plural>", e.g. ``"integers >= 1"``."""
    test: Callable[[Any], bool] = field(repr=False, compare=False)
    examples: tuple[Any, ...] = field(default=(), repr=False, compare=False)
    """Values this type accepts, for a runnable example where the type cannot make one up (the
    choices of :func:`choice`)."""

    def accepts(self, value: Any) -> bool:
        return self.test(value)

    def __or__(self, other: ParamType) -> ParamType:
        return ParamType(
            f"{self.description} or {other.description}",
            f"{self.plural} or {other.plural}",
            lambda value: self.test(value) or other.test(value),
            self.examples + other.examples,
        )

    def __str__(self) -> str:
        return self.description


def is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)  # YAML's true is not 1


def integer(minimum: int | None = None) -> ParamType:
    """An integer (not a bool), at least ``minimum``."""
    bound = "" if minimum is None else f" >= {minimum}"
    return ParamType(
        f"an integer{bound}", f"integers{bound}", lambda v: is_int(v) and (minimum is None or v >= minimum)
    )


STRING = ParamType("a non-empty string", "non-empty strings", lambda v: isinstance(v, str) and v != "")
BOOLEAN = ParamType("true or false", "booleans", lambda v: isinstance(v, bool))
NONE = ParamType("None (null)", "None", lambda v: v is None)


def choice(values: Iterable[Any], what: str = "values") -> ParamType:
    """One of ``values`` (compared by type and value, so ``True`` is not ``1``)."""
    allowed = tuple(values)
    listing = ", ".join(repr(v) for v in allowed)
    return ParamType(
        f"one of {listing}", f"{what} from {listing}", lambda v: any(type(v) is type(a) and v == a for a in allowed),
        allowed,
    )


def list_of(item: ParamType, min_length: int = 0) -> ParamType:
    """A list (or tuple) whose every item is ``item``, with at least ``min_length`` items."""
    size = "" if min_length == 0 else ("a non-empty " if min_length == 1 else f"at least {min_length}, ")
    article = "" if size else "a "
    return ParamType(
        f"{article}{size}list of {item.plural}",
        f"lists of {item.plural}",
        lambda v: isinstance(v, list | tuple) and len(v) >= min_length and all(item.accepts(x) for x in v),
        tuple([x] for x in item.examples),
    )


def mapping_of(key: ParamType, value: ParamType) -> ParamType:
    """A mapping (dict) from ``key`` to ``value``."""
    return ParamType(
        f"a mapping of {key.plural} to {value.plural}",
        f"mappings of {key.plural} to {value.plural}",
        lambda v: isinstance(v, Mapping) and all(key.accepts(k) and value.accepts(x) for k, x in v.items()),
    )


def infer_type(default: Any) -> ParamType | None:
    """The type of a default value, or None when it cannot say (None, an empty or mixed list, ...)."""
    if isinstance(default, bool):
        return BOOLEAN
    if is_int(default):
        return integer()
    if isinstance(default, float):
        return ParamType("a number", "numbers", lambda v: isinstance(v, int | float) and not isinstance(v, bool))
    if isinstance(default, str):
        return STRING
    if isinstance(default, list | tuple) and default:
        items = [infer_type(x) for x in default]
        if all(t is not None and t == items[0] for t in items):
            return list_of(items[0])  # type: ignore[arg-type]
    return None


def shown(value: Any, limit: int = 80) -> str:
    """A value as an error message quotes it, cut at ``limit`` characters."""
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def type_error(chapter: str, name: str, expected: ParamType, value: Any) -> ParameterTypeError:
    """The one-line error for ``value`` given to parameter ``name`` of ``chapter``."""
    message = (
        f"chapter {chapter!r}: parameter {name!r} must be {expected}; got {shown(value)} ({type(value).__name__})"
    )
    if isinstance(value, int | float) and expected.accepts(str(value)):
        # YAML read the text as a number or a bool; quoting keeps it a string.
        message += f"; to pass it as text, quote it: -p {name} \"'{value}'\""
    return ParameterTypeError(message)
