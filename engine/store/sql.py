"""SQL that both database stores write the same way but for their parameter placeholders."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any


def results_query(
    placeholder: str,
    moment: Callable[[datetime], Any],
    *,
    run: str | None,
    scorer: str | None,
    source: str | None,
    since: datetime | None,
    until: datetime | None,
    errors: bool | None,
    worst_first: bool,
    limit: int | None,
) -> tuple[str, list[Any]]:
    """The SELECT of `Store.query` and its parameters. `placeholder` is the driver's (`?` or
    `%s`); `moment` turns a datetime into what the timestamp columns hold."""
    where: list[str] = []
    parameters: list[Any] = []
    for column, value in (("run", run), ("scorer_id", scorer), ("source", source)):
        if value is not None:
            where.append(f"{column} = {placeholder}")
            parameters.append(value)
    if since is not None:
        where.append(f"finished_at >= {placeholder}")
        parameters.append(moment(since))
    if until is not None:
        where.append(f"finished_at < {placeholder}")
        parameters.append(moment(until))
    if errors is not None:
        where.append("error IS NOT NULL" if errors else "(error IS NULL AND score IS NOT NULL)")
    sql = "SELECT * FROM results"
    if where:
        sql += " WHERE " + " AND ".join(where)
    if worst_first:
        badness = "CASE direction WHEN 'lower_is_better' THEN -score ELSE score END"
        sql += f" ORDER BY score IS NULL, {badness}, id"
    else:
        sql += " ORDER BY finished_at DESC, id DESC"
    if limit is not None:
        sql += f" LIMIT {placeholder}"
        parameters.append(int(limit))
    return sql, parameters
