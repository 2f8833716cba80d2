"""How a score step writes a list reduced to one number (the catalog compiles it)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field


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
