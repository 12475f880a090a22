"""File helpers shared by every stage: atomic writes and strict line reading."""

from __future__ import annotations

import contextlib
import errno
import gzip
import io
import json
import os
import re
import shutil
import tempfile
import zlib
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import IO, Any


def _current_umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


_UMASK = _current_umask()


class InputError(ValueError):
    """Bad input data; the message names the file and, where known, the line."""

    def __init__(self, path: str | os.PathLike[str], cause: str, line: int | None = None):
        where = f"{path}:{line}" if line is not None else str(path)
        super().__init__(f"{where}: {cause}")
        self.path = str(path)
        self.line = line
        self.cause = cause


@contextlib.contextmanager
def atomic_write(path: str | os.PathLike[str], mode: str = "w", encoding: str | None = "utf-8",
                 newline: str | None = "\n") -> Iterator[IO]:
    """Open a temporary file beside ``path`` and rename it over ``path`` only on success.

    A killed or failing writer therefore never leaves a partial file under the final name.
    """
    target = Path(path)
    # OSErrors naming the target (not its temporary name): callers such as the caches catch
    # them, and the command line prints them in one line
    if target.is_dir():
        raise IsADirectoryError(errno.EISDIR, "is a folder; give a file name to write",
                                str(target))
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    except FileExistsError as err:  # mkdir met a file where a folder of the path should be
        raise NotADirectoryError(errno.ENOTDIR, "cannot be written: a file stands where its "
                                 "folder should be", str(target)) from err
    except OSError as err:
        raise type(err)(err.errno, f"cannot be written: {err.strerror or err}",
                        str(target)) from err
    # mkstemp creates 0600 files; give the result the permissions a plain open() would.
    os.chmod(tmp, 0o666 & ~_UMASK)
    binary = "b" in mode
    try:
        with os.fdopen(fd, mode, encoding=None if binary else encoding,
                       newline=None if binary else newline) as handle:
            yield handle
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


@contextlib.contextmanager
def atomic_directory(path: str | os.PathLike[str]) -> Iterator[Path]:
    """Yield an empty temporary folder beside ``path``; on success it replaces ``path``,
    on failure it is removed. A killed or failing writer never leaves a folder under the
    final name that looks complete."""
    final = Path(path)
    partial = final.with_name(f".{final.name}.partial")
    shutil.rmtree(partial, ignore_errors=True)
    partial.mkdir(parents=True)
    try:
        yield partial
        shutil.rmtree(final, ignore_errors=True)
        os.replace(partial, final)
    finally:
        shutil.rmtree(partial, ignore_errors=True)


def write_json(path: str | os.PathLike[str], record: Mapping[str, Any]) -> None:
    """Atomically write ``record`` as indented UTF-8 JSON with sorted keys (stable bytes).
    A list of numbers takes one line (a sentence's statistics, an interval)."""
    with atomic_write(path) as out:
        out.write(dumps_json(record))
        out.write("\n")


#: Stands for a list of numbers while the rest is indented (no text holds a NUL).
_LEAF = "\x00phenomt-numbers-{}\x00"
_LEAF_AT = re.compile("(?m)^( *)(.*)" + re.escape(json.dumps(_LEAF.format("_")))
                      .replace("_", r"(\d+)"))


_JSON_TYPES = {list: "an array", str: "a string", int: "a number", float: "a number",
               bool: "true or false", type(None): "null"}


def load_json(path: str | Path) -> dict:
    """A JSON file whose top level is an object; an InputError naming the file (and the line
    where there is one) when it is missing, not UTF-8, not JSON or not an object."""
    try:
        data = Path(path).read_bytes()
    except FileNotFoundError:
        raise InputError(path, "file not found") from None
    except OSError as err:
        raise InputError(path, f"cannot read: {err.strerror or err}") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as err:
        raise InputError(path, f"not UTF-8 text (byte 0x{data[err.start]:02x}, {err.reason})",
                         data.count(b"\n", 0, err.start) + 1) from None
    try:
        record = json.loads(text)
    except json.JSONDecodeError as err:
        raise InputError(path, f"invalid JSON: {err.msg} (column {err.colno})",
                         err.lineno) from None
    if not isinstance(record, dict):
        raise InputError(path, "expected a JSON object at the top level, not "
                               f"{_JSON_TYPES.get(type(record), type(record).__name__)}")
    return record


