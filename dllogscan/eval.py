"""``python -m dllogscan.eval``: the accuracy evaluation (see ``dllogscan.evaluation``)."""
from .evaluation import main

if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
