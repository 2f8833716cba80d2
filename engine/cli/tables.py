"""How figures are shown in the terminal."""

from __future__ import annotations

from dataclasses import dataclass

from rich import box
from rich.table import Table

from ..judge import TokenUsage
from ..runs.measures.stats import ScoreSpread
from ..store import ScoreStats


def figure(value: float | None) -> str:
    return "-" if value is None else f"{round(value, 3):g}"


def better_word(direction: str) -> str:
    return "lower" if direction == "lower_is_better" else "higher"


def coverage(item: ScoreStats) -> str:
    """Scored of all: how much of the data the mean describes."""
    return f"{item.count}/{item.total}"


def percent(value: float | None) -> str:
    return "-" if value is None else f"{value * 100:.0f}%"


def summary_table(title: str, stats: list[ScoreStats], spreads: dict[str, ScoreSpread] | None = None) -> Table:
    """Per scorer: direction, the mean over scored items, min, max, how many items were
    scored of all (coverage), errors, and items the scorer could not judge (when any); with
    `spreads`, the median, the 95th percentile and the pass rate beside the mean; with
    thresholds, the limit; with thresholds or a scorer that failed the run's verdict, each
    scorer's verdict."""
    with_thresholds = any(getattr(item, "threshold", None) is not None for item in stats)
    with_verdicts = with_thresholds or any(getattr(item, "passed", None) is False for item in stats)
    with_unscorable = any(item.not_scorable for item in stats)
    spread_columns = ["p50", "p95", "pass"] if spreads is not None else []
    columns = ["scorer", "better", "mean", *spread_columns, "min", "max", "n", "errors"] + (["not\nscorable"] if with_unscorable else [])
    columns += (["limit"] if with_thresholds else []) + (["verdict"] if with_verdicts else [])
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
        row = [item.scorer_id, better_word(item.direction), figure(item.mean), *spread_cells, figure(item.min), figure(item.max), coverage(item), errors_cell]
        if with_unscorable:
            row.append(str(item.not_scorable))
        if with_thresholds:
            row.append(figure(getattr(item, "threshold", None)))
        if with_verdicts:
            passed = getattr(item, "passed", None)
            row.append("" if passed is None else ("[green]pass[/green]" if passed else "[red]FAIL[/red]"))
        table.add_row(*row)
    return table


@dataclass
class UsageRow:
    scorer_id: str
    model: str | None
    judge_calls: int
    cached_calls: int
    usage: TokenUsage
    cost_usd: float | None
    #: Asked through the provider's Batch API, and priced so.
    batch: bool = False


def money(value: float | None) -> str:
    if value is None:
        return "-"
    return f"${value:.4f}" if value < 1 else f"${value:,.2f}"


def usage_table(title: str, rows: list[UsageRow]) -> Table:
    """Tokens and estimated cost per scorer; a model without a price shows tokens only.
    `hits` are steps the response cache answered; `cached in` is the share of prompt tokens
    the provider served from its prompt-prefix cache. Calls made through the provider's Batch
    API are a line of their own, at its price."""
    models = {row.model for row in rows}
    one_model = len(models) == 1
    if one_model:
        title = f"{title} ({next(iter(models)) or 'no judge'})"
    table = Table(title=title, box=box.SIMPLE_HEAD, pad_edge=False)
    columns = ["scorer", *([] if one_model else ["judge"]), "calls", "hits", "tokens in", "cached in", "tokens out", "est. cost"]
    for column in columns:
        table.add_column(column, justify="left" if column in ("scorer", "judge") else "right", overflow="fold")
    for row in rows:
        usage = row.usage
        share = f"{usage.cached_prompt_tokens / usage.prompt_tokens:.0%}" if usage.prompt_tokens else "-"
        table.add_row(
            row.scorer_id + (" (batch API)" if row.batch else ""), *([] if one_model else [row.model or "-"]), str(row.judge_calls), str(row.cached_calls),
            f"{usage.prompt_tokens:,}", share, f"{usage.completion_tokens:,}",
            money(row.cost_usd) if row.cost_usd is not None else "no price",
        )
    return table
