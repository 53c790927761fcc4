"""Beside the pipeline: the corpus (``corpus``), training the shipped classifier (``train``) and
the accuracy evaluation (``evaluate``; ``python -m dllogscan.evaluation``). Offline work that reads
the repository's ``corpus/`` and never runs in a scan.

May import: the stages, ``pipeline`` and ``api``; no other way in.
"""
