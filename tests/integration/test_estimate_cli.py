"""`manage.py estimate`: JSON out, database catalog first, CSV fallback, exit status 2 on bad input."""

import json
import subprocess
import sys
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

ROOT = Path(__file__).resolve().parents[2]
CSV = ROOT / "catalog" / "data" / "accelerators.csv"
SPEC = {"kind": "inference", "model": {"preset": "llama-3.1-8b"},
        "serving": {"input_tokens": 1000, "output_tokens": 200, "requests_per_second": 2}}
BAD = {"kind": "inference", "model": {"architecture": {"layers": 32, "hidden_size": 4096, "attention_heads": 32,
                                                        "kv_heads": 5, "vocab_size": 32000, "ffn_hidden_size": 11008}}}


def _write(tmp_path, data) -> Path:
    path = tmp_path / "spec.json"
    path.write_text(json.dumps(data))
    return path


@pytest.mark.django_db
def test_empty_database_catalog_falls_back_to_the_csv_and_says_so(tmp_path):
    out, err = StringIO(), StringIO()
    call_command("estimate", str(_write(tmp_path, SPEC)), stdout=out, stderr=err)
    assert "accelerators.csv" in err.getvalue()
    assert json.loads(out.getvalue())["recommendation"]["accelerator_id"]


@pytest.mark.django_db
def test_loaded_database_catalog_is_used_without_fallback(tmp_path):
    call_command("load_catalog", stdout=StringIO())
    out, err = StringIO(), StringIO()
    call_command("estimate", str(_write(tmp_path, SPEC)), stdout=out, stderr=err)
    assert err.getvalue() == ""
    assert json.loads(out.getvalue())["candidates"]["evaluated"] > 0


def test_invalid_spec_raises_exit_status_2_naming_the_field(tmp_path):
    with pytest.raises(CommandError) as exc:
        call_command("estimate", str(_write(tmp_path, BAD)), "--catalog-csv", str(CSV))
    assert exc.value.returncode == 2
    assert "model.architecture.kv_heads: must divide attention_heads" in str(exc.value)


def test_invalid_json_is_exit_status_2(tmp_path):
    path = tmp_path / "broken.json"
    path.write_text('{"kind": "inference", "serving": {"input_tokens": NaN}}')
    with pytest.raises(CommandError) as exc:
        call_command("estimate", str(path), "--catalog-csv", str(CSV))
    assert exc.value.returncode == 2


def test_subprocess_reads_stdin_and_prints_json():
    proc = subprocess.run([sys.executable, "manage.py", "estimate", "-", "--catalog-csv", str(CSV)], cwd=ROOT,
                          input=json.dumps(SPEC), capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["kind"] == "inference"


def test_subprocess_bad_input_exits_2_with_field_path_on_stderr():
    proc = subprocess.run([sys.executable, "manage.py", "estimate", "-", "--catalog-csv", str(CSV)], cwd=ROOT,
                          input=json.dumps(BAD), capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2
    assert "model.architecture.kv_heads: must divide attention_heads (32), got 5" in proc.stderr


# Batches: a JSON array or JSON Lines of specs, one result per line.
PINNED_TOO_SMALL = {"kind": "inference", "model": {"preset": "deepseek-r1-0528"},
                    "serving": {"input_tokens": 1000, "output_tokens": 200, "requests_per_second": 1},
                    "hardware": {"accelerator": "nvidia-l4-24gb", "count": 1}}


def _lines(out: StringIO) -> list[dict]:
    return [json.loads(line) for line in out.getvalue().splitlines()]


def test_json_array_prints_one_result_per_line_in_order(tmp_path):
    second = {**SPEC, "model": {"preset": "openai/gpt-oss-20b"}}  # a Hugging Face id as the preset
    out = StringIO()
    call_command("estimate", str(_write(tmp_path, [SPEC, second])), "--catalog-csv", str(CSV), stdout=out)
    results = _lines(out)
    assert len(results) == 2
    assert results[0]["model"]["name"].startswith("Llama 3.1 8B")
    assert results[1]["model"]["name"].startswith("gpt-oss-20b")
    assert all(r["recommendation"]["accelerator_id"] for r in results)


def test_json_lines_prints_one_result_per_line_and_skips_blank_lines(tmp_path):
    path = tmp_path / "specs.jsonl"
    path.write_text(json.dumps(SPEC) + "\n\n" + json.dumps(SPEC) + "\n" + json.dumps(SPEC) + "\n")
    out = StringIO()
    call_command("estimate", str(path), "--catalog-csv", str(CSV), stdout=out)
    assert len(_lines(out)) == 3


def test_json_lines_bad_spec_names_its_line_and_field_and_prints_nothing(tmp_path):
    path = tmp_path / "specs.jsonl"
    path.write_text(json.dumps(SPEC) + "\n" + json.dumps(SPEC) + "\n\n" + json.dumps(BAD) + "\n")
    out = StringIO()
    with pytest.raises(CommandError) as exc:
        call_command("estimate", str(path), "--catalog-csv", str(CSV), stdout=out)
    assert exc.value.returncode == 2
    assert "line 4: model.architecture.kv_heads: must divide attention_heads (32), got 5" in str(exc.value)
    assert out.getvalue() == ""


def test_json_lines_broken_line_is_named(tmp_path):
    path = tmp_path / "specs.jsonl"
    path.write_text(json.dumps(SPEC) + "\n" + '{"kind": "inference",\n')
    with pytest.raises(CommandError) as exc:
        call_command("estimate", str(path), "--catalog-csv", str(CSV), stdout=StringIO())
    assert exc.value.returncode == 2
    assert str(exc.value).startswith("line 2: (root): invalid JSON")


def test_json_array_bad_item_is_named_by_index(tmp_path):
    with pytest.raises(CommandError) as exc:
        call_command("estimate", str(_write(tmp_path, [SPEC, "llama", {**SPEC, "model": {"preset": "nope"}}])),
                     "--catalog-csv", str(CSV), stdout=StringIO())
    assert exc.value.returncode == 2
    lines = str(exc.value).splitlines()
    assert lines[0] == "[1]: must be a JSON object"
    assert lines[1].startswith("[2].model.preset: unknown preset 'nope'")


def test_a_spec_the_sizing_refuses_is_reported_in_place_and_the_rest_still_sized(tmp_path):
    out = StringIO()
    with pytest.raises(CommandError) as exc:
        call_command("estimate", str(_write(tmp_path, [SPEC, PINNED_TOO_SMALL, SPEC])), "--catalog-csv", str(CSV),
                     stdout=out)
    assert exc.value.returncode == 2
    assert str(exc.value).startswith("[1].hardware.accelerator: ")
    results = _lines(out)
    assert len(results) == 3
    assert results[1]["line"] == 2 and results[1]["errors"][0]["field"] == "hardware.accelerator"
    assert results[0]["recommendation"] and results[2]["recommendation"]


def test_empty_array_is_exit_status_2(tmp_path):
    with pytest.raises(CommandError) as exc:
        call_command("estimate", str(_write(tmp_path, [])), "--catalog-csv", str(CSV), stdout=StringIO())
    assert exc.value.returncode == 2
