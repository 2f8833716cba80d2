"""How figures are shown in the terminal."""

from __future__ import annotations

from rich.table import Table

from ..runs.stats import ScoreSpread
from ..store import ScoreStats


def figure(value: float | None) -> str:
    return "-" if value is None else f"{round(value, 3):g}"


def better_word(direction: str) -> str:
    return "lower" if direction == "lower_is_better" else "higher"


def percent(value: float | None) -> str:
    return "-" if value is None else f"{value * 100:.0f}%"


def summary_table(title: str, stats: list[ScoreStats], spreads: dict[str, ScoreSpread] | None = None) -> Table:
    """Per scorer: direction, mean, min, max, count, errors; with `spreads`, the median, the
    95th percentile and the pass rate beside the mean; with thresholds, the verdict."""
    with_thresholds = any(getattr(item, "threshold", None) is not None for item in stats)
    spread_columns = ["p50", "p95", "pass"] if spreads is not None else []
    columns = ["scorer", "better", "mean", *spread_columns, "min", "max", "n", "errors"] + (["limit", "verdict"] if with_thresholds else [])
    table = Table(title=title)
    for column in columns:
        if column == "scorer":
            table.add_column(column, no_wrap=True, min_width=max(len(item.scorer_id) for item in stats) if stats else None)
        else:
            table.add_column(column, justify="left" if column in ("better", "verdict") else "right", no_wrap=True)
    for item in stats:
        errors_cell = f"[red]{item.errors}[/red]" if item.errors else "0"
        spread = (spreads or {}).get(item.scorer_id, ScoreSpread())
        spread_cells = [figure(spread.p50), figure(spread.p95), percent(spread.pass_rate)] if spreads is not None else []
        row = [item.scorer_id, better_word(item.direction), figure(item.mean), *spread_cells, figure(item.min), figure(item.max), str(item.count), errors_cell]
        if with_thresholds:
            passed = getattr(item, "passed", None)
            verdict = "" if passed is None else ("[green]pass[/green]" if passed else "[red]FAIL[/red]")
            row += [figure(getattr(item, "threshold", None)), verdict]
        table.add_row(*row)
    return table
