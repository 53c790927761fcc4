"""The text classifier for inputs that no signature decides: prose, reworded or truncated logs.

Imported only when a run needs it; it imports scikit-learn. The shipped model is plain parameters
(``dllogscan/data/classifier.json.gz``: vocabulary, idf, coefficients), never a pickle, so it
loads with any scikit-learn version (``light`` applies it without scikit-learn). Training and
its corpus live beside the pipeline, in ``evaluation``.

May import: ``core``, ``normalize``, ``signatures``, ``scan``, ``correlate``.
"""
