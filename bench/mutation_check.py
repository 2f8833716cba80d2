"""How general `scorers check` is, measured by mutation: each mutant is the built-in catalog, or
an example variant (examples/variants/), with one line changed the way an author's slip would
change it (a direction flipped, a comparison swapped, an enum's case or value changed, a setting
in another unit, a filter dropped, rounding to 0, an option's type changed, a jury model
repeated, a monitor inverted, a pattern escaped once, what an empty list scores ...). For each,
it asks whether the mutant changes what the scorer means on the answers made from the schemas
(a score, a pass or flag, which way is better; or it no longer loads), and whether `scorers check` names the mutated line (a problem or a warning at
that FILE:LINE). It prints the share named, the misses one a line, and exits 0.

    python bench/mutation_check.py                # every mutant
    python bench/mutation_check.py --most 40      # a deterministic sample of 40
    python bench/mutation_check.py --only round   # the mutants of one operator

The built-in catalog is checked as the installed package would check it: the bench points the
package's catalog at a mutated copy, one copy per mutant.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import re
import shutil
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
os.environ.setdefault("XDG_CACHE_HOME", tempfile.mkdtemp(prefix="mutation-cache-"))  # remembered checks stay out of the user's cache

from engine.catalog import CatalogSource, inspect_catalog, load_scorers, source as catalog_source  # noqa: E402
import engine.catalog as catalog_module  # noqa: E402
from engine.catalog.proving import scorer_trials  # noqa: E402
from engine.errors import ConfigError  # noqa: E402
from engine.scoring.pass_line import scale_of  # noqa: E402


@dataclass(frozen=True)
class Mutant:
    operator: str
    file: Path  # relative to the catalog's folder
    line: int  # 1-based
    before: str
    after: str


Operator = Callable[[str], Iterator[str]]


def _swap(pairs: dict[str, str]) -> Operator:
    def mutate(line: str) -> Iterator[str]:
        for old, new in pairs.items():
            if re.search(old, line):
                yield re.sub(old, new, line, count=1)
                return
    return mutate


def _times_hundred(key: str) -> Operator:
    def mutate(line: str) -> Iterator[str]:
        found = re.match(rf"(\s*{key}:\s*)(0?\.\d+|0|1)(\s*(#.*)?)$", line)
        if found and float(found.group(2)) <= 1:
            yield f"{found.group(1)}{float(found.group(2)) * 100:g}{found.group(3)}"
    return mutate


def _in_expression(pattern: str, replacement: str) -> Operator:
    keys = r"(where|value|score|check|skip_if|items|max_items|max_length|enum)"

    def mutate(line: str) -> Iterator[str]:
        if re.search(r":\s*[>|][-+]?\s*$", line):
            return  # a block's indicator (`>-`, `|`), not an expression
        if re.match(rf"\s*-?\s*{keys}:", line) or re.match(r'\s*[a-z_]+:\s*"[^"]*\|', line):
            if re.search(pattern, line):
                yield re.sub(pattern, replacement, line, count=1)
    return mutate


def _enum_case(line: str) -> Iterator[str]:
    found = re.match(r"(\s*enum:\s*\[)(.*)(\].*)$", line)
    if found and re.search(r"[a-z]", found.group(2)):
        yield found.group(1) + re.sub(r'"?([a-z])', lambda match: match.group(0).upper(), found.group(2), count=1) + found.group(3)


def _enum_value(line: str) -> Iterator[str]:
    found = re.match(r'(\s*enum:\s*\[\s*"?)([a-z_ ]+)(.*)$', line)
    if found:
        yield f"{found.group(1)}{found.group(2)}_x{found.group(3)}"


def _repeat_model(line: str) -> Iterator[str]:
    found = re.match(r"(\s*models:\s*\[)\s*([^,\]]+),\s*([^,\]]+)(.*)$", line)
    if found:
        yield f"{found.group(1)}{found.group(2)}, {found.group(2)}{found.group(4)}"


def _escape_once(line: str) -> Iterator[str]:
    if '"' in line and "\\\\" in line:
        yield line.replace("\\\\", "\\", 1)


def _option_type(line: str) -> Iterator[str]:
    if re.match(r"\s*type:\s*(number|integer)\s*$", line):
        yield re.sub(r"(number|integer)", "string", line)


OPERATORS: dict[str, Operator] = {
    "direction": _swap({"higher_is_better": "lower_is_better", "lower_is_better": "higher_is_better"}),
    "comparison": _in_expression(r"==|!=|>=|<=|(?<![=!<>])>(?!=)|(?<![=!<>])<(?!=)", "!="),
    "literal": _in_expression(r"'(yes|no|met|high|matched|response_1)'", "'nope'"),
    "literal case": _in_expression(r"'(yes|no|met|high|matched)'", lambda m: f"'{m.group(1).capitalize()}'"),  # type: ignore[arg-type]
    "drop filter": _in_expression(r"\s*\|\s*(length|abs|trim|int|float|round)\b", ""),
    "drop not": _in_expression(r"\bnot\s+", ""),
    "round": _swap({r"round:\s*[1-9]": "round: 0"}),
    "unit threshold": _times_hundred("threshold"),
    "unit margin": _times_hundred("margin"),
    "unit weight": _times_hundred("default"),
    "unit monitor": _times_hundred("(above|below)"),
    "invert monitor": _swap({r"^(\s*)above:": r"\1below:", r"^(\s*)below:": r"\1above:"}),
    "empty": _swap({r"empty:\s*0\b": "empty: 1", r"empty:\s*1\b": "empty: 0"}),
    "enum case": _enum_case,
    "enum value": _enum_value,
    "option type": _option_type,
    "repeat model": _repeat_model,
    "escape once": _escape_once,
    "meaning": _swap({r"\bgood\b": "bad", r"\bbad\b": "good"}),
}


def mutants(folder: Path, files: list[Path]) -> Iterator[Mutant]:
    for path in files:
        lines = path.read_text(encoding="utf-8").splitlines()
        for number, line in enumerate(lines, 1):
            if line.lstrip().startswith("#") or not line.strip():
                continue
            for name, operator in OPERATORS.items():
                for changed in operator(line):
                    if changed != line:
                        yield Mutant(name, path.relative_to(folder), number, line, changed)


def catalog_files(folder: Path, catalog: str) -> list[Path]:
    found = [folder / catalog]
    for sub in ("schemas", "prompts"):
        if (folder / sub).is_dir():
            found += sorted((folder / sub).rglob("*.yaml"))
    return found


def scores_on_boundary_answers(catalog_path: Path | None) -> dict[str, dict[str, tuple[float | None, bool | None, str]]] | None:
    """Each scorer's score for each scenario of answers made from its schemas, whether it
    passes, and which way is better; None when the catalog does not load."""
    try:
        catalog = catalog_module.builtin_catalog() if catalog_path is None else load_scorers(catalog_path)
    except ConfigError:
        return None
    found: dict[str, dict[str, tuple[float | None, bool | None, str]]] = {}
    source: CatalogSource = catalog.source
    for scorer_id in catalog.ids():
        if catalog_path is not None and scorer_id not in source.scorers:
            continue
        try:
            trials = scorer_trials(source, catalog.definition(scorer_id), catalog.plan(scorer_id))
        except ConfigError:
            return None
        if trials is not None:
            plan = catalog.plan(scorer_id)
            line = plan.pass_line.on_scale(scale_of(plan.options_model()))
            found[scorer_id] = {
                trial.scenario.label: (trial.score, None if trial.score is None else line.passes(trial.score), plan.direction) for trial in trials.trials
            }
    return found


def named_at(check: object, file: Path, line: int) -> bool:
    found = [*getattr(check, "problems"), *getattr(check, "warnings")]
    return any(problem.path is not None and Path(problem.path).resolve() == file.resolve() and problem.line == line for problem in found)


def point_builtin_at(folder: Path) -> None:
    catalog_source._PACKAGED_CATALOG = folder  # type: ignore[attr-defined]
    catalog_module._builtin_source.cache_clear()
    catalog_module.builtin_catalog.cache_clear()


def copy_catalogs(work: Path) -> list[tuple[str, Path, str]]:
    """The built-in catalog and each variant copied under `work`: (label, folder, catalog file)."""
    builtin = work / "builtin"
    builtin.mkdir(parents=True)
    for name in ("scorers.yaml", "prompts", "schemas", "optimizer"):
        source = ROOT / name
        (shutil.copytree if source.is_dir() else shutil.copy)(source, builtin / name)
    targets: list[tuple[str, Path, str]] = [("built-in", builtin, "scorers.yaml")]
    for variant in sorted((ROOT / "examples" / "variants").iterdir()):
        if variant.is_dir():
            copy = work / f"variant-{variant.name}"
            shutil.copytree(variant, copy)
            targets.append((f"variants/{variant.name}", copy, "scorers.yaml"))
    return targets


#: Each worker's own copies of the catalogs (mutated in place, one mutant at a time) and what
#: they mean unmutated.
_worker: dict[str, Any] = {}


def _start_worker() -> None:
    targets = copy_catalogs(Path(tempfile.mkdtemp(prefix="mutants-")))
    folders = {label: (folder, catalog) for label, folder, catalog in targets}
    point_builtin_at(folders["built-in"][0])
    _worker["folders"] = folders
    _worker["baseline"] = {label: scores_on_boundary_answers(None if label == "built-in" else folder / catalog) for label, (folder, catalog) in folders.items()}


def _try(entry: tuple[str, Mutant]) -> tuple[str, Mutant, bool, bool]:
    """A mutant applied to this worker's copy: whether it changes what a scorer means, and
    whether `scorers check` names its line."""
    label, mutant = entry
    folder, catalog = _worker["folders"][label]
    path = folder / mutant.file
    original = path.read_text(encoding="utf-8")
    lines = original.splitlines()
    lines[mutant.line - 1] = mutant.after
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    try:
        point_builtin_at(_worker["folders"]["built-in"][0])
        check = inspect_catalog(None if label == "built-in" else folder / catalog)
        scores = scores_on_boundary_answers(None if label == "built-in" else folder / catalog)
    finally:
        path.write_text(original, encoding="utf-8")
    return label, mutant, scores is None or scores != _worker["baseline"][label], named_at(check, path, mutant.line)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--most", type=int, default=0, help="check a deterministic sample of this many mutants (0: all)")
    parser.add_argument("--only", default=None, help="the mutants of one operator")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="processes checking mutants side by side")
    arguments = parser.parse_args()

    targets = copy_catalogs(Path(tempfile.mkdtemp(prefix="mutants-")))
    everything = [(label, mutant) for label, folder, catalog in targets for mutant in mutants(folder, catalog_files(folder, catalog))]
    if arguments.only:
        everything = [entry for entry in everything if entry[1].operator == arguments.only]
    if arguments.most and len(everything) > arguments.most:
        step = len(everything) / arguments.most
        everything = [everything[int(index * step)] for index in range(arguments.most)]

    started = time.perf_counter()
    counted = named = changing = changing_named = 0
    misses: list[str] = []
    by_operator: dict[str, list[int]] = {}
    with multiprocessing.get_context("fork").Pool(arguments.jobs, initializer=_start_worker) as pool:
        for label, mutant, changes, hit in pool.imap_unordered(_try, everything):
            counted += 1
            named += hit
            changing += changes
            changing_named += hit and changes
            tally = by_operator.setdefault(mutant.operator, [0, 0, 0])
            tally[0] += changes
            tally[1] += hit and changes
            tally[2] += 1
            if changes and not hit:
                misses.append(f"  {label}/{mutant.file}:{mutant.line} [{mutant.operator}] {mutant.before.strip()!r} -> {mutant.after.strip()!r}")
    elapsed = time.perf_counter() - started

    print(f"mutants: {counted} ({elapsed:.0f} s with {arguments.jobs} processes)")
    print(f"change a score, a pass or flag or the direction on the boundary answers (or no longer load): {changing} ({changing / max(counted, 1):.0%})")
    print(f"of those, named by `scorers check` at the mutated line: {changing_named} ({changing_named / max(changing, 1):.1%})")
    print(f"named at the mutated line, of all mutants: {named} ({named / max(counted, 1):.1%})")
    print("by operator (named / changing / all):")
    for operator, (changes, hits, total) in sorted(by_operator.items()):
        print(f"  {operator:16} {hits:4} / {changes:4} / {total:4}")
    if misses:
        print("changing mutants not named at their line:")
        print("\n".join(sorted(misses)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
