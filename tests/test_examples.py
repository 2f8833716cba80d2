"""The shipped labelled sets: they load as items with the labels the docs describe, and the
scripts beside them rebuild them exactly from the original data (when it is at hand)."""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from engine.runs import EvalItem

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"
SHARED = ROOT.parent / "shared" / "data"


def items(name: str) -> list[EvalItem]:
    return [EvalItem.of(json.loads(line)) for line in (EXAMPLES / name).read_text(encoding="utf-8").splitlines()]


def test_halueval_pairs_hold_both_answers_of_each_passage() -> None:
    loaded = items("halueval_qa_pairs.jsonl")
    assert len(loaded) == 300 and len({item.key for item in loaded}) == 300
    assert Counter(item.expected_for("hallucination") for item in loaded) == {True: 150, False: 150}
    by_pair: dict[str, list[EvalItem]] = {}
    for item in loaded:
        by_pair.setdefault(item.metadata["pair"], []).append(item)
    for pair in by_pair.values():
        assert [item.expected_for("faithfulness") for item in pair] == [False, True]
        assert pair[0].context == pair[1].context and pair[0].output != pair[1].output


def test_begin_items_carry_attribution_labels() -> None:
    loaded = items("begin_faithfulness.jsonl")
    assert len(loaded) == 200
    assert Counter(item.expected_for("faithfulness") for item in loaded) == {True: 100, False: 100}
    assert all((item.metadata["label"] == "Not fully attributable") == item.expected_for("faithfulness") for item in loaded)
    assert {item.metadata["model"] for item in loaded} == {"ctrl", "doha", "gpt2", "t5"}


@pytest.mark.parametrize(
    ("script", "source", "arguments", "shipped"),
    [
        ("make_halueval_sample.py", "halueval/qa_data.json", [], "halueval_qa.jsonl"),
        ("make_halueval_sample.py", "halueval/qa_data.json", ["--pairs", "150"], "halueval_qa_pairs.jsonl"),
        ("make_begin_sample.py", "begin/begin_dev_wow.tsv", [], "begin_faithfulness.jsonl"),
    ],
)
def test_the_scripts_rebuild_the_shipped_files(script: str, source: str, arguments: list[str], shipped: str) -> None:
    if not (SHARED / source).is_file():
        pytest.skip(f"the original data ({source}) is not beside the checkout")
    built = subprocess.run([sys.executable, str(EXAMPLES / script), *arguments, str(SHARED / source)], capture_output=True, text=True, check=True)
    assert built.stdout == (EXAMPLES / shipped).read_text(encoding="utf-8")
