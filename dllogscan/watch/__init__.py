"""``dllogscan watch FILE``: follow a training log as it grows and report a DataLoader failure as
soon as its text is printed, or a stall as soon as progress has stopped arriving for too long
(while the job still hangs, when ``py-spy dump`` can show where).

Rules:
- the file is followed as ``tail -F`` does (``sources/follow.py``): waited for, read again from
  its start when replaced or truncated, from its end at start unless ``--from-start``. The lines
  there at start, read from the end, are context: they support a verdict, none of their own is
  reported;
- the last ``WINDOW_BYTES`` of lines are kept. A new line that holds a signature keyword (the
  scanner's own prefilter) asks for a decision; it is taken once the file has been quiet for
  ``settle`` seconds, or ``SETTLE_CAP`` settle times after the keyword in a log that never goes
  quiet. The pipeline then reads the window as ``dllogscan FILE`` reads a file (signatures only,
  the classifier off: a window is not a report), its lines numbered as in the file, and each
  diagnosis that cites a line no earlier decision read is reported;
- why wait rather than decide at once: a traceback arrives in several writes, and the line that
  decides its class often comes last. ``Caught RuntimeError in DataLoader worker process 0`` is
  B/getitem until the traceback's last line, ``unable to allocate shared memory(shm) ...: No space
  left on device``, makes it A. What was printed cannot be taken back, so re-diagnosing later is
  no remedy; and PyTorch checks its workers every 5 s, so the main process's error can come
  seconds after a worker's own line (default ``SETTLE_S``: 2 s of quiet, at most 6 s);
- a stall (``correlate/stall.py``): progress lines have stopped arriving for the threshold. It is
  reported as class E, subclass hang (``pipeline.run_stalled``): the last progress line and the
  last line read as evidence, the silence in its note and facts, E's fixes, py-spy first;
- the end: exit 1 at the first report; with ``keep_going`` each report is printed and the watch
  goes on (a stall is reported once until progress comes back). Ctrl-C (SIGTERM too, in the
  command) or ``timeout`` end it with a summary: exit 0 when nothing was reported. ``timeout`` is
  the watch's own length, from its start, whatever the file does (no stall threshold: ``stall``).
  At either, the file is read once more and a failure still settling (or printed since the last
  poll) is decided at once and reported before the summary (exit 1); a second Ctrl-C skips that;
- a line that says the run finished (``ends.py``, data ``data/run_ends.toml``): the silence that
  would be a stall after it ends the watch instead (``finished``; ``correlate/stall.py`` says when
  progress after it is a new run's);
- the job's process (``pid``, ``process.py``): once it has gone (a zombie too, or its pid taken by
  a process that started later), the file is read one last time after one settle time (a reader
  of its pipe writes after it), a keyword there is decided at once, its failures reported, and
  the watch ends (``exited``). No stall after it;
- without ``pid``, the processes on this machine that hold the file open for writing are the job
  (``writers.py``: looked for in ``/proc`` at start and at each poll, within a time budget, each
  taken for the job's once it has held the file an interval, or left more than a line; a relay
  such as ``tee`` leads to the processes that write into its pipe, and its own life then does not
  count: ``data/relays.toml``); once they
  have all gone, or those left are orphans that write nothing (named in the end), and one last
  look finds no new one, the same end.

A way in. May import: the stages and ``pipeline``; not ``cli``.
"""
from __future__ import annotations

from .events import Event, Outcome, Reporter
from .loop import Options, watch

__all__ = ["Event", "Options", "Outcome", "Reporter", "watch"]
