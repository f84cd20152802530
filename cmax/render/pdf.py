"""HTML -> PDF with WeasyPrint, locked down for hostile input, and atomic file writes.

Bundle text (provider names, file names, log excerpts) ends up in reports, so the URL fetcher
only serves ``data:`` URLs and files inside cmax's own templates folder: a provider named
``<img src="file:///etc/passwd">`` can never pull a local file or a remote URL into a PDF,
even if some template forgot to escape it. Attachment dates are pinned because WeasyPrint
otherwise stamps them with the current time (research ecosystem.md §2.8). So are embedded
fonts: without HarfBuzz-subset, WeasyPrint subsets fonts with fontTools, which writes the
current time into each subset font's ``head.modified``; ``pinned_font_clock`` sets fontTools'
clock (``SOURCE_DATE_EPOCH``, the reproducible-builds convention it honours) for the write.

Speed: a report is laid out with the garbage collector paused (WeasyPrint allocates
hundreds of thousands of short-lived objects; every full collection walks the whole heap,
matplotlib and polars included, a quarter of the layout time), with ``<wbr>`` written as the
U+200B it stands for, with a user-agent stylesheet that leaves out the footnote and note
pseudo-elements cmax never uses (WeasyPrint otherwise computes six extra styles per element),
and with the report stylesheet every template inlines parsed once per process. The stylesheet
changes give the same bytes as WeasyPrint's plain route (tests/render); the character breaks
at the joints ``breakable`` marks, where the element sometimes let WeasyPrint break mid-word.

WeasyPrint is imported by :func:`weasyprint_module` only: on import it looks for each of six
libraries under up to six names through cffi, which asks ``ctypes.util.find_library`` for every
name it cannot open directly; on Linux that runs ``ldconfig -p`` and then ``gcc`` and ``ld`` for
each name not in the loader's cache, ~20 processes and ~0.3-0.4 s (a missing optional
libharfbuzz-vector alone tries six names). Here the loader's cache is read once and answers
every name the way CPython's first step does; the compiler and linker probes are skipped (a
library only they could find would have to be found by the loader anyway to be opened, and
WeasyPrint also tries each library's plain soname, which the loader opens directly).
"""

from __future__ import annotations

import datetime as dt
import gc
import os
import re
import subprocess
import sys
import tempfile
import warnings
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit
from urllib.request import url2pathname
from xml.etree import ElementTree

from cmax.errors import CmaxError
from cmax.resources import data_dir

FIXED_DATE = dt.datetime(2000, 1, 1, tzinfo=dt.UTC)
# PDF/A-3 allows the JSON/CSV attachments; level A is the tagged one (a structure tree with
# headings, lists, tables and each chart's alt text, for screen readers and reflow), and the
# XMP also names PDF/UA-1 (``UA_XMP``). Checked here by poppler and tests, not by veraPDF.
DEFAULT_VARIANT = "pdf/a-3a"

# PDF/UA-1's identification (ISO 14289-1 5.4), with the extension schema PDF/A asks for any
# XMP property outside its predefined schemas (ISO 19005-3 6.6.2.3).
_UA_SCHEMA = "http://www.aiim.org/pdfua/ns/id/"
UA_XMP = f"""<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">
<rdf:Description rdf:about="" xmlns:pdfaExtension="http://www.aiim.org/pdfa/ns/extension/"
 xmlns:pdfaSchema="http://www.aiim.org/pdfa/ns/schema#"
 xmlns:pdfaProperty="http://www.aiim.org/pdfa/ns/property#">
<pdfaExtension:schemas><rdf:Bag><rdf:li rdf:parseType="Resource">
<pdfaSchema:schema>PDF/UA identification schema</pdfaSchema:schema>
<pdfaSchema:namespaceURI>{_UA_SCHEMA}</pdfaSchema:namespaceURI>
<pdfaSchema:prefix>pdfuaid</pdfaSchema:prefix>
<pdfaSchema:property><rdf:Seq><rdf:li rdf:parseType="Resource">
<pdfaProperty:name>part</pdfaProperty:name>
<pdfaProperty:valueType>Integer</pdfaProperty:valueType>
<pdfaProperty:category>internal</pdfaProperty:category>
<pdfaProperty:description>the part of ISO 14289 the file conforms to</pdfaProperty:description>
</rdf:li></rdf:Seq></pdfaSchema:property>
</rdf:li></rdf:Bag></pdfaExtension:schemas>
</rdf:Description>
<rdf:Description rdf:about="" xmlns:pdfuaid="{_UA_SCHEMA}"><pdfuaid:part>1</pdfuaid:part>
</rdf:Description>
</rdf:RDF>"""

