"""Calibration in headless Chromium (issue 12): upload a vLLM result file, read the scoreboard,
activate the calibration, create a plan that uses it. Screenshots: test-artifacts/screenshots/."""

from pathlib import Path

import pytest
from playwright.sync_api import expect

from tests.functional.browser.test_planner_journey import (  # noqa: F401
    PLAN_TIMEOUT_MS,
    catalog,
    log_in,
    owner,
)

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

VLLM_FILE = Path(__file__).resolve().parents[2] / "data" / "calibration" / "vllm_qwen3_32b_h100_tp2_c16.json"


def test_upload_scoreboard_activate_and_plan(page, live_server, owner, screenshots):  # noqa: F811
    log_in(page, live_server, owner)
    page.locator("nav").get_by_role("link", name="Calibration").click()
    expect(page.locator("#no-runs")).to_be_visible()

    upload = page.locator("#upload-form")
    upload.get_by_label("Result file").set_input_files(str(VLLM_FILE))
    upload.get_by_label("Accelerator", exact=True).fill("H100 SXM")
    upload.get_by_label("Number of accelerators", exact=True).fill("2")
    upload.get_by_label("Precision").select_option("bf16")
    screenshots(page, "upload-form")
    upload.get_by_role("button", name="Upload and record").click()

    group = page.locator(".calibration-group").first
    expect(group).to_contain_text("H100 SXM5 80GB · vllm · bf16")
    expect(group.locator("table.scoreboard tbody tr")).to_have_count(1)
    expect(group.locator("table.scoreboard")).to_contain_text("187.9")  # measured TTFT
    expect(group).to_contain_text("Not activated")
    screenshots(page, "scoreboard")

    group.get_by_role("button", name="Activate").click()
    expect(page.locator(".calibration-group").first).to_contain_text("Active: efficiency prefill")
    screenshots(page, "activated")

    page.goto(f"{live_server.url}/workloads/new/")
    page.get_by_label("Name", exact=True).fill("Qwen chat on our H100s")
    page.get_by_label("Model preset").select_option("qwen3-32b")
    expect(page.get_by_label("Hidden size", exact=True)).to_have_value("5120")
    page.get_by_label("Concurrent requests").fill("16")
    page.get_by_label("Input tokens per request").fill("1024")
    page.get_by_label("Output tokens per request").fill("128")
    page.get_by_label("Accelerator", exact=True).fill("H100 SXM")
    page.get_by_role("button", name="Compute the plan").click()
    expect(page.locator("#costs")).to_be_visible(timeout=PLAN_TIMEOUT_MS)
    expect(page.locator("body")).to_contain_text("from 1 run(s) on H100 SXM5 80GB, vLLM 0.12.0, 2026-11-20")
    screenshots(page, "plan-calibrated")
