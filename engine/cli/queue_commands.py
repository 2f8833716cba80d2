"""`scorers queue`: review queues of items for people to label (made from a stored run or a
file), their progress and agreement, settling what people disagree on, and the golden set."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Optional

import typer
from rich.table import Table

from ..catalog import Catalog
from ..catalog.queues import QueueSpec, default_queue
from ..errors import ConfigError
from ..runs.labels import (
    CEILING_NOTE,
    give_label,
    golden_set,
    queue_from_file,
    queue_from_run,
    queue_report,
    read_queue,
    reviewer_name,
    settle_item,
    write_golden,
)
from ..runs.labels.golden import QueueReport
from .agreement_tables import interval, print_agreement
from .app import Subgroup, app, console, errors
from .common import DEFAULT_STORE, ConfigOption, JsonFlag, StoreOption, catalog_from, existing_store, one_line_errors, print_json
from .tables import figure

queue_app = typer.Typer(help="Review queues: items for people to label, their agreement, and the golden set they make.", no_args_is_help=True, cls=Subgroup)
app.add_typer(queue_app, name="queue")


def queue_spec(catalog: Catalog, name: str, scorer: str | None, labels_per_item: int | None) -> QueueSpec:
    """The queue NAME as the catalog declares it, else the default queue of `scorer`."""
    declared = next((queue for queue in catalog.queues if queue.name == name), None)
    if declared is not None:
        if scorer is not None and scorer != declared.scorer:
            raise ConfigError(f"--scorer {scorer}: the catalog declares queue {name!r} for {declared.scorer}")
        spec = declared
    elif scorer is None:
        declared_names = ", ".join(queue.name for queue in catalog.queues) or "none"
        raise ConfigError(f"queue {name!r} is not declared in the catalog (its queues: {declared_names}); give --scorer ID for a default one")
    else:
        catalog.plan(scorer)  # an unknown scorer: one line with the closest id
        spec = default_queue(name, scorer)
    return spec.model_copy(update={"labels_per_item": labels_per_item}) if labels_per_item is not None else spec


@queue_app.command("create")
@one_line_errors
def create_command(
    name: Annotated[str, typer.Argument(help="The queue's name (a queue declared in the catalog's `queues:` takes its instructions and labels)")],
    from_run: Annotated[Optional[str], typer.Option("--from-run", help="A stored run (batch, live or rescored) to take the items from")] = None,
    from_file: Annotated[Optional[Path], typer.Option("--from-file", help="A JSONL file of items to label from scratch")] = None,
    scorer: Annotated[Optional[str], typer.Option("--scorer", help="The scorer whose items are labelled (a declared queue names its own)")] = None,
    filters: Annotated[
        Optional[list[str]], typer.Option(
            "--filter", help="disagreement, near[:MARGIN], flips:RUN, failed or unsure[:BOUND] (the judge's confidence below BOUND, 0.8); an item enters when any filter picks it",
        )
    ] = None,
    least_sure_first: Annotated[bool, typer.Option("--least-sure-first", help="The items the judge was least sure of first (from its log-probabilities)")] = False,
    sample: Annotated[Optional[int], typer.Option("--sample", help="At most N items, drawn from each of the judge's verdicts in its share")] = None,
    seed: Annotated[int, typer.Option("--seed", help="Seed of the sample")] = 0,
    threshold: Annotated[Optional[float], typer.Option("--threshold", help="Where the judge's score flags an item (default: the run's)")] = None,
    labels_per_item: Annotated[Optional[int], typer.Option("--labels-per-item", min=1, max=20, help="People who label each item (default: the queue's)")] = None,
    config: ConfigOption = None,
    store: StoreOption = DEFAULT_STORE,
) -> None:
    """Make a queue of items for people to label, from a stored run or a JSONL file."""
    if (from_run is None) == (from_file is None):
        raise ConfigError("give the items with either --from-run RUN or --from-file FILE")
    catalog = catalog_from(config)
    if from_run is not None:
        opened = existing_store(store, writing=True)
        if scorer is None and not any(queue.name == name for queue in catalog.queues):
            scorer = _only_scorer(opened, from_run)
        spec = queue_spec(catalog, name, scorer, labels_per_item)
        queue = queue_from_run(opened, spec, from_run, filters=filters or [], sample=sample, seed=seed, threshold=threshold, least_sure_first=least_sure_first)
    else:
        assert from_file is not None
        if filters:
            raise ConfigError("--filter reads a run's scores: a queue made --from-file takes every item (or --sample N)")
        spec = queue_spec(catalog, name, scorer, labels_per_item)
        plan = catalog.plan(spec.scorer)
        from ..store import open_store

        created = open_store(store)
        assert created is not None
        opened = created
        queue = queue_from_file(opened, spec, from_file, line=plan.pass_line.overridden(threshold), sample=sample, seed=seed)
    items = len(read_queue(opened, name, fields=False).items)
    picked = f", picked by {', '.join(queue.picked_by)}" if queue.picked_by else ""
    console.print(
        f"Queue [bold]{name}[/bold]: {items} item(s) of {queue.source} for {queue.scorer_id}{picked}; "
        f"{spec.labels_per_item} label(s) per item, {'blind' if spec.blind else 'judge shown'}. "
        f"Review it in the workbench (`scorers workbench CATALOG --store {store}`, then Review).",
        highlight=False,
        soft_wrap=True,
    )


def _only_scorer(store: Any, run: str) -> str:
    from ..runs.stored.reading import existing_run

    info = existing_run(store, run)
    scorers = [stats.scorer_id for stats in store.summary(info.name)]
    if len(scorers) != 1:
        raise ConfigError(f"run {run!r} holds results of {', '.join(scorers) or 'no scorer'}: say which with --scorer")
    return str(scorers[0])


@queue_app.command("list")
@one_line_errors
def list_command(store: StoreOption = DEFAULT_STORE, as_json: JsonFlag = False) -> None:
    """The review queues of the results store, with their progress."""
    from ..store import KeepsLabels

    opened = existing_store(store)
    queues = opened.review_queues() if isinstance(opened, KeepsLabels) else []
    rows: list[dict[str, Any]] = []
    for queue in queues:
        labelled = read_queue(opened, queue.name, fields=False)
        counts = labelled.progress()
        rows.append({"name": queue.name, "scorer": queue.scorer_id, "source": queue.source, "items": len(labelled.items), "done": counts["settled"] + counts["agreed"]})
    if as_json:
        print_json(rows)
        return
    if not rows:
        console.print("No review queue yet: `scorers queue create NAME --from-run RUN` makes one.")
        return
    table = Table(title="review queues", title_justify="left")
    for column in ("queue", "scorer", "from", "items", "labelled"):
        table.add_column(column)
    for row in rows:
        table.add_row(row["name"], row["scorer"], row["source"], str(row["items"]), str(row["done"]))
    console.print(table)


def print_report(report: QueueReport) -> None:
    people = report.people
    console.print(
        f"Queue [bold]{report.name}[/bold] ({report.scorer_id}, from {report.source}): {people.items} item(s), "
        f"{people.labels} label(s) by {len(people.reviewers)} reviewer(s) ({', '.join(people.reviewers) or 'none yet'}); "
        f"{people.complete_items} with their label ({people.settled} settled), {len(people.disagreements)} disagreed on, "
        f"{report.labels_per_item} label(s) asked per item.",
        highlight=False,
        soft_wrap=True,
    )
    if people.figures:
        table = Table(title="people against each other", title_justify="left")
        for column in ("figure", "on", "value", "95% interval", "items"):
            table.add_column(column)
        for found in people.figures:
            table.add_row(found.name, found.what, figure(found.estimate.value), interval(found.estimate), str(found.items))
        console.print(table)
    elif people.labels:
        console.print("No item has labels from two people yet: their agreement is measured once some have.")
    if people.disagreements:
        table = Table(title="items people disagree on (settle them: scorers queue settle)", title_justify="left")
        table.add_column("item")
        table.add_column("labels")
        for verdict in people.disagreements:
            table.add_row(verdict.item_id, ", ".join(f"{label.reviewer}: {_shown(label.value)}" for label in verdict.labels))
        console.print(table)
    if report.judge is not None:
        print_agreement(console, f"{report.scorer_id} (the judge) against people's settled and agreed labels:", report.direction, report.judge, worst=3)
    answers = report.answers
    if answers is not None:
        share = answers.estimate
        console.print(
            f"Each answer of {answers.step}: the judge answered as people did on {round((share.value or 0) * answers.compared)} of {answers.compared} "
            f"({figure(share.value)}, 95% interval {interval(share)}).",
            highlight=False,
            soft_wrap=True,
        )
        if answers.wrong:
            table = Table(title="answers the judge got wrong", title_justify="left")
            for column in ("item", "answer", "text", "judge", "people"):
                table.add_column(column, overflow="fold")
            for wrong in answers.wrong[:20]:
                table.add_row(wrong.item_id, str(wrong.position), wrong.text, str(wrong.judge), wrong.people)
            console.print(table)
    console.print(CEILING_NOTE, highlight=False, soft_wrap=True)


def _shown(value: Any) -> str:
    return ("flag" if value else "pass") if isinstance(value, bool) else str(value)


@queue_app.command("status")
@one_line_errors
def status_command(name: Annotated[str, typer.Argument(help="The queue")], store: StoreOption = DEFAULT_STORE, as_json: JsonFlag = False) -> None:
    """A queue's progress, how far people agree, what they disagree on, and the judge against their labels."""
    report = queue_report(existing_store(store), name)
    if as_json:
        print_json(report.model_dump(mode="json"))
    else:
        print_report(report)


