"""What the page asks of the workbench, one method per route: the scorers and data sets to
pick from, a scorer's files, the problems and the prompts of a draft, a run and its figures,
the saved versions, the diff and the save, the calibrated threshold. Each method takes the
request's JSON and returns JSON; the work is done by the engine's own API (the catalog,
`preview`, `arun_evals`, the store, `runs.measures.stats`, `calibration`)."""

from __future__ import annotations

import asyncio
import hashlib
import secrets
from pathlib import Path
from typing import Any

from ..catalog import Catalog, builtin_catalog
from ..errors import ConfigError, RunInputError, ScorerError
from ..judge.settings import JudgeSettings
from ..runs.labels.golden import queue_data, queue_datasets, queue_name
from ..runs.stored.reading import existing_run, labelled_records, run_records
from ..runs.tuning import calibration, calibration_caution
from ..scoring import AnyScorer
from .aligned import accept_edits, aligned_variants
from .drafts import Drafts, default_folder
from .messages import one_line
from .previews import StoredAnswer, preview_item, stored_answers
from .datasets import DataItem, DataSets, read_items, stratified_sample
from .runner import Runner, Sample
from .thresholds import set_threshold
from .workspace import NEW_CATALOG, EditorFile, Workspace, version_of


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


def _bases(body: dict[str, Any]) -> dict[str, str | None]:
    bases = body.get("bases") or {}
    if not isinstance(bases, dict) or not all(isinstance(key, str) and (value is None or isinstance(value, str)) for key, value in bases.items()):
        raise ConfigError("bases: expected a mapping of catalog paths to the saved text each was edited from (null: no file)")
    return bases


def _edits(body: dict[str, Any]) -> dict[str, str]:
    files = body.get("files") or {}
    if not isinstance(files, dict) or not all(isinstance(key, str) and isinstance(value, str) for key, value in files.items()):
        raise ConfigError("files: expected a mapping of catalog paths to their text")
    return files


