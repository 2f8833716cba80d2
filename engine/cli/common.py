"""What the commands share: one-line errors, reading `@file` values, `--option` pairs, and
the option declarations every command spells the same way."""

from __future__ import annotations

import json
import logging
import math
import os
import signal
import sqlite3
import sys
import traceback
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from functools import wraps
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Optional, TypeVar, Union, cast, get_args, get_origin

import typer
import yaml
from pydantic import BaseModel, TypeAdapter, ValidationError
from pydantic.fields import FieldInfo

from ..catalog import Catalog, builtin_catalog, load_scorers
from ..errors import (
    CatalogErrors,
    ConfigError,
    DataError,
    RUN_FIELDS,
    JudgeError,
    NotScorable,
    RunInputError,
    ScorerError,
)
from .. import errors as errors_module
from ..formatting import first_line, to_json
from ..scrub import install_log_filter, scrub
from .app import errors, suggestion

if TYPE_CHECKING:  # the runs load when a command runs something, not for `scorers list`
    from ..judge.settings import Aggregation, JudgeSettings
    from ..runs.verdict import Verdict
    from ..store import Store

F = TypeVar("F", bound=Callable[..., Any])

ConfigOption = Annotated[Optional[Path], typer.Option("--config", help="A host catalog YAML (its scorers, prompts, schemas)")]
JsonFlag = Annotated[bool, typer.Option("--json", help="Print JSON for tools")]
# The fields of one run, shared by `run` and `preview`.
def complete_scorer_id(incomplete: str) -> list[str]:
    """Shell completion of scorer ids (of the built-in catalog: a --config given on the same
    line is not known yet when the shell asks)."""
    return [scorer_id for scorer_id in builtin_catalog().ids() if scorer_id.startswith(incomplete)]


ScorerArgument = Annotated[str, typer.Argument(help="Scorer id (see `scorers list`)", autocompletion=complete_scorer_id)]
InputOption = Annotated[Optional[str], typer.Option("--input", help="The user's input; @file reads a file")]
ContextOption = Annotated[Optional[list[str]], typer.Option("--context", help="A context piece; repeat for more; @file reads a file")]
GroundTruthOption = Annotated[Optional[str], typer.Option("--ground-truth", help="The expected answer; @file reads a file")]
MetadataOption = Annotated[
    Optional[str], typer.Option("--metadata", help="The item's metadata (the `metadata` variable): a JSON/YAML mapping, or @file")
]
ScorerOptions = Annotated[Optional[list[str]], typer.Option("--option", help="Scorer option NAME=VALUE; repeat for more")]
TimeoutOption = Annotated[Optional[float], typer.Option("--timeout", help="Seconds a judge may send nothing, before or while it answers, before it is asked again (default 60; SCORERS_TIMEOUT)")]
RetriesOption = Annotated[Optional[int], typer.Option("--retries", min=0, max=10, help="Retries of a failed judge call: 429, 5xx, timeouts (default 2; SCORERS_RETRIES)")]

MaxErrorsOption = Annotated[str, typer.Option("--max-errors", help="Failed items allowed before exit 1: N items or N% of them")]
MinCoverageOption = Annotated[
    float,
    typer.Option("--min-coverage", min=0.0, max=1.0, help="The share of the items each scorer must score (failed and not scorable items are not covered); default 1: every item"),
]

#: Exit statuses of every command (`EXIT_STATUSES` says what each means).
EXIT_FAILED, EXIT_USAGE, EXIT_INTERRUPTED = 1, 2, 130


def exit_status(exc: BaseException) -> int:
    """2 for what the user must fix in how the command is set up (the configuration, the
    arguments, a data file that cannot be used, a value the scorer needs, a key or model the
    judge refuses), 1 for everything else that went wrong."""
    if isinstance(exc, (ConfigError, DataError, RunInputError)):
        return EXIT_USAGE
    if isinstance(exc, JudgeError) and exc.setup:
        return EXIT_USAGE
    return EXIT_FAILED


#: How the command line gives each argument an error can be about (the library's errors say
#: it in Python words); an argument with no flag (`api_key`) gets no advice here.
_FLAG_ADVICE: dict[str, str] = {
    "base_url": " (or --base-url)",
    "model": " (or give --model provider/model)",
    "context": ": give --context (or a `context` field in each item of a data file)",
    "new_run": " (--as)",
}