@queue_app.command("label")
@one_line_errors
def label_command(
    name: Annotated[str, typer.Argument(help="The queue")],
    item: Annotated[str, typer.Argument(help="The item's id")],
    label: Annotated[str, typer.Option("--label", help="pass or flag, a category, or a number, as the queue asks")],
    by: Annotated[str, typer.Option("--by", help="Your name, kept beside the label")],
    note: Annotated[Optional[str], typer.Option("--note", help="A note beside the label")] = None,
    store: StoreOption = DEFAULT_STORE,
) -> None:
    """Give an item your label without the page (each claim's label is given in the workbench)."""
    give_label(existing_store(store, writing=True), name, reviewer_name(by), item, label, note=note)
    console.print(f"{by}'s label of {item} kept in queue {name}.", highlight=False)


@queue_app.command("settle")
@one_line_errors
def settle_command(
    name: Annotated[str, typer.Argument(help="The queue")],
    item: Annotated[str, typer.Argument(help="The item's id")],
    label: Annotated[str, typer.Option("--label", help="The final label: pass or flag, a category, or a number")],
    by: Annotated[str, typer.Option("--by", help="Who settles it")],
    note: Annotated[Optional[str], typer.Option("--note", help="Why")] = None,
    store: StoreOption = DEFAULT_STORE,
) -> None:
    """Give an item its final label (what people disagreed on), with who settled it."""
    settled = settle_item(existing_store(store, writing=True), name, item, label, by, note=note)
    console.print(f"Item {item} of {name} settled as {_shown(settled.value)} by {settled.settled_by}.", highlight=False)


