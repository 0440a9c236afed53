#!/usr/bin/env bash
# Debian packages the app and test suite need beyond Python: gettext (compiled translations),
# Pango + fonts for WeasyPrint's PDF export, chromium for the browser journey (docs/SYSTEM_PACKAGES.md).
# Installed only when missing; idempotent.
set -euo pipefail
need=()
command -v msgfmt >/dev/null 2>&1 || need+=(gettext)
dpkg -s libpango-1.0-0 >/dev/null 2>&1 || need+=(libpango-1.0-0)
dpkg -s libpangoft2-1.0-0 >/dev/null 2>&1 || need+=(libpangoft2-1.0-0)
dpkg -s fonts-dejavu-core >/dev/null 2>&1 || need+=(fonts-dejavu-core)
command -v chromium >/dev/null 2>&1 || need+=(chromium)
if [ ${#need[@]} -gt 0 ]; then
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi
