"""Load test: people browsing plans and the catalog, asking for estimates, creating plans.

Run by scripts/load_test.sh (gunicorn + PostgreSQL + Redis + a real Celery worker), which
writes the accounts file (LOAD_ACCOUNTS: username, password, API token, workload id per
account) and reads LOAD_STATS (5xx count and the plans created) when locust stops.
Never imported by pytest (locust patches the standard library with gevent).
"""

import itertools
import json
import os
import random
import threading

from locust import HttpUser, between, events, task

ACCOUNTS = json.load(open(os.environ["LOAD_ACCOUNTS"]))  # noqa: SIM115 - read once at start
_next_account = itertools.count()
_lock = threading.Lock()
STATS = {"server_errors": 0, "plans_created": [], "by_status": {}}

INFERENCE_SPEC = {
    "kind": "inference",
    "model": {"preset": "llama-3.1-8b"},
    "serving": {"context_length": 8192, "concurrency": 16, "requests_per_second": 2},
}
COSTS = {"horizon_months": 36, "currency": "USD", "include_vat": False, "utilisation": 0.6}


@events.request.add_listener
def _count(request_type, name, response_time, response_length, response=None, exception=None, **kw):
    status = getattr(response, "status_code", 0) or 0
    with _lock:
        STATS["by_status"][str(status)] = STATS["by_status"].get(str(status), 0) + 1
        if status >= 500:
            STATS["server_errors"] += 1


@events.test_stop.add_listener
def _write_stats(environment, **kw):
    with open(os.environ["LOAD_STATS"], "w") as f:
        json.dump(STATS, f)


class PlannerUser(HttpUser):
    wait_time = between(2, 5)

    def on_start(self):
        account = ACCOUNTS[next(_next_account) % len(ACCOUNTS)]
        self.token = account["token"]
        self.workload_id = account["workload"]
        self.plan_ids = list(account["plans"])
        # A signed-in browser: the session was created by scripts/load_test.sh, so the run
        # measures the app, not 50 simultaneous password hashes (a login storm is not the
        # workload; the lockout tests cover the login path).
        self.client.cookies.set("sessionid", account["session"])

    @task(1)
    def login_page(self):
        self.client.get("/accounts/login/", name="/accounts/login/")

    def _api(self, method, path, body=None, name=None):
        return self.client.request(method, path, json=body, name=name or path,
                                   headers={"Authorization": f"Token {self.token}"})

    @task(3)
    def home(self):
        self.client.get("/", name="/ (plans)")

    @task(2)
    def catalog(self):
        self.client.get("/catalog/", name="/catalog/")

    @task(2)
    def plan_page(self):
        self.client.get(f"/plans/{random.choice(self.plan_ids)}/", name="/plans/[id]/")

    @task(2)
    def version_status(self):
        self.client.get(f"/plans/{random.choice(self.plan_ids)}/v/1/status/", name="/plans/[id]/v/1/status/",
                        headers={"HX-Request": "true"})

    @task(3)
    def estimate(self):
        self._api("POST", "/api/v1/estimate/", {"spec": INFERENCE_SPEC, "costs": COSTS})

    @task(1)
    def create_plan(self):
        response = self._api("POST", "/api/v1/plans/", {"workload": self.workload_id, "name": "load", "costs": COSTS})
        if response.status_code in (200, 201, 202):
            plan_id = response.json()["plan"]["id"]
            with _lock:
                STATS["plans_created"].append(plan_id)
            if plan_id:
                self.plan_ids.append(plan_id)
