"""The errors a user of the library can catch, each rendering as one readable line.

Catch by kind, as with httpx: `ConfigError` for what an author or a caller wrote wrong,
`DataError` for a data file that cannot be read, `RunInputError` for values that do not
fit a scorer, `StoreError` for a database that fails while in use, and `JudgeError` (with one subclass per way a judge call fails) for the model.
"""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

from .scrub import scrub

#: The fields of one run: an error about one says how to give it for one output and in a data file.
RUN_FIELDS = ("output", "input", "context", "ground_truth", "turns", "expected_trajectory", "metadata")

#: How a Python caller gives the arguments whose advice is more than `name=`; the command
#: line has its own words for the same arguments (its flags), so neither rewrites the other.
_PYTHON_ADVICE: dict[str, str] = {
    "api_key": " (or pass api_key=)",
    "model": " (or pass model='provider/model')",
    "context": (
        ": pass options={'context': [...]} or a get_context callable when creating the scorer, or context=[...] "
        "to run() (a `context` field in each item of a data file)"
    ),
}


def python_advice(parameter: str | None) -> str:
    """What ends a message about `parameter` for a Python caller: how to pass it."""
    if parameter is None:
        return ""
    if parameter in _PYTHON_ADVICE:
        return _PYTHON_ADVICE[parameter]
    if parameter.startswith("options."):
        return f" (options={{{parameter.removeprefix('options.')!r}: ...}})"
    if parameter in RUN_FIELDS:
        return f": pass {parameter}=... to run(), or the `{parameter}` field of each item in a data file"
    return f" ({parameter}=)"


class ScorerError(Exception):
    """Base class for every error this package raises on purpose.

    `parameter` names the argument the error is about (`base_url`, `expected_trajectory`,
    `options.language`), as a Python caller spells it, when it is about one: `str()` ends
    with how to pass it in Python, and the command line ends the same `message` with its flag
    (`described(advice)`). `stops_run` is a property of the kind: a batch run stops at the
    first error of a kind that no other item can get past (a refused key), instead of
    failing every item the same way."""

    stops_run: ClassVar[bool] = False
    parameter: str | None = None
    message: str = ""

    def __init__(self, message: str = "", *, parameter: str | None = None) -> None:
        self.message = scrub(message)  # an error quotes what it is about: never a secret in it
        self.parameter = parameter
        super().__init__(str(self))

    def described(self, advice: str) -> str:
        """The whole line, ending with `advice` on how to give `parameter`."""
        return self.message + advice

    def __str__(self) -> str:
        return self.described(python_advice(self.parameter))


class PlacedError(ScorerError):
    """An error about something written in a file: `path`, `line` and `column` point at the
    place to fix, when known, and lead the message as FILE:LINE:COLUMN."""

    def __init__(
        self, message: str, path: str | Path | None = None, line: int | None = None, column: int | None = None, *, parameter: str | None = None
    ) -> None:
        self.path = str(path) if path is not None else None
        self.line = line
        self.column = column if line is not None else None
        super().__init__(message, parameter=parameter)

    def described(self, advice: str) -> str:
        if self.path is None:
            return self.message + advice
        where = self.path if self.line is None else f"{self.path}:{self.line}"
        if self.column is not None:
            where += f":{self.column}"
        return f"{where}: {self.message}{advice}"


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


class DivisionByZero(ExpressionError):
    """An expression divided by a value that is 0 for this item (the length of an empty
    list): that item's error, not a mistake in the scorer's configuration."""


class ValueRefused(ExpressionError, ValueError):
    """A function of the expression library refused a value it was given (an unknown
    language, an invalid pattern): its message is worded for a person, so it is shown as it
    is rather than beside the expression that called the function."""


class StoreError(ScorerError):
    """A database could not be read or written while in use (a full disk, a lost connection,
    a file another process holds locked): `location` names it, without a password. What was
    kept before the failure stays kept."""

    def __init__(self, message: str, location: str | None = None) -> None:
        self.location = location
        super().__init__(message)

    def described(self, advice: str) -> str:
        text = self.message + advice
        return text if self.location is None else f"{self.location}: {text}"


