"""No API key reaches a log record, whatever the package or its dependencies log, and the
debug traceback of the command line masks it too."""

from __future__ import annotations

from engine.judge import JudgeSettings
import logging
import os
import subprocess
import sys
from pathlib import Path

import pytest
from engine.testing import JudgeServer, Reply

from engine import JudgeError, create_hallucination_scorer, run_evals

KEY = "sk-test-secret-key-123"  # the `judge` fixture's key


def every_text(caplog: pytest.LogCaptureFixture) -> str:
    texts = []
    for record in caplog.records:
        texts.append(record.getMessage())
        if record.exc_text:
            texts.append(record.exc_text)
        if record.exc_info:
            texts.append(logging.Formatter().formatException(record.exc_info))
    return "\n".join(texts)


@pytest.mark.parametrize("status", [401, 500])
def test_no_key_reaches_any_log_record_while_a_run_fails(judge: JudgeServer, caplog: pytest.LogCaptureFixture, status: int) -> None:
    # A server that echoes the key it was given, as some gateways do in their error bodies.
    judge.on("Claims", lambda request: Reply.fail(status, f"rejected {request.headers.get('authorization')}"))
    caplog.set_level(logging.DEBUG)

    with pytest.raises(JudgeError) as raised:
        create_hallucination_scorer(options={"context": ["c"]}, judge=JudgeSettings(retries=0)).run(output="x")
    run_evals([{"output": "x", "context": ["c"]}] * 3, [create_hallucination_scorer(judge=JudgeSettings(retries=0))])

    assert KEY not in str(raised.value)
    logged = every_text(caplog)
    assert "rejected" in logged or "HTTP" in logged  # the failures were logged, keys masked
    assert KEY not in logged


def test_the_debug_traceback_masks_the_key(judge: JudgeServer) -> None:
    judge.on("Claims", lambda request: Reply.fail(500, f"rejected {request.headers.get('authorization')}"))
    scorers = Path(sys.executable).parent / "scorers"
    env = {**os.environ, "SCORERS_DEBUG": "1", "OPENAI_BASE_URL": judge.base_url, "OPENAI_API_KEY": KEY}
    done = subprocess.run(
        [str(scorers), "run", "hallucination", "--output", "x", "--context", "c", "--retries", "0"], capture_output=True, text=True, env=env, timeout=60
    )
    assert done.returncode == 1
    assert "Traceback" in done.stderr and "rejected Bearer ***" in done.stderr
    assert KEY not in done.stdout + done.stderr