def cli_advice(parameter: str | None) -> str:
    """What ends a message about `parameter` on the command line: the flag that gives it."""
    if parameter is None or parameter == "api_key":
        return ""
    if parameter in _FLAG_ADVICE:
        return _FLAG_ADVICE[parameter]
    flag = f"--{parameter.replace('_', '-')}"
    if parameter.startswith("options."):
        return f" (--option {parameter.removeprefix('options.')}=...)"
    if parameter in RUN_FIELDS:
        return f": give {flag}, or the `{parameter}` field of each item in a data file"
    return f" ({flag})"


def one_line(exc: BaseException) -> str:
    """An error as the command line shows it: the flag named where the library names a
    Python argument, keys masked; what the engine did not foresee said as such, without the
    names of Python's classes."""
    if isinstance(exc, ScorerError):
        text = exc.described(cli_advice(exc.parameter))
    elif isinstance(exc, sqlite3.Error):
        text = f"a database failed: {first_line(str(exc))} (the results store or the response cache; is its disk full or read-only?)"
    elif isinstance(exc, OSError) and exc.strerror:
        text = f"{exc.filename}: {exc.strerror}" if exc.filename else exc.strerror
    else:
        text = f"an internal error: {first_line(str(exc)) or type(exc).__name__} (please report it; SCORERS_DEBUG=1 shows where it happened)"
    return scrub(text)


@contextmanager
def sigterm_as_interrupt() -> Iterator[None]:
    """SIGTERM (a CI timeout, `kill`, a container stop) ends a run as Ctrl-C does: what is
    finished stays saved and the run is marked interrupted."""
    try:
        previous = signal.signal(signal.SIGTERM, lambda *_: os.kill(os.getpid(), signal.SIGINT))
    except ValueError:  # not the main thread: leave signals alone
        yield
        return
    # A process started in the background by a non-interactive shell inherits SIGINT ignored;
    # SIGTERM is turned into SIGINT above, so SIGINT must interrupt while the run lasts.
    previous_interrupt = signal.getsignal(signal.SIGINT)
    if previous_interrupt == signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)
        if previous_interrupt == signal.SIG_IGN:
            signal.signal(signal.SIGINT, signal.SIG_IGN)


def fixed_in_setup(kind: str | None) -> bool:
    """Whether the error kind that stopped a run is one the user fixes in the setup (key,
    model, mode, address), by its class name as the run records it."""
    found = getattr(errors_module, kind or "", None)
    return isinstance(found, type) and issubclass(found, JudgeError) and found.setup


def existing_store(store: str, *, writing: bool = False) -> Store:
    """The store at `store`, which must exist. A command that only reads it reads a store on
    a read-only disk as it is; one that writes (`writing`) is refused at once, in one line,
    when it cannot write there (before any judge is called)."""
    from ..store import open_store, store_backend  # the store loads when a command uses one, not for `scorers list`

    if not store_backend(store).exists(store):
        raise ConfigError(f"no results store at {store} (`scorers eval` creates it; --store picks another)")
    opened = open_store(store, reading=not writing)
    assert opened is not None
    return opened


def fail_unless(verdict: Verdict) -> None:
    """Exit 1 with the verdict's reasons in one line on stderr, unless the run passed: how
    every command that runs something ends (runs/verdict.py decides)."""
    if not verdict.passed:
        errors.print(f"error: {'; '.join(verdict.reasons)}", markup=False, highlight=False, soft_wrap=True)
        raise typer.Exit(EXIT_FAILED)


