"""One format, one module, one name: each registered format lives in the module of
cmax/ingest/formats/ named by its id, and only ingest reads the private engines."""

from __future__ import annotations

import re
from pathlib import Path

from cmax.ingest.formats import all_formats

ROOT = Path(__file__).resolve().parents[2]


def _stem(format_id: str) -> str:
    return format_id.replace("-", "_")


def test_every_format_lives_in_the_module_named_by_its_id() -> None:
    for fmt in all_formats():
        module = fmt.home.rsplit(".", 1)[1]
        assert fmt.home.startswith("cmax.ingest.formats."), fmt.id
        assert not module.startswith("_"), f"{fmt.id} registered from shared module {module}"
        # the id is the module's name, or the module's name and a suffix (nemo -> nemo2)
        assert _stem(fmt.id) == module or _stem(fmt.id).startswith(module), (fmt.id, module)


def test_no_parser_module_outside_the_formats_package() -> None:
    register = re.compile(r"^register\(", re.M)
    for path in (ROOT / "cmax/ingest").glob("*.py"):
        assert not register.search(path.read_text(encoding="utf-8")), path


def test_the_engines_are_read_only_inside_ingest() -> None:
    engine = re.compile(r"cmax\.ingest\._(fields|greplines)|"
                        r"from cmax\.ingest import .*\b_(fields|greplines)")
    # cmax inspect starts grep before Polars is imported: the one reader outside ingest
    allowed = {ROOT / "cmax/cli/inspect_cmd.py"}
    for path in (ROOT / "cmax").rglob("*.py"):
        if "ingest" in path.relative_to(ROOT / "cmax").parts[:1] or path in allowed:
            continue
        assert not engine.search(path.read_text(encoding="utf-8")), path
