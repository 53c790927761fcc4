"""A local process pool made of ``os.fork`` and two pipes per worker, where the system can fork.

``ProcessPoolExecutor`` costs a batch ~15 ms of imports (``concurrent.futures``,
``multiprocessing``) before its first worker starts, and a manager thread in the gathering
process; this pool is the loop below (its end, 6-11 ms, is the workers' own exit, as there).
Where ``os.fork`` is missing (Windows), ``engines.py`` keeps ``ProcessPoolExecutor``.

Rules:
- a message is an 8-byte little-endian length and a pickle: the gathering process sends
  ``(function, argument)``, a worker calls ``function(argument, config)`` and answers
  ``(True, result)``, or ``(False, exception)`` when the call raised (raised again here);
- ``jobs`` is a ceiling, not a count: a worker is forked when a task is ready and no worker is
  idle, so a batch of three tasks forks at most three whatever ``jobs`` says (before, all
  ``jobs`` were forked first: ``--jobs 600`` over one chunk of 23 files took 5 s, not 0.3 s);
- each worker has at most ``IN_FLIGHT`` tasks sent and not answered; one thread per worker
  writes its tasks (a task may be an archive's members, megabytes, which the worker takes only
  when it is done with the one before: the gathering process reads the archive on meanwhile),
  the gathering loop reads answers as they come, so neither side waits for the other;
- a worker that ends without answering (killed, out of memory) leaves its place to a fresh one,
  forked when a task needs it, at most ``respawns`` times in a batch: the task it was running
  goes to the caller's ``lost`` (which turns it into rows, or into smaller tasks to try again),
  the tasks queued behind it are sent again as they are; each death past the budget lowers the
  ceiling by one, and when no worker may run every remaining task goes to ``lost``. Without
  ``lost`` a death stops the batch with one ``Error:`` line (``WorkerDied``);
- workers ignore Ctrl-C (the gathering process ends them and says "interrupted"); they end on
  the end of their task pipe, or are ended with SIGTERM when the batch stops early. SIGINT and
  SIGTERM are blocked while a worker is forked, and stay blocked in it until it ignores SIGINT
  and takes SIGTERM's default, so a Ctrl-C, or a SIGTERM sent to the whole process group
  (``timeout``, Slurm's ``scancel``), at that moment reaches the gathering process once the
  worker is known, and ends the worker, never running a worker's copy of the caller's code
  (which would finish the batch's output a second time).
"""
from __future__ import annotations

import io
import os
import pickle
import queue
import select
import signal
import struct
import threading
import warnings
from collections import deque
from typing import Any, Callable, Iterable, Iterator

from ..core.errors import DllogscanError

IN_FLIGHT = 2
HEADER = struct.Struct("<Q")
READ_SIZE = 1 << 20
PIPE_BYTES = 1 << 20
RESPAWNS = 32


class WorkerDied(DllogscanError):
    """A worker process ended before it answered its task; ``reason`` says so in a few words,
    for a row of each source the task held."""

    def __init__(self, message: str, reason: str = "") -> None:
        super().__init__(message)
        self.reason = reason or message


def _pipe() -> tuple[int, int]:
    """A pipe, 1 MiB deep where Linux allows it (an archive's members go out in batches of
    megabytes: 16 times fewer writes, reads and wake-ups than through the default 64 KiB)."""
    read_fd, write_fd = os.pipe()
    try:
        import fcntl  # noqa: PLC0415 - POSIX only, like fork

        fcntl.fcntl(write_fd, getattr(fcntl, "F_SETPIPE_SZ"), PIPE_BYTES)
    except (ImportError, AttributeError, OSError):
        pass  # not Linux, or over the system's limit: the default depth
    return read_fd, write_fd


def _message(obj: Any) -> list[memoryview]:
    """``obj`` as a message: its header and its pickle, as they are (no copy joins them)."""
    data = pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)
    return [memoryview(HEADER.pack(len(data))), memoryview(data)]


def _read_exactly(reader: io.FileIO, size: int) -> bytearray | None:
    """``size`` bytes read into one buffer (a task may be megabytes), or None at the pipe's end."""
    buffer = bytearray(size)
    view, got = memoryview(buffer), 0
    while got < size:
        n = reader.readinto(view[got:])
        if not n:
            return None
        got += n
    view.release()
    return buffer


def _answer(call: Callable, argument: Any, config: Any) -> list[memoryview]:
    try:
        return _message((True, call(argument, config)))
    except BaseException as exc:  # noqa: BLE001 - carried to the gathering process, raised there
        try:
            return _message((False, exc))
        except Exception:  # noqa: BLE001 - an exception that does not pickle
            return _message((False, RuntimeError(f"{type(exc).__name__}: {exc}")))


