"""Every code block a reader would paste, in README.md, examples/README.md and every page under docs/, runs as
written (against the scripted judge) and succeeds.

Blocks are found, not listed, so a new page is covered as soon as it is written:
- ```bash blocks: each command runs in a folder holding the repository's examples and the
  files the docs assume a reader has (`data.jsonl`, `reply.json` ...); `scorers ...` runs in
  this process, `pytest ...` as a process. Setting up the environment these tests already run
  in (`python3 -m venv`, `pip install`, the test suite's own command) is taken as done.
- ```python blocks: run in order, one namespace per page, as a reader pastes them into one
  session. A block (of any language) that names a file, after its language
  (```yaml monitors.yaml) or in a first-line comment (`# tests/test_answers.py`), is that
  file: written, for the commands after it.
- A block that is not meant to run says so with `<!-- not run: why -->` on the line before it.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from helpers.scripted import answer_fitting, script_word_overlap
from typer.testing import CliRunner

from engine.cli import app
from engine.testing import JudgeServer

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
runner = CliRunner()

#: Pages with a test of their own that runs their blocks in order with more checks.
OWN_TESTS = {
    "docs/tuning.md": "tests/test_docs_tuning.py", "docs/monitoring.md": "tests/test_docs_monitoring.py", "docs/quality.md": "tests/test_judge_quality.py",
    "docs/traces.md": "tests/test_docs_traces.py",
}

#: Commands that set up the environment this suite already runs in.
ENVIRONMENT = re.compile(r"^(python3? -m venv|(\S*/)?pip install|\.venv/bin/pytest -q$)")

FENCE = re.compile(r"^```(\w*)[ \t]*([^\n]*)\n(.*?)^```[ \t]*$", re.DOTALL | re.MULTILINE)
NOT_RUN = re.compile(r"<!--\s*not run:\s*(.+?)\s*-->\s*$")
FILE_NAME = re.compile(r"^(#|//)\s*([\w./-]+\.\w+)\s*$")


@dataclass
class Block:
    page: str
    line: int
    language: str
    code: str
    opted_out: str | None
    #: The file the block is, when it names one (```yaml monitors.yaml, or a first-line comment).
    file: str | None = None


def pages() -> list[Path]:
    return [ROOT / "README.md", ROOT / "examples" / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]


def blocks(page: Path) -> list[Block]:
    text = page.read_text(encoding="utf-8")
    found = []
    for match in FENCE.finditer(text):
        before = text[: match.start()].rstrip("\n").rsplit("\n", 1)[-1]
        reason = NOT_RUN.search(before)
        line = text[: match.start()].count("\n") + 1
        language, info, code = match.groups()
        named = FILE_NAME.match(code.split("\n", 1)[0])
        file = info.strip() or (named.group(2) if named else None)
        found.append(Block(str(page.relative_to(ROOT)), line, language, code, reason.group(1) if reason else None, file))
    return found


def runnable(page: Path) -> list[Block]:
    """The blocks of a page that run: shell and Python, and files the reader writes."""
    return [
        block
        for block in blocks(page)
        if block.opted_out is None
        and (block.language in ("bash", "sh", "shell", "python") or block.file is not None)
    ]


PAGES = [page for page in pages() if str(page.relative_to(ROOT)) not in OWN_TESTS and runnable(page)]

#: Files the docs assume a reader has at hand, as small stand-ins.
TRANSCRIPT = [
    {"role": "user", "content": "Book me a table in Paris and check the weather."},
    {"role": "assistant", "content": None, "tool_calls": [
        {"id": "c1", "type": "function", "function": {"name": "search", "arguments": '{"q": "restaurants in Paris"}'}},
        {"id": "c2", "type": "function", "function": {"name": "book", "arguments": '{"place": "Chez Paul"}'}},
    ]},
    {"role": "tool", "tool_call_id": "c1", "content": "Chez Paul is a restaurant in Paris."},
    {"role": "tool", "tool_call_id": "c2", "content": "Booked a table at Chez Paul."},
    {"role": "assistant", "content": "Booked a table at Chez Paul, a restaurant in Paris."},
]
ITEMS = [
    {"id": f"q{number}", "input": "Where is the Eiffel Tower?", "output": "The Eiffel Tower is in Paris.",
     "context": ["The Eiffel Tower is a landmark in Paris, France."], "expected": {"hallucination": False}}
    for number in range(4)
]
MY_SCORERS = """\
scorers:
  politeness:
    extends: criteria
    name: Politeness
    description: Whether the reply is polite.
    options:
      criteria:
        default: The reply is polite.
