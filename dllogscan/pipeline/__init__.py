"""The pipeline: one source through every stage (sources -> normalize -> scan -> correlate ->
classify -> advise) to a ``ScanResult`` (``runner``). The ways in (``api``, ``triage``, ``batch``,
``serve``, ``live``, ``cli``) call it; it calls none of them.

May import: every stage (``core``, ``sources``, ``normalize``, ``signatures``, ``scan``,
``correlate``, ``classify``, ``advise``, ``report``).
"""
