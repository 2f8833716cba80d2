"""Write docs/api.md, the Python API reference, from the code: every name `engine` exports
(`engine.__all__`) with its signature and docstring, then the import path of every other name
of the engine's packages that README.md or a page of docs/ mentions.

    python tools/make_api_reference.py           # writes docs/api.md
    python tools/make_api_reference.py --check   # exit 1 when docs/api.md is not what it would write

tests/test_docs_api.py runs the check, so the reference cannot go stale: change a docstring or
an export, run this script, and commit docs/api.md with the change.
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib
import inspect
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
TARGET = ROOT / "docs" / "api.md"

#: The packages whose public names (their `__all__`) a doc may use without `engine` exporting them.
PACKAGES = ("engine.testing", "engine.store", "engine.judge", "engine.runs", "engine.scoring", "engine.catalog", "engine.errors", "engine.ray")

#: How the exports are grouped, by the package that defines them (the first prefix that matches).
GROUPS = (
    ("Creating and running scorers", ("engine.catalog", "engine.scoring", "engine")),
    ("Judges", ("engine.judge",)),
    ("Batch runs, live scoring, tuning and monitors", ("engine.runs", "engine.catalog.monitors")),
    ("Results stores", ("engine.store",)),
    ("Testing", ("engine.testing",)),
    ("Errors", ("engine.errors",)),
)

#: The fence of a signature: highlighted as Python, but not an example the docs' test runs
#: (tests/test_docs_run.py runs ```python blocks).
SIGNATURE = "```py"

HEADER = """# Python API reference

Made by `tools/make_api_reference.py` from the docstrings; do not edit by hand (a test fails
when this page and the code differ: run `python tools/make_api_reference.py` and commit it).
Every name below is imported from `engine`:

```python
from engine import create_scorer, run_evals, JudgeSettings
```

