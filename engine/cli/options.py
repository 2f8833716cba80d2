"""Option groups: flags that several commands take together, declared once as a dataclass
whose fields are the flags. `@flags(Group)` adds a group's flags to a command, and the
command receives them as one value instead of a parameter each."""

from __future__ import annotations

import copy
import dataclasses
import functools
import inspect
from collections.abc import Callable
from typing import TYPE_CHECKING, Annotated, Any, ClassVar, Optional, TypeVar, cast, get_args, get_type_hints

import typer
from typer.models import OptionInfo

from ..catalog import Catalog
from ..errors import ConfigError
from ..scoring import AnyScorer
from .common import AggregateOption, ModelOption, RetriesOption, ScorerOptions, TimeoutOption, finite, judge_settings, scorer_options

if TYPE_CHECKING:
    from ..judge import JudgeSettings, StructuredMode

F = TypeVar("F", bound=Callable[..., Any])


def _in_panel(hint: Any, panel: str) -> Any:
    """An Annotated option shown under `panel` in the command's help."""
    kind, *extras = get_args(hint)
    placed = []
    for extra in extras:
        if isinstance(extra, OptionInfo) and extra.rich_help_panel is None:
            extra = copy.copy(extra)
            extra.rich_help_panel = panel
        placed.append(extra)
    return Annotated[(kind, *placed)]


def flags(group: type[Any]) -> Callable[[F], F]:
    """Give the command the fields of `group` (a dataclass of Annotated typer options) as
    flags, shown together in its help under the group's `panel`; the command's parameter
    annotated with `group` receives them as one value."""
    hints = {name: _in_panel(hint, group.panel) for name, hint in get_type_hints(group, include_extras=True).items() if name != "panel"}
    fields = dataclasses.fields(group)

    def decorate(command: F) -> F:
        signature = inspect.signature(command, eval_str=True)  # typer reads the annotations as objects
        (target,) = [name for name, hint in get_type_hints(command).items() if hint is group]
        added = [inspect.Parameter(field.name, inspect.Parameter.KEYWORD_ONLY, annotation=hints[field.name], default=field.default) for field in fields]
        kept = [parameter for parameter in signature.parameters.values() if parameter.name != target]
        clash = {parameter.name for parameter in kept} & {parameter.name for parameter in added}
        assert not clash, f"{command.__name__} declares {clash} beside the group {group.__name__}"

        @functools.wraps(command)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            values = group(**{field.name: kwargs.pop(field.name) for field in fields if field.name in kwargs})
            return command(*args, **kwargs, **{target: values})

        wrapper.__signature__ = signature.replace(parameters=[*kept, *added])  # type: ignore[attr-defined]
        return wrapper  # type: ignore[return-value]

    return decorate


@dataclasses.dataclass(frozen=True)
class JudgeSetup:
    """Which judge (one, a jury, a cascade) a command asks and how it is reached: the flags
    every command that asks a judge takes, built into one `JudgeSettings`."""

    panel: ClassVar[str] = "Judge options"

    model: ModelOption = None
    aggregate: AggregateOption = None
    base_url: Annotated[Optional[str], typer.Option(help="OpenAI-compatible endpoint, e.g. http://localhost:8000/v1")] = None
    mode: Annotated[Optional[str], typer.Option(help="Structured output: json_schema, tools, json or md_json")] = None
    timeout: TimeoutOption = None
    retries: RetriesOption = None
    rpm: Annotated[Optional[float], typer.Option("--rpm", min=0.001, help="Requests per minute to the judge model, at most")] = None
    tpm: Annotated[Optional[float], typer.Option("--tpm", min=1, help="Tokens per minute to the judge model, at most")] = None
    escalate_to: Annotated[
        Optional[str], typer.Option("--escalate-to", help="A stronger judge that scores what --model is unsure of (a cascade)")
    ] = None
    escalate_margin: Annotated[
        Optional[float], typer.Option("--escalate-margin", min=0, help="With --escalate-to: a score this close to the threshold is sent on (default 0.1)")
    ] = None

    def judge(self) -> JudgeSettings:
        """The judge these flags choose, as one value."""
        if self.escalate_margin is not None and self.escalate_to is None:
            raise ConfigError("--escalate-margin goes with --escalate-to (the judge a cascade sends the unsure scores to)")
        return dataclasses.replace(
            judge_settings(self.model, self.aggregate),
            base_url=self.base_url,
            mode=cast("StructuredMode | None", self.mode),
            timeout=finite(self.timeout, "--timeout"),
            retries=self.retries,
            rpm=self.rpm,
            tpm=self.tpm,
            escalate_to=self.escalate_to,
            margin=finite(self.escalate_margin, "--escalate-margin"),
        )

    @property
    def is_jury(self) -> bool:
        return len(self.model or []) > 1

    def resume_flags(self) -> dict[str, object]:
        """The flags that choose this judge again, for the command that continues a run."""
        return {
            "--model": self.model, "--aggregate": self.aggregate, "--base-url": self.base_url, "--mode": self.mode,
            "--timeout": self.timeout, "--retries": self.retries, "--rpm": self.rpm, "--tpm": self.tpm,
            "--escalate-to": self.escalate_to, "--escalate-margin": self.escalate_margin,
        }


@dataclasses.dataclass(frozen=True)
class ScorerSetup(JudgeSetup):
    """How each scorer of a command is set up: its judge (or jury), as `JudgeSetup`, and its options."""

    panel: ClassVar[str] = "Judge and scorer options"

    scale: Annotated[Optional[float], typer.Option(help="Maximum score (option `scale`)")] = None
    option: ScorerOptions = None

    def create(self, catalog: Catalog, scorer_id: str, *, context: list[str] | None = None, offline: bool = False, threshold: float | None = None) -> AnyScorer:
        """The scorer `scorer_id` of `catalog` with these flags (its `--option`s read against
        its own option schema); `threshold` is a jury's or a cascade's pass line."""
        options = scorer_options(self.option, context, catalog.plan(scorer_id).options_model, self.scale)
        return catalog.create(scorer_id, options=options, judge=self.judge().given(threshold=threshold), offline=offline)

    def resume_flags(self) -> dict[str, object]:
        """The flags that set this up again, for the command that continues a run."""
        judge = super().resume_flags()
        cascade = {name: judge.pop(name) for name in ("--escalate-to", "--escalate-margin")}  # in the order they were always printed
        return {**judge, "--scale": self.scale, "--option": self.option or [], **cascade}


@dataclasses.dataclass(frozen=True)
class Selection:
    """Which items of a data file a command scores."""

    panel: ClassVar[str] = "Which items"

    limit: Annotated[Optional[int], typer.Option(min=1, help="Only the first N items")] = None
    sample: Annotated[Optional[int], typer.Option(min=1, help="N items drawn at random (reproducible with --seed)")] = None
    seed: Annotated[int, typer.Option(help="Seed of --sample")] = 0

    def resume_flags(self) -> dict[str, object]:
        return {"--limit": self.limit, "--sample": self.sample, "--seed": self.seed if self.sample is not None else None}
