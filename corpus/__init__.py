"""dllogscan's evaluation corpus (data files) and its generator, ``corpus.gen``."""
