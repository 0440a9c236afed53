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
import os
import signal
import sys
import tempfile
import time
from importlib import metadata
from pathlib import Path


def _run(aisim_main, cfg, d, res):
    buf, err = io.StringIO(), io.StringIO()
    try:
        with contextlib.redirect_stdout(buf), contextlib.redirect_stderr(err):
            rc = aisim_main(["predict", "-c", str(cfg), "--output-dir", str(d), "--overwrite", "--format", "json"])
        text = buf.getvalue().strip().splitlines()
        summary = json.loads(text[-1]) if rc == 0 and text else None
        if summary is None:
            tail = " ".join((err.getvalue() or buf.getvalue()).split())[-300:]
            res.update(ok=False, reason=f"exit {rc}: {tail}")
        else:
            res.update(ok=True, summary={k: summary.get(k) for k in (
                "median_ttft_ms", "median_tpot_ms", "mean_ttft_ms", "mean_tpot_ms",
                "output_throughput_tok_s", "completed_requests", "wall_time_ms")})
    except SystemExit as exc:
        res.update(ok=False, reason=f"exit {exc.code}: {' '.join(err.getvalue().split())[-300:]}")
    except Exception as exc:  # noqa: BLE001 (AISimulate's refusal is the row's finding)
        res.update(ok=False, reason=f"{type(exc).__name__}: {' '.join(str(exc).split())[:300]}")
    return res


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--timeout", type=int, default=120)
    args = ap.parse_args()
    import yaml
    from aisimulate.main import main as aisim_main

    out = sys.stdout
    out.write(json.dumps({"key": "__version__", "version": metadata.version("aisimulate")}) + "\n")
    out.flush()
    with tempfile.TemporaryDirectory() as tmp:
        lines = sys.stdin.readlines()  # all jobs first: the caller writes them all before reading answers
        for line in lines:
            if not line.strip():
                continue
            job = json.loads(line)
            cfg, d = Path(tmp) / "p.yaml", Path(tmp) / "o"
            cfg.write_text(yaml.safe_dump(job["config"]))
            res = {"key": job["key"]}
            rfd, wfd = os.pipe()
            pid = os.fork()  # the simulation runs in native code a signal cannot interrupt: a child we can kill
            if pid == 0:
                os.close(rfd)
                res = _run(aisim_main, cfg, d, res)
                with os.fdopen(wfd, "w") as w:
                    w.write(json.dumps(res))
                os._exit(0)
            os.close(wfd)
            deadline, done = time.monotonic() + args.timeout, False
            while not done and time.monotonic() < deadline:
                done = os.waitpid(pid, os.WNOHANG) != (0, 0)
                time.sleep(0 if done else 0.05)
            if not done:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
                os.close(rfd)
                res.update(ok=False, reason=f"timeout (> {args.timeout} s of simulation on this CPU)")
            else:
                with os.fdopen(rfd) as rd:
                    text = rd.read()
                if text:
                    res = json.loads(text)
                else:
                    res.update(ok=False, reason="the simulation process died")
            out.write(json.dumps(res) + "\n")
            out.flush()


if __name__ == "__main__":
    main()
