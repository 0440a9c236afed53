"""XLSX sheet names fit Excel's 31 characters by whole words, never cut mid-word (issue 21, part 7)."""

from django.utils import translation

from costs.exports import SHEET_NAME_MAX
from costs.exports_xlsx import _option_sheet_name, _sheet_title


def test_long_russian_option_name_is_shortened_by_words():
    option = {"kind": "cloud_spot", "detail": {"accelerator": "NVIDIA H100 SXM5 80GB"}}
    with translation.override("ru"):
        name = _option_sheet_name(12, option)
    assert len("12. Облако, спот · NVIDIA H100 SXM5 80GB") > SHEET_NAME_MAX
    assert name == "12. Облако, спот · NVIDIA H100"  # whole words, 31 characters or fewer
    assert len(name) <= SHEET_NAME_MAX


def test_no_dangling_separator_when_what_runs_does_not_fit():
    option = {"kind": "cloud_commit_3y", "detail": {"accelerator": "NVIDIA-GH200-Grace-Hopper-Superchip"}}
    with translation.override("ru"):
        assert _option_sheet_name(3, option) == "3. Облако, 3 года"


def test_sheet_title_shortens_by_words_and_stays_unique():
    used: set[str] = set()
    text = "Очень длинное название листа для закупки"
    first = _sheet_title(text, used)
    second = _sheet_title(text, used)
    assert first == "Очень длинное название листа"
    assert second == "Очень длинное название (2)"
    assert all(len(t) <= SHEET_NAME_MAX for t in (first, second))


def test_a_single_word_longer_than_the_limit_is_the_only_cut_inside_a_word():
    assert _sheet_title("x" * 40, set()) == "x" * SHEET_NAME_MAX
    assert _sheet_title("Inputs: [draft]?", set()) == "Inputs draft"


def test_control_characters_a_worksheet_cannot_hold_are_left_out():
    """A supplier quote's text with control characters once made the XLSX export a 500 (schemathesis)."""
    import io

    import openpyxl

    from costs.exports_xlsx import _write_table, xlsx_value

    assert xlsx_value("quote\x1b #1\x07") == "quote #1" and xlsx_value(3) == 3
    wb = openpyxl.Workbook()
    _write_table(wb.active, ["Source\x01"], [["supplier quote #74: ООО\x0b «Пример»"]], start_row=1,
                 money_cols=set(), currency="RUB")
    wb.save(buf := io.BytesIO())
    sheet = openpyxl.load_workbook(io.BytesIO(buf.getvalue())).active
    assert [sheet.cell(1, 1).value, sheet.cell(2, 1).value] == ["Source", "supplier quote #74: ООО «Пример»"]
    assert _sheet_title("Итоги\x1b", set()) == "Итоги"
