"""Generate real DataLoader failure logs: ``python -m corpus.gen --list``.

Every log under ``corpus/logs/`` is the captured stdout+stderr of a real training
run (``python -m corpus.gen.train``) driven into a real failure. The harness
(``harness.py``) only adds what a scheduler would add around a job (Slurm
headers, the time-limit line, a ``[rankN]:`` line prefix) and says so in the
item's ``notes``.
"""
