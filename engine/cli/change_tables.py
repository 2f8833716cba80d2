"""What changed between two stored runs of the same items, score by score (shown by
`scorers results --run A --compare B` beside the agreement with the labels)."""

from __future__ import annotations

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from ..runs.stored.rescoring import ScoreChanges, score_changes
from ..runs.stored.reading import existing_run
from ..store import Store
from .tables import figure


def print_score_changes(out: Console, changes: ScoreChanges, limit: int = 10) -> None:
    """Scores of the items two runs share, before and after, and the items that moved most."""
    if not changes.items:
        out.print(f"{changes.baseline} and {changes.variant} share no scored item.", highlight=False)
        return
    delta = changes.delta
    interval = "" if delta.low is None else escape(f" [{figure(delta.low)}, {figure(delta.high)}]")
    out.print(
        f"{changes.baseline} -> {changes.variant} on {changes.items} shared item(s): mean {figure(changes.mean_before)} -> "
        f"{figure(changes.mean_after)} (change {figure(delta.value)}{interval}); {len(changes.changed)} item(s) scored differently"
        + (f"; {changes.only_before} only before, {changes.only_after} only after" if changes.only_before or changes.only_after else ""),
        highlight=False,
    )
    if changes.changed:
        table = Table()
        for column in ("item", "before", "after", ""):
            table.add_column(column, overflow="fold")
        for item in changes.changed[:limit]:
            table.add_row(item.item_id, figure(item.before), figure(item.after), "better" if item.better else "worse")
        out.print(table)
        if len(changes.changed) > limit:
            out.print(f"... and {len(changes.changed) - limit} more", highlight=False)


def print_run_changes(out: Console, store: Store, run: str, compare: str) -> None:
    """What changed between two runs of the same items, from the run a re-scored run came
    from to the re-scored run (whichever of the two flags names which)."""
    source = existing_run(store, run).meta.get("rescored_from") or {}
    before, after = (compare, run) if source.get("run") == compare else (run, compare)
    for changes in score_changes(store, before, after):
        print_score_changes(out, changes)
