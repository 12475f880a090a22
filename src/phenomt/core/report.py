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


def _cell(text: str, column: str) -> str:
    classes = []
    if _NUMBER.match(text.strip()):
        classes.append("num")
    if column.startswith("paper"):
        classes.append("paper")
    attribute = f' class="{" ".join(classes)}"' if classes else ""
    return f"<td{attribute}>{html.escape(text) if text.strip() else '—'}</td>"


def table_html(title: str, header: Sequence[str], rows: Sequence[Sequence[str]],
               notes: Sequence[str] = ()) -> str:
    """One self-contained HTML page: the title, the table (empty cells as a dash, the
    paper's columns greyed) and the notes."""
    head = "".join(f'<th{" class=paper" if c.startswith("paper") else ""}>{html.escape(c)}</th>'
                   for c in header)
    body = "\n".join("<tr>" + "".join(_cell(text, column) for text, column
                                      in zip(row, header, strict=False)) + "</tr>"
                     for row in rows)
    items = "\n".join(f"<li>{_inline(note)}</li>" for note in notes)
    return (f'<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
            f"<title>{html.escape(title)}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n"
            f"<h1>{html.escape(title)}</h1>\n"
            f'<table class="phenomt-table">\n<thead><tr>{head}</tr></thead>\n'
            f"<tbody>\n{body}\n</tbody>\n</table>\n"
            + (f"<ul>\n{items}\n</ul>\n" if notes else "") + "</body>\n</html>\n")


def _table_command(args: argparse.Namespace) -> int:
    title, notes = markdown_parts(args.md)
    header, rows = read_rows(args.csv)
    with atomic_write(args.output) as out:
        out.write(table_html(title, header, rows, notes))
    print(f"{args.output}: {len(rows)} rows")
    return 0


def register_cli(tree) -> None:
    p = tree.add("report table", "A table as one HTML page (title, rows, notes) for the "
                 "Snakemake report", _table_command)
    p.add_argument("--csv", required=True, help="the table's CSV file")
    p.add_argument("--md", required=True, help="its Markdown file (title and notes)")
    p.add_argument("--output", required=True, help="the HTML page")
