"""Where :func:`create_actor` places an actor inside a main pool and its sub pools."""

from __future__ import annotations

from dataclasses import dataclass


class AllocateStrategy:
    """Base of the placement rules; the main pool interprets them."""


@dataclass(frozen=True)
class MainPool(AllocateStrategy):
    """The main pool's own process."""


@dataclass(frozen=True)
class ProcessIndex(AllocateStrategy):
    """The process with this index: 0 is the main pool, 1..n the sub pools."""

    index: int


@dataclass(frozen=True)
class RandomSubPool(AllocateStrategy):
    """Any sub pool, chosen at random."""


@dataclass(frozen=True)
class RandomLabel(AllocateStrategy):
    """A random sub pool among those that carry ``label``."""

    label: str


@dataclass(frozen=True)
class IdleLabel(AllocateStrategy):
    """A sub pool with ``label`` that holds no live actor created with the same ``mark``.

    Used to put one actor of a kind in each slot (e.g. one runner per
    ``cpu-*`` process); raises :class:`~mars.oscar.errors.NoMatchingPool` when
    every such pool already has one.
    """

    label: str
    mark: str


@dataclass(frozen=True)
class LeastLoaded(AllocateStrategy):
    """The sub pool (optionally restricted to ``label``) holding the fewest actors."""

    label: str | None = None
