"""Reading system outputs strictly, and turning the sysout layouts into plain files.

A system output is one hypothesis a line, UTF-8, LF line endings, aligned line by line with the
test set's reference. :func:`read_text` refuses, with an :class:`InputError` naming the file and
the line: invalid UTF-8, a carriage return (CRLF or old-Mac CR endings, which would otherwise
hide in the last token of a line), and a UTF-8 byte-order mark. :func:`read_output` adds the
line-count check against the reference.

Empty lines (nothing but whitespace) are *not* an error: a system that produced nothing for a
sentence is scored with an empty hypothesis there, as sacreBLEU scores it, so that its score is
not inflated by dropping its failures. Their count and line numbers go into every record and
are printed as a warning, so they are never scored silently.

Two layouts of the sysout mirror need preparation:

- newstest2021 Zh→En is the test-suite version: the official 1,948 lines interleaved with 843
  test-suite lines. A mask file (one ``1``/``0`` a line) marks the official lines;
  :func:`read_mask` and :func:`apply_mask` select them (the main result), all lines being the
  secondary one.
- The MQM TED annotation files hold, for every system and annotated segment, the full output
  with one error span marked ``<v>…</v>`` per row. :func:`mqm_outputs` recovers one plain output
  per system (marks removed, segments ordered by their global ``seg_id``), the common source,
  and the document of every line; :func:`write_mqm_outputs` writes them.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from phenomt.core.io import (  # noqa: F401 (read_text, check_line_count: read from here too)
    InputError,
    check_line_count,
    read_text,
    write_json,
    write_lines,
)

_MARK = re.compile(r"</?v>")
# Names become file names: no separators, no leading dot or underscore (those are not systems).
_SYSTEM_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._+-]*")
# Empty-line numbers kept in a record; the count is always complete.
SHOWN_EMPTY_LINES = 20


def empty_lines(lines: Sequence[str]) -> list[int]:
    """1-based numbers of the lines that are empty or whitespace only."""
    return [number for number, line in enumerate(lines, start=1) if not line.strip()]


@dataclass(frozen=True)
class SystemOutput:
    """A validated system output: its lines and the 1-based numbers of its empty lines."""

    path: str
    lines: list[str]
    empty: tuple[int, ...]

    def summary(self) -> dict:
        """Line counts for a record: every empty line is counted, the first few listed."""
        return {"lines": len(self.lines), "empty_lines": len(self.empty),
                "empty_line_numbers": list(self.empty[:SHOWN_EMPTY_LINES])}


def read_output(path: str | os.PathLike[str], reference: str | os.PathLike[str] | None = None,
                expected_lines: int | None = None, *, warn: bool = True) -> SystemOutput:
    """Read a system output and check it against its reference (or an expected line count).

    Empty lines are kept (scored as empty hypotheses) and reported on stderr when ``warn``.
    """
    lines = read_text(path)
    if reference is not None:
        expected_lines = len(read_text(reference))
    if expected_lines is not None:
        check_line_count(path, len(lines), expected_lines, reference or "the test set")
    empty = tuple(empty_lines(lines))
    if empty and warn:
        shown = ", ".join(map(str, empty[:SHOWN_EMPTY_LINES]))
        more = ", ..." if len(empty) > SHOWN_EMPTY_LINES else ""
        print(f"warning: {path}: {len(empty)} empty line(s), scored as empty hypotheses "
              f"(lines {shown}{more})", file=sys.stderr)
    return SystemOutput(str(path), lines, empty)


# --------------------------------------------------------------------------- masks

def read_mask(path: str | os.PathLike[str], expected_lines: int | None = None,
              against: str | os.PathLike[str] = "the test set") -> list[bool]:
    """A line mask, one ``1`` (selected) or ``0`` a line; at least one line selected."""
    mask = []
    for number, line in enumerate(read_text(path), start=1):
        value = line.strip()
        if value not in ("0", "1"):
            raise InputError(path, f"mask lines are 0 or 1, found {line!r}", number)
        mask.append(value == "1")
    if expected_lines is not None:
        check_line_count(path, len(mask), expected_lines, against)
    if not any(mask):
        raise InputError(path, "the mask selects no line")
    return mask


def apply_mask(lines: Sequence[str], mask: Sequence[bool]) -> list[str]:
    """The selected lines, in order."""
    if len(lines) != len(mask):
        raise ValueError(f"{len(lines)} lines but a mask of {len(mask)}")
    return [line for line, keep in zip(lines, mask, strict=True) if keep]


def subset_file(path: str | os.PathLike[str], mask_path: str | os.PathLike[str],
                output: str | os.PathLike[str]) -> int:
    """Write the masked lines of ``path`` to ``output`` (atomically); returns their number."""
    lines = read_text(path)
    mask = read_mask(mask_path, len(lines), path)
    return write_lines(output, apply_mask(lines, mask))


# --------------------------------------------------------------------------- MQM outputs

def strip_marks(text: str) -> str:
    """Remove MQM error-span marks ``<v>`` and ``</v>`` (an unbalanced one as well)."""
    return _MARK.sub("", text)


def check_system_name(name: str, path: str | os.PathLike[str], line: int | None = None) -> str:
    """A system name usable as a file name; otherwise an error naming where it came from."""
    if not _SYSTEM_NAME.fullmatch(name):
        raise InputError(path, f"system name {name!r} cannot name a file (letters, digits, "
                               "'.', '_', '+', '-'; not starting with '.', '_' or '-')", line)
    return name


@dataclass(frozen=True)
class MqmOutputs:
    """Plain outputs recovered from an MQM annotation file, one line per annotated segment."""

    segments: list[tuple[str, int, int]]  # (document, position in document, global seg_id)
    source: list[str]
    outputs: dict[str, list[str]]  # system -> its line for each segment

    @property
    def documents(self) -> list[str]:
        return [doc for doc, _, _ in self.segments]


def mqm_outputs(rows: Sequence, path: str | os.PathLike[str]) -> MqmOutputs:
    """One output per system from annotation rows (:func:`phenomt.systems.mqm.read_mqm`).

    Every row of a segment repeats the system's full output with one span marked; the marks
    are removed and the copies must agree, and so must the sources of a segment across rows
    and systems. Every system must cover the same segments.
    """
    targets: dict[tuple[str, int], tuple[str, int]] = {}
    sources: dict[int, tuple[str, int]] = {}
    places: dict[int, tuple[str, int]] = {}
    for row in rows:
        check_system_name(row.system, path, row.line)
        text, source = strip_marks(row.target), strip_marks(row.source)
        for store, key, value, what in (
                (targets, (row.system, row.seg_id), text, f"{row.system}'s output"),
                (sources, row.seg_id, source, "the source"),
                (places, row.seg_id, (row.doc, row.doc_id), "the document position")):
            first = store.setdefault(key, (value, row.line))
            if first[0] != value:
                raise InputError(path, f"segment {row.seg_id}: {what} differs from line "
                                       f"{first[1]} (after removing <v> marks)", row.line)
    segment_ids = sorted(sources)
    systems = sorted({system for system, _ in targets})
    outputs: dict[str, list[str]] = {}
    for system in systems:
        missing = [s for s in segment_ids if (system, s) not in targets]
        if missing:
            raise InputError(path, f"system {system!r} has no row for segment(s) "
                                   f"{', '.join(map(str, missing[:10]))}; every system must "
                                   "cover the same segments")
        outputs[system] = [targets[system, s][0] for s in segment_ids]
    segments = [(places[s][0][0], places[s][0][1], s) for s in segment_ids]
    return MqmOutputs(segments, [sources[s][0] for s in segment_ids], outputs)


def select_systems(recovered: MqmOutputs, systems: Sequence[str],
                   path: str | os.PathLike[str]) -> MqmOutputs:
    """Only the named systems' outputs; a name the annotation file lacks is an error."""
    missing = [s for s in systems if s not in recovered.outputs]
    if missing:
        raise InputError(path, f"no annotated system {', '.join(map(repr, missing))}; the file "
                               f"has {', '.join(sorted(recovered.outputs))}")
    return MqmOutputs(recovered.segments, recovered.source,
                      {s: recovered.outputs[s] for s in systems})


