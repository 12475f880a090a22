"""Downloads and corpora: where each file lives and how a corpus is prepared."""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

from phenomt.plan.args import options_json, shell_args


def ordinal(n: int) -> str:
    """1st, 2nd, 3rd, 4th, ..., 11th, 12th, 13th, 21st."""
    last = n % 10
    suffix = ("th", "st", "nd", "rd")[last] if last < 4 and not 10 <= n % 100 <= 20 else "th"
    return f"{n}{suffix}"


@dataclass(frozen=True)
class DataPlan:
    """Paths and settings of the data stages (fetch, unpack, prepare, tokenize, stats)."""

    config: dict[str, Any]
    out: str
    res: str
    root: str

    @property
    def mirror(self) -> str | None:
        """The configured mirror folder (``None``: $PHENOMT_MIRROR or ../shared/data)."""
        return self.config["mirror"]

    def trained_notes(self) -> list[str]:
        """The config's note for tables built from models this run trains (``trained_note``)."""
        note = self.config["trained_note"]
        return [note] if note else []

    # --- downloads ---------------------------------------------------------------------
    def download_path(self, download: str) -> str:
        return f"{self.res}/downloads/{download}"

    def extracted_dir(self, download: str) -> str:
        return f"{self.res}/extracted/{download}"

    def tree_dir(self, download: str) -> str:
        """Where a folder download (one with a ``manifest``) is assembled."""
        return f"{self.res}/trees/{download}"

    def manifest(self, download: str) -> str:
        """The checked-in manifest of a folder download: a config's own relative to the
        project root, the catalog's absolute (package data)."""
        manifest = self.config["downloads"][download]["manifest"]
        if manifest is None:
            raise KeyError(f"download {download!r} is a file, not a folder with a manifest")
        return os.path.join(self.root, manifest)

    # The fetch rules pass no mirror: their jobs read it from $PHENOMT_MIRROR (see
    # workflow/rules/data.smk), so that another mirror holding the same files reruns nothing.
    def fetch_tree_args(self, download: str, mirror: str | None = None) -> str:
        spec = self.config["downloads"][download]
        return shell_args([("--url", spec["url"]), ("--mirror", mirror),
                           ("--mirror-path", spec["mirror"])])

    def fetch_args(self, download: str, mirror: str | None = None) -> str:
        spec = self.config["downloads"][download]
        return shell_args([("--url", spec["url"]), ("--sha256", spec["sha256"]),
                           ("--mirror", mirror), ("--mirror-path", spec["mirror"])])

    def fetch_identity(self, download: str, mirror: str | os.PathLike[str] | None) -> str:
        """What a fetched file's content follows, for its rule's params: nothing beyond
        :meth:`fetch_args` where a sha256 (or a folder's manifest) verifies it, or where the
        config names a local file by its absolute path; else the mirror's file it is linked
        to, so that another mirror reruns what it may hold other bytes of."""
        spec = self.config["downloads"][download]
        path = spec["mirror"]
        if spec["sha256"] or spec.get("manifest") or not path or os.path.isabs(path) \
                or mirror is None:
            return ""
        return os.path.join(str(mirror), path)

    # --- corpora -----------------------------------------------------------------------
    @property
    def corpora(self) -> dict[str, dict[str, Any]]:
        return self.config["corpora"]

    def corpus(self, name: str) -> dict[str, Any]:
        try:
            return self.corpora[name]
        except KeyError:
            raise KeyError(f"corpus {name!r} is not declared under 'corpora'") from None

    def langs(self, name: str) -> list[str]:
        return list(self.corpus(name)["langs"])

    def label(self, name: str) -> str:
        return self.corpus(name)["label"] or name

    def split(self, name: str) -> str:
        return self.corpus(name)["split"]

    def pretokenized(self, name: str) -> bool:
        return bool(self.corpus(name)["pretokenized"])

    def paper_sizes_json(self, name: str) -> str:
        """Published sizes of the corpus, shown beside ours in the statistics table."""
        return options_json(self.corpus(name)["paper"])

    def _is_tree(self, download: str) -> bool:
        return self.config["downloads"][download]["manifest"] is not None

    def _file_spec_path(self, spec: dict[str, Any]) -> str:
        if "member" in spec:
            return f"{self.extracted_dir(spec['download'])}/{spec['member']}"
        if self._is_tree(spec["download"]):
            return self.tree_dir(spec["download"])
        return self.download_path(spec["download"])

    def _file_spec_input(self, spec: dict[str, Any]) -> str:
        """The Snakemake input that provides a file: the download, its extracted folder, or
        the assembled folder of a folder download."""
        if "member" in spec:
            return self.extracted_dir(spec["download"])
        return self._file_spec_path(spec)

    def _file_specs(self, name: str) -> list[dict[str, Any]]:
        corpus = self.corpus(name)
        specs = [corpus["files"][lang] for lang in corpus["langs"]]
        return specs + ([corpus["docids"]] if corpus["docids"] else [])

    def corpus_inputs(self, name: str) -> list[str]:
        """Files or extracted folders a corpus needs (deduplicated, ordered)."""
        return list(dict.fromkeys(self._file_spec_input(s) for s in self._file_specs(name)))

    def corpus_source_files(self, name: str) -> list[str]:
        corpus = self.corpus(name)
        return [self._file_spec_path(corpus["files"][lang]) for lang in corpus["langs"]]

    def has_docids(self, name: str) -> bool:
        return self.corpus(name)["docids"] is not None

    def docids_file(self, name: str) -> str:
        """The upstream document-id file of a corpus (in its own ``docids`` format)."""
        return self._file_spec_path(self.corpus(name)["docids"])

    def document_sample(self, name: str, total: str) -> str:
        """Which of its ``total`` documents a corpus keeps, in words for table notes."""
        corpus = self.corpus(name)
        step, documents = corpus["document_step"], corpus["documents"]
        if step is None or step == 1:
            return (f"all {total} documents" if documents is None
                    else f"the first {documents} of its {total} documents")
        kept = "every" if documents is None else f"the first {documents} of every"
        return f"{kept} {ordinal(step)} of its {total} documents"

    def clean_policy(self, name: str) -> dict[str, Any]:
        """The split's cleaning policy with the corpus's own entries over it."""
        corpus = self.corpus(name)
        return {**self.config["clean"][corpus["split"]], **corpus["clean"]}

    def corpus_args(self, name: str) -> str:
        corpus = self.corpus(name)
        langs = corpus["langs"]
        policy = self.clean_policy(name)
        columns = corpus["columns"]
        docids = corpus["docids"]
        return shell_args([
            ("--format", corpus["format"]), ("--langs", langs),
            ("--inputs", self.corpus_source_files(name)),
            ("--columns", [columns[lang] for lang in langs] if columns else None),
            ("--moses-escaped", corpus["moses_escaped"]),
            ("--empty", policy["empty"]), ("--long", policy["long"]),
            ("--max-tokens", policy["max_tokens"]),
            ("--limit", corpus["limit"]),
            ("--docids", self._file_spec_path(docids) if docids else None),
            ("--docids-format", docids["format"] if docids else None),
            ("--documents", corpus["documents"]),
            ("--document-step", corpus["document_step"]),
        ])

    # --- files -------------------------------------------------------------------------
    def raw(self, corpus: str, lang: str) -> str:
        return f"{self.out}/data/raw/{corpus}.{lang}"

    def tok(self, corpus: str, lang: str) -> str:
        return f"{self.out}/data/tok/{corpus}.{lang}"

    def tok_sides(self, corpus: str) -> list[str]:
        """Tokenized files of a corpus, in the order of its ``langs``."""
        return [self.tok(corpus, lang) for lang in self.langs(corpus)]

    def docids(self, corpus: str) -> str:
        return f"{self.out}/data/raw/{corpus}.docids"

    def stats_json(self, corpus: str) -> str:
        return f"{self.out}/stats/{corpus}.json"

    def all_stats(self) -> list[str]:
        return [self.stats_json(c) for c in self.corpora]

    def all_docids(self) -> list[str]:
        return [self.docids(c) for c in self.corpora if self.has_docids(c)]

    def check(self) -> None:
        """Cross-references the schema cannot express; raises ValueError."""
        downloads = self.config["downloads"]
        for name, corpus in self.corpora.items():
            if name == "train":
                raise ValueError("'train' is reserved and cannot name a corpus")
            if any(lang not in corpus["files"] for lang in corpus["langs"]):
                raise ValueError(f"corpus {name!r}: 'files' needs an entry per language "
                                 f"{corpus['langs']}")
            for spec in self._file_specs(name):
                if spec["download"] not in downloads:
                    raise ValueError(f"corpus {name!r} uses undeclared download "
                                     f"{spec['download']!r}")
            if corpus["docids"] is None and (corpus["documents"] is not None
                                             or corpus["document_step"] is not None):
                raise ValueError(f"corpus {name!r}: 'documents' and 'document_step' need "
                                 "'docids'")
            if corpus["format"] == "tsv" and set(corpus["columns"] or {}) != set(
                    corpus["langs"]):
                raise ValueError(f"corpus {name!r}: tsv format needs 'columns' per language")
