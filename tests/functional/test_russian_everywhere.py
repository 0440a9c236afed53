"""A Russian user sees Russian: every page and every export of real plans (all six workload
kinds), walked in Russian, holds no Latin-script word outside an allowed list.

Allowed: units and terms that are written in Latin letters in Russian technical text (GPU,
TFLOPS, GiB, NVLink, LoRA...), and names that are data, not interface: the catalog's products,
providers, regions and price sources, the model presets, and what the user typed (plan name).
"""

import csv
import io
import re
from html.parser import HTMLParser
from unittest import mock
from urllib.parse import urlencode

import openpyxl
import pytest
from django.core.management import call_command
from django.db import transaction
from django.urls import reverse

from planner import services
from planner.api.schema import SPEC_EXAMPLES
from planner.choices import Role, VersionStatus
from tests.planner_factories import member

pytestmark = pytest.mark.django_db

LATIN_WORD = re.compile(r"(?<![A-Za-z0-9_./-])[A-Za-z][A-Za-z]+(?![A-Za-z])")
# Written in Latin letters in Russian technical text (units, standards, product families, formats).
ALLOWED = set("""
import GPU GPUs CPU RAM VRAM NVMe SSD HDD NVLink PCIe SXM InfiniBand RoCE RDMA GbE HTTP HTTPS gRPC API JSON CSV XLSX PDF
TFLOPS TFLOP FLOP FLOPs GFLOP GiB MiB KiB TiB GB TB MB KB Gb Gbit kW ms TP PP DP MFU MBU KV FFN MoE MLA RoPE
LoRA QLoRA ZeRO FSDP AdamW SGD Adafactor HNSW IVF PQ fp fp32 bf fp16 fp8 fp4 MXFP4 MXFP NVFP4 NVFP int int8 int4 bf16 TTFT TPOT CUDA ROCm
NCCL PyTorch DALI JPEG NVIDIA AMD Intel Kubernetes Docker Compose systemd Celery PostgreSQL Redis Prometheus
Grafana DCGM Slurm vLLM TensorRT LLM LLMs RAG Hugging Face config json Chinchilla Hoffmann Korthikanti et al
AWQ GPTQ OS ISO VAT USD RUB EUR CNY SLA ECC SR IOV MIG ImageNet ResNet GPUDirect NDR HDR Megatron LLaMA Llama Qwen
Mistral Mixtral Gemma DeepSeek Phi FlashAttention Marlin JetStream TGI sglang trtllm vllm MI300X GB200 TensorRT stas00 ml engineering GDDR6 BERT MiniLM BGE GLU SwiGLU FX ID id HBM HBM3 HBM3e GDDR6 DDR5 Mi Gi
GPU-hours P10 P50 P90 Monte Carlo max min ceil rps max_seq GQA
q k v o gate up down Linux XID cuDNN Container Toolkit Transformer Engine SynapseAI Gaudi TPU JAX XLA RCCL amdgpu
CP VPP NF Dubey Chowdhery PaLM MosaicML NeMo paged CAPEX OPEX flat
InferenceX gpt oss Dynamo MoRI ATOM SGLang

""".split())
# Identifiers of the workload spec that an error names on purpose (the field path).
ALLOWED_PATHS = re.compile(r"\b[a-z_]+(\.[a-z_0-9]+)+\b")

KINDS = tuple(SPEC_EXAMPLES)


class _Text(HTMLParser):
    """Visible text and the attributes a user reads (title, aria-label, placeholder, alt); code (a launch
    command, a manifest: <code>) is not prose and is left out, like a JSON example."""

    def __init__(self):
        super().__init__()
        self.parts, self.skip = [], 0

    def handle_starttag(self, tag, attrs):
        if tag in ("script", "style", "code"):
            self.skip += 1
        for k, v in attrs:
            if k in ("title", "aria-label", "placeholder", "alt") and v:
                self.parts.append(v)

    def handle_endtag(self, tag):
        if tag in ("script", "style", "code"):
            self.skip -= 1

    def handle_data(self, data):
        if not self.skip:
            self.parts.append(data)


def visible_text(html: str) -> str:
    parser = _Text()
    parser.feed(html)
    return " ".join(parser.parts)


