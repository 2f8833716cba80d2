"""Where YAML becomes scorers: catalog files are read and validated against the spec,
`extends:` is resolved, and every definition is compiled into a frozen plan.

No model is called and nothing is stored here: a catalog can be checked offline.
"""

from __future__ import annotations

import dataclasses
import difflib
import os
from collections.abc import Callable, Mapping, Sequence
from functools import cache, cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..collector import collector_held
from ..errors import CatalogErrors, ConfigError
from . import verified
from .source import CatalogSource, builtin_catalog_path, locate
from .spec import ScorerDefinition

if TYPE_CHECKING:  # compiling, judging and scoring load when a catalog is compiled, not for a remembered `scorers list`
    from ..judge import JudgeConfig, JudgeMiddleware, JudgeSettings, Provider, ResponseCache
    from ..scoring import AnyScorer
    from ..scoring.plan import ScorerPlan
    from .monitors import Monitor
    from .proving import TruthRow
    from .queues import QueueSpec
    from .traces import TracesSpec


class Catalog:
    """The scorers of one catalog file. A host catalog also holds the built-in scorers it
    does not redefine, compiled against its own prompt and schema folders first, so its
    templates shadow the built-in ones everywhere."""

    def __init__(self, source: CatalogSource) -> None:
        self.source = source
        self.path = source.path
        #: The template and schema files the scorers were compiled from.
        self.files_read: set[Path] = set()
        from .compile import compile_catalog

        #: What the checks found while compiling that may not be meant (see `warnings`).
        self._found: list[ConfigError] = []
        self._scorers = compile_catalog(source, self.files_read, warnings=self._found)
        #: The catalog's `monitors:` section, each monitor's scorer checked against its scorers.
        self.monitors: list[Monitor] = catalog_monitors(source, self._scorers)
        #: The catalog's `queues:` section, each queue checked against its scorer's steps.
        self.queues: list[QueueSpec] = catalog_queues(source, self._scorers)
        #: The catalog's `traces:` section: which spans of an app's traces are scored, and how.
        self.traces: TracesSpec | None = catalog_traces(source)

    @cached_property
    def warnings(self) -> list[ConfigError]:
        """What may not be meant in the catalog (found while compiling, by lints.py and by
        bound_lints.py when asked: `scorers check`, the workbench), in file order, without
        those silenced at their line."""
        return all_warnings(self.source, self._scorers, self._found)

    @cached_property
    def bound_notes(self) -> list[ConfigError]:
        """Where the answer schemas of the catalog's own folder get the default bounds (see
        answers.py), in file order: for `scorers check`."""
        from .answers import catalog_bound_notes

        return catalog_bound_notes(self.source, self._scorers)

    @property
    def providers(self) -> dict[str, Provider]:
        """The judge presets this catalog adds to the built-in ones."""
        return dict(self.source.file.providers)

    def ids(self) -> list[str]:
        return list(self._scorers)

    def _entry(self, scorer_id: str) -> tuple[ScorerDefinition, ScorerPlan]:
        if scorer_id not in self._scorers:
            close = difflib.get_close_matches(scorer_id, list(self._scorers), n=1, cutoff=0.6)
            hint = f"did you mean {close[0]!r}? " if close else ""
            raise ConfigError(f"unknown scorer {scorer_id!r}; {hint}known scorers: {', '.join(self._scorers)}")
        return self._scorers[scorer_id]

    def files(self, scorer_id: str) -> list[tuple[str, str]]:
        """What a scorer is made of, as (role, FILE or FILE:LINE): the definition, then each
        step's templates (with those they include) and schema, as this catalog finds them."""
        definition = self.definition(scorer_id)
        source: CatalogSource | None = self.source
        while source is not None and scorer_id not in source.scorers:
            source = source.fallback
        found: list[tuple[str, str]] = []
        if source is not None:
            path, line = locate(source.scorers, [scorer_id])
            found.append(("definition", f"{path or source.path}:{line}" if line else str(path or source.path)))
        from ..scoring.steps import step_kind
        from .templates import PromptTemplates

        templates = PromptTemplates(self.source.templates_path)
        for step in definition.steps:
            kind = step_kind(step.kind)
            written = kind.sources(step)
            names = [template.text for template in written.templates]
            # The step's own system template, else the scorer's, goes with every judge call.
            system = written.system.text if written.system is not None else definition.judge.system if kind.asks_judge else None
            for name in dict.fromkeys([*names, *([system] if system else [])]):
                for referenced in templates.referenced(name):
                    found.append((f"{step.id} template", str(templates.path_of(referenced))))
            if written.schema is not None:
                schema_path = self.source.schema_file(written.schema.text)
                found.append((f"{step.id} schema", str(schema_path) if schema_path else f"{written.schema.text} (missing)"))
        return found

    def truth_table(self, scorer_id: str, threshold: float | None = None) -> list[TruthRow]:
        """What the scorer scores a few answers made from its own schemas (every verdict
        good, every one bad, mixed, none), and whether each passes at `threshold` (else its
        own pass line): empty for a scorer that asks no judge or needs options to run."""
        from .proving import scorer_truth_table

        definition, plan = self._entry(scorer_id)
        return scorer_truth_table(self.source, definition, plan, threshold)

    def plan(self, scorer_id: str) -> ScorerPlan:
        return self._entry(scorer_id)[1]

    def definition(self, scorer_id: str) -> ScorerDefinition:
        return self._entry(scorer_id)[0]

    def __contains__(self, scorer_id: object) -> bool:
        return scorer_id in self._scorers

    def create(
        self,
        scorer_id: str,
        model: str | JudgeConfig | None = None,
        options: Mapping[str, Any] | None = None,
        *,
        judge: JudgeSettings | None = None,
        cache: ResponseCache | str | os.PathLike[str] | bool | None = None,
        middleware: Sequence[JudgeMiddleware] = (),
        offline: bool = False,
    ) -> AnyScorer:
        """A runnable scorer, judged as `judge` says (a JudgeSettings: one judge, a jury or a
        cascade, and how each is reached; `judge.given(...)` sets single settings over a value
        you hold); `model` replaces its judge. A setting left unset falls back to the
        environment (SCORERS_MODEL, SCORERS_MODE, SCORERS_TIMEOUT, SCORERS_RETRIES), then to
        the scorer's `judge:` block and its default model. The judges are put together by
        `scoring/assembly.py`; the catalog only gives the compiled plan.

        `cache` answers repeated questions from a response cache (True: the default file; a
        path; a ResponseCache; off by default here, on by default in run_evals). Every judge
        call passes through `middleware` (a limiter, a tracer ...), the first listed first.

        A scorer without judge steps (`plan.needs_judge` is False) ignores the judge
        settings and middleware: it needs no model and no key, and its runs make no request.

        A definition's `judges:` is its default jury (an explicit `model` replaces it with one
        judge), its `cascade:` its default cascade (scoring/cascade.py).

        `offline`: the scorer is only replayed without a judge (an estimate): a missing key
        is not an error until a call is made."""
        from ..judge import JudgeSettings
        from ..scoring import Scorer
        from ..scoring.assembly import assemble
        from .confidence_maps import read_map

        settings = (judge or JudgeSettings()).given(model)
        made = assemble(self.plan(scorer_id), settings, options, providers=self.providers, middleware=middleware, cache=cache, check_key=not offline)
        if isinstance(made, Scorer) and made.plan.needs_judge:
            made.confidence_map = read_map(self.maps_folder, scorer_id, made.fingerprint)
        return made

    @property
    def maps_folder(self) -> Path:
        """Where the confidence maps of this catalog's scorers are kept (confidence_maps.py)."""
        from .confidence_maps import maps_folder

        return maps_folder(None if self.source.path == builtin_catalog_path().resolve() else self.source.path)