"""


def workspace(tmp_path: Path) -> Path:
    """A folder as a reader has it: the repository's examples, docs and the stand-ins, and
    two stored runs (`before`, `after`) for the commands that compare runs."""
    for folder in ("examples", "docs", "prompts", "schemas"):
        shutil.copytree(ROOT / folder, tmp_path / folder)
    (tmp_path / "variants").symlink_to(tmp_path / "examples" / "variants")
    (tmp_path / "data.jsonl").write_text("".join(json.dumps(item) + "\n" for item in ITEMS), encoding="utf-8")
    (tmp_path / "reply.json").write_text(json.dumps(TRANSCRIPT), encoding="utf-8")
    (tmp_path / "run.json").write_text(json.dumps(TRANSCRIPT), encoding="utf-8")
    (tmp_path / "my_scorers.yaml").write_text(MY_SCORERS, encoding="utf-8")
    pair = {"id": "p1", "input": "Where is the Eiffel Tower?", "outputs": {"a": "In Paris.", "b": "The Eiffel Tower is in Paris, France."}}
    (tmp_path / "pairs.jsonl").write_text(json.dumps(pair) + "\n", encoding="utf-8")
    for run in ("before", "after"):
        stored = runner.invoke(app, ["eval", str(tmp_path / "data.jsonl"), "--scorer", "hallucination", "--run", run, "--store", str(tmp_path / ".scorers" / "results.sqlite")])
        assert stored.exit_code == 0, stored.output
    return tmp_path


def commands(code: str) -> list[str]:
    """The commands of a shell block: continuation lines joined, comments dropped, `&&`
    chains split."""
    joined = code.replace("\\\n", " ")
    found = []
    for line in joined.splitlines():
        if shlex.split(line, comments=True):
            found += [part.strip() for part in re.split(r"\s&&\s", line)]
    return found


def run_command(command: str, where: Path, env: dict[str, str]) -> None:
    words = shlex.split(command, comments=True)
    redirect = None
    if ">" in words:
        words, redirect = words[: words.index(">")], words[words.index(">") + 1]
    if not words or ENVIRONMENT.match(" ".join(words)):
        return
    if words[0] == "export":
        name, _, value = words[1].partition("=")
        env[name] = value
        return
    local = dict(env)
    while "=" in words[0] and not words[0].startswith("-"):
        name, _, value = words.pop(0).partition("=")
        local[name] = value
    program = words[0].rsplit("/", 1)[-1]
    if program == "scorers":
        result = runner.invoke(app, words[1:], env=local)
        assert result.exit_code == 0, f"{command}\n{result.output}"
        if redirect:
            (where / redirect).write_text(result.stdout, encoding="utf-8")
        return
    executable = str(BIN / program) if (BIN / program).exists() else program
    done = subprocess.run([executable, *words[1:]], cwd=where, env=local, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, f"{command}\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"


@pytest.mark.parametrize("page", PAGES, ids=lambda page: str(page.relative_to(ROOT)))
def test_every_block_of_the_page_runs(page: Path, judge: JudgeServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    script_word_overlap(judge)
    judge.fallback = answer_fitting
    where = workspace(tmp_path)
    monkeypatch.chdir(where)
    monkeypatch.setenv("HOME", str(where))  # `scorers --install-completion` writes here
    monkeypatch.setenv("SHELL", "/bin/bash")
    env = dict(os.environ)
    namespace: dict[str, object] = {"__name__": "__docs__"}
    for block in runnable(page):
        if block.file is not None:
            path = where / block.file
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(block.code, encoding="utf-8")
        elif block.language == "python":
            exec(compile(block.code, f"{block.page}:{block.line}", "exec"), namespace)  # noqa: S102 - the docs' own code
        else:
            for command in commands(block.code):
                run_command(command, where, env)


def test_blocks_left_out_say_why() -> None:
    """Every block that does not run is marked so, with a reason; nothing is skipped silently."""
    for page in pages():
        for block in blocks(page):
            if block.opted_out is not None:
                assert len(block.opted_out) > 10, f"{block.page}:{block.line}: say why the block does not run"
