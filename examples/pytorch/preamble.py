"""What the examples of this folder start with: their command line and the GPU check.

Every example takes --variant (its broken and fixed twins) and --steps, and exits 77 where it
cannot run (no CUDA GPU), the code ctest reads as Skipped. Run as `python3 examples/pytorch/X.py`,
an example finds this module beside it (Python puts the script's folder first on sys.path)."""
import argparse
import sys

import torch


def parse_args(doc, variants, steps):
    """The example's arguments: --variant (one of variants, required) and --steps (default
    steps, at least 1: less exits 2 with argparse's usage message). doc: the example's
    docstring, whose first line is the description of --help."""
    p = argparse.ArgumentParser(description=doc.split("\n")[0])
    p.add_argument("--variant", choices=list(variants), required=True)
    p.add_argument("--steps", type=int, default=steps)
    args = p.parse_args()
    if args.steps < 1:
        p.error("--steps must be at least 1")          # exit 2
    return args


def no_cuda_gpu():
    """True, having said so on stderr, where torch sees no CUDA GPU: the caller returns 77."""
    if torch.cuda.is_available():
        return False
    print("skipped: no CUDA GPU", file=sys.stderr)
    return True