def all_warnings(source: CatalogSource, compiled: Mapping[str, tuple[ScorerDefinition, ScorerPlan]], found: Sequence[ConfigError] = ()) -> list[ConfigError]:
    """The warnings of the catalog (lints.py's, with those `found` while compiling), of its
    sections beside the scorers (section_warnings.py) and of the answer fields of its own
    scorers left to a default bound (bound_lints.py), each once, in file order."""
    from .bound_lints import copied_fields_capped, unbounded_answer_fields
    from .lints import catalog_warnings
    from .compile import ScorerCompiler
    from .proving import prove_catalog
    from .section_warnings import section_warnings

    hidden = section_warnings(source, lambda scorer_id: _plan_of(scorer_id, source, compiled))
    proved = prove_catalog(source, compiled, ScorerCompiler(source).compile)
    return catalog_warnings(source, compiled, [*found, *unbounded_answer_fields(source, compiled), *copied_fields_capped(source, compiled), *proved, *hidden])


def _plan_of(scorer_id: str, source: CatalogSource, compiled: Mapping[str, tuple[ScorerDefinition, ScorerPlan]]) -> ScorerPlan | None:
    """A scorer's plan: the catalog's own, else the built-in one a host catalog offers."""
    if scorer_id in compiled:
        return compiled[scorer_id][1]
    if source.fallback is not None and scorer_id in source.fallback.scorers:
        return builtin_catalog().plan(scorer_id)
    return None