def _numbers(value: Any) -> bool:
    return isinstance(value, list) and bool(value) and all(
        type(item) in (int, float) for item in value)


def dumps_json(record: Any) -> str:
    """:func:`write_json`'s text. json's indenting encoder is written in Python; the lists of
    numbers (thousands of rows of per-sentence statistics in a score record) are encoded
    apart by its C encoder, one line each, several times faster."""
    leaves: list[tuple[bool, str]] = []  # (rows?, the list's JSON)

    def swap(value: Any) -> Any:
        if isinstance(value, dict):
            return {key: swap(item) for key, item in value.items()}
        if isinstance(value, (list, tuple)):
            value = list(value)
            if _numbers(value):
                leaves.append((False, json.dumps(value)))
            elif value and all(_numbers(row) for row in value):
                leaves.append((True, json.dumps(value)))
            else:
                return [swap(item) for item in value]
            return _LEAF.format(len(leaves) - 1)
        return value

    text = json.dumps(swap(record), indent=2, sort_keys=True, ensure_ascii=False)

    def put(match: re.Match) -> str:
        indent, before = match.group(1), match.group(2)
        rows, leaf = leaves[int(match.group(3))]
        if not rows:
            return f"{indent}{before}{leaf}"
        # "[[1, 2], [3, 4]]": numbers hold no bracket, so rows split at "], ["
        inside = leaf[1:-1].replace("], [", f"],\n{indent}  [")
        return f"{indent}{before}[\n{indent}  {inside}\n{indent}]"

    return _LEAF_AT.sub(put, text) if leaves else text


def write_lines(path: str | os.PathLike[str], lines: Iterable[str]) -> int:
    """Atomically write one string per line; returns the number of lines."""
    count = 0
    with atomic_write(path) as out:
        for line in lines:
            out.write(line)
            out.write("\n")
            count += 1
    return count


def open_binary(path: str | os.PathLike[str]) -> IO[bytes]:
    """Open a file for reading bytes, transparently gunzipping gzip files.

    Gzip is recognised by its magic bytes, not the name: downloads are stored under ids.
    """
    p = Path(path)
    if not p.is_file():
        raise InputError(p, "file not found")
    with open(p, "rb") as probe:
        magic = probe.read(2)
    return gzip.open(p, "rb") if magic == b"\x1f\x8b" else open(p, "rb")


@contextlib.contextmanager
def _gzip_errors(path: str | os.PathLike[str]) -> Iterator[None]:
    """A damaged gzip file (recognised by its first two bytes) as an InputError."""
    try:
        yield
    except (EOFError, gzip.BadGzipFile, zlib.error) as err:
        raise InputError(path, f"starts like a gzip file but cannot be read as one ({err})"
                         ) from None


def iter_lines(path: str | os.PathLike[str]) -> Iterator[str]:
    """Yield the lines of a UTF-8 text file (``.gz`` allowed) without their line ending.

    Invalid UTF-8 raises :class:`InputError` naming the file and the 1-based line.
    """
    with _gzip_errors(path), open_binary(path) as handle:
        for number, raw in enumerate(handle, start=1):
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError as err:
                raise InputError(path, f"invalid UTF-8 at byte {err.start}", number) from None
            yield text.rstrip("\r\n")


def read_lines(path: str | os.PathLike[str]) -> list[str]:
    """All lines of a UTF-8 text file, see :func:`iter_lines`."""
    return list(iter_lines(path))


_BOM = b"\xef\xbb\xbf"


def read_text(path: str | os.PathLike[str]) -> list[str]:
    """Every line of a UTF-8 text file (``.gz`` allowed) without its LF ending, refusing with
    an :class:`InputError` naming the file and the line what :func:`iter_lines` lets through:
    a UTF-8 byte-order mark, and a carriage return (CRLF or old-Mac CR endings, which would
    otherwise hide in the last token of a line); and invalid UTF-8.

    The strict reader of files that are compared line by line (system outputs, references,
    the inputs of ``phenomt score`` and ``phenomt evaluate``). A file that starts like gzip
    but is damaged or cut short is refused too.
    """
    with _gzip_errors(path), open_binary(path) as handle:
        return strict_lines(path, handle)


