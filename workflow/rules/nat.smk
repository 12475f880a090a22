# Non-autoregressive translation and information redundancy (Wang et al.): sequence-level
# distillation by the AR teacher, NAT training on raw and distilled data, checkpoint averaging
# by validation BLEU, single-pass decoding, BLEU/CRR/DRR, decoding speed, Tables 5 and 10.
# Paths and settings come from phenomt.plan.nat.


wildcard_constraints:
    teacher="[^/]+",
    system="ar|(cmlm|cmlm_oaxe|glat|glat_oaxe|dat)\\.(raw|distilled)",
    natsys="(cmlm|cmlm_oaxe|glat|glat_oaxe|dat)\\.(raw|distilled)",
    ntable="5|10",


PLAN.check_nat()
NAT_SCALE_NOTES = " ".join(f"--note {shlex.quote(n)}" for n in PLAN.nat_scale_notes())


rule nat_distill:
    input:
        data=f"{OUT}/models/{{teacher}}/bin-test/train",
        model=f"{OUT}/models/{{teacher}}/model.pt",
        source=f"{OUT}/models/{{teacher}}/data/train.bpe.src",
    output:
        src=f"{OUT}/nat/{{teacher}}/distill/train.bpe.src",
        tgt=f"{OUT}/nat/{{teacher}}/distill/train.bpe.tgt",
        text=temp(f"{OUT}/nat/{{teacher}}/distill/train.txt"),
        raw=temp(f"{OUT}/nat/{{teacher}}/distill/train.txt.generate"),
    params:
        options=lambda w: json.dumps(PLAN.nat_distill_options(w.teacher)),
        tgt=lambda w: PLAN.models[w.teacher]["tgt"],
        casing=lambda w: PLAN.model(w.teacher)["casing"],
        seed=lambda w: PLAN.model(w.teacher)["seed"],
    threads: 1
    # half of the NAT runs wait for it
    priority: 10
    resources:
        mem_mb=lambda w: PLAN.model(w.teacher)["resources"].get("mem_mb", 4000),
        runtime=lambda w: PLAN.model(w.teacher)["resources"].get("runtime", 120),
        gpu=lambda w: PLAN.model(w.teacher)["resources"].get("gpu", 0),
    log:
        f"{OUT}/logs/nat_distill/{{teacher}}.log",
    benchmark:
        f"{OUT}/benchmarks/nat_distill/{{teacher}}.tsv"
    conda:
        ENV
    shell:
        "phenomt nmt generate --data-bin {input.data} --model {input.model}"
        " --source {input.source} --output {output.text} --bpe-output {output.tgt}"
        " --tgt-lang {params.tgt} --casing {params.casing} --options {params.options:q}"
        " --seed {params.seed} --log {log} && cp {input.source} {output.src}"


rule nat_binarize_distilled:
    input:
        src=f"{OUT}/nat/{{teacher}}/distill/train.bpe.src",
        tgt=f"{OUT}/nat/{{teacher}}/distill/train.bpe.tgt",
        valid_src=lambda w: PLAN.bpe_file(w.teacher, PLAN.models[w.teacher]["valid"], "src"),
        valid_tgt=lambda w: PLAN.bpe_file(w.teacher, PLAN.models[w.teacher]["valid"], "tgt"),
        dicts=f"{OUT}/models/{{teacher}}/bin",
    output:
        directory(f"{OUT}/nat/{{teacher}}/bin-distilled"),
    params:
        train=lambda w, input: input.src.removesuffix(".src"),
        valid=lambda w, input: input.valid_src.removesuffix(".src"),
    threads: 2
    log:
        f"{OUT}/logs/nat_binarize/{{teacher}}.log",
    conda:
        ENV
    shell:
        "fairseq-preprocess --source-lang src --target-lang tgt"
        " --srcdict {input.dicts}/dict.src.txt --tgtdict {input.dicts}/dict.tgt.txt"
        " --trainpref {params.train} --validpref {params.valid} --destdir {output}"
        " --workers {threads} > {log} 2>&1"


