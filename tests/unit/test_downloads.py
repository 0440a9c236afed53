"""Download file names keep the plan's title in any script (issue 21, part 8; RFC 6266)."""

from urllib.parse import unquote

from planner.downloads import ascii_filename, attachment, export_filename


def test_russian_title_is_kept_in_the_file_name():
    assert export_filename("Агент на внешнем API модели", 1, "xlsx") == "агент-на-внешнем-api-модели-v1.xlsx"


def test_title_with_nothing_to_slug_is_plan():
    assert export_filename("???", 3, "csv") == "plan-v3.csv"


def test_ascii_fallback_transliterates_russian():
    assert ascii_filename("агент-на-внешнем-api-модели-v1.xlsx") == "agent-na-vneshnem-api-modeli-v1.xlsx"
    assert ascii_filename("щука-съезд-ёж.pdf") == "shchuka-sieezd-ezh.pdf"


def test_ascii_fallback_of_a_script_without_a_table_is_never_empty():
    assert ascii_filename("日本語-v2.csv") == "v2.csv"
    assert ascii_filename("日本語") == "download"


def test_header_carries_both_names():
    value = attachment("агент-на-внешнем-api-модели-v1.xlsx")
    assert value.startswith('attachment; filename="agent-na-vneshnem-api-modeli-v1.xlsx"; ')
    encoded = value.split("filename*=UTF-8''", 1)[1]
    assert encoded.isascii() and " " not in encoded and '"' not in encoded
    assert unquote(encoded) == "агент-на-внешнем-api-модели-v1.xlsx"


def test_ascii_name_has_only_the_plain_parameter():
    assert attachment("export-v2.xlsx") == 'attachment; filename="export-v2.xlsx"'