# Paper: the stylesheets state A4 (report.css, trend.css); another paper restates each of
# their @page sizes with its CSS keyword, orientation kept (``on_paper``).
PAPERS: dict[str, str] = {"a4": "A4", "letter": "letter"}
# Letter is 18 mm shorter than A4 (and 6 mm wider): its portrait pages take 5 mm less at the top
# and the bottom, so a report keeps about the page count it has on A4
_PORTRAIT_MARGINS: dict[str, str] = {"letter": " margin-top: 12mm; margin-bottom: 11mm;"}
DEFAULT_PAPER = "a4"
_PAGE_SIZE = re.compile(r"@page(\s+[\w-]+)?\s*\{\s*size:\s*A4(\s+landscape)?\s*;")


@contextmanager
def pinned_font_clock(when: dt.datetime = FIXED_DATE) -> Iterator[None]:
    """Make fontTools stamp subset fonts with ``when`` instead of now, then restore.

    A caller's own ``SOURCE_DATE_EPOCH`` is overridden too: a report must not depend on the
    environment it was rendered in.
    """
    saved = os.environ.get("SOURCE_DATE_EPOCH")
    os.environ["SOURCE_DATE_EPOCH"] = str(int(when.timestamp()))
    try:
        yield
    finally:
        if saved is None:
            del os.environ["SOURCE_DATE_EPOCH"]
        else:
            os.environ["SOURCE_DATE_EPOCH"] = saved


@dataclass(frozen=True)
class PdfAttachment:
    name: str
    content: bytes
    description: str


def is_allowed_url(url: str, root: Path | None = None) -> bool:
    """``data:`` URLs and ``file:`` URLs that resolve inside ``root`` (cmax's templates)."""
    scheme = url.split(":", 1)[0].lower() if ":" in url else ""
    if scheme == "data":
        return True
    if scheme != "file":
        return False
    parts = urlsplit(url)
    if parts.netloc not in ("", "localhost"):
        return False
    base = (root or data_dir("templates")).resolve()
    try:
        path = Path(url2pathname(parts.path)).resolve()
    except (OSError, ValueError):
        return False
    return path.is_relative_to(base)


def _loader_cache() -> bytes:
    """``ldconfig -p``: every library the dynamic loader's cache knows (empty if unreadable)."""
    try:
        return subprocess.run(["/sbin/ldconfig", "-p"], stdin=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL, stdout=subprocess.PIPE, check=False,
                              env={"LC_ALL": "C", "LANG": "C"}, timeout=10).stdout
    except (OSError, subprocess.SubprocessError):
        return b""


def cached_find_library(listing: bytes) -> Callable[[str], str | None]:
    """``ctypes.util.find_library`` answered from one ``ldconfig -p`` ``listing``, with the
    pattern CPython's first (loader cache) step uses; None where it would go on to gcc/ld."""
    abi = {"x86_64-64": "libc6,x86-64", "ppc64-64": "libc6,64bit", "sparc64-64": "libc6,64bit",
           "s390x-64": "libc6,64bit", "ia64-64": "libc6,IA-64"}.get(
        os.uname().machine + ("-64" if sys.maxsize > 2**32 else "-32"), "libc6")

    def find_library(name: str) -> str | None:
        found = re.search(os.fsencode(rf"\s+(lib{re.escape(name)}\.[^\s]+)\s+\({abi}"), listing)
        return os.fsdecode(found.group(1)) if found else None

    return find_library


@cache
def weasyprint_module() -> Any:
    """``import weasyprint``, its library look-ups answered from the loader's cache on Linux
    (module docstring)."""
    import ctypes.util

    if not sys.platform.startswith("linux"):
        import weasyprint

        return weasyprint
    real = ctypes.util.find_library
    ctypes.util.find_library = cached_find_library(_loader_cache())  # type: ignore[assignment]
    try:
        import weasyprint
    finally:
        ctypes.util.find_library = real
    return weasyprint


