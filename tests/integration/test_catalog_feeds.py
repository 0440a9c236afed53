"""Feed importers against recorded files served from a local HTTP server (127.0.0.1 only, never the internet).

Bank of Russia XML_daily: the right rates (Nominal and decimal comma handled); a malformed file, an HTTP
error, a timeout and an empty body each leave the rates unchanged and record a clear error.
SkyPilot vms.csv: offers per region (spot = min over zones), idempotent, price history, bad files change nothing.
"""

import datetime as dt
import threading
import time
from decimal import Decimal
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from io import StringIO
from pathlib import Path

import pytest
from django.conf import settings
from django.core.management import call_command
from django.core.management.base import CommandError

from catalog.feeds.cbr import import_cbr_daily, parse_cbr_daily
from catalog.feeds.skypilot import import_skypilot_vms
from catalog.models import CloudOffer, ExchangeRate, FeedImportRun

pytestmark = pytest.mark.django_db
CBR = Path(__file__).resolve().parents[1] / "data" / "cbr"
RECORDED = (CBR / "XML_daily_2025-04-01.xml").read_bytes()
NO_VUNIT = (CBR / "XML_daily_2026-07-01_no_vunitrate.xml").read_bytes()

VMS = (
    "InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,GpuInfo,Price,SpotPrice,Region,AvailabilityZone\n"
    "p5.48xlarge,H100,8,192,2048,\"{'Gpus': []}\",98.32,40.10,us-east-1,us-east-1a\n"
    "p5.48xlarge,H100,8,192,2048,\"{'Gpus': []}\",98.32,38.50,us-east-1,us-east-1b\n"
    "m5.large,,,2,8,,0.096,0.04,us-east-1,us-east-1a\n"
    ",A100,1,,,,2.93,1.17,us-central1,us-central1-a\n"
)


class _Handler(BaseHTTPRequestHandler):
    routes: dict = {}

    def do_GET(self):  # noqa: N802 (http.server API)
        path = self.path.split("?", 1)[0]
        status, body, delay = self.routes.get(path, (404, b"not found", 0))
        if delay:
            time.sleep(delay)
        self.send_response(status)
        self.send_header("Content-Type", "application/xml; charset=windows-1251")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        try:
            self.wfile.write(body)
        except (BrokenPipeError, ConnectionResetError):
            pass

    def log_message(self, *args):
        pass


