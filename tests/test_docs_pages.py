"""The docs hold together as a newcomer reads them: the README lists every page and every
built-in scorer (as `scorers list` has them), every link and anchor leads somewhere, every
table renders as one table, counts of built-in scorers are the catalog's, nothing points
outside the repository, and the local judge the docs send readers to is in it."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest
from typer.testing import CliRunner

from engine.cli import app

ROOT = Path(__file__).resolve().parent.parent
PAGES = [
    ROOT / "README.md",
    ROOT / "CHANGELOG.md",
    ROOT / "examples" / "README.md",
    ROOT / "bench" / "RESULTS.md",
    *sorted((ROOT / "docs").rglob("*.md")),
]
runner = CliRunner()


def listed_scorers() -> list[dict[str, object]]:
    result = runner.invoke(app, ["list", "--json"])
    assert result.exit_code == 0, result.output
    scorers: list[dict[str, object]] = json.loads(result.stdout)
    return scorers


def section(text: str, heading: str) -> str:
    """The text under `heading`, up to the next heading of the same level or higher."""
    start = text.index(heading + "\n")
    level = heading.split(" ", 1)[0]
    rest = text[start + len(heading) + 1 :]
    end = re.search(rf"^#{{1,{len(level)}}} ", rest, re.MULTILINE)
    return rest[: end.start()] if end else rest


def outside_code(text: str) -> list[tuple[int, str]]:
    """(line number, line) of every line outside fenced code blocks."""
    lines, inside = [], False
    for number, line in enumerate(text.splitlines(), 1):
        if line.lstrip().startswith("```"):
            inside = not inside
        elif not inside:
            lines.append((number, line))
    return lines


def test_the_readme_names_every_built_in_scorer_as_scorers_list_has_them() -> None:
    listed = listed_scorers()
    words = set(re.findall(r"[a-z][a-z-]+[a-z]", section((ROOT / "README.md").read_text(encoding="utf-8"), "## The built-in scorers")))
    missing = [scorer["id"] for scorer in listed if scorer["id"] not in words]
    assert missing == [], f"README.md's '## The built-in scorers' leaves out {missing}"


def test_the_readme_sorts_the_scorers_by_whether_they_need_a_judge() -> None:
    text = section((ROOT / "README.md").read_text(encoding="utf-8"), "## The built-in scorers")
    judged = re.search(r"\*\*Judged\*\*:(.*?)(?=\n- \*\*)", text, re.DOTALL)
    assert judged is not None
    named = {word.strip(" .\n") for word in judged.group(1).replace("\n", " ").split(",")}
    assert named == {str(scorer["id"]) for scorer in listed_scorers() if scorer["judge"]}


def test_the_readme_indexes_every_page_of_the_docs() -> None:
    index = section((ROOT / "README.md").read_text(encoding="utf-8"), "## The docs")
    linked = set(re.findall(r"\]\(([^)#]+)", index))
    pages = {str(page.relative_to(ROOT)) for page in (ROOT / "docs").glob("*.md")}
    assert pages - linked == set()
    assert {"CHANGELOG.md", "examples/README.md", "bench/RESULTS.md"} <= linked


def test_counts_of_built_in_scorers_are_the_catalogs() -> None:
    count = len(listed_scorers())
    for page in PAGES:
        for stated in re.findall(r"(\d+) built-in\b", page.read_text(encoding="utf-8")):
            assert int(stated) == count, f"{page.relative_to(ROOT)} says {stated} built-in scorers; there are {count}"


def slug(heading: str) -> str:
    """The anchor a heading gets on GitHub: lower case, punctuation dropped, spaces as '-'."""
    text = re.sub(r"[`*_]|<[^>]+>", "", heading.strip().lower())
    text = re.sub(r"\]\([^)]*\)|[\[\]]", "", text)
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def anchors(page: Path) -> set[str]:
    return {slug(line.lstrip("#")) for _, line in outside_code(page.read_text(encoding="utf-8")) if re.match(r"#{1,6} ", line)}


LINK = re.compile(r"\]\((?!https?:|mailto:)([^)\s]*)\)")


@pytest.mark.parametrize("page", PAGES, ids=lambda page: str(page.relative_to(ROOT)))
def test_every_link_leads_to_a_file_and_heading_that_exist(page: Path) -> None:
    broken = []
    for number, line in outside_code(page.read_text(encoding="utf-8")):
        for target in LINK.findall(line):
            path, _, anchor = target.partition("#")
            file = (page.parent / path).resolve() if path else page
            if not file.exists():
                broken.append(f"{number}: {target} (no such file)")
            elif anchor and file.suffix == ".md" and anchor not in anchors(file):
                broken.append(f"{number}: {target} (no such heading)")
    assert broken == [], f"{page.relative_to(ROOT)}: {broken}"


def table_problems(text: str) -> list[str]:
    """Tables whose rows are cut off from their header: each run of `|` lines must start with a
    header and a delimiter row (a blank line inside a table ends it, and the rows after it render
    as plain text)."""
    problems, block = [], []
    for number, line in [*outside_code(text), (0, "")]:
        if line.lstrip().startswith("|"):
            block.append((number, line))
            continue
        if block:
            if len(block) < 2 or not re.fullmatch(r"\s*\|?(\s*:?-{3,}:?\s*\|)+\s*:?-*:?\s*", block[1][1]):
                problems.append(f"line {block[0][0]}: a table without its header and delimiter row right above its rows")
            block = []
    return problems


def test_the_table_check_finds_a_table_split_by_a_blank_line() -> None:
    assert table_problems("| a | b |\n| --- | --- |\n| 1 | 2 |\n") == []
    assert table_problems("| a | b |\n| --- | --- |\n\n| 1 | 2 |\n") == ["line 4: a table without its header and delimiter row right above its rows"]


@pytest.mark.parametrize("page", PAGES, ids=lambda page: str(page.relative_to(ROOT)))
def test_every_table_has_its_header_and_rows_together(page: Path) -> None:
    assert table_problems(page.read_text(encoding="utf-8")) == []


def test_no_page_points_outside_the_repository() -> None:
    for page in PAGES:
        assert "../shared" not in page.read_text(encoding="utf-8"), page.relative_to(ROOT)


def test_the_local_judge_script_is_shipped_and_refuses_a_bad_port_before_installing_anything(tmp_path: Path) -> None:
    script = ROOT / "tools" / "local_judge.sh"
    assert subprocess.run(["bash", "-n", str(script)], capture_output=True).returncode == 0
    done = subprocess.run(["bash", str(script), "eighty"], capture_output=True, text=True, env={"PATH": "/usr/bin:/bin", "LOCAL_JUDGE_HOME": str(tmp_path / "judge")})
    assert done.returncode == 2 and "usage:" in done.stderr
    assert not (tmp_path / "judge").exists()


def test_the_changelog_keeps_an_unreleased_section_on_top_with_migration_notes() -> None:
    text = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    sections = re.findall(r"^## (.+)$", text, re.MULTILINE)
    assert sections[0] == "Unreleased"
    entries = re.findall(r"^- \*\*(.+?)\*\*", text, re.MULTILINE)
    assert entries, "no entries"
    for bullet in re.split(r"\n(?=- \*\*)", text)[1:]:
        assert "*Migration*" in bullet, bullet.splitlines()[0]
    assert section(text, "## " + sections[1]).lstrip().startswith("- **An empty output is not scorable**")


EMPTY_SCORED = re.compile(r"\bempty (?:output|summary)[^.;]{0,40}?(?:no (?:judge )?call,\s+)?score[sd]?\s+(?:0|1|`)", re.IGNORECASE)


def test_scorers_md_says_an_empty_output_is_not_scorable_where_the_scorer_makes_it_so() -> None:
    """docs/scorers.md used to say "empty output: no call, score 0" of scorers that refuse an
    empty output as not scorable; each section must say what its scorer does."""
    from engine import builtin_catalog

    catalog = builtin_catalog()
    text = (ROOT / "docs" / "scorers.md").read_text(encoding="utf-8")
    refusing = [scorer_id for scorer_id in catalog.ids() if catalog.plan(scorer_id).empty_output == "not_scorable" and "output" in catalog.plan(scorer_id).requires]
    for scorer_id in refusing:
        heading = next((line for line in text.splitlines() if re.match(rf"## {re.escape(scorer_id)}\b", line)), None)
        if heading is None:
            continue  # described in a shared table, not a section of its own
        body = " ".join(section(text, heading).split())
        assert EMPTY_SCORED.search(body) is None, f"{scorer_id}: {EMPTY_SCORED.search(body)}"
        if re.search(r"empty (?:output|summary)", body, re.IGNORECASE):
            assert "not scorable" in body, scorer_id