def _serve(task_fd: int, answer_fd: int, config: Any) -> None:
    """A worker's life: read a task, write its answer, until the task pipe ends."""
    reader = io.FileIO(task_fd, "rb", closefd=False)
    while True:
        head = _read_exactly(reader, HEADER.size)
        body = _read_exactly(reader, HEADER.unpack(head)[0]) if head is not None else None
        if body is None:
            return
        call, argument = pickle.loads(body)
        del body
        for data in _answer(call, argument, config):
            while data:
                data = data[os.write(answer_fd, data):]


class _Worker:
    """One forked worker as the gathering process sees it."""

    def __init__(self, config: Any, inherited: list[int], mask: set[signal.Signals]) -> None:
        """Fork the worker; the caller blocks SIGINT across this (``run``), ``mask`` being the
        signal mask to restore in the worker once it ignores SIGINT."""
        task_r, task_w = _pipe()
        answer_r, answer_w = _pipe()
        pid = os.fork()
        if pid == 0:  # the worker: never returns into the caller's code
            code = 0
            try:
                signal.signal(signal.SIGINT, signal.SIG_IGN)
                signal.signal(signal.SIGTERM, signal.SIG_DFL)  # not the caller's (batch: raise KeyboardInterrupt)
                signal.pthread_sigmask(signal.SIG_SETMASK, mask)
                for fd in inherited + [task_w, answer_r]:
                    os.close(fd)  # another worker's pipe held open here would never end
                _serve(task_r, answer_w, config)
            except BaseException:  # noqa: BLE001 - a broken pipe when the batch stops early
                code = 1
            finally:
                os._exit(code)
        os.close(task_r)
        os.close(answer_w)
        self.pid, self.task_fd, self.answer_fd = pid, task_w, answer_r
        self.inbox = bytearray()
        self.sent: deque = deque()  # tasks sent and not answered, in the order they are run
        self._outbox: queue.SimpleQueue = queue.SimpleQueue()  # messages for the sender, None to end
        self._sender: threading.Thread | None = None

    def start_sending(self) -> None:
        """The thread that writes this worker's tasks (started once every worker is forked)."""
        self._sender = threading.Thread(target=self._send_all, name=f"dllogscan-send-{self.pid}", daemon=True)
        self._sender.start()

    def _send_all(self) -> None:
        while True:
            message = self._outbox.get()
            if message is None:
                return
            try:
                for data in message:
                    while data:
                        data = data[os.write(self.task_fd, data):]
            except OSError:  # the worker is gone: its answer pipe says so to the gathering loop
                return

    @property
    def in_flight(self) -> int:
        return len(self.sent)

    def send(self, task: tuple) -> None:
        self._outbox.put(_message(task))
        self.sent.append(task)

    def answers(self) -> list[Any]:
        """Read what has arrived; the whole answers among it, unpickled."""
        piece = os.read(self.answer_fd, READ_SIZE)
        if not piece:
            raise self._died()
        self.inbox += piece
        out = []
        while len(self.inbox) >= HEADER.size:
            size = HEADER.unpack_from(self.inbox)[0]
            if len(self.inbox) < HEADER.size + size:
                break
            out.append(pickle.loads(bytes(self.inbox[HEADER.size:HEADER.size + size])))
            del self.inbox[:HEADER.size + size]
            self.sent.popleft()
        return out

    def _died(self) -> WorkerDied:
        """The error for this worker gone before it answered, with how it ended (reaped here)."""
        pid, how = self.pid, ""
        try:
            _, status = os.waitpid(pid, 0) if pid else (0, None)
        except ChildProcessError:
            status = None
        if status is not None:
            self.pid = 0
            how = (f" (killed by signal {os.WTERMSIG(status)}: out of memory?)" if os.WIFSIGNALED(status)
                   else f" (exit status {os.waitstatus_to_exitcode(status)})")
        return WorkerDied(f"a batch worker process (pid {pid}) ended before it finished its task{how}",
                          f"its batch worker process ended before it finished{how}")

    def close(self, stop: bool) -> None:
        if self.pid and stop:
            try:
                os.kill(self.pid, signal.SIGTERM)  # also ends a write the sender is blocked in
            except ProcessLookupError:
                pass
        self._outbox.put(None)
        if self._sender is not None:
            self._sender.join()
        for fd in (self.task_fd, self.answer_fd):
            try:
                os.close(fd)
            except OSError:
                pass
        if self.pid:
            try:
                os.waitpid(self.pid, 0)
            except ChildProcessError:
                pass
            self.pid = 0