@pytest.fixture
def server():
    _Handler.routes = {
        "/XML_daily.asp": (200, RECORDED, 0),
        "/old.asp": (200, NO_VUNIT, 0),
        "/malformed.asp": (200, RECORDED[: len(RECORDED) // 2], 0),
        "/error.asp": (503, b"Service Unavailable", 0),
        "/slow.asp": (200, RECORDED, 2.0),
        "/empty.asp": (200, b"", 0),
        "/not-rates.asp": (200, b"<?xml version='1.0'?><html><body>maintenance</body></html>", 0),
        "/comma-missing.asp": (200, RECORDED.replace(b"85,4963", b"85;4963"), 0),
        "/vms.csv": (200, VMS.encode(), 0),
    }
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


def rates():
    return sorted(ExchangeRate.objects.values_list("rate_date", "base", "quote", "rate"))


def test_parse_handles_nominal_and_decimal_comma():
    day, parsed = parse_cbr_daily(RECORDED)
    by = {r.char_code: r for r in parsed}
    assert day.isoformat() == "2025-04-01"
    assert by["USD"].rate == Decimal("85.4963")
    assert by["AMD"].nominal == 100 and by["AMD"].rate == Decimal("0.218342")  # 21,8342 per 100
    assert by["VND"].rate == Decimal("0.0034423")  # 34,4230 per 10000
    assert by["KRW"].rate == Decimal("0.0582996")


def test_recorded_file_loads_the_right_rates(server):
    run = import_cbr_daily(url=f"{server}/XML_daily.asp")
    assert run.status == "done", run.error
    got = {(r.base, r.quote): r for r in ExchangeRate.objects.filter(rate_date="2025-04-01")}
    assert set(got) == {("USD", "RUB"), ("EUR", "RUB")}  # only the catalog's currencies
    assert got[("USD", "RUB")].rate == Decimal("85.4963")
    assert got[("EUR", "RUB")].rate == Decimal("92.4276")
    assert got[("USD", "RUB")].source_date.isoformat() == "2025-04-01"
    assert "R01235" in got[("USD", "RUB")].notes
    assert run.counts["created"] == 2
    again = import_cbr_daily(url=f"{server}/XML_daily.asp")
    assert again.counts == {"created": 0, "updated": 0, "unchanged": 2, "date": "2025-04-01"}


def test_file_without_vunitrate_loads(server):
    run = import_cbr_daily(url=f"{server}/old.asp")
    assert run.status == "done", run.error
    assert ExchangeRate.objects.get(rate_date="2026-07-01", base="USD").rate == Decimal("78.2696")


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("/malformed.asp", "malformed XML"),
        ("/error.asp", "HTTP 503"),
        ("/slow.asp", "timeout"),
        ("/empty.asp", "empty body"),
        ("/not-rates.asp", "expected <ValCurs>"),
        ("/comma-missing.asp", "Valute #4 (USD) Value: '85;4963' is not a number"),
        ("/missing.asp", "HTTP 404"),
    ],
)
def test_bad_fetch_changes_nothing_and_records_the_error(server, path, expected):
    import_cbr_daily(url=f"{server}/old.asp")
    before = rates()
    run = import_cbr_daily(url=f"{server}{path}", timeout_s=0.5)
    assert rates() == before
    assert run.status == "failed"
    assert expected in run.error
    assert FeedImportRun.objects.get(pk=run.pk).error == run.error  # recorded


def test_connection_refused_is_a_clear_error():
    run = import_cbr_daily(url="http://127.0.0.1:9/XML_daily.asp", timeout_s=0.5)
    assert run.status == "failed" and "cannot connect" in run.error


def test_command_exits_non_zero_and_names_the_error(server):
    with pytest.raises(CommandError, match="HTTP 503"):
        call_command("import_cbr_rates", url=f"{server}/error.asp")
    call_command("import_cbr_rates", url=f"{server}/XML_daily.asp", date="2025-04-01")
    assert ExchangeRate.objects.filter(rate_date="2025-04-01").count() == 2


def test_daily_task_uses_the_configured_url(server, settings):
    from catalog.tasks import import_cbr_daily_task

    settings.CBR_DAILY_URL = f"{server}/XML_daily.asp"
    assert import_cbr_daily_task.delay().get() == "done"
    assert FeedImportRun.objects.latest("pk").source == settings.CBR_DAILY_URL


def test_beat_schedule_in_settings_and_compose():
    entry = settings.CELERY_BEAT_SCHEDULE["import-cbr-daily"]
    assert entry["task"] == "catalog.import_cbr_daily"
    assert entry["schedule"].hour == {settings.CBR_DAILY_HOUR_UTC}
    compose = (Path(settings.BASE_DIR) / "docker-compose.yml").read_text()
    assert "CBR_DAILY_URL" in compose and '"beat"' in compose
    prod = (Path(settings.BASE_DIR) / "config" / "settings_production.py").read_text()
    assert "import-cbr-daily" in prod


def test_skypilot_csv_from_url(server):
    run = import_skypilot_vms(source=f"{server}/vms.csv", provider="AWS")
    assert run.status == "done", run.error
    p5 = CloudOffer.objects.get(provider="AWS", instance_type="p5.48xlarge", valid_to__isnull=True)
    assert p5.price_on_demand_per_hour == Decimal("98.32")
    assert p5.price_spot_per_hour == Decimal("38.50")  # min over the zones
    assert p5.source_gpu_model == "H100" and p5.currency == "USD" and p5.includes_vat is False
    gpu_only = CloudOffer.objects.get(provider="AWS", region="us-central1")
    assert gpu_only.price_basis == "accelerator_only"
    assert not CloudOffer.objects.filter(instance_type="m5.large").exists()
    again = import_skypilot_vms(source=f"{server}/vms.csv", provider="AWS")
    assert again.counts["unchanged"] == 2 and again.counts["created"] == 0