def _data_words(*values) -> set[str]:
    words: set[str] = set()

    def walk(v):
        if isinstance(v, dict):
            for x in v.values():
                walk(x)
        elif isinstance(v, list | tuple):
            for x in v:
                walk(x)
        elif isinstance(v, str):
            words.update(re.findall(r"[A-Za-z]+", v))

    for value in values:
        walk(value)
    return words


def _rates_in_russian(rate_snapshot: dict) -> dict:
    """The rate snapshot with each shipped rate card source in its Russian text, as the pages show it."""
    from costs.data_texts import in_russian

    rates = {k: {**r, "source": in_russian(r.get("source") or "")} for k, r in (rate_snapshot.get("rates") or {}).items()}
    return {**rate_snapshot, "rates": rates}


def _catalog_words() -> set[str]:
    from django.apps import apps
    from django.db import models as m

    from planner.engine.presets import list_presets

    words: set[str] = set()
    for model in apps.get_app_config("catalog").get_models():
        fields = [f.name for f in model._meta.get_fields() if isinstance(f, m.CharField | m.URLField | m.TextField)]
        for row in model.objects.values_list(*fields):
            words |= _data_words(list(row))
    for p in list_presets():
        p = p if isinstance(p, dict) else getattr(p, "to_dict", lambda p=p: {"id": p.id, "name": p.name})()
        words |= _data_words([p.get("id"), p.get("name")])
    return words


def latin_words(text: str, allowed: set[str]) -> set[str]:
    allowed = {w.lower() for w in allowed}
    text = re.sub(r'\{[^{}]*"[^{}]*\}', " ", text)  # a JSON example is code
    text = ALLOWED_PATHS.sub(" ", text)
    text = re.sub(r"https?://\S+", " ", text)
    return {w for w in LATIN_WORD.findall(text) if w.lower() not in allowed}


@pytest.fixture(scope="module")
def plans(django_db_setup, django_db_blocker):
    """One computed plan per workload kind (real catalog, sizing and costs, in RUB with VAT),
    kept for the module; rolled back afterwards."""
    with django_db_blocker.unblock():
        atomic = transaction.atomic()
        atomic.__enter__()
        call_command("load_catalog", verbosity=0)
        call_command("load_rate_cards", verbosity=0)
        owner = member(Role.OWNER)
        team = owner.memberships.get().team
        out = {}
        with mock.patch("planner.services.plan_version_enqueue"):
            for kind in KINDS:
                spec = {k: v for k, v in SPEC_EXAMPLES[kind].items() if k != "name"}
                workload = services.workload_create(team=team, name=f"Plan {kind}", spec=spec, user=owner)
                plan = services.plan_create(team=team, workload=workload, user=owner,
                                            options={"horizon_months": 24, "currency": "RUB", "include_vat": True})
                version = plan.versions.get()
                version = services.plan_version_compute(version_id=version.id)
                assert version.status == VersionStatus.DONE, (kind, version.error)
                out[kind] = plan
            # a USD plan over another horizon: the compare page converts and aligns it
            spec = {k: v for k, v in SPEC_EXAMPLES["inference"].items() if k != "name"}
            workload = services.workload_create(team=team, name="Plan USD", spec=spec, user=owner)
            usd = services.plan_create(team=team, workload=workload, user=owner,
                                       options={"horizon_months": 12, "currency": "USD", "include_vat": False})
            version = services.plan_version_compute(version_id=usd.versions.get().id)
            assert version.status == VersionStatus.DONE, version.error
        allowed = ALLOWED | _catalog_words() | {"Plan", "Team", *owner.username.split("-")} | set(
            re.findall(r"[A-Za-z]+", " ".join([*KINDS, team.name])))
        for plan in [*out.values(), usd]:
            v = plan.versions.get()
            model = (v.result.get("sizing") or {}).get("model") or {}
            # The model's documented source and the catalog's prices and sources are data; a shipped
            # rate card source is not: it has its Russian text (costs/data/rate_card_sources_ru.csv)
            allowed |= _data_words(v.price_snapshot, _rates_in_russian(v.rate_snapshot), model.get("source"),
                                   model.get("name"))
        yield {"plans": out, "usd": usd, "owner": owner, "allowed": allowed}
        transaction.set_rollback(True)
        atomic.__exit__(None, None, None)


