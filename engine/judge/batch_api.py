"""The provider's Batch API, as the official `openai` SDK speaks it: the request body of one
step (built as Instructor's JSON-schema mode builds it), the JSONL upload, the batch job,
its status, and the lines of its output and error files.

Like client.py, this module imports the SDK only when a call is made.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel

from ..errors import JudgeError
from ..formatting import first_line
from .config import JudgeConfig
from .protocol import JudgeRequest, TokenUsage
from .sent import request_sent

#: States after which a batch changes no more.
FINISHED = frozenset({"completed", "failed", "expired", "cancelled"})

#: The most one OpenAI Batch API job takes: requests, and bytes of its input file (200 MB).
MAX_JOB_REQUESTS = 50_000
MAX_JOB_BYTES = 200_000_000

#: The outcome code of a request no job can take (see `split_jobs`).
TOO_LARGE = "request_too_large"


def request_body(config: JudgeConfig, request: JudgeRequest) -> dict[str, Any]:
    """The /v1/chat/completions body of one step: the messages, the sampling settings and,
    for a structured answer, the answer model's JSON schema as the response format (as
    Instructor's JSON_SCHEMA mode sends it, so a batch answer is asked exactly like a live one)."""
    sampling = request.sampling.model_dump(exclude={"reasks"})
    body: dict[str, Any] = {"model": config.model_name, "messages": list(request.messages)}
    body.update((name, value) for name, value in sampling.items() if value is not None)
    if request.response_model is not None:
        body["response_format"] = {
            "type": "json_schema",
            "json_schema": {"name": request.response_model.__name__, "schema": request.response_model.model_json_schema()},
        }
    return body


def jsonl_line(line: dict[str, Any]) -> bytes:
    """One request as a line of a batch's input file."""
    return (json.dumps(line, ensure_ascii=False) + "\n").encode()


def split_jobs(
    lines: dict[str, bytes], max_requests: int = MAX_JOB_REQUESTS, max_bytes: int = MAX_JOB_BYTES
) -> tuple[list[dict[str, bytes]], list[str]]:
    """The encoded lines (by custom id) cut, in order, into input files within the limits of
    one job; and the ids of the lines that alone exceed `max_bytes`, which no job can take."""
    jobs: list[dict[str, bytes]] = []
    too_large: list[str] = []
    current: dict[str, bytes] = {}
    size = 0
    for key, line in lines.items():
        if len(line) > max_bytes:
            too_large.append(key)
            continue
        if current and (len(current) >= max_requests or size + len(line) > max_bytes):
            jobs.append(current)
            current, size = {}, 0
        current[key] = line
        size += len(line)
    if current:
        jobs.append(current)
    return jobs, too_large


def custom_id(body: dict[str, Any], attempt: int) -> str:
    """A request's id in a batch: the same question at the same attempt always gets the same
    id, so a restarted run finds its answers in the batches it already paid for."""
    digest = hashlib.sha256(json.dumps([body, attempt], sort_keys=True, ensure_ascii=False).encode()).hexdigest()
    return f"req-{digest[:40]}"


@dataclass(frozen=True)
class LineOutcome:
    """What a batch did with one request: a chat completion, or why there is none."""

    completion: dict[str, Any] | None = None
    status_code: int | None = None
    code: str | None = None
    message: str = ""

    @property
    def retriable(self) -> bool:
        """Worth asking again: the server failed, was rate limited, or the batch ran out of time."""
        if self.code in ("batch_expired", "batch_cancelled", "batch_failed"):
            return True
        return self.status_code is None or self.status_code == 429 or self.status_code >= 500


def usage_of(completion: dict[str, Any]) -> TokenUsage:
    usage = completion.get("usage") or {}
    return TokenUsage(
        prompt_tokens=usage.get("prompt_tokens") or 0,
        completion_tokens=usage.get("completion_tokens") or 0,
        total_tokens=usage.get("total_tokens") or 0,
    )