@cache
def _builtin_source() -> CatalogSource:
    return CatalogSource(builtin_catalog_path(), None)


@cache
def builtin_catalog() -> Catalog:
    """The catalog shipped with the package (loaded once)."""
    return Catalog(_builtin_source())


def catalog_file(path: str | os.PathLike[str]) -> Path:
    """A catalog's YAML file: the path itself, or the one catalog file of a folder
    (`catalog.yaml` or `scorers.yaml`)."""
    path = Path(path)
    if path.is_dir():
        for name in ("catalog.yaml", "scorers.yaml", "catalog.yml", "scorers.yml"):
            if (path / name).is_file():
                return path / name
        raise ConfigError("no catalog here: a folder given as a catalog holds a catalog.yaml or scorers.yaml", path)
    return path


def catalog_monitors(source: CatalogSource, compiled: Mapping[str, tuple[ScorerDefinition, ScorerPlan]] | None = None) -> list[Monitor]:
    """The monitors a catalog file declares, checked against the scorers it offers; with the
    `compiled` scorers, a condition on their scores none can meet is refused too (the
    built-in scorers' are the built-in catalog's, when a monitor watches one)."""
    if source.data.get("monitors") is None:
        return []  # without loading monitors.py
    known = set(source.scorers) | (set(source.fallback.scorers) if source.fallback is not None else set())
    from .monitors import monitors_in

    if compiled is None:
        return monitors_in(source.data, source.path, known)
    plans = {scorer_id: plan for scorer_id, (_, plan) in compiled.items()}
    watched = source.data.get("monitors")
    names = {str(monitor.get("scorer", "")).split("@", 1)[0] for monitor in watched.values() if isinstance(monitor, Mapping)} if isinstance(watched, Mapping) else set()
    if source.fallback is not None and (names - set(plans)) & set(source.fallback.scorers):
        plans = {**{scorer_id: builtin_catalog().plan(scorer_id) for scorer_id in builtin_catalog().ids()}, **plans}
    ranges = {scorer_id: found for scorer_id, plan in plans.items() if scorer_id in names and (found := plan.scores_range(plan.options_model())) is not None}
    directions = {scorer_id: plan.direction for scorer_id, plan in plans.items() if scorer_id in names}
    return monitors_in(source.data, source.path, known, ranges, directions)


def answer_fields(plan: ScorerPlan) -> dict[str, list[str] | None]:
    """Each step of a scorer and the fields of its answer (None for a step whose answer has
    no fields: text, or a computed value)."""
    return {step.id: list(step.answer_model.model_fields) if step.answer_model is not None else None for step in plan.steps}


