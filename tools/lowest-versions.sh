#!/usr/bin/env bash
# Run the test suite against the LOWEST versions pyproject.toml allows: every direct
# dependency pinned to its floor (what `uv pip install --resolution lowest-direct` picks),
# their own dependencies and the test tools (the dev extra without ruff and mypy) resolved
# normally around those pins, in a throwaway venv. Proves the floors work; CI (.ci/run) calls
# it. Needs the package index. Usage: bash tools/lowest-versions.sh [PYTEST ARGS...]
set -euo pipefail
cd "$(dirname "$0")/.."

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
python3 -m venv "$work/tools"
"$work/tools/bin/python" -m pip install -q --disable-pip-version-check uv
uv="$work/tools/bin/uv"
python3 - "$work" <<'PY'
import re, sys, tomllib
project = tomllib.load(open("pyproject.toml", "rb"))["project"]
floors = []
for spec in project["dependencies"]:
    m = re.fullmatch(r"([A-Za-z0-9_.\[\]-]+)>=([0-9][0-9.]*)", spec.replace(" ", ""))
    if not m:
        sys.exit(f"tools/lowest-versions.sh: no plain floor in dependency {spec!r}")
    floors.append(f"{m[1]}=={m[2]}")
tests = [s for s in project["optional-dependencies"]["dev"]
         if not s.startswith(("ruff", "mypy"))]
open(f"{sys.argv[1]}/lowest.txt", "w").write("\n".join(floors + tests) + "\n")
PY
# uv.lock must describe this pyproject.toml (re-run `uv lock` after changing a dependency)
"$uv" lock --check -q
"$uv" venv -q --python "$(command -v python3)" "$work/venv"
"$uv" pip install -q --python "$work/venv/bin/python" -r "$work/lowest.txt"
echo "lowest allowed versions:" $(grep '==' "$work/lowest.txt")
# the suite imports cmax from the checkout (pytest's pythonpath); every library it imports
# comes from the venv
"$work/venv/bin/python" -m pytest -p no:cacheprovider -x "$@"
