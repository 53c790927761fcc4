"""``python -m dllogscan.evaluation``: the accuracy evaluation (see ``evaluate``)."""
from .evaluate import main

if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
