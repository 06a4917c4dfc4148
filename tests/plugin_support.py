"""A plugin distribution installed the way pip leaves one: a `NAME-VERSION.dist-info` folder
(METADATA, entry_points.txt) beside the package's code, in a folder put on sys.path. The
registry then finds it through importlib.metadata's real scan, not through a stand-in."""

from __future__ import annotations

import sys
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

from skillassay import plugins


def write_distribution(site: Path, name: str, entry_points: Mapping[str, Mapping[str, str]],
                       files: Mapping[str, str] = {}, version: str = "1.0") -> Path:
    """Write distribution `name` into `site`: its files (relative path -> text) and its
    dist-info with the given entry points (group -> {name: "module:attr [extra]"})."""
    info = site / f"{name.replace('-', '_')}-{version}.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n", encoding="utf-8")
    lines = []
    for grp, eps in entry_points.items():
        lines.append(f"[{grp}]")
        lines += [f"{ep_name} = {value}" for ep_name, value in eps.items()]
        lines.append("")
    (info / "entry_points.txt").write_text("\n".join(lines), encoding="utf-8")
    for rel, text in files.items():
        path = site / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return info


@contextmanager
def on_path(site: Path) -> Iterator[None]:
    """`site` on sys.path (as an installed site folder is) and the registry rescanned, then
    both undone."""
    sys.path.insert(0, str(site))
    plugins.rescan()
    try:
        yield
    finally:
        sys.path.remove(str(site))
        for mod in [m for m in sys.modules if getattr(sys.modules[m], "__file__", None) and
                    str(site) in str(getattr(sys.modules[m], "__file__", ""))]:
            del sys.modules[mod]
        plugins.rescan()
