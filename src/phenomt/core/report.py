"""HTML views of the finished tables for Snakemake's report (``make report``).

Snakemake's report shows an HTML result inline but offers CSV and Markdown files only as
downloads, so each table is also written as one small self-contained page: the title and
notes of its Markdown file around its CSV rows. Light on purpose (no pandas): the workflow
runs one such job per table.
"""

from __future__ import annotations

import argparse
import csv
import html
import os
import re
from collections.abc import Sequence

from phenomt.core.io import InputError, atomic_write, read_lines

_NUMBER = re.compile(r"^[-+]?\d[\d,]*(\.\d+)?([eE][-+]?\d+)?\s*(x|%)?$")
_CODE = re.compile(r"`([^`]+)`")
STYLE = """
body { font-family: system-ui, sans-serif; font-size: 13px; margin: 12px; color: #222; }
h1 { font-size: 16px; margin: 0 0 10px 0; }
table { border-collapse: collapse; margin-bottom: 12px; }
th, td { border: 1px solid #ccc; padding: 3px 7px; vertical-align: top; }
th { background: #f2f2f2; position: sticky; top: 0; }
td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
td.paper, th.paper { color: #666; }
ul { padding-left: 18px; max-width: 70em; } li { margin-bottom: 4px; }
code { background: #f4f4f4; padding: 0 2px; }
"""


def markdown_parts(path: str | os.PathLike[str]) -> tuple[str, list[str]]:
    """The title (``# ...`` line) and the notes (``- ...`` lines after the table) of a table's
    Markdown file, as written by :func:`phenomt.core.tables.write_markdown`."""
    lines = read_lines(path)
    if not lines or not lines[0].startswith("# "):
        raise InputError(path, "no '# title' line: not a table written by phenomt", 1)
    notes = [line[2:] for line in lines[1:] if line.startswith("- ")]
    return lines[0][2:].strip(), notes


def read_rows(path: str | os.PathLike[str]) -> tuple[list[str], list[list[str]]]:
    """Header and rows of a CSV table."""
    try:
        with open(path, newline="", encoding="utf-8") as handle:
            rows = list(csv.reader(handle))
    except FileNotFoundError:
        raise InputError(path, "file not found") from None
    except (UnicodeDecodeError, csv.Error) as err:
        raise InputError(path, f"not a readable CSV table: {err}") from None
    if not rows:
        raise InputError(path, "empty table: no header row")
    return rows[0], rows[1:]


def _inline(text: str) -> str:
    """A note's text as HTML: escaped, with Markdown `code` spans kept."""
    return _CODE.sub(lambda m: f"<code>{m.group(1)}</code>", html.escape(text))


def _cell(text: str, column: str, toggle: str | None = None) -> str:
    classes = []
    if _NUMBER.match(text.strip()):
        classes.append("num")
    if column.startswith("paper"):
        classes.append("paper")
    attribute = f' class="{" ".join(classes)}"' if classes else ""
    shown = html.escape(text) if text.strip() else "—"
    if toggle:  # a click anywhere on the row's cells opens (or closes) its sentences
        shown = f'<label for="{toggle}" class="opens">{shown}</label>'
    return f"<td{attribute}>{shown}</td>"


def _body(header: Sequence[str], rows: Sequence[Sequence[str]],
          sentences: Sequence[dict] = ()) -> str:
    """The table's rows; with ``sentences`` records, each run of rows naming one of their
    groups opens that group's sentences in a row below the run (its cells are labels of the
    run's toggle)."""
    owner = {key: record for record in sentences for key in record["groups"]}
    keys = [row_group(header, row) if sentences else None for row in rows]
    keys = [key if key in owner else None for key in keys]
    out, runs = [], 0
    for i, row in enumerate(rows):
        toggle = f"drill-{runs}" if keys[i] else None
        out.append("<tr>" + "".join(_cell(text, column, toggle) for text, column
                                    in zip(row, header, strict=False)) + "</tr>")
        if keys[i] and (i + 1 == len(rows) or keys[i + 1] != keys[i]):
            record = owner[keys[i]]
            out.append(f'<tr class="drill"><td colspan="{len(header)}">'
                       f'<input type="checkbox" class="drill-toggle" id="{toggle}">'
                       f'<div class="sentences" data-group="{html.escape(keys[i])}">'
                       f"{drill_html(record['groups'][keys[i]], record)}</div></td></tr>")
            runs += 1
    return "\n".join(out)


