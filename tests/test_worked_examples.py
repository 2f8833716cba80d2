"""An llm step's `examples:`: worked examples as data in the YAML, shown by a partial."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine import CatalogErrors, builtin_catalog, load_scorers

VARIANT = """\
scorers:
  hallucination:
    extends: hallucination
    steps:
      - id: analyze
        examples:
          - output: "The tower is 400 m tall."
            context: ["The tower is 330 m tall."]
            answer: "hallucinated: the height is not the context's"
"""


def analyze_prompt(catalog_text: str | None, tmp_path: Path) -> str:
    if catalog_text is None:
        plan = builtin_catalog().plan("hallucination")
    else:
        (tmp_path / "scorers.yaml").write_text(catalog_text, encoding="utf-8")
        plan = load_scorers(tmp_path / "scorers.yaml").plan("hallucination")
    step = plan.step("analyze")
    return step.prompt.render({"examples": [dict(example) for example in step.examples], "context": ["Paris is in France."], "preprocess": {"claims": ["Paris is in France."]}})  # type: ignore[union-attr]


def test_examples_are_shown_as_material_and_nothing_is_shown_without_them(tmp_path: Path) -> None:
    shown = analyze_prompt(VARIANT, tmp_path)
    assert "Worked examples: items that people checked" in shown
    assert "<example_output>\nThe tower is 400 m tall.\n</example_output>\n<example_context_1>\nThe tower is 330 m tall.\n</example_context_1>" in shown
    assert "The answer people gave: hallucinated: the height is not the context's" in shown
    assert shown.index("Worked examples") < shown.index("Context:\n<context_1>")
    plain = analyze_prompt(None, tmp_path)
    assert "example" not in plain.lower() and "judge only what each claim states.\n\nContext:\n<context_1>" in plain


def test_an_example_with_an_unknown_field_is_refused_at_its_line(tmp_path: Path) -> None:
    with pytest.raises(CatalogErrors) as caught:
        analyze_prompt(VARIANT.replace("answer:", "anwser:"), tmp_path)
    assert "anwser" in str(caught.value) and "scorers.yaml:" in str(caught.value)


def test_examples_are_given_to_llm_steps_only(tmp_path: Path) -> None:
    (tmp_path / "prompts").mkdir()
    (tmp_path / "prompts" / "why.j2").write_text("{{ examples | length }} {{ score }}", encoding="utf-8")
    catalog = VARIANT + "      - id: generate_reason\n        prompt: why.j2\n"
    with pytest.raises(CatalogErrors, match="examples"):
        analyze_prompt(catalog, tmp_path)
