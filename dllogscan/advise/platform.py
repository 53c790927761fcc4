"""Where the job ran, as far as its text shows: Slurm, Kubernetes, Windows, a Mac, or none we can tell.

A fix or a command made for one platform (``sacct``, ``kubectl``, a ``docker run`` flag, a pod
spec) is shown where the text shows that platform or shows none: a pod that was OOMKilled gets
``kubectl describe pod``, not ``sacct``; a Slurm job's bus error gets no ``docker run --shm-size``.
A text that shows Windows (a drive path, ``[WinError N]``) gets no command made for Linux
(``dmesg``, ``ulimit``, ``/proc`` and ``/dev/shm``, a shell's ``export``) and no platform's fix:
Slurm, Kubernetes and Docker's ``--shm-size`` run Linux. A text that shows a Mac (a frame under
``/Users``, an environment report's ``OS: macOS``) keeps a POSIX shell's commands (``ulimit``,
``ps``, ``lsof``, ``grep``) and loses Linux's own (``dmesg``'s OOM killer lines, ``journalctl``,
``free``, ``watch``, ``/proc``, ``/sys`` and ``/dev/shm``) and the platforms' fixes, as on
Windows. Where the text shows how the workers started without showing it set — spawn on Windows,
which has no fork; spawn on macOS, its default since Python 3.8; forkserver under Python 3.14 or
later, that version's default on Linux; the last two where the text sets no start method
(``default_start``) — a fix that only switches to that start method ("start the workers with
spawn") is left out: it would change nothing; so is one that switches to a method the platform
lacks (fork on Windows). A log that names no platform keeps every fix, as before.
"""
from __future__ import annotations

from typing import Iterable, Mapping

from ..signatures.database import PLATFORMS, FixEntry
from .versions import version

#: facts that only a platform's own output gives (the signatures' named groups, and what
#: ``dllogscan slurm`` / ``dllogscan k8s`` add)
PLATFORM_FACTS = {
    "slurm": ("job_id", "slurm_state", "slurm_exit_code"),
    "kubernetes": ("pod", "namespace", "k8s_reason", "k8s_exit_code"),
}
#: a signature id naming a platform's own output (``B.oom.slurm-oom-event``, ``B.oom.k8s-reason``)
PLATFORM_SIGNATURES = {"slurm": ".slurm-", "kubernetes": ".k8s-"}
#: a command's program -> the platform it needs
TOOLS = {
    "sacct": "slurm", "scontrol": "slurm", "seff": "slurm", "sstat": "slurm", "squeue": "slurm",
    "srun": "slurm", "sbatch": "slurm", "scancel": "slurm",
    "kubectl": "kubernetes",
    "docker": "docker",
    # a POSIX shell's built-ins and tools, which a Mac has and a Windows machine does not
    "mount": "posix", "ulimit": "posix", "lsof": "posix", "ps": "posix", "export": "posix", "du": "posix",
    "grep": "posix",
    # Linux's own: a Mac has no journal, free or watch, and its dmesg shows no OOM killer
    "dmesg": "linux", "journalctl": "linux", "free": "linux", "watch": "linux",
}
#: paths only Linux has (a Mac has none of them): a command that reads them is made for Linux
#: whatever its program
LINUX_PATHS = ("/dev/shm", "/proc/", "/sys/")
#: the Python version from which the default start method on Linux is forkserver (the DataLoader
#: uses the default unless its ``multiprocessing_context`` says otherwise; spawn on macOS and
#: Windows already)
FORKSERVER_DEFAULT_FROM = (3, 14)
#: the Python version from which the default start method on macOS is spawn
SPAWN_ON_MACOS_FROM = (3, 8)
#: why the workers spawned on Windows (``default_start``): the Windows note says the rest
WINDOWS_START = "Windows has no fork"
#: the start methods a platform does not have: a fix that switches to one is left out there
UNAVAILABLE_STARTS = {"windows": frozenset({"fork", "forkserver"})}
#: what may stand before the program itself: ``sudo``, ``env``, ``VAR=value``
PREFIX_WORDS = frozenset({"sudo", "env", "exec", "time", "nohup"})


def platforms_shown(facts: Mapping[str, str], signatures: Iterable[str]) -> frozenset[str]:
    """The platforms a diagnosis's facts and signature ids show (empty: none can be told)."""
    signatures = tuple(signatures)
    shown = {platform for platform, keys in PLATFORM_FACTS.items() if any(facts.get(key) for key in keys)}
    shown |= {platform for platform, marker in PLATFORM_SIGNATURES.items() if any(marker in s for s in signatures)}
    if windows_shown(facts):
        shown.add("windows")
    elif macos_shown(facts):
        shown.add("macos")
    return frozenset(shown)


def macos_shown(facts: Mapping[str, str]) -> bool:
    """Whether the text shows a Mac, and not Windows (the fact ``macos``: a frame under /Users, an
    environment report's ``OS: macOS``)."""
    return bool(facts.get("macos")) and not windows_shown(facts)


def windows_shown(facts: Mapping[str, str]) -> bool:
    """Whether the text shows a Windows machine (a drive path or a ``[WinError N]``: the fact
    ``windows``, ``signatures/facts.toml``)."""
    return bool(facts.get("windows"))


