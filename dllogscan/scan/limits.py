"""The scanner's sizes and caps, in one place. Code reads them as ``limits.NAME`` when it runs,
so a test can shrink them (``monkeypatch.setattr(limits, "CHUNK", ...)``) for every module at once."""

CHUNK = 4 << 20
LOOKBEHIND = 64 << 10
LOOKAHEAD = 256 << 10
MAX_LINE = 16 << 10
WINDOW = 2048
#: windows of lines longer than MAX_LINE matched in one round: at most LINE_WINDOWS of one line and
#: ROUND_WINDOWS in all, the rest of such a line passed over in that round (``output.WindowBudget``);
#: one line of a repeated failure had a window matched every 2 KB (200 MB of it took 14 s)
LINE_WINDOWS = 32
ROUND_WINDOWS = 128
#: a message wrapped across two lines (matcher._join): a line longer than this is not joined to a
#: neighbour; a piece of a split long line (a line of repeated keywords) would otherwise be cleaned
#: and searched again for each of its neighbours
WRAP_MAX = 2048
BEFORE_LINES = 20
TAIL_LINES = 30
MAX_HITS_PER_SIGNATURE = 200
MAX_EVIDENCE_CHARS = 600
KEEP_PREFIX = 1 << 20
END_BYTES = 256 << 10  # the raw end of the input kept for cadence.py (timing of the last lines)
MEMO_LINE_BYTES = 1024  # longer lines are not remembered by their bytes
SCREEN_AFTER = 16  # lines of one signature group before its screen is built
SCREEN_MIN_POSITIONS = 2000  # keyword hits in one round that make the round screen pay (screen.py)
