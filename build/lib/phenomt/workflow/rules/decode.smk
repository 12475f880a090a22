# Decoding and scoring: beam search, BPE removal, detokenization, sacreBLEU.


rule generate:
    input:
        data=f"{OUT}/models/{{model}}/bin-test/{{part}}",
        model=f"{OUT}/models/{{model}}/model.pt",
        source=f"{OUT}/models/{{model}}/data/{{part}}.bpe.src",
    output:
        text=f"{OUT}/models/{{model}}/hyp/{{part}}.txt",
        # subword hypotheses, for subword-level metrics (CRR/DRR of the AR row)
        bpe=f"{OUT}/models/{{model}}/hyp/{{part}}.bpe",
        raw=temp(f"{OUT}/models/{{model}}/hyp/{{part}}.txt.generate"),
    params:
        options=lambda w: PLAN.models.decode_options_json(w.model),
        tgt=lambda w: PLAN.models.tgt(w.model),
        casing=lambda w: PLAN.models.casing(w.model),
        seed=lambda w: PLAN.models.seed(w.model),
    threads: 1
    resources:
        mem_mb=lambda w: PLAN.models.resource(w.model, "mem_mb"),
        runtime=lambda w: PLAN.models.resource(w.model, "runtime"),
        gpu=lambda w: PLAN.models.resource(w.model, "gpu"),
    log:
        f"{OUT}/logs/generate/{{model}}.{{part}}.log",
    benchmark:
        f"{OUT}/benchmarks/generate/{{model}}.{{part}}.tsv"
    conda:
        ENV
    shell:
        "phenomt nmt generate --data-bin {input.data:q} --model {input.model:q}"
        " --source {input.source:q} --output {output.text:q} --bpe-output {output.bpe:q}"
        " --tgt-lang {params.tgt:q} --casing {params.casing:q} --options {params.options:q}"
        " --seed {params.seed:q} --log {log:q}"


rule score_bleu:
    input:
        hyp=f"{OUT}/models/{{model}}/hyp/{{part}}.txt",
        ref=lambda w: PLAN.data.raw(w.part, PLAN.models.tgt(w.model)),
    output:
        f"{OUT}/models/{{model}}/scores/{{part}}.bleu.json",
    params:
        bleu=lambda w: PLAN.models.bleu_args(w.model),
        direction=lambda w: PLAN.models.direction(w.model),
    log:
        f"{OUT}/logs/score_bleu/{{model}}.{{part}}.log",
    conda:
        ENV
    shell:
        "phenomt score bleu --hyp {input.hyp:q} --ref {input.ref:q} {params.bleu}"
        " --meta model={wildcards.model:q} testset={wildcards.part:q}"
        " direction={params.direction:q} --output {output:q} > {log:q} 2>&1"
