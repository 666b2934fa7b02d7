"""Run the doctor's corpus: each program plainly, under its truth instrument, and under the doctor.

    python3 examples/corpus/run.py BUILD_DIR OUTDIR [NAMES...] [--budget-s S] [--python PY]
                                   [--manifest FILE]

For each program of corpus.json, or of --manifest FILE (examples/heldout/heldout.json: its
programs' files are relative to its folder), all or NAMES, three processes (four with a
profiled reference), one after another, each
under its own timeout, into OUTDIR/NAME/:
  plain.log    `PY PROG ARGS`: the program's own timing line (`steps N step_ms X wall_s Y`);
  truth.log    truth `profiler`: `PY truth_torch.py --out truth.json -- PROG ARGS`;
               truth `timing`: `PY PROG ARGS REF_ARGS`, the reference run; truth.json is then
               written here from the two step times (share = 1 - ref_scale * ref / step);
  ref_truth.log  with "ref_truth": "profiler" (a timing truth whose reference is profiled too):
               `PY truth_torch.py --out ref_truth.json -- PROG ARGS REF_ARGS`; truth.json then
               adds the reference's own causes (truth_analysis.with_profiled_reference);
  doctor.txt   `BUILD_DIR/tools/underfed doctor --out doctor --json doctor.json --
               timeout T PY PROG ARGS` (its report, and the program's own output);
  doctor/      the recorder's trace folder (underfed-trace.PID.txt), kept;
  row.json     what ran: the commands, exit statuses, wall times, and the row's status:
               ok, failed (with the reason: which process, exit status, timeout, no timing
               line), skipped (with the reason: a library python3 cannot import, too few GPUs,
               the program's own exit 77) or not run (the corpus's time budget was spent).
Progress goes to stderr. Then `table.py OUTDIR` makes the table. Exit 0 when every row ran (ok
or skipped for a reason of its own), 1 when a row failed or was not run, 2 on bad usage or a
missing build, 77 when there is no GPU at all (no row can run)."""
import argparse
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time

import truth_analysis

HERE = os.path.dirname(os.path.abspath(__file__))
TIMING_RE = re.compile(r"^steps (\d+) step_ms ([0-9.]+) wall_s ([0-9.]+)\s*$", re.M)
ENV = {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1",
       "PYTHONUNBUFFERED": "1", "TOKENIZERS_PARALLELISM": "false",
       "NCCL_NVLS_ENABLE": "0"}
CAUSE_MIN_PCT = 15.0        # as truth_analysis.CAUSE_MIN_PCT: below it a program is healthy
DEFAULT_TIMEOUT_S = 120


class Stopped(Exception):
    """SIGTERM or SIGINT reached the runner (an outer timeout): the process in flight is
    killed with its process group, and no row is left unrecorded."""


RUNNING = []        # the Popen in flight, for the signal handler


def stop(signum, frame):
    for p in RUNNING:
        try:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait(timeout=10)
        except (OSError, subprocess.TimeoutExpired):
            pass
    raise Stopped(signal.Signals(signum).name)


LOG_FILES = []      # --log: progress lines go there too


def log(t0, msg):
    line = f"[corpus {time.time() - t0:6.1f} s] {msg}\n"
    for f in [sys.stderr] + LOG_FILES:
        try:
            f.write(line)
            f.flush()
        except (OSError, ValueError):       # a reader of stderr that went away
            pass


def write_json(path, obj):
    tmp = f"{path}.tmp.{os.getpid()}"
    with open(tmp, "w") as f:
        json.dump(obj, f, indent=1, sort_keys=True)
        f.write("\n")
    os.replace(tmp, path)


def timing_of(text):
    """(steps, step_ms, wall_s) of the last timing line in a program's output, or None."""
    found = TIMING_RE.findall((text or "").replace("\r", "\n"))   # progress bars redraw with \r
    if not found:
        return None
    s, ms, w = found[-1]
    return int(s), float(ms), float(w)


