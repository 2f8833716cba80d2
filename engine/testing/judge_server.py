"""An OpenAI-compatible chat-completions server on 127.0.0.1, scripted per test: the judge
that this project's tests, its benchmarks and host projects' own tests run against offline.

The real `openai` client and Instructor talk to it over HTTP, so tests exercise the same
request and response shapes as a real server. Replies are scripted per response model (the
schema name the request asks for), so concurrent steps and runs get the right answers in any
order:

    server.on("Claims", {"claims": ["a", "b"]})                 # every Claims request
    server.on("HallucinationVerdicts", [first, second])         # one per request, in order
    server.on("Reason", lambda request: {"reason": request.prompt[:20]})
    server.on("Claims", lambda request: {"claims": request.blocks("output")})   # answers read the prompt
    server.on("Claims", Reply.fail(429, headers={"retry-after": "0"}))
    server.latency = 0.5                                         # every answer takes 500 ms
    server.on("Claims", Reply.cut_off('{"claims": ["a", "b'))     # finish_reason "length"
    server.on("Claims", Reply.hang())                           # no answer until reset()
    server.on("Claims", Reply.slowly({"claims": ["a"]}, every=0.2))   # streamed a piece every 0.2 s
    server.on("Claims", Reply.stalls({"claims": ["a"]}, after=3))      # stops sending midway until reset()
    server.on("Verdict", Reply.unsure({"verdict": "yes"}, {"verdict": {"yes": 0.7, "no": 0.3}}))  # its log-probabilities
    server.refuses_logprobs = True                              # a 400 naming `logprobs` to any request for them
    server.fallback = lambda request: {...}                     # any request no script names
    server.fallback = looping()             # any schema: an answer looping until bounded (see looping.py)

It also serves the Batch API as OpenAI documents it: `/v1/files` (upload with purpose
"batch", `/v1/files/{id}/content`) and `/v1/batches` (create, retrieve). A batch is
`validating` when created and moves one state per poll (GET): `in_progress` for
`batch_polls_in_progress` polls, then `completed`, with each line answered by the same
scripts as a live request; lines whose script fails go to the error file. After
`expire_next_batch(answered=N)`, the next batch ends `expired` with only N lines answered
and the rest in its error file as `batch_expired`.

A request with `"stream": true` is answered as OpenAI streams: server-sent events of
`chat.completion.chunk` objects (the role, then the answer in pieces: its text, or its tool
call's arguments, and `reasoning_content` before them), a last chunk with the finish reason,
one with `usage` when `stream_options.include_usage` asks for it, and `data: [DONE]`. A request
with `logprobs: true` gets them in OpenAI's shape (see token_logprobs.py), whole under
`choices[0].logprobs.content`, or streamed with each chunk's tokens (a token per chunk when
the reply is paced). A reply
is sent in a few pieces at once unless it says how to pace them (`slowly`, `stalls`).

Each request is logged with the time it arrived (`received_at`, on `time.monotonic()`), so
tests can check pacing and waits from the server's side.
"""

from __future__ import annotations

import email.parser
import email.policy
import json
import re
import sys
import threading
import time
import uuid
from collections import defaultdict, deque
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from . import token_logprobs
from .scripts import Reply, Request, Script


