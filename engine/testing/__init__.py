"""Offline testing of scorers: scripted judge servers on 127.0.0.1 (one speaking the OpenAI
chat-completions API, one Anthropic's Messages API), and `assert_score` for tests."""

from __future__ import annotations

from .anthropic_server import AnthropicServer
from .assertions import assert_score
from .judge_server import JudgeServer
from .looping import looping
from .scripts import Reply, Request

__all__ = ["AnthropicServer", "JudgeServer", "Reply", "Request", "assert_score", "looping"]
