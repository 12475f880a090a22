"""Every table the pipeline writes, declared once.

A declaration names the table (the file stem under ``<outdir>/tables/``; ``{wildcards}`` where
one rule writes a family, such as one reordering grid per corpus and direction), the report
chapter it belongs to, the paper's table it reproduces, the command that builds it and its
caption. Everything else reads it: the rules take their output paths from :func:`table_files`, the
plan lists a run's tables by name, the report labels and captions them, and
``phenomt table list`` prints them. A table is added here, in its rule and in its section's
``tables()``; nothing else spells its path.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache

FORMATS = ("md", "csv", "json")


@dataclass(frozen=True)
class Table:
    """One table (or family of tables) of the pipeline."""

    name: str
    chapter: str
    command: str
    title: str
    caption: str
    paper: str | None = None
    formats: tuple[str, ...] = FORMATS

    def caption_text(self) -> str:
        """The report's caption: bold title, the paper's table, what the table shows."""
        paper = f" ({self.paper})" if self.paper else ""
        return f"**{self.title}**{paper}: {self.caption}"


def _declare(*tables: Table) -> dict[str, Table]:
    found: dict[str, Table] = {}
    for table in tables:
        if table.name in found:
            raise ValueError(f"table {table.name!r} declared twice")
        found[table.name] = table
    return found


#: Report chapters. Snakemake's report lists categories alphabetically, so their numbers
#: set the order: the given systems (real findings at any run size) first, the data last.
CHAPTERS: dict[str, str] = {
    "systems": "1. Given systems",
    "ldd": "2. Long-distance dependencies",
    "lexcons": "3. Lexical consistency",
    "nat": "4. Non-autoregressive redundancy",
    "data": "5. Data and models",
}

TABLES: dict[str, Table] = _declare(
    # --- data and models
    Table("corpus_stats", "data", "table stats", "Corpus statistics",
          "sentences and tokens per side of every configured corpus after cleaning, beside "
          "the thesis' numbers.", "thesis Tables 3.1, 3.2"),
    Table("bleu", "data", "table bleu", "BLEU of the trained models",
          "sacreBLEU on each model's test sets with its signature, and each model's data, "
          "size, updates and seed (the models are this run's; no paper table)."),
    Table("training", "data", "table training", "Training runs",
          "updates, validated epochs, best validation BLEU, wall and CPU time and peak memory "
          "of every training of the run, summed over its launches."),
    Table("learning_curve.{model}", "data", "nmt learning-curve",
          "Learning curve", "validation BLEU by epoch of one model (drawn as a figure).",
          formats=("csv",)),
    # --- long-distance dependencies (Choshen & Abend 2019)
    Table("ldd_table1", "ldd", "table locality", "Locality bias",
          "BLEU of models trained on regular and permuted source word order and with "
          "per-position embeddings (PERPOSEMB), learned and sinusoidal positions and LSTMs; "
          "mean and spread over the seeds run.", "Table 1"),
    Table("ldd_locality_claims", "ldd", "table locality-claims", "Locality claims",
          "each claim of the locality experiment with a paired t-test over seeds, a paired "
          "bootstrap over source sentences (clustered with all their seeds), equivalence "
          "tests of the no-change claims and Holm-adjusted p, and the verdict.",
          "Section 3.2 claims; Table 1"),
    Table("ldd_table2", "ldd", "table ldd-sizes", "Reordering challenge sets",
          "sentences per corpus, direction and distance bin whose alignment has a crossing of "
          "at least that many words, and the full corpora.", "Table 2"),
    Table("ldd_table3", "ldd", "table ldd-sizes", "Lexical challenge sets",
          "sentences per corpus, direction, phenomenon (particle verbs, reflexives, "
          "preposition stranding) and minimum dependency distance.", "Table 3"),
    Table("ldd_table4", "ldd", "table ldd-bleu", "BLEU per challenge set",
          "each set's BLEU beside the full corpus it was extracted from, translated by the "
          "same model (Δ = set − baseline).", "Table 4"),
    Table("ldd_table5", "ldd", "table ldd-distance", "BLEU by dependency distance",
          "per model, corpus and phenomenon, with Spearman's ρ and Pearson's r between "
          "distance and BLEU.", "Table 5"),
    Table("ldd_table6", "ldd", "table ldd-ribes", "RIBES of the reordering sets",
          "against the full-corpus baseline.", "Table 6"),
    Table("ldd_control", "ldd", "table ldd-control", "Length-matched control",
          "where each set's BLEU falls among random corpora whose sentences match the set's "
          "in source length.", "Section 4.3"),
    Table("ldd_validation", "ldd", "ldd sheet-import", "Manual validation",
          "precision per phenomenon from the filled validation sheet.",
          "Section 4.3 (manual validation)"),
    Table("ldd_reorder_grid.{lcorpus}.{direction}", "ldd", "ldd reorder-grid",
          "Reordering grid", "reordering-set sizes by distance and alignment setting for one "
          "corpus and direction.", "Sections 4.1-4.2 (reordering sets)"),
    # --- non-autoregressive redundancy (Wang et al.)
    Table("nat_table5", "nat", "table nat-results", "BLEU and redundancy",
          "BLEU and Redu. = CRR + DRR of CMLM, GLAT, their OaXE variants and DA-Transformer "
          "trained on raw and on distilled data, with 95% intervals and the AR teacher as a "
          "reference row.", "Table 5"),
    Table("nat_table10", "nat", "table nat-results", "Continuous and discontinuous redundancy",
          "CRR and DRR of every NAT model on raw and on distilled data, with 95% intervals "
          "and the AR teacher as a reference row.", "Table 10"),
    Table("nat_claims", "nat", "table nat-claims", "NAT claims",
          "each claim of the paper (distillation lowers redundancy; OaXE, GLAT and DAT are "
          "less redundant than CMLM; distillation raises BLEU; DAT's redundancy mainly "
          "discontinuous, the others' mainly continuous) with paired bootstraps on shared "
          "resamples, Holm-adjusted, and whether this run reproduces it.",
          "Section 2, Section 3.2 claims; Tables 5, 10"),
    Table("nat_speed", "nat", "table nat-speed", "Decoding speed",
          "sentences per second and latency at each batch size, and each NAT model's "
          "speed-up over the AR teacher's beam search and greedy search (no paper table)."),
    Table("nat_agreement", "nat", "table nat-agreement", "Agreement with human annotation",
          "the redundancy metric's repeated tokens against human marks.", "Tables 4, 9"),
    # --- lexical consistency (Lei et al. 2024)
    Table("lexcons_table1", "lexcons", "lexcons tables", "True and false consistency",
          "annotated (true-consistency) pairs of repeated source words and the approximated "
          "false-consistency pairs; the notes give the reference scored as a hypothesis, the "
          "calibration of LTCR.", "Table 1"),
    Table("lexcons_table2", "lexcons", "lexcons tables", "Pairs by word class",
          "of the repeated source word (tagger-dependent).", "Table 2"),
    Table("lexcons_table3", "lexcons", "lexcons tables", "Pairs by sentence distance",
          "d = 0, 1, 2, 3, 4 and ≥ 5 sentences apart.", "Table 3"),
    Table("lexcons_table4", "lexcons", "lexcons model-tables", "LTCR by word class",
          "L-All and L-Anno of this run's systems by word class of the repeated source word.",
          "Table 4"),
    Table("lexcons_table5", "lexcons", "lexcons model-tables", "LTCR by sentence distance",
          "L-All and L-Anno of this run's systems by sentence distance of the pair (0, 1, 2, "
          "3, 4, ≥ 5).", "Table 5"),
    Table("lexcons_table6", "lexcons", "lexcons model-tables", "BLEU and LTCR",
          "case-insensitive sacreBLEU of this run's systems beside L-All and L-Anno with "
          "document-bootstrap intervals.", "Table 6"),
    Table("lexcons_sets", "lexcons", "lexcons sets-table", "LTCR of further test sets",
          "LTCR and its interval of the configured systems on each further document-level "
          "test set."),
    # --- given systems
    Table("systems_bleu", "systems", "table systems-bleu", "Metrics of given system outputs",
          "BLEU and chrF (and any further configured sacreBLEU metric) with 95% bootstrap "
          "intervals and the paired test against each test set's baseline system, with each "
          "output's origin and licence as the catalogue or the config gives them (no paper "
          "table)."),
    Table("systems_redundancy", "systems", "table systems-redundancy",
          "CRR and DRR of given system outputs",
          "the metric of Wang et al. with sentence-bootstrap intervals, each system's kind "
          "where the catalogue or the config states one, and paired tests between the pairs "
          "of systems the run names (in the default run, a non-autoregressive system against "
          "its autoregressive twin; in ``phenomt evaluate``, each system against the "
          "baseline), Holm-adjusted over the table."),
    Table("systems_ldd_table{num}.{testset}", "systems", "table systems-ldd",
          "Challenge sets of a given test set",
          "the long-distance-dependency challenge sets extracted from the test set, scored "
          "for every given system (BLEU per set, by distance, or RIBES).",
          "Choshen & Abend Tables 4-6"),
    Table("systems_ldd_metrics.{testset}", "systems", "table systems-ldd",
          "Challenge sets of a given test set: the other metrics",
          "the metrics of ``systems.ldd_metrics`` on the challenge sets, each set against the "
          "full test set on BLEU's resamples, Holm-adjusted per metric."),
    Table("systems_ltcr", "systems", "table systems-ltcr", "LTCR of given system outputs",
          "L-All (lexical translation consistency, Lei et al. 2024) of every given system on "
          "a Zh→En test set with document ids, with document-bootstrap intervals, the pairs "
          "judged and unjudged and the paired test against the baseline, beside the "
          "reference scored as a hypothesis (the calibration to read a system against)."),
    Table("systems_buckets.{testset}", "systems", "table systems-analysis",
          "Buckets of given systems",
          "word F-measure by word frequency and BLEU by sentence length (compare-mt's "
          "analyses) of every system, with intervals and the paired test against the "
          "baseline on the test set's resamples."),
    Table("systems_ngrams.{testset}", "systems", "table systems-analysis",
          "N-gram differences against the baseline",
          "the n-grams each system matches in the reference more often than the baseline, "
          "and the reverse, with counts."),
    Table("systems_examples.{testset}", "systems", "table systems-analysis",
          "Sentences where systems differ most",
          "per system, the sentences with the largest sentence-chrF gain and loss against the "
          "baseline, with source, reference and both outputs."),
    Table("systems_mqm.{mqmset}", "systems", "table systems-mqm",
          "MQM error rates beside metrics",
          "human MQM error rates per system beside the automatic metrics, with Spearman's ρ "
          "over the annotated systems and its two-sided permutation p (exact over all "
          "orderings of the systems up to 9 of them, Monte Carlo above), Holm-adjusted over "
          "the table's correlations."),
)

_WILDCARD = re.compile(r"\{[^{}]+\}")


def _regex(text: str) -> re.Pattern[str]:
    """``text`` with each ``{wildcard}`` matching one non-empty path part."""
    parts = _WILDCARD.split(text)
    return re.compile("[^/]+".join(re.escape(p) for p in parts) + r"\Z")


@cache
def declared(stem: str) -> tuple[Table, ...]:
    """The declarations a stem belongs to: a file's stem (``ldd_reorder_grid.news.de-en``)
    gives its one declaration; a rule's pattern (``ldd_table{num}``, ``{table}``) gives every
    declaration it can produce. KeyError when none."""
    if _WILDCARD.search(stem):
        # a pattern covers declared names (ldd_table{num}: ldd_table4) or instances of a
        # declared family (systems_ldd_table4.{testset})
        pattern, instance = _regex(stem), _WILDCARD.sub("x", stem)
        found = tuple(t for t in TABLES.values()
                      if pattern.match(t.name) or _regex(t.name).match(instance))
    else:
        found = tuple(t for t in TABLES.values() if _regex(t.name).match(stem))
    if not found:
        raise KeyError(f"no declared table is {stem!r} (see phenomt.plan.tables.TABLES)")
    return found


def spec(stem: str) -> Table:
    """The one declaration of a table file's stem."""
    found = declared(stem)
    if len(found) != 1:
        raise KeyError(f"{stem!r} matches {len(found)} declared tables")
    return found[0]


