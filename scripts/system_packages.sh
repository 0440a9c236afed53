#!/usr/bin/env bash
# Debian packages the test suite needs beyond Python: gettext (compiled translations).
# Installed only when missing; idempotent.
set -euo pipefail
need=()
command -v msgfmt >/dev/null 2>&1 || need+=(gettext)
if [ ${#need[@]} -gt 0 ]; then
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi
