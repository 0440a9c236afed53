"""The Makefile's entry points as a newcomer uses them (issue 21, part 11), read with `make -n`
(prints the commands, runs none)."""

import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")


# CI runs the tests under make: its MAKEFLAGS/MAKELEVEL would make `make -n` print "Leaving directory"
# lines, and its PYTEST_ARGS would stand in for the default this file checks.
_OUTER_MAKE = ("MAKEFLAGS", "MFLAGS", "MAKELEVEL", "MAKEOVERRIDES", "PYTEST_ARGS")


def _last_command(*args: str, env: dict | None = None) -> str:
    clean_env = {k: v for k, v in os.environ.items() if k not in _OUTER_MAKE}
    out = subprocess.run(["make", "--no-print-directory", "-n", *args], cwd=ROOT, capture_output=True,
                         text=True, check=True, env={**clean_env, **(env or {})}).stdout
    return out.strip().splitlines()[-1]


def test_make_test_uses_every_core_by_default():
    assert _last_command("test").endswith("pytest -p no:cacheprovider -rs -n auto")
    assert _last_command("test", "PYTEST_ARGS=").endswith("-rs -n auto")


def test_make_test_takes_ci_arguments_instead():
    assert _last_command("test", "PYTEST_ARGS=-n 2 --durations=15").endswith("-rs -n 2 --durations=15")


def test_make_run_serves_on_the_host_given_as_the_readme_says():
    assert _last_command("run", env={"HOST": "0.0.0.0:8080"}).endswith("manage.py runserver 0.0.0.0:8080")
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "make run HOST=0.0.0.0:8001" in readme and "HOST=0.0.0.0:8001 make run" in readme
