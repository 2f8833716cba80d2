"""DeepEval's metrics over the bench's items, timed: the baseline figures of
bench/bench_judge_calls.py. It runs in an interpreter that has DeepEval installed (its own
environment, never the project's), started by the bench; it imports nothing of this project.

    python bench/deepeval_hallucination.py ITEMS.json --base-url URL [--concurrency 64] [--warmup-base-url URL]
        [--metrics hallucination,faithfulness,answer_relevancy]

ITEMS.json is a list of {"input", "output", "context": [...]}. Each item is one LLMTestCase
(input, actual_output = output, context and retrieval_context = context) scored by
`evaluate(..., AsyncConfig(max_concurrent=concurrency))` with the metrics named
(HallucinationMetric by default; FaithfulnessMetric, AnswerRelevancyMetric) and DeepEval's
default OpenAI judge model, sent to `--base-url`. Before the
timed run, the first eight items are scored against `--warmup-base-url` (imports, connections),
as the bench warms up its own engine. Prints one JSON line: seconds (the timed `evaluate`
alone), items, scored (items with a score and no error), the first error if any, DeepEval's
version; as the last line of stdout, after whatever DeepEval prints itself.

Telemetry, the update check, `.env` files and the prompt offered after a run are turned off
before DeepEval is imported, so it reaches nothing but the judge server.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from typing import Any

QUIET = {
    "DEEPEVAL_TELEMETRY_OPT_OUT": "1",  # no PostHog events
    "DEEPEVAL_UPDATE_WARNING_OPT_IN": "0",  # no request to pypi.org for the latest version
    "DEEPEVAL_DISABLE_DOTENV": "1",  # read no .env file of the working folder
    "DEEPEVAL_NO_INSPECT_PROMPT": "1",  # offer no `deepeval inspect` after the run
    "DEEPEVAL_EVAL_MODE": "llm",  # the judge model decides every verdict (its default)
}


def score(items: list[dict[str, Any]], base_url: str, concurrency: int, tuned: bool, metrics: list[str]) -> tuple[float, int, str | None]:
    """(seconds of the `evaluate` call, items scored without error, the first error)."""
    import openai
    from deepeval import evaluate
    from deepeval.evaluate.configs import AsyncConfig, CacheConfig, DisplayConfig, ErrorConfig
    from deepeval.metrics import AnswerRelevancyMetric, FaithfulnessMetric, HallucinationMetric
    from deepeval.models import OpenAIModel
    from deepeval.test_case import LLMTestCase

    kinds = {"hallucination": HallucinationMetric, "faithfulness": FaithfulnessMetric, "answer_relevancy": AnswerRelevancyMetric}

    # By default DeepEval builds a new OpenAI client (and TLS context) for every call; tuned, its
    # calls share one HTTP client, as its `async_http_client` option allows.
    shared = {"async_http_client": openai.DefaultAsyncHttpxClient()} if tuned else {}
    judge = OpenAIModel(base_url=base_url, api_key="bench", **shared)
    cases = [
        LLMTestCase(input=item["input"], actual_output=item["output"], context=list(item["context"]), retrieval_context=list(item["context"]))
        for item in items
    ]
    started = time.perf_counter()
    result = evaluate(
        cases,
        [kinds[name](model=judge) for name in metrics],
        async_config=AsyncConfig(max_concurrent=concurrency),
        display_config=DisplayConfig(show_indicator=False, print_results=False, inspect_after_run=False),
        error_config=ErrorConfig(ignore_errors=True),
        cache_config=CacheConfig(write_cache=not tuned),  # its default rewrites the whole cache file after every item
    )
    seconds = time.perf_counter() - started
    errors = [metric.error for test in result.test_results for metric in test.metrics_data or [] if metric.error]
    scored = sum(1 for test in result.test_results if test.metrics_data and all(metric.score is not None and not metric.error for metric in test.metrics_data))
    return seconds, scored, (errors[0] if errors else None)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("items", help="JSON file: a list of {input, output, context}")
    parser.add_argument("--base-url", required=True, help="The judge server's OpenAI-compatible base URL")
    parser.add_argument("--concurrency", type=int, default=64, help="DeepEval's max_concurrent")
    parser.add_argument("--warmup-base-url", help="Score the first eight items here first, untimed")
    parser.add_argument("--metrics", default="hallucination", help="Comma-separated: hallucination, faithfulness, answer_relevancy")
    parser.add_argument("--tuned", action="store_true",
                        help="DeepEval at its fastest: its result cache off, one HTTP client shared by its calls")
    arguments = parser.parse_args()
    os.environ.update(QUIET)
    os.environ.pop("CONFIDENT_API_KEY", None)  # no key, so nothing is uploaded to Confident AI
    os.environ["OPENAI_API_KEY"] = "bench"
    with open(arguments.items, encoding="utf-8") as handle:
        items = json.load(handle)
    metrics = arguments.metrics.split(",")
    if arguments.warmup_base_url:
        score(items[:8], arguments.warmup_base_url, 8, arguments.tuned, metrics)
    seconds, scored, error = score(items, arguments.base_url, arguments.concurrency, arguments.tuned, metrics)
    from deepeval import __version__

    json.dump({"seconds": seconds, "items": len(items), "scored": scored, "error": error, "version": __version__}, sys.stdout)
    print()


if __name__ == "__main__":
    main()
