"""Turning untrusted output files into display data. Escaping happens here, on our side, with
well-kept libraries (Pygments, markdown-it-py with raw HTML disabled), so the page never has to
trust a byte the agent wrote: the browser only receives escaped HTML, data URIs or plain text."""

from __future__ import annotations

import base64
import functools
from pathlib import Path
from typing import Any

from markdown_it import MarkdownIt
from pygments import highlight
from pygments.formatters import HtmlFormatter
from pygments.lexers import TextLexer, get_lexer_for_filename
from pygments.util import ClassNotFound

from skillassay.store.redact import disk_redactor

TEXT_CAP = 200_000  # characters of one text file put into the page
EMBED_CAP = 2_000_000  # bytes of one image or download embedded as a data URI
IMAGE_TYPES = {".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".gif": "image/gif",
               ".webp": "image/webp"}  # SVG is deliberately absent: it is code, shown as text
MARKDOWN_SUFFIXES = {".md", ".markdown"}


@functools.cache
def _markdown() -> MarkdownIt:
    # html=False turns any raw HTML into text; markdown-it's validateLink drops javascript:,
    # vbscript:, file: and non-image data: links.
    # breaks=True: agents' answers use single newlines as line breaks, not as soft wraps.
    return MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False, "breaks": True}).enable("table")


def markdown_html(text: str) -> str:
    """Markdown to HTML that cannot carry script: raw HTML is escaped, unsafe links removed."""
    return _markdown().render(text)


def highlighted_html(name: str, text: str) -> tuple[str, bool]:
    """(escaped HTML, whether a real lexer matched). Unknown kinds still go through Pygments so
    the escaping path is the same for every file."""
    try:
        lexer = get_lexer_for_filename(name, stripnl=False)
    except ClassNotFound:
        lexer = TextLexer(stripnl=False)
    html = highlight(text, lexer, HtmlFormatter(cssclass="hl", wrapcode=True))
    return html, not isinstance(lexer, TextLexer)


def highlight_css() -> str:
    return HtmlFormatter(style="friendly").get_style_defs(".hl")


def _decode_text(head: bytes) -> str | None:
    """Text when it decodes as UTF-8 with no NUL byte; a cut multi-byte char at the cap is fine."""
    if b"\x00" in head:
        return None
    try:
        return head.decode("utf-8")
    except UnicodeDecodeError as exc:
        if exc.start >= len(head) - 3:
            return head[: exc.start].decode("utf-8", errors="strict")
        return None


def data_uri(mime: str, raw: bytes) -> str:
    return f"data:{mime};base64,{base64.b64encode(raw).decode('ascii')}"


def render_file(path: Path, name: str, download_href: str | None) -> dict[str, Any]:
    """One output file as display data. `download_href` is the served-mode URL for binaries;
    None means embed them (static mode) up to EMBED_CAP."""
    size = path.stat().st_size
    base: dict[str, Any] = {"name": name, "size": size, "truncated": False, "note": ""}
    suffix = path.suffix.lower()
    if suffix in IMAGE_TYPES:
        return {**base, **_image(path, size, suffix)}
    with path.open("rb") as fh:
        head = fh.read(TEXT_CAP * 4 + 4)
    text = _decode_text(head)
    if text is None:
        return {**base, **_binary(path, size, download_href)}
    truncated = len(text) > TEXT_CAP or size > len(head)
    if truncated:
        text = text[:TEXT_CAP]
        base.update(truncated=True, note=f"showing the first {TEXT_CAP:,} characters of {size:,} bytes")
    # The agent's own file, never masked on disk: masked before rendering can change how it
    # is spelled (the page's writer masks again, after).
    text = disk_redactor().text(text)
    if suffix in MARKDOWN_SUFFIXES:
        return {**base, "kind": "markdown", "html": markdown_html(text)}
    html, is_code = highlighted_html(name, text)
    return {**base, "kind": "code" if is_code else "text", "html": html}


def _image(path: Path, size: int, suffix: str) -> dict[str, Any]:
    if size > EMBED_CAP:
        return {"kind": "binary", "href": None, "note": f"image not embedded: {size:,} bytes is over {EMBED_CAP:,}"}
    return {"kind": "image", "src": data_uri(IMAGE_TYPES[suffix], path.read_bytes())}


def _binary(path: Path, size: int, download_href: str | None) -> dict[str, Any]:
    if download_href is not None:
        return {"kind": "binary", "href": download_href}
    if size > EMBED_CAP:
        return {"kind": "binary", "href": None, "note": f"not embedded: {size:,} bytes is over {EMBED_CAP:,}"}
    # Always octet-stream: a download must stay a download, never a page the browser renders.
    return {"kind": "binary", "href": data_uri("application/octet-stream", path.read_bytes())}


def warm_renderers() -> None:
    """Import and build what rendering a run needs (markdown-it, Pygments' lexer table), so
    the first run a reviewer opens does not pay for it."""
    markdown_html("*x*")
    highlighted_html("x.py", "x = 1\n")
    highlighted_html("x.unknown-suffix", "x\n")
