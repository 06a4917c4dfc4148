"""The HTML shell shared by served and static mode: one jinja2 template (autoescaped), our own
script and stylesheet inlined under a per-page nonce, and the data as inert JSON."""

from __future__ import annotations

import functools
import json
import secrets
from importlib import resources
from typing import Any

from jinja2 import Environment, PackageLoader, select_autoescape

from skillassay.store.templates import template_bytecode_cache
from skillassay.viewer.render import highlight_css

# Escaping <, > and & means no byte sequence in the data can close the <script> element or open
# a comment; JSON.parse reads \u003c back as "<". U+2028/9 are escaped for old parsers' sake.
_JSON_ESCAPES = str.maketrans({"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028", "\u2029": "\\u2029"})


def script_json(data: Any) -> str:
    """JSON that is safe inside <script type="application/json"> whatever strings it carries."""
    return json.dumps(data, ensure_ascii=False, separators=(",", ":")).translate(_JSON_ESCAPES)


def csp(nonce: str, served: bool) -> str:
    """No network but our own API (served mode only), no script or style without the nonce,
    images only from data: URIs, no plugins, no <base> or form tricks."""
    connect = "connect-src 'self'" if served else "connect-src 'none'"
    return (f"default-src 'none'; script-src 'nonce-{nonce}'; style-src 'nonce-{nonce}'; img-src data:; "
            f"{connect}; base-uri 'none'; form-action 'none'; object-src 'none'")


@functools.cache
def _env() -> Environment:
    return Environment(loader=PackageLoader("skillassay.viewer", "templates"),
                       autoescape=select_autoescape(["html", "j2"], default=True),
                       bytecode_cache=template_bytecode_cache())


@functools.cache
def _asset(name: str) -> str:
    return resources.files("skillassay.viewer").joinpath("assets", name).read_text(encoding="utf-8")


def new_nonce() -> str:
    return secrets.token_urlsafe(18)


def render_page(*, title: str, mode: str, boot: dict[str, Any], nonce: str, boot_json: str | None = None) -> str:
    """`boot_json` replaces the data (already script_json-escaped): the static page passes a
    placeholder and streams the data in its place."""
    css = _asset("viewer.css") + "\n" + highlight_css()
    return _env().get_template("page.html.j2").render(
        title=title, mode=mode, csp=csp(nonce, mode == "served"), nonce=nonce,
        css=css, js=_asset("viewer.js"), boot_json=boot_json if boot_json is not None else script_json({"mode": mode, **boot}))
