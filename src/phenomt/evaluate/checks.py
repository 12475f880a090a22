"""The checks ``phenomt evaluate`` makes before it writes anything or starts Snakemake.

Everything a user types or gives as a file is data: names are matched against one pattern,
codes against ISO 639, files are read strictly (UTF-8, LF, no BOM, line counts) and their
language compared with ``--langs``. A failed check raises :class:`InputError` naming the file
(and line) and the way out; the CLI prints it as one line and exits with status 2.
"""

from __future__ import annotations

import argparse
import errno
import os
import re
import stat
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from phenomt.core import langcheck
from phenomt.core.io import InputError, decode_text
from phenomt.plan.systems import MQM_DIR, RESERVED_SYSTEM_NAMES
from phenomt.systems.outputs import check_line_count, empty_lines, read_text

#: A system name: a letter or digit first, then letters, digits, ``_``, ``+`` or ``-``; at
#: most 64 characters. Names become file names, wildcards and table rows, so nothing else.
NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_+-]{0,63}")
#: A test set's name: the same, with inner dots as in the catalog's ``newstest2021.de-en``.
TESTSET_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_+-]*(\.[A-Za-z0-9_+-]+)*")
NAME_RULE = "a letter or digit, then letters, digits, '_', '+' or '-' (at most 64)"
#: Test-set names the workflow keeps for itself: the folder of the MQM sets, the training
#: corpus.
RESERVED_TESTSET_NAMES = (MQM_DIR, "train")
#: Characters a path that becomes a Snakemake input cannot hold: Snakemake reads them as
#: wildcards.
WILDCARD_CHARS = "{}"
#: Fewer resamples than this give intervals whose 2.5% and 97.5% percentiles rest on one
#: or two resamples each.
MIN_SAMPLES = 100


def system_name(text: str, what: str = "system name") -> str:
    """``text`` when it is a valid system name, else ArgumentTypeError saying the rule."""
    if not NAME.fullmatch(text):
        raise argparse.ArgumentTypeError(f"invalid {what} {text!r}: use {NAME_RULE}")
    if text in RESERVED_SYSTEM_NAMES:
        raise argparse.ArgumentTypeError(
            f"invalid {what} {text!r}: {', '.join(RESERVED_SYSTEM_NAMES)} are columns of the "
            "challenge-set tables; choose another name")
    return text


def testset_name(text: str) -> str:
    """``text`` when it is a valid test-set name (dots allowed between parts)."""
    if len(text) > 64 or not TESTSET_NAME.fullmatch(text):
        raise argparse.ArgumentTypeError(f"invalid test-set name {text!r}: use {NAME_RULE}, "
                                         "with dots between parts")
    if text in RESERVED_TESTSET_NAMES:
        raise argparse.ArgumentTypeError(
            f"invalid test-set name {text!r}: {', '.join(map(repr, RESERVED_TESTSET_NAMES))} "
            "are folders and corpora of the workflow's own; choose another name")
    return text


def resolve(path: str | os.PathLike[str]) -> Path:
    """``path`` made absolute with its links followed; a symlink loop or a name the system
    refuses (too long) raises InputError naming the path."""
    try:
        return Path(path).expanduser().resolve()
    except RuntimeError:  # Path.resolve's "Symlink loop from ..."
        raise InputError(path, "symlink loop: the link points back at itself") from None
    except OSError as err:
        raise InputError(path, err.strerror or str(err)) from None


def kind(path: Path) -> str:
    """``"file"``, ``"dir"``, ``"other"`` or ``"missing"``; a path the system cannot look
    up (a name too long, a symlink loop, no permission) raises InputError naming it."""
    try:
        mode = path.stat().st_mode
    except (FileNotFoundError, NotADirectoryError):
        return "missing"
    except OSError as err:
        if err.errno == errno.ELOOP:
            raise InputError(path, "symlink loop: the link points back at itself") from None
        raise InputError(path, err.strerror or str(err)) from None
    return "file" if stat.S_ISREG(mode) else "dir" if stat.S_ISDIR(mode) else "other"


def require_file(path: Path) -> None:
    """Refuse ``path`` unless it is a file (missing, a folder, unreadable name)."""
    found = kind(path)
    if found != "file":
        raise InputError(path, "no such file" if found == "missing" else "not a file")


def no_wildcards(path: Path, option: str) -> None:
    """Refuse a path that becomes a Snakemake input as it is but holds ``{`` or ``}``."""
    if any(char in str(path) for char in WILDCARD_CHARS):
        raise InputError(path, f"{option}: a path with '{{' or '}}' cannot be used (the "
                               "workflow reads braces in its paths as wildcards); rename it "
                               "or give one without")


