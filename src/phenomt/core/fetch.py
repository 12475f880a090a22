"""Obtaining files: from a local mirror when it has them, else by download; safe extraction.

A *mirror* is a directory holding files under the same relative paths the config names
(``mirror:`` of each download). It is found, in order, from the config's ``mirror`` key, the
``PHENOMT_MIRROR`` environment variable, or ``../shared/data`` beside the project.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import http.client
import logging
import lzma
import os
import tarfile
import urllib.request
import zipfile
import zlib
from pathlib import Path, PurePosixPath

from phenomt.core.io import InputError, atomic_directory, atomic_write, read_text

log = logging.getLogger(__name__)

CHUNK = 1 << 20
#: The environment variable naming the mirror; the workflow sets it for its fetch jobs to
#: the mirror it resolved (the jobs' ``--mirror`` default).
MIRROR_ENV = "PHENOMT_MIRROR"


def find_mirror(configured: str | None, project_root: str | os.PathLike[str]) -> Path | None:
    """The mirror directory to use, or ``None`` when there is none."""
    candidates = [configured, os.environ.get(MIRROR_ENV)]
    for candidate in candidates:
        if candidate:
            path = Path(candidate).expanduser()
            if not path.is_absolute():
                path = Path(project_root) / path
            if not path.is_dir():
                raise InputError(path, "configured mirror is not a directory")
            return path.resolve()
    default = Path(project_root).resolve().parent / "shared" / "data"
    return default if default.is_dir() else None


def sha256_of(path: str | os.PathLike[str]) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while chunk := handle.read(CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def verify(path: Path, expected: str | None) -> None:
    """Raise when ``path`` does not have the expected sha256 (skipped when unknown)."""
    if expected:
        actual = sha256_of(path)
        if actual != expected.lower():
            raise InputError(path, f"sha256 mismatch: expected {expected}, got {actual}")


def fetch(dest: str | os.PathLike[str], url: str | None, sha256: str | None = None,
          mirror_path: str | None = None, mirror: Path | None = None) -> str:
    """Make ``dest`` hold the file: a symlink into the mirror, or a verified download.

    Returns ``"mirror"`` or ``"download"``. Mirror files are linked, never copied, so the
    project tree never holds a copy of mirrored data. An absolute ``mirror_path`` names a local
    file, linked the same way whatever the mirror.
    """
    target = Path(dest)
    target.parent.mkdir(parents=True, exist_ok=True)
    # An absolute mirror path is a local file of the user's (phenomt evaluate's test sets).
    local = mirror_path is not None and Path(mirror_path).is_absolute()
    if local or (mirror is not None and mirror_path):
        source = Path(mirror_path) if local else mirror / mirror_path
        if source.is_file():
            verify(source, sha256)
            tmp = target.with_name(f".{target.name}.link")
            tmp.unlink(missing_ok=True)
            tmp.symlink_to(source.resolve())
            os.replace(tmp, target)
            log.info("using mirror file %s", source)
            return "mirror"
        log.info("mirror has no %s; downloading", mirror_path)
    if local:
        raise InputError(mirror_path, "no such file (a local file the config names)")
    where = ("no mirror is configured" if mirror is None
             else f"the mirror {mirror} has no {mirror_path}" if mirror_path
             else f"the mirror {mirror} does not hold it")
    holds = f" that holds {mirror_path}" if mirror_path else ""
    give = (f"give a mirror{holds} (--mirror DIR, PHENOMT_MIRROR=DIR or the config's "
            "mirror)")
    if not url:
        raise InputError(target.name, f"cannot be fetched: {where} and no upstream URL is "
                                      f"known; {give}")
    log.info("downloading %s", url)
    digest = hashlib.sha256()
    try:
        with urllib.request.urlopen(url, timeout=60) as response, \
                atomic_write(target, "wb") as out:
            while chunk := response.read(CHUNK):
                digest.update(chunk)
                out.write(chunk)
            # checked before atomic_write renames it: a wrong file never gets the final name
            if sha256 and digest.hexdigest() != sha256.lower():
                raise InputError(target, f"sha256 mismatch: expected {sha256}, got "
                                         f"{digest.hexdigest()} (downloaded from {url})")
    except InputError:
        raise
    # no scheme, a bad port or IPv6 host, a space: refused before any connection
    except (ValueError, http.client.InvalidURL) as err:
        raise InputError(target.name, f"{url!r} is not a valid URL ({err})") from None
    # URLError, HTTPError and timeouts are OSErrors; IncompleteRead is an HTTPException
    except (OSError, http.client.HTTPException) as err:
        reason = getattr(err, "reason", None) or err
        raise InputError(target.name, f"cannot be fetched from {url} ({reason}) and "
                                      f"{where}; {give} or network access") from None
    return "download"


def read_manifest(path: str | os.PathLike[str]) -> list[tuple[str, str, str]]:
    """Rows ``(sha256, path, mirror path)`` of a folder's manifest.

    One file a line, tab-separated: its sha256, its path in the folder (relative, as upstream
    names it) and, when the mirror keeps it under another name, that name. ``#`` starts a
    comment line.
    """
    rows: list[tuple[str, str, str]] = []
    seen: set[str] = set()
    # read_text: a missing file, bad UTF-8 or a CR (which would end up in a path) named
    for number, line in enumerate(read_text(path), start=1):
        if not line.strip() or line.startswith("#"):
            continue
        fields = line.split("\t")
        if len(fields) not in (2, 3):
            raise InputError(path, "expected 'sha256<TAB>path[<TAB>mirror path]'", number)
        digest, rel = fields[0].lower(), fields[1]
        if len(digest) != 64 or any(c not in "0123456789abcdef" for c in digest):
            raise InputError(path, f"not a sha256: {fields[0]!r}", number)
        pure = PurePosixPath(rel)
        if not rel or pure.is_absolute() or ".." in pure.parts:
            raise InputError(path, f"not a relative path inside the folder: {rel!r}", number)
        if rel in seen:
            raise InputError(path, f"{rel!r} is listed twice", number)
        seen.add(rel)
        rows.append((digest, rel, fields[2] if len(fields) == 3 else rel))
    if not rows:
        raise InputError(path, "the manifest lists no files")
    return rows


def fetch_tree(dest: str | os.PathLike[str], manifest: str | os.PathLike[str],
               url_template: str | None, mirror_path: str | None = None,
               mirror: Path | None = None) -> dict[str, int]:
    """Make the folder ``dest`` hold every file of ``manifest``, each checked against its
    sha256: a link into the mirror's folder ``mirror_path`` when it has the file, else a
    download from ``url_template`` with ``{path}`` replaced by the file's path.

    The folder is built beside ``dest`` and renamed when complete, so an interrupted fetch
    never leaves a folder that looks whole. Returns how many files came from where.
    """
    counts = {"mirror": 0, "download": 0}
    with atomic_directory(dest) as partial:
        for digest, rel, mirrored in read_manifest(manifest):
            url = url_template.replace("{path}", rel) if url_template else None
            mirrored_file = (str(PurePosixPath(mirror_path) / mirrored)
                             if mirror is not None and mirror_path else None)
            counts[fetch(partial / rel, url, digest, mirrored_file, mirror)] += 1
    return counts


def _safe_member_path(root: Path, name: str, archive: Path) -> Path:
    """Where an archive member lands; members escaping ``root`` are rejected."""
    pure = PurePosixPath(name)
    if pure.is_absolute() or ".." in pure.parts:
        raise InputError(archive, f"archive member escapes its folder: {name!r}")
    resolved = (root / pure).resolve()
    if not resolved.is_relative_to(root.resolve()):
        raise InputError(archive, f"archive member escapes its folder: {name!r}")
    return resolved


def extract(archive: str | os.PathLike[str], dest: str | os.PathLike[str]) -> list[str]:
    """Extract a tar(.gz/.bz2/.xz) or zip archive into ``dest``, refusing unsafe members.

    Links, devices and members with absolute or ``..`` paths are rejected before anything is
    written. Extraction goes to a temporary folder renamed into place at the end.
    """
    source = Path(archive)
    if not source.is_file():
        raise InputError(source, "archive not found")
    names: list[str] = []
    try:
        with atomic_directory(dest) as tmp:
            if zipfile.is_zipfile(source):
                with zipfile.ZipFile(source) as zf:
                    for info in zf.infolist():
                        _safe_member_path(tmp, info.filename, source)
                        names.append(info.filename)
                    zf.extractall(tmp)
            elif tarfile.is_tarfile(source):
                with tarfile.open(source) as tf:
                    members = tf.getmembers()
                    for member in members:
                        _safe_member_path(tmp, member.name, source)
                        if not (member.isfile() or member.isdir()):
                            raise InputError(source, f"archive member is not a plain file: "
                                                     f"{member.name!r}")
                        names.append(member.name)
                    tf.extractall(tmp, members=members, filter="data")
            else:
                raise InputError(source, "not a tar or zip archive")
    except (EOFError, tarfile.TarError, zipfile.BadZipFile, zlib.error, gzip.BadGzipFile,
            lzma.LZMAError) as err:  # cut short or damaged: a partial download, say
        raise InputError(source, f"damaged or incomplete archive ({err})") from None
    return names


def command_mirror(given: str | None) -> Path | None:
    """The mirror of a fetch command: ``--mirror``, else ``$PHENOMT_MIRROR`` (which the
    workflow sets to the mirror it resolved), else none."""
    given = given or os.environ.get(MIRROR_ENV)
    return Path(given) if given else None


def _fetch_command(args: argparse.Namespace) -> int:
    mirror = command_mirror(args.mirror)
    how = fetch(args.output, args.url, args.sha256, args.mirror_path, mirror)
    print(f"{args.output}: {how}")
    return 0


def _fetch_tree_command(args: argparse.Namespace) -> int:
    mirror = command_mirror(args.mirror)
    counts = fetch_tree(args.output, args.manifest, args.url, args.mirror_path, mirror)
    print(f"{args.output}: {counts['mirror']} files from the mirror, "
          f"{counts['download']} downloaded")
    return 0


def _extract_command(args: argparse.Namespace) -> int:
    names = extract(args.archive, args.output)
    print(f"{args.output}: {len(names)} members")
    return 0


def register_cli(tree) -> None:
    p = tree.add("data fetch", "Get one file from the mirror or its upstream URL", _fetch_command)
    p.add_argument("--output", required=True)
    p.add_argument("--url")
    p.add_argument("--sha256")
    p.add_argument("--mirror", help=f"mirror directory, already resolved (default: "
                                    f"${MIRROR_ENV})")
    p.add_argument("--mirror-path", help="the file's path inside the mirror")
    p = tree.add("data fetch-tree", "Get a folder of files listed with their sha256 in a "
                 "manifest, from the mirror or upstream", _fetch_tree_command)
    p.add_argument("--output", required=True, help="the folder to create")
    p.add_argument("--manifest", required=True, help="sha256<TAB>path[<TAB>mirror path] lines")
    p.add_argument("--url", help="upstream URL of a file, with {path} for its path")
    p.add_argument("--mirror", help=f"mirror directory, already resolved (default: "
                                    f"${MIRROR_ENV})")
    p.add_argument("--mirror-path", help="the folder's path inside the mirror")
    p = tree.add("data unpack", "Safely extract a tar or zip archive", _extract_command)
    p.add_argument("--archive", required=True)
    p.add_argument("--output", required=True)
