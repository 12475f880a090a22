"""Scoring given system outputs: real translations of published systems, or a user's own.

- :mod:`phenomt.systems.outputs`: strict reading and validation of a system output against its
  test set, official-line masks, and system outputs recovered from MQM annotation files;
- :mod:`phenomt.systems.scores`: sacreBLEU and chrF with sacrebleu's own confidence intervals
  and paired significance tests; CRR/DRR per system with sentence-bootstrap intervals and a
  paired test between two systems;
- :mod:`phenomt.systems.challenge`: the LDD challenge sets of a test set (extracted by the
  LDD stages) scored for one system: BLEU with sacreBLEU's interval against the full test set,
  RIBES of the reordering sets;
- :mod:`phenomt.systems.mqm`: per-system rates of MQM error categories and their rank
  correlation with a metric across systems;
- :mod:`phenomt.systems.tables`: the finished tables, naming each system's origin and licence
  (``data/sysout_systems.tsv``), the challenge-set tables with the systems as columns;
- :mod:`phenomt.systems.cli`: the ``phenomt systems ...`` and ``phenomt table systems-...``
  commands.
"""
