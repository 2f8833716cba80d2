"""Rebuild examples/begin_faithfulness.jsonl from BEGIN's dev set (kept for provenance).

    python examples/make_begin_sample.py path/to/begin/begin_dev_wow.tsv > examples/begin_faithfulness.jsonl

BEGIN (Dziri et al., 2022) gives, for knowledge-grounded dialogue turns of Wizard of
Wikipedia, the knowledge snippet a model was given, the user's message, the model's
response and a human label: "Fully attributable" when the knowledge supports the whole
response, "Not fully attributable" otherwise. This takes COUNT rows of each label, spread
evenly over the file (so every generating model is represented), in file order.

Each item: `input` (the user's message), `output` (the response), `context` (the knowledge
snippet), `metadata` (the label, the model that wrote the response, the source line) and a
boolean `expected` for the faithfulness and hallucination scorers: true means the scorer
should flag the response (it is not fully attributable to the knowledge).
"""

from __future__ import annotations

import csv
import json
import sys

COUNT = 100  # per label
ATTRIBUTABLE = "Fully attributable"
NOT_ATTRIBUTABLE = "Not fully attributable"


def main(path: str) -> None:
    with open(path, encoding="utf-8", newline="") as handle:
        rows = [(number, row) for number, row in enumerate(csv.DictReader(handle, delimiter="\t", quoting=csv.QUOTE_NONE), start=2)]
    chosen: list[tuple[int, dict[str, str]]] = []
    for label in (ATTRIBUTABLE, NOT_ATTRIBUTABLE):
        labelled = [pair for pair in rows if pair[1]["begin_label"] == label]
        step = len(labelled) / COUNT
        chosen += [labelled[int(pick * step)] for pick in range(COUNT)]
    for number, row in sorted(chosen, key=lambda pair: pair[0]):
        flagged = row["begin_label"] == NOT_ATTRIBUTABLE
        item = {
            "id": f"begin-dev-{number}",
            "input": row["message"],
            "output": row["response"],
            "context": [row["knowledge"]],
            "metadata": {"label": row["begin_label"], "model": row["model_name"], "source": f"BEGIN begin_dev_wow.tsv line {number}"},
            "expected": {"faithfulness": flagged, "hallucination": flagged},
        }
        print(json.dumps(item, ensure_ascii=False))


if __name__ == "__main__":
    main(sys.argv[1])
