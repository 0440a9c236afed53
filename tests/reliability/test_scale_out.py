"""Scale-out: two worker processes with different node names share one queue's work."""

import pytest

from config.celery import app

from .conftest import WorkerProcess, all_finished, statuses, wait_until
from .helpers import submit_plans

pytestmark = [pytest.mark.worker, pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("catalog_loaded")]


def _tasks_run_by(node: str) -> int:
    stats = app.control.inspect(destination=[node], timeout=2).stats() or {}
    return stats.get(node, {}).get("total", {}).get("planner.compute_plan_version", 0)


def test_work_spreads_over_two_workers(worker_queue):
    queue, workers = worker_queue
    # Each computation holds its worker for 0.5 s, so a second worker has to pick up the rest.
    slow = {"FAULT_INJECTION_COMPUTE_DELAY_SECONDS": "0.5"}
    workers += [WorkerProcess(queue=queue, node=f"{queue}-a", extra_env=slow).start(),
                WorkerProcess(queue=queue, node=f"{queue}-b", extra_env=slow).start()]
    for w in workers:
        w.wait_ready()

    version_ids = submit_plans(8)
    wait_until(lambda: all_finished(version_ids), timeout_s=90, what="8 plans to finish")

    per_worker = {w.node: _tasks_run_by(w.node) for w in workers}
    print("SCALE-OUT", per_worker)
    assert sum(per_worker.values()) == 8, per_worker
    assert all(n >= 1 for n in per_worker.values()), per_worker
    assert set(statuses(version_ids).values()) == {"done"}
