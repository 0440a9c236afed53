"""Every pattern the OpenAPI document publishes means the same under Python's re (how the server
validates a body) and ECMA-262 (what JSON Schema patterns mean: generated clients and schemathesis
read them so). A CI run failed on "\\x1f" as a supplier: ECMA's \\S matched it, Python's did not."""

from __future__ import annotations

import re

import pytest
import regress
from drf_spectacular.generators import SchemaGenerator

from planner.api.input_schema_parts import MODEL_API_PATTERN, VISIBLE_PATTERN

# Where the engines' whitespace, line-terminator and control sets differ, and ordinary text.
_ODD = "\t\n\v\f\r \x00\x01\x1c\x1d\x1e\x1f\x7f\x85\x9f\xa0\u1680\u180e\u2000\u200a\u200b\u2028\u2029\u202f\u205f\u3000\ufeff"
PROBES = [*_ODD, "a", "7", "/", "Я", "0.5", "42", "42\n", "42\r", "1.000001\n", "a/b", "a/b\n", "a\n/b",
          "a/\nb", "a/b\u2028c", "\x1f/b", "a/\x1f", "\ufeff/b", "a/\x85", " a / b ", "\x85a", "a\x1f"]


# drf-spectacular's descriptions of DRF's DecimalField and SlugField: DRF checks those by parsing the
# value (Decimal, Django's slug validator), not with this regex, so Python's reading of it is moot.
_DRF_DESCRIBED = re.compile(r"\^-\?\\d\{0,\d+\}\(\?:\\\.\\d\{0,\d+\}\)\?\$|\^\[-a-zA-Z0-9_\]\+\$")


def _patterns(node, out: set):
    if isinstance(node, dict):
        if isinstance(node.get("pattern"), str) and not _DRF_DESCRIBED.fullmatch(node["pattern"]):
            out.add(node["pattern"])
        for value in node.values():
            _patterns(value, out)
    elif isinstance(node, list):
        for value in node:
            _patterns(value, out)
    return out


@pytest.fixture(scope="module")
def published(django_db_setup, django_db_blocker):
    with django_db_blocker.unblock():
        return _patterns(SchemaGenerator().get_schema(request=None, public=True), set())


def test_the_document_publishes_the_patterns_this_test_is_about(published):
    assert VISIBLE_PATTERN in published and MODEL_API_PATTERN in published
    assert len(published) >= 3


def test_each_published_pattern_means_the_same_in_python_and_ecma(published):
    differ = [(p, s) for p in sorted(published) for s in PROBES
              if (re.search(p, s) is not None) != (regress.Regex(p).find(s) is not None)]
    assert differ == []


def test_visible_means_the_same_on_every_code_point():
    python, ecma = re.compile(VISIBLE_PATTERN), regress.Regex(VISIBLE_PATTERN)
    points = [c for c in range(0x110000) if not 0xD800 <= c <= 0xDFFF]
    differ = [hex(c) for c in points if (python.search(chr(c)) is not None) != (ecma.find(chr(c)) is not None)]
    assert differ == []
    # What it refuses: nothing a reader sees.
    assert not any(python.search(ch) for ch in _ODD if ch not in "\u180e\u200b")
    assert python.search("Я") and python.search(" a ")


def test_bare_whitespace_classes_did_differ():
    # Why the patterns spell their sets out: the engines disagree on a bare \S and on "$".
    assert re.search(r"\S", "\x1f") is None and regress.Regex(r"\S").find("\x1f") is not None
    assert re.search(r"^42$", "42\n") is not None and regress.Regex(r"^42$").find("42\n") is None
