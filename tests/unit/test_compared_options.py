"""What page 1 of the PDF, the page and the XLSX compare (costs.order.compared_options) and what the
result keeps in full for them (costs.engine.presented): the decided option and the cheapest of each
other way of paying; with one way of paying only (an agent on model APIs), the cheapest of each other
provider, so a budget meeting still sees what else it could buy."""

from costs.engine.presented import SAME_KIND_DETAILED_MAX, presented
from costs.order import SAME_KIND_COMPARED_MAX, compared_options


def _api(provider, model, total):
    return {"id": f"api|{provider}|{model}", "kind": "api", "detail": {"provider": provider, "model": model},
            "totals": {"net": str(total)}}


APIS = [_api("OpenAI", "gpt-4o-mini", 100), _api("OpenAI", "gpt-5.4-mini", 110), _api("DeepSeek", "chat", 120),
        _api("Sber", "GigaChat-2-Lite", 130), _api("Sber", "GigaChat-2-Pro", 140), _api("Yandex Cloud", "gpt-oss-20b", 150),
        _api("Google", "flash", 160), _api("Anthropic", "haiku", 170)]


def test_one_way_of_paying_compares_the_cheapest_of_each_other_provider():
    out = compared_options(APIS, decided_id=APIS[0]["id"])
    assert [o["detail"]["provider"] for o in out] == ["OpenAI", "DeepSeek", "Sber", "Yandex Cloud", "Google"]
    assert len(out) == SAME_KIND_COMPARED_MAX
    assert all(o["detail"]["model"] != "GigaChat-2-Pro" for o in out)  # a provider's dearer model is not repeated


def test_several_ways_of_paying_compare_one_per_kind_as_before():
    gpu = [{"id": "a", "kind": "cloud_on_demand", "detail": {"provider": "Lambda"}},
           {"id": "b", "kind": "cloud_on_demand", "detail": {"provider": "AWS"}},
           {"id": "c", "kind": "onprem", "detail": {}}, APIS[0], APIS[2]]
    assert [o["id"] for o in compared_options(gpu, decided_id="a")] == ["a", "c", APIS[0]["id"]]


def test_the_result_keeps_in_full_what_is_compared():
    ids, kinds = [o["id"] for o in APIS], [o["kind"] for o in APIS]
    providers = [o["detail"]["provider"] for o in APIS]
    decision = {"order": list(range(len(APIS))), "recommended": {"id": ids[0]}}
    kept, full = presented(ids, kinds, decision, {}, providers=providers)
    assert kept == list(range(len(APIS)))  # every option stays listed
    assert full == {o["id"] for o in compared_options(APIS, decided_id=ids[0])}
    assert len(full) == SAME_KIND_DETAILED_MAX == SAME_KIND_COMPARED_MAX
