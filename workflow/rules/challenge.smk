# Challenge-set extraction: lexical LDD from the source parse, reordering LDD from alignments.


# One job per phenomenon extracts the sets of every distance bin from one reading of the parse.
rule extract_lexical:
    input:
        conllu=lambda w: PLAN.ldd.conllu(w.lcorpus, w.direction),
        src=lambda w: PLAN.ldd.source(w.lcorpus, w.direction, tokenized=False),
        ref=lambda w: PLAN.ldd.target(w.lcorpus, w.direction, tokenized=False),
    output:
        expand(
            f"{OUT}/ldd/sets/{{{{lcorpus}}}}/{{{{direction}}}}/{{{{phen}}}}.{{lbin}}{{ext}}",
            lbin=LEXICAL_BINS,
            ext=[".src", ".ref", ".ids", ".src_marked", ".conllu"],
        ),
    params:
        lang=lambda w: PLAN.ldd.source_lang(w.direction),
        bins=LEXICAL_BINS,
        prefix=lambda w: f"{OUT}/ldd/sets/{w.lcorpus}/{w.direction}/{w.phen}",
    priority: 3
    log:
        f"{OUT}/logs/extract/{{lcorpus}}.{{direction}}.{{phen}}.log",
    conda:
        ENV
    shell:
        "phenomt extract lexical --conllu {input.conllu:q} --phenomenon {wildcards.phen:q}"
        " --bins {params.bins:q} --lang {params.lang:q} --src {input.src:q} --ref {input.ref:q}"
        " --out-prefix {params.prefix:q} > {log:q} 2>&1"


rule extract_reorder:
    input:
        src=lambda w: PLAN.ldd.source(w.lcorpus, w.direction),
        tgt=lambda w: PLAN.ldd.target(w.lcorpus, w.direction),
        alignment=lambda w: PLAN.ldd.alignment_file(w.lcorpus, w.direction),
    output:
        multiext(
            f"{OUT}/ldd/sets/{{lcorpus}}/{{direction}}/reorder.ge{{dist}}",
            ".src",
            ".ref",
            ".ids",
            ".src_marked",
        ),
    params:
        prefix=lambda w, output: output[0].removesuffix(".src"),
    priority: 3
    log:
        f"{OUT}/logs/extract/{{lcorpus}}.{{direction}}.reorder.ge{{dist}}.log",
    conda:
        ENV
    shell:
        "phenomt extract reorder --src {input.src:q} --tgt {input.tgt:q}"
        " --alignment {input.alignment:q} --min-distance {wildcards.dist:q}"
        " --out-prefix {params.prefix:q} > {log:q} 2>&1"


rule validation_sheet:
    localrule: True
    input:
        PLAN.ldd.all_set_ids(),
    output:
        f"{OUT}/ldd/validation_sheet.tsv",
    params:
        sets=PLAN.ldd.set_assignments(),
        settings=lambda w: PLAN.ldd.sheet_settings(),
    log:
        f"{OUT}/logs/validation_sheet.log",
    conda:
        ENV
    shell:
        "phenomt ldd sheet-export --set {params.sets} {params.settings}"
        " --output {output:q} > {log:q} 2>&1"


# How many pairs the reordering criterion selects under every reading the paper leaves open
# (alignment kind, punctuation links, >= d or > d), d = 5..15, beside the paper's set size.
rule ldd_reorder_grid:
    input:
        src=lambda w: PLAN.ldd.source(w.lcorpus, w.direction),
        tgt=lambda w: PLAN.ldd.target(w.lcorpus, w.direction),
        forward=lambda w: PLAN.ldd.alignment_file(w.lcorpus, w.direction, "forward"),
        backward=lambda w: PLAN.ldd.alignment_file(w.lcorpus, w.direction, "reverse"),
        gdfa=lambda w: PLAN.ldd.alignment_file(w.lcorpus, w.direction, "gdfa"),
    output:
        **PLAN.table_files("ldd_reorder_grid.{lcorpus}.{direction}"),
    params:
        paper=lambda w: PLAN.ldd.paper_set(w.lcorpus, w.direction),
    log:
        f"{OUT}/logs/ldd_reorder_grid/{{lcorpus}}.{{direction}}.log",
    conda:
        ENV
    shell:
        "phenomt ldd reorder-grid --src {input.src:q} --tgt {input.tgt:q}"
        " --forward {input.forward:q} --reverse {input.backward:q} --gdfa {input.gdfa:q}"
        " --paper-set {params.paper:q} --out-md {output.md:q} --out-csv {output.csv:q}"
        " > {log:q} 2>&1"
