"""Reasons on demand: a run with `--reasons on-demand` (or a `failing` one, for an item that
passed) stores its scores without asking the judge why; a stored item's reason is asked when
someone opens the item (`scorers results --run NAME --item ID`), of the very scorer that
scored it, and saved with it, so it is asked once. The score does not change."""

from __future__ import annotations

from ...errors import ConfigError
from ...scoring import Jury, RunInput, Scorer
from ...scoring.steps import step_kind
from ...store import ResultRecord, Store


def reason_step(record: ResultRecord) -> str | None:
    """The id of the record's reason step when its run did not ask the judge for it."""
    return next((step_id for step_id, step in record.steps.items() if step.kind == "reason" and step.not_asked is not None), None)


async def reason_on_demand(store: Store, record: ResultRecord, scorer: Scorer | Jury) -> ResultRecord:
    """`record` with the reason its run left out, asked of `scorer` now and saved in `store`
    (the record as it is when there is none to ask). `scorer` must be the one that scored it:
    same definition, options and judge (its fingerprint), else the reason would explain
    another scorer's score."""
    step_id = reason_step(record)
    if step_id is None or record.score is None:
        return record
    if isinstance(scorer, Jury) or record.judges is not None:
        raise ConfigError(f"{record.scorer_id}: a jury's reasons are its judges' own; ask for them when the run is scored (--reasons always)")
    if scorer.fingerprint != record.scorer_hash:
        raise ConfigError(
            f"{record.scorer_id} as set up now is not the scorer that scored item {record.item_id!r} of run {record.run!r} "
            "(its definition, options or judge differ): give the same --config, --model and --option as the run had, "
            "so the reason explains the score it was given"
        )
    given = RunInput(output=record.output, input=record.input, context=record.context, ground_truth=record.ground_truth, metadata=record.metadata or None)
    asked = await scorer.areason(given, record.steps)
    if asked is None or step_kind(asked.kind).result_part != "reason":
        return record
    usage = asked.usage
    updated = record.model_copy(
        update={
            "steps": {**record.steps, step_id: asked},
            "reason": asked.result,
            "prompt_tokens": record.prompt_tokens + (usage.prompt_tokens if usage else 0),
            "completion_tokens": record.completion_tokens + (usage.completion_tokens if usage else 0),
            "total_tokens": record.total_tokens + (usage.total_tokens if usage else 0),
        }
    )
    store.save(updated)
    return updated
