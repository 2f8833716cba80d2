"""`scorers monitor`: each monitor's state over the stored results, its window's figures and
the last alerts; `--watch` checks again every interval and sends the alerts."""

from __future__ import annotations

import time
from contextlib import closing
from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from ..catalog import catalog_file, load_scorers
from ..catalog.monitors import Monitor, load_monitors
from ..catalog.source import load_yaml
from ..errors import ConfigError
from ..runs.monitors import MonitorCheck, MonitorRound, check_monitors
from ..store import AlertDelivery, AlertRecord, KeepsAlerts, Store
from .app import app, console, errors
from .common import DEFAULT_STORE, EXIT_FAILED, JsonFlag, StoreOption, existing_store, one_line_errors, print_json
from .tables import figure

MonitorsOption = Annotated[
    Path, typer.Option("--monitors", help="A YAML file with a `monitors:` section: a catalog (--config) or a file of its own")
]


def read_monitors(path: Path) -> list[Monitor]:
    """A catalog's monitors (their scorers checked against it), or a monitors file's."""
    path = catalog_file(path)
    data = load_yaml(path)
    monitors = load_scorers(path).monitors if isinstance(data, dict) and "scorers" in data else load_monitors(path)
    if not monitors:
        raise ConfigError("the `monitors:` section is empty", path)
    return monitors


def _state(check: MonitorCheck) -> str:
    if check.state == "alerting":
        return "[bold red]ALERTING[/bold red]"
    return "ok" if check.state == "ok" else f"[dim]{check.note or 'too few'}[/dim]"


def print_checks(checked: MonitorRound, alerts: list[AlertRecord]) -> None:
    checks, undelivered, tried = checked.checks, checked.undelivered, checked.tried
    table = Table(title="monitors")
    for column in ("monitor", "scorer", "condition", "window", "samples", "value", "mean", "p95", "errors", "state"):
        table.add_column(column, overflow="fold")
    for check in checks:
        figures = check.figures
        table.add_row(
            check.monitor, check.scorer, check.condition, check.window.size, str(check.window.samples), figure(check.value),
            figure(figures.mean), figure(figures.p95), figure(figures.error_rate), _state(check),
        )
    console.print(table)
    for check in checks:
        if check.alert is not None and not any(delivery.alert.message == check.alert.message() for delivery in undelivered):
            console.print(f"raised: {check.alert.message()}", markup=False, highlight=False)
    tried_now = {delivery.id for delivery in tried}
    for delivery in tried:
        if delivery.state == "delivered":
            console.print(f"delivered to {delivery.where} now (attempt {delivery.attempts}): {delivery.alert.message}", markup=False, highlight=False, soft_wrap=True)
    for delivery in checked.posted_elsewhere:
        if delivery.state == "delivered":
            console.print(
                f"delivered to {delivery.where} by another process, whose post this one waited for (attempt {delivery.attempts}): {delivery.alert.message}",
                markup=False, highlight=False, soft_wrap=True,
            )
    for delivery in undelivered:
        state = "refused" if delivery.state == "refused" else f"not taken after {delivery.attempts} attempt(s), sent again from {delivery.next_attempt_at.astimezone():%H:%M:%S}"
        if delivery.id in tried_now:
            state = f"tried now: {state}"
        console.print(
            f"NOT DELIVERED to {delivery.where} ({state}; {delivery.last_error or 'its webhook is no longer configured'}): {delivery.alert.message}",
            markup=False, highlight=False, soft_wrap=True,
        )
    if alerts:
        console.print("last alerts:", style="bold")
        for alert in alerts:
            console.print(f"  {alert.fired_at.astimezone():%Y-%m-%d %H:%M:%S} {alert.message}", markup=False, highlight=False)


def _round(results: Store, monitors: list[Monitor], send: bool, as_json: bool, last: int, by_hand: bool) -> int:
    """One check (sending when asked; `by_hand`, every alert not taken yet is tried now);
    how many alert deliveries no receiver has taken."""
    checked = check_monitors(results, monitors, send=send, by_hand=by_hand)
    names = {monitor.name for monitor in monitors}
    alerts = [alert for alert in results.alerts(limit=last * 4) if alert.monitor in names][:last] if isinstance(results, KeepsAlerts) else []
    if as_json:
        print_json(
            {
                "monitors": [check.model_dump(mode="json") for check in checked.checks],
                "alerts": [alert.model_dump(mode="json") for alert in alerts],
                "undelivered": [delivery.model_dump(mode="json") for delivery in checked.undelivered],
                "tried": [delivery.model_dump(mode="json") for delivery in checked.tried],
                "posted_elsewhere": [delivery.model_dump(mode="json") for delivery in checked.posted_elsewhere],
            }
        )
    else:
        print_checks(checked, alerts)
    return len(checked.undelivered)


@app.command("monitor")
@one_line_errors
def monitor_command(
    monitors: MonitorsOption,
    store: StoreOption = DEFAULT_STORE,
    watch: Annotated[bool, typer.Option("--watch", help="Check again every --interval seconds and send the alerts (Ctrl-C stops)")] = False,
    interval: Annotated[float, typer.Option("--interval", min=1.0, help="Seconds between checks with --watch")] = 30.0,
    send: Annotated[bool, typer.Option("--send/--no-send", help="Send the alert of a monitor whose state changed (default: with --watch only)")] = False,
    last: Annotated[int, typer.Option("--last", min=0, help="How many of the last alerts to show")] = 10,
    as_json: JsonFlag = False,
) -> None:
    """Each monitor's state over the stored results (every process writing to --store), its
    window's figures, and the last alerts. With --send, an alert no receiver has taken is
    kept and sent again on the next check, and the command exits 1 while any is left."""
    found = read_monitors(monitors)
    with closing(existing_store(store, writing=send or watch)) as results:
        # The first round was asked for now: what waits for its back-off is tried at once.
        undelivered = _round(results, found, send or watch, as_json, last, by_hand=True)
        while watch:
            time.sleep(interval)
            undelivered = _round(results, found, True, as_json, last, by_hand=False)
    if (send or watch) and undelivered:
        errors.print(f"error: {undelivered} alert delivery(ies) not taken by their receiver; they are kept and sent again on the next check", markup=False, highlight=False)
        raise typer.Exit(EXIT_FAILED)
