"""An Anthropic Messages API server on 127.0.0.1 (POST /v1/messages), scripted per test like
`JudgeServer`: the real `anthropic` SDK and Instructor's Anthropic support talk to it over
HTTP, so tool-use answers, malformed answers, 429 and 529 (overloaded) are exercised in the
shapes the real API uses.

    server = AnthropicServer().start()
    os.environ["ANTHROPIC_BASE_URL"] = server.base_url
    server.on("Claims", {"claims": ["a"]})                      # a tool_use block
    server.on("Claims", Reply.raw("not json"))                  # a text block instead
    server.on("Claims", Reply.fail(529, "Overloaded"))          # overloaded_error

A request with `"stream": true` is answered with the Messages API's events: message_start,
each content block's start, deltas (text, thinking, the tool input's partial JSON) and stop,
message_delta (stop reason, output tokens) and message_stop, paced as the reply says.
"""

from __future__ import annotations

import json
from typing import Any

from .judge_server import JudgeServer
from .scripts import Reply, Request

_ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    500: "api_error",
    529: "overloaded_error",
}


class AnthropicServer(JudgeServer):
    """Scripts are keyed by the tool name Instructor gives the response model (its class
    name), or None for plain-text requests."""

    route = "/v1/messages"

    @property
    def base_url(self) -> str:
        """What ANTHROPIC_BASE_URL is set to (the SDK adds /v1/messages)."""
        return f"http://127.0.0.1:{self._http.server_port}"

    def _completion(self, request: Request, reply: Reply) -> dict[str, Any]:
        body = request.body
        content: list[dict[str, Any]] = []
        if reply.reasoning is not None:
            content.append({"type": "thinking", "thinking": reply.reasoning, "signature": "scripted"})
        tools = body.get("tools") or []
        if tools and reply.text is None:
            content.append({"type": "tool_use", "id": f"toolu_{len(self.requests)}", "name": tools[0]["name"], "input": reply.answer})
            stop_reason = "tool_use"
        else:
            content.append({"type": "text", "text": reply.text if reply.text is not None else json.dumps(reply.answer)})
            stop_reason = "end_turn"
        if reply.finish_reason == "length":
            stop_reason = "max_tokens"
        input_tokens, output_tokens = reply.usage or (0, 0)  # the Messages API always reports usage
        return {
            "id": f"msg_{len(self.requests)}",
            "type": "message",
            "role": "assistant",
            "model": body.get("model", "claude-test"),
            "content": content,
            "stop_reason": stop_reason,
            "stop_sequence": None,
            "usage": {"input_tokens": input_tokens, "output_tokens": output_tokens},
        }

    def _events(self, request: Request, reply: Reply) -> list[tuple[str | None, dict[str, Any] | str]]:
        message = self._completion(request, reply)
        usage = message["usage"]
        start = {**message, "content": [], "stop_reason": None, "usage": {"input_tokens": usage["input_tokens"], "output_tokens": 1}}
        events: list[tuple[str | None, dict[str, Any] | str]] = [("message_start", {"type": "message_start", "message": start})]
        for index, block in enumerate(message["content"]):
            kind = block["type"]
            if kind == "tool_use":
                opened, written, delta = {**block, "input": {}}, json.dumps(block["input"]), "input_json_delta"
            elif kind == "thinking":
                opened, written, delta = {**block, "thinking": "", "signature": ""}, block["thinking"], "thinking_delta"
            else:
                opened, written, delta = {**block, "text": ""}, block["text"], "text_delta"
            events.append(("content_block_start", {"type": "content_block_start", "index": index, "content_block": opened}))
            field = {"input_json_delta": "partial_json", "thinking_delta": "thinking", "text_delta": "text"}[delta]
            events += [("content_block_delta", {"type": "content_block_delta", "index": index, "delta": {"type": delta, field: piece}}) for piece in reply.pieces(written)]
            if kind == "thinking":
                events.append(("content_block_delta", {"type": "content_block_delta", "index": index, "delta": {"type": "signature_delta", "signature": block["signature"]}}))
            events.append(("content_block_stop", {"type": "content_block_stop", "index": index}))
        stop = {"stop_reason": message["stop_reason"], "stop_sequence": None}
        events.append(("message_delta", {"type": "message_delta", "delta": stop, "usage": {"output_tokens": usage["output_tokens"]}}))
        return [*events, ("message_stop", {"type": "message_stop"})]

    def _error(self, reply: Reply) -> dict[str, Any]:
        kind = _ERROR_TYPES.get(reply.status, "api_error" if reply.status >= 500 else "invalid_request_error")
        return {"type": "error", "error": {"type": kind, "message": reply.error}}