rule nat_train:
    input:
        data=lambda w: PLAN.nat_system_data_bin(w.teacher, w.natsys),
        base=lambda w: PLAN.nat_base_checkpoints(w.teacher, w.natsys),
    output:
        f"{OUT}/nat/{{teacher}}/{{natsys}}/trained.pt",
    params:
        options=lambda w: json.dumps(PLAN.nat_train_options(w.teacher, w.natsys)),
        seed=PLAN.nat_seed,
        save_dir=lambda w, output: f"{os.path.dirname(output[0])}/checkpoints",
    threads: lambda w: PLAN.nat_resources(w.natsys).get("threads", 1)
    resources:
        mem_mb=lambda w: PLAN.nat_resources(w.natsys)["mem_mb"],
        runtime=lambda w: PLAN.nat_resources(w.natsys)["runtime"],
        gpu=lambda w: PLAN.nat_resources(w.natsys)["gpu"],
    log:
        f"{OUT}/logs/nat_train/{{teacher}}.{{natsys}}.log",
    benchmark:
        f"{OUT}/benchmarks/nat_train/{{teacher}}.{{natsys}}.tsv"
    conda:
        ENV
    shell:
        "phenomt nmt train --data-bin {input.data} --save-dir {params.save_dir}"
        " --output {output} --options {params.options:q} --seed {params.seed} --log {log}"


# fairseq's --eval-bleu fails with translation_lev, so the kept checkpoints are ranked by
# decoding the validation set here, and the best nat.average of them are averaged.
rule nat_average:
    input:
        trained=f"{OUT}/nat/{{teacher}}/{{natsys}}/trained.pt",
        data=lambda w: PLAN.nat_system_data_bin(w.teacher, w.natsys),
        reference=lambda w: PLAN.nat_valid_reference(w.teacher),
    output:
        model=f"{OUT}/nat/{{teacher}}/{{natsys}}/model.pt",
        ranking=f"{OUT}/nat/{{teacher}}/{{natsys}}/average.json",
    params:
        options=lambda w: json.dumps(PLAN.nat_decode_options(w.teacher, w.natsys)),
        top=PLAN.nat_average,
        checkpoints=lambda w, input: f"{os.path.dirname(input.trained)}/checkpoints",
    resources:
        mem_mb=lambda w: PLAN.nat_resources(w.natsys, decoding=True)["mem_mb"],
        runtime=lambda w: PLAN.nat_resources(w.natsys, decoding=True)["runtime"],
        gpu=lambda w: PLAN.nat_resources(w.natsys, decoding=True)["gpu"],
    log:
        f"{OUT}/logs/nat_average/{{teacher}}.{{natsys}}.log",
    benchmark:
        f"{OUT}/benchmarks/nat_average/{{teacher}}.{{natsys}}.tsv"
    conda:
        ENV
    shell:
        "phenomt nat average --checkpoint-dir {params.checkpoints} --data-bin {input.data}"
        " --reference {input.reference} --options {params.options:q} --top {params.top}"
        " --teacher {wildcards.teacher} --system {wildcards.natsys} --output {output.model}"
        " --ranking {output.ranking} > {log} 2>&1"


rule nat_generate:
    input:
        data=f"{OUT}/models/{{teacher}}/bin-test/{{corpus}}",
        model=f"{OUT}/nat/{{teacher}}/{{natsys}}/model.pt",
        source=f"{OUT}/models/{{teacher}}/data/{{corpus}}.bpe.src",
    output:
        text=f"{OUT}/nat/{{teacher}}/{{natsys}}/hyp/{{corpus}}.txt",
        bpe=f"{OUT}/nat/{{teacher}}/{{natsys}}/hyp/{{corpus}}.bpe",
        raw=temp(f"{OUT}/nat/{{teacher}}/{{natsys}}/hyp/{{corpus}}.txt.generate"),
    params:
        options=lambda w: json.dumps(PLAN.nat_decode_options(w.teacher, w.natsys)),
        tgt=lambda w: PLAN.models[w.teacher]["tgt"],
        casing=lambda w: PLAN.model(w.teacher)["casing"],
        seed=PLAN.nat_seed,
    threads: 1
    resources:
        mem_mb=lambda w: PLAN.nat_resources(w.natsys, decoding=True)["mem_mb"],
        runtime=lambda w: PLAN.nat_resources(w.natsys, decoding=True)["runtime"],
        gpu=lambda w: PLAN.nat_resources(w.natsys, decoding=True)["gpu"],
    log:
        f"{OUT}/logs/nat_generate/{{teacher}}.{{natsys}}.{{corpus}}.log",
    benchmark:
        f"{OUT}/benchmarks/nat_generate/{{teacher}}.{{natsys}}.{{corpus}}.tsv"
    conda:
        ENV
    shell:
        "phenomt nmt generate --data-bin {input.data} --model {input.model}"
        " --source {input.source} --output {output.text} --bpe-output {output.bpe}"
        " --tgt-lang {params.tgt} --casing {params.casing} --options {params.options:q}"
        " --seed {params.seed} --log {log}"


