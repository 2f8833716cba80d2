"""Debian's Chromium driven by Playwright, for the tests that open a page (Playwright
downloads no browser of its own here)."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


@contextmanager
def launched_chromium() -> Iterator[Any]:
    """A headless Chromium for as long as the block runs; without one the test is skipped,
    and fails in CI, which installs it."""
    if CHROMIUM is None:
        if os.environ.get("CI"):
            pytest.fail("chromium is not installed: .ci/run installs it with apt-get install -y chromium")
        pytest.skip("needs Debian's chromium (apt-get install -y chromium)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        yield launched
        launched.close()
