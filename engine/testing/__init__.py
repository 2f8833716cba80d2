"""Offline testing of scorers: a scripted OpenAI-compatible judge server on 127.0.0.1."""

from __future__ import annotations

from .judge_server import JudgeServer, Reply, Request

__all__ = ["JudgeServer", "Reply", "Request"]