def samples(text: str) -> int:
    """A resample count of at least :data:`MIN_SAMPLES`."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < MIN_SAMPLES:
        raise argparse.ArgumentTypeError(
            f"at least {MIN_SAMPLES} resamples (a 95% percentile interval rests on its 2.5% "
            f"tails); got {value}")
    return value


def parse_langs(text: str) -> tuple[str, str]:
    """``de-en`` -> (``de``, ``en``), each an ISO 639 code in its shortest form."""
    src, sep, tgt = text.partition("-")
    if not sep:
        raise argparse.ArgumentTypeError(f"expected two language codes as SRC-TGT, e.g. "
                                         f"de-en; got {text!r}")
    try:
        src, tgt = langcheck.iso639(src), langcheck.iso639(tgt)
    except ValueError as err:
        raise argparse.ArgumentTypeError(f"{err} (in {text!r})") from None
    if src == tgt:
        raise argparse.ArgumentTypeError(f"source and target are the same language: {text!r}")
    return src, tgt


def check_outdir(outdir: Path) -> None:
    """Refuse an output folder that is a file, one that cannot be written, or one a running
    evaluation holds (checked first: that message must not hide behind another)."""
    from phenomt.core.io import run_lock_holder

    found = kind(outdir)
    holder = run_lock_holder(outdir / "results") if found == "dir" else None
    if holder:
        raise InputError(outdir, f"in use by a running evaluation ({holder}): wait for it to "
                                 "finish or give another --outdir")
    if found not in ("dir", "missing"):
        raise InputError(outdir, "is a file, not a folder: give another --outdir")
    # Every path of the run is under the output folder: a brace in it would be a wildcard
    # of every rule that reads or writes there.
    no_wildcards(outdir, "--outdir")
    existing = outdir
    while kind(existing) == "missing":
        existing = existing.parent
    if kind(existing) != "dir":
        raise InputError(existing, "is a file, so --outdir cannot be made inside it")
    if not os.access(existing, os.W_OK | os.X_OK):
        raise InputError(existing, "is not writable: give an --outdir you can write to")


def check_unique(values: Sequence[str], option: str) -> None:
    """Refuse a value given twice to a list option (``--metrics ter ter``)."""
    twice = sorted({v for v in values if list(values).count(v) > 1})
    if twice:
        raise InputError(option, f"given twice: {', '.join(twice)}")


@dataclass(frozen=True)
class TestSet:
    """The lines of a checked test set and its systems, and the bytes of every file they
    were read from (``raw``: the bytes a copy of the file must hold, read once)."""

    sources: list[str]
    references: list[str]
    hyps: dict[str, list[str]]
    raw: dict[Path, bytes] = field(default_factory=dict, repr=False)


#: C0 and C1 control characters (Unicode category Cc) but the tab, which the corpus
#: cleaning turns into a space and the metrics' tokenisers read as one.
_CONTROLS = re.compile("[\x00-\x08\x0a-\x1f\x7f-\x9f]")


def read_checked(path: Path) -> tuple[list[str], bytes]:
    """The lines of a file and the bytes they were decoded from, read once (a file that
    changes afterwards cannot change what was checked)."""
    require_file(path)
    try:
        data = path.read_bytes()
    except OSError as err:
        raise InputError(path, err.strerror or str(err)) from None
    return decode_text(path, data), data


def check_controls(path: Path, lines: Sequence[str]) -> None:
    """Refuse a control character (C0 or C1, but the tab): invisible, it would make a line
    that looks like text empty after the corpus cleaning, or score a hypothesis differently
    from its reference; errors name the file, line and column."""
    for number, line in enumerate(lines, start=1):
        found = _CONTROLS.search(line)
        if found:
            raise InputError(path, f"control character U+{ord(found.group()):04X} at column "
                                   f"{found.start() + 1}: remove it (only the tab is allowed)",
                             number)


def check_files(src: Path, ref: Path, hyps: Sequence[tuple[str, Path]]) -> TestSet:
    """Read and check every file: present, UTF-8, LF endings, no BOM, no control character
    but the tab, a test set of at least one line with no empty source or reference line,
    every file as long as the reference, distinct system names. Errors name the file and
    line. Each file is read once; its bytes are kept in the result's ``raw``."""
    for path in (src, ref, *(p for _, p in hyps)):
        require_file(path)
    raw: dict[Path, bytes] = {}

    def read(path: Path) -> list[str]:
        if path in raw:
            return decode_text(path, raw[path])
        lines, raw[path] = read_checked(path)
        return lines

    references = read(ref)
    if not references:
        raise InputError(ref, "empty file: the test set needs at least one line")
    sources = read(src)
    check_line_count(src, len(sources), len(references), ref)
    for path, lines in ((src, sources), (ref, references)):
        empty = empty_lines(lines)
        if empty:
            raise InputError(path, "empty line: every source and reference line needs text",
                             empty[0])
        check_controls(path, lines)
    check_unique([name for name, _ in hyps], "--hyp (system names)")
    outputs = {}
    for name, path in hyps:
        lines = read(path)
        check_line_count(path, len(lines), len(references), ref)
        check_controls(path, lines)
        outputs[name] = lines
    return TestSet(sources, references, outputs, raw)


