#!/usr/bin/env bash
# Run the test suite against the LOWEST versions pyproject.toml allows: every direct
# dependency pinned to its floor for the Python in use (what `uv pip install --resolution
# lowest-direct` picks; a floor with a python_version marker applies to its Pythons only),
# their own dependencies and the test tools (the dev extra without ruff and mypy) resolved
# normally around those pins, in a throwaway venv. Proves the floors work; CI (.ci/run) calls
# it once per Python the classifiers list. Needs the package index.
# Usage: bash tools/lowest-versions.sh [--python PYTHON] [PYTEST ARGS...]
#   PYTHON: an interpreter path or a version such as 3.12 (found as python3.12 on PATH or
#   under ~/.pyenv/versions); default: python3.
set -euo pipefail
cd "$(dirname "$0")/.."

python="$(command -v python3)"
if [ "${1:-}" = "--python" ]; then
    want="${2:?--python needs an interpreter or a version}"
    shift 2
    if [ -x "$want" ]; then
        python="$want"
    elif command -v "python$want" >/dev/null 2>&1 && "python$want" -c '' 2>/dev/null; then
        python="$(command -v "python$want")"
    else
        found=$(ls -d "${PYENV_ROOT:-$HOME/.pyenv}/versions/$want".*/bin/"python$want" 2>/dev/null \
                | sort -V | tail -n 1 || true)
        [ -n "$found" ] || { echo "lowest-versions: no Python $want here" >&2; exit 3; }
        python="$found"
    fi
fi
version="$("$python" -c 'import sys; print("%d.%d" % sys.version_info[:2])')"

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
python3 -m venv "$work/tools"
"$work/tools/bin/python" -m pip install -q --disable-pip-version-check uv packaging
uv="$work/tools/bin/uv"
"$work/tools/bin/python" - "$work" "$version" <<'PY'
import re, sys, tomllib
from packaging.requirements import Requirement
env = {"python_version": sys.argv[2], "python_full_version": sys.argv[2] + ".0"}
project = tomllib.load(open("pyproject.toml", "rb"))["project"]
floors = []
for spec in project["dependencies"]:
    req = Requirement(spec)
    if req.marker is not None and not req.marker.evaluate(env):
        continue
    m = re.fullmatch(r">=([0-9][0-9.]*)", str(req.specifier))
    if not m:
        sys.exit(f"tools/lowest-versions.sh: no plain floor in dependency {spec!r}")
    floors.append(f"{req.name}{'[' + ','.join(sorted(req.extras)) + ']' if req.extras else ''}"
                  f"=={m[1]}")
tests = [s for s in project["optional-dependencies"]["dev"]
         if not s.startswith(("ruff", "mypy"))]
open(f"{sys.argv[1]}/lowest.txt", "w").write("\n".join(floors + tests) + "\n")
PY
# uv.lock must describe this pyproject.toml (re-run `uv lock` after changing a dependency)
"$uv" lock --check -q
"$uv" venv -q --python "$python" "$work/venv"
"$uv" pip install -q --python "$work/venv/bin/python" -r "$work/lowest.txt"
echo "lowest allowed versions on Python $version:" $(grep '==' "$work/lowest.txt")
# the suite imports cmax from the checkout (pytest's pythonpath); every library it imports
# comes from the venv
"$work/venv/bin/python" -m pytest -p no:cacheprovider -x "$@"