def one_line_errors(command: F) -> F:
    """Every failure ends as one line on stderr and a non-zero exit, never a traceback
    (set SCORERS_DEBUG=1 to see it)."""

    @wraps(command)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        # Instructor logs every failed attempt; the command reports the outcome itself.
        logging.getLogger("instructor").addHandler(logging.NullHandler())
        logging.getLogger("instructor").propagate = False
        install_log_filter()
        try:
            with sigterm_as_interrupt():  # every command, not only eval: a CI runner stops any of them so
                return command(*args, **kwargs)
        except (typer.Exit, typer.Abort, SystemExit):
            raise
        except KeyboardInterrupt:
            errors.print("interrupted")
            raise typer.Exit(EXIT_INTERRUPTED) from None
        except BrokenPipeError:  # `scorers ... | head`: the reader has gone, nothing to say
            # Python flushes stdout again at exit; point it at /dev/null so that is silent too.
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            raise typer.Exit(0) from None
        except Exception as exc:
            if os.environ.get("SCORERS_DEBUG"):  # the traceback, with every key masked
                sys.stderr.write(scrub("".join(traceback.format_exception(exc))))
            kind = "not scorable" if isinstance(exc, NotScorable) else "error"
            # A catalog with several mistakes: one line each, as `scorers check` shows them.
            for problem in exc.problems if isinstance(exc, CatalogErrors) else [exc]:
                errors.print(f"{kind}: {one_line(problem)}", markup=False, highlight=False, soft_wrap=True)
            raise typer.Exit(exit_status(exc)) from None

    return wrapper  # type: ignore[return-value]


def catalog_from(config: Path | None) -> Catalog:
    return load_scorers(config) if config is not None else builtin_catalog()


def _decode(data: bytes, where: str) -> str:
    """UTF-8 text (a byte-order mark is dropped), or one line naming where it is not."""
    from ..runs.items import other_encoding  # the runs load when a command reads data, not for `scorers list`

    encoding = other_encoding(data[:64])
    if encoding is not None:
        raise DataError(f"the file is {encoding} text; save it as UTF-8", where)
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise DataError(f"not UTF-8 text: byte 0x{data[exc.start]:02x} at offset {exc.start} (line {line}); save the file as UTF-8", where) from None


def read_value(value: str | None, transcript: bool = False) -> Any:
    """`@path` reads a file (`@-` stdin). With `transcript`, a `.json` file (any case), or
    stdin that holds a JSON list or object, must be chat messages and becomes them."""
    if value is None or not value.startswith("@"):
        return value
    source = value[1:]
    if source == "-":
        where = "<stdin>"
        text = _decode(sys.stdin.buffer.read(), where)
        as_json = transcript and text.lstrip()[:1] in ("[", "{")
    else:
        path = Path(source)
        where = str(path)
        try:
            text = _decode(path.read_bytes(), where)
        except OSError as exc:
            raise ConfigError(f"cannot read {path}: {exc.strerror}") from None
        as_json = transcript and path.suffix.lower() == ".json"
    if not as_json:
        return text
    try:
        loaded = json.loads(text)
    except json.JSONDecodeError as exc:
        raise DataError(f"not valid JSON: {exc.msg}", where, exc.lineno) from None
    if isinstance(loaded, str):
        return loaded
    messages = [loaded] if isinstance(loaded, dict) else loaded if isinstance(loaded, list) else []
    if not messages or not all(isinstance(message, dict) and isinstance(message.get("role"), str) for message in messages):
        raise DataError(
            f"not a chat transcript: expected a list of messages with a `role`, e.g. "
            f'[{{"role": "assistant", "content": "..."}}], found {json.dumps(loaded)[:80]}',
            where,
        )
    return loaded


def _takes_text(annotation: Any) -> bool:
    """Whether an option's type is text (alone or beside None), so its value stays a string."""
    if annotation is str:
        return True
    if get_origin(annotation) is Union or type(annotation).__name__ == "UnionType":
        kinds = [kind for kind in get_args(annotation) if kind is not type(None)]
        return kinds == [str]
    return False


def _accepts_none(annotation: Any) -> bool:
    return (get_origin(annotation) is Union or type(annotation).__name__ == "UnionType") and type(None) in get_args(annotation)


def yaml_problem(exc: yaml.YAMLError) -> str:
    """A YAML parser's complaint in one line: what it found and at which column."""
    if isinstance(exc, yaml.MarkedYAMLError) and exc.problem:
        mark = exc.problem_mark
        return f"{exc.problem}" + (f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else "")
    return str(exc).splitlines()[0]


