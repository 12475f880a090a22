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
        options=lambda w: json.dumps(PLAN.model(w.model)["decode"]),
        tgt=lambda w: PLAN.models[w.model]["tgt"],
        casing=lambda w: PLAN.model(w.model)["casing"],
        seed=lambda w: PLAN.model(w.model)["seed"],
    threads: 1
    resources:
        mem_mb=lambda w: PLAN.model(w.model)["resources"].get("mem_mb", 4000),
        runtime=lambda w: PLAN.model(w.model)["resources"].get("runtime", 120),
        gpu=lambda w: PLAN.model(w.model)["resources"].get("gpu", 0),
    log:
        f"{OUT}/logs/generate/{{model}}.{{part}}.log",
    benchmark:
        f"{OUT}/benchmarks/generate/{{model}}.{{part}}.tsv"
    conda:
        ENV
    shell:
        "phenomt nmt generate --data-bin {input.data} --model {input.model}"
        " --source {input.source} --output {output.text} --bpe-output {output.bpe}"
        " --tgt-lang {params.tgt} --casing {params.casing} --options {params.options:q}"
        " --seed {params.seed} --log {log}"


rule score_bleu:
    input:
        hyp=f"{OUT}/models/{{model}}/hyp/{{part}}.txt",
        ref=lambda w: PLAN.raw(w.part, PLAN.models[w.model]["tgt"]),
    output:
        f"{OUT}/models/{{model}}/scores/{{part}}.bleu.json",
    params:
        tokenize=lambda w: PLAN.bleu_tokenizer(w.model),
        lowercase=lambda w: "--lowercase" if PLAN.bleu_lowercase(w.model) else "",
        direction=lambda w: f"{PLAN.models[w.model]['src']}-{PLAN.models[w.model]['tgt']}",
    log:
        f"{OUT}/logs/score_bleu/{{model}}.{{part}}.log",
    conda:
        ENV
    shell:
        "phenomt score bleu --hyp {input.hyp} --ref {input.ref} --tokenize {params.tokenize}"
        " {params.lowercase} --meta model={wildcards.model} testset={wildcards.part}"
        " direction={params.direction} --output {output} > {log} 2>&1"
