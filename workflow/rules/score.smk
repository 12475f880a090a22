# Scoring the challenge sets: each model translates the full corpus once; a set's score
# selects its sentences by id (identical to translating the set, sentence by sentence).


def ldd_full(w):
    """Full-corpus hypothesis, reference and tokenized source of a model on an LDD corpus."""
    corpus = PLAN.ldd_corpus_name(w.lcorpus)
    src, tgt = PLAN.direction_langs(PLAN.ldd_model_direction(w.model))
    return {
        "hyp": f"{OUT}/models/{w.model}/hyp/{corpus}.txt",
        "ref": PLAN.raw(corpus, tgt),
        "src_tok": PLAN.tok(corpus, src),
    }


def ldd_set_inputs(w):
    files = ldd_full(w)
    if w.setname != "baseline.all":
        direction = PLAN.ldd_model_direction(w.model)
        files["ids"] = f"{PLAN.ldd_set_prefix(w.lcorpus, direction, w.setname)}.ids"
    return files


rule ldd_score:
    input:
        unpack(ldd_set_inputs),
    output:
        f"{OUT}/ldd/scores/{{model}}/{{lcorpus}}/{{setname}}.json",
    params:
        direction=lambda w: PLAN.ldd_model_direction(w.model),
        phenomenon=lambda w: w.setname.split(".")[0],
        bin=lambda w: w.setname.split(".")[1],
        ids=lambda w, input: f"--ids {input.ids}" if "ids" in input.keys() else "",
        tokenize=lambda w: PLAN.ldd.get("tokenize", "13a"),
    log:
        f"{OUT}/logs/ldd_score/{{model}}.{{lcorpus}}.{{setname}}.log",
    conda:
        ENV
    shell:
        "phenomt ldd score --model {wildcards.model} --corpus {wildcards.lcorpus}"
        " --direction {params.direction} --phenomenon {params.phenomenon} --bin {params.bin}"
        " --hyp {input.hyp} --ref {input.ref} {params.ids} --tokenize {params.tokenize}"
        " --output {output} > {log} 2>&1"


rule ldd_control:
    input:
        unpack(ldd_set_inputs),
    output:
        f"{OUT}/ldd/control/{{model}}/{{lcorpus}}/{{setname}}.json",
    params:
        direction=lambda w: PLAN.ldd_model_direction(w.model),
        phenomenon=lambda w: w.setname.split(".")[0],
        bin=lambda w: w.setname.split(".")[1],
        draws=PLAN.ldd.get("control", {}).get("draws", 100),
        seed=PLAN.ldd.get("control", {}).get("seed", 1),
        tokenize=lambda w: PLAN.ldd.get("tokenize", "13a"),
    log:
        f"{OUT}/logs/ldd_control/{{model}}.{{lcorpus}}.{{setname}}.log",
    benchmark:
        f"{OUT}/benchmarks/ldd_control/{{model}}.{{lcorpus}}.{{setname}}.tsv"
    conda:
        ENV
    shell:
        "phenomt ldd control --model {wildcards.model} --corpus {wildcards.lcorpus}"
        " --direction {params.direction} --phenomenon {params.phenomenon} --bin {params.bin}"
        " --hyp {input.hyp} --ref {input.ref} --src {input.src_tok} --ids {input.ids}"
        " --draws {params.draws} --seed {params.seed} --tokenize {params.tokenize}"
        " --output {output} > {log} 2>&1"
