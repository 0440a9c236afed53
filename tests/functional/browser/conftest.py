"""Browser journey fixtures: Debian's chromium driven by Playwright against live_server."""

import os
import shutil
from pathlib import Path

import pytest

from tests.conftest import skip_or_fail

# Playwright runs an event loop in this thread; the ORM calls next to it are fine in tests.
os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")

CHROMIUM = "/usr/bin/chromium"
SCREENSHOTS = Path(__file__).resolve().parents[3] / "test-artifacts" / "screenshots"
CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]


@pytest.fixture(scope="session")
def browser_type_launch_args(browser_type_launch_args):
    if not Path(CHROMIUM).exists() or shutil.which("chromium") is None:
        skip_or_fail("chromium is not installed (apt-get install -y chromium)")
    return {**browser_type_launch_args, "executable_path": CHROMIUM, "args": CHROMIUM_ARGS}


@pytest.fixture
def screenshots(request):
    """shot(name) writes test-artifacts/screenshots/<test>/<nn>-<name>.png."""
    folder = SCREENSHOTS / request.node.name
    shutil.rmtree(folder, ignore_errors=True)  # only this run's steps
    folder.mkdir(parents=True)
    counter = {"n": 0}

    def shot(page, name: str) -> Path:
        counter["n"] += 1
        path = folder / f"{counter['n']:02d}-{name}.png"
        page.screenshot(path=str(path), full_page=True)
        return path

    return shot
