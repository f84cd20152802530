"""Regenerate docs/formats.md from the registry.

Run ``python -m cmax.ingest.formats docs/formats.md``; a test fails while the file is stale.
"""

from __future__ import annotations

import sys
from pathlib import Path

from cmax.ingest.formats_doc import formats_markdown


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    Path(args[0] if args else "docs/formats.md").write_text(formats_markdown(), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