def run_process(cmd, log_path, timeout_s, env):
    """Run cmd with stdout+stderr into log_path; (rc, wall_s, timed_out)."""
    t = time.time()
    with open(log_path, "w") as f:
        f.write("$ " + " ".join(cmd) + "\n")
        f.flush()
        try:
            p = subprocess.Popen(cmd, stdout=f, stderr=subprocess.STDOUT, env=env,
                                 start_new_session=True)
        except OSError as e:
            f.write(f"cannot start: {e}\n")
            return 127, 0.0, False
        RUNNING.append(p)
        try:
            rc = p.wait(timeout=timeout_s)
            return rc, time.time() - t, False
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, 15)            # the process group it leads: its workers too
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, 9)
                p.wait()
            f.write(f"\ncorpus: killed after {timeout_s} s\n")
            return 124, time.time() - t, True
        finally:
            RUNNING.clear()


def load_json(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def read(path):
    try:
        with open(path, errors="replace") as f:
            return f.read()
    except OSError:
        return ""


class Checks:
    """What this machine has: GPUs, and which Python modules python3 can import (cached)."""

    def __init__(self, python, env):
        self.python, self.env, self.mods, self.versions = python, env, {}, {}

    def gpus(self):
        try:
            out = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True,
                                 timeout=30)
            if out.returncode == 0:
                return sum(1 for line in out.stdout.splitlines() if line.startswith("GPU "))
        except (OSError, subprocess.TimeoutExpired):
            pass
        try:
            out = subprocess.run([self.python, "-c", "import torch; print(torch.cuda.device_count())"],
                                 capture_output=True, text=True, timeout=120, env=self.env)
            return int(out.stdout.strip() or 0) if out.returncode == 0 else 0
        except (OSError, subprocess.TimeoutExpired, ValueError):
            return 0

    def prefetch(self, modules):
        """Import-check all modules at once, in parallel (each is a python3 of its own): the
        serial checks would take most of a minute (transformers, lightning, jax)."""
        procs = {}
        for m in sorted(set(modules) - set(self.mods)):
            procs[m] = subprocess.Popen(
                [self.python, "-c", f"import {m}; print(getattr({m}, '__version__', ''))"],
                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=self.env)
        for m, p in procs.items():
            try:
                out, err = p.communicate(timeout=180)
            except subprocess.TimeoutExpired:
                p.kill()
                out, err = p.communicate()
                err = "the import check timed out"
            self.mods[m] = None if p.returncode == 0 else \
                ((err or "").strip().splitlines() or ["?"])[-1]
            if p.returncode == 0:
                self.versions[m] = ((out or "").strip().splitlines() or [""])[-1]

    def missing(self, needs):
        """The first module of needs that python3 cannot import, with why; None when all can."""
        for m in needs:
            if m not in self.mods:
                try:
                    out = subprocess.run([self.python, "-c", f"import {m}; print(getattr({m}, "
                                          f"'__version__', ''))"], capture_output=True,
                                         text=True, timeout=120, env=self.env)
                    err = (out.stderr.strip().splitlines() or ["?"])[-1]
                    self.mods[m] = None if out.returncode == 0 else err
                    if out.returncode == 0:
                        self.versions[m] = (out.stdout.strip().splitlines() or [""])[-1]
                except (OSError, subprocess.TimeoutExpired) as e:
                    self.mods[m] = str(e)
            if self.mods[m] is not None:
                return f"python3 cannot import {m} ({self.mods[m]})"
        return None


def source_commit():
    """The commit the corpus ran from: the source tree's .gitrev (a copied tree says there
    what it was made of), else git's HEAD, else empty."""
    root = os.path.dirname(os.path.dirname(HERE))
    try:
        with open(os.path.join(root, ".gitrev")) as f:
            rev = f.read().strip()
        if rev:
            return rev
    except OSError:
        pass
    try:
        out = subprocess.run(["git", "-C", root, "rev-parse", "HEAD"], capture_output=True,
                             text=True, timeout=10)
        return out.stdout.strip() if out.returncode == 0 else ""
    except (OSError, subprocess.TimeoutExpired):
        return ""


