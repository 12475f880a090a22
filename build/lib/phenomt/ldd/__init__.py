"""The long-distance-dependency wing (Choshen & Abend, CoNLL 2019).

``extract`` finds the challenge sets, ``sets`` names them and selects their lines, ``score`` and
``control`` evaluate a model on them, ``tables`` and ``sheet`` report, ``locality`` is the
locality-bias experiment (Table 1).
"""