class BudgetReached(ScorerError):
    """A judge call would have taken the run's spend past its budget (`max_cost`), so it was
    not sent: the run stops starting work and ends resumable, having spent no more than
    the budget (see judge/middleware/budget.py)."""


class JudgeError(ScorerError):
    """The judge model could not give a valid answer for a step. The subclasses say why, so
    that a host can retry later on a rate limit but fix its key on an authentication error.
    Kinds whose `stops_run` is set are failures no other call can mend (a refused key, an
    unknown model, a judge that never answered); `setup` marks those the user fixes in how
    the judge is set up (key, model, mode, address) rather than by waiting."""

    setup: ClassVar[bool] = False

    def __init__(self, message: str, step: str | None = None, *, parameter: str | None = None) -> None:
        self.step = step
        super().__init__(message, parameter=parameter)

    @property
    def fatal(self) -> bool:
        """Whether a batch run stops on this error (a property of its kind)."""
        return self.stops_run

    def described(self, advice: str) -> str:
        return self.message + advice if self.step is None else f"step {self.step!r}: {self.message}{advice}"

    def __str__(self) -> str:
        # Most judge errors are read in a batch's results, by Python callers and the command
        # line alike: their message names environment variables, not arguments.
        return self.described("")


class JudgeAuthenticationError(JudgeError):
    """The provider refused the credentials (HTTP 401 or 403)."""

    stops_run = True
    setup = True


class JudgeRateLimitError(JudgeError):
    """The provider kept answering 429 after every retry."""


class JudgeTimeoutError(JudgeError):
    """The judge did not answer in time."""


class JudgeUnreachableError(JudgeError):
    """No connection to the judge could be made."""


class JudgeNeverReachedError(JudgeUnreachableError):
    """No connection to the judge was ever made in this process: its address is wrong or
    its server is down, so the other items would fail the same way."""

    stops_run = True
    setup = True


class JudgeNeverAnsweredError(JudgeTimeoutError):
    """The judge never answered a call in this process before its timeout."""

    stops_run = True


class JudgeRequestError(JudgeError):
    """The provider refused the request itself (HTTP 400, 404, 422): an unknown model, an
    unsupported response format or parameter. Sending it again cannot succeed."""


class JudgeModelNotFoundError(JudgeRequestError):
    """The provider does not serve the model asked for."""

    stops_run = True
    setup = True


class JudgeModeUnsupportedError(JudgeRequestError):
    """The provider does not support the structured-output mode (response format) asked for."""

    stops_run = True
    setup = True


class JudgeServerError(JudgeError):
    """The provider kept failing (HTTP 5xx) after every retry."""


class InvalidAnswerError(JudgeError):
    """The judge's answers kept failing the step's schema or rules after every re-ask."""


class AnswerCutOffError(JudgeError):
    """The judge's answer stopped at its token limit before it was complete."""


class JudgeCircuitOpenError(JudgeError):
    """Too many calls in a row to one judge failed: further calls are refused for a while
    instead of piling up more failures. On a call refused without being sent, `retry_after`
    says in how many seconds the next probe goes through, for callers that wait rather than
    stop (live scoring); it is None on the failed call that opened the circuit."""

    stops_run = True

    def __init__(self, message: str, step: str | None = None, *, parameter: str | None = None, retry_after: float | None = None) -> None:
        self.retry_after = retry_after
        super().__init__(message, step, parameter=parameter)


__all__ = [
    "AnswerCutOffError",
    "BudgetReached",
    "CatalogErrors",
    "ConfigError",
    "DataError",
    "ExpressionError",
    "DivisionByZero",
    "ValueRefused",
    "InvalidAnswerError",
    "JudgeAuthenticationError",
    "JudgeCircuitOpenError",
    "JudgeError",
    "JudgeModeUnsupportedError",
    "JudgeModelNotFoundError",
    "JudgeNeverAnsweredError",
    "JudgeNeverReachedError",
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
