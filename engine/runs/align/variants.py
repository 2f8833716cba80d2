"""Candidates as catalogs: the scorer being aligned, with worked examples on its judging
step, that step's instructions rewritten, or both, written as YAML and templates a tuner can
read; and the accepted one written beside the original as a variant catalog."""

from __future__ import annotations

import difflib
import json
import shutil
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import jinja2
import yaml

from ...catalog import Catalog, builtin_catalog
from ...catalog.source import CatalogSource
from ...catalog.templates import PromptTemplates
from ...errors import ConfigError
from ...judge.settings import JudgeSettings
from ...scoring import AnyScorer
from ...scoring.plan import ScorerPlan, StepPlan
from ...scoring.steps import StepSources, step_kind, step_kinds

#: The shortest literal text of a template taken for its instructions.
_MIN_INSTRUCTIONS = 40
_TEMPLATE_SYNTAX = ("{{", "{%", "{#")
EXAMPLES_PARTIAL = '{% include "partials/examples.j2" %}\n'


@dataclass(frozen=True)
class Change:
    """What a candidate changes in the scorer: worked examples on the judging step, that
    step's template (`template`, its new source: examples shown, instructions rewritten),
    and the threshold where a score flags an item."""

    examples: tuple[Mapping[str, Any], ...] = ()
    template: str | None = None
    rewrite: str | None = None  # what the instruction rewrite changed, in the optimizer's words
    threshold: float | None = None

    @property
    def changes_scorer(self) -> bool:
        return bool(self.examples) or self.template is not None

    def described(self, step: str) -> list[str]:
        said = []
        if self.examples:
            said.append(f"{len(self.examples)} worked example(s) on step {step}")
        if self.rewrite is not None:
            said.append(f"step {step}'s instructions rewritten ({self.rewrite or 'no summary'})")
        if self.threshold is not None:
            said.append(f"threshold {self.threshold:g}")
        return said


def target_step(plan: ScorerPlan) -> StepPlan:
    """The step align changes: the last step of a kind that takes worked examples (an llm
    step), the one whose answer the score reads."""
    steps = [step for step in plan.steps if step_kind(step.kind).examples_key is not None]
    if not steps:
        kinds = ", ".join(name for name, kind in step_kinds().items() if kind.examples_key is not None)
        raise ConfigError(f"{plan.id} has no step that takes worked examples (kind {kinds}): there is nothing to align")
    return steps[-1]


def instructions_of(source: str) -> tuple[int, int] | None:
    """Where a template's instructions are: its longest run of literal text (no template
    syntax in it), when that is long enough and found once. None otherwise."""
    lexer = jinja2.Environment(trim_blocks=True, lstrip_blocks=True)  # for lexing only: nothing is rendered
    literal = [value for _, kind, value in lexer.lex(source) if kind == "data"]
    longest = max(literal, key=len, default="")
    if len(longest.strip()) < _MIN_INSTRUCTIONS or source.count(longest) != 1:
        return None
    start = source.index(longest)
    return start, start + len(longest)


def with_instructions(source: str, proposal: str) -> str | None:
    """The template with its instructions replaced by `proposal`, kept as plain text (inside a
    raw block when it holds template syntax); None when there is nothing to replace."""
    span = instructions_of(source)
    text = proposal.strip()
    if span is None or not text or "endraw" in text:
        return None
    old = source[span[0] : span[1]]
    lead, trail = old[: len(old) - len(old.lstrip())], old[len(old.rstrip()) :]
    if any(mark in text for mark in _TEMPLATE_SYNTAX):
        text = "{% raw %}" + text + "{% endraw %}"
    return source[: span[0]] + lead + text + trail + source[span[1] :]


def with_examples_shown(source: str) -> str | None:
    """A template that does not show worked examples, showing them after its instructions
    (after their last paragraph break, so a heading such as "Context:" that ends the
    instructions stays with what it heads). None when no instructions are found."""
    span = instructions_of(source)
    if span is None:
        return None
    instructions = source[span[0] : span[1]]
    cut = instructions.rstrip().rfind("\n\n")
    at = span[0] + (cut + 2 if cut >= 0 else len(instructions))
    return source[:at] + EXAMPLES_PARTIAL + source[at:]


def _set_at(step: dict[str, Any], at: tuple[str | int, ...], value: Any) -> None:
    """`value` written at the keys `at` of a step's YAML (a template may sit under a key of a key)."""
    for key in at[:-1]:
        step = step.setdefault(str(key), {})
    step[str(at[-1])] = value


def _plain(value: Any) -> Any:
    """A YAML value as plain lists and dicts (the catalog's own keep where they were written)."""
    return json.loads(json.dumps(value, default=str))