def decode_text(path: str | os.PathLike[str], data: bytes) -> list[str]:
    """The lines of ``data``, the bytes of the file ``path`` (gzip by its magic bytes), read
    as :func:`read_text` reads the file, with its errors: for bytes already read once."""
    with _gzip_errors(path):
        if data.startswith(b"\x1f\x8b"):
            data = gzip.decompress(data)
    return strict_lines(path, io.BytesIO(data))


def strict_lines(path: str | os.PathLike[str], raw_lines: Iterable[bytes]) -> list[str]:
    """The lines of ``raw_lines`` (the bytes of ``path``, line by line, each with its LF)
    decoded as :func:`read_text` reads them, with its errors naming the file and line."""
    lines = []
    for number, raw in enumerate(raw_lines, start=1):
        if number == 1 and raw.startswith(_BOM):
            raise InputError(path, "starts with a UTF-8 byte-order mark; remove it", 1)
        body = raw[:-1] if raw.endswith(b"\n") else raw
        if b"\r" in body:
            raise InputError(path, "carriage return (CR) found: the file has Windows or old "
                                   "Mac line endings; convert it to LF line endings", number)
        try:
            lines.append(body.decode("utf-8"))
        except UnicodeDecodeError as err:
            raise InputError(path, f"invalid UTF-8 at byte {err.start} of the line",
                             number) from None
    return lines


def check_line_count(path: str | os.PathLike[str], count: int, expected: int,
                     against: str | os.PathLike[str]) -> None:
    """Fail, naming the first line where ``path`` (``count`` lines) and ``against``
    (``expected`` lines) stop being aligned; as ``phenomt.systems.outputs.check_line_count``."""
    if count > expected:
        raise InputError(path, f"has {count} lines but {against} has {expected}: "
                               f"line {expected + 1} has no counterpart", expected + 1)
    if count < expected:
        raise InputError(path, f"has {count} lines but {against} has {expected}: it ends "
                               f"before line {count + 1}", count + 1)


def count_lines(path: str | os.PathLike[str]) -> int:
    """Number of lines in a text file (``.gz`` allowed)."""
    with open_binary(path) as handle:
        return sum(1 for _ in handle)


def run_lock_holder(folder: str | os.PathLike[str]) -> str | None:
    """Who holds the run lock of ``folder`` (see :func:`hold_run_lock`), or None when no
    running process does. Creates nothing."""
    import fcntl

    path = Path(folder) / ".phenomt.lock"
    try:
        handle = open(path, encoding="utf-8")  # noqa: SIM115 (closed below)
    except OSError:
        return None
    with handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            return handle.read().strip() or "another process"
        fcntl.flock(handle, fcntl.LOCK_UN)
    return None


class RunLockedError(RuntimeError):
    """Another process holds the run lock of an output folder."""


#: Open lock files: the kernel lock lasts as long as the file stays open in this process.
_HELD_LOCKS: list[IO[str]] = []


def interpreter_bin_first_on_path() -> None:
    """Put the directory of the running Python's scripts first on PATH, so that the
    ``phenomt`` and fairseq commands of the jobs are the ones installed beside it, whether
    or not its virtualenv is activated (jobs inherit this environment)."""
    import sys

    os.environ["PATH"] = os.pathsep.join([os.path.dirname(sys.executable),
                                          os.environ.get("PATH", "")])


def hold_run_lock(folder: str | os.PathLike[str]) -> Path:
    """Take an exclusive kernel lock (``flock``) on ``folder/.phenomt.lock`` for the rest of
    this process, or raise :class:`RunLockedError` naming the holder.

    Unlike a lock file that marks a folder as busy, a kernel lock dies with its process: a
    run killed with SIGKILL never blocks the next one.
    """
    import fcntl

    path = Path(folder) / ".phenomt.lock"
    path.parent.mkdir(parents=True, exist_ok=True)
    handle = open(path, "a+", encoding="utf-8")  # noqa: SIM115 (kept open on purpose)
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        handle.seek(0)
        holder = handle.read().strip() or "another process"
        handle.close()
        raise RunLockedError(f"{folder} is in use by a running pipeline ({holder}); wait for it "
                             "to finish or choose another outdir") from None
    handle.seek(0)
    handle.truncate()
    handle.write(f"pid {os.getpid()}\n")
    handle.flush()
    _HELD_LOCKS.append(handle)
    return path
