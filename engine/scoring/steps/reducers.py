"""How a score step writes a list reduced to one number (the catalog compiles it)."""

from __future__ import annotations

from dataclasses import replace
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from .. import ranges
from ..shapes import ANY, NUMBER, ListOf, Number, Shape


class ReducerSpec(BaseModel):
    """Turns the list found at `items` into one number.

    - `ratio`: share of items for which `where` holds.
    - `mean` / `sum` / `min` / `max`: of `value` computed per item.
    - `count`: number of items for which `where` holds.
    - `average_precision`: items are ranked; `where` marks the relevant ones; the mean of
      precision@k over the ranks k of relevant items (0 when none is relevant).

    `empty` is the number an empty list gives (a ratio of nothing is not defined otherwise).
    """

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)

    reduce: Literal["ratio", "mean", "sum", "min", "max", "count", "average_precision"]
    items: str = Field(description="Expression giving the list, e.g. analyze.verdicts")
    where: str | None = Field(default=None, description="Condition per item, sees `item`")
    value: str | None = Field(default=None, description="Number per item, sees `item`")
    empty: float = 0.0


def reduced(spec: ReducerSpec, items: Shape, value: Shape) -> Shape:
    """What the reducer gives, from the shape of its list and of its per-item `value`: a
    share from 0 to 1, a count up to the list's length, the value's range for a mean, a
    minimum or a maximum, and for a sum the value's range times the list's length; or
    `empty`, for an empty list."""
    listed = items if isinstance(items, ListOf) else ListOf(ANY)
    sources = listed.sources
    if spec.reduce in ("ratio", "average_precision"):
        found: Shape = Number(0, 1, tight=listed.most >= 1, sources=sources)
    elif spec.reduce == "count":
        found = replace(ranges.length(listed), low=0, nonzero=False)
    else:
        number = ranges.as_number(value)
        if number is None:
            return NUMBER
        found = ranges.total(listed, number) if spec.reduce == "sum" else replace(number, sources=number.sources | sources, nonzero=False)
    if listed.least > 0:
        return found
    return found.join(ranges.constant(spec.empty))