class Session:
    """One workbench: its catalog folder, the data sets it offers, and its runner."""

    def __init__(self, catalog: Path, runner: Runner, data: Path | None = None, judge: JudgeSettings | None = None, drafts: Path | None = None) -> None:
        self.workspace = Workspace(catalog)
        self.started = secrets.token_hex(8)
        self.drafts = Drafts(drafts or default_folder(), self.workspace.catalog_file, self.started)
        self.runner = runner
        runner.words = self.workspace.words
        self.data = data
        self.datasets = DataSets(data, Path.cwd())
        self.judge = judge or JudgeSettings()
        self._items: dict[str, list[DataItem]] = {}
        #: Per scorer, the runs started here in order: before anything is saved, a run is
        #: compared with the one before it.
        self.history: dict[str, list[str]] = {}
        #: Per scorer, the one-item runs started for a preview (not compared with anything).
        self.item_runs: dict[str, list[str]] = {}

    def close(self) -> None:
        self.workspace.close()

    # ---------------------------------------------------------------------- helpers

    def _catalog(self, edits: dict[str, str]) -> tuple[Catalog, Path]:
        draft, catalog = self.workspace.compiled(edits)
        if isinstance(catalog, ConfigError):
            raise catalog
        return catalog, draft

    def catalog(self) -> Catalog:
        """The catalog as saved (its problems raised)."""
        return self._catalog({})[0]

    def _data_items(self, data: str) -> list[DataItem]:
        queue = queue_name(data)
        if queue is not None:  # a review queue's golden set, read afresh: its labels change
            return [DataItem(str(row["id"]), position, row) for position, row in enumerate(queue_data(self.runner.store, queue), start=1)]
        path = self.datasets.path(data)
        key = str(path.resolve())
        if key not in self._items:
            self._items[key] = read_items(path)
        return self._items[key]

    def _scorer(self, catalog: Catalog, scorer_id: str) -> AnyScorer:
        return catalog.create(scorer_id, judge=self.judge)

    def _sample(self, body: dict[str, Any], scorer_id: str) -> Sample:
        data = _text(body, "data")
        size, seed = _number(body, "size", 20, 1), _number(body, "seed", 0)
        return Sample(data, size, seed, stratified_sample(self._data_items(data), scorer_id, size, seed))

    def _last_version(self, scorer_id: str) -> dict[str, Any] | None:
        """The last version of the scorer saved from this catalog: its number, run and sample."""
        saved = self.runner.version_runs(scorer_id, str(self.workspace.catalog_file))
        if not saved:
            return None
        info = saved[-1]
        return {"version": int(info.name.rsplit("-v", 1)[1]), "run": info.name, "sample": info.meta["workbench"].get("sample")}

    def _versions(self, scorer_id: str) -> list[dict[str, Any]]:
        return self.runner.versions(scorer_id, str(self.workspace.catalog_file))

    # ----------------------------------------------------------------------- routes

    def state(self, body: dict[str, Any]) -> dict[str, Any]:
        """The catalog folder, its scorers (yours first), the data sets to offer (the one given
        with --data first) and the unsaved work to restore (this tab's draft, else the latest
        of an earlier start, which opens on the data set given now; another open tab's is only
        offered, as `other_draft`). A
        catalog with problems still opens (on the built-in scorers and the ids it names), to
        be fixed."""
        try:
            catalog, _ = self._catalog({})
        except ConfigError:
            catalog = None
        own = set(catalog.source.scorers) if catalog is not None else set(self.workspace.written_ids())
        ids = catalog.ids() if catalog is not None else [*own, *(scorer_id for scorer_id in builtin_catalog().ids() if scorer_id not in own)]
        scorers = [{"id": scorer_id, "origin": "yours" if scorer_id in own else "built-in"} for scorer_id in sorted(ids, key=lambda scorer_id: (scorer_id not in own, scorer_id))]
        tab = body.get("tab")
        draft, other_draft = self.drafts.get(tab if isinstance(tab, str) else None)
        if draft is not None and self.data is not None and draft.get("started") != self.started:
            draft["data"] = self.datasets.offered[0]["path"]
        return {
            "catalog": self.workspace.shown(self.workspace.catalog_file), "folder": str(self.workspace.folder),
            "scorers": scorers, "datasets": [*self.datasets.offered, *queue_datasets(self.runner.store)], "given_data": self.datasets.offered[0]["path"] if self.data else None,
            "busy": self.runner.busy, "draft": draft, "other_draft": other_draft, "drafts_file": str(self.drafts.path),
        }

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
            only = EditorFile(self.workspace.catalog_name, "catalog", "yours", shown, text, "yaml", self.workspace.saved_files().get(self.workspace.catalog_name))
            return {"scorer": scorer_id, "files": [only.as_json()], "yours": scorer_id in self.workspace.written_ids(), "origins": [], "last_version": self._last_version(scorer_id)}
        catalog.definition(scorer_id)  # an unknown id: one line, with the closest known
        files = self.workspace.scorer_files(catalog, draft, scorer_id)
        return {
            "scorer": scorer_id, "files": [file.as_json() for file in files],
            "yours": scorer_id in catalog.source.scorers, "origins": self.workspace.origins(catalog, draft, scorer_id),
            "last_version": self._last_version(scorer_id),
        }

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
        """What `scorers check` finds in the draft, at files and lines the tuner can open: its
        problems, else its warnings and notes (which stop neither a run nor a save); and which
        of the files the page holds (`versions`: path -> version) were saved since."""
        given = body.get("versions")
        versions: dict[str, str | None] = {str(path): version if isinstance(version, str) else None for path, version in given.items()} if isinstance(given, dict) else {}
        edits = _edits(body)
        found = self.workspace.problems(edits)
        return {
            "problems": [problem.as_json() for problem in found if problem.severity == "error"],
            "warnings": [problem.as_json() for problem in found if problem.severity == "warning"],
            "notes": [problem.as_json() for problem in found if problem.severity == "note"],
            "changed": self.workspace.changed_since(versions),
        }

    def truth(self, body: dict[str, Any]) -> dict[str, Any]:
        """What the drafted scorer scores answers made from its schemas (`scorers show`'s
        table), asked after the check so that the check's answer never waits for it."""
        scorer_id = _text(body, "scorer")
        _, catalog = self.workspace.compiled(_edits(body))  # the draft the check compiled
        if isinstance(catalog, ConfigError):
            return {"truth_table": []}
        try:
            rows = catalog.truth_table(scorer_id)
        except ConfigError:
            rows = []
        return {"truth_table": [{"answer": row.answer, "score": row.score, "outcome": row.outcome} for row in rows]}

    def file(self, body: dict[str, Any]) -> dict[str, Any]:
        """A file to open at a problem's line: the catalog's, a built-in one, or the built-in
        catalog file (read-only)."""
        return self.workspace.file(_text(body, "path")).as_json()

    def items(self, body: dict[str, Any]) -> dict[str, Any]:
        data = _text(body, "data")
        scorer_id = body.get("scorer") or ""
        found = self._data_items(data)
        return {"items": [{"id": item.item_id, "line": item.line, "label": item.label_for(scorer_id) if scorer_id else None} for item in found[:2000]], "total": len(found)}

    async def preview(self, body: dict[str, Any]) -> dict[str, Any]:
        """The exact prompts of every step for one item, as `scorers preview` renders them,
        with the answers the later steps need taken from the response cache or the last run of
        the item (previews.py); when one is missing, what running this one item would cost."""
        scorer_id, data, item_id = _text(body, "scorer"), _text(body, "data"), _text(body, "item")
        item = self._item(data, item_id)
        catalog, _ = await asyncio.to_thread(self._catalog, _edits(body))
        definition = catalog.plan(scorer_id).fingerprint
        scorer = catalog.create(scorer_id, judge=self.judge, offline=True)
        shown_run = body.get("run") if isinstance(body.get("run"), str) else None
        stored = await asyncio.to_thread(self._stored_answers, scorer_id, item_id, shown_run)
        try:
            shown = await preview_item(scorer, item.raw, self.runner.cache, stored)
        except RunInputError as exc:  # the item cannot be judged by this scorer: why, as a run would say
            return {"prompts": [], "needs_answer_for": None, "score": None, "not_scorable": self.workspace.words(one_line(exc)), "definition": definition}
        shown["definition"] = definition
        if shown["needs_answer_for"] is not None:
            shown["run_item"] = await self._item_estimate(catalog, scorer_id, data, item)
        return shown

    def _item(self, data: str, item_id: str) -> DataItem:
        found = next((item for item in self._data_items(data) if item.item_id == item_id), None)
        if found is None:
            raise ConfigError(f"item {item_id!r}: not in {data}")
        return found

    def _stored_answers(self, scorer_id: str, item_id: str, shown_run: str | None) -> dict[str, StoredAnswer]:
        """The judge's answers for this item in the last run of it the workbench knows: the
        run shown, else the latest run started here, else the last saved version."""
        last = self._last_version(scorer_id)
        started = self.history.get(scorer_id, []) + self.item_runs.get(scorer_id, [])
        candidates = [shown_run, *reversed(started), last["run"] if last else None]
        for run in dict.fromkeys(candidate for candidate in candidates if candidate):
            record = next((found for found in self.runner.store.item_records(run, item_id) if found.scorer_id == scorer_id and found.steps), None)
            if record is not None:
                return stored_answers(record, run)
        return {}

    async def _item_estimate(self, catalog: Catalog, scorer_id: str, data: str, item: DataItem) -> dict[str, Any]:
        """What running this one item would cost (or why it cannot run: no judge configured)."""
        try:
            scorer = self._scorer(catalog, scorer_id)
        except ScorerError as exc:
            return {"error": self.workspace.words(one_line(exc))}
        return await self.runner.estimate(scorer, Sample(data, 1, 0, [item]))

    async def run_item(self, body: dict[str, Any]) -> dict[str, Any]:
        """Run the draft on one item, so that its preview can show every step with the judge's
        answers (they land in the response cache); a run of its own, not a sample's."""
        if self.runner.busy:
            raise ConfigError("a run is going on; stop it first")
        scorer_id, data, item_id = _text(body, "scorer"), _text(body, "data"), _text(body, "item")
        item = self._item(data, item_id)
        catalog, draft = self._catalog(_edits(body))
        scorer = self._scorer(catalog, scorer_id)
        self.workspace.pinned = {draft}
        sample = Sample(data, 1, 0, [item])
        name = f"workbench-{scorer_id}-{scorer.fingerprint[:10]}-item-{hashlib.sha256(item_id.encode()).hexdigest()[:8]}"
        progress = self.runner.start(scorer, sample, name=name, kind="item")
        self.item_runs.setdefault(scorer_id, []).append(progress.run)
        return progress.as_json()

    async def estimate(self, body: dict[str, Any]) -> dict[str, Any]:
        scorer_id = _text(body, "scorer")
        sample = self._sample(body, scorer_id)
        catalog, _ = self._catalog(_edits(body))
        return await self.runner.estimate(self._scorer(catalog, scorer_id), sample)

    async def run(self, body: dict[str, Any]) -> dict[str, Any]:
        """Start a run of the draft on the sample (resumed when this draft already ran on it)."""
        if self.runner.busy:
            raise ConfigError("a run is going on; stop it first")
        scorer_id = _text(body, "scorer")
        sample = self._sample(body, scorer_id)
        catalog, draft = self._catalog(_edits(body))
        scorer = self._scorer(catalog, scorer_id)
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
        return {"versions": self._versions(_text(body, "scorer"))}

    def diff(self, body: dict[str, Any]) -> dict[str, Any]:
        return {"changes": self.workspace.diff(_edits(body)), "catalog": str(self.workspace.folder)}

    async def save(self, body: dict[str, Any]) -> dict[str, Any]:
        """Write the edited files (only those that changed, only the catalog's own files, only
        where the file on disk is still the one they were edited from: `bases`), then record
        the version: the saved scorer run on the sample as the run `workbench-<scorer>-v<N>`
        (its answers come from the response cache when this draft was run on the sample
        already). A conflict writes nothing (SaveConflict: the page shows the three texts)."""
        if self.runner.busy:
            raise ConfigError("a run is going on; stop it or wait for it before saving")
        scorer_id = _text(body, "scorer")
        edits = _edits(body)
        bases = _bases(body)
        self._catalog(edits)  # a draft with problems is not saved
        sample = self._sample(body, scorer_id)
        written = self.workspace.save(edits, bases)
        self.drafts.saved(written)
        shown = [self.workspace.shown(self.workspace.target(relative)) for relative in written]
        versions = {relative: version_of(text) for relative, text in {**edits, **written}.items()}
        saved = self.workspace.load(self.workspace.catalog_file)
        try:
            scorer = self._scorer(saved, scorer_id)
        except ScorerError as exc:  # written; the version is measured once a judge is configured
            return {"written": shown, "versions": versions, "version": None, "run": None, "version_error": exc.described("")}
        version = self.runner.next_version(scorer_id)
        accepted = body.get("accepted") if isinstance(body.get("accepted"), str) else None
        meta = {
            "workbench": {
                "version": version, "scorer": scorer_id, "catalog": str(self.workspace.catalog_file),
                "fingerprint": scorer.plan.fingerprint, "files": shown, "sample": sample.as_json(),
                **({"accepted": accepted} if accepted else {}),
            }
        }
        progress = self.runner.start(scorer, sample, name=f"workbench-{scorer_id}-v{version}", meta=meta, kind="version")
        return {"written": shown, "versions": versions, "version": version, "run": progress.as_json()}

    def draft(self, body: dict[str, Any]) -> dict[str, Any]:
        """Keep the page's unsaved work (see drafts.py): on every pause in typing, and when the
        scorer, data set, sample or run shown changes."""
        self.drafts.put(_text(body, "tab"), body.get("draft"))
        return {"kept": True}

    def aligned(self, body: dict[str, Any]) -> dict[str, Any]:
        """The aligned variants of the scorer found under the catalog folder, as align wrote
        them; each says the version that accepted it (then it is not offered again), and warns
        when align measured it against a built-in file that this catalog overrides (its figures
        then compare with the built-in scorer, not with yours)."""
        scorer_id = _text(body, "scorer")
        accepted = {version["accepted"]: version["version"] for version in self._versions(scorer_id) if version.get("accepted")}
        overridden = self._overridden(scorer_id)
        variants = aligned_variants(self.workspace, scorer_id)
        for variant in variants:
            if "error" in variant:
                continue
            variant["accepted_in"] = accepted.get(variant["folder"])
            if variant["from_builtin"] and overridden:
                variant["warning"] = (
                    f"align measured this variant against the built-in {scorer_id}, but your catalog overrides {', '.join(overridden)}: "
                    f"its figures are not a comparison with your scorer (align yours: scorers align ... --config {self.workspace.shown(self.workspace.catalog_file)})"
                )
        return {"variants": variants}

    def _overridden(self, scorer_id: str) -> list[str]:
        """The built-in templates and schemas of a scorer that the saved catalog replaces with its own."""
        try:
            catalog, draft = self._catalog({})
            files = self.workspace.scorer_files(catalog, draft, scorer_id)
        except ConfigError:
            return []
        return [file.path for file in files if file.origin == "yours" and file.role != "catalog" and self.workspace.builtin_counterpart(file.path) is not None]

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
        saved = self.workspace.saved_files()
        return {"files": files, "bases": {path: saved.get(path) for path in files}, "changes": self.workspace.diff(files), "catalog": str(self.workspace.folder)}

    def calibrate(self, body: dict[str, Any]) -> dict[str, Any]:
        """The threshold that agrees best with the labels on a run (`scorers calibrate`'s
        sweep); with `apply`, the catalog file's text with it set (not saved until Save). A
        threshold not worth taking (`calibration_caution`) is set only `despite` it, said so."""
        scorer_id, run = _text(body, "scorer"), _text(body, "run")
        catalog, _ = self._catalog(_edits(body))
        existing_run(self.runner.store, run)
        records = run_records(self.runner.store, run).get(scorer_id, [])
        swept = calibration(catalog.create(scorer_id, judge=self.judge), labelled_records(records), metric=body.get("metric") or "f1")
        caution = calibration_caution(swept)
        answer: dict[str, Any] = {"calibration": swept.model_dump(mode="json"), "caution": caution}
        if body.get("apply") and caution and body.get("despite") is not True:
            raise ConfigError(f"the threshold was not set: {caution} Tick \"set it anyway\" to set it all the same.")
        if body.get("apply") and swept.best is not None:
            text = _text(body, "text")
            try:
                answer["text"] = set_threshold(text, scorer_id, swept.best.threshold)
            except ConfigError:  # a built-in scorer: made this catalog's own first
                answer["text"] = set_threshold(self.variant({"scorer": scorer_id, "text": text})["text"], scorer_id, swept.best.threshold)
        return answer
