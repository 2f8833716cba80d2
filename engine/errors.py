"""The errors a user of the library can catch, each rendering as one readable line."""

from __future__ import annotations

from pathlib import Path


class ScorerError(Exception):
    """Base class for every error this package raises on purpose."""


class ConfigError(ScorerError):
    """A scorer definition, template, schema or option is wrong.

    `path` and `line` point at the place to fix, when known.
    """

    def __init__(self, message: str, path: str | Path | None = None, line: int | None = None) -> None:
        self.message = message
        self.path = str(path) if path is not None else None
        self.line = line
        super().__init__(str(self))

    def __str__(self) -> str:
        if self.path is None:
            return self.message
        where = self.path if self.line is None else f"{self.path}:{self.line}"
        return f"{where}: {self.message}"


class JudgeError(ScorerError):
    """The judge model could not give a valid answer for a step (HTTP error, bad key, or
    answers that kept failing validation after every re-ask)."""

    def __init__(self, message: str, step: str | None = None) -> None:
        self.message = message
        self.step = step
        super().__init__(str(self))

    def __str__(self) -> str:
        return self.message if self.step is None else f"step {self.step!r}: {self.message}"


class RunInputError(ScorerError):
    """The values given to a run do not fit what the scorer needs (e.g. no input for a
    scorer that judges relevance to the input)."""
