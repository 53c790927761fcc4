"""``python -m corpus.gen [SCENARIO ...] [--out corpus/logs] [--list]``.

SCENARIO is a variant name, a scenario family, a prefix of either (``a``,
``b-getitem``), or ``all``. Each variant runs for real in a subprocess with a
hard timeout; its log and ``.meta.json`` sidecar go to ``--out``.
"""
import argparse
import os
import sys
import time

from corpus.gen.harness import REPO, generate
from corpus.gen.scenarios import all_variants


def _matches(v, w):
    return w in ("all", v.name, v.scenario) or v.name.startswith(w + "-")


def select(variants, wanted):
    wanted = wanted or ["all"]
    unknown = [w for w in wanted if not any(_matches(v, w) for v in variants)]
    if unknown:
        raise SystemExit(f"unknown scenario(s): {', '.join(unknown)} (see --list)")
    return [v for v in variants if any(_matches(v, w) for w in wanted)]


def main(argv=None):
    p = argparse.ArgumentParser(prog="python -m corpus.gen", description=__doc__.split("\n")[2])
    p.add_argument("scenarios", nargs="*", metavar="SCENARIO")
    p.add_argument("--out", default=os.path.join(REPO, "corpus", "logs"))
    p.add_argument("--list", action="store_true", help="list the variants and exit")
    args = p.parse_args(argv)
    variants = select(all_variants(), args.scenarios)
    if args.list:
        for v in variants:
            sub = v.subclass or "-"
            print(f"{v.name:44s} {v.scenario:26s} {v.label:5s} {sub}")
        return 0
    import torch
    failures = 0
    for v in variants:
        if v.needs_cuda and not torch.cuda.is_available():
            print(f"SKIP {v.name}: needs CUDA, torch.cuda.is_available() is False; "
                  "no log written", flush=True)
            continue
        t0 = time.monotonic()
        try:
            stems = generate(v, args.out, torch.__version__)
        except (TimeoutError, ValueError, OSError) as exc:
            failures += 1
            print(f"FAIL {v.name}: {exc}", flush=True)
            continue
        print(f"ok   {v.name} ({time.monotonic() - t0:.1f}s) -> {', '.join(stems)}", flush=True)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
