# Text stage: tokenization, corpus statistics, training-data assembly, casing and joint BPE.


rule tokenize:
    input:
        f"{OUT}/data/raw/{{corpus}}.{{lang}}",
    output:
        f"{OUT}/data/tok/{{corpus}}.{{lang}}",
    params:
        pretok=lambda w: "--pretokenized" if PLAN.data.pretokenized(w.corpus) else "",
    log:
        f"{OUT}/logs/tokenize/{{corpus}}.{{lang}}.log",
    benchmark:
        f"{OUT}/benchmarks/tokenize/{{corpus}}.{{lang}}.tsv"
    conda:
        ENV
    shell:
        "phenomt text tokenize --lang {wildcards.lang:q} {params.pretok} --input {input:q}"
        " --output {output:q} > {log:q} 2>&1"


rule corpus_stats:
    input:
        lambda w: PLAN.data.tok_sides(w.corpus),
    output:
        f"{OUT}/stats/{{corpus}}.json",
    params:
        langs=lambda w: PLAN.data.langs(w.corpus),
        label=lambda w: PLAN.data.label(w.corpus),
        split=lambda w: PLAN.data.split(w.corpus),
        paper=lambda w: PLAN.data.paper_sizes_json(w.corpus),
    log:
        f"{OUT}/logs/stats/{{corpus}}.log",
    conda:
        ENV
    shell:
        "phenomt corpus stats --inputs {input:q} --langs {params.langs:q} --label {params.label:q}"
        " --split {params.split:q} --paper {params.paper:q} --output {output:q} > {log:q} 2>&1"


rule assemble_train:
    input:
        train=lambda w: PLAN.models.train_files(w.model),
        heldout=lambda w: PLAN.models.heldout_files(w.model),
    output:
        src=f"{OUT}/models/{{model}}/data/train.tok.src",
        tgt=f"{OUT}/models/{{model}}/data/train.tok.tgt",
        report=f"{OUT}/models/{{model}}/data/assemble.json",
    log:
        f"{OUT}/logs/assemble/{{model}}.log",
    conda:
        ENV
    shell:
        "phenomt corpus assemble --train {input.train:q} --heldout {input.heldout:q}"
        " --outputs {output.src:q} {output.tgt:q} --report {output.report:q} > {log:q} 2>&1"


rule truecase_learn:
    input:
        f"{OUT}/models/{{model}}/data/train.tok.{{side}}",
    output:
        f"{OUT}/models/{{model}}/data/truecase.{{side}}.model",
    log:
        f"{OUT}/logs/truecase/{{model}}.{{side}}.log",
    conda:
        ENV
    shell:
        "phenomt text truecase-learn --input {input:q} --model {output:q} > {log:q} 2>&1"


rule apply_casing:
    input:
        text=lambda w: PLAN.models.tok_input(w.model, w.part, w.side),
        model=lambda w: PLAN.models.truecase_models(w.model, w.side),
    output:
        f"{OUT}/models/{{model}}/data/{{part}}.case.{{side}}",
    params:
        casing=lambda w: PLAN.models.casing(w.model),
        truecaser=lambda w: PLAN.models.truecase_args(w.model, w.side),
    log:
        f"{OUT}/logs/casing/{{model}}.{{part}}.{{side}}.log",
    conda:
        ENV
    shell:
        "phenomt text case --casing {params.casing:q} {params.truecaser} --input {input.text:q}"
        " --output {output:q} > {log:q} 2>&1"


rule bpe_learn:
    input:
        src=lambda w: PLAN.models.bpe_input(w.model, "train", "src"),
        tgt=lambda w: PLAN.models.bpe_input(w.model, "train", "tgt"),
    output:
        f"{OUT}/models/{{model}}/data/bpe.codes",
    params:
        merges=lambda w: PLAN.models.bpe_merges(w.model),
        min_freq=lambda w: PLAN.models.bpe_min_frequency(w.model),
    log:
        f"{OUT}/logs/bpe_learn/{{model}}.log",
    benchmark:
        f"{OUT}/benchmarks/bpe_learn/{{model}}.tsv"
    conda:
        ENV
    shell:
        "phenomt bpe learn --inputs {input.src:q} {input.tgt:q} --codes {output:q}"
        " --merges {params.merges:q} --min-frequency {params.min_freq:q} > {log:q} 2>&1"


rule bpe_apply:
    input:
        text=lambda w: PLAN.models.bpe_input(w.model, w.part, w.side),
        codes=f"{OUT}/models/{{model}}/data/bpe.codes",
    output:
        f"{OUT}/models/{{model}}/data/{{part}}.bpe.{{side}}",
    log:
        f"{OUT}/logs/bpe_apply/{{model}}.{{part}}.{{side}}.log",
    benchmark:
        f"{OUT}/benchmarks/bpe_apply/{{model}}.{{part}}.{{side}}.tsv"
    conda:
        ENV
    shell:
        "phenomt bpe apply --codes {input.codes:q} --input {input.text:q} --output {output:q}"
        " > {log:q} 2>&1"