def yaml_value(raw: str, flag: str) -> Any:
    """A value written on the command line, read as YAML (numbers, lists, true/false)."""
    try:
        value = yaml.safe_load(raw) if raw.strip() else raw
    except yaml.YAMLError:
        value = raw
    if isinstance(value, float) and not math.isfinite(value):
        raise ConfigError(f"{flag}: must be a finite number, got {raw}")
    return value


def _option_value(name: str, raw: str, field: FieldInfo) -> Any:
    """One `--option NAME=VALUE` as the option's schema types it: text stays text
    (`language=no` is "no"), `null` is None only for an option that may be null, anything
    else is read as YAML and checked against the option's type."""
    annotation = field.annotation
    if raw.strip() in ("null", "~"):
        if _accepts_none(annotation):
            return None  # unset: the scorer's behaviour without the option
        default = "" if field.is_required() else f" (its default is {json.dumps(field.default, ensure_ascii=False)})"
        raise ConfigError(f"--option {name}={raw}: {name} cannot be null; give a value or leave the option out{default}")
    value = raw if _takes_text(annotation) else yaml_value(raw, f"--option {name}")
    typed: Any = Annotated[(annotation, *field.metadata)] if field.metadata else annotation  # with its minimum, maximum ...
    try:
        return TypeAdapter(typed).validate_python(value)
    except ValidationError as exc:
        first = exc.errors()[0]
        expected = str(first["msg"]).removeprefix("Input should be ")
        raise ConfigError(f"--option {name}={raw}: expected {expected}") from None


def parse_options(pairs: list[str], options_model: type[BaseModel] | None = None) -> dict[str, Any]:
    """NAME=VALUE pairs. Given a scorer's options model, every command reads `--option`
    through it: an unknown name is refused with a did-you-mean, and each value is typed as
    its option's schema says; without one, values are read as YAML."""
    fields = options_model.model_fields if options_model is not None else None
    options: dict[str, Any] = {}
    for pair in pairs:
        name, separator, raw = pair.partition("=")
        name = name.strip()
        if not separator or not name:
            raise ConfigError(f"--option {pair!r}: expected NAME=VALUE")
        if fields is None:
            options[name] = yaml_value(raw, f"--option {name}")
        elif name in fields:
            options[name] = _option_value(name, raw, fields[name])
        else:
            known = ", ".join(fields) or "none"
            raise ConfigError(f"--option {name}: unknown option{suggestion(name, list(fields))} (known: {known})")
    return options


def scorer_options(pairs: list[str] | None, context: list[str] | None, options_model: type[BaseModel], scale: float | None = None) -> dict[str, Any]:
    """`--option` pairs read against the scorer's options, `--scale` as the `scale` option,
    and the `--context` pieces as the `context` option."""
    options = parse_options(pairs or [], options_model)
    if scale is not None:
        options["scale"] = finite(scale, "--scale")
    if context:
        options["context"] = [str(read_value(piece)) for piece in context]
    return options


def finite(value: float | None, flag: str) -> float | None:
    if value is not None and not math.isfinite(value):
        raise ConfigError(f"{flag} must be a finite number, got {value}")
    return value


ModelOption = Annotated[
    Optional[list[str]],
    typer.Option("--model", help="Judge as provider/model, e.g. openai/gpt-4o-mini; repeat for a jury of judges"),
]
AggregateOption = Annotated[
    Optional[str], typer.Option("--aggregate", help="How a jury's scores combine: mean, median, majority or strictest")
]


def judge_settings(models: list[str] | None, aggregate: str | None = None) -> JudgeSettings:
    """The judge the `--model` flags choose: one judge, or a jury of them."""
    from ..judge.settings import AGGREGATIONS, JudgeSettings

    if aggregate is not None:
        if aggregate not in AGGREGATIONS:
            raise ConfigError(f"--aggregate {aggregate!r}: choose one of {', '.join(AGGREGATIONS)}")
        if not models or len(models) < 2:
            raise ConfigError("--aggregate combines a jury's scores: give --model two or more times")
    if not models:
        return JudgeSettings()
    if len(models) == 1:
        return JudgeSettings(model=models[0])
    return JudgeSettings(models=tuple(models), aggregate=cast("Aggregation | None", aggregate))


