"""Reading and writing our JSON files. Writes are atomic (temp file + rename in the same
folder) so a killed run never leaves half a file; reads turn every failure into InputError
naming the file and the JSON path."""

from __future__ import annotations

import contextlib
import json
import os
import re
import threading
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any, TextIO, TypeVar, cast

import orjson
from pydantic import BaseModel, ValidationError
from pydantic_core import PydanticSerializationError, to_json

from skillassay.errors import InputError, Problem
from skillassay.models.base import unknown_key_message
from skillassay.store.file_writer_child import write_atomically, write_in_place
from skillassay.store.redact import DiskRedactor, disk_redactor

M = TypeVar("M", bound=BaseModel)


class _RedactedBytes:
    """The `.buffer` of a redacting handle. Bytes arrive in arbitrary blocks (a spool copied a
    megabyte at a time), so the text after the last newline waits for the next block: JSON
    puts no newline inside a string, so a secret is never cut in two."""

    def __init__(self, raw: IO[bytes], redactor: DiskRedactor) -> None:
        self.raw, self.redactor, self.carry = raw, redactor, b""

    def write(self, data: bytes) -> int:
        data = self.carry + data
        cut = data.rfind(b"\n") + 1
        self.carry = data[cut:]
        if cut:
            self.raw.write(self.redactor.bytes(data[:cut]))
        return len(data)

    def drain(self) -> None:
        if self.carry:
            self.raw.write(self.redactor.bytes(self.carry))
            self.carry = b""


class _RedactedText:
    """What atomic_open hands out: every write is masked by the one disk redactor, so no file
    we write can carry a key (store/redact.py)."""

    def __init__(self, fh: TextIO, redactor: DiskRedactor) -> None:
        self.fh, self.redactor = fh, redactor
        self.buffer = _RedactedBytes(fh.buffer, redactor)

    def write(self, text: str) -> int:
        self.buffer.drain()
        return self.fh.write(self.redactor.text(text))

    def flush(self) -> None:
        self.fh.flush()

    def close_pending(self) -> None:
        self.buffer.drain()


@contextlib.contextmanager
def atomic_open(path: Path | str) -> Iterator[TextIO]:
    """A text file handle whose content replaces `path` atomically (temp file in the same
    folder + os.replace) when the block ends without error; on error the temp file goes.
    Everything written through it passes the disk redactor (secrets masked)."""
    # Hot path (six files per trial): plain string paths, and a per-process, per-thread temp
    # name that is unique without mkstemp's cost.
    folder, name = os.path.split(os.fspath(path))
    tmp = f"{folder}/.{name}.{os.getpid()}.{threading.get_ident()}.tmp"
    # newline="\n": the same bytes on every OS, and aggregate writes runs[] as bytes beneath the
    # text layer, which would otherwise mix LF into a CRLF file on Windows.
    try:
        try:
            fh = open(tmp, "w", encoding="utf-8", newline="\n")  # noqa: SIM115 - closed below
        except FileNotFoundError:
            os.makedirs(folder, exist_ok=True)
            fh = open(tmp, "w", encoding="utf-8", newline="\n")  # noqa: SIM115
        with fh:
            masked = _RedactedText(fh, disk_redactor())
            yield cast(TextIO, masked)
            masked.close_pending()
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


_TEMP_NAME = re.compile(r"\..+\.(\d+)\.(\d+)\.tmp")  # atomic_open's: .<name>.<pid>.<thread>.tmp


