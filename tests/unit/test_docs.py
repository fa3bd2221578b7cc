"""Generated docs stay in step with the code."""

from pathlib import Path

import pytest

from ccscope.cli import controllers_markdown

DOC = Path(__file__).resolve().parents[2] / "docs" / "controllers.md"


def test_controllers_reference_matches_the_registry():
    if not DOC.exists():
        pytest.skip("docs/controllers.md is not in this checkout")
    assert DOC.read_text() == controllers_markdown(), "regenerate with: ccscope controllers --markdown > docs/controllers.md"