@pytest.fixture
def ru(client, plans):
    client.force_login(plans["owner"])
    client.defaults["HTTP_ACCEPT_LANGUAGE"] = "ru"
    return client


def _assert_russian(where: str, text: str, allowed: set[str]):
    found = latin_words(text, allowed)
    assert not found, f"{where}: English words on a Russian page: {sorted(found)}"


def _pages(plans):
    ps = list(plans["plans"].values())
    first = ps[0]
    yield "home", reverse("home")
    yield "workload form", reverse("workload_create")
    for kind, plan in plans["plans"].items():
        yield f"plan {kind}", reverse("plan_detail", args=[plan.id])
    yield "compare", reverse("plan_compare") + "?" + "&".join(f"plans={p.id}" for p in ps[:4])
    # conversion mode: a USD plan over 12 months next to RUB plans over 24 (a service, a one-off job)
    mixed = [plans["usd"], plans["plans"]["inference"], plans["plans"]["pretraining"]]
    for currency in ("RUB", "USD"):
        yield f"compare in {currency}", reverse("plan_compare") + "?" + "&".join(
            f"plans={p.id}" for p in mixed) + f"&currency={currency}"
    yield "plan in USD", reverse("plan_detail", args=[plans["usd"].id])
    # == options comparison (h/compare): the first option of up to three kinds of every plan ==
    for kind, plan in plans["plans"].items():
        options = {}
        for o in plan.versions.get().result["costs"]["options"]:
            options.setdefault(o["kind"], o["id"])
        ids = list(options.values())[:3]
        if len(ids) >= 2:
            yield f"options compare {kind}", reverse("plan_options_compare", args=[plan.id, 1]) + "?" + urlencode(
                [("options", i) for i in ids])
    yield "password", reverse("password_change")
    yield "catalog accelerators", "/catalog/accelerators/"
    yield "diff", reverse("plan_diff", args=[first.id]) + "?a=1&b=1"


def test_every_page_is_in_russian(ru, plans):
    failures = []
    for where, url in _pages(plans):
        response = ru.get(url)
        if response.status_code == 404 and where.startswith("catalog"):
            continue
        assert response.status_code == 200, (where, response.status_code)
        found = latin_words(visible_text(response.content.decode()), plans["allowed"])
        if found:
            failures.append(f"{where}: {sorted(found)}")
    assert not failures, "\n".join(failures)


@pytest.mark.parametrize("kind", KINDS)
def test_the_workload_form_of_every_kind_is_in_russian(ru, plans, kind):
    response = ru.post(reverse("workload_create"), {"kind": kind, "refresh": "1"})
    _assert_russian(f"form {kind}", visible_text(response.content.decode()), plans["allowed"])


def test_the_compare_page_converts_and_says_so_in_russian(ru, plans):
    mixed = [plans["usd"], plans["plans"]["inference"], plans["plans"]["pretraining"]]
    response = ru.get(reverse("plan_compare"), {"plans": [p.id for p in mixed], "currency": "RUB"})
    assert response.status_code == 200
    text = visible_text(response.content.decode()).replace("\xa0", " ")
    fx = plans["usd"].versions.get().price_snapshot["fx_rates"]
    usd_rub = next(r for r in fx if {r["base"], r["quote"]} == {"USD", "RUB"})
    assert f"1 USD = {usd_rub['rate'].replace('.', ',')}" in text and "курс на" in text
    assert "Все суммы в RUB в месяц." in text and "Горизонты разные (12, 24 мес.)" in text
    assert "Не приведено к общему горизонту" in text  # the one-off pre-training run
    assert response.context["basis"]["vat"] == "net"  # the USD plan is net, the RUB plans gross
    bad = ru.get(reverse("plan_compare"), {"plans": [p.id for p in mixed], "currency": "123"})  # what the user typed is echoed: digits
    assert bad.status_code == 400
    _assert_russian("compare, bad currency", visible_text(bad.content.decode()), plans["allowed"])