def table_path(out: str, stem: str, ext: str) -> str:
    """The file of a declared table (or a rule's pattern of them) in format ``ext``."""
    if not any(ext in t.formats for t in declared(stem)):
        raise KeyError(f"table {stem!r} has no {ext} file")
    return f"{out}/tables/{stem}.{ext}"


def table_files(out: str, stem: str) -> dict[str, str]:
    """Format -> file of a declared table or pattern: what a rule's output unpacks."""
    formats = [f for f in FORMATS if any(f in t.formats for t in declared(stem))]
    return {ext: table_path(out, stem, ext) for ext in formats}


def latex_files(out: str) -> tuple[str, str]:
    """The rule pattern of a table's LaTeX: its JSON export in, its ``.tex`` out (wildcard
    ``table``, any table's stem)."""
    return f"{out}/tables/{{table}}.json", f"{out}/tables/{{table}}.tex"


def table_file_list(out: str, stems: list[str]) -> list[str]:
    """Every file of the tables ``stems``, in order."""
    return [p for stem in stems for p in table_files(out, stem).values()]


# --------------------------------------------------------------------------- command line

def _list_command(args: object) -> int:
    width = max(len(t.name) for t in TABLES.values())
    for chapter, title in CHAPTERS.items():
        print(f"{title}:")
        for table in (t for t in TABLES.values() if t.chapter == chapter):
            paper = f" [{table.paper}]" if table.paper else ""
            print(f"  {table.name:{width}s}  {table.title}{paper}; phenomt {table.command}")
    return 0


def register_cli(tree: object) -> None:
    tree.add("table list", "Every table the pipeline writes: name, paper table, command",
             _list_command)