def ref_removes(prog):
    """The cause a timing program's reference run removes: "ref_removes" where the manifest
    names it (a program written to be healthy, whose reference still removes one cost: more
    steps a dispatch, say), else the cause the program was written to show."""
    return prog.get("ref_removes", prog["cause"])


def timing_truth(prog, plain, ref, ref_profile=None):
    """truth.json of a `timing` program from the plain and reference step times; with
    ref_profile (the reference run's own profiler truth: corpus.json's "ref_truth"), the
    reference's own causes too (truth_analysis.with_profiled_reference)."""
    scale = float(prog.get("ref_scale", 1.0))
    share = 100.0 * (1.0 - scale * ref[1] / plain[1])
    removed = ref_removes(prog)
    truth = {"instrument": "timing", "ref_args": prog["ref_args"], "ref_scale": scale,
             "step_ms": plain[1], "ref_step_ms": ref[1], "steps": plain[0],
             "share_pct": share, "cause_pct": {removed: share}}
    truth["cause"] = removed if share >= CAUSE_MIN_PCT and removed != "healthy" else "healthy"
    if prog.get("busy_from_ref"):
        truth["busy_pct"] = min(100.0, 100.0 * scale * ref[1] / plain[1])
    if ref_profile is not None:
        truth["instrument"] = "timing + the reference profiled"
        truth["removed_share_pct"] = share
        truth.update(truth_analysis.with_profiled_reference(removed, plain[1],
                                                            scale * ref[1], ref_profile))
    return truth