def _fork(config: Any, workers: list[_Worker]) -> _Worker:
    """A new worker added to ``workers`` and sending, forked with SIGINT and SIGTERM blocked (one
    held back meanwhile arrives once the worker is known); it closes the others' pipes. The
    other workers' sender threads may be running: the child touches none of their locks (it
    reads and writes only its own pipes), so Python's warning about forking a process that has
    threads does not apply."""
    mask = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM})
    try:
        inherited = [fd for w in workers for fd in (w.task_fd, w.answer_fd)]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            workers.append(_Worker(config, inherited, mask))
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)
    workers[-1].start_sending()
    return workers[-1]


def _send(task: Any, workers: list[_Worker], ceiling: int, config: Any) -> None:
    """Send ``task`` to an idle worker, else to a new one while fewer than ``ceiling`` run, else
    to the least busy (the caller has checked that one has room)."""
    worker = min(workers, key=lambda w: w.in_flight, default=None)
    if (worker is None or worker.in_flight) and len(workers) < ceiling:
        worker = _fork(config, workers)
    worker.send(task)  # type: ignore[union-attr]


def run(tasks: Iterator[Any], config: Any, jobs: int, is_task: Callable[[Any], bool],
        lost: Callable[[Any, WorkerDied], Iterable[Any]] | None = None,
        respawns: int = RESPAWNS) -> Iterator[Any]:
    """The items of ``tasks`` in the order they are ready: an item ``is_task`` accepts,
    ``(function, argument)``, becomes ``function(argument, config)``'s result, computed in one of
    ``jobs`` forked workers; any other item comes back as it is, at once. The task a worker was
    running when it died goes to ``lost``, whose items (results, or tasks to try again) take its
    place; without ``lost`` the death is raised (``WorkerDied``). Workers are forked as tasks
    need them, never more than ``jobs`` at once."""
    workers: list[_Worker] = []
    finished = False
    try:
        again: deque = deque()  # what takes the place of lost tasks, sent before any new task
        pending = True  # tasks may remain
        deaths = 0
        ceiling = jobs  # workers that may run at once: lowered by each death past the budget
        while True:
            if not workers and ceiling <= 0:  # none may start: nothing is run any more
                yield from _unrun(again, tasks if pending else iter(()), is_task, lost, deaths)  # type: ignore[arg-type]
                finished = True
                return
            while (again or pending) and (len(workers) < ceiling or any(w.in_flight < IN_FLIGHT for w in workers)):
                item = again.popleft() if again else next(tasks, None)
                if item is None:
                    pending = False
                elif is_task(item):
                    _send(item, workers, ceiling, config)
                else:
                    yield item
            busy = {w.answer_fd: w for w in workers if w.in_flight}
            if not busy:
                finished = True
                return
            readable, _, _ = select.select(list(busy), [], [])
            for fd in readable:
                w = busy[fd]
                try:
                    answers = w.answers()
                except WorkerDied as died:
                    if lost is None:
                        raise
                    deaths += 1
                    again.extendleft(reversed(_requeue(w, lost, died)))
                    w.close(stop=False)
                    workers.remove(w)  # a fresh one is forked when a task needs it
                    ceiling -= deaths > respawns
                    continue
                for ok, value in answers:
                    if not ok:
                        raise value
                    yield value
    finally:
        for w in workers:
            w.close(stop=not finished)


def _requeue(dead: _Worker, lost: Callable[[Any, WorkerDied], Iterable[Any]], died: WorkerDied) -> list[Any]:
    """What takes the place of a dead worker's tasks: ``lost``'s items for the one it was running,
    then those it had not started, as they were."""
    running, *waiting = dead.sent
    dead.sent.clear()
    return [*lost(running, died), *waiting]


def _unrun(again: deque, tasks: Iterator[Any], is_task: Callable[[Any], bool],
           lost: Callable[[Any, WorkerDied], Iterable[Any]], deaths: int) -> Iterator[Any]:
    """Every item left when no worker is: each task goes to ``lost`` (until it gives no task)."""
    gone = WorkerDied(f"batch worker processes ended {deaths} times; no more were started",
                      f"not scanned: batch worker processes ended {deaths} times (out of memory?) "
                      "and no more were started")
    while True:
        item = again.popleft() if again else next(tasks, None)
        if item is None:
            return
        if is_task(item):
            again.extendleft(reversed(list(lost(item, gone))))
        else:
            yield item
