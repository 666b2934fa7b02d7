"""Run an unmodified PyTorch program under torch.profiler and write the truth of its steady loop.

    python3 examples/corpus/truth_torch.py --out truth.json [--trace trace.json] -- PROG [ARGS...]

The program runs in this process through runpy (as `python3 PROG ARGS` would run it), inside one
torch.profiler.profile (CPU and CUDA activities, record_shapes=True). Its standard output is
passed through; when it writes its timing line (`steps N step_ms X wall_s Y`), a
record_function marker goes into the profile at that instant. After the program returns, the
profile is exported as a Chrome trace and analysed by truth_analysis.analyze over the window
[marker - N * X ms, marker]: the program's own timed loop. Exit: the program's exit status (77
and no truth when it skipped), 1 when the trace gives no truth (the reason in the JSON's
`error`), 2 on bad usage.

The profiler adds its own cost per op (a few microseconds on the host), so a launch-bound
program runs slower here than plainly and its host-wait shares read somewhat higher; the corpus
table therefore sets the doctor's cost against the plain run, never against this one."""
import argparse
import json
import os
import runpy
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import truth_analysis  # noqa: E402  (pure Python, no torch)


class MarkingStdout:
    """stdout that drops a profiler marker when the program writes its timing line."""

    def __init__(self, inner, mark):
        self.inner, self.mark, self.partial, self.line = inner, mark, "", None

    def write(self, s):
        # a progress bar redraws its line with carriage returns: each is a line end here
        self.partial += s.replace("\r", "\n")
        while "\n" in self.partial:
            line, self.partial = self.partial.split("\n", 1)
            if truth_analysis.TIMING_RE.match(line.strip()):
                self.mark()
                self.line = line.strip()
        return self.inner.write(s)

    def flush(self):
        self.inner.flush()

    def __getattr__(self, name):
        return getattr(self.inner, name)


def tf32_enabled(torch):
    """Whether fp32 matrix products may use tensor cores (TF32), as the program left it: the
    older switch, the precision setting, or the newer fp32_precision attribute."""
    on = False
    for read in (lambda: bool(torch.backends.cuda.matmul.allow_tf32),
                 lambda: torch.get_float32_matmul_precision() != "highest",
                 lambda: torch.backends.cuda.matmul.fp32_precision == "tf32"):
        try:
            on = on or read()
        except (AttributeError, RuntimeError):
            pass
    return on


def write_json(path, obj):
    tmp = f"{path}.tmp.{os.getpid()}"
    with open(tmp, "w") as f:
        json.dump(obj, f, indent=1, sort_keys=True)
        f.write("\n")
    os.replace(tmp, path)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--out", required=True, help="the truth as JSON")
    p.add_argument("--trace", help="keep the profiler's Chrome trace here")
    p.add_argument("command", nargs=argparse.REMAINDER, help="-- PROG [ARGS...]")
    a = p.parse_args()
    cmd = a.command[1:] if a.command[:1] == ["--"] else a.command
    if not cmd or not cmd[0].endswith(".py"):
        p.error("give the program after --: -- PROG.py [ARGS...]")
    prog = os.path.abspath(cmd[0])

    import torch
    from torch.profiler import ProfilerActivity, profile, record_function

    def mark():
        with record_function(truth_analysis.MARKER):
            pass

    out = MarkingStdout(sys.stdout, mark)
    sys.argv = [prog] + cmd[1:]
    sys.path[0] = os.path.dirname(prog)
    status, t0 = 0, time.perf_counter()
    acts = [ProfilerActivity.CPU, ProfilerActivity.CUDA]
    with profile(activities=acts, record_shapes=True) as prof:
        sys.stdout = out
        try:
            runpy.run_path(prog, run_name="__main__")
        except SystemExit as e:
            status = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
        finally:
            sys.stdout = out.inner
    run_s = time.perf_counter() - t0
    result = {"program": cmd, "exit": status, "run_s": run_s}
    if status != 0:
        result["error"] = f"the program exited with status {status}"
        write_json(a.out, result)
        return status
    trace_path = a.trace or tempfile.mktemp(prefix="corpus-trace.", suffix=".json")
    t1 = time.perf_counter()
    prof.export_chrome_trace(trace_path)
    with open(trace_path) as f:
        trace = json.load(f)
    if not a.trace:
        os.unlink(trace_path)
    result["tf32"] = tf32 = tf32_enabled(torch)
    try:
        result.update(truth_analysis.analyze(trace, out.line, tf32=tf32))
    except truth_analysis.TruthError as e:
        result["error"] = str(e)
        write_json(a.out, result)
        print(f"truth_torch: {e}", file=sys.stderr)
        return 1
    result["analysis_s"] = time.perf_counter() - t1
    write_json(a.out, result)
    print(f"truth_torch: {result['cause']} {result['share_pct']:.1f} % of the window, busy "
          f"{result['busy_pct']:.1f} %, {result['steps']} steps in {result['window_ms']:.1f} ms "
          f"({result['analysis_s']:.1f} s to analyse)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
