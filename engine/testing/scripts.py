"""What a test scripts on the scripted servers, and what they received: a `Request` read as a
script reads it (its prompt, its schema name, whether it is a re-ask), a `Reply` (an answer,
raw text, an HTTP error, or how it is paced), and `Script`, what `server.on` takes."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Union


@dataclass
class Request:
    """One request the server received."""

    path: str
    headers: dict[str, str]
    body: dict[str, Any]
    received_at: float = 0.0

    @property
    def messages(self) -> list[dict[str, Any]]:
        return list(self.body.get("messages", []))

    @property
    def prompt(self) -> str:
        """The first user message: the rendered prompt of the step (re-asks come after it)."""
        return next((_text(m.get("content")) for m in self.messages if m.get("role") == "user"), "")

    def blocks(self, tag: str) -> list[str]:
        """The text of every `<tag>` block of the prompt, in order: what an answer scripted
        on the prompt reads (`blocks("output")`, or `blocks("example_output")` for the worked
        examples a step shows, so a scripted judge can answer better on items like them)."""
        return re.findall(rf"<{re.escape(tag)}>\n(.*?)\n</{re.escape(tag)}>", self.prompt, re.DOTALL)

    @property
    def system(self) -> str:
        """The system message (Anthropic's Messages API sends it beside the messages)."""
        if "system" in self.body:
            return _text(self.body["system"])
        return next((_text(m.get("content")) for m in self.messages if m.get("role") == "system"), "")

    @property
    def schema_name(self) -> str | None:
        """The response model asked for, whatever the structured-output mode."""
        response_format = self.body.get("response_format") or {}
        if response_format.get("type") == "json_schema":
            return str(response_format["json_schema"]["name"])
        tools = self.body.get("tools") or []
        if tools:  # OpenAI nests the name under "function"; Anthropic does not
            return str(tools[0].get("function", tools[0])["name"])
        texts = [_text(message.get("content")) for message in self.messages] + [self.system]
        for text in texts:  # JSON / MD_JSON modes put the schema in the text
            start = text.find("{", text.find("json_schema"))
            if "json_schema" in text and start >= 0:
                try:
                    schema, _ = json.JSONDecoder().raw_decode(text[start:])
                    return str(schema.get("title"))
                except ValueError:
                    pass
            found = re.search(r'"title":\s*"([^"]+)"', text)
            if found:
                return found.group(1)
        return None

    @property
    def answer_schema(self) -> dict[str, Any] | None:
        """The JSON schema the answer must follow (json_schema and tools modes)."""
        response_format = self.body.get("response_format") or {}
        if response_format.get("type") == "json_schema":
            return dict(response_format["json_schema"].get("schema") or {})
        tools = self.body.get("tools") or []
        if tools:
            function = tools[0].get("function", tools[0])
            return dict(function.get("parameters") or function.get("input_schema") or {})
        return None

    @property
    def max_tokens(self) -> int | None:
        limit = self.body.get("max_completion_tokens", self.body.get("max_tokens"))
        return int(limit) if limit is not None else None

    @property
    def is_reask(self) -> bool:
        return len(self.messages) > 2 or any(m.get("role") in ("assistant", "tool") for m in self.messages)


def _text(content: Any) -> str:
    """The text of a message's content: a string, or a list of content blocks."""
    if isinstance(content, list):
        return "".join(str(block.get("text", "")) for block in content if isinstance(block, dict))
    return "" if content is None else str(content)


@dataclass
class Reply:
    """What the server answers: a structured answer, raw text, or an HTTP error. `reasoning`
    is a reasoning model's thinking, sent apart from the answer (`reasoning_content`, or an
    Anthropic thinking block), and `reasoning_tokens` the tokens it cost."""

    answer: Any = None
    text: str | None = None
    status: int = 200
    error: str = ""
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    usage: tuple[int, int] | None = (50, 10)  # None: no `usage` in the answer, as some servers send
    cached_tokens: int = 0  # of the prompt tokens, reported as served from the prompt cache
    finish_reason: str | None = None
    hangs: bool = False
    reasoning: str | None = None
    reasoning_tokens: int = 0
    param: str | None = None
    #: Streamed: seconds between two pieces of the answer (a model writing token by token).
    every: float = 0.0
    #: Streamed: the pieces sent before the answer stops until the server is reset (stuck midway).
    stall_after: int | None = None
    #: For log-probabilities: per field of the answer (`verdict`, `verdicts[1].verdict`), how
    #: likely each value was before the schema's grammar (values it does not allow may be among them).
    alternatives: dict[str, dict[Any, float]] = field(default_factory=dict)

    @classmethod
    def raw(cls, text: str, **kwargs: Any) -> Reply:
        return cls(text=text, **kwargs)

    @classmethod
    def fail(cls, status: int, message: str = "scripted failure", **kwargs: Any) -> Reply:
        """An HTTP error; `param=` names the request field at fault, as OpenAI's errors do."""
        return cls(status=status, error=message, **kwargs)

    @classmethod
    def cut_off(cls, text: str, **kwargs: Any) -> Reply:
        """An answer that stopped at the request's token limit: `text` as far as it got,
        with `finish_reason: "length"`, as a server answers when max_tokens runs out."""
        return cls(text=text, finish_reason="length", **kwargs)

    @classmethod
    def slowly(cls, answer: Any, every: float, **kwargs: Any) -> Reply:
        """An answer streamed a piece (a few characters, about a token) every `every` seconds:
        a slow judge that keeps writing. Not streamed, it comes when the last piece would."""
        return cls(answer=answer, every=every, **kwargs)

    @classmethod
    def stalls(cls, answer: Any, after: int, **kwargs: Any) -> Reply:
        """An answer whose stream stops after `after` pieces and sends nothing more until the
        server is reset: a judge stuck midway through its answer."""
        return cls(answer=answer, stall_after=after, **kwargs)

    @classmethod
    def unsure(cls, answer: Any, alternatives: dict[str, dict[Any, float]], **kwargs: Any) -> Reply:
        """`answer`, with the log-probabilities a request that asks for them gets: at each field
        named in `alternatives` (`{"verdict": {"yes": 0.6, "no": 0.4}}`), the values the model
        weighed there as its top candidates, the chosen one among them."""
        return cls(answer=answer, alternatives=alternatives, **kwargs)

    @classmethod
    def hang(cls) -> Reply:
        """No answer at all (a judge stuck generating): the request waits until the client
        gives up or the server is reset."""
        return cls(hangs=True)

    def pieces(self, text: str) -> list[str]:
        """How this reply's `text` is cut when streamed: a few characters a piece (about a
        token) when it is paced, else all of it in one piece, as a fast server's one network
        write holds it."""
        if not self.every and self.stall_after is None:
            return [text]
        return [text[start : start + 4] for start in range(0, len(text), 4)] or [""]


Script = Union[Reply, dict[str, Any], str, Callable[[Request], Any]]