def read_outputs(hyps: Sequence[tuple[str, Path]]) -> dict[Path, tuple[list[str], bytes]]:
    """Each system output read once and checked as :func:`check_files` checks it before its
    line count (``phenomt systems evaluate``, whose reference may still have to be made):
    its lines and the bytes they were decoded from, by path."""
    found: dict[Path, tuple[list[str], bytes]] = {}
    for _, path in hyps:
        if path not in found:
            lines, data = found[path] = read_checked(path)
            check_controls(path, lines)
    return found


def same_outputs(testset: TestSet) -> list[str]:
    """Warnings for outputs that are the same text as another system's or as the reference
    (a file given twice, or the reference given as a system): allowed, but every comparison
    of them finds no difference."""
    groups: dict[tuple[str, ...], list[str]] = {}
    for name, lines in testset.hyps.items():
        groups.setdefault(tuple(lines), []).append(name)
    found = []
    reference = tuple(testset.references)
    for lines, names in groups.items():
        if len(names) > 1:
            found.append(f"{', '.join(names[:-1])} and {names[-1]} have the same output, line "
                         "for line: every comparison of them finds no difference")
        if lines == reference:
            found.append(f"{' and '.join(names)}: the output is the reference itself, line "
                         "for line")
    return found


def check_languages(files: Sequence[tuple[Path, Sequence[str], str]], force: bool
                    ) -> list[str]:
    """Compare each file's guessed language with the one ``--langs`` gives it (``files``:
    path, lines, expected code). Returns warnings; raises on an unambiguous mismatch unless
    ``force``. Source and reference swapped are named as such."""
    guesses = [(path, langcheck.guess(lines, lang)) for path, lines, lang in files]
    warnings = []
    if len(guesses) >= 2:
        (src, g_src), (ref, g_ref) = guesses[:2]
        if g_src.wrong and g_ref.wrong and g_src.top == g_ref.expected \
                and g_ref.top == g_src.expected and not force:
            raise InputError(src, f"source and reference look swapped: the source reads as "
                                  f"{g_src.top} ({g_src.evidence()}) and {ref} as "
                                  f"{g_ref.top}; swap --src and --ref, or give --force-langs")
    for path, found in guesses:
        if found.wrong and not force:
            raise InputError(path, f"expected {found.expected} (--langs), but {found.evidence()}"
                                   f": check the file and --langs, or give --force-langs")
        if found.wrong or found.doubtful:
            warnings.append(f"{path}: expected {found.expected}, but {found.evidence()}")
    return warnings


#: Columns of WMT's ``details.tsv`` files: line number, test set, pair, document id, segment.
DETAILS_COLUMNS = 5


def read_docids(path: Path, langs: tuple[str, str], ref: Path, lines: int) -> list[str]:
    """The document id of every line of the test set, from one id a line or from WMT's
    ``details.tsv`` (tab-separated: line number, test set, pair, document id, segment), whose
    pair must be ``langs``. The lines of a document must be together, and a file in which
    every document is one line (a file read by the wrong column) is refused."""
    from phenomt.lexcons.convert import documents_from_id_list

    require_file(path)
    rows = read_text(path)
    if not rows:
        raise InputError(path, "empty file: one document id a line expected")
    ids = _details_ids(path, rows, langs) if "\t" in rows[0] else rows
    check_line_count(path, len(ids), lines, ref)
    documents = documents_from_id_list(path, ids)
    if len(documents) == lines and lines > 1:
        raise InputError(path, f"every one of the {lines} lines is a document of its own: "
                               "LTCR counts words repeated within a document; give one "
                               "document id a line (or WMT's details.tsv)", 1)
    return [doc_id.strip() for doc_id in ids]


def _details_ids(path: Path, rows: Sequence[str], langs: tuple[str, str]) -> list[str]:
    pair = f"{langs[0]}-{langs[1]}"
    ids = []
    for number, row in enumerate(rows, start=1):
        fields = row.split("\t")
        if len(fields) != DETAILS_COLUMNS or not fields[0].strip().isdigit():
            raise InputError(path, f"expected WMT's details.tsv layout (line number, test set, "
                                   f"pair, document id, segment: {DETAILS_COLUMNS} tab-separated "
                                   f"fields) or one document id a line", number)
        if int(fields[0]) != number:
            raise InputError(path, f"line number {fields[0]} out of order", number)
        if fields[2].strip() != pair:
            raise InputError(path, f"details of {fields[2].strip()!r}, not of this test set's "
                                   f"{pair}", number)
        ids.append(fields[3])
    return ids


def check_mqm_languages(path: Path, sources: Sequence[str], targets: Sequence[str],
                        langs: tuple[str, str], force: bool) -> None:
    """Refuse an MQM file whose source or target text is unambiguously of another language
    than ``langs`` (an annotation file of another pair)."""
    for side, lines, lang in (("source", sources, langs[0]), ("target", targets, langs[1])):
        found = langcheck.guess(list(dict.fromkeys(lines)), lang)
        if found.wrong and not force:
            raise InputError(path, f"MQM annotations of another language pair: its {side} "
                                   f"column should be {lang}, but {found.evidence()}; give the "
                                   f"file of {langs[0]}-{langs[1]} or --force-langs")
