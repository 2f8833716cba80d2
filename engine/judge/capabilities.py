"""What a judge's server and model accept, known ahead (by model family) or learned from its
refusals during a run: the sampling parameters a model refuses, and the structured-output
mode that works. Learned facts are kept per (endpoint, model) for the rest of the process,
so a run pays for a refusal once and says so once.

Also here: the thinking of reasoning models (`<think>...</think>` before the answer, or a
separate `reasoning_content`), taken out of an answer before it is validated.
"""

from __future__ import annotations

import logging
import re
import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from .config import StructuredMode

logger = logging.getLogger("engine.judge")

#: When a server refuses a mode, the next one to try (json_schema -> tools -> json).
NEXT_MODE: dict[StructuredMode, StructuredMode] = {"json_schema": "tools", "tools": "json"}

# What a refusal of each mode talks about.
_MODE_WORDS: dict[StructuredMode, tuple[str, ...]] = {
    "json_schema": ("response_format", "json_schema", "structured output", "response format"),
    "tools": ("tool", "function"),
    "json": ("response_format", "json_object", "json mode", "response format"),
    "md_json": (),
}

# OpenAI's reasoning models take neither temperature, top_p nor log-probabilities, and count
# max tokens as max_completion_tokens (thinking included).
_REASONING_FAMILY = re.compile(r"^(?:[\w.-]+/)?(?:o1|o3|o4|gpt-5)(?:$|[-.])")
_REASONING_REFUSES = frozenset({"temperature", "top_p", "logprobs", "top_logprobs"})
# Asked for together: a server that refuses one has no use for the other.
_LOGPROBS = frozenset({"logprobs", "top_logprobs"})


def is_reasoning_family(model_name: str) -> bool:
    return _REASONING_FAMILY.match(model_name) is not None


@dataclass
class _Learned:
    refused: set[str] = field(default_factory=set)
    mode: StructuredMode | None = None
    thinks: bool = False


class Capabilities:
    """What is known about each (endpoint, model); shared by every judge of the process."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._learned: dict[tuple[str, str], _Learned] = {}

    def _entry(self, endpoint: str, model: str) -> _Learned:
        return self._learned.setdefault((endpoint, model), _Learned())

    def parameters(self, endpoint: str, model: str, wanted: Mapping[str, Any]) -> dict[str, Any]:
        """`wanted` less what the model refuses (by family, or as learned)."""
        with self._lock:
            refused = set(self._entry(endpoint, model).refused)
        if is_reasoning_family(model):
            refused |= _REASONING_REFUSES
        if refused & _LOGPROBS:
            refused |= _LOGPROBS
        # Reasoning models (and servers that follow OpenAI's newer API) take the limit as
        # max_completion_tokens, thinking included.
        if "max_tokens" in wanted and (is_reasoning_family(model) or "max_tokens" in refused):
            wanted = {**{k: v for k, v in wanted.items() if k != "max_tokens"}, "max_completion_tokens": wanted["max_tokens"]}
        return {name: value for name, value in wanted.items() if name not in refused}

    def refuse(self, endpoint: str, model: str, parameter: str) -> None:
        with self._lock:
            entry = self._entry(endpoint, model)
            first = parameter not in entry.refused
            entry.refused.add(parameter)
        if first:  # log-probabilities are asked for only when the server gives them: no warning
            level = logging.INFO if parameter in _LOGPROBS else logging.WARNING
            logger.log(level, "the judge %s refuses `%s`; it is left out for the rest of the run", model, parameter)

    def mode(self, endpoint: str, model: str, configured: StructuredMode) -> StructuredMode:
        with self._lock:
            return self._entry(endpoint, model).mode or configured

    def fall_back(self, endpoint: str, model: str, failed: StructuredMode, reason: str) -> StructuredMode | None:
        """The mode to try after `failed` was refused (None: there is none left)."""
        following = NEXT_MODE.get(failed)
        if following is None:
            return None
        with self._lock:
            entry = self._entry(endpoint, model)
            already = entry.mode == following
            entry.mode = following
        if not already:
            logger.warning(
                "the judge %s at %s does not support the %s response format (%s); using %s for the rest of the run",
                model, endpoint, failed, reason, following,
            )
        return following

    def learn_thinking(self, endpoint: str, model: str) -> None:
        """The model was seen thinking before it answered: from now on its calls keep the
        step's whole max_tokens, as its thinking counts against it."""
        with self._lock:
            self._entry(endpoint, model).thinks = True

    def thinks(self, endpoint: str, model: str) -> bool:
        """Seen thinking, or a model that takes only `max_completion_tokens` (OpenAI's API for
        reasoning models): its max_tokens must leave room for thinking."""
        with self._lock:
            entry = self._entry(endpoint, model)
            return entry.thinks or "max_tokens" in entry.refused

    def forget(self) -> None:
        """Forget everything learned (a new run in the same process, e.g. a test)."""
        with self._lock:
            self._learned.clear()


#: The process-wide memory every judge consults.
capabilities = Capabilities()


def refused_parameter(message: str, error_param: Any, sent: Iterable[str]) -> str | None:
    """The sampling parameter a 400 answer refuses, when it names one that was sent."""
    names = [name for name in sent if name not in ("model", "messages")]
    if isinstance(error_param, str) and error_param in names:
        return error_param
    for name in _LOGPROBS.intersection(names):  # asked for only where a server gives them: any 400 naming them refuses them
        if re.search(rf"\b{name}\b", message):
            return name
    lowered = message.lower()
    if not any(word in lowered for word in ("unsupported", "not support", "does not support", "not supported", "unknown", "invalid", "unrecognized", "not allowed")):
        return None
    for name in names:
        if re.search(rf"['\"`]?\b{re.escape(name)}\b['\"`]?", message):
            return name
    return None


def refuses_mode(mode: StructuredMode, message: str, error_param: Any) -> bool:
    """Whether a 4xx answer says the server cannot do `mode` (rather than anything else)."""
    lowered = message.lower()
    words = _MODE_WORDS[mode]
    mentioned = (isinstance(error_param, str) and any(word in error_param.lower() for word in words)) or any(word in lowered for word in words)
    refused = any(word in lowered for word in ("support", "invalid", "unknown", "unrecognized", "not allowed", "not available"))
    return mentioned and refused


_THINK = re.compile(r"<think>(.*?)</think>", re.DOTALL)


def split_thinking(text: str) -> tuple[str, str | None]:
    """(the answer, the thinking before it). Some servers drop the opening tag and send
    only `</think>` after the thinking; that is handled too."""
    thoughts = [found.strip() for found in _THINK.findall(text)]
    answer = _THINK.sub("", text)
    if "</think>" in answer:  # an unopened block: everything before the closing tag
        before, _, answer = answer.rpartition("</think>")
        thoughts.insert(0, before.replace("<think>", "").strip())
    elif "<think>" in answer:  # cut off while thinking: no answer follows
        answer, _, unfinished = answer.partition("<think>")
        thoughts.append(unfinished.strip())
    thinking = "\n\n".join(thought for thought in thoughts if thought)
    return answer.strip(), thinking or None
