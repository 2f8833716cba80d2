"""Rebuild the HaluEval example sets from HaluEval's qa_data.json (kept for provenance).

    python examples/make_halueval_sample.py path/to/halueval/qa_data.json > examples/halueval_qa.jsonl
    python examples/make_halueval_sample.py --pairs 150 path/to/halueval/qa_data.json > examples/halueval_qa_pairs.jsonl

Without --pairs: every 500th row (20 rows), alternating the answer judged (the right answer
for even picks, the hallucinated one for odd picks), with the truth in `metadata.label` and
as an `expected` hallucination score (1 or 0).

With --pairs N: N rows spread evenly over the file, each giving two items that share the
question and the knowledge passage: its right answer and its hallucinated answer. The
human label is a boolean `expected` for the hallucination and faithfulness scorers: true
means the scorer should flag the answer (the hallucinated one).
"""

from __future__ import annotations

import argparse
import json
from typing import Any

STEP = 500
COUNT = 20


def alternating(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    items = []
    for pick in range(COUNT):
        line = pick * STEP
        row = rows[line]
        hallucinated = pick % 2 == 1
        items.append(
            {
                "id": f"halueval-qa-{line + 1}",
                "input": row["question"],
                "output": row["hallucinated_answer" if hallucinated else "right_answer"],
                "context": [row["knowledge"]],
                "metadata": {"label": "hallucinated" if hallucinated else "faithful", "source": f"HaluEval qa_data.json line {line + 1}"},
                # The human label as the score a perfect hallucination scorer would give: all or nothing.
                "expected": {"hallucination": 1 if hallucinated else 0},
            }
        )
    return items


def pairs(rows: list[dict[str, Any]], count: int) -> list[dict[str, Any]]:
    items = []
    step = len(rows) // count
    for pick in range(count):
        line = pick * step
        row = rows[line]
        for answer, hallucinated in (("right_answer", False), ("hallucinated_answer", True)):
            label = "hallucinated" if hallucinated else "faithful"
            items.append(
                {
                    "id": f"halueval-qa-{line + 1}-{label}",
                    "input": row["question"],
                    "output": row[answer],
                    "context": [row["knowledge"]],
                    "metadata": {"label": label, "pair": f"halueval-qa-{line + 1}", "source": f"HaluEval qa_data.json line {line + 1}"},
                    "expected": {"hallucination": hallucinated, "faithfulness": hallucinated},
                }
            )
    return items


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("qa_data", help="HaluEval's qa_data.json (one JSON object per line)")
    parser.add_argument("--pairs", type=int, help="Take N rows, both answers of each")
    arguments = parser.parse_args()
    with open(arguments.qa_data, encoding="utf-8") as handle:
        rows = [json.loads(line) for line in handle if line.strip()]
    for item in pairs(rows, arguments.pairs) if arguments.pairs else alternating(rows):
        print(json.dumps(item, ensure_ascii=False))


if __name__ == "__main__":
    main()
