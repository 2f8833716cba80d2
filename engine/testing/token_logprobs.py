"""The log-probabilities the scripted judge sends when a request asks for them, in OpenAI's
shape: the answer cut into tokens, each with its `logprob`, `bytes` and `top_logprobs`.

The value of each field a reply names in `alternatives` is a token of its own (after its
opening quote, as tokenizers commonly cut `"verdict": "` before `yes`), whose candidates are
the values given there with their probabilities; the rest of the answer comes in tokens of
a few characters the model was sure of.
"""

from __future__ import annotations

import json
import math
from typing import Any

#: The log-probability of a token the model was sure of.
SURE = -1e-4


def _entry(text: str, logprob: float) -> dict[str, Any]:
    return {"token": text, "logprob": logprob, "bytes": list(text.encode())}


def _written(value: Any) -> str:
    """A value's text as its token holds it: a string without its quotes."""
    return value if isinstance(value, str) else json.dumps(value)


def _pieces(value: Any, path: str, named: dict[str, dict[Any, float]]) -> list[tuple[str, str | None]]:
    """The answer's text (as `json.dumps` writes it) in pieces; a piece holding the value of a
    field named in `named` carries its path."""
    if isinstance(value, dict):
        pieces: list[tuple[str, str | None]] = [("{", None)]
        for number, (key, item) in enumerate(value.items()):
            pieces.append(((", " if number else "") + json.dumps(key) + ": ", None))
            pieces += _pieces(item, f"{path}.{key}" if path else str(key), named)
        return [*pieces, ("}", None)]
    if isinstance(value, list):
        pieces = [("[", None)]
        for number, item in enumerate(value):
            if number:
                pieces.append((", ", None))
            pieces += _pieces(item, f"{path}[{number}]", named)
        return [*pieces, ("]", None)]
    if path in named:
        if isinstance(value, str):
            return [('"', None), (json.dumps(value)[1:-1], path), ('"', None)]
        return [(json.dumps(value), path)]
    return [(json.dumps(value), None)]


def tokens(answer: Any, alternatives: dict[str, dict[Any, float]], top: int, raw: str | None = None) -> list[dict[str, Any]]:
    """The tokens of `answer` (or of the `raw` text sent in its place) with their
    log-probabilities and (up to `top`) candidates."""
    merged: list[tuple[str, str | None]] = []
    for text, path in _pieces(answer, "", alternatives) if raw is None else [(raw, None)]:
        if path is None and merged and merged[-1][1] is None:
            merged[-1] = (merged[-1][0] + text, None)
        else:
            merged.append((text, path))
    written: list[dict[str, Any]] = []
    for text, path in merged:
        if path is None:
            for start in range(0, len(text), 4):
                piece = text[start : start + 4]
                written.append({**_entry(piece, SURE), "top_logprobs": [_entry(piece, SURE)][:top]})
            continue
        weighed = sorted(((_written(value), probability) for value, probability in alternatives[path].items()), key=lambda pair: -pair[1])
        chosen = dict(weighed).get(text, 0.0)
        logprob = math.log(chosen) if chosen > 0 else -20.0
        candidates = [_entry(value, math.log(probability) if probability > 0 else -20.0) for value, probability in weighed[:top]]
        written.append({**_entry(text, logprob), "top_logprobs": candidates})
    return written