def catalog_queues(source: CatalogSource, compiled: Mapping[str, tuple[ScorerDefinition, ScorerPlan]] | None = None) -> list[QueueSpec]:
    """The review queues a catalog file declares, checked against the scorers it offers; with
    the `compiled` scorers, a step a queue labels or highlights must be one of its scorer's,
    and the answer field it labels one of that step's answer."""
    if source.data.get("queues") is None:
        return []  # without loading queues.py
    from .queues import queues_in

    known = set(source.scorers) | (set(source.fallback.scorers) if source.fallback is not None else set())
    if compiled is None:
        return queues_in(source.data, source.path, known)
    plans = {scorer_id: plan for scorer_id, (_, plan) in compiled.items()}
    written = source.data.get("queues")
    named = {str(queue.get("scorer", "")) for queue in written.values() if isinstance(queue, Mapping)} if isinstance(written, Mapping) else set()
    if source.fallback is not None and (named - set(plans)) & set(source.fallback.scorers):
        # A queue of a built-in scorer is held to that scorer's steps and answers too.
        plans = {**{scorer_id: builtin_catalog().plan(scorer_id) for scorer_id in builtin_catalog().ids()}, **plans}
    steps = {scorer_id: answer_fields(plan) for scorer_id, plan in plans.items()}
    answers = {scorer_id: {step.id: step.answer_model for step in plan.steps} for scorer_id, plan in plans.items()}
    return queues_in(source.data, source.path, known, steps, answers)


def catalog_traces(source: CatalogSource) -> TracesSpec | None:
    """The `traces:` section of a catalog file, its scorers checked against those it offers."""
    if source.data.get("traces") is None:
        return None  # without loading traces.py
    from .traces import traces_in

    known = set(source.scorers) | (set(source.fallback.scorers) if source.fallback is not None else set())
    return traces_in(source.data, source.path, known)


def summary(catalog: Catalog) -> list[dict[str, Any]]:
    """One row per scorer, as `scorers list` shows them."""
    return [_row(catalog.definition(scorer_id), catalog.plan(scorer_id)) for scorer_id in catalog.ids()]


def _row(definition: ScorerDefinition, plan: ScorerPlan | None = None) -> dict[str, Any]:
    """A scorer's row, from its plan, or from its definition alone (whose step kinds say whether a judge is asked)."""
    from ..scoring.steps import step_kind

    judge = plan.needs_judge if plan is not None else any(step_kind(step.kind).asks_judge for step in definition.steps)
    return {
        "id": definition.id, "name": definition.name, "direction": definition.direction, "requires": list(definition.requires),
        "judge": judge, "description": definition.description,
    }


def listed_summary(path: str | os.PathLike[str] | None) -> list[dict[str, Any]]:
    """The `summary` of a catalog (the built-in one when `path` is None) as `scorers list`
    shows it: remembered when the catalog was found clean and nothing it depends on has
    changed since (or, for the built-in catalog, from the proof the package ships of it: see
    verified.py), else read from its definitions as the spec validates
    them, without compiling them: a mistake there (YAML, a key, a value, `extends`) is raised
    as loading the catalog raises it; one in a template, a schema or an expression is for
    `scorers check`, `run` and `load_scorers` to find. Nothing is remembered here."""
    own = builtin_catalog_path() if path is None else catalog_file(path)
    builtin = own.resolve() == builtin_catalog_path().resolve()
    found = verified.recall(own, builtin)
    if found is not None:
        return found
    from .definitions import definitions

    return [_row(definition) for definition in definitions(CatalogSource(own, None if builtin else _builtin_source())).values()]


def checked_summary(path: str | os.PathLike[str] | None) -> list[dict[str, Any]]:
    """The `summary` of a catalog (the built-in one when `path` is None) that compiles clean:
    remembered from an earlier compilation when nothing it depends on has changed since (see
    verified.py), else compiled now, raising every problem as loading the catalog does."""
    return _checked(path)[0]