# The AR row (system "ar") scores the teacher's own test-set translations.
rule nat_score_bleu:
    input:
        hyp=lambda w: PLAN.nat_hyp(w.teacher, w.system, w.corpus, "txt"),
        ref=lambda w: PLAN.raw(w.corpus, PLAN.models[w.teacher]["tgt"]),
    output:
        f"{OUT}/nat/{{teacher}}/{{system}}/scores/{{corpus}}.bleu.json",
    params:
        tokenize=lambda w: PLAN.bleu_tokenizer(w.teacher),
        lowercase=lambda w: "--lowercase" if PLAN.bleu_lowercase(w.teacher) else "",
        meta=lambda w: PLAN.nat_bleu_meta(w.teacher, w.system, w.corpus),
    log:
        f"{OUT}/logs/nat_score_bleu/{{teacher}}.{{system}}.{{corpus}}.log",
    conda:
        ENV
    shell:
        "phenomt score bleu --hyp {input.hyp} --ref {input.ref} --tokenize {params.tokenize}"
        " {params.lowercase} --meta {params.meta} --output {output} > {log} 2>&1"


rule nat_score_redundancy:
    input:
        hyp=lambda w: PLAN.nat_hyp(w.teacher, w.system, w.corpus, "bpe"),
        src=f"{OUT}/models/{{teacher}}/data/{{corpus}}.bpe.src",
        ref=f"{OUT}/models/{{teacher}}/data/{{corpus}}.bpe.tgt",
        embeddings=f"{OUT}/models/{{teacher}}/model.pt",
        dicts=f"{OUT}/models/{{teacher}}/bin",
        stopwords=f"{OUT}/models/{{teacher}}/data/train.bpe.tgt",
    output:
        f"{OUT}/nat/{{teacher}}/{{system}}/scores/{{corpus}}.redundancy.json",
    params:
        settings=lambda w: PLAN.nat_redundancy_args(w.teacher),
    log:
        f"{OUT}/logs/nat_score_redundancy/{{teacher}}.{{system}}.{{corpus}}.log",
    benchmark:
        f"{OUT}/benchmarks/nat_score_redundancy/{{teacher}}.{{system}}.{{corpus}}.tsv"
    conda:
        ENV
    shell:
        "phenomt score redundancy --hyp {input.hyp} --src {input.src} --ref {input.ref}"
        " --embeddings {input.embeddings} --embeddings-dict {input.dicts}/dict.tgt.txt"
        " --stopword-corpus {input.stopwords} {params.settings} --output {output}"
        " > {log} 2>&1"


# Decoding speed on the first nat.speed.sentences sentences of a test set.
rule nat_speed_subset:
    input:
        src=lambda w: PLAN.bpe_file(w.teacher, PLAN.nat_speed_corpus(w.teacher), "src"),
        tgt=lambda w: PLAN.bpe_file(w.teacher, PLAN.nat_speed_corpus(w.teacher), "tgt"),
    output:
        src=f"{OUT}/nat/{{teacher}}/speed/test.bpe.src",
        tgt=f"{OUT}/nat/{{teacher}}/speed/test.bpe.tgt",
    params:
        sentences=PLAN.nat_speed["sentences"],
    log:
        f"{OUT}/logs/nat_speed_subset/{{teacher}}.log",
    conda:
        ENV
    shell:
        "(head -n {params.sentences} {input.src} > {output.src} &&"
        " head -n {params.sentences} {input.tgt} > {output.tgt}) 2> {log}"


rule nat_speed_binarize:
    input:
        src=f"{OUT}/nat/{{teacher}}/speed/test.bpe.src",
        tgt=f"{OUT}/nat/{{teacher}}/speed/test.bpe.tgt",
        dicts=f"{OUT}/models/{{teacher}}/bin",
    output:
        directory(f"{OUT}/nat/{{teacher}}/speed/bin"),
    params:
        prefix=lambda w, input: input.src.removesuffix(".src"),
    log:
        f"{OUT}/logs/nat_speed_binarize/{{teacher}}.log",
    conda:
        ENV
    shell:
        "fairseq-preprocess --source-lang src --target-lang tgt"
        " --srcdict {input.dicts}/dict.src.txt --tgtdict {input.dicts}/dict.tgt.txt"
        " --testpref {params.prefix} --destdir {output} --workers 1 > {log} 2>&1"


