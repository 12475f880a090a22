# Challenge-set extraction: lexical LDD from the source parse, reordering LDD from alignments.


rule extract_lexical:
    input:
        conllu=lambda w: f"{OUT}/ldd/parse/{w.lcorpus}.{PLAN.direction_langs(w.direction)[0]}.conllu",
        src=lambda w: PLAN.raw(PLAN.ldd_corpus_name(w.lcorpus), PLAN.direction_langs(w.direction)[0]),
        ref=lambda w: PLAN.raw(PLAN.ldd_corpus_name(w.lcorpus), PLAN.direction_langs(w.direction)[1]),
    output:
        multiext(
            f"{OUT}/ldd/sets/{{lcorpus}}/{{direction}}/{{phen}}.{{lbin}}",
            ".src",
            ".ref",
            ".ids",
            ".src_marked",
            ".conllu",
        ),
    params:
        lang=lambda w: PLAN.direction_langs(w.direction)[0],
        bin=lambda w: bin_arguments(w.lbin),
        prefix=lambda w, output: output[0].removesuffix(".src"),
    log:
        f"{OUT}/logs/extract/{{lcorpus}}.{{direction}}.{{phen}}.{{lbin}}.log",
    conda:
        ENV
    shell:
        "phenomt extract lexical --conllu {input.conllu} --phenomenon {wildcards.phen}"
        " {params.bin} --lang {params.lang} --src {input.src} --ref {input.ref}"
        " --out-prefix {params.prefix} > {log} 2>&1"


rule extract_reorder:
    input:
        src=lambda w: PLAN.tok(PLAN.ldd_corpus_name(w.lcorpus), PLAN.direction_langs(w.direction)[0]),
        tgt=lambda w: PLAN.tok(PLAN.ldd_corpus_name(w.lcorpus), PLAN.direction_langs(w.direction)[1]),
        alignment=lambda w: (
            f"{OUT}/ldd/align/{w.direction}/{w.lcorpus}."
            f"{PLAN.ldd.get('align', {}).get('alignment', 'forward')}"
        ),
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
    log:
        f"{OUT}/logs/extract/{{lcorpus}}.{{direction}}.reorder.ge{{dist}}.log",
    conda:
        ENV
    shell:
        "phenomt extract reorder --src {input.src} --tgt {input.tgt}"
        " --alignment {input.alignment} --min-distance {wildcards.dist}"
        " --out-prefix {params.prefix} > {log} 2>&1"


rule validation_sheet:
    input:
        [f"{PLAN.ldd_set_prefix(*s)}.ids" for s in PLAN.ldd_all_sets()],
    output:
        f"{OUT}/ldd/validation_sheet.tsv",
    params:
        sets=" ".join(
            f"{PLAN.ldd_set_key(*s)}={PLAN.ldd_set_prefix(*s)}" for s in PLAN.ldd_all_sets()
        ),
        per_set=PLAN.ldd.get("sheet", {}).get("per_set", 20),
        seed=PLAN.ldd.get("sheet", {}).get("seed", 1),
    log:
        f"{OUT}/logs/validation_sheet.log",
    conda:
        ENV
    shell:
        "phenomt ldd sheet-export --set {params.sets} --per-set {params.per_set}"
        " --seed {params.seed} --output {output} > {log} 2>&1"
