"""The worker's start-up hook: start-up objects frozen, young collections less often (config.celery)."""

import gc

import pytest

from config.celery import WORKER_GC_GEN0_THRESHOLD, freeze_startup_objects


@pytest.fixture
def gc_state():
    before = gc.get_threshold()
    yield
    gc.set_threshold(*before)
    gc.unfreeze()


def test_start_up_freezes_live_objects_and_raises_only_the_young_threshold(gc_state):
    gc.set_threshold(700, 10, 10)
    survivor = [object() for _ in range(100)]
    freeze_startup_objects()
    assert gc.get_freeze_count() >= len(survivor)
    assert gc.get_threshold() == (WORKER_GC_GEN0_THRESHOLD, 10, 10)
    assert WORKER_GC_GEN0_THRESHOLD > 700
