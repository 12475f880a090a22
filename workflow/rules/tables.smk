# Tables: Markdown and CSV under results/tables/.


rule table_corpus_stats:
    input:
        PLAN.all_stats(),
    output:
        md=f"{OUT}/tables/corpus_stats.md",
        csv=f"{OUT}/tables/corpus_stats.csv",
    log:
        f"{OUT}/logs/tables/corpus_stats.log",
    conda:
        ENV
    shell:
        "phenomt table stats --stats {input} --md {output.md} --csv {output.csv} > {log} 2>&1"


rule table_bleu:
    input:
        scores=PLAN.all_bleu(),
        cards=PLAN.model_cards(),
    output:
        md=f"{OUT}/tables/bleu.md",
        csv=f"{OUT}/tables/bleu.csv",
    log:
        f"{OUT}/logs/tables/bleu.log",
    conda:
        ENV
    shell:
        "phenomt table bleu --scores {input.scores} --models {input.cards}"
        " --md {output.md} --csv {output.csv} > {log} 2>&1"


LDD_NOTES = " ".join(f"--note {shlex.quote(n)}" for n in PLAN.ldd_notes())
LDD_SIZE_ARGS = {
    kind: " ".join(
        f"{PLAN.ldd_set_key(*s)}={PLAN.ldd_set_prefix(*s)}.ids"
        for s in PLAN.ldd_all_sets()
        if (s[2].startswith("reorder")) == (kind == "reorder")
    )
    for kind in ("reorder", "lexical")
}


rule table_ldd_sizes:
    input:
        ids=[f"{PLAN.ldd_set_prefix(*s)}.ids" for s in PLAN.ldd_all_sets()],
        corpora=[
            PLAN.raw(PLAN.ldd_corpus_name(c), PLAN.direction_langs(d)[0])
            for c in PLAN.ldd_corpora
            for d in PLAN.ldd_directions
        ],
    output:
        md2=f"{OUT}/tables/ldd_table2.md",
        csv2=f"{OUT}/tables/ldd_table2.csv",
        md3=f"{OUT}/tables/ldd_table3.md",
        csv3=f"{OUT}/tables/ldd_table3.csv",
    params:
        reorder=LDD_SIZE_ARGS["reorder"],
        lexical=LDD_SIZE_ARGS["lexical"],
        corpora=" ".join(
            f"{c}/{d}={PLAN.raw(PLAN.ldd_corpus_name(c), PLAN.direction_langs(d)[0])}"
            for c in PLAN.ldd_corpora
            for d in PLAN.ldd_directions
        ),
        notes=LDD_NOTES,
    log:
        f"{OUT}/logs/tables/ldd_sizes.log",
    conda:
        ENV
    shell:
        "(phenomt table ldd-sizes --ids {params.reorder} --corpus {params.corpora}"
        " {params.notes} --md {output.md2} --csv {output.csv2} &&"
        " phenomt table ldd-sizes --ids {params.lexical} --corpus {params.corpora}"
        " {params.notes}"
        " --md {output.md3} --csv {output.csv3}) > {log} 2>&1"


rule table_ldd_scores:
    input:
        scores=PLAN.ldd_all_scores(),
        cards=[f"{OUT}/models/{m}/card.json" for m, _ in PLAN.ldd_models()],
    output:
        md=f"{OUT}/tables/ldd_table{{num}}.md",
        csv=f"{OUT}/tables/ldd_table{{num}}.csv",
    wildcard_constraints:
        num="[456]",
    params:
        kind=lambda w: {"4": "bleu", "5": "distance", "6": "ribes"}[w.num],
        notes=LDD_NOTES,
    log:
        f"{OUT}/logs/tables/ldd_table{{num}}.log",
    conda:
        ENV
    shell:
        "phenomt table ldd-{params.kind} --scores {input.scores} --models {input.cards}"
        " {params.notes} --md {output.md} --csv {output.csv} > {log} 2>&1"


rule table_ldd_control:
    input:
        controls=PLAN.ldd_all_controls(),
        cards=[f"{OUT}/models/{m}/card.json" for m, _ in PLAN.ldd_models()],
    output:
        md=f"{OUT}/tables/ldd_control.md",
        csv=f"{OUT}/tables/ldd_control.csv",
    params:
        notes=LDD_NOTES,
    log:
        f"{OUT}/logs/tables/ldd_control.log",
    conda:
        ENV
    shell:
        "phenomt table ldd-control --controls {input.controls} --models {input.cards}"
        " {params.notes} --md {output.md} --csv {output.csv} > {log} 2>&1"


rule table_ldd_validation:
    input:
        PLAN.ldd.get("sheet", {}).get("filled") or [],
    output:
        md=f"{OUT}/tables/ldd_validation.md",
        csv=f"{OUT}/tables/ldd_validation.csv",
    log:
        f"{OUT}/logs/tables/ldd_validation.log",
    conda:
        ENV
    shell:
        "phenomt ldd sheet-import --sheet {input} --md {output.md} --csv {output.csv}"
        " > {log} 2>&1"