def test_form_errors_are_in_russian(ru, plans):
    team = plans["owner"].memberships.get().team_id
    response = ru.post(reverse("workload_create"), {"team": team, "name": "x", "kind": "inference",
                                                    "model_source": "architecture", "preset": "",
                                                    "model__architecture__layers": "32",
                                                    "model__architecture__hidden_size": "4096",
                                                    "model__architecture__attention_heads": "32",
                                                    "model__architecture__kv_heads": "5",
                                                    "model__architecture__vocab_size": "32000",
                                                    "serving__concurrency": "пять",
                                                    "horizon_months": "36", "currency": "RUB"})
    assert response.status_code == 400
    text = visible_text(response.content.decode())
    assert "должно делить" in text  # the engine's validator, in Russian
    _assert_russian("form errors", text, plans["allowed"])


def test_login_page_is_in_russian(client, plans):
    response = client.get(reverse("login"), HTTP_ACCEPT_LANGUAGE="ru")
    _assert_russian("login", visible_text(response.content.decode()), plans["allowed"])


@pytest.mark.parametrize("kind", KINDS)
def test_every_export_is_in_russian(ru, plans, kind):
    plan = plans["plans"][kind]
    url = lambda fmt: reverse("plan_version_export", args=[plan.id, 1, fmt])  # noqa: E731
    csv_text = ru.get(url("csv")).content.decode("utf-8-sig")
    cells = [c for row in csv.reader(io.StringIO(csv_text), delimiter=";") for c in row]
    _assert_russian(f"CSV {kind}", " ".join(cells), plans["allowed"])
    book = openpyxl.load_workbook(io.BytesIO(ru.get(url("xlsx")).content))
    texts = [*book.sheetnames] + [str(c.value) for ws in book for row in ws.iter_rows() for c in row
                                  if isinstance(c.value, str)]
    _assert_russian(f"XLSX {kind}", " ".join(texts), plans["allowed"])
    from pypdf import PdfReader

    pdf = PdfReader(io.BytesIO(ru.get(url("pdf")).content))
    _assert_russian(f"PDF {kind}", " ".join(p.extract_text() for p in pdf.pages), plans["allowed"])


# English number conventions on a Russian page: "1,234,567" grouping (two groups at least: "0,799"
# and "1,234" are Russian decimals), "123.45 RUB" decimals, or a long number without any grouping
# ("15108660.41").
ENGLISH_NUMBER = re.compile(r"(?<![\w.,])\d{1,3}(?:,\d{3}){2,}(?:\.\d+)?(?![\w])|\d+\.\d{2}\s*(?:RUB|USD|EUR|₽|\$)"
                            r"|(?<![\w.,/-])\d{7,}(?:[.,]\d+)?(?![\w])")


RAW_BYTES = re.compile(r"\d{1,3}(?:[\s\xa0\u202f]\d{3}){2,}\s*(?:байт|bytes)")


def test_every_page_writes_numbers_the_russian_way(ru, plans):
    failures = []
    for where, url in _pages(plans):
        response = ru.get(url)
        if response.status_code != 200:
            continue
        text = visible_text(response.content.decode())
        # and sizes in a unit that fits (GiB), never a raw byte count ("869 730 877 440 байты")
        found = ENGLISH_NUMBER.findall(text) + RAW_BYTES.findall(text)
        if found:
            failures.append(f"{where}: {found[:8]}")
    assert not failures, "\n".join(failures)


BREAKDOWN_ROW = re.compile(r'<table class="breakdown">.*?</table>', re.S)
CELL = re.compile(r"<td[^>]*>(.*?)</td>", re.S)


def test_cost_breakdown_units_and_prices_are_in_russian(ru, plans):
    """The quantity and price cells of every cost breakdown: their units are the engine's, not
    data, so the catalog's words do not excuse them ("1 462 instance-hours per month (average)",
    "8 RUB per kWh", "1 servers" were shown on Russian pages)."""
    failures = set()
    for kind, plan in plans["plans"].items():
        html = ru.get(reverse("plan_detail", args=[plan.id])).content.decode()
        for table in BREAKDOWN_ROW.findall(html):
            for row in re.findall(r"<tr>(.*?)</tr>", table, re.S):
                cells = [re.sub(r"<[^>]+>", " ", c) for c in CELL.findall(row)]
                if len(cells) < 6:
                    continue
                price_unit = re.sub(r"^[\d\s\xa0,]+(RUB|USD|EUR|CNY)", " ", cells[5].split(" · ")[0].strip())
                for text in (cells[1], price_unit if re.match(r"^[\d\s\xa0,]+[A-Z]{3} ", cells[5]) else ""):
                    found = latin_words(text, ALLOWED | {"IT"})
                    if found:
                        failures.add(f"{kind}: {text.strip()[:80]!r} {sorted(found)}")
                if re.search(r"(?<![\d\xa0 ])1\s+серверов|(?<![\d\xa0 ])1\s+серверa", cells[1]):
                    failures.add(f"{kind}: plural {cells[1]!r}")
    assert not failures, "\n".join(sorted(failures))


