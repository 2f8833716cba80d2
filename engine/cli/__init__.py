"""The `scorers` command: a thin client of the public API."""

from __future__ import annotations

from .main import app

__all__ = ["app"]
