"""The errors a user of the library can catch, each rendering as one readable line.

Catch by kind, as with httpx: `ConfigError` for what an author or a caller wrote wrong,
`DataError` for a data file that cannot be read, `RunInputError` for values that do not
fit a scorer, `StoreError` for a database that fails while in use, and `JudgeError` (with one subclass per way a judge call fails) for the model.
"""

from __future__ import annotations

from pathlib import Path


class ScorerError(Exception):
    """Base class for every error this package raises on purpose."""


class PlacedError(ScorerError):
    """An error about something written in a file: `path`, `line` and `column` point at the
    place to fix, when known, and lead the message as FILE:LINE:COLUMN."""

    def __init__(self, message: str, path: str | Path | None = None, line: int | None = None, column: int | None = None) -> None:
        self.message = message
        self.path = str(path) if path is not None else None
        self.line = line
        self.column = column if line is not None else None
        super().__init__(str(self))

    def __str__(self) -> str:
        if self.path is None:
            return self.message
        where = self.path if self.line is None else f"{self.path}:{self.line}"
        if self.column is not None:
            where += f":{self.column}"
        return f"{where}: {self.message}"


class ConfigError(PlacedError):
    """A scorer definition, template, schema or option is wrong."""


class CatalogErrors(ConfigError):
    """Every problem found in a catalog, gathered in one pass (a `scorers check` lists them
    all); the message is the first problem, followed by how many more there are."""

    def __init__(self, problems: list[ConfigError]) -> None:
        self.problems = problems
        first = problems[0]
        more = len(problems) - 1
        suffix = f" (and {more} more problem{'s' if more > 1 else ''}; `scorers check` lists them all)" if more else ""
        super().__init__(first.message + suffix, first.path, first.line, first.column)


class DataError(PlacedError):
    """A data file (items to score, an output read from a file) cannot be read as such."""


class RunInputError(ScorerError):
    """The values given to a run do not fit what the scorer needs (e.g. no input for a
    scorer that judges relevance to the input)."""


class NotScorable(RunInputError):
    """The scorer cannot judge this item at all (no output, no context where one is
    needed): not a failure of the judge, and not a score. A batch run records the reason
    and leaves the item out of the means."""


class ExpressionError(ScorerError):
    """An author's expression failed while being evaluated (a missing field, a wrong type)."""


class StoreError(ScorerError):
    """A database could not be read or written while in use (a full disk, a lost connection,
    a file another process holds locked): `location` names it, without a password. What was
    kept before the failure stays kept."""

    def __init__(self, message: str, location: str | None = None) -> None:
        self.message = message
        self.location = location
        super().__init__(str(self))

    def __str__(self) -> str:
        return self.message if self.location is None else f"{self.location}: {self.message}"


class JudgeError(ScorerError):
    """The judge model could not give a valid answer for a step. The subclasses say why, so
    that a host can retry later on a rate limit but fix its key on an authentication error."""

    def __init__(self, message: str, step: str | None = None, *, fatal: bool = False) -> None:
        self.message = message
        self.step = step
        #: Set when retrying other calls cannot help (a refused key, an unknown model, a
        #: judge that never answered): a batch run stops instead of failing every item.
        self.fatal = fatal
        super().__init__(str(self))

    def __str__(self) -> str:
        return self.message if self.step is None else f"step {self.step!r}: {self.message}"


class JudgeAuthenticationError(JudgeError):
    """The provider refused the credentials (HTTP 401 or 403)."""


class JudgeRateLimitError(JudgeError):
    """The provider kept answering 429 after every retry."""


class JudgeTimeoutError(JudgeError):
    """The judge did not answer in time."""


class JudgeUnreachableError(JudgeError):
    """No connection to the judge could be made."""


class JudgeRequestError(JudgeError):
    """The provider refused the request itself (HTTP 400, 404, 422): an unknown model, an
    unsupported response format or parameter. Sending it again cannot succeed."""


class JudgeServerError(JudgeError):
    """The provider kept failing (HTTP 5xx) after every retry."""


class InvalidAnswerError(JudgeError):
    """The judge's answers kept failing the step's schema or rules after every re-ask."""


class AnswerCutOffError(JudgeError):
    """The judge's answer stopped at its token limit before it was complete."""


class JudgeCircuitOpenError(JudgeError):
    """Too many calls in a row to one judge failed: further calls are refused for a while
    instead of piling up more failures."""


__all__ = [
    "AnswerCutOffError",
    "CatalogErrors",
    "ConfigError",
    "DataError",
    "ExpressionError",
    "InvalidAnswerError",
    "JudgeAuthenticationError",
    "JudgeCircuitOpenError",
    "JudgeError",
    "JudgeRateLimitError",
    "JudgeRequestError",
    "JudgeServerError",
    "JudgeTimeoutError",
    "JudgeUnreachableError",
    "NotScorable",
    "PlacedError",
    "RunInputError",
    "ScorerError",
    "StoreError",
]