ACCELERATOR_ID = re.compile(r"\b(?:nvidia|amd|intel|google|aws)-[a-z0-9]+(?:-[a-z0-9]+)+\b")


def test_plan_pages_name_things_not_their_keys(ru, plans):
    """Reasons and cost items name the accelerator and the engineer's role ('нет предложения
    выделенного сервера с A10G', 'MLOps-инженер, запуск: ... × 2 хоста'), never the catalog id
    ('nvidia-a10g-24gb') or the rate key ('mlops, запуск', '× 2 хостов')."""
    failures = []
    for kind, plan in plans["plans"].items():
        text = visible_text(ru.get(reverse("plan_detail", args=[plan.id])).content.decode())
        text = re.sub(r'\{[^{}]*"[^{}]*\}', " ", text)  # a JSON example is code
        text = re.sub(r"https?://\S+", " ", text)
        found = ACCELERATOR_ID.findall(text) + re.findall(r"\b(?:mlops|infra), (?:запуск|эксплуатация)", text)
        found += re.findall(r"× [234] хостов", text) + re.findall(r"«(?:cloud|onprem|dedicated)_?[a-z0-9_]*»", text)
        if found:
            failures.append(f"{kind}: {sorted(set(found))[:6]} {[text[max(0, m.start() - 80):m.end()] for m in ACCELERATOR_ID.finditer(text)][:2]}")
    assert not failures, "\n".join(failures)


def test_unit_symbols_are_written_in_russian(ru, plans):
    """Units after a figure in Russian letters, as the engine's Russian explanations write them
    ('5,40 кВт', '593,04 мс'); the plan pages showed '5,40 kW' next to '15 кВт'."""
    failures = []
    for kind, plan in plans["plans"].items():
        text = visible_text(ru.get(reverse("plan_detail", args=[plan.id])).content.decode())
        found = re.findall(r"\d[\d\xa0\u202f ]*(?:,\d+)?\s(?:kW|ms|GB/s|Gbit/s)(?![\w/])", text)
        if found:
            failures.append(f"{kind}: {sorted(set(found))[:6]}")
    assert not failures, "\n".join(failures)


@pytest.mark.parametrize("kind", ["finetuning", "pretraining", "classic_training"])
def test_a_training_plan_does_not_speak_of_a_service(ru, plans, kind):
    """The decision's 'why' said 'спот для сервиса не рекомендуется' on training plans too."""
    html = ru.get(reverse("plan_detail", args=[plans["plans"][kind].id])).content.decode()
    start = html.index(">", html.index('id="decision-why"')) + 1  # the card's "Почему" line
    why = visible_text(html[start:html.index("</dd>", start)])[:400]
    assert why and "для сервиса" not in why, why


def test_shares_and_counts_in_sentences_are_russian_decimals(ru, plans):
    """'Загрузка 0.0002729875296520143169710806697, эффективность 0.8', an efficiency table of
    '0.60', '0.70' and 'дешевле начиная с 18606.6 запусков' were on Russian plan pages."""
    failures = []
    for kind, plan in plans["plans"].items():
        html = ru.get(reverse("plan_detail", args=[plan.id])).content.decode()
        text = visible_text(html)
        found = re.findall(r"(?:Загрузка|Работает|эффективность) \d+\.\d+|\d+\.\d+ запуск|\d[,.]\d{7,}", text)
        found += re.findall(r"<tr><td>\d+\.\d+</td>", html)
        if found:
            failures.append(f"{kind}: {sorted(set(found))[:6]}")
    assert not failures, "\n".join(failures)
