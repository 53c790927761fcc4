"""``kubectl-dllogscan``: the kubectl plugin's entry point. kubectl runs it for
``kubectl dllogscan ARGS``, which means ``dllogscan k8s ARGS``."""
from __future__ import annotations

import sys

from .fast import main as dllogscan_main


def main() -> None:
    """``kubectl dllogscan POD [options]`` -> ``dllogscan k8s POD [options]``."""
    dllogscan_main(["k8s", *sys.argv[1:]])
