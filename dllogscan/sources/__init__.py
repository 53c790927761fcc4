"""Sources, the first stage: open what the user has (a file, a compressed file, standard input,
bytes in memory) as a bounded byte stream (``streams``), and flatten documents (HTML pages, issue
exports, JSON) into log text (``documents``, ``html_text``, ``shapes``).

May import: ``core``.
"""
