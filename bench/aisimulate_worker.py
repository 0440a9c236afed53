"""AISimulate side of bench/bench_aisimulate.py: runs in AISimulate's own venv, never in the app's.

Run by bench_aisimulate.py as  /work/venv-aisim/bin/python bench/aisimulate_worker.py
stdin: one JSON job a line, {"key": str, "config": {AISimulate prediction YAML as a mapping}}.
stdout: one JSON line a job, {"key", "ok": true, "summary": {...}} or {"key", "ok": false, "reason": str}.
Each job is `aisimulate predict -c <config> --format json` called in this one process (the package
is imported once: about 8 s of start-up saved per row). A job over --timeout seconds is refused
("timeout"), counted by the caller.
"""
import argparse
import contextlib
import io
import json
import signal
import sys
import tempfile
from importlib import metadata
from pathlib import Path


class _Timeout(Exception):
    pass


def _alarm(signum, frame):
    raise _Timeout


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--timeout", type=int, default=120)
    args = ap.parse_args()
    import yaml
    from aisimulate.main import main as aisim_main

    out = sys.stdout
    out.write(json.dumps({"key": "__version__", "version": metadata.version("aisimulate")}) + "\n")
    out.flush()
    signal.signal(signal.SIGALRM, _alarm)
    with tempfile.TemporaryDirectory() as tmp:
        lines = sys.stdin.readlines()  # all jobs first: the caller writes them all before reading answers
        for line in lines:
            if not line.strip():
                continue
            job = json.loads(line)
            cfg, d = Path(tmp) / "p.yaml", Path(tmp) / "o"
            cfg.write_text(yaml.safe_dump(job["config"]))
            buf, err = io.StringIO(), io.StringIO()
            res = {"key": job["key"]}
            signal.alarm(args.timeout)
            try:
                with contextlib.redirect_stdout(buf), contextlib.redirect_stderr(err):
                    rc = aisim_main(["predict", "-c", str(cfg), "--output-dir", str(d), "--overwrite",
                                     "--format", "json"])
                text = buf.getvalue().strip().splitlines()
                summary = json.loads(text[-1]) if rc == 0 and text else None
                if summary is None:
                    tail = " ".join((err.getvalue() or buf.getvalue()).split())[-300:]
                    res.update(ok=False, reason=f"exit {rc}: {tail}")
                else:
                    res.update(ok=True, summary={k: summary.get(k) for k in (
                        "median_ttft_ms", "median_tpot_ms", "mean_ttft_ms", "mean_tpot_ms",
                        "output_throughput_tok_s", "completed_requests", "wall_time_ms")})
            except _Timeout:
                res.update(ok=False, reason=f"timeout (> {args.timeout} s of simulation on this CPU)")
            except SystemExit as exc:
                tail = " ".join(err.getvalue().split())[-300:]
                res.update(ok=False, reason=f"exit {exc.code}: {tail}")
            except Exception as exc:  # noqa: BLE001 (AISimulate's refusal is the row's finding)
                res.update(ok=False, reason=f"{type(exc).__name__}: {' '.join(str(exc).split())[:300]}")
            finally:
                signal.alarm(0)
            out.write(json.dumps(res) + "\n")
            out.flush()


if __name__ == "__main__":
    main()
