"""Progress output written by our own code, in the styles real training logs show.

Styles: ``tqdm`` (carriage-return updates), ``tqdm-lines`` (one line per
refresh, as tqdm looks in a log file with ``mininterval``), ``lightning``
(PyTorch-Lightning's ``Epoch N: ...|... v_num=0, train_loss=...``), ``plain``
(one ``step`` line per refresh on stdout) and ``none``.
"""
import sys
import time

STYLES = ("tqdm", "tqdm-lines", "lightning", "plain", "none")


def _fmt_time(seconds):
    seconds = int(seconds)
    minutes, seconds = divmod(seconds, 60)
    hours, minutes = divmod(minutes, 60)
    if hours:
        return f"{hours:d}:{minutes:02d}:{seconds:02d}"
    return f"{minutes:02d}:{seconds:02d}"


def _blocks(frac, width=10):
    """A unicode bar like tqdm's: full blocks plus one partial block."""
    parts = " ▏▎▍▌▋▊▉"
    filled = frac * width
    full = int(filled)
    rest = int((filled - full) * 8)
    bar = "█" * full
    if full < width:
        bar += parts[rest] if rest else " "
        bar += " " * (width - full - 1)
    return bar


class Bar:
    def __init__(self, total, style="tqdm", desc="train", epoch=0, every=1):
        if style not in STYLES:
            raise ValueError(f"unknown progress style {style!r}")
        self.total, self.style, self.desc, self.epoch = total, style, desc, epoch
        self.every = max(1, every)
        self.n = 0
        self.start = time.monotonic()
        self.postfix = ""
        self.stream = sys.stdout if style == "plain" else sys.stderr

    def _line(self):
        elapsed = time.monotonic() - self.start
        rate = self.n / elapsed if elapsed > 0 else 0.0
        remaining = (self.total - self.n) / rate if rate > 0 else 0.0
        frac = self.n / self.total if self.total else 1.0
        timing = f"[{_fmt_time(elapsed)}<{_fmt_time(remaining)}, {rate:.2f}it/s"
        if self.style == "plain":
            return (f"[epoch {self.epoch}] step {self.n}/{self.total} {self.postfix} "
                    f"({rate:.1f} it/s)")
        if self.style == "lightning":
            return (f"Epoch {self.epoch}: {int(frac * 100):3d}%|{_blocks(frac)}| "
                    f"{self.n}/{self.total} {timing}, v_num=0, {self.postfix}]")
        return (f"{self.desc}: {int(frac * 100):3d}%|{_blocks(frac)}| {self.n}/{self.total} "
                f"{timing}, {self.postfix}]")

    def _emit(self):
        if self.style == "none":
            return
        if self.style in ("tqdm", "lightning"):
            self.stream.write("\r" + self._line())
        else:
            self.stream.write(self._line() + "\n")
        self.stream.flush()

    def update(self, n=1, **postfix):
        self.n += n
        if postfix:
            self.postfix = ", ".join(f"{k}={v:.4f}" if isinstance(v, float) else f"{k}={v}"
                                     for k, v in postfix.items())
        if self.n % self.every == 0 or self.n == self.total or self.n == 1:
            self._emit()

    def close(self):
        if self.style in ("tqdm", "lightning"):
            self.stream.write("\n")
            self.stream.flush()
