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
