"""Generated docs stay in step with the code."""

from pathlib import Path

from ccscope.cli import controllers_markdown

DOC = Path(__file__).resolve().parents[2] / "docs" / "controllers.md"


def test_controllers_reference_matches_the_registry():
    # The reference is committed beside these tests: a checkout without it is a defect, not a reason to skip.
    assert DOC.is_file(), f"{DOC} is missing: regenerate with: ccscope controllers --markdown > docs/controllers.md"
    assert DOC.read_text() == controllers_markdown(), "regenerate with: ccscope controllers --markdown > docs/controllers.md"
