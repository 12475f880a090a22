# Document-level models of the lexical-consistency paper (Tables 4-6): the Doc-Transformer
# trained over the sentence model (Zhang et al. 2018, step 2) and the concatenation baseline.
# Both read the sentence model's subword files; paths and options come from PLAN.documents.


# Document ids of the sentence model's assembled training data (same selection of pairs).
rule assemble_docids:
    localrule: True
    input:
        train=lambda w: PLAN.models.train_files(w.model),
        heldout=lambda w: PLAN.models.heldout_files(w.model),
        docids=lambda w: PLAN.documents.train_docids_inputs(),
    output:
        f"{OUT}/models/{{model}}/data/train.docids",
    params:
        docids=lambda w: PLAN.documents.train_docids_args(),
    log:
        f"{OUT}/logs/assemble_docids/{{model}}.log",
    conda:
        ENV
    shell:
        "phenomt corpus assemble --train {input.train:q} --heldout {input.heldout:q}"
        " {params.docids} --docids-output {output:q} > {log:q} 2>&1"


# The document-level part of the sentence model's training data (lexcons.models.train).
rule doc_select_train:
    input:
        text=lambda w: PLAN.documents.select_inputs(),
        docids=lambda w: PLAN.documents.assembled_docids(),
    output:
        src=f"{OUT}/docmodels/data/train.bpe.src",
        tgt=f"{OUT}/docmodels/data/train.bpe.tgt",
        docids=f"{OUT}/docmodels/data/train.docids",
    log:
        f"{OUT}/logs/doc_select_train.log",
    conda:
        ENV
    shell:
        "phenomt doc select --docids {input.docids:q} --inputs {input.text:q}"
        " --outputs {output.src:q} {output.tgt:q} --docids-output {output.docids:q} > {log:q} 2>&1"


# The Doc-Transformer's context side: the previous sentences of each line's document.
rule doc_context:
    input:
        src=lambda w: PLAN.documents.sentence_bpe(w.part, "src"),
        docids=lambda w: PLAN.documents.part_docids(w.part),
    output:
        f"{OUT}/docmodels/doc-transformer/data/{{part}}.ctx",
    params:
        size=lambda w: PLAN.documents.context,
    log:
        f"{OUT}/logs/doc_context/{{part}}.log",
    conda:
        ENV
    shell:
        "phenomt doc context --source {input.src:q} --docids {input.docids:q}"
        " --size {params.size:q} --output {output:q} > {log:q} 2>&1"


# The concatenation baseline's lines: previous sentences, a separator, the current one.
rule doc_concat:
    input:
        text=lambda w: PLAN.documents.sentence_bpe(w.part, w.side),
        docids=lambda w: PLAN.documents.part_docids(w.part),
    output:
        f"{OUT}/docmodels/concat/data/{{part}}.bpe.{{side}}",
    params:
        size=lambda w: PLAN.documents.context,
    log:
        f"{OUT}/logs/doc_concat/{{part}}.{{side}}.log",
    conda:
        ENV
    shell:
        "phenomt doc concat --input {input.text:q} --docids {input.docids:q}"
        " --size {params.size:q} --output {output:q} > {log:q} 2>&1"


use rule binarize as doc_binarize with:
    input:
        train=lambda w: PLAN.documents.pair_inputs(w.docmodel, "train"),
        valid=lambda w: PLAN.documents.pair_inputs(
            w.docmodel, PLAN.models.valid(PLAN.documents.sentence)),
        dicts=lambda w: PLAN.documents.dict_inputs(w.docmodel),
    output:
        directory(f"{OUT}/docmodels/{{docmodel}}/bin"),
    params:
        args=lambda w: PLAN.documents.binarize_args(w.docmodel),
    threads: lambda w: PLAN.documents.resource("threads")
    log:
        f"{OUT}/logs/binarize/{{docmodel}}.log",
    benchmark:
        f"{OUT}/benchmarks/binarize/{{docmodel}}.tsv"


use rule binarize as doc_binarize_test with:
    input:
        pairs=lambda w: PLAN.documents.pair_inputs(w.docmodel, w.part),
        dicts=f"{OUT}/docmodels/{{docmodel}}/bin",
    output:
        directory(f"{OUT}/docmodels/{{docmodel}}/bin-test/{{part}}"),
    params:
        args=lambda w: PLAN.documents.binarize_test_args(w.docmodel, w.part),
    threads: 1
    log:
        f"{OUT}/logs/binarize_test/{{docmodel}}.{{part}}.log",
    benchmark:
        f"{OUT}/benchmarks/binarize_test/{{docmodel}}.{{part}}.tsv"


# Step 2 of the Doc-Transformer starts from the sentence model's weights (train_inputs).
rule doc_train:
    input:
        lambda w: PLAN.documents.train_inputs(w.docmodel),
    output:
        f"{OUT}/docmodels/{{docmodel}}/model.pt",
    params:
        data=lambda w: PLAN.documents.bin_dir(w.docmodel),
        options=lambda w: PLAN.documents.train_options_json(w.docmodel),
        seed=lambda w: PLAN.documents.seed(),
        save_dir=lambda w, output: f"{os.path.dirname(output[0])}/checkpoints",
    threads: lambda w: PLAN.documents.resource("threads")
    resources:
        mem_mb=lambda w: PLAN.documents.resource("mem_mb"),
        runtime=lambda w: PLAN.documents.resource("runtime"),
        gpu=lambda w: PLAN.documents.resource("gpu"),
    log:
        f"{OUT}/logs/train/{{docmodel}}.log",
    benchmark:
        PLAN.benchmark("train", "{docmodel}")
    conda:
        ENV
    shell:
        "phenomt nmt train --data-bin {params.data:q} --save-dir {params.save_dir:q}"
        " --output {output:q} --options {params.options:q} --seed {params.seed:q} --log {log:q}"


rule doc_generate:
    input:
        data=f"{OUT}/docmodels/{{docmodel}}/bin-test/{{part}}",
        model=f"{OUT}/docmodels/{{docmodel}}/model.pt",
        source=lambda w: PLAN.documents.source_bpe(w.docmodel, w.part),
    output:
        text=f"{OUT}/docmodels/{{docmodel}}/hyp/{{part}}.txt",
        bpe=f"{OUT}/docmodels/{{docmodel}}/hyp/{{part}}.bpe",
        raw=temp(f"{OUT}/docmodels/{{docmodel}}/hyp/{{part}}.txt.generate"),
    params:
        options=lambda w: PLAN.documents.decode_options_json(w.docmodel),
        concat=lambda w: PLAN.documents.generate_args(w.docmodel),
        tgt=lambda w: PLAN.models.tgt(PLAN.documents.sentence),
        casing=lambda w: PLAN.models.casing(PLAN.documents.sentence),
        seed=lambda w: PLAN.documents.seed(),
    threads: 1
    resources:
        mem_mb=lambda w: PLAN.documents.resource("mem_mb"),
        runtime=lambda w: PLAN.documents.resource("runtime"),
        gpu=lambda w: PLAN.documents.resource("gpu"),
    log:
        f"{OUT}/logs/generate/{{docmodel}}.{{part}}.log",
    benchmark:
        f"{OUT}/benchmarks/generate/{{docmodel}}.{{part}}.tsv"
    conda:
        ENV
    shell:
        "phenomt nmt generate --data-bin {input.data:q} --model {input.model:q}"
        " --source {input.source:q} --output {output.text:q} --bpe-output {output.bpe:q}"
        " --tgt-lang {params.tgt:q} --casing {params.casing:q} --options {params.options:q}"
        " --seed {params.seed:q} {params.concat} --log {log:q}"