def run_program(prog, a, checks, env, n_gpus, t0, deadline):
    out = os.path.join(a.outdir, prog["name"])
    if os.path.isdir(out):
        shutil.rmtree(out)
    os.makedirs(out)
    path = os.path.join(a.manifest_dir, prog["file"])
    cmd = [a.python, path] + prog.get("args", [])
    row = {"name": prog["name"], "program": prog, "status": "ok", "reason": "", "runs": {}}
    timeout = int(prog.get("timeout_s", a.timeout_s))

    def finish(status, reason):
        row["status"], row["reason"] = status, reason
        write_json(os.path.join(out, "row.json"), row)
        log(t0, f"{prog['name']}: {status}{': ' + reason if reason else ''}")
        return status

    why = checks.missing(prog.get("needs", []))
    if why:
        return finish("skipped", why)
    if n_gpus < int(prog.get("gpus", 1)):
        return finish("skipped", f"needs {prog.get('gpus', 1)} GPUs, this machine has {n_gpus}")

    def step(kind, command, log_name, extra_s=0):
        left = int(deadline - time.time())
        if left < 15:
            return None, f"{kind}: the corpus's time budget ({a.budget_s:.0f} s) was spent"
        t = min(timeout + extra_s, left)       # the budget is a hard end: no process outlives it
        log(t0, f"{prog['name']}: {kind} (timeout {t} s)")
        rc, wall, timed_out = run_process(command, os.path.join(out, log_name), t, env)
        row["runs"][kind] = {"cmd": command, "rc": rc, "wall_s": round(wall, 2),
                             "timed_out": timed_out, "log": log_name}
        if timed_out and t == left:
            return None, f"{kind}: killed at the end of the corpus's time budget " \
                         f"({a.budget_s:.0f} s)"
        if timed_out:
            return rc, f"{kind} timed out after {t} s"
        if rc == 77:
            return rc, f"{kind}: the program skipped (exit 77): " + \
                (re.findall(r"skipped.*", read(os.path.join(out, log_name))) or ["no reason"])[-1]
        if rc != 0 and kind == "doctor" and \
                "exited with status 124" in read(os.path.join(out, log_name)):
            return rc, f"doctor: the program timed out under the doctor after {timeout} s"
        if rc != 0:
            return rc, f"{kind} exited with status {rc} (see {log_name})"
        return rc, ""

    rc, why = step("plain", cmd, "plain.log")
    if why:
        return finish({None: "not run", 77: "skipped"}.get(rc, "failed"), why)
    plain = timing_of(read(os.path.join(out, "plain.log")))
    if plain is None:
        return finish("failed", "plain: no timing line ('steps N step_ms X wall_s Y')")

    truth_path = os.path.join(out, "truth.json")
    if prog["truth"] == "profiler":
        tcmd = [a.python, os.path.join(HERE, "truth_torch.py"), "--out", truth_path, "--"] + cmd[1:]
        rc, why = step("truth", tcmd, "truth.log", extra_s=60)
        err = (load_json(truth_path) or {}).get("error") if rc == 1 else None
        if err:
            why = f"truth: {err}"
    else:
        rc, why = step("truth", cmd + prog["ref_args"], "truth.log")
        ref = None if why else timing_of(read(os.path.join(out, "truth.log")))
        if not why and ref is None:
            why = "truth: the reference run printed no timing line"
        profile = None
        if not why and prog.get("ref_truth") == "profiler":
            ppath = os.path.join(out, "ref_truth.json")
            pcmd = [a.python, os.path.join(HERE, "truth_torch.py"), "--out", ppath, "--"] + \
                cmd[1:] + prog["ref_args"]
            rc, why = step("ref_truth", pcmd, "ref_truth.log", extra_s=60)
            profile = load_json(ppath) if not why else None
            if not why and (not isinstance(profile, dict) or profile.get("error")):
                why = "ref_truth: " + str((profile or {}).get("error", "no ref_truth.json"))
        if not why:
            try:
                write_json(truth_path, timing_truth(prog, plain, ref, profile))
            except truth_analysis.TruthError as e:
                why = f"truth: {e}"
    truth_why = why

    dcmd = [a.underfed, "doctor", "--out", os.path.join(out, "doctor"), "--json",
            os.path.join(out, "doctor.json"), "--", "timeout", "-k", "10", str(timeout)] + cmd
    rc, why = step("doctor", dcmd, "doctor.txt", extra_s=120)
    if rc is None and why:
        return finish("not run", "; ".join(w for w in (truth_why, why) if w))
    reasons = [w for w in (truth_why, why) if w]
    if not why and not os.path.exists(os.path.join(out, "doctor.json")):
        reasons.append("doctor: no doctor.json written")
    if not why and timing_of(read(os.path.join(out, "doctor.txt"))) is None:
        reasons.append("doctor: the program printed no timing line under the doctor")
    if reasons:
        return finish("failed", "; ".join(reasons))
    return finish("ok", "")