@collector_held()  # reading, compiling and linting build what stays alive until the end
def _checked(path: str | os.PathLike[str] | None) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """`checked_summary`, and what `scorers check` says of the catalog beside it: how many
    scorers the file defines (`own`) and its `warnings` (FILE, LINE, COLUMN, message)."""
    own = builtin_catalog_path() if path is None else catalog_file(path)
    builtin = own.resolve() == builtin_catalog_path().resolve()
    found = verified.recall_with_notes(own, builtin)
    if found is not None:
        return found
    catalogs = [own] if builtin else [own, builtin_catalog_path()]
    before = verified.state(catalogs, [])
    source = CatalogSource(own, None if builtin else _builtin_source())
    # Its monitors and queues too (a clean catalog remembered below had clean ones); what they
    # name of the scorers is checked once these compile, and every problem is told at once.
    early = _problems(catalog_monitors, source) + _problems(catalog_queues, source)
    from .definitions import unique_problems

    try:
        checked = _compiled_and_checked(own, catalogs, source, builtin, before)
    except ConfigError as exc:
        raise CatalogErrors(unique_problems([*_problems_in(exc), *early])) from None
    if early:
        raise CatalogErrors(unique_problems(early))
    return checked


def _problems(check: Callable[[CatalogSource], object], source: CatalogSource) -> list[ConfigError]:
    try:
        check(source)
    except ConfigError as exc:
        return _problems_in(exc)
    return []


def _problems_in(exc: ConfigError) -> list[ConfigError]:
    return list(exc.problems) if isinstance(exc, CatalogErrors) else [exc]