def test_skypilot_price_change_keeps_history(server, tmp_path):
    import datetime as dt

    import_skypilot_vms(source=f"{server}/vms.csv", provider="AWS", today=dt.date(2026, 11, 1))
    changed = tmp_path / "vms.csv"
    changed.write_text(VMS.replace("98.32", "90.00"))
    run = import_skypilot_vms(source=str(changed), provider="AWS", today=dt.date(2026, 12, 1))
    assert run.counts["closed"] == 1 and run.counts["created"] == 1
    rows = CloudOffer.objects.filter(instance_type="p5.48xlarge").order_by("valid_from")
    assert [(r.valid_from.isoformat(), r.valid_to and r.valid_to.isoformat(), r.price_on_demand_per_hour) for r in rows] == [
        ("2026-11-01", "2026-12-01", Decimal("98.32")),
        ("2026-12-01", None, Decimal("90.00")),
    ]


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ("Name,Price\nx,1\n", "missing column(s)"),
        (VMS.replace("98.32,40.10", "abc,40.10"), "column Price: 'abc' is not a number"),
        (VMS.replace("98.32,38.50", "99.00,38.50"), "differs from"),
        (VMS.replace("H100,8", "H100,0"), "AcceleratorCount"),
        ("", "empty body"),
    ],
)
def test_skypilot_bad_file_changes_nothing(tmp_path, body, expected):
    f = tmp_path / "vms.csv"
    f.write_text(body)
    before = list(CloudOffer.objects.values())
    run = import_skypilot_vms(source=str(f), provider="AWS")
    assert run.status == "failed" and expected in run.error
    assert list(CloudOffer.objects.values()) == before


def test_skypilot_http_error_changes_nothing(server):
    with pytest.raises(CommandError, match="HTTP 404"):
        call_command("import_skypilot_catalog", f"{server}/nope.csv", provider="AWS")


def test_import_cbr_rates_from_a_saved_file(tmp_path):
    """--file: the bank's saved XML_daily imports offline with the bank named as the source; a file that is
    not the bank's is refused naming the file and the problem, and no rate changes."""
    from catalog.models import ExchangeRate

    good = tmp_path / "XML_daily.xml"
    good.write_bytes(RECORDED)
    out = StringIO()
    call_command("import_cbr_rates", file=str(good), stdout=out)
    assert "Bank of Russia rates of 2025-04-01:" in out.getvalue()
    usd = ExchangeRate.objects.get(rate_date=dt.date(2025, 4, 1), base="USD", quote="RUB")
    assert usd.rate == Decimal("85.4963")
    assert usd.source_title == "Bank of Russia official exchange rates (XML_daily)"
    assert usd.source_url == "https://www.cbr.ru/scripts/XML_daily.asp?date_req=01/04/2025 (saved file XML_daily.xml)"
    before = list(ExchangeRate.objects.order_by("pk").values_list("pk", "rate"))
    bad = tmp_path / "rates.xml"
    bad.write_text('<?xml version="1.0"?><rss><channel><item>USD 80</item></channel></rss>', encoding="utf-8")
    with pytest.raises(CommandError) as exc:
        call_command("import_cbr_rates", file=str(bad))
    assert str(exc.value).startswith(f"{bad}: not imported, no rate changed")
    assert "not a Bank of Russia XML_daily file: the root element is <rss>, expected <ValCurs>" in str(exc.value)
    with pytest.raises(CommandError, match="no such file"):
        call_command("import_cbr_rates", file=str(tmp_path / "missing.xml"))
    assert list(ExchangeRate.objects.order_by("pk").values_list("pk", "rate")) == before
