"""HTML -> PDF with WeasyPrint, locked down for hostile input.

Bundle text (provider names, file names, log excerpts) ends up in reports, so the URL fetcher
only serves ``data:`` URLs and files inside cmax's own templates folder: a provider named
``<img src="file:///etc/passwd">`` can never pull a local file or a remote URL into a PDF.
"""

from __future__ import annotations

import datetime as dt
import os
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cmax.errors import CmaxError
from cmax.resources import data_dir

FIXED_DATE = dt.datetime(2000, 1, 1, tzinfo=dt.UTC)


@dataclass(frozen=True)
class PdfAttachment:
    name: str
    content: bytes
    description: str


def _safe_fetcher() -> Any:
    from weasyprint.urls import URLFetcher, URLFetchingError

    templates = data_dir("templates").resolve()

    class SafeFetcher(URLFetcher):  # type: ignore[misc]
        def fetch(self, url: str, headers: Any = None) -> Any:
            if url.startswith("data:"):
                return super().fetch(url, headers)
            if url.startswith("file://"):
                path = Path(url.removeprefix("file://")).resolve()
                if path.is_relative_to(templates):
                    return super().fetch(url, headers)
            raise URLFetchingError(f"blocked URL: {url[:80]}")

    return SafeFetcher()


def write_pdf(
    html: str,
    out: Path,
    *,
    attachments: Sequence[PdfAttachment] = (),
    pdf_variant: str | None = None,
) -> None:
    """Render ``html`` to ``out`` atomically (a half-written PDF never appears)."""
    import weasyprint

    templates = data_dir("templates")
    attach = [
        weasyprint.Attachment(
            string=a.content, name=a.name, description=a.description,
            created=FIXED_DATE, modified=FIXED_DATE, relationship="Data",
        )
        for a in attachments
    ]
    document = weasyprint.HTML(
        string=html, base_url=templates.as_uri() + "/", url_fetcher=_safe_fetcher()
    )
    out.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=out.parent, prefix=f".{out.name}.", suffix=".tmp")
    os.close(fd)
    try:
        options: dict[str, Any] = {"attachments": attach, "uncompressed_pdf": False}
        if pdf_variant:
            options["pdf_variant"] = pdf_variant
        document.write_pdf(tmp, **options)
        os.replace(tmp, out)
    except OSError as exc:
        raise CmaxError(f"cannot write PDF: {exc.strerror}", file=out) from None
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def write_text_atomic(text: str, out: Path) -> None:
    """Write a text file atomically."""
    out.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=out.parent, prefix=f".{out.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as fh:
            fh.write(text)
        os.replace(tmp, out)
    except OSError as exc:
        raise CmaxError(f"cannot write file: {exc.strerror}", file=out) from None
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
