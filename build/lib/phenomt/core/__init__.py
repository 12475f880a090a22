"""The shared stages every wing builds on: files and downloads (``io``, ``fetch``), corpora and
text (``corpus``, ``text``, ``bpe``, ``stats``), parsing and alignment (``conllu``, ``parse``,
``align``), running fairseq (``nmt``), tables (``tables``) and every metric (``metrics``).

Nothing here imports a wing or the plan.
"""
