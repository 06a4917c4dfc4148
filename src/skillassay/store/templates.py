"""jinja2's compiled templates kept between processes (its own FileSystemBytecodeCache), in the
user's cache folder: compiling benchmark.md's and report.md's templates from source took
0.064-0.069 s of every `run`, `aggregate` and `report` (measured in a fresh process; 0.001 s
from the cache)."""

from __future__ import annotations

import contextlib
import functools
from pathlib import Path
from typing import TYPE_CHECKING

import platformdirs

if TYPE_CHECKING:
    import jinja2


@functools.cache
def template_bytecode_cache() -> jinja2.BytecodeCache | None:
    """None (compile every time, as before) when the cache folder cannot be made; a cache that
    cannot be written to is only slower, never an error. jinja2 keys each entry by the
    template's source checksum, so an edited template is never served stale."""
    import jinja2

    class QuietCache(jinja2.FileSystemBytecodeCache):
        def dump_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
            with contextlib.suppress(OSError):  # read-only or full cache folder: skip the cache
                super().dump_bytecode(bucket)

    folder = Path(platformdirs.user_cache_dir("skillassay")) / "jinja2"
    try:
        folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    except OSError:
        return None
    return QuietCache(str(folder))
