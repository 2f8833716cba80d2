"""How figures are shown in the terminal."""

from __future__ import annotations

from rich.table import Table

from ..store import ScoreStats


def figure(value: float | None) -> str:
    return "-" if value is None else f"{round(value, 3):g}"


def better_word(direction: str) -> str:
    return "lower" if direction == "lower_is_better" else "higher"


def coverage(item: ScoreStats) -> str:
    """Scored of all: how much of the data the mean describes."""
    return f"{item.count}/{item.total}"


def summary_table(title: str, stats: list[ScoreStats]) -> Table:
    """Per scorer: the mean over scored items, with beside it how many items that is of all
    (coverage), how many failed and how many the scorer could not judge."""
    with_thresholds = any(getattr(item, "threshold", None) is not None for item in stats)
    with_unscorable = any(item.not_scorable for item in stats)
    columns = ["scorer", "better", "mean", "min", "max", "scored", "errors"] + (["not scorable"] if with_unscorable else [])
    columns += ["limit", "verdict"] if with_thresholds else []
    table = Table(title=title)
    for column in columns:
        if column == "scorer":
            table.add_column(column, no_wrap=True, min_width=max(len(item.scorer_id) for item in stats) if stats else None)
        else:
            table.add_column(column, justify="left" if column in ("better", "verdict") else "right", no_wrap=True)
    for item in stats:
        errors_cell = f"[red]{item.errors}[/red]" if item.errors else "0"
        row = [item.scorer_id, better_word(item.direction), figure(item.mean), figure(item.min), figure(item.max), coverage(item), errors_cell]
        if with_unscorable:
            row.append(str(item.not_scorable))
        if with_thresholds:
            passed = getattr(item, "passed", None)
            verdict = "" if passed is None else ("[green]pass[/green]" if passed else "[red]FAIL[/red]")
            row += [figure(getattr(item, "threshold", None)), verdict]
        table.add_row(*row)
    return table