def _compiled_and_checked(
    own: Path, catalogs: list[Path], source: CatalogSource, builtin: bool, before: Any
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """`_checked` once the catalog file is read: its scorers compiled, their monitors and
    queues checked against them."""
    folders = [*source.templates_path, *source.schemas_path]
    compiled_state = verified.state(catalogs, folders)
    rows, notes, files_read = _compiled(source, builtin)
    # Recorded only when what was compiled is still what is on disk, all of it counted in the state.
    if verified.inside(files_read, folders) and verified.state(catalogs, []) == before and verified.state(catalogs, folders) == compiled_state:
        verified.remember(own, catalogs, folders, compiled_state, rows, notes)
    return rows, notes


def _compiled(source: CatalogSource, builtin: bool) -> tuple[list[dict[str, Any]], dict[str, Any], set[Path]]:
    """The rows and notes of a catalog compiled now (its inherited built-in scorers recalled
    when they need not be compiled again), and every template and schema file it read."""
    inherited = None if builtin else _inherited_unchanged(source)
    if inherited is None:
        catalog = Catalog(source)
        rows, files_read, warnings = summary(catalog), catalog.files_read, catalog.warnings
        bounds = [] if builtin else catalog.bound_notes  # the built-in schemas' bounds are the engine's own choice
    else:
        files_read = set()
        from .answers import catalog_bound_notes
        from .compile import compile_catalog

        compiling: list[ConfigError] = []
        own_scorers = compile_catalog(source, files_read, with_inherited=False, warnings=compiling)
        catalog_monitors(source, own_scorers)
        catalog_queues(source, own_scorers)
        warnings, bounds = all_warnings(source, own_scorers, compiling), catalog_bound_notes(source, own_scorers)
        rows = [_row(*entry) for entry in own_scorers.values()] + [row for row in inherited if row["id"] not in source.scorers]
    from .warning import CatalogWarning

    proved_wrong = [found for found in warnings if not isinstance(found, CatalogWarning)]
    if proved_wrong:  # what running the scorers on answers from their schemas proves wrong
        raise CatalogErrors(proved_wrong)
    notes = {
        "own": len(source.scorers),
        "warnings": [[warning.path, warning.line, warning.column, warning.message, getattr(warning, "code", None)] for warning in warnings],
        "bounds": [[note.path, note.line, note.column, note.message] for note in bounds],
    }
    return rows, notes, files_read


def proved_builtin_catalog() -> dict[str, Any]:
    """The proof of the built-in catalog that the package ships (see verified.py): the
    catalog compiled and proved now, whatever is remembered or shipped; raises its problems
    as loading it does, and ValueError when its files changed while it was compiled."""
    own = builtin_catalog_path()
    source = CatalogSource(own, None)
    problems = _problems(catalog_monitors, source) + _problems(catalog_queues, source)
    if problems:
        raise CatalogErrors(problems)
    folders = [*source.templates_path, *source.schemas_path]
    before = verified.proof(own, folders, [], {})["state"]
    rows, notes, files_read = _compiled(source, builtin=True)
    found = verified.proof(own, folders, rows, notes)
    if not verified.inside(files_read, folders) or found["state"] != before:
        raise ValueError(f"{own}: its files changed while it was compiled, or it read a file outside its folders")
    return found


def _inherited_unchanged(source: CatalogSource) -> list[dict[str, Any]] | None:
    """The rows of the built-in scorers a host catalog offers, when compiling them there
    would do exactly what compiling the built-in catalog did: that catalog was found clean
    and nothing it depends on has changed since, and no file of the host's prompt or schema
    folders shadows one of its files (a host catalog's `defaults:` apply to its own scorers
    only). None when they must be compiled again."""
    assert source.fallback is not None
    rows = verified.recall(builtin_catalog_path(), builtin=True)
    if rows is None:
        return None
    pairs = zip([source.templates_path[0], source.schemas_path[0]], [source.fallback.templates_path[0], source.fallback.schemas_path[0]])
    for own_folder, builtin_folder in pairs:
        if own_folder.resolve() == builtin_folder.resolve():
            return None
        for root, _, files in os.walk(own_folder):
            if any((builtin_folder / Path(root).relative_to(own_folder) / name).exists() for name in files):
                return None
    return rows


@dataclasses.dataclass(frozen=True)
class CatalogCheck:
    """What `scorers check` finds in one catalog file: its problems; when it has none, how
    many scorers it offers (`scorers`, the built-in ones it does not redefine included) and
    defines itself (`own`); its warnings, which do not stop it from loading; and where its
    own answer schemas get the default bounds."""

    problems: list[ConfigError]
    scorers: int = 0
    own: int = 0
    warnings: list[ConfigError] = dataclasses.field(default_factory=list)
    #: Where its own answer schemas are held to the default bounds: notes, not warnings.
    bounds: list[ConfigError] = dataclasses.field(default_factory=list)


def inspect_catalog(path: str | os.PathLike[str] | None) -> CatalogCheck:
    """Checks a catalog (the built-in one when `path` is None). Nothing is called and no key
    is needed."""
    try:
        rows, notes = _checked(path)
    except CatalogErrors as exc:
        return CatalogCheck(list(exc.problems))
    except ConfigError as exc:
        return CatalogCheck([exc])
    from .warning import CatalogWarning

    warnings: list[ConfigError] = [CatalogWarning(message, file, line, column, code=code) for file, line, column, message, code in notes.get("warnings", [])]
    bounds = [ConfigError(message, file, line, column) for file, line, column, message in notes.get("bounds", [])]
    return CatalogCheck([], len(rows), int(notes.get("own", len(rows))), warnings, bounds)


def check_catalog(path: str | os.PathLike[str] | None) -> tuple[list[ConfigError], int]:
    """Every problem of a catalog (the built-in one when `path` is None), and how many
    scorers it offers when it has none. Nothing is called and no key is needed."""
    found = inspect_catalog(path)
    return found.problems, found.scorers


def load_scorers(path: str | os.PathLike[str]) -> Catalog:
    """A host application's catalog: its own scorers, prompts and schemas (relative to the
    YAML file), which shadow the built-in ones of the same name."""
    return Catalog(CatalogSource(catalog_file(path), _builtin_source()))


__all__ = ["Catalog", "CatalogCheck", "ScorerDefinition", "builtin_catalog", "builtin_catalog_path", "catalog_file", "check_catalog", "checked_summary", "inspect_catalog", "listed_summary", "load_scorers", "proved_builtin_catalog", "summary"]