def write_mqm_outputs(recovered: MqmOutputs, outdir: str | os.PathLike[str], src_lang: str,
                      tgt_lang: str, origin: str) -> dict:
    """Write ``<system>.<tgt>``, ``_source.<src>``, ``_docs.txt`` (one document id a line) and
    ``_segments.tsv`` into ``outdir``, then the manifest ``_manifest.json``; returns it."""
    out = Path(outdir)
    for system, lines in recovered.outputs.items():
        write_lines(out / f"{system}.{tgt_lang}", lines)
    write_lines(out / f"_source.{src_lang}", recovered.source)
    write_lines(out / "_docs.txt", recovered.documents)
    write_lines(out / "_segments.tsv", ["line\tdoc\tdoc_id\tseg_id"] + [
        f"{n}\t{doc}\t{pos}\t{seg}" for n, (doc, pos, seg) in enumerate(recovered.segments, 1)])
    empty = {system: empty_lines(lines) for system, lines in recovered.outputs.items()}
    manifest = {
        "origin": origin, "source_lang": src_lang, "target_lang": tgt_lang,
        "segments": len(recovered.segments),
        "documents": sorted(set(recovered.documents), key=recovered.documents.index),
        "systems": sorted(recovered.outputs),
        # Human translations among the annotated "systems" (ref, refB, ...).
        "references": sorted(s for s in recovered.outputs if s.lower().startswith("ref")),
        "empty_lines": {s: len(v) for s, v in empty.items() if v},
        "files": {s: f"{s}.{tgt_lang}" for s in recovered.outputs},
    }
    write_json(out / "_manifest.json", manifest)
    return manifest

