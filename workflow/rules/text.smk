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
        "phenomt text tokenize --lang {wildcards.lang} {params.pretok} --input {input}"
        " --output {output} > {log} 2>&1"


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
        "phenomt corpus stats --inputs {input} --langs {params.langs} --label {params.label:q}"
        " --split {params.split} --paper {params.paper:q} --output {output} > {log} 2>&1"


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
        "phenomt corpus assemble --train {input.train} --heldout {input.heldout}"
        " --outputs {output.src} {output.tgt} --report {output.report} > {log} 2>&1"


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
        "phenomt text truecase-learn --input {input} --model {output} > {log} 2>&1"


rule apply_casing:
    input:
        text=lambda w: PLAN.models.tok_input(w.model, w.part, w.side),
        model=lambda w: PLAN.models.truecase_models(w.model, w.side),
    output:
        f"{OUT}/models/{{model}}/data/{{part}}.case.{{side}}",
    params:
        casing=lambda w: PLAN.models.casing(w.model),
        model=lambda w, input: f"--model {input.model}" if input.model else "",
    log:
        f"{OUT}/logs/casing/{{model}}.{{part}}.{{side}}.log",
    conda:
        ENV
    shell:
        "phenomt text case --casing {params.casing} {params.model} --input {input.text}"
        " --output {output} > {log} 2>&1"


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
        "phenomt bpe learn --inputs {input.src} {input.tgt} --codes {output}"
        " --merges {params.merges} --min-frequency {params.min_freq} > {log} 2>&1"


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
        "phenomt bpe apply --codes {input.codes} --input {input.text} --output {output}"
        " > {log} 2>&1"
