"""The functions computed steps (and every expression or template) may call: a small vetted
library for measuring text and tool calls without a judge.

Each function is the only place its library is used, so a scorer's YAML depends on these
names and their documented results, never on a library's API. The libraries are imported on
first use: loading a catalog (and starting the CLI) does not pay for them.

- tokens: `words`, `sentences` (pysbd), `normalize`, `stems` (Snowball), `keywords`
  (stop-words lists);
- comparing text: `similarity` and `edit_distance` (rapidfuzz), `diff` (rapidfuzz's Indel
  alignment);
- `sentiment` (VADER), `matches` (a regular expression), `lookup` (JMESPath);
- tool calls: `trajectory_match`, `tool_errors`.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Callable, Iterable, Mapping
from functools import cache, lru_cache
from typing import Any

from ..errors import NotScorable, ValueRefused
from ..scoring.shapes import ANY, BOOLEAN, TEXT, ListOf, Number, Record, Shape

#: Words of any script: letters and digits, keeping inner apostrophes and hyphens ("don't", "e-mail").
_WORD = re.compile(r"\w+(?:['’\-]\w+)*")

#: ISO 639-1 codes to the names the Snowball stemmers and the stop-word lists use.
_LANGUAGES = {
    "ar": "arabic", "ca": "catalan", "cs": "czech", "da": "danish", "de": "german", "el": "greek", "en": "english",
    "es": "spanish", "eu": "basque", "fa": "persian", "fi": "finnish", "fr": "french", "ga": "irish", "hi": "hindi",
    "hu": "hungarian", "hy": "armenian", "id": "indonesian", "it": "italian", "lt": "lithuanian", "ne": "nepali",
    "nl": "dutch", "no": "norwegian", "pl": "polish", "pt": "portuguese", "ro": "romanian", "ru": "russian",
    "sr": "serbian", "sv": "swedish", "ta": "tamil", "tr": "turkish", "uk": "ukrainian", "vi": "vietnamese",
    "bg": "bulgarian", "he": "hebrew", "sk": "slovak", "zh": "chinese", "ja": "japanese", "ko": "korean",
}
#: Languages pysbd segments with rules of their own; others use its English rules, which
#: split on the sentence punctuation most scripts share.
_SENTENCE_LANGUAGES = {"en", "hi", "mr", "zh", "es", "am", "ar", "hy", "bg", "ur", "ru", "pl", "fa", "nl", "da", "fr", "my", "el", "it", "ja", "de", "kk", "sk"}


def _text(value: Any, function: str) -> str:
    if value is None:
        return ""
    if not isinstance(value, str):
        raise TypeError(f"{function}() takes text, got {type(value).__name__}")
    return value


def _language_name(language: str, function: str) -> str:
    code = language.strip().lower()
    name = _LANGUAGES.get(code, code)
    if name not in _LANGUAGES.values():
        raise ValueRefused(f"{function}(): unknown language {language!r} (use an ISO 639-1 code such as 'en', 'de', 'fr')")
    return name


def words(text: Any) -> list[str]:
    """The words of `text`, in order, as written (any script; punctuation dropped)."""
    return _WORD.findall(_text(text, "words"))


@cache
def _segmenter(language: str) -> Any:
    import pysbd

    return pysbd.Segmenter(language=language if language in _SENTENCE_LANGUAGES else "en", clean=False)


def sentences(text: Any, language: str = "en") -> list[str]:
    """The sentences of `text` (abbreviations such as "Dr." do not end one)."""
    value = _text(text, "sentences")
    if not value.strip():
        return []
    return list(_sentences(value, language.strip().lower()))


@lru_cache(maxsize=1024)  # one output is split by every bound and scorer that reads its sentences
def _sentences(text: str, language: str) -> tuple[str, ...]:
    return tuple(sentence.strip() for sentence in _segmenter(language).segment(text) if sentence.strip())


def normalize(text: Any, case: bool = True, punctuation: bool = True, whitespace: bool = True, accents: bool = False) -> str:
    """`text` made comparable: folded case (ß → ss), punctuation removed, runs of spaces
    collapsed and trimmed, and (when `accents`) accents stripped (é → e). Each is a switch."""
    value = unicodedata.normalize("NFC", _text(text, "normalize"))
    if case:
        value = value.casefold()
    if accents:
        value = "".join(char for char in unicodedata.normalize("NFKD", value) if not unicodedata.combining(char))
    if punctuation:
        value = "".join(" " if unicodedata.category(char).startswith("P") else char for char in value)
    if whitespace:
        value = " ".join(value.split())
    return value


@cache
def _stemmer(language: str) -> Any:
    import snowballstemmer

    if language not in snowballstemmer.algorithms():
        raise ValueRefused(f"stems(): no stemmer for {language!r}")
    return snowballstemmer.stemmer(language)


def stems(value: Any, language: str = "en") -> list[str]:
    """The stems of a text's words (or of a list of words), lower-cased: "running" and
    "runs" both give "run". Snowball stemmers."""
    tokens = words(value) if value is None or isinstance(value, str) else [str(token) for token in value]
    stemmer = _stemmer(_language_name(language, "stems"))
    return [str(stem) for stem in stemmer.stemWords([token.casefold() for token in tokens])]


@cache
def _stop_words(language: str) -> frozenset[str]:
    from stop_words import StopWordError, get_stop_words

    try:
        return frozenset(word.casefold() for word in get_stop_words(language))
    except StopWordError:
        raise ValueRefused(f"keywords(): no stop-word list for {language!r}") from None


def keywords(text: Any, language: str = "en") -> list[str]:
    """The distinct content words of `text`, lower-cased, in order of first use: stop words
    ("the", "which", "would" ...), numbers and one-letter words left out."""
    stop = _stop_words(_language_name(language, "keywords"))
    found: dict[str, None] = {}
    for word in words(text):
        folded = word.casefold()
        if len(folded) > 1 and not folded.isdigit() and folded not in stop:
            found.setdefault(folded, None)
    return list(found)


_SIMILARITY_METHODS = ("ratio", "partial", "token_sort", "token_set")


def similarity(first: Any, second: Any, method: str = "ratio") -> float:
    """How alike two texts are, from 0 (nothing shared) to 1 (the same), by rapidfuzz:
    `ratio` (characters in common, order kept), `partial` (the best-matching part of the
    longer text), `token_sort` (word order ignored), `token_set` (repeated and extra words
    ignored). Two empty texts are the same (1)."""
    from rapidfuzz import fuzz

    methods: dict[str, Callable[[str, str], float]] = {
        "ratio": fuzz.ratio, "partial": fuzz.partial_ratio, "token_sort": fuzz.token_sort_ratio, "token_set": fuzz.token_set_ratio,
    }
    if method not in methods:
        raise ValueRefused(f"similarity(): method must be one of {', '.join(_SIMILARITY_METHODS)}, got {method!r}")
    a, b = _text(first, "similarity"), _text(second, "similarity")
    if not a and not b:
        return 1.0
    return round(methods[method](a, b) / 100, 6)


def edit_distance(first: Any, second: Any) -> int:
    """The Levenshtein distance: the fewest characters inserted, deleted or replaced to turn one text into the other."""
    from rapidfuzz.distance import Levenshtein

    return int(Levenshtein.distance(_text(first, "edit_distance"), _text(second, "edit_distance")))


def diff(first: Any, second: Any) -> dict[str, Any]:
    """How `second` differs from `first`, character by character:
    `ratio` = 2 × characters in common / total characters (1 when both are empty);
    `changes` = the number of changed stretches (an insertion, deletion or replacement each);
    `length_difference` = |len(first) − len(second)| / the longer length (0 when both are empty)."""
    from rapidfuzz.distance import Indel

    a, b = _text(first, "diff"), _text(second, "diff")
    longer = max(len(a), len(b))
    if not longer:
        return {"ratio": 1.0, "changes": 0, "length_difference": 0.0}
    changes = 0
    previous_changed = False
    for opcode in Indel.opcodes(a, b):
        changed = opcode.tag != "equal"
        # An insert beside a delete is one replaced stretch, not two changes.
        if changed and not previous_changed:
            changes += 1
        previous_changed = changed
    return {"ratio": float(Indel.normalized_similarity(a, b)), "changes": changes, "length_difference": abs(len(a) - len(b)) / longer}


@cache
def _sentiment_analyser() -> Any:
    from vaderSentiment.vaderSentiment import SentimentIntensityAnalyzer

    return SentimentIntensityAnalyzer()


def sentiment(text: Any) -> float:
    """The tone of `text` from -1 (most negative) through 0 (neutral) to 1 (most positive):
    VADER's compound score (a lexicon and rules made for English; other languages read as
    mostly neutral). Empty text is neutral (0)."""
    value = _text(text, "sentiment")
    if not value.strip():
        return 0.0
    return float(_sentiment_analyser().polarity_scores(value)["compound"])


@cache
def _pattern(pattern: str, ignore_case: bool) -> re.Pattern[str]:
    try:
        return re.compile(pattern, re.IGNORECASE if ignore_case else 0)
    except re.error as exc:
        raise ValueRefused(f"matches(): invalid regular expression {pattern!r}: {exc}") from None


def matches(text: Any, pattern: str, ignore_case: bool = False) -> bool:
    """Whether the regular expression `pattern` (Python syntax) is found anywhere in `text`."""
    return _pattern(pattern, ignore_case).search(_text(text, "matches")) is not None


def lookup(data: Any, path: str) -> Any:
    """The value at a JMESPath `path` in `data` (None when absent), e.g.
    `lookup(tool_calls, "[?tool_name=='search'].args.query")`."""
    import jmespath
    from jmespath.exceptions import JMESPathError

    try:
        return jmespath.search(path, data)
    except JMESPathError as exc:
        raise ValueRefused(f"lookup(): invalid path {path!r}: {str(exc).splitlines()[0]}") from None


def _step(value: Any) -> tuple[str, Mapping[str, Any] | None]:
    """A trajectory step as (tool name, arguments or None): a name, or an object with
    `tool_name` (or `tool`/`name`) and optionally `args` (or `arguments`)."""
    if isinstance(value, str):
        return value, None
    if isinstance(value, Mapping):
        name = value.get("tool_name", value.get("tool", value.get("name")))
        args = value.get("args", value.get("arguments"))
        if isinstance(name, str):
            return name, args if isinstance(args, Mapping) else None
    raise ValueRefused(f"a trajectory step must be a tool name or an object with `tool_name`, got {value!r}")


def _fits(actual: tuple[str, Mapping[str, Any] | None], expected: tuple[str, Mapping[str, Any] | None], match_args: bool) -> bool:
    if actual[0] != expected[0]:
        return False
    if not match_args or expected[1] is None:
        return True
    # The expected arguments are the ones that matter: the call may carry more.
    given = actual[1] or {}
    return all(name in given and given[name] == value for name, value in expected[1].items())


_ORDERS = ("strict", "relaxed", "any")


def trajectory_match(actual: Any, expected: Any, order: str = "strict", match_args: bool = False) -> dict[str, Any]:
    """How the tool calls made (`actual`) line up with the ones expected.

    `order`: `strict`: step k of one is compared with step k of the other; `relaxed`: the
    expected steps must come in their order, other calls may come between (the longest
    common subsequence); `any`: order does not matter (each expected step matched to one
    call). `match_args`: a call matches an expected step only when it has every argument the
    step gives, with equal values.

    Gives `matched` (expected steps matched), `expected` and `actual` (step counts), `missing`
    (names of expected steps not matched), `extra` (names of calls that matched no step) and
    `exact` (the calls are exactly the expected steps, in order)."""
    if order not in _ORDERS:
        raise ValueRefused(f"trajectory_match(): order must be one of {', '.join(_ORDERS)}, got {order!r}")
    if expected is None:
        # What the item lacks, not a mistake in the expression: the item is not scorable.
        raise NotScorable("no expected tool calls to compare with (neither the scorer's expected tools nor the item's)", parameter="expected_trajectory")
    calls = [_step(value) for value in _as_list(actual, "actual")]
    steps = [_step(value) for value in _as_list(expected, "expected")]
    pairs: list[tuple[int, int]]
    if order == "strict":
        pairs = [(index, index) for index in range(min(len(calls), len(steps))) if _fits(calls[index], steps[index], match_args)]
    elif order == "relaxed":
        pairs = _common_subsequence(calls, steps, match_args)
    else:
        pairs = []
        free = list(range(len(calls)))
        for step_index, step in enumerate(steps):
            found = next((call_index for call_index in free if _fits(calls[call_index], step, match_args)), None)
            if found is not None:
                free.remove(found)
                pairs.append((found, step_index))
    matched_calls = {call for call, _ in pairs}
    matched_steps = {step for _, step in pairs}
    exact = len(calls) == len(steps) and all(_fits(call, step, match_args) for call, step in zip(calls, steps))
    return {
        "matched": len(pairs),
        "expected": len(steps),
        "actual": len(calls),
        "missing": [step[0] for index, step in enumerate(steps) if index not in matched_steps],
        "extra": [call[0] for index, call in enumerate(calls) if index not in matched_calls],
        "exact": exact,
    }


def _common_subsequence(calls: list[tuple[str, Any]], steps: list[tuple[str, Any]], match_args: bool) -> list[tuple[int, int]]:
    """Index pairs of a longest common subsequence of calls and steps (dynamic programming)."""
    rows, columns = len(calls), len(steps)
    length = [[0] * (columns + 1) for _ in range(rows + 1)]
    for row in range(rows - 1, -1, -1):
        for column in range(columns - 1, -1, -1):
            if _fits(calls[row], steps[column], match_args):
                length[row][column] = length[row + 1][column + 1] + 1
            else:
                length[row][column] = max(length[row + 1][column], length[row][column + 1])
    pairs = []
    row = column = 0
    while row < rows and column < columns:
        if _fits(calls[row], steps[column], match_args):
            pairs.append((row, column))
            row, column = row + 1, column + 1
        elif length[row + 1][column] >= length[row][column + 1]:
            row += 1
        else:
            column += 1
    return pairs


def _as_list(value: Any, name: str) -> list[Any]:
    if value is None:
        return []
    if isinstance(value, (str, bytes, Mapping)) or not isinstance(value, Iterable):
        raise ValueRefused(f"{name} must be a list, got {type(value).__name__}")
    return list(value)


def _failed(result: Any) -> bool:
    if not isinstance(result, Mapping):
        return False
    if result.get("is_error"):
        return True
    value = result.get("result")
    return isinstance(value, Mapping) and bool(value.get("error") or value.get("isError"))


def tool_errors(results: Any) -> list[Any]:
    """The tool results (items of `tool_results`) that report a failure: flagged as an error
    by their message format (Anthropic `is_error`, AI SDK error parts), or a result object
    with a non-empty `error` (or MCP's `isError: true`)."""
    return [result for result in _as_list(results, "results") if _failed(result)]


_COUNT = Number(0, math.inf, integer=True)

#: What each function gives, as the load-time checks see it: the fields of its result, the
#: range of its number (what its documentation above promises).
RESULTS: dict[str, Shape] = {
    "words": ListOf(TEXT), "sentences": ListOf(TEXT), "normalize": TEXT, "stems": ListOf(TEXT), "keywords": ListOf(TEXT),
    "similarity": Number(0, 1, tight=True), "edit_distance": _COUNT, "sentiment": Number(-1, 1, tight=True), "matches": BOOLEAN,
    "diff": Record({"ratio": Number(0, 1, tight=True), "changes": _COUNT, "length_difference": Number(0, 1, tight=True)}, "diff()"),
    "trajectory_match": Record(
        {"matched": _COUNT, "expected": _COUNT, "actual": _COUNT, "missing": ListOf(TEXT), "extra": ListOf(TEXT), "exact": BOOLEAN}, "trajectory_match()"
    ),
    "tool_errors": ListOf(ANY),
}

#: The functions, by the name authors write.
FUNCTIONS: dict[str, Callable[..., Any]] = {
    "words": words,
    "sentences": sentences,
    "normalize": normalize,
    "stems": stems,
    "keywords": keywords,
    "similarity": similarity,
    "edit_distance": edit_distance,
    "diff": diff,
    "sentiment": sentiment,
    "matches": matches,
    "lookup": lookup,
    "trajectory_match": trajectory_match,
    "tool_errors": tool_errors,
}