def read_manifest(path):
    """(programs, "") from a manifest, or ([], why) when it cannot be read or an entry lacks
    a field the runner needs."""
    try:
        with open(path) as f:
            programs = json.load(f)["programs"]
    except (OSError, ValueError) as e:
        return [], f"cannot read it ({e})"
    except (KeyError, TypeError):
        return [], 'no "programs" list'
    if not isinstance(programs, list):
        return [], 'no "programs" list'
    for i, q in enumerate(programs):
        missing = [k for k in ("name", "file", "cause", "truth", "args")
                   if not isinstance(q, dict) or k not in q]
        if missing:
            return [], f"program {i + 1} has no {', '.join(missing)}"
        if q["truth"] == "timing" and not q.get("ref_args"):
            return [], f"{q['name']}: a timing truth needs ref_args"
    return programs, ""


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("build_dir")
    p.add_argument("outdir")
    p.add_argument("names", nargs="*", help="only these programs (corpus.json's names)")
    p.add_argument("--budget-s", type=float, default=470.0,
                   help="stop starting processes after this many seconds (default 470)")
    p.add_argument("--timeout-s", type=int, default=DEFAULT_TIMEOUT_S,
                   help="each process's timeout unless corpus.json sets one")
    p.add_argument("--python", default="python3")
    p.add_argument("--manifest", default=os.path.join(HERE, "corpus.json"),
                   help="the programs to run (default corpus.json; its \"file\" entries are "
                        "relative to the manifest's folder)")
    p.add_argument("--log", help="also append the progress lines to this file")
    a = p.parse_intermixed_args()          # NAMES may come after the options too
    if a.log:
        LOG_FILES.append(open(a.log, "a"))
    t0 = time.time()
    deadline = t0 + a.budget_s
    programs, why = read_manifest(a.manifest)
    if why:
        print(f"run.py: {a.manifest}: {why}", file=sys.stderr)
        return 2
    a.manifest_dir = os.path.dirname(os.path.abspath(a.manifest))   # its programs' folder
    known = {q["name"] for q in programs}
    unknown = [n for n in a.names if n not in known]
    if unknown:
        print(f"run.py: unknown program(s): {' '.join(unknown)} (corpus.json has: "
              f"{' '.join(sorted(known))})", file=sys.stderr)
        return 2
    if a.names:
        programs = [q for q in programs if q["name"] in a.names]
    a.underfed = os.path.join(os.path.abspath(a.build_dir), "tools", "underfed")
    inject = os.path.join(os.path.abspath(a.build_dir), "tools", "libunderfed_inject.so")
    for need in (a.underfed, inject):
        if not os.path.exists(need):
            print(f"run.py: {need} is missing: cmake --build {a.build_dir} --target underfed "
                  f"underfed_inject", file=sys.stderr)
            return 2
    env = dict(os.environ, **ENV)
    checks = Checks(a.python, env)
    n_gpus = checks.gpus()
    if n_gpus == 0:
        print("skipped: no GPU (nvidia-smi -L lists none, torch sees none)", file=sys.stderr)
        return 77
    os.makedirs(a.outdir, exist_ok=True)
    a.outdir = os.path.abspath(a.outdir)
    write_json(os.path.join(a.outdir, "corpus_run.json"),
               {"gpus": n_gpus, "budget_s": a.budget_s, "names": [q["name"] for q in programs],
                "commit": source_commit(),
                "python": a.python, "started_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ",
                                                                 time.gmtime(t0))})
    checks.prefetch([m for q in programs for m in q.get("needs", [])])
    log(t0, f"{len(programs)} programs, {n_gpus} GPU(s), budget {a.budget_s:.0f} s; "
            f"libraries: " + ", ".join(f"{m} {v}" for m, v in sorted(checks.versions.items())))
    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    status = []
    for q in programs:
        try:
            status.append(run_program(q, a, checks, env, n_gpus, t0, deadline))
        except Stopped as e:
            signal.signal(signal.SIGTERM, signal.SIG_IGN)
            for r in programs[len(status):]:
                d = os.path.join(a.outdir, r["name"])
                os.makedirs(d, exist_ok=True)
                write_json(os.path.join(d, "row.json"),
                           {"name": r["name"], "program": r, "status": "not run", "runs": {},
                            "reason": f"the runner was stopped ({e}) "
                                      f"{'during' if r is q else 'before'} this program"})
                status.append("not run")
            log(t0, f"stopped by {e}: {len(programs) - status.count('not run')} rows done")
            break
    run_info = load_json(os.path.join(a.outdir, "corpus_run.json")) or {}
    run_info.update({"versions": checks.versions, "status": dict(zip(
        [q["name"] for q in programs], status)), "run_s": round(time.time() - t0, 1)})
    write_json(os.path.join(a.outdir, "corpus_run.json"), run_info)
    log(t0, f"done: {status.count('ok')} ok, {status.count('failed')} failed, "
            f"{status.count('skipped')} skipped, {status.count('not run')} not run")
    return 1 if "failed" in status or "not run" in status else 0


if __name__ == "__main__":
    sys.exit(main())
