"""Correlate: from hits to candidate diagnoses. Conditions between hits, facts, evidence lines
and confidence (``candidates``); the timing of the log's end, a stall after steady progress
(``cadence``); the text patterns both share (``patterns``).

May import: ``core``, ``normalize``, ``signatures``.
"""