def _running(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except (ProcessLookupError, OverflowError):  # gone, or a pid no process can have
        return False
    except PermissionError:  # another user's process
        return True
    return True


def remove_stale_temps(folder: Path | str) -> list[str]:
    """Delete the temp files atomic_open left in `folder` when its process was killed (a 233 KB
    `.benchmark.json.<pid>.<n>.tmp` stays forever otherwise). Only ours (by name) and only of
    processes no longer running; a caller holds the workspace lock, so nobody else writes there."""
    removed: list[str] = []
    try:
        entries = list(os.scandir(folder))
    except (FileNotFoundError, NotADirectoryError):
        return removed
    for entry in entries:
        m = _TEMP_NAME.fullmatch(entry.name)
        if m and entry.is_file(follow_symlinks=False) and not _running(int(m.group(1))):
            with contextlib.suppress(FileNotFoundError):
                os.unlink(entry.path)
                removed.append(entry.path)
    return removed


_SECOND: tuple[int, str] = (-1, "")  # (the last second formatted, its "YYYY-MM-DDTHH:MM:SS.")


def now_iso() -> str:
    """The one timestamp format of every file we write (UTC, microseconds, trailing Z), e.g.
    2026-12-01T17:19:31.683047Z. Four calls per trial: the date and time of day are formatted
    once per second and only the microseconds for each call (the clock datetime.now reads,
    truncated to microseconds as it does: the same text at a quarter of the cost)."""
    global _SECOND
    seconds, micros = divmod(time.time_ns() // 1000, 1_000_000)
    done, prefix = _SECOND
    if done != seconds:
        prefix = datetime.fromtimestamp(seconds, UTC).isoformat()[:-6] + "."  # "+00:00" off
        _SECOND = (seconds, prefix)
    return f"{prefix}{micros:06d}Z"


def atomic_write_bytes(path: Path | str, data: bytes) -> None:
    """`data` replaces `path` atomically (temp file in the same folder + os.replace), like
    atomic_open but through bare file descriptors: no text layer to build for a file written in
    one piece (six per trial; the io stack was a third of each write). The caller has redacted
    `data`: atomic_write_text is the entry point that does it. The code is the write-behind
    child's (store/file_writer_child.py, stdlib only), so both write a file the same way."""
    write_atomically(os.fspath(path), data)


def write_before_marker(path: str, data: bytes) -> None:
    """`data` written to `path` in place, for a trial's files before its grading.json: the
    trial's files are a unit whose commit is grading.json, written last and atomically once
    every other file is closed. Nothing reads a run folder's files before its grading.json
    exists (store/read.read_trial and the plain reader start there), a trial killed half-way
    has none, so resume runs it again and overwrites what it left (outputs/ emptied first), and
    a failed trial loses its grading.json before it runs again (run/reuse.archive_failed_attempt).
    So the temp name and rename that atomic_write_bytes pays for buy nothing here; the rename is
    about 11 of the 30 microseconds a file costs on this VM's tmpfs, five files per trial. The
    caller has redacted `data`. Missing folders are made."""
    write_in_place(path, data)


def atomic_write_text(path: Path | str, text: str, redactor: Callable[[str], str] | None = None) -> None:
    """`text`, masked, replaces `path` atomically. `redactor`: a disk redactor's `text` the
    caller already holds (the trial loop's, fixed for the run like the answer it grades), so
    the hot path does not look the environment up again for every file; else the current one."""
    masked = (redactor or disk_redactor().text)(text)
    atomic_write_bytes(path, masked.encode("utf-8"))


def dump_json(data: Any) -> str:
    """Pretty JSON via orjson when the data is plain (see _plain_model), else pydantic-core's
    Rust encoder (the stdlib encoder falls back to pure Python whenever indent is set: ~25x
    slower, and this runs several times per trial)."""
    try:
        if isinstance(data, BaseModel):
            try:
                return orjson.dumps(_plain_model(data), option=_INDENT_NL).decode("utf-8")
            except (_NotPlain, orjson.JSONEncodeError):
                return data.model_dump_json(indent=2, by_alias=True, exclude_unset=True) + "\n"
        return to_json(data, indent=2).decode("utf-8") + "\n"
    except PydanticSerializationError:
        # A lone surrogate read from another tool's run file (allowed there) and carried into
        # what we write: written back escaped (\udfff), as the file had it.
        plain = data.model_dump(mode="json", by_alias=True, exclude_unset=True) if isinstance(data, BaseModel) else data
        return json.dumps(plain, indent=2, ensure_ascii=True) + "\n"


_INDENT_NL = orjson.OPT_INDENT_2 | orjson.OPT_APPEND_NEWLINE


class _NotPlain(Exception):
    """A model _plain_model cannot write as pydantic would: pydantic writes it."""


# Per model class: (attribute, key on disk) of every field a dump includes, or None when the
# class has serializers or excluded fields (what only pydantic's own dump honours).
_DUMP_KEYS: dict[type, tuple[tuple[str, str], ...] | None] = {}


def _dump_keys(cls: type[BaseModel]) -> tuple[tuple[str, str], ...] | None:
    decorators = cls.__pydantic_decorators__
    if decorators.field_serializers or decorators.model_serializers or any(
            f.exclude or f.serialization_alias not in (None, f.alias) for f in cls.model_fields.values()):
        keys = None
    else:
        keys = tuple((name, f.alias or name) for name, f in cls.model_fields.items())
    _DUMP_KEYS[cls] = keys
    return keys


def _plain_model(model: BaseModel) -> dict[str, Any]:
    """The dict model_dump(by_alias=True, exclude_unset=True) gives, key for key in its order
    (declared fields, then extras), without pydantic's serializer: for the three files every
    trial writes (metrics, timing, grading) that serializer was ~45 microseconds of a trial's
    ~600, orjson on this dict ~5. Only plain values pass (orjson refuses anything else, and
    the caller falls back to pydantic), so the bytes are what pydantic writes: both print the
    shortest round-trip float and NaN as null; a long integer or a lone surrogate makes orjson
    refuse."""
    cls = type(model)
    keys = _DUMP_KEYS[cls] if cls in _DUMP_KEYS else _dump_keys(cls)
    if keys is None:
        raise _NotPlain(cls.__name__)
    values, fields_set = model.__dict__, model.__pydantic_fields_set__
    out: dict[str, Any] = {}
    for name, key in keys:
        if name in fields_set:
            value = values[name]
            out[key] = value if type(value) in _SCALARS else _plain_value(value)
    extra = model.__pydantic_extra__
    if extra:
        for key, value in extra.items():
            out[key] = value if type(value) in _SCALARS else _plain_value(value)
    return out


_SCALARS = frozenset({str, int, float, bool, type(None)})  # exact types: a str enum is not plain


def _plain_value(value: Any) -> Any:
    kind = type(value)
    if kind in _SCALARS:
        return value
    if kind is list:
        return [v if type(v) in _SCALARS else _plain_value(v) for v in value]
    if kind is dict:
        return {k: v if type(v) in _SCALARS else _plain_value(v) for k, v in value.items()}
    if isinstance(value, BaseModel):
        return _plain_model(value)
    raise _NotPlain(kind.__name__)  # tuples, sets, paths, enums...: pydantic's rules, not orjson's


def write_json(path: Path | str, data: Any, redactor: Callable[[str], str] | None = None) -> None:
    atomic_write_text(path, dump_json(data), redactor)


def json_entry(path: str, data: Any, redactor: Callable[[str], str], atomic: bool = False) -> tuple[str, bytes, bool]:
    """A JSON file as a sink takes it (store/writebehind.py): its path, its masked bytes, and
    whether it replaces the file atomically (as write_json does) or is written in place (a
    trial's files before its grading.json: write_before_marker)."""
    return path, redactor(dump_json(data)).encode("utf-8"), atomic


# --- the one guarded parse every reader goes through ---------------------------------------
#
# Files come from other tools, other people and models. Python's json recurses (RecursionError
# near depth 1,000), refuses integers over 4,300 digits with a bare ValueError, and accepts
# lone surrogates that no encoder can write back; orjson reads 1,024 levels (deeper than
# Python code can later walk) and turns long integers into floats. So: orjson first (fast), json
# when orjson refuses or a long integer is present, and the limits below checked on the result.

MAX_JSON_BYTES = 1 << 30  # a file beyond this is refused before it is read into memory
MAX_DEPTH = 64  # nesting levels; our own files use fewer than 10
MAX_INT_DIGITS = 64  # digits of one integer; no count, id or seed of ours needs more
# orjson reads integers of 20+ digits as floats: a run of 19+ digits sends the file to json
# (found with translate + find, ~30x faster than a regex search on a 6 MB benchmark.json).
_DIGITS_AS_ZERO = bytes.maketrans(b"123456789", b"000000000")
_LONG_DIGITS = b"0" * 19
_HAS_ESCAPED_SURROGATE = re.compile(rb"\\u[dD][89a-fA-F]")


class JSONLimitError(ValueError):
    """A file that parses but breaks a limit (or that Python's parser cannot take). A ValueError,
    so readers that already treat ValueError as 'this file is broken' keep doing so."""

    def __init__(self, location: str, message: str) -> None:
        super().__init__(f"{location}: {message}" if location else message)
        self.location = location
        self.message = message


def _line_col(raw: bytes, pos: int) -> str:
    line, line_start = raw.count(b"\n", 0, pos) + 1, raw.rfind(b"\n", 0, pos) + 1
    return f"line {line} column {pos - line_start + 1}"


def _bounded_int(text: str) -> int:
    if len(text.lstrip("-")) > MAX_INT_DIGITS:
        raise JSONLimitError("", f"an integer of {len(text.lstrip('-')):,} digits (at most {MAX_INT_DIGITS})")
    return int(text)


def _too_deep(data: Any) -> bool:
    """Whether parsed JSON nests more than MAX_DEPTH levels: level by level, containers only,
    no paths kept (the walk that names the place costs seconds on a 20,000-run benchmark.json)."""
    level, depth = [data], 0
    while level:
        depth += 1
        if depth > MAX_DEPTH:
            return True
        nxt: list[Any] = []
        for node in level:
            nxt.extend(v for v in (node.values() if type(node) is dict else node) if type(v) is dict or type(v) is list)
        level = nxt
    return False


def check_limits(data: Any, strings: bool) -> None:
    """Depth (always) and lone surrogates (when `strings`), naming the first offending place.
    Iterative, so the check itself cannot hit the recursion limit."""
    stack: list[tuple[Any, tuple[int | str, ...]]] = [(data, ())]
    while stack:
        node, loc = stack.pop()
        if isinstance(node, dict):
            items: Any = node.items()
        elif isinstance(node, list):
            items = enumerate(node)
        else:
            if strings and isinstance(node, str):
                _check_string(node, loc)
            continue
        if len(loc) >= MAX_DEPTH:
            where = json_path(loc[:8]) + ("..." if len(loc) > 8 else "")
            raise JSONLimitError(where, f"nested too deeply (more than {MAX_DEPTH} levels)")
        for key, value in items:
            if strings and isinstance(key, str):
                _check_string(key, loc)
            if strings or isinstance(value, dict | list):
                stack.append((value, (*loc, key)))


def _check_string(text: str, loc: tuple[int | str, ...]) -> None:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise JSONLimitError(json_path(loc), f"a string holds an unpaired surrogate "
                                             f"\\u{ord(text[exc.start]):04x}, which is not Unicode text") from None


def parse_json_bytes(raw: bytes, *, allow_surrogates: bool = False) -> Any:
    """Parse JSON under the limits above. Raises json.JSONDecodeError (a ValueError, with line and
    column) for bad JSON and JSONLimitError (a ValueError, with where) for a broken limit.
    `allow_surrogates` keeps lone surrogates (run files of other tools, read as written and
    written back escaped); spec files refuse them, since what we write from them must encode."""
    if len(raw) > MAX_JSON_BYTES:
        raise JSONLimitError("", f"{len(raw):,} bytes is over the {MAX_JSON_BYTES:,}-byte limit")
    if raw.startswith(b"\xef\xbb\xbf"):
        raw = raw[3:]
    if _LONG_DIGITS not in raw.translate(_DIGITS_AS_ZERO):
        try:
            data = orjson.loads(raw)
        except orjson.JSONDecodeError as exc:
            if str(exc).startswith("depth limit exceeded"):
                raise JSONLimitError(_line_col(raw, exc.pos), f"nested too deeply (more than {MAX_DEPTH} levels)") from None
        else:
            if raw.count(b"[") + raw.count(b"{") > MAX_DEPTH and type(data) in (dict, list) and _too_deep(data):
                check_limits(data, strings=False)  # names the place (and raises)
            return data
    # json decides what orjson refuses (NaN, Infinity: json reads them) and says why with line
    # and column; and it keeps long integers exact.
    text = raw.decode("utf-8")
    try:
        data = json.loads(text, parse_int=_bounded_int)
    except RecursionError:
        raise JSONLimitError("", f"nested too deeply (more than {MAX_DEPTH} levels)") from None
    except JSONLimitError as exc:
        digits = re.search(rf"[0-9]{{{MAX_INT_DIGITS + 1},}}", text)
        where = _line_col(raw, len(text[: digits.start()].encode("utf-8"))) if digits else ""
        raise JSONLimitError(where, exc.message) from None
    check_limits(data, strings=not allow_surrogates and bool(_HAS_ESCAPED_SURROGATE.search(raw)))
    return data


def read_json(path: Path) -> Any:
    """Parse a JSON file; any failure (missing, folder, empty, bad encoding, bad JSON, a limit
    broken) is an InputError that names the file and where in it."""
    if not path.exists():
        raise InputError.one(path, "", "file not found")
    if path.is_dir():
        raise InputError.one(path, "", "is a directory, expected a JSON file")
    if not path.is_file():  # a FIFO would make the read wait forever, a device never end
        raise InputError.one(path, "", "not a regular file (a FIFO, socket or device), expected a JSON file")
    try:
        if path.stat().st_size > MAX_JSON_BYTES:
            raise InputError.one(path, "", f"{path.stat().st_size:,} bytes is over the {MAX_JSON_BYTES:,}-byte limit")
        raw = path.read_bytes()
    except OSError as exc:
        raise InputError.one(path, "", f"cannot read: {exc.strerror}") from None
    return parse_json_file_bytes(raw, path)


def parse_json_file_bytes(raw: bytes, path: Path | str) -> Any:
    """parse_json_bytes with every failure as an InputError naming `path` (for callers that
    read the bytes themselves)."""
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InputError.one(path, "", f"not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    if not text.strip():
        raise InputError.one(path, "", "file is empty, expected a JSON object")
    try:
        return parse_json_bytes(raw)
    except json.JSONDecodeError as exc:
        raise InputError.one(path, f"line {exc.lineno} column {exc.colno}", f"invalid JSON: {exc.msg}") from None
    except JSONLimitError as exc:
        raise InputError.one(path, exc.location, exc.message) from None


def load_json_lenient(path: Path | str, default: Any = None) -> Any:
    """For files whose damage should only hide what they add (a cache, a viewer panel): the
    parsed value, or `default` when the file is missing or broken in any way, or is no regular
    file (a FIFO would block the read forever) or is over the size limit."""
    p = Path(path)
    try:
        if not p.is_file() or p.stat().st_size > MAX_JSON_BYTES:
            return default
        return parse_json_bytes(p.read_bytes())
    except (OSError, ValueError):
        return default


def json_path(loc: tuple[int | str, ...]) -> str:
    out = "$"
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else f".{part}"
    return out


_SCALAR_BRANCHES = {"str", "int", "float", "bool", "none", "list", "dict"}


def _json_type(value: Any) -> str:
    names = {dict: "an object", list: "an array", str: "a string", bool: "a boolean"}
    if value is None:
        return "null"
    return names.get(type(value), "a number" if isinstance(value, int | float) else "a value")


def _is_branch_tag(part: int | str, node: Any) -> bool:
    """pydantic puts union member names (`str`, `Assertion`, `literal[...]`) into loc. A part is
    such a tag only if it is not a real key of the input there, so user keys ("Read", "A") stay."""
    if not isinstance(part, str) or (isinstance(node, dict) and part in node):
        return False
    return "[" in part or part in _SCALAR_BRANCHES or part[:1].isupper()


def validation_problems(
    path: Path | str, exc: ValidationError, data: Any = None, model: type[BaseModel] | None = None
) -> list[Problem]:
    """One Problem per wrong place. Union branches that cannot match the input's JSON type
    (the `str` branch when an object was given) are dropped, and what is left at one place is
    merged into one message, so `{"value": 1}` as an expectation reads as a missing `type`."""
    found: list[tuple[str, str, str | None, bool]] = []  # (where, message, union node, noise)
    for err in exc.errors(include_url=False):
        node, union, noise = data, None, False
        loc: list[str | int] = []
        for part in err["loc"]:
            if _is_branch_tag(part, node):
                if union is None:
                    union = json_path(tuple(loc))
                    if isinstance(node, dict):
                        noise = part in _SCALAR_BRANCHES
                    else:
                        noise = err["type"] in {"model_type", "dict_type"}
                continue
            loc.append(part)
            if isinstance(node, dict):
                node = node.get(part)
            elif isinstance(node, list) and isinstance(part, int) and 0 <= part < len(node):
                node = node[part]
            else:
                node = None
        msg = err["msg"].removeprefix("Value error, ")
        if err["type"] == "model_type":  # "valid dictionary or instance of Stat" is pydantic-speak
            msg = f"expected a JSON object, got {_json_type(err['input'])}"
        if "[key]" in err["loc"]:
            msg = f"invalid key: {msg}"
        if err["type"] == "extra_forbidden" and model is not None:
            msg = unknown_key_message(model, err["loc"])
        found.append((json_path(tuple(loc)), msg, union, noise))
    # Drop noise only when its union has another branch's error to show instead.
    useful = {u for _, _, u, noise in found if u is not None and not noise}
    merged: dict[str, list[str]] = {}
    for where, msg, union, noise in found:
        if noise and union in useful:
            continue
        if msg not in merged.setdefault(where, []):
            merged[where].append(msg)
    return [Problem(str(path), where, "; or ".join(msgs)) for where, msgs in merged.items()]


def load_model(path: Path, model: type[M]) -> M:
    data = read_json(path)
    return parse_model(data, model, path)


def parse_model(data: Any, model: type[M], path: Path | str) -> M:
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise InputError(validation_problems(path, exc, data, model)) from None
