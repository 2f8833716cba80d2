"""What the page asks of the workbench, one method per route: the scorers and data sets to
pick from, a scorer's files, the problems and the prompts of a draft, a run and its figures,
the saved versions, the diff and the save, the calibrated threshold. Each method takes the
request's JSON and returns JSON; the work is done by the engine's own API (the catalog,
`preview`, `arun_evals`, the store, `runs.measures.stats`, `calibration`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..catalog import Catalog, builtin_catalog
from ..errors import ConfigError
from ..runs.stored.reading import existing_run, labelled_records, run_records
from ..runs.tuning import calibration
from ..scoring import AnyScorer
from ..scoring.preview import preview
from .aligned import accept_edits, aligned_variants
from .datasets import DataItem, example_sets, read_items, stratified_sample
from .runner import Runner, Sample
from .thresholds import set_threshold
from .workspace import NEW_CATALOG, EditorFile, Workspace


def _text(body: dict[str, Any], name: str) -> str:
    value = body.get(name)
    if not isinstance(value, str) or not value:
        raise ConfigError(f"{name}: missing")
    return value


def _number(body: dict[str, Any], name: str, default: int, low: int = 0) -> int:
    value = body.get(name, default)
    try:
        number = int(value)
    except (TypeError, ValueError):
        raise ConfigError(f"{name}: expected a whole number, got {value!r}") from None
    if number < low:
        raise ConfigError(f"{name}: must be at least {low}, got {number}")
    return number


def _edits(body: dict[str, Any]) -> dict[str, str]:
    files = body.get("files") or {}
    if not isinstance(files, dict) or not all(isinstance(key, str) and isinstance(value, str) for key, value in files.items()):
        raise ConfigError("files: expected a mapping of catalog paths to their text")
    return files


class Session:
    """One workbench: its catalog folder, the data sets it offers, and its runner."""

    def __init__(self, catalog: Path, runner: Runner, data: Path | None = None, model: str | None = None) -> None:
        self.workspace = Workspace(catalog)
        self.runner = runner
        self.data = data
        self.model = model
        self._items: dict[str, list[DataItem]] = {}
        #: Per scorer, the runs started here in order: before anything is saved, a run is
        #: compared with the one before it.
        self.history: dict[str, list[str]] = {}

    def close(self) -> None:
        self.workspace.close()

    # ---------------------------------------------------------------------- helpers

    def _catalog(self, edits: dict[str, str]) -> tuple[Catalog, Path]:
        draft = self.workspace.draft(edits)
        return self.workspace.load(draft), draft

    def _data_items(self, data: str) -> list[DataItem]:
        key = str(Path(data).resolve())
        if key not in self._items:
            self._items[key] = read_items(Path(data))
        return self._items[key]

    def _scorer(self, catalog: Catalog, scorer_id: str) -> AnyScorer:
        return catalog.create(scorer_id, model=self.model)

    def _sample(self, body: dict[str, Any], scorer_id: str) -> Sample:
        data = _text(body, "data")
        size, seed = _number(body, "size", 20, 1), _number(body, "seed", 0)
        return Sample(data, size, seed, stratified_sample(self._data_items(data), scorer_id, size, seed))

    def _last_version(self, scorer_id: str) -> dict[str, Any] | None:
        versions = self.runner.versions(scorer_id)
        return versions[0] if versions else None

    # ----------------------------------------------------------------------- routes

    def state(self, body: dict[str, Any]) -> dict[str, Any]:
        """The catalog folder, its scorers (yours first) and the data sets to offer. A catalog
        with problems still opens (on the built-in scorers and the ids it names), to be fixed."""
        try:
            catalog, _ = self._catalog({})
        except ConfigError:
            catalog = None
        own = set(catalog.source.scorers) if catalog is not None else set(self.workspace.written_ids())
        ids = catalog.ids() if catalog is not None else [*own, *(scorer_id for scorer_id in builtin_catalog().ids() if scorer_id not in own)]
        scorers = [{"id": scorer_id, "origin": "yours" if scorer_id in own else "built-in"} for scorer_id in sorted(ids, key=lambda scorer_id: (scorer_id not in own, scorer_id))]
        return {
            "catalog": self.workspace.shown(self.workspace.catalog_file), "folder": str(self.workspace.folder),
            "scorers": scorers, "datasets": example_sets(self.data), "busy": self.runner.busy,
        }  # fmt: skip

    def scorer(self, body: dict[str, Any]) -> dict[str, Any]:
        """A scorer's files (with edits in place) and where each part of it comes from."""
        scorer_id = _text(body, "scorer")
        edits = _edits(body)
        draft = self.workspace.draft(edits)
        try:
            catalog = self.workspace.load(draft)
        except ConfigError:  # the catalog file alone, to fix what `check` reports
            text = draft.read_text(encoding="utf-8")
            shown = self.workspace.shown(self.workspace.catalog_file)
            only = EditorFile(self.workspace.catalog_name, "catalog", "yours", shown, text, "yaml")
            return {"scorer": scorer_id, "files": [only.as_json()], "yours": scorer_id in self.workspace.written_ids(), "origins": [], "last_version": self._last_version(scorer_id)}
        catalog.definition(scorer_id)  # an unknown id: one line, with the closest known
        files = self.workspace.scorer_files(catalog, draft, scorer_id)
        return {
            "scorer": scorer_id, "files": [file.as_json() for file in files],
            "yours": scorer_id in catalog.source.scorers, "origins": self.workspace.origins(catalog, draft, scorer_id),
            "last_version": self._last_version(scorer_id),
        }  # fmt: skip

    def variant(self, body: dict[str, Any]) -> dict[str, Any]:
        """The catalog file's text with a built-in scorer made one of this catalog's own
        (`extends:` the built-in); not saved until Save."""
        scorer_id = _text(body, "scorer")
        text = _text(body, "text")
        entry = self.workspace.variant_entry(scorer_id)
        if "scorers: {}" in text:
            return {"text": text.replace("scorers: {}", "scorers:\n" + entry.rstrip("\n"), 1)}
        if not text.endswith("\n"):
            text += "\n"
        if "\nscorers:" not in "\n" + text:
            text += "scorers:\n"
        return {"text": text + entry}

    def check(self, body: dict[str, Any]) -> dict[str, Any]:
        """The draft's problems, as `scorers check` prints them, at their files and lines; its
        warnings (which do not stop a run or a save) beside them, when it has any."""
        problems, warnings = self.workspace.checked(self.workspace.draft(_edits(body)))
        return {"problems": [problem.as_json() for problem in problems], **({"warnings": [warning.as_json() for warning in warnings]} if warnings else {})}

    def items(self, body: dict[str, Any]) -> dict[str, Any]:
        data = _text(body, "data")
        scorer_id = body.get("scorer") or ""
        found = self._data_items(data)
        return {"items": [{"id": item.item_id, "line": item.line, "label": item.label_for(scorer_id) if scorer_id else None} for item in found[:2000]], "total": len(found)}

    def preview(self, body: dict[str, Any]) -> dict[str, Any]:
        """The exact prompts of every step for one item, as `scorers preview` renders them;
        with the judge's answers stored by a run of this item, the later steps too."""
        scorer_id, data, item_id = _text(body, "scorer"), _text(body, "data"), _text(body, "item")
        catalog, _ = self._catalog(_edits(body))
        item = next((item for item in self._data_items(data) if item.item_id == item_id), None)
        if item is None:
            raise ConfigError(f"item {item_id!r}: not in {data}")
        raw = item.raw
        answers = self.runner.answers(body["run"], scorer_id, item_id) if isinstance(body.get("run"), str) and body["run"] else {}
        options = {"context": raw["context"]} if raw.get("context") is not None else {}
        plan = catalog.plan(scorer_id)
        known = {step.id for step in plan.steps}
        shown = preview(
            plan, raw.get("output"), input=raw.get("input"), ground_truth=raw.get("ground_truth"),
            answers={step: answer for step, answer in answers.items() if step in known}, options=options, metadata=raw.get("metadata"),
        )  # fmt: skip
        return {
            "prompts": [prompt.model_dump() for prompt in shown.prompts], "needs_answer_for": shown.needs_answer_for,
            "score": shown.result.score if shown.result is not None else None, "answers_from": body.get("run") if answers else None,
        }  # fmt: skip

    async def estimate(self, body: dict[str, Any]) -> dict[str, Any]:
        scorer_id = _text(body, "scorer")
        catalog, _ = self._catalog(_edits(body))
        return await self.runner.estimate(self._scorer(catalog, scorer_id), self._sample(body, scorer_id))

    async def run(self, body: dict[str, Any]) -> dict[str, Any]:
        """Start a run of the draft on the sample (resumed when this draft already ran on it)."""
        if self.runner.busy:
            raise ConfigError("a run is going on; stop it first")
        scorer_id = _text(body, "scorer")
        catalog, draft = self._catalog(_edits(body))
        scorer, sample = self._scorer(catalog, scorer_id), self._sample(body, scorer_id)
        self.workspace.pinned = {draft}  # the run renders from it; the run before has ended
        progress = self.runner.start(scorer, sample)
        runs = self.history.setdefault(scorer_id, [])
        if progress.run in runs:
            runs.remove(progress.run)  # run again (resumed): now the latest
        runs.append(progress.run)
        return progress.as_json()

    async def stop(self, body: dict[str, Any]) -> dict[str, Any]:
        await self.runner.stop()
        return self.status(body)

    def status(self, body: dict[str, Any]) -> dict[str, Any]:
        current = self.runner.current
        return {"run": current.as_json() if current is not None else None}

    def report(self, body: dict[str, Any]) -> dict[str, Any]:
        """A run's figures, compared with the last saved version (before anything is saved:
        with the run started before it here)."""
        scorer_id, run = _text(body, "scorer"), _text(body, "run")
        last = self._last_version(scorer_id)
        runs = self.history.get(scorer_id, [])
        if last is not None and last["run"] != run:
            baseline, kind = last["run"], f"the last saved version (v{last['version']})"
        elif last is None and run in runs and runs.index(run) > 0:
            baseline, kind = runs[runs.index(run) - 1], "the run before (nothing is saved yet)"
        else:
            baseline, kind = None, None
        return {**self.runner.report(run, scorer_id, baseline), "baseline_kind": kind}

    def item(self, body: dict[str, Any]) -> dict[str, Any]:
        found = self.runner.item(_text(body, "run"), _text(body, "scorer"), _text(body, "item"))
        if found is None:
            raise ConfigError(f"item {body.get('item')!r}: not in run {body.get('run')!r}")
        return found

    def versions(self, body: dict[str, Any]) -> dict[str, Any]:
        return {"versions": self.runner.versions(_text(body, "scorer"))}

    def diff(self, body: dict[str, Any]) -> dict[str, Any]:
        return {"changes": self.workspace.diff(_edits(body)), "catalog": str(self.workspace.folder)}

    async def save(self, body: dict[str, Any]) -> dict[str, Any]:
        """Write the edited files (only those that changed, only inside the catalog folder),
        then record the version: the saved scorer run on the sample as the run
        `workbench-<scorer>-v<N>` (its answers come from the response cache when this draft
        was run on the sample already)."""
        if self.runner.busy:
            raise ConfigError("a run is going on; stop it or wait for it before saving")
        scorer_id = _text(body, "scorer")
        edits = _edits(body)
        catalog, _ = self._catalog(edits)  # a draft with problems is not saved
        sample = self._sample(body, scorer_id)
        written = self.workspace.save(edits)
        saved = self.workspace.load(self.workspace.catalog_file)
        scorer = self._scorer(saved, scorer_id)
        version = self.runner.next_version(scorer_id)
        meta = {
            "workbench": {
                "version": version, "scorer": scorer_id, "catalog": str(self.workspace.catalog_file),
                "fingerprint": scorer.plan.fingerprint, "files": written, "sample": sample.as_json(),
            }
        }  # fmt: skip
        progress = self.runner.start(scorer, sample, name=f"workbench-{scorer_id}-v{version}", meta=meta, kind="version")
        return {"written": written, "version": version, "run": progress.as_json()}

    def aligned(self, body: dict[str, Any]) -> dict[str, Any]:
        """The aligned variants of the scorer found under the catalog folder, as align wrote them."""
        return {"variants": aligned_variants(self.workspace, _text(body, "scorer"))}

    def accept(self, body: dict[str, Any]) -> dict[str, Any]:
        """The page's edits with an aligned variant's changes brought in, and their diff
        against what is saved; nothing is written until Save (which records the version)."""
        scorer_id, folder = _text(body, "scorer"), _text(body, "folder")
        edits = _edits(body)
        catalog_text = edits.get(self.workspace.catalog_name) or self.workspace.saved_files().get(self.workspace.catalog_name) or NEW_CATALOG
        made_own = self.variant({"scorer": scorer_id, "text": catalog_text})["text"]
        files = {**edits, **accept_edits(self.workspace, folder, scorer_id, catalog_text, made_own)}
        catalog, _ = self._catalog(files)  # a variant that does not load here is not offered
        catalog.definition(scorer_id)
        return {"files": files, "changes": self.workspace.diff(files), "catalog": str(self.workspace.folder)}

    def calibrate(self, body: dict[str, Any]) -> dict[str, Any]:
        """The threshold that agrees best with the labels on a run (`scorers calibrate`'s
        sweep); with `apply`, the catalog file's text with it set (not saved until Save)."""
        scorer_id, run = _text(body, "scorer"), _text(body, "run")
        catalog, _ = self._catalog(_edits(body))
        existing_run(self.runner.store, run)
        records = run_records(self.runner.store, run).get(scorer_id, [])
        swept = calibration(catalog.create(scorer_id, model=self.model), labelled_records(records), metric=body.get("metric") or "f1")
        answer: dict[str, Any] = {"calibration": swept.model_dump(mode="json")}
        if body.get("apply") and swept.best is not None:
            text = _text(body, "text")
            try:
                answer["text"] = set_threshold(text, scorer_id, swept.best.threshold)
            except ConfigError:  # a built-in scorer: made this catalog's own first
                answer["text"] = set_threshold(self.variant({"scorer": scorer_id, "text": text})["text"], scorer_id, swept.best.threshold)
        return answer
