#!/usr/bin/env bash
# Security checks for CI (.ci/run): a secrets scan of the tracked files and pip-audit.
#
# Secrets: detect-secrets scans every tracked file (vendored JS and data tables, CSV and JSON Lines, excluded);
# any finding not in .secrets.baseline (matched by secret hash, wherever it appears)
# fails. The baseline holds only development/test values (the local gpu_planner role, the
# insecure dev key that production settings reject, test passwords). After reviewing a new
# finding that is not a real secret, refresh it with: scripts/security_checks.sh --update-baseline
#
# pip-audit: audits the installed environment (requirements.txt + requirements-dev.txt and
# everything they pull in) against PyPI's vulnerability data. Any known vulnerability fails.
# If the vulnerability service cannot be reached (closed networks: the build machines here
# answer 404 for every package), nothing could be audited: the script says so loudly and
# passes, unless PIP_AUDIT_REQUIRED=1, which makes that a failure too.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${BIN:-.venv/bin}
EXCLUDE='^(\.secrets\.baseline$|static/vendor/|.*\.(csv|jsonl|svg|png|ico|lock)$|locale/.*\.mo$)'
mapfile -t files < <(git ls-files | grep -Ev "$EXCLUDE")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

if [ "${1:-}" = "--update-baseline" ]; then
  "$BIN/detect-secrets" scan "${files[@]}" > .secrets.baseline
  echo "security: .secrets.baseline rewritten; review it with: $BIN/detect-secrets audit .secrets.baseline"
  exit 0
fi

echo "security: secrets scan of ${#files[@]} tracked files"
"$BIN/detect-secrets" scan "${files[@]}" > "$tmp/scan.json"
"$BIN/python" - "$tmp/scan.json" .secrets.baseline <<'PY'
import json, sys
scan, baseline = (json.load(open(p)) for p in sys.argv[1:3])
# A reviewed development value (e.g. the local gpu_planner role's password) is known wherever
# it appears, so docs and scripts may show the same local URL without re-baselining.
known = {s["hashed_secret"] for items in baseline["results"].values() for s in items}
new = [(f, s["line_number"], s["type"]) for f, items in scan["results"].items() for s in items
       if s["hashed_secret"] not in known]
for f, line, kind in new:
    print(f"security: POSSIBLE SECRET {f}:{line} ({kind})")
if new:
    sys.exit(f"security: {len(new)} new possible secret(s); remove them, or if they are not secrets "
             "run scripts/security_checks.sh --update-baseline and commit the reviewed baseline")
print(f"security: no new secrets ({len(known)} known development/test values in .secrets.baseline)")
PY

echo "security: pip-audit of the installed environment"
set +e
"$BIN/pip-audit" --progress-spinner off -f json -o "$tmp/audit.json" 2> "$tmp/audit.err"
audit_rc=$?
set -e
"$BIN/python" - "$tmp/audit.json" "$audit_rc" "${PIP_AUDIT_REQUIRED:-0}" "$tmp/audit.err" <<'PY'
import json, sys
path, rc, required, err = sys.argv[1], int(sys.argv[2]), sys.argv[3] == "1", sys.argv[4]
try:
    deps = json.load(open(path))["dependencies"]
except (OSError, ValueError, KeyError):
    print(open(err).read()[-2000:])
    sys.exit(f"security: pip-audit did not run (exit {rc})")
audited = [d for d in deps if "skip_reason" not in d]
vulns = [(d["name"], d["version"], v["id"], v.get("fix_versions")) for d in audited for v in d.get("vulns", [])]
for name, version, vid, fixes in vulns:
    print(f"security: VULNERABLE {name} {version}: {vid} (fixed in {', '.join(fixes) or 'no release yet'})")
if vulns:
    sys.exit(f"security: {len(vulns)} known vulnerabilit(y/ies)")
if not audited:
    msg = (f"security: WARNING pip-audit could not reach its vulnerability service: 0 of {len(deps)} "
           "packages were audited (see docs/RELIABILITY.md); run it where PyPI is reachable")
    if required:
        sys.exit(msg)
    print(msg)
else:
    print(f"security: pip-audit found no known vulnerabilities in {len(audited)} packages "
          f"({len(deps) - len(audited)} not audited)")
PY
