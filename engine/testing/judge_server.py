"""An OpenAI-compatible chat-completions server on 127.0.0.1, scripted per test: the judge
that this project's tests, its benchmarks and host projects' own tests run against offline.

The real `openai` client and Instructor talk to it over HTTP, so tests exercise the same
request and response shapes as a real server. Replies are scripted per response model (the
schema name the request asks for), so concurrent steps and runs get the right answers in any
order:

    server.on("Claims", {"claims": ["a", "b"]})                 # every Claims request
    server.on("HallucinationVerdicts", [first, second])         # one per request, in order
    server.on("Reason", lambda request: {"reason": request.prompt[:20]})
    server.on("Claims", Reply.error(429, headers={"retry-after": "0"}))
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections import defaultdict, deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Union


@dataclass
class Request:
    """One request the server received."""

    path: str
    headers: dict[str, str]
    body: dict[str, Any]

    @property
    def messages(self) -> list[dict[str, Any]]:
        return list(self.body.get("messages", []))

    @property
    def prompt(self) -> str:
        """The first user message: the rendered prompt of the step (re-asks come after it)."""
        return next((_text(m.get("content")) for m in self.messages if m.get("role") == "user"), "")

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
    usage: tuple[int, int] = (50, 10)
    reasoning: str | None = None
    reasoning_tokens: int = 0
    param: str | None = None

    @classmethod
    def raw(cls, text: str, **kwargs: Any) -> Reply:
        return cls(text=text, **kwargs)

    @classmethod
    def fail(cls, status: int, message: str = "scripted failure", **kwargs: Any) -> Reply:
        """An HTTP error; `param=` names the request field at fault, as OpenAI's errors do."""
        return cls(status=status, error=message, **kwargs)


Script = Union[Reply, dict[str, Any], str, Callable[[Request], Any]]


class JudgeServer:
    """The OpenAI-compatible server (POST /v1/chat/completions)."""

    #: The path every scripted request is posted to (others get 404).
    route = "/chat/completions"

    def __init__(self) -> None:
        self.requests: list[Request] = []
        self._scripts: dict[str | None, deque[Script]] = defaultdict(deque)
        self._sticky: dict[str | None, Script] = {}
        self._lock = threading.Lock()
        self.in_flight = 0
        self.max_in_flight = 0
        self._http = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._http.daemon_threads = True
        self._thread = threading.Thread(target=self._http.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._http.server_port}/v1"

    def start(self) -> JudgeServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._http.shutdown()
        self._http.server_close()

    def reset(self) -> None:
        """Forget every script and request, so one server serves many tests."""
        with self._lock:
            self.requests.clear()
            self._scripts.clear()
            self._sticky.clear()
            self.max_in_flight = self.in_flight

    def on(self, schema_name: str | None, script: Script | list[Script]) -> None:
        """Script the answers to requests for `schema_name` (None: free-text requests).
        A list is consumed one reply per request; anything else answers every request."""
        with self._lock:
            if isinstance(script, list):
                self._scripts[schema_name].extend(script)
            else:
                self._sticky[schema_name] = script

    def requests_for(self, schema_name: str | None) -> list[Request]:
        return [request for request in self.requests if request.schema_name == schema_name]

    def _next(self, request: Request) -> Reply:
        with self._lock:
            name = request.schema_name
            queue = self._scripts.get(name)
            if queue:
                script = queue.popleft()
            elif name in self._sticky:
                script = self._sticky[name]
            else:
                return Reply.fail(500, f"the test server has no script for {name!r}")
        if callable(script) and not isinstance(script, Reply):
            script = script(request)
        if isinstance(script, Reply):
            return script
        if isinstance(script, str):
            return Reply.raw(script)
        return Reply(answer=script)

    def _completion(self, request: Request, reply: Reply) -> dict[str, Any]:
        body = request.body
        message: dict[str, Any] = {"role": "assistant", "content": None}
        finish_reason = "stop"
        text = reply.text if reply.text is not None else json.dumps(reply.answer)
        tools = body.get("tools") or []
        if tools and reply.text is None:
            message["tool_calls"] = [
                {"id": "call_1", "type": "function", "function": {"name": tools[0]["function"]["name"], "arguments": text}}
            ]
            finish_reason = "tool_calls"
        else:
            message["content"] = text
        if reply.reasoning is not None:
            message["reasoning_content"] = reply.reasoning
        prompt_tokens, completion_tokens = reply.usage
        usage: dict[str, Any] = {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens, "total_tokens": prompt_tokens + completion_tokens}
        if reply.reasoning_tokens:
            usage["completion_tokens_details"] = {"reasoning_tokens": reply.reasoning_tokens}
        return {
            "id": f"chatcmpl-{len(self.requests)}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": body.get("model", "test-model"),
            "choices": [{"index": 0, "message": message, "finish_reason": finish_reason, "logprobs": None}],
            "usage": usage,
        }

    def _error(self, reply: Reply) -> dict[str, Any]:
        error = {"message": reply.error, "type": "server_error" if reply.status >= 500 else "invalid_request_error", "param": reply.param}
        return {"error": error}

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def _send(self, status: int, payload: dict[str, Any], headers: dict[str, str] | None = None) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for name, value in (headers or {}).items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:  # noqa: N802
                if self.path.rstrip("/").endswith("/models"):
                    self._send(200, {"object": "list", "data": [{"id": "test-model", "object": "model", "owned_by": "tests"}]})
                else:
                    self._send(404, {"error": {"message": "not found", "type": "invalid_request_error"}})

            def do_POST(self) -> None:  # noqa: N802
                length = int(self.headers.get("Content-Length", "0"))
                body = json.loads(self.rfile.read(length) or b"{}")
                request = Request(self.path, {k.lower(): v for k, v in self.headers.items()}, body)
                with server._lock:
                    server.requests.append(request)
                    server.in_flight += 1
                    server.max_in_flight = max(server.max_in_flight, server.in_flight)
                try:
                    if not self.path.split("?", 1)[0].endswith(server.route):
                        self._send(404, {"error": {"message": f"no route {self.path}", "type": "invalid_request_error"}})
                        return
                    reply = server._next(request)
                    if reply.delay:
                        time.sleep(reply.delay)
                    if reply.status != 200:
                        self._send(reply.status, server._error(reply), reply.headers)
                    else:
                        self._send(200, server._completion(request, reply), reply.headers)
                finally:
                    with server._lock:
                        server.in_flight -= 1

        return Handler