def _safe_fetcher() -> Any:
    weasyprint_module()
    from weasyprint.urls import URLFetcher, URLFetchingError

    templates = data_dir("templates").resolve()

    class SafeFetcher(URLFetcher):  # type: ignore[misc]
        """Refuses every URL but data: and cmax's own template files; no network at all."""

        def fetch(self, url: str, headers: Any = None) -> Any:
            if is_allowed_url(url, templates):
                return super().fetch(url, headers)
            raise URLFetchingError(f"blocked URL: {url[:80]}")

    return SafeFetcher(allowed_protocols={"data", "file"}, allow_redirects=False, timeout=1)


@contextmanager
def paused_gc() -> Iterator[None]:
    """Pause the cyclic garbage collector for a render, then restore its state. Reference
    counting still frees almost everything; the cycles left are collected later as usual."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


# WeasyPrint's UA stylesheet gives every element footnote and note pseudo-elements, whose
# styles are computed for every element of every report; cmax uses neither, nor markers on
# anything but list items.
_UNUSED_UA_RULE = re.compile(r"^::(?:footnote|note)-[a-z]+ \{[^}\n]*\}\n", re.M)


def on_paper(html: str, paper: str = DEFAULT_PAPER) -> str:
    """``html`` printed on ``paper`` (a key of ``PAPERS``): the A4 page sizes of its first
    ``<style>`` block restated for that paper at the end of the block, so the laid-out PDF
    and a browser's print of the HTML both use it. A4 returns ``html`` unchanged."""
    if paper not in PAPERS:
        raise CmaxError(f"unknown paper size {paper!r}", field="--paper",
                        expected=" or ".join(PAPERS), fix="pass --paper a4 or --paper letter")
    if paper == DEFAULT_PAPER:
        return html
    end = html.find("</style>")
    start = html.rfind("<style>", 0, end)
    if start < 0 or end < 0:
        return html
    rules = "".join(f"@page{m.group(1) or ''} {{ size: {PAPERS[paper]}{m.group(2) or ''};"
                    f"{'' if m.group(2) else _PORTRAIT_MARGINS.get(paper, '')} }}\n"
                    for m in _PAGE_SIZE.finditer(html, start, end))
    return html[:end] + rules + html[end:]


def lean_ua_css(ua: str) -> str:
    """WeasyPrint's HTML5 user-agent stylesheet without the rules no cmax report uses."""
    return _UNUSED_UA_RULE.sub("", ua).replace("\n::marker {", "\nli::marker {")


@cache
def _html_class() -> Any:
    """``weasyprint.HTML`` with the lean UA stylesheet, or as it is if this WeasyPrint's
    stylesheet is not where (or what) version 70 keeps it."""
    weasyprint = weasyprint_module()

    try:
        from weasyprint import html as wp_html

        ua_text: str = wp_html.UA
        counter_style = wp_html.UA_COUNTER_STYLE
    except (ImportError, AttributeError):
        return weasyprint.HTML
    lean = lean_ua_css(ua_text)
    if lean == ua_text or not hasattr(weasyprint.HTML, "_ua_stylesheets"):
        return weasyprint.HTML
    # the documents count with UA_COUNTER_STYLE, which WeasyPrint's own parse of the same
    # @counter-style rules filled; parsed into it again, 'disc' and 'decimal' (which it may not
    # redefine) would each log "Invalid counter style name"
    sheet = weasyprint.CSS(string=lean, counter_style=type(counter_style)())

    html_class: Any = weasyprint.HTML

    class LeanHTML(html_class):  # type: ignore[misc]
        def _ua_stylesheets(self, forms: bool = False) -> list[Any]:
            extra = super()._ua_stylesheets(forms)[1:] if forms else []
            return [sheet, *extra]

    return LeanHTML


_STYLE_BLOCK = re.compile(r"<style>(.*?)</style>", re.S)


@cache
def _stylesheet(css: str, base_url: str) -> Any:
    """A report stylesheet parsed once per process: every report inlines the same one."""
    weasyprint = weasyprint_module()

    return weasyprint.CSS(string=css, base_url=base_url, url_fetcher=_safe_fetcher())