def table_html(title: str, header: Sequence[str], rows: Sequence[Sequence[str]],
               notes: Sequence[str] = (), sentences: Sequence[dict] = ()) -> str:
    """One self-contained HTML page: the title, the table (empty cells as a dash, the
    paper's columns greyed) and the notes; with sentences records, the rows they cover open
    their sentences (:func:`row_group`)."""
    head = "".join(f'<th{" class=paper" if c.startswith("paper") else ""}>{html.escape(c)}</th>'
                   for c in header)
    body = _body(header, rows, sentences)
    items = "\n".join(f"<li>{_inline(note)}</li>" for note in notes)
    style = STYLE + (DRILL_STYLE if sentences else "")
    return (f'<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
            f"<title>{html.escape(title)}</title>\n<style>{style}</style>\n</head>\n<body>\n"
            f"<h1>{html.escape(title)}</h1>\n"
            f'<table class="phenomt-table">\n<thead><tr>{head}</tr></thead>\n'
            f"<tbody>\n{body}\n</tbody>\n</table>\n"
            + (f"<ul>\n{items}\n</ul>\n" if notes else "") + "</body>\n</html>\n")


# --------------------------------------------------------------------------- drill-down
# A row whose cells name a group of the test set's sentences record (``phenomt systems
# sentences``) opens that group's sentences below it: every cell of the row is a label of a
# hidden checkbox, so the page needs no script (Snakemake's report shows it in a frame).

DRILL_STYLE = """
label.opens { cursor: pointer; text-decoration: underline dotted #999; }
tr.drill > td { padding: 0; border: none; }
input.drill-toggle { display: none; }
input.drill-toggle:not(:checked) + div.sentences { display: none; }
div.sentences { padding: 6px 10px; background: #fafafa; border: 1px solid #ccc; }
div.sentence { margin-bottom: 8px; } div.sentence dt { color: #666; float: left; width: 11em; }
div.sentence dd { margin-left: 11.5em; } mark { background: #ffe08a; }
mark.crr { background: #f6b0b0; } mark.drr { background: #b9d3f5; }
small.tokens { color: #555; }
table.pairs td, table.pairs th { font-size: 90%; } td.inconsistent { color: #a00; }
"""
_STARRED = re.compile(r"(?<!\S)\*(\S+?)\*(?!\S)")
#: The analyses' bucket kinds by the "analysis" column of the buckets table.
_BUCKET_KINDS = {"word F by frequency": "frequency", "BLEU by reference length": "length",
                 "word recall by POS": "pos"}


def row_group(header: Sequence[str], row: Sequence[str]) -> str | None:
    """The sentences group a table row names (:func:`phenomt.systems.sentences.group_key`):
    its challenge set, its line, its analysis bucket, or (a row of the LTCR table) its test
    set's LTCR pairs."""
    cells = dict(zip(header, row, strict=False))
    if cells.get("test set") and any(c.startswith("L-All") for c in header):
        return f"ltcr:{cells['test set']}"
    if cells.get("set"):
        return f"set:{cells['set']}"
    if cells.get("line"):
        return f"line:{cells['line']}"
    kind = _BUCKET_KINDS.get(cells.get("analysis", ""))
    if kind and cells.get("bucket"):
        return f"{kind}:{cells['bucket']}"
    return None


def _marked(text: str) -> str:
    """A marked source (``*word*`` tokens) as HTML with the words in ``<mark>``."""
    return _STARRED.sub(lambda m: f"<mark>{m.group(1)}</mark>", html.escape(text))


def _with_words(text: str, words: Sequence[str]) -> str:
    """``text`` as HTML with every whole occurrence of ``words`` in ``<mark>``."""
    if not words:
        return html.escape(text)
    pattern = re.compile(r"(?<!\w)(" + "|".join(re.escape(w) for w in
                                                 sorted(words, key=len, reverse=True))
                         + r")(?!\w)")
    out, last = [], 0
    for match in pattern.finditer(text):
        out += [html.escape(text[last:match.start()]),
                f"<mark>{html.escape(match.group(0))}</mark>"]
        last = match.end()
    return "".join(out) + html.escape(text[last:])


def _redundancy_marked(found: dict) -> str:
    """An output's word tokens with its redundant ones marked: continuous (the token repeats
    the one before it) and discontinuous (it repeats an earlier, not adjacent one)."""
    continuous, discontinuous = set(found["continuous"]), set(found["discontinuous"])
    out = []
    for i, token in enumerate(found["tokens"]):
        kind = "crr" if i in continuous else "drr" if i in discontinuous else None
        out.append(f'<mark class="{kind}" title="{kind.upper()}">{html.escape(token)}</mark>'
                   if kind else html.escape(token))
    return " ".join(out)


_VERDICT_SIGN = {"consistent": "=", "inconsistent": "≠", "unjudged": "?"}