# With nat.speed.exclusive, a measurement reserves every local core, so no other job of the
# pipeline runs beside it (fairseq itself still uses one thread).
rule nat_speed:
    input:
        data=f"{OUT}/nat/{{teacher}}/speed/bin",
        source=f"{OUT}/nat/{{teacher}}/speed/test.bpe.src",
        model=lambda w: PLAN.nat_checkpoint(w.teacher, w.system),
    output:
        f"{OUT}/nat/{{teacher}}/speed/{{system}}.json",
    params:
        options=lambda w: json.dumps(PLAN.nat_decode_options(w.teacher, w.system)),
        batch_sizes=" ".join(str(b) for b in PLAN.nat_speed["batch_sizes"]),
        model=lambda w: w.system.split(".")[0],
        data=lambda w: "raw" if w.system == "ar" else w.system.split(".")[1],
        direction=lambda w: PLAN.nat_direction(w.teacher),
    threads: workflow.cores if PLAN.nat_speed.get("exclusive") else 1
    resources:
        mem_mb=lambda w: PLAN.nat_resources(w.system, decoding=True)["mem_mb"],
        runtime=lambda w: PLAN.nat_resources(w.system, decoding=True)["runtime"],
        gpu=lambda w: PLAN.nat_resources(w.system, decoding=True)["gpu"],
    log:
        f"{OUT}/logs/nat_speed/{{teacher}}.{{system}}.log",
    benchmark:
        f"{OUT}/benchmarks/nat_speed/{{teacher}}.{{system}}.tsv"
    conda:
        ENV
    shell:
        "phenomt nat speed --data-bin {input.data} --source {input.source}"
        " --model {input.model} --options {params.options:q}"
        " --batch-sizes {params.batch_sizes} --teacher {wildcards.teacher}"
        " --system {wildcards.system} --model-name {params.model} --data {params.data}"
        " --direction {params.direction} --output {output} > {log} 2>&1"


# Tables 5 (distilled data) and 10 (raw data).
rule nat_table_results:
    input:
        scores=lambda w: [f for pair in PLAN.nat_table_scores(w.ntable) for f in pair],
        selections=lambda w: PLAN.nat_table_selections(w.ntable),
        cards=[f"{OUT}/models/{t}/card.json" for t in PLAN.nat_teachers],
    output:
        md=f"{OUT}/tables/nat_table{{ntable}}.md",
        csv=f"{OUT}/tables/nat_table{{ntable}}.csv",
    params:
        scores=lambda w: " ".join(f"{b}={r}" for b, r in PLAN.nat_table_scores(w.ntable)),
        paper=json.dumps(PLAN.nat.get("paper") or {}),
        notes=NAT_SCALE_NOTES,
    log:
        f"{OUT}/logs/tables/nat_table{{ntable}}.log",
    conda:
        ENV
    shell:
        "phenomt table nat-results --table {wildcards.ntable} --scores {params.scores}"
        " --selections {input.selections} --cards {input.cards} --paper {params.paper:q}"
        " {params.notes} --md {output.md} --csv {output.csv} > {log} 2>&1"


rule nat_table_speed:
    input:
        [PLAN.nat_speed_json(t, s) for t in PLAN.nat_teachers for s in PLAN.nat_speed_systems()],
    output:
        md=f"{OUT}/tables/nat_speed.md",
        csv=f"{OUT}/tables/nat_speed.csv",
    params:
        notes=" ".join(
            f"--note {shlex.quote(n)}"
            for n in [*PLAN.nat_speed_notes(), *PLAN.nat_scale_notes()]
        ),
    log:
        f"{OUT}/logs/tables/nat_speed.log",
    conda:
        ENV
    shell:
        "phenomt table nat-speed --speeds {input} {params.notes} --md {output.md}"
        " --csv {output.csv} > {log} 2>&1"


# Agreement with human annotations (paper Tables 4 and 9), when nat.annotations is set.
rule nat_agreement:
    input:
        unpack(lambda w: PLAN.nat_agreement_inputs()),
    output:
        f"{OUT}/nat/agreement.json",
    params:
        settings=lambda w: PLAN.nat_agreement_args(),
        files=lambda w, input: PLAN.nat_agreement_file_args(
            {k: getattr(input, k) for k in input.keys() if k not in ("annotations", "hyps")}
        ),
    log:
        f"{OUT}/logs/nat_agreement.log",
    conda:
        ENV
    shell:
        "phenomt score redundancy-agreement --annotations {input.annotations}"
        " {params.settings} {params.files} --output {output} > {log} 2>&1"


rule nat_table_agreement:
    input:
        f"{OUT}/nat/agreement.json",
    output:
        md=f"{OUT}/tables/nat_agreement.md",
        csv=f"{OUT}/tables/nat_agreement.csv",
    params:
        note=lambda w: f"Annotations: {PLAN.nat['annotations']['file']}.",
    log:
        f"{OUT}/logs/tables/nat_agreement.log",
    conda:
        ENV
    shell:
        "phenomt table nat-agreement --report {input} --note {params.note:q}"
        " --md {output.md} --csv {output.csv} > {log} 2>&1"