The words the descriptions use are defined in [concepts.md](concepts.md).
"""


def one_line(text: str) -> str:
    """A signature or value as text that does not change between runs (no memory addresses)."""
    return re.sub(r" at 0x[0-9a-f]+", "", " ".join(text.split()))


def escaped(text: str) -> str:
    """Text for a cell of a Markdown table: a `|` would end the cell."""
    return text.replace("|", "\\|")


def defining_module(value: Any) -> str:
    return getattr(value, "__module__", None) or "engine"


def group_of(module: str) -> str:
    """The group of the longest prefix that `module` starts with."""
    matches = [(len(prefix), title) for title, prefixes in GROUPS for prefix in prefixes if module == prefix or module.startswith(prefix + ".")]
    return max(matches)[1] if matches else GROUPS[0][0]


class Written:
    """An annotation as its source wrote it (`from __future__ import annotations` keeps it a
    string, which a signature would otherwise show in quotes)."""

    def __init__(self, text: str) -> None:
        self.text = text

    def __repr__(self) -> str:
        return self.text


def unquoted(annotation: Any) -> Any:
    return Written(annotation) if isinstance(annotation, str) else annotation


def signature(value: Any) -> str | None:
    try:
        found = inspect.signature(value)
    except (TypeError, ValueError):
        return None
    parameters = [parameter.replace(annotation=unquoted(parameter.annotation)) for parameter in found.parameters.values()]
    return one_line(str(found.replace(parameters=parameters, return_annotation=unquoted(found.return_annotation))))


def fields(value: type) -> list[tuple[str, str]]:
    """(name, description) of a pydantic model's or a dataclass's public fields."""
    model_fields = getattr(value, "model_fields", None)
    if isinstance(model_fields, dict):
        return [(name, one_line(field.description or "")) for name, field in model_fields.items() if not name.startswith("_")]
    if dataclasses.is_dataclass(value):
        return [(field.name, "") for field in dataclasses.fields(value) if not field.name.startswith("_")]
    return []


def methods(value: type) -> Iterator[tuple[str, str | None, str]]:
    """(name, signature, first line of the docstring) of the public methods a class defines itself."""
    for name, member in sorted(vars(value).items()):
        if name.startswith("_") or not (inspect.isfunction(member) or isinstance(member, (classmethod, staticmethod, property))):
            continue
        function = member.fget if isinstance(member, property) else getattr(member, "__func__", member)
        doc = inspect.getdoc(function) or ""
        shown = None if isinstance(member, property) else signature(function)
        yield name, shown, doc.split("\n\n", 1)[0].replace("\n", " ")


def entry(name: str, value: Any) -> str:
    kind = "class" if inspect.isclass(value) else "function" if callable(value) else "value"
    lines = [f"### `{name}`", ""]
    shown = signature(value) if kind == "function" else None
    if shown is not None:
        lines += [SIGNATURE, f"{name}{shown}", "```", ""]
    elif kind == "value":
        lines += [SIGNATURE, f"{name} = {one_line(str(value)).replace('typing.', '')}", "```", ""]
    else:
        lines += [f"*{kind}*, defined in `{defining_module(value)}`", ""]
    doc = inspect.getdoc(value) if kind != "value" else None
    own = value.__dict__.get("__doc__") if inspect.isclass(value) else doc
    if own:
        lines += [(doc or "").strip(), ""]
    if inspect.isclass(value):
        described = fields(value)
        if any(meaning for _, meaning in described):
            lines += ["| field | meaning |", "| --- | --- |", *[f"| `{field}` | {escaped(meaning)} |" for field, meaning in described], ""]
        elif described:
            lines += ["Fields: " + ", ".join(f"`{field}`" for field, _ in described) + ".", ""]
        listed = [(method, shown_method, first) for method, shown_method, first in methods(value) if method not in dict(described)]
        if listed:
            lines += [f"- `{method}{shown_method or ''}`" + (f": {first}" if first else "") for method, shown_method, first in listed]
            lines.append("")
    return "\n".join(lines)


def package_of(name: str) -> str:
    """The package of the engine whose exports include `name` (for a value such as a type alias,
    which does not know its module)."""
    for package in PACKAGES:
        try:
            if name in getattr(importlib.import_module(package), "__all__", []):
                return package
        except ImportError:
            continue
    return "engine"


def names_the_docs_use(exported: set[str]) -> dict[str, str]:
    """Every public name of the engine's packages, not exported by `engine`, that README.md or
    a page of docs/ writes in backticks or imports: name -> the package to import it from."""
    paths: dict[str, str] = {}
    for package in PACKAGES:
        try:
            module = importlib.import_module(package)
        except ImportError:  # an optional extra (Ray) that is not installed
            continue
        for name in getattr(module, "__all__", []):
            paths.setdefault(name, package)
    texts = [(ROOT / "README.md").read_text(encoding="utf-8"), *(page.read_text(encoding="utf-8") for page in sorted((ROOT / "docs").rglob("*.md")) if page != TARGET)]
    used: dict[str, str] = {}
    for text in texts:
        for match in re.finditer(r"from (engine(?:\.\w+)+) import (\([\w,\s]+\)|[\w, ]+)", text):
            for name in re.findall(r"\w+", match.group(2)):
                if name not in exported:
                    used[name] = match.group(1)
        for name in re.findall(r"`(\w+)[(`.]", text):
            if name in paths and name not in exported:
                used.setdefault(name, paths[name])
    return dict(sorted(used.items(), key=lambda pair: (pair[1], pair[0].lower())))


def reference() -> str:
    import engine

    exported = sorted(engine.__all__, key=str.lower)
    grouped: dict[str, list[str]] = {title: [] for title, _ in GROUPS}
    for name in exported:
        value = getattr(engine, name)
        module = defining_module(value) if inspect.isclass(value) or inspect.isfunction(value) else package_of(name)
        grouped[group_of(module)].append(entry(name, value))
    parts = [HEADER]
    parts.append("## Contents\n\n" + "\n".join(f"- [{title}](#{re.sub(r'[^a-z0-9 -]', '', title.lower()).replace(' ', '-')}) ({len(entries)})" for title, entries in grouped.items() if entries) + "\n")
    for title, entries in grouped.items():
        if entries:
            parts.append(f"## {title}\n\n" + "\n".join(entries))
    others = names_the_docs_use(set(exported))
    rows = "\n".join(f"| `{name}` | `from {package} import {name}` |" for name, package in others.items())
    parts.append(
        "## Other names the docs use\n\n"
        "Names of the engine's packages that the docs mention and `engine` does not export, with\n"
        "where to import each from.\n\n| name | import |\n| --- | --- |\n" + rows + "\n"
    )
    return "\n".join(parts).rstrip() + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--check", action="store_true", help="Exit 1 when docs/api.md differs from what would be written")
    arguments = parser.parse_args()
    sys.path.insert(0, str(ROOT))
    made = reference()
    if arguments.check:
        if not TARGET.exists() or TARGET.read_text(encoding="utf-8") != made:
            print("docs/api.md is out of date: run `python tools/make_api_reference.py` and commit it", file=sys.stderr)
            return 1
        return 0
    TARGET.write_text(made, encoding="utf-8")
    print(f"wrote {TARGET.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
