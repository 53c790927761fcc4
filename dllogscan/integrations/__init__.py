"""Where failures land: a Slurm job that ended, a Kubernetes pod that restarted, a new issue.

Each integration gathers the pieces with the tools the user already has (``scontrol``/``sacct``/
``journalctl``, ``kubectl``, the GitHub REST API through ``urllib``), scans them with the normal
pipeline and joins them with the batch's cross-file pass (``join.py``). Standard library only.

- ``tools.py``: run a cluster CLI with a time limit; a missing or refusing tool is a ``ToolError``;
- ``join.py``: several named texts of one job or pod -> one ``ScanResult`` (cross-file evidence);
- ``slurm.py`` (+ ``slurm_job.py``, ``epilog.py``): ``dllogscan slurm JOBID`` and the epilog mode;
- ``k8s.py`` (+ ``pod.py``): ``dllogscan k8s POD`` (the ``kubectl-dllogscan`` plugin is ``cli.kubectl``);
- ``github_action.py`` (+ ``github_api.py``): the issue-triage Action's entry point.

A way in. May import: the stages, ``pipeline`` and the other ways in (``batch``, ``triage``); not ``cli``.
"""