#: Which scores get a reason from the judge (engine/scoring/passing.py).
ReasonsOption = Annotated[
    str,
    typer.Option(
        "--reasons",
        help="Which scores the judge explains: always, failing (those that do not pass the threshold), unsure (those its judge was "
        "less than 80% sure of, from its log-probabilities), never, or on-demand "
        "(each when its stored item is opened: scorers results --run NAME --item ID); the score is the same",
    ),
]


def reasons_policy(value: str) -> Any:
    """The `--reasons` value, checked."""
    from ..scoring.passing import REASON_POLICIES

    if value not in REASON_POLICIES:
        raise ConfigError(f"reasons {value!r}: choose one of {', '.join(REASON_POLICIES)}", parameter="reasons")
    return value


#: How many judge calls a batch run keeps in flight (over all its items).
ConcurrencyOption = Annotated[int, typer.Option(min=1, help="Judge calls in flight at once (over all items)")]
NoCacheFlag = Annotated[bool, typer.Option("--no-cache", help="Ask the judge again even for questions answered before")]
MaxCostOption = Annotated[
    Optional[float], typer.Option("--max-cost", min=0.000001, help="Stop (resumably) once the estimated spend reaches this many US dollars")
]


DEFAULT_STORE = str(Path(".scorers") / "results.sqlite")
StoreOption = Annotated[
    str,
    typer.Option(
        "--store",
        envvar="SCORERS_STORE",
        help="The results database: a SQLite file, or postgresql://user:password@host/db (shared by many machines)",
    ),
]


def print_json(value: object) -> None:
    """Machine-readable output for `--json`: indented, non-ASCII text kept readable."""
    print(to_json(value, indent=2))


def read_metadata(value: str | None) -> dict[str, Any] | None:
    """`--metadata`: a mapping written as JSON or YAML, or read from `@file`."""
    if value is None:
        return None
    raw = read_value(value)
    try:
        parsed = yaml.safe_load(raw) if isinstance(raw, str) else raw
    except yaml.YAMLError as exc:
        raise ConfigError(f"--metadata: not JSON or YAML: {yaml_problem(exc)}") from None
    if not isinstance(parsed, dict):
        raise ConfigError("--metadata: expected a mapping, e.g. '{rubric: \"Be brief.\"}'")
    return parsed


def parse_thresholds(pairs: list[str]) -> dict[str, float]:
    thresholds: dict[str, float] = {}
    for pair in pairs:
        name, separator, raw = pair.partition("=")
        try:
            value = float(raw)
        except ValueError:
            separator = ""
        else:
            if not math.isfinite(value):
                raise ConfigError(f"--threshold {pair!r}: the threshold must be a finite number")
            thresholds[name.strip()] = value
        if not separator or not name.strip():
            raise ConfigError(f"--threshold {pair!r}: expected SCORER_ID=NUMBER, e.g. hallucination=0.2")
    return thresholds


def count_items(data: Path) -> int | None:
    """How many items a data file holds (for the progress bar), without keeping them."""
    try:
        if data.suffix.lower() == ".json":
            loaded = json.loads(data.read_text(encoding="utf-8-sig"))
            return len(loaded) if isinstance(loaded, list) else None
        with data.open("rb") as handle:
            return sum(1 for line in handle if line.strip())
    except (OSError, ValueError):
        return None  # the run itself reports what is wrong with the file


def refuse_unknown_labels(data: Path, scorer_ids: list[str], catalog_ids: list[str]) -> None:
    """A label by scorer id (`expected: {hallucination: true}`) that names no scorer, neither
    of the run nor of the catalog, is a typo that would silently leave the item unlabelled:
    refused, with the closest id. (Labels for the catalog's other scorers belong to other runs.)"""
    from ..runs.items import data_source

    known = set(scorer_ids) | set(catalog_ids)
    source = data_source(data)
    assert isinstance(source, Iterable)  # a file's items are read in order
    for line, item in source:
        expected = item.get("expected") if isinstance(item, dict) else None
        if not isinstance(expected, dict):
            continue
        for key in expected:
            if key not in known:
                raise DataError(
                    f"`expected` has a label for {key!r}, which is no scorer{suggestion(str(key), sorted(known))} "
                    f"(this run's: {', '.join(scorer_ids)})",
                    data,
                    line if data.suffix.lower() != ".json" else None,
                )