@queue_app.command("export")
@one_line_errors
def export_command(
    name: Annotated[str, typer.Argument(help="The queue")],
    output: Annotated[Path, typer.Option("-o", "--output", help="The JSONL file to write")],
    store: StoreOption = DEFAULT_STORE,
) -> None:
    """Write the items whose label is settled or agreed as labelled data (`expected`), with who labelled them in `metadata.labels`."""
    found = golden_set(read_queue(existing_store(store), name))
    if not found.items:
        raise ConfigError(f"queue {name!r} has no settled or agreed label yet ({found.left_out() or 'no item'}); nothing written")
    write_golden(found, output)
    left = found.left_out()
    console.print(f"Wrote {len(found.items)} labelled item(s) to {output}" + (f"; left out: {left}." if left else "."), highlight=False, soft_wrap=True)
    if left:
        errors.print(f"note: {left}: `scorers queue status {name}` lists them", markup=False, highlight=False, soft_wrap=True)


@queue_app.command("delete")
@one_line_errors
def delete_command(name: Annotated[str, typer.Argument(help="The queue")], store: StoreOption = DEFAULT_STORE) -> None:
    """Forget a queue: its items, every label given and every settlement (the runs it was made from stay)."""
    opened = existing_store(store, writing=True)
    labelled = read_queue(opened, name, fields=False)
    from ..store import KeepsLabels

    assert isinstance(opened, KeepsLabels)  # read_queue refused a store without queues
    opened.delete_queue(name)
    console.print(f"Queue {name} deleted, with its {len(labelled.labels)} label(s) and {len(labelled.settlements)} settlement(s).", highlight=False)