def runtime_platforms(runtime: list[str]) -> frozenset[str]:
    """The platforms of what ``dllogscan doctor`` saw this machine run in (``live.facts.runtime``:
    ``docker``, ``kubernetes``, ``slurm job 42``, ``containerd``): a pod's container is no
    ``docker run``, so Kubernetes stands alone where both show."""
    shown = {name.split()[0] for name in runtime} & PLATFORMS
    return frozenset(shown - {"docker"} if "kubernetes" in shown else shown)


def host_platforms(system: str) -> frozenset[str]:
    """The platform of the machine ``dllogscan doctor`` runs on, from ``sys.platform``: a Mac
    (``darwin``) or Windows (``win32``, ``cygwin``); none for Linux, whose commands are the default."""
    if system.startswith("darwin"):
        return frozenset({"macos"})
    if system.startswith(("win32", "cygwin")):
        return frozenset({"windows"})
    return frozenset()


def command_platform(command: str) -> str | None:
    """The platform a shell command needs, from its program (``kubectl exec ...`` -> kubernetes),
    or from a path only Linux has where the program is none of a platform's own (``ls /proc/42/fd``,
    ``sudo mount -o remount,size=8g /dev/shm`` -> linux)."""
    program = None
    for word in command.split():
        if word in PREFIX_WORDS or ("=" in word and not word.startswith("-")):
            continue
        program = TOOLS.get(word.rsplit("/", 1)[-1])
        break
    if program in (None, "posix") and any(path in command for path in LINUX_PATHS):
        return "linux"
    return program


def namespaced(command: str, facts: dict[str, str]) -> str:
    """A ``kubectl`` command in the pod's namespace where the facts name one (``dllogscan k8s``
    knows it); written without ``-n`` it runs in the current context's namespace."""
    namespace = facts.get("namespace")
    if not namespace or command_platform(command) != "kubernetes" or has_namespace_flag(command):
        return command
    return command.replace("kubectl ", f"kubectl -n {namespace} ", 1)


def has_namespace_flag(command: str) -> bool:
    return any(word in ("-n", "--namespace") or word.startswith("--namespace=") for word in command.split())


def fits(platform: str | None, shown: frozenset[str]) -> bool:
    """Whether something made for ``platform`` (None: any; ``posix``: any but Windows; ``linux``:
    any but Windows and a Mac) applies where ``shown`` were seen."""
    if platform is None:
        return True
    if "windows" in shown:
        return False
    if platform == "posix":
        return True
    if "macos" in shown:
        return False
    return platform == "linux" or not shown or platform in shown


def default_start(facts: Mapping[str, str]) -> tuple[str, str] | None:
    """How the workers started where the text shows it was not fork without showing a start method
    set, and why: spawn on Windows (no fork there); where the text sets no start method
    (``start_method``, ``start_method_call``), spawn on macOS (``macos``) unless it shows a Python
    before 3.8, and forkserver where it shows Python 3.14 or later (``python``). None: the workers
    may have forked."""
    if windows_shown(facts):
        return "spawn", WINDOWS_START
    if facts.get("start_method") or facts.get("start_method_call"):
        return None
    python = python_version(facts)
    if macos_shown(facts):
        if python is not None and python < SPAWN_ON_MACOS_FROM:
            return None
        return "spawn", "macOS's default from Python 3.8, and the text sets no start method"
    if python is not None and python >= FORKSERVER_DEFAULT_FROM:
        return "forkserver", f"Python {facts['python']}'s default on Linux, and the text sets no start method"
    return None


def python_version(facts: Mapping[str, str]) -> tuple[int, int] | None:
    """The text's Python as (major, minor) (the fact ``python``), or None."""
    return version(facts.get("python", ""))


def switched_to(fix: FixEntry) -> frozenset[str]:
    """The start methods ``fix`` switches the workers to (its ``already``); empty where it makes
    another setting, or none."""
    if not fix.already or any(fact != "start_method" for fact, _ in fix.already):
        return frozenset()
    return frozenset(value for _, values in fix.already for value in values)


def settled(fix: FixEntry, start_method: str | None) -> bool:
    """Whether ``fix`` only switches the workers to the start method they already had
    (``default_start``): "start the workers with spawn" on Windows."""
    return start_method in switched_to(fix)


def kept(entries: Iterable[FixEntry], shown: frozenset[str]) -> list[tuple[FixEntry, tuple[str, ...]]]:
    """The fixes that apply where ``shown`` were seen, each with the commands of its own that do
    (still templates: the caller fills them in). A fix whose every command is made for another
    platform, and that has no code, has nothing left to show and is left out (on Windows, "Confirm
    the OOM kill": dmesg, journalctl, sacct); so is one that switches to a start method the
    platform lacks (``UNAVAILABLE_STARTS``: "start the workers with fork" on Windows)."""
    lacking = frozenset().union(*(UNAVAILABLE_STARTS.get(platform, frozenset()) for platform in shown))
    out = []
    for f in entries:
        methods = switched_to(f)
        if not fits(f.platform, shown) or (methods and methods <= lacking):
            continue
        commands = tuple(c for c in f.commands if fits(command_platform(c), shown))
        if f.commands and not commands and not f.code:
            continue
        out.append((f, commands))
    return out
