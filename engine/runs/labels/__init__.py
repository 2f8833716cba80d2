"""Labels from people: review queues made from stored runs (or a file), reviewers' labels
held under leases, agreement between people and with the judge, settled labels, and the
golden set every command reading labelled data takes as `queue:NAME`."""

from __future__ import annotations

from .golden import (
    CEILING_NOTE,
    QUEUE_PREFIX,
    GoldenSet,
    QueueReport,
    golden_set,
    judge_agreement,
    queue_data,
    queue_name,
    queue_report,
    read_queue,
    write_golden,
)
from .making import FILTERS, parse_filter, queue_from_file, queue_from_run, runs_offered
from .people import PeopleAgreement, QueueLabels, cohen_kappa, krippendorff_alpha, people_agreement
from .reviewing import give_label, item_view, next_item, open_item, reviewer_name, settle_item

__all__ = [
    "CEILING_NOTE",
    "FILTERS",
    "QUEUE_PREFIX",
    "GoldenSet",
    "PeopleAgreement",
    "QueueLabels",
    "QueueReport",
    "cohen_kappa",
    "give_label",
    "golden_set",
    "item_view",
    "judge_agreement",
    "krippendorff_alpha",
    "next_item",
    "open_item",
    "parse_filter",
    "people_agreement",
    "queue_data",
    "queue_from_file",
    "queue_from_run",
    "queue_name",
    "queue_report",
    "read_queue",
    "reviewer_name",
    "runs_offered",
    "settle_item",
    "write_golden",
]
