#!/usr/bin/env bash
# The Debian/Ubuntu packages cmax needs beyond Python, installed only when missing.
# Used by the README's quick start and by .ci/run, so a fresh image and CI take one path.
#   python3-venv                      python3 -m venv (the quick start's virtualenv)
#   libpango-1.0-0 libpangoft2-1.0-0  WeasyPrint's text layout (PDF reports)
#   libharfbuzz-subset0               font subsetting; without it WeasyPrint falls back to
#                                     fontTools (slower; cmax pins its clock either way)
#   fonts-dejavu-core                 the fonts the report templates name
#   poppler-utils                     pdftotext/pdfinfo, used by the report tests
# Root runs apt-get directly, anyone else through sudo. Elsewhere (not Debian/Ubuntu) it
# prints what to install and exits 0, so the Python steps still run.
set -euo pipefail

PACKAGES=(python3-venv libpango-1.0-0 libpangoft2-1.0-0 libharfbuzz-subset0 fonts-dejavu-core poppler-utils)

if ! command -v dpkg >/dev/null 2>&1 || ! command -v apt-get >/dev/null 2>&1; then
    echo "install-system-deps: not a Debian/Ubuntu system; install the equivalents of:" \
         "${PACKAGES[*]}" >&2
    exit 0
fi
need=()
for pkg in "${PACKAGES[@]}"; do
    dpkg -s "$pkg" >/dev/null 2>&1 || need+=("$pkg")
done
if [ "${#need[@]}" -eq 0 ]; then
    exit 0
fi
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
echo "install-system-deps: installing ${need[*]}" >&2
$SUDO apt-get update -q >/dev/null
$SUDO apt-get install -y -q --no-install-recommends "${need[@]}" >/dev/null
