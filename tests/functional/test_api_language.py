"""The API answers a saved plan in the language of Accept-Language: with `ru` every engine
explanation, reason, note and warning is in Russian (Cyrillic, no English template text), with
`en` in English; the cached body, the ETag and Vary keep the two languages apart."""

import re

import pytest

from planner.choices import Role, VersionStatus
from tests.functional.api_fixtures import *  # noqa: F403

pytestmark = pytest.mark.django_db

# Engine prose (planner.i18n.TEXT_KEYS minus names that are data: sources, units, layer names).
PROSE_KEYS = {"explain", "why", "reason", "warnings", "notes", "message", "note", "summary", "remedies",
              "assumptions", "why_not", "text", "item"}
CYRILLIC = re.compile(r"[А-Яа-яЁё]")
ENGLISH_WORDS = re.compile(r"\b[a-z]{3,}\b(?:[ ,;:()/-]+\b[a-z]{3,}\b){2,}")  # 3+ English words in a row


def _texts(tree, path=""):
    """(path, text) of every engine prose string in a result."""
    if isinstance(tree, dict):
        for k, v in tree.items():
            if k.endswith("_i18n"):
                continue
            p = f"{path}.{k}"
            if k in PROSE_KEYS and isinstance(v, str):
                yield p, v
            elif k in PROSE_KEYS and isinstance(v, list):
                for i, x in enumerate(v):
                    if isinstance(x, str):
                        yield f"{p}[{i}]", x
                    else:
                        yield from _texts(x, f"{p}[{i}]")
            else:
                yield from _texts(v, p)
    elif isinstance(tree, list):
        for i, x in enumerate(tree):
            yield from _texts(x, f"{path}[{i}]")


@pytest.fixture
def saved(world, real_result):  # noqa: F811
    make_version(world.plan, 2, VersionStatus.DONE, result=real_result)  # noqa: F405
    return client_for(world.users[str(Role.VIEWER)]), f"/api/v1/plans/{world.plan.id}/versions/2/"  # noqa: F405


def _result(client, url, lang):
    response = client.get(url, HTTP_ACCEPT_LANGUAGE=lang)
    assert response.status_code == 200
    assert response["Content-Language"] == lang
    return response, response.json()["result"]


def test_russian_accept_language_gives_russian_explanations_and_warnings(saved):
    client, url = saved
    _response, en = _result(client, url, "en")
    _response, ru = _result(client, url, "ru")
    en_texts, ru_texts = dict(_texts(en)), dict(_texts(ru))
    assert en_texts.keys() == ru_texts.keys() and len(en_texts) > 20
    # the kinds of text a reader needs: sizing explanations and warnings, cost notes, the decision's why
    assert any(".sizing." in p and ".explain" in p for p in ru_texts)
    assert any("warnings" in p for p in ru_texts) and any("notes" in p for p in ru_texts)
    english_left = []
    for path, en_text in en_texts.items():
        ru_text = ru_texts[path]
        if not ENGLISH_WORDS.search(en_text):
            continue  # a number, a name or a unit: the same in both languages
        if not CYRILLIC.search(ru_text) or en_text in ru_text:
            english_left.append(f"{path}: {ru_text[:120]}")
    assert not english_left, "\n".join(english_left[:20])


def test_english_accept_language_gives_english(saved):
    client, url = saved
    _response, en = _result(client, url, "en")
    texts = [t for _p, t in _texts(en)]
    assert texts and not any(CYRILLIC.search(t) for t in texts)
    assert any(ENGLISH_WORDS.search(t) for t in texts)


def test_the_cached_body_and_etag_are_per_language(saved):
    """A done version's body is cached and served with an ETag: a Russian reader after an
    English one (and the other way round) still gets their own language."""
    client, url = saved
    en_response, en = _result(client, url, "en")
    ru_response, ru = _result(client, url, "ru")
    again_response, again = _result(client, url, "en")
    assert en == again and en != ru
    assert en_response["ETag"] != ru_response["ETag"] == _result(client, url, "ru")[0]["ETag"]
    assert "Accept-Language" in ru_response["Vary"]
    # an English ETag does not make a Russian request a 304
    stale = client.get(url, HTTP_ACCEPT_LANGUAGE="ru", HTTP_IF_NONE_MATCH=en_response["ETag"])
    assert stale.status_code == 200 and CYRILLIC.search(stale.content.decode())
    fresh = client.get(url, HTTP_ACCEPT_LANGUAGE="ru", HTTP_IF_NONE_MATCH=ru_response["ETag"])
    assert fresh.status_code == 304
