"""Headless Chromium for the viewer tests: Debian's browser at /usr/bin/chromium, driven by
Playwright (its own browser download does not work offline)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

CHROMIUM = Path("/usr/bin/chromium")
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
        "--no-first-run"]


class Watch:
    """What a page did that it must not: dialogs, script errors, requests off the allowed list."""

    def __init__(self, page: Any) -> None:
        self.dialogs: list[str] = []
        self.errors: list[str] = []
        self.requests: list[str] = []
        page.on("dialog", lambda d: (self.dialogs.append(d.message), d.dismiss()))
        page.on("pageerror", lambda e: self.errors.append(str(e)))
        page.on("request", lambda r: self.requests.append(r.url))


def new_page(browser: Any, bypass_csp: bool = False) -> tuple[Any, Any, Watch]:
    context = browser.new_context(viewport={"width": 1280, "height": 900}, accept_downloads=True, bypass_csp=bypass_csp)
    pg = context.new_page()
    return context, pg, Watch(pg)


def open_viewer(pg: Any, url: str) -> None:
    pg.goto(url)
    pg.wait_for_selector("body[data-ready='1']", timeout=15000)
