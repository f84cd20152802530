#!/usr/bin/env bash
# The Debian/Ubuntu packages cmax needs beyond Python, installed only when missing.
# Used by the README's quick start and by .ci/run, so a fresh image and CI take one path.
#   python3-venv                      python3 -m venv (the quick start's virtualenv); it
#                                     depends on python3, so an image without Python gets it
#   libpango-1.0-0 libpangoft2-1.0-0  WeasyPrint's text layout (PDF reports)
#   libharfbuzz-subset0               font subsetting; without it WeasyPrint falls back to
#                                     fontTools (slower; cmax pins its clock either way)
#   fonts-dejavu-core                 the fonts the report templates name
#   poppler-utils                     pdftotext/pdfinfo, used by the report tests
# With --tests (the README's test command, CI) also:
#   prometheus                        prometheus and promtool: the monitoring tests backfill a
#                                     TSDB and start their own server on a free loopback port
#                                     (the package's system service is never used)
#   chromium                          headless Chromium: the browser test loads every HTML
#                                     report (tests/render/test_html_in_browser.py)
# Root runs apt-get directly, anyone else through sudo. Elsewhere (not Debian/Ubuntu) it
# prints what to install and exits 0, so the Python steps still run. It fails (exit 1) with
# the reason when it cannot install, and when python3 is older than cmax's 3.11, so the
# quick start stops here and not in pip. Checked on a fresh root by tools/fresh-debian-check.sh.
set -euo pipefail

PACKAGES=(python3-venv libpango-1.0-0 libpangoft2-1.0-0 libharfbuzz-subset0 fonts-dejavu-core poppler-utils)
# tried, not required: Ubuntu ships Chromium only as a snap, which a container or a root
# without snapd cannot install; the browser test then skips and says why (CI runs Debian)
OPTIONAL=()
for arg in "$@"; do
    case "$arg" in
        --tests) PACKAGES+=(prometheus); OPTIONAL+=(chromium) ;;
        *) echo "install-system-deps: unknown option $arg (only --tests)" >&2; exit 2 ;;
    esac
done

if ! command -v dpkg >/dev/null 2>&1 || ! command -v apt-get >/dev/null 2>&1; then
    echo "install-system-deps: not a Debian/Ubuntu system; install the equivalents of:" \
         "${PACKAGES[*]}" >&2
    exit 0
fi

# python3 must be >= 3.11 (pyproject's requires-python); checked first when there is a
# python3, else once the packages are in (python3-venv brings python3 on an image without).
check_python() {
    if ! python3 -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
        echo "install-system-deps: cmax needs Python >= 3.11, python3 here is" \
             "$(python3 --version 2>&1 || echo missing) (Debian 12+ and Ubuntu 24.04+ have it;" \
             "elsewhere install python3.11 or newer and its venv module)" >&2
        exit 1
    fi
}

if command -v python3 >/dev/null 2>&1; then check_python; fi

missing() {
    # Installed, not merely known to dpkg (dpkg -s also succeeds for a removed package
    # whose configuration files are left).
    local pkg status
    for pkg in "$@"; do
        status="$(dpkg-query -W -f '${db:Status-Status}' "$pkg" 2>/dev/null || true)"
        [ "$status" = installed ] || echo "$pkg"
    done
}
mapfile -t need < <(missing "${PACKAGES[@]}")
mapfile -t want < <(missing "${OPTIONAL[@]+"${OPTIONAL[@]}"}")
if [ "${#need[@]}" -eq 0 ] && [ "${#want[@]}" -eq 0 ]; then
    check_python
    exit 0
fi
SUDO=()
if [ "$(id -u)" -ne 0 ]; then
    if ! command -v sudo >/dev/null 2>&1; then
        echo "install-system-deps: missing ${need[*]}; not root and no sudo: as root, run" \
             "apt-get update && apt-get install --no-install-recommends ${need[*]}" >&2
        exit 1
    fi
    SUDO=(sudo)
fi
echo "install-system-deps: installing ${need[*]} ${want[*]}" >&2
"${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -q >/dev/null
for pkg in "${want[@]+"${want[@]}"}"; do
    "${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive \
        apt-get install -y -q --no-install-recommends "$pkg" >/dev/null 2>&1 \
        || echo "install-system-deps: could not install $pkg (optional: the tests that need" \
                "it skip and say so; Ubuntu ships it only as a snap)" >&2
done
if [ "${#need[@]}" -gt 0 ] && ! "${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive \
        apt-get install -y -q --no-install-recommends "${need[@]}" >/dev/null; then
    unknown=()
    for pkg in "${need[@]}"; do
        apt-cache show "$pkg" >/dev/null 2>&1 || unknown+=("$pkg")
    done
    echo "install-system-deps: apt-get could not install ${need[*]}" \
         "${unknown[*]:+(this release has no ${unknown[*]}; cmax needs Debian 12+ or Ubuntu 24.04+)}" >&2
    exit 1
fi
check_python