class _Listener(ThreadingHTTPServer):
    # The default backlog of 5 pending connections drops some of the 64 that a concurrent
    # run opens at once (the client sees a reset and retries, which skews any timing).
    request_queue_size = 256

    def __init__(self, judge: JudgeServer) -> None:
        self.judge = judge
        super().__init__(("127.0.0.1", 0), _ScriptedHandler)

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A client that closed its connection (a stream it stopped reading, a run that
        # ended) is no error of the server's: no traceback in whatever test runs next.
        if isinstance(sys.exc_info()[1], (ConnectionResetError, BrokenPipeError)):
            return
        super().handle_error(request, client_address)


class JudgeServer:
    """The OpenAI-compatible server (POST /v1/chat/completions)."""

    #: The path every scripted request is posted to (others get 404).
    route = "/chat/completions"

    def __init__(self) -> None:
        self.requests: list[Request] = []
        self._scripts: dict[str | None, deque[Script]] = defaultdict(deque)
        self._sticky: dict[str | None, Script] = {}
        #: Answers a request that no script names (by default it gets HTTP 500).
        self.fallback: Script | None = None
        self._lock = threading.Lock()
        self.in_flight = 0
        self.max_in_flight = 0
        #: Seconds every answer takes (a remote model's latency), on top of a reply's own delay.
        self.latency = 0.0
        #: Answer a request that asks for log-probabilities with a 400 naming `logprobs`, as servers without them do.
        self.refuses_logprobs = False
        self._release = threading.Event()  # set on reset: hanging replies end
        self._http = _Listener(self)
        self._http.daemon_threads = True
        self._thread = threading.Thread(target=self._http.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self.files: dict[str, tuple[dict[str, Any], bytes]] = {}
        self.batches: dict[str, dict[str, Any]] = {}
        self.batch_polls_in_progress = 1
        #: The largest input file and the most requests one batch takes (OpenAI's limits unless set).
        self.batch_max_bytes = 200_000_000
        self.batch_max_requests = 50_000
        self._expire_next: int | None = None
        self._batch_polls: dict[str, int] = {}

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
            self.fallback = None
            self.max_in_flight = self.in_flight
            self.latency = 0.0
            self.refuses_logprobs = False
            self._release.set()
            self._release = threading.Event()
            self.files.clear()
            self.batches.clear()
            self._batch_polls.clear()
            self.batch_polls_in_progress = 1
            self.batch_max_bytes = 200_000_000
            self.batch_max_requests = 50_000
            self._expire_next = None

    def expire_next_batch(self, answered: int) -> None:
        """The next batch created expires after answering its first `answered` lines."""
        with self._lock:
            self._expire_next = answered

    # the Batch API

    def _store_file(self, content: bytes, purpose: str, filename: str) -> dict[str, Any]:
        file_id = f"file-{uuid.uuid4().hex[:24]}"
        meta = {"id": file_id, "object": "file", "bytes": len(content), "created_at": int(time.time()), "filename": filename, "purpose": purpose}
        with self._lock:
            self.files[file_id] = (meta, content)
        return meta

    def _create_batch(self, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        input_file = self.files.get(str(body.get("input_file_id")))
        if input_file is None or input_file[0]["purpose"] != "batch":
            return 400, {"error": {"message": "input_file_id must name a file uploaded with purpose 'batch'", "type": "invalid_request_error"}}
        if body.get("endpoint") != "/v1/chat/completions" or body.get("completion_window") != "24h":
            return 400, {"error": {"message": "endpoint must be /v1/chat/completions and completion_window 24h", "type": "invalid_request_error"}}
        lines = [json.loads(line) for line in input_file[1].decode().splitlines() if line.strip()]
        if len(input_file[1]) > self.batch_max_bytes or len(lines) > self.batch_max_requests:
            return 400, {"error": {
                "message": f"a batch takes at most {self.batch_max_requests} requests and {self.batch_max_bytes} bytes; "
                f"this file has {len(lines)} and {len(input_file[1])}", "type": "invalid_request_error",
            }}
        batch_id = f"batch_{uuid.uuid4().hex[:24]}"
        now = int(time.time())
        batch = {
            "id": batch_id, "object": "batch", "endpoint": body["endpoint"], "errors": None, "input_file_id": body["input_file_id"],
            "completion_window": "24h", "status": "validating", "output_file_id": None, "error_file_id": None,
            "created_at": now, "in_progress_at": None, "expires_at": now + 86400, "finalizing_at": None, "completed_at": None,
            "failed_at": None, "expired_at": None, "cancelling_at": None, "cancelled_at": None,
            "request_counts": {"total": len(lines), "completed": 0, "failed": 0}, "metadata": body.get("metadata"),
        }
        with self._lock:
            self.batches[batch_id] = batch
            self._batch_polls[batch_id] = 0
            batch["_lines"], batch["_expire"], self._expire_next = lines, self._expire_next, None
        return 200, batch

    def _poll_batch(self, batch_id: str) -> dict[str, Any] | None:
        batch = self.batches.get(batch_id)
        if batch is None:
            return None
        with self._lock:
            polls = self._batch_polls[batch_id] = self._batch_polls[batch_id] + 1
        if batch["status"] == "validating":
            batch["status"], batch["in_progress_at"] = "in_progress", int(time.time())
        elif batch["status"] == "in_progress" and polls > self.batch_polls_in_progress:
            self._finish_batch(batch)
        return {name: value for name, value in batch.items() if not name.startswith("_")}

    def _finish_batch(self, batch: dict[str, Any]) -> None:
        answered: list[str] = []
        failed: list[str] = []
        expire_after = batch["_expire"]
        for number, line in enumerate(batch["_lines"]):
            entry: dict[str, Any] = {"id": f"batch_req_{uuid.uuid4().hex[:24]}", "custom_id": line["custom_id"], "response": None, "error": None}
            if expire_after is not None and number >= expire_after:
                entry["error"] = {"code": "batch_expired", "message": "This request could not be executed before the completion window expired."}
                failed.append(json.dumps(entry))
                continue
            request = Request(line["url"], {}, line["body"])
            with self._lock:
                self.requests.append(request)
            reply = self._next(request)
            if reply.status != 200:
                error = {"message": reply.error, "type": "server_error" if reply.status >= 500 else "invalid_request_error"}
                entry["response"] = {"status_code": reply.status, "request_id": uuid.uuid4().hex, "body": {"error": error}}
                failed.append(json.dumps(entry))
            else:
                entry["response"] = {"status_code": 200, "request_id": uuid.uuid4().hex, "body": self._completion(request, reply)}
                answered.append(json.dumps(entry))
        now = int(time.time())
        if answered:
            batch["output_file_id"] = self._store_file(("\n".join(answered) + "\n").encode(), "batch_output", "output.jsonl")["id"]
        if failed:
            batch["error_file_id"] = self._store_file(("\n".join(failed) + "\n").encode(), "batch_output", "errors.jsonl")["id"]
        batch["request_counts"] = {"total": len(batch["_lines"]), "completed": len(answered), "failed": len(failed)}
        if expire_after is not None:
            batch["status"], batch["expired_at"] = "expired", now
        else:
            batch["status"], batch["finalizing_at"], batch["completed_at"] = "completed", now, now

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
            elif self.fallback is not None:
                script = self.fallback
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
        if tools and (reply.text is None or reply.finish_reason == "length"):
            message["tool_calls"] = [
                {"id": "call_1", "type": "function", "function": {"name": tools[0]["function"]["name"], "arguments": text}}
            ]
            finish_reason = "tool_calls"
        else:
            message["content"] = text
        if reply.reasoning is not None:
            message["reasoning_content"] = reply.reasoning
        logprobs = None
        if body.get("logprobs") and message["content"] is not None:  # as OpenAI, none for a tool call's arguments
            top = int(body.get("top_logprobs") or 0)
            written = token_logprobs.tokens(reply.answer, reply.alternatives, top, reply.text)
            logprobs = {"content": written, "refusal": None}
        completion = {
            "id": f"chatcmpl-{len(self.requests)}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": body.get("model", "test-model"),
            "choices": [{"index": 0, "message": message, "finish_reason": reply.finish_reason or finish_reason, "logprobs": logprobs}],
        }
        if reply.usage is not None:
            prompt_tokens, completion_tokens = reply.usage
            usage: dict[str, Any] = {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens, "total_tokens": prompt_tokens + completion_tokens}
            if reply.reasoning_tokens:
                usage["completion_tokens_details"] = {"reasoning_tokens": reply.reasoning_tokens}
            if reply.cached_tokens:
                usage["prompt_tokens_details"] = {"cached_tokens": reply.cached_tokens}
            completion["usage"] = usage
        return completion

    def _error(self, reply: Reply) -> dict[str, Any]:
        error = {"message": reply.error, "type": "server_error" if reply.status >= 500 else "invalid_request_error", "param": reply.param}
        return {"error": error}

    def _events(self, request: Request, reply: Reply) -> list[tuple[str | None, dict[str, Any] | str]]:
        """The streamed answer as server-sent events (event name, data): OpenAI's chunks."""
        completion = self._completion(request, reply)
        choice = completion["choices"][0]
        message = choice["message"]
        base = {"id": completion["id"], "object": "chat.completion.chunk", "created": completion["created"], "model": completion["model"]}
        include_usage = bool((request.body.get("stream_options") or {}).get("include_usage"))
        extra = {"usage": None} if include_usage else {}

        def chunk(delta: dict[str, Any], finish_reason: str | None = None, logprobs: Any = None) -> tuple[None, dict[str, Any]]:
            return None, {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason, "logprobs": logprobs}], **extra}

        events = [chunk({"role": "assistant", "content": ""})]
        if message.get("reasoning_content"):
            events += [chunk({"reasoning_content": piece}) for piece in reply.pieces(message["reasoning_content"])]
        calls = message.get("tool_calls") or []
        if calls:
            call = calls[0]
            events.append(chunk({"tool_calls": [{"index": 0, "id": call["id"], "type": "function", "function": {"name": call["function"]["name"], "arguments": ""}}]}))
            events += [chunk({"tool_calls": [{"index": 0, "function": {"arguments": piece}}]}) for piece in reply.pieces(call["function"]["arguments"])]
        elif choice["logprobs"] is not None and (reply.every or reply.stall_after is not None):  # paced: a chunk per token, each with its own
            events += [chunk({"content": token["token"]}, None, {"content": [token], "refusal": None}) for token in choice["logprobs"]["content"]]
        elif choice["logprobs"] is not None:  # all of it in one chunk, as a fast server's one network write holds it
            events.append(chunk({"content": message["content"]}, None, choice["logprobs"]))
        else:
            events += [chunk({"content": piece}) for piece in reply.pieces(message["content"] or "")]
        events.append(chunk({}, choice["finish_reason"]))
        if include_usage and "usage" in completion:
            events.append((None, {**base, "choices": [], "usage": completion["usage"]}))
        return [*events, (None, "[DONE]")]


class _ScriptedHandler(BaseHTTPRequestHandler):
    """One HTTP exchange with a JudgeServer: chat completions answered from its scripts,
    and the Files and Batches routes of the Batch API."""

    protocol_version = "HTTP/1.1"
    server: _Listener

    def log_message(self, *args: Any) -> None:
        pass

    def _send(self, status: int, payload: dict[str, Any], headers: dict[str, str] | None = None) -> None:
        data = json.dumps(payload).encode()
        try:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            for name, value in (headers or {}).items():
                self.send_header(name, value)
            self.end_headers()
            self._answered()
            self.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):
            # The client gave up waiting (its timeout ran out, the run was stopped):
            # nobody is left to answer, and a traceback on stderr would only
            # land in whatever test runs next.
            self.close_connection = True

    def _stream(self, events: list[tuple[str | None, dict[str, Any] | str]], reply: Reply) -> None:
        """Server-sent events in HTTP/1.1 chunks, paced as the reply says; a stalled reply
        stops sending until the server is reset, then closes the connection."""
        judge = self.server.judge
        try:
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Cache-Control", "no-cache")
            self.send_header("Transfer-Encoding", "chunked")
            for header, value in reply.headers.items():
                self.send_header(header, value)
            self.end_headers()
            paced = bool(reply.every) or reply.stall_after is not None
            pending = b""
            for number, (name, data) in enumerate(events):
                if reply.stall_after is not None and number == reply.stall_after + 1:  # the role chunk comes first
                    with judge._lock:
                        release = judge._release
                    release.wait(timeout=300)
                    self.close_connection = True
                    return
                if reply.every and number:
                    time.sleep(reply.every)
                text = (f"event: {name}\n" if name else "") + f"data: {data if isinstance(data, str) else json.dumps(data)}\n\n"
                encoded = text.encode()
                pending += f"{len(encoded):x}\r\n".encode() + encoded + b"\r\n"
                if paced:  # each piece on the wire as it is written
                    if number == len(events) - 1:
                        self._answered()
                    self.wfile.write(pending)
                    self.wfile.flush()
                    pending = b""
            self._answered()
            self.wfile.write(pending + b"0\r\n\r\n")
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True

    def _send_bytes(self, content: bytes) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "application/octet-stream")
        self.send_header("Content-Length", str(len(content)))
        self.end_headers()
        self.wfile.write(content)

    def do_GET(self) -> None:  # noqa: N802
        judge = self.server.judge
        path = self.path.split("?", 1)[0].rstrip("/")
        file_content = re.fullmatch(r".*/files/([\w-]+)/content", path)
        batch = re.fullmatch(r".*/batches/([\w-]+)", path)
        if path.endswith("/models"):
            self._send(200, {"object": "list", "data": [{"id": "test-model", "object": "model", "owned_by": "tests"}]})
        elif file_content and file_content.group(1) in judge.files:
            self._send_bytes(judge.files[file_content.group(1)][1])
        elif batch and (found := judge._poll_batch(batch.group(1))) is not None:
            self._send(200, found)
        else:
            self._send(404, {"error": {"message": "not found", "type": "invalid_request_error"}})

    def do_POST(self) -> None:  # noqa: N802
        raw = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        if self.path.rstrip("/").endswith("/files"):
            self._upload(raw)
        elif self.path.rstrip("/").endswith("/batches"):
            self._send(*self.server.judge._create_batch(json.loads(raw or b"{}")))
        else:
            self._answer(json.loads(raw or b"{}"))

    def _upload(self, raw: bytes) -> None:
        message = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(
            b"Content-Type: " + self.headers.get("Content-Type", "").encode() + b"\r\n\r\n" + raw
        )
        fields = {part.get_param("name", header="content-disposition"): part for part in message.iter_parts()}
        if "file" not in fields or "purpose" not in fields:
            self._send(400, {"error": {"message": "a file and a purpose are required", "type": "invalid_request_error"}})
            return
        purpose = str(fields["purpose"].get_content()).strip()
        content = fields["file"].get_payload(decode=True)
        assert isinstance(content, bytes)
        self._send(200, self.server.judge._store_file(content, purpose, fields["file"].get_filename() or "upload"))

    def _answer(self, body: dict[str, Any]) -> None:
        """A model's request: recorded, counted in flight, and answered as scripted."""
        judge = self.server.judge
        request = Request(self.path, {k.lower(): v for k, v in self.headers.items()}, body, time.monotonic())
        with judge._lock:
            judge.requests.append(request)
            judge.in_flight += 1
            judge.max_in_flight = max(judge.max_in_flight, judge.in_flight)
        self._in_flight = True
        try:
            if not self.path.split("?", 1)[0].endswith(judge.route):
                self._send(404, {"error": {"message": f"no route {self.path}", "type": "invalid_request_error"}})
                return
            reply = judge._next(request)
            if reply.hangs:
                with judge._lock:
                    release = judge._release
                release.wait(timeout=300)
                self.close_connection = True
                return
            if reply.delay or judge.latency:
                time.sleep(reply.delay + judge.latency)
            if judge.refuses_logprobs and ("logprobs" in body or "top_logprobs" in body):
                refused = {"message": "logprobs is not supported by this server", "type": "invalid_request_error", "param": "logprobs"}
                self._send(400, {"error": refused})
            elif reply.status != 200:
                self._send(reply.status, judge._error(reply), reply.headers)
            elif body.get("stream"):
                self._stream(judge._events(request, reply), reply)
            else:
                if reply.every:  # a slow answer not streamed comes when its last piece would
                    time.sleep(reply.every * len(judge._events(request, reply)))
                self._send(200, judge._completion(request, reply), reply.headers)
        finally:
            self._answered()

    def _answered(self) -> None:
        """The request stops counting as in flight just before its last bytes leave: a client
        that has read its answer and sent its next request never finds the first still counted."""
        if getattr(self, "_in_flight", False):
            self._in_flight = False
            with self.server.judge._lock:
                self.server.judge.in_flight -= 1
