"""Rebuild halueval_qa.jsonl from HaluEval's qa_data.json (kept for provenance).

    python examples/make_halueval_sample.py path/to/halueval/qa_data.json > examples/halueval_qa.jsonl

Takes every 500th row (20 rows) and alternates the answer judged: the right answer for
even picks, the hallucinated one for odd picks, with the truth in `metadata.label` and as `expected` scores (for agreement).
"""

from __future__ import annotations

import json
import sys

STEP = 500
COUNT = 20


def main(path: str) -> None:
    with open(path, encoding="utf-8") as handle:
        rows = [json.loads(line) for line in handle if line.strip()]
    for pick in range(COUNT):
        line = pick * STEP
        row = rows[line]
        hallucinated = pick % 2 == 1
        item = {
            "id": f"halueval-qa-{line + 1}",
            "input": row["question"],
            "output": row["hallucinated_answer" if hallucinated else "right_answer"],
            "context": [row["knowledge"]],
            "metadata": {"label": "hallucinated" if hallucinated else "faithful", "source": f"HaluEval qa_data.json line {line + 1}"},
            # The human label as the score a perfect hallucination scorer would give: all or nothing.
            "expected": {"hallucination": 1 if hallucinated else 0},
        }
        print(json.dumps(item, ensure_ascii=False))


if __name__ == "__main__":
    main(sys.argv[1])
