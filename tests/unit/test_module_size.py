"""No application module passes 500 lines (issue 20, part 9): a longer one is split along the lines
its domain already draws (planner/engine/compute.py, planner/api/input_schema.py and
planner/options_compare.py were), so each can be read whole.

Application code is every .py file of the four Django projects' packages; migrations are
generated, and tests, benchmarks and scripts are not application code.
"""

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("catalog", "costs", "planner", "config")
NOT_APPLICATION = {"migrations", "tests", "bench", "scripts"}
MAX_LINES = 500


def application_modules(root: Path = ROOT) -> list[Path]:
    return sorted(path for package in PACKAGES for path in (root / package).rglob("*.py")
                  if not NOT_APPLICATION & set(path.relative_to(root).parts))


def too_long(paths, root: Path = ROOT, max_lines: int = MAX_LINES) -> list[str]:
    """"path: N lines" for each file of more than `max_lines` lines."""
    counts = ((path, len(path.read_text(encoding="utf-8").splitlines())) for path in paths)
    return [f"{path.relative_to(root)}: {n} lines" for path, n in counts if n > max_lines]


def test_the_scan_finds_the_application():
    found = {path.relative_to(ROOT).as_posix() for path in application_modules()}
    assert len(found) > 100  # a broken scan would pass the size check below
    assert "planner/engine/compute.py" in found and "config/settings.py" in found
    assert not any("/migrations/" in path for path in found)


def test_no_application_module_passes_500_lines():
    over = too_long(application_modules())
    assert not over, f"split these along their domain's lines (at most {MAX_LINES} lines each):\n" + "\n".join(over)


def test_the_check_names_a_long_file_and_its_line_count(tmp_path):
    (tmp_path / "planner").mkdir()
    (tmp_path / "planner" / "long.py").write_text("x = 1\n" * (MAX_LINES + 1), encoding="utf-8")
    (tmp_path / "planner" / "short.py").write_text("x = 1\n" * MAX_LINES, encoding="utf-8")
    (tmp_path / "planner" / "migrations").mkdir()
    (tmp_path / "planner" / "migrations" / "0001_initial.py").write_text("x = 1\n" * 900, encoding="utf-8")
    paths = application_modules(tmp_path)
    assert [p.name for p in paths] == ["long.py", "short.py"]
    assert too_long(paths, tmp_path) == ["planner/long.py: 501 lines"]
