"""The training run as a script without the ``if __name__ == "__main__":`` guard.

``python -m corpus.gen.unguarded --start-method spawn ...``: under spawn (the default on Windows
and macOS) and forkserver every worker re-runs the main module to rebuild its state; here that
re-runs the training itself, and the worker's attempt to start workers of its own fails with
CPython's "bootstrapping phase" error. Class F of dllogscan: workers cannot start.
"""
import sys

from corpus.gen.train import main

main(sys.argv[1:])
