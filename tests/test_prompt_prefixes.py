"""Prompts put their fixed instructions first and the item's text last, so a provider's
prompt-prefix cache (automatic at OpenAI for long prompts) can serve the same opening of
every item's prompt."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

PROMPTS = Path(__file__).resolve().parent.parent / "prompts"
ITEM_DATA = re.compile(r"untrusted\(|blocks\.(numbered|context_pieces)\(|\{%-? for item in")


@pytest.mark.parametrize("template", sorted(str(path.relative_to(PROMPTS)) for path in PROMPTS.glob("*/*.j2") if "partials" not in str(path)))
def test_judging_rules_come_before_the_items_text(template: str) -> None:
    lines = (PROMPTS / template).read_text(encoding="utf-8").splitlines()
    first_data = next((number for number, line in enumerate(lines) if ITEM_DATA.search(line)), len(lines))
    rules_after = [line for line in lines[first_data:] if line.startswith("- ") and "{{" not in line.split(":", 1)[0]]
    assert not rules_after, f"{template}: rules after the item's text: {rules_after[:2]}"