def _pairs_html(pairs: Sequence[dict], systems: Sequence[str]) -> str:
    """An LTCR group's pairs: the word, its two lines, and per system the words aligned to
    each occurrence with the verdict (= consistent, ≠ inconsistent, ? unjudged)."""
    head = "".join(f"<th>{html.escape(s)}</th>" for s in systems)
    rows = []
    for pair in pairs:
        cells = []
        for system in systems:
            found = pair["systems"][system]
            words = " / ".join(html.escape(w) if w else "–"
                               for w in (found["first"], found["second"]))
            cells.append(f'<td class="{found["verdict"]}" title="{found["verdict"]}">'
                         f'{words} {_VERDICT_SIGN[found["verdict"]]}</td>')
        rows.append(f"<tr><td>{html.escape(pair['word'])}</td>"
                    f"<td>{pair['lines'][0]}, {pair['lines'][1]}</td>{''.join(cells)}</tr>")
    return (f'<table class="pairs"><thead><tr><th>word</th><th>lines</th>{head}</tr></thead>'
            f"<tbody>{''.join(rows)}</tbody></table>")


def _tokens_marked(tokens: Sequence[str], marked: Sequence[int], kind: str) -> str:
    """Word tokens with those at ``marked`` in ``<mark class=kind>``."""
    chosen = set(marked)
    return " ".join(f'<mark class="{kind}">{html.escape(t)}</mark>' if i in chosen
                    else html.escape(t) for i, t in enumerate(tokens))


def drill_html(group: dict, record: dict) -> str:
    """The sentences of one group: per line its source (the phenomenon marked), reference
    (a bucket's words marked) and every system's output; an LTCR group first lists its
    pairs and marks in each output the words aligned to the pair's source word."""
    lines = group["lines"]
    size, unit = group.get("size"), group.get("unit", "sentences")
    shown = len(group["pairs"]) if "pairs" in group else len(lines)
    count = (f"{shown} of {size} {unit}" if size is not None and size > shown
             else f"{shown} {unit}" if size is not None
             else f"the first {shown} {unit}")
    aligned = group.get("aligned", {})
    parts = [f"<p><b>{html.escape(group['label'])}</b>: {count}"
             + (f"; {html.escape(group['marking'])}" if group.get("marking") else "")
             + ("; under an output with redundant tokens, its word tokens, those repeated "
                "<mark class=\"crr\">continuously</mark> or <mark class=\"drr\">"
                "discontinuously</mark> marked as CRR/DRR count them"
                if not aligned and any(record["texts"][str(line)].get("redundant")
                                       for line in lines) else "")
             + ".</p>"]
    if "pairs" in group:
        parts.append(_pairs_html(group["pairs"], record["systems"]))
    for line in lines:
        text = record["texts"][str(line)]
        marked = group.get("marked_source", {}).get(str(line))
        words = group.get("reference_words", {}).get(str(line), [])
        rows = [("source", _marked(marked) if marked else html.escape(text["source"])),
                ("reference", _with_words(text["reference"], words))]
        redundant = text.get("redundant", {})
        for system, hyp in text["hypotheses"].items():
            found = aligned.get(str(line), {}).get(system)
            if found is not None:
                shown_hyp = _tokens_marked(found["tokens"], found["marked"], "ltcr")
            elif system in redundant and (redundant[system]["continuous"]
                                          or redundant[system]["discontinuous"]):
                # the output as the system wrote it, then the tokens CRR/DRR counted
                shown_hyp = (f'{html.escape(hyp)}<br><small class="tokens">tokens: '
                             f"{_redundancy_marked(redundant[system])}</small>")
            else:
                shown_hyp = html.escape(hyp)
            rows.append((system, shown_hyp))
        items = "".join(f"<dt>{html.escape(name)}</dt><dd>{value}</dd>" for name, value in rows)
        parts.append(f'<div class="sentence" data-line="{line}"><p>line {line}</p>'
                     f"<dl>{items}</dl></div>")
    return "\n".join(parts)


def load_sentences(path: str | os.PathLike[str]) -> dict:
    """A ``phenomt systems sentences`` record."""
    from phenomt.core.io import load_json

    record = load_json(path)
    if record.get("schema") != "phenomt.systems.sentences/1":
        raise InputError(path, "not a record of `phenomt systems sentences`")
    return record


def _table_command(args: argparse.Namespace) -> int:
    title, notes = markdown_parts(args.md)
    header, rows = read_rows(args.csv)
    sentences = [load_sentences(path) for path in args.sentences]
    with atomic_write(args.output) as out:
        out.write(table_html(title, header, rows, notes, sentences))
    print(f"{args.output}: {len(rows)} rows")
    return 0


def register_cli(tree) -> None:
    p = tree.add("report table", "A table as one HTML page (title, rows, notes) for the "
                 "Snakemake report", _table_command)
    p.add_argument("--csv", required=True, help="the table's CSV file")
    p.add_argument("--md", required=True, help="its Markdown file (title and notes)")
    p.add_argument("--sentences", nargs="+", default=[],
                   help="`phenomt systems sentences` records (the table's test set's, or for "
                        "the LTCR table every LTCR test set's): rows naming their challenge "
                        "sets, buckets, lines or LTCR pairs open their sentences")
    p.add_argument("--output", required=True, help="the HTML page")
