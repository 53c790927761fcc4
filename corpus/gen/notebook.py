"""The training run with its collate_fn defined the way a notebook cell or a ``python -c`` program
defines it: in the main module, where a spawned worker cannot import it.

``python -m corpus.gen.notebook --start-method spawn ...``: the function is defined inside the
``if __name__ == "__main__":`` block, so it exists in the parent only. Under spawn (the default on
Windows and macOS) each worker re-imports this module without running that block (as
``corpus.gen.notebook`` under ``python -m``; a script run by path comes back as ``__mp_main__``), then
unpickles the collate_fn by its name and fails (CPython's "Can't get attribute 'collate_batch' on
<module 'corpus.gen.notebook' ...>"); the parent reports the worker's exit. A Jupyter kernel's cells and
``python -c`` code fail the same way, on ``<module '__main__' (built-in)>``. Class F of dllogscan,
subclass main-module: workers cannot start.
"""
import sys

from corpus.gen.train import main

if __name__ == "__main__":
    from torch.utils.data import default_collate

    def collate_batch(batch):
        """Defined in the parent's __main__ only (a notebook cell's definition)."""
        return default_collate(batch)

    main(sys.argv[1:], collate_fn=collate_batch)