def layout(html: str) -> Any:
    """Lay ``html`` out into pages (a ``weasyprint.Document``) without writing anything."""
    base_url = data_dir("templates").as_uri() + "/"
    # <wbr> is an element WeasyPrint styles and boxes only to insert this very character
    # (its UA rule wbr::before { content: "\200B" }); bundle text is escaped, so only
    # cmax's own markup can contain the tag, or a <style> block
    html = html.replace("<wbr>", "\u200b")
    sheets: list[Any] = []
    # the report stylesheet, inlined in the <head> by the templates, parsed once per process
    head = _STYLE_BLOCK.search(html, 0, max(0, html.find("</head>")))
    if head:
        sheets.append(_stylesheet(head.group(1), base_url))
        html = html[:head.start()] + html[head.end():]
    with paused_gc():
        document = _html_class()(string=html, base_url=base_url, url_fetcher=_safe_fetcher())
        return document.render(stylesheets=sheets)


def _atomic(out: Path, write: Callable[[str], None]) -> None:
    """Call ``write(tmp)`` then move ``tmp`` over ``out``: readers never see half a file."""
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=out.parent, prefix=f".{out.name}.", suffix=".tmp")
    except OSError as exc:
        raise CmaxError(f"cannot write file: {exc.strerror}", file=out,
                        fix="choose an output directory you can write to") from None
    os.close(fd)
    try:
        write(tmp)
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)  # mkstemp makes 0600; reports are meant to be shared
        os.replace(tmp, out)
    except OSError as exc:
        raise CmaxError(f"cannot write file: {exc.strerror}", file=out,
                        fix="check free space and permissions of the output directory") from None
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


for _prefix in ("pdfaExtension", "pdfaSchema", "pdfaProperty"):
    ElementTree.register_namespace(_prefix, f"http://www.aiim.org/pdfa/ns/{_prefix[4:].lower()}"
                                   + ("/" if _prefix == "pdfaExtension" else "#"))


@contextmanager
def ua_identified(metadata: Any, identify: bool = True) -> Iterator[None]:
    """While a PDF is written, its XMP also names PDF/UA-1: ``UA_XMP``'s descriptions join the
    one ``rdf:RDF`` WeasyPrint writes (XMP has one per packet; pypdf, for one, reads only the
    first). Without WeasyPrint 70's ``generate_rdf_metadata`` nothing is claimed."""
    plain = getattr(metadata, "generate_rdf_metadata", None)
    if not identify or plain is None:
        yield
        return

    def generate(*args: Any, **kwargs: Any) -> bytes:
        rdf = ElementTree.fromstring(plain(*args, **kwargs))
        rdf.extend(ElementTree.fromstring(UA_XMP))
        data: bytes = ElementTree.tostring(rdf, encoding="utf-8")
        return data

    metadata.generate_rdf_metadata = generate
    try:
        yield
    finally:
        del metadata.generate_rdf_metadata


def write_document(
    document: Any,
    out: Path,
    *,
    attachments: Sequence[PdfAttachment] = (),
    pdf_variant: str | None = None,
    created: dt.datetime = FIXED_DATE,
) -> None:
    """Write a laid-out document to ``out`` atomically, with pinned attachment dates."""
    weasyprint = weasyprint_module()

    attach = [
        weasyprint.Attachment(
            string=a.content, name=a.name, description=a.description,
            created=created, modified=created, relationship="Data",
        )
        for a in attachments
    ]
    options: dict[str, Any] = {"attachments": attach, "uncompressed_pdf": False}
    if pdf_variant:
        options["pdf_variant"] = pdf_variant

    def write(tmp: str) -> None:
        with (warnings.catch_warnings(), pinned_font_clock(created), paused_gc(),
              ua_identified(document.metadata, pdf_variant == DEFAULT_VARIANT)):
            # WeasyPrint 70 opens its sRGB profile for PDF/A output intents and never closes it
            warnings.filterwarnings("ignore", message=r"unclosed file .*sRGB2014\.icc",
                                    category=ResourceWarning)
            document.write_pdf(tmp, **options)

    _atomic(out, write)


def write_pdf(
    html: str,
    out: Path,
    *,
    attachments: Sequence[PdfAttachment] = (),
    pdf_variant: str | None = DEFAULT_VARIANT,
) -> None:
    """Render ``html`` to ``out`` atomically (a half-written PDF never appears)."""
    write_document(layout(html), out, attachments=attachments, pdf_variant=pdf_variant)


def write_text_atomic(text: str, out: Path) -> None:
    """Write a UTF-8 text file atomically, with LF line ends on every platform."""

    def write(tmp: str) -> None:
        with open(tmp, "w", encoding="utf-8", newline="\n") as fh:
            fh.write(text)

    _atomic(out, write)
