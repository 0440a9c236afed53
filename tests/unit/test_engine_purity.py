"""The engines are pure: no Django, DRF or Celery import anywhere under */engine/ or in
catalog.domain, the framework-free core they share (the only part of catalog they may import).
.importlinter states the same and more as contracts (make lint); this test keeps it in the suite."""

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
FORBIDDEN = ("django", "rest_framework", "celery", "catalog", "costs.models", "planner.models")
ENGINE_FILES = sorted([*ROOT.glob("planner/engine/**/*.py"), *ROOT.glob("costs/engine/**/*.py"),
                       *ROOT.glob("catalog/domain/**/*.py")])
SHARED_CORE = "catalog.domain"


def _imported_modules(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.extend(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.append(node.module)
    return names


def _forbidden(modules: list[str]) -> list[str]:
    return [m for m in modules if (m.split(".")[0] in FORBIDDEN or m in FORBIDDEN)
            and not (m == SHARED_CORE or m.startswith(SHARED_CORE + "."))]


def test_engine_packages_exist():
    assert (ROOT / "planner/engine/__init__.py").exists()
    assert (ROOT / "costs/engine/__init__.py").exists()


@pytest.mark.parametrize("path", ENGINE_FILES, ids=lambda p: str(p.relative_to(ROOT)))
def test_engine_module_imports_no_framework(path):
    bad = _forbidden(_imported_modules(path))
    assert not bad, f"{path.relative_to(ROOT)} imports {bad}"


def test_purity_check_catches_a_django_import(tmp_path):
    sample = tmp_path / "x.py"
    sample.write_text("from django.db import models\nimport numpy\n")
    assert _forbidden(_imported_modules(sample)) == ["django.db"]


def test_purity_check_allows_the_shared_core_only(tmp_path):
    sample = tmp_path / "x.py"
    sample.write_text("from catalog.domain.messages import Msg\nfrom catalog.models import Accelerator\n")
    assert _forbidden(_imported_modules(sample)) == ["catalog.models"]