@dataclass
class Workshop:
    """Builds candidate scorers from Changes: each a small catalog extending the scorer of
    the catalog being aligned, written under `folder`."""

    catalog: Catalog
    scorer_id: str
    judge: JudgeSettings
    folder: Path
    _count: int = field(default=0)

    @property
    def plan(self) -> ScorerPlan:
        return self.catalog.plan(self.scorer_id)

    @property
    def step_id(self) -> str:
        return target_step(self.plan).id

    def target_sources(self) -> tuple[StepSources, str]:
        """What the target step is made of as written, and the key of its worked examples."""
        step = next(step for step in self.catalog.definition(self.scorer_id).steps if step.id == self.step_id)
        kind = step_kind(step.kind)
        assert kind.examples_key is not None  # the target is of such a kind
        return kind.sources(step), kind.examples_key

    def step_template(self) -> tuple[str, str]:
        """The target step's template as the catalog has it: its name and its source."""
        written, _ = self.target_sources()
        if not written.templates:
            raise ConfigError(f"{self.scorer_id}.{self.step_id}: the step renders no template: there is nothing to align")
        name = written.templates[0].text
        _, source = PromptTemplates(self.catalog.source.templates_path).source(name)
        return name, source

    def template_name(self) -> str:
        return f"aligned/{self.scorer_id}/{self.step_id}.j2"

    def _own_definition(self) -> bool:
        """Whether the scorer comes from a catalog of the user's (its definition, its defaults
        or its templates may differ from the built-in ones): a variant then carries all of it."""
        return self.catalog.source.path != builtin_catalog().source.path

    def write(self, change: Change, folder: Path, header: str = "", standalone: bool = False) -> Path:
        """The catalog of `change` in `folder`: scorers.yaml, and the changed template. A
        `standalone` catalog holds the scorer's whole definition and the files of its own
        catalog it reads, so that it loads over the built-in catalog alone."""
        written, examples_key = self.target_sources()
        step: dict[str, Any] = {"id": self.step_id}
        if change.examples:
            step[examples_key] = [{key: value for key, value in example.items() if value is not None} for example in change.examples]
        if change.template is not None:
            _set_at(step, written.templates[0].at, self.template_name())
            template = folder / "prompts" / self.template_name()
            template.parent.mkdir(parents=True, exist_ok=True)
            template.write_text(change.template, encoding="utf-8")
        scorer: dict[str, Any] = {"extends": self.scorer_id, "steps": [step]}
        catalog: dict[str, Any] = {"prompts": "prompts"}
        if standalone and self._own_definition():
            scorer = _plain(self.catalog.source.raw_definition(self.scorer_id))
            scorer["steps"] = [{**written, **step} if written.get("id") == self.step_id else written for written in scorer["steps"]]
            if "extends" not in scorer and self.scorer_id in builtin_catalog():
                scorer["replaces"] = True  # the whole definition stands in for the built-in of that id, on purpose
            catalog["schemas"] = "schemas"
            self._copy_own_files(folder)
        catalog["scorers"] = {self.scorer_id: scorer}
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / "scorers.yaml"
        path.write_text(header + yaml.safe_dump(catalog, sort_keys=False, allow_unicode=True, width=120), encoding="utf-8")
        return path

    def _copy_own_files(self, folder: Path) -> None:
        """The templates and schemas the scorer reads from its own catalog's folders."""
        own = {"prompts": self.catalog.source.templates_path[0], "schemas": self.catalog.source.schemas_path[0]}
        for role, file in self.catalog.files(self.scorer_id):
            path = Path(file)
            for kind, root in own.items():
                if role != "definition" and path.is_file() and path.is_relative_to(root):
                    target = folder / kind / path.relative_to(root)
                    target.parent.mkdir(parents=True, exist_ok=True)
                    shutil.copyfile(path, target)

    def scorer(self, change: Change) -> AnyScorer:
        """The candidate as a runnable scorer (its catalog compiled over the one being aligned)."""
        if not change.changes_scorer:
            return self.catalog.create(self.scorer_id, judge=self.judge)
        self._count += 1
        path = self.write(change, self.folder / f"candidate-{self._count}")
        candidate = Catalog(CatalogSource(path, self.catalog.source))
        return candidate.create(self.scorer_id, judge=self.judge)

    def diff(self, change: Change) -> str:
        """What the accepted change does to the scorer, as a unified diff."""
        lines: list[str] = []
        if change.examples:
            examples = yaml.safe_dump({"examples": [dict(example) for example in change.examples]}, sort_keys=False, allow_unicode=True, width=120)
            where = f"{self.scorer_id}.steps.{self.step_id}"
            lines += [f"--- {where}", f"+++ {where} (aligned)", *(f"+        {line}" for line in examples.splitlines())]
        if change.template is not None:
            name, source = self.step_template()
            lines += list(difflib.unified_diff(source.splitlines(), change.template.splitlines(), name, self.template_name(), lineterm=""))
        return "\n".join(lines)