def parse_lines(text: str) -> dict[str, LineOutcome]:
    """The outcomes in an output or error file, by custom id."""
    outcomes: dict[str, LineOutcome] = {}
    for line in text.splitlines():
        if not line.strip():
            continue
        entry = json.loads(line)
        response, error = entry.get("response"), entry.get("error")
        if response and response.get("status_code") == 200:
            outcomes[entry["custom_id"]] = LineOutcome(completion=response["body"], status_code=200)
            continue
        status = response.get("status_code") if response else None
        body = (response or {}).get("body") or {}
        detail: dict[str, Any] = body["error"] if isinstance(body.get("error"), dict) else error or {}
        outcomes[entry["custom_id"]] = LineOutcome(
            status_code=status, code=detail.get("code"), message=first_line(str(detail.get("message") or "no reason given"))
        )
    return outcomes


class BatchStatus(BaseModel):
    """A batch job as the provider reports it."""

    id: str
    status: str
    total: int = 0
    completed: int = 0
    failed: int = 0
    output_file_id: str | None = None
    error_file_id: str | None = None
    errors: list[str] = []

    @property
    def finished(self) -> bool:
        return self.status in FINISHED


@dataclass
class BatchAPI:
    """Files and batches of one OpenAI-compatible endpoint."""

    config: JudgeConfig
    _sdk: Any = field(default=None, repr=False)
    _key: str = field(default="", repr=False)

    def _client(self) -> Any:
        if self._sdk is None:
            import openai

            base_url, self._key = self.config.endpoint()
            self._sdk = openai.AsyncOpenAI(
                base_url=base_url, api_key=self._key, timeout=self.config.timeout, max_retries=self.config.http_retries
            )
        return self._sdk

    async def submit(self, lines: Sequence[bytes]) -> BatchStatus:
        """Upload the requests (lines of `jsonl_line`) as one file and start a 24-hour batch over them."""
        data = b"".join(lines)
        try:
            uploaded = await self._client().files.create(file=("requests.jsonl", data), purpose="batch")
            batch = await self._client().batches.create(
                input_file_id=uploaded.id, endpoint="/v1/chat/completions", completion_window="24h",
                metadata={"created_by": "llm-scorers"},
            )
        except Exception as exc:
            raise self._error(exc, "submitting a batch") from exc
        request_sent(len(lines))  # each line is a judge call that left, answered or not
        return _status(batch)

    async def status(self, batch_id: str) -> BatchStatus:
        try:
            return _status(await self._client().batches.retrieve(batch_id))
        except Exception as exc:
            raise self._error(exc, f"polling batch {batch_id}") from exc

    async def outcomes(self, status: BatchStatus) -> dict[str, LineOutcome]:
        """Every line of the batch's output and error files, by custom id."""
        outcomes: dict[str, LineOutcome] = {}
        for file_id in (status.output_file_id, status.error_file_id):
            if file_id:
                try:
                    content = await self._client().files.content(file_id)
                except Exception as exc:
                    raise self._error(exc, f"downloading file {file_id} of batch {status.id}") from exc
                outcomes.update(parse_lines(content.text))
        return outcomes

    def _error(self, exc: Exception, doing: str) -> JudgeError:
        import openai

        where = self.config.base_url or "the provider"
        if isinstance(exc, openai.APIStatusError):
            # The SDK's message is "Error code: N - {the whole error object}"; its own message says it.
            said = exc.body.get("message") if isinstance(exc.body, dict) else None
            message = f"the Batch API at {where} answered HTTP {exc.status_code} {doing}: {first_line(str(said or exc.message))}"
        elif isinstance(exc, openai.APIConnectionError):
            message = f"cannot reach the Batch API at {where} {doing}: {first_line(str(exc.__cause__ or exc))}"
        else:
            message = f"{type(exc).__name__} {doing}: {first_line(str(exc))}"
        if self._key and len(self._key) > 3:
            message = message.replace(self._key, "***")
        return JudgeError(message)

    async def close(self) -> None:
        if self._sdk is not None:
            await self._sdk.close()


def _status(batch: Any) -> BatchStatus:
    counts = batch.request_counts
    errors = [first_line(str(error.message)) for error in (batch.errors.data or [])] if batch.errors else []
    return BatchStatus(
        id=batch.id, status=batch.status, total=counts.total if counts else 0, completed=counts.completed if counts else 0,
        failed=counts.failed if counts else 0, output_file_id=batch.output_file_id, error_file_id=batch.error_file_id,
        errors=errors,
    )
