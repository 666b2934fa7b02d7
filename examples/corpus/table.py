"""The corpus table: per program, the truth against the doctor's top finding, and what the
doctor cost.

    python3 examples/corpus/table.py OUTDIR [OUTDIR...] [--replay BUILD_DIR [--replayed DIR]]
                                     [--out DIR] [--check]

Reads each OUTDIR/NAME/{row.json, truth.json, doctor.json, plain.log, doctor.txt} (run.py's
folders) and writes DIR/corpus.md (Markdown, with a summary) and DIR/corpus.csv (DIR: --out,
else the one OUTDIR), and prints the Markdown. Several OUTDIRs are rounds of the corpus, in
order: a program's row is its latest round that ran it (ok), else its latest round; the
`round` column says which (its number: N of a folder named roundN, else its place among the
OUTDIRs; and the commit run.py recorded). --replay BUILD_DIR:
the doctor's columns come from its analysis of each row's recorded traces replayed now
(`BUILD_DIR/tools/underfed doctor --from NAME/doctor`, its JSON and text kept in
DIR/replay/), the live round's top finding beside them; without it, from the live run's JSON.
--replayed DIR (with --replay): a row whose traces were not kept takes DIR/NAME.json, a replay
written earlier (a committed table's replay/), its note naming the file; without it such a
row fails ("no recorded traces to replay").

The judged truth is the program as it runs without any instrument: on its plain step (the
step plain.log timed). torch.profiler lengthens the host's side of a step by its own cost in
every op (the Lightning rows: 7.74 and 7.42 ms profiled against 5.67 and 4.63 plain), not the
kernels, so a profiler truth is taken onto the plain step (truth_on_plain_step: its kernel
causes keep their time a step, its idle shrinks to the plain run's in its own proportions);
a timing truth is made of plain steps already and is taken as it is. A row agrees when the
doctor's top finding names that truth's cause at moderate or high; for a program whose truth
is healthy, when no finding is high. The host-wait split (device idle by the state of the
host thread that submitted the next work, % of the step) is compared bucket by bucket: L =
inside a launch or other CUDA call, S = inside a call that waits for the device, H = inside
no CUDA call (the framework's dispatch, Python, data loading), with each instrument's split
rescaled to the plain run's step (on_plain_step: each instrument slows the host by its own
cost, not the kernels): within 10 points when no bucket differs by more. Only profiler truths
have a split ("n/a (timing truth)"). --check: exit 1 unless every row ran and agrees and
every split compared is within 10 points (skipped rows do not count against it); else exit 0.
Beside them, reported and not judged ("on the profiled step"): the truth as the profiler
recorded it on its own, longer step (a timing truth: the same as judged), the agreement with
it, the two splits as each run recorded them and their gap, and that gap as shares of each
run's own host-wait idle ("truth busy %" is as the truth's instrument read it). Exit 2 when
no OUTDIR holds a row, or a replay cannot start."""
import argparse
import csv
import io
import json
import os
import re
import subprocess
import sys

from truth_analysis import busy_on_plain_step, causes_on_step, top_cause

TIMING_RE = re.compile(r"^steps (\d+) step_ms ([0-9.]+) wall_s ([0-9.]+)\s*$", re.M)
SPLIT_TOLERANCE_PTS = 10.0
RANK = {"none": 0, "moderate": 1, "high": 2}

# ---- the doctor's JSON: the one place that knows its schema -----------------------------------
# common/doctor/doctor_report.c's uf_doctor_json writes {"processes": [one object per process]},
# each with "findings" (sorted, the top finding first: rule, verdict, share_pct, evidence) and the
# step's figures. The split of the device's idle by the host thread's state is being added
# (issue #31); the names below are tried in order, and the first one present is used. doc4's
# analysis (f16dee3) writes the raw host state of the host-wait idle as
# host_wait_in_cuda_call_pct, host_wait_in_sync_call_pct and host_wait_outside_cuda_pct; at
# e3c2f88 only the cause-based gaps exist (launch_gap_pct: idle between launches,
# input_gap_pct: before a step's first work, sync_gap_pct: after a drain), which is what the
# last candidate of each bucket reads; the table's CSV says which names it used.
SPLIT_NAMES = {
    "launch": ["host_wait_in_cuda_call_pct", "launch_gap_pct"],
    "sync": ["host_wait_in_sync_call_pct", "sync_gap_pct"],
    "host": ["host_wait_outside_cuda_pct", "input_gap_pct"],
}
SPLIT_OBJECTS = ["idle_split", "host_state_pct", "idle_by_host_pct"]   # {"launch": .., ...}


def doctor_view(doc):
    """What the table needs from the doctor's JSON, or None when it has no process."""
    procs = [p for p in doc.get("processes", []) if isinstance(p, dict)]
    if not procs:
        return None
    # the process that ran the steps: the longest steady window (a loader worker or a
    # compile helper that touched CUDA has little or none)
    main = max(procs, key=lambda p: (p.get("window_ms") or 0.0))
    findings = main.get("findings") or []
    named = [f for f in findings if f.get("rule") == main.get("top_finding")]
    top = (named or findings or [{"rule": "?", "verdict": "none", "share_pct": None}])[0]
    split, source = {}, []
    for name in SPLIT_OBJECTS:
        obj = main.get(name)
        if isinstance(obj, dict):
            for k in SPLIT_NAMES:
                v = obj.get(k, obj.get(f"{k}_pct"))
                if isinstance(v, (int, float)):
                    split[k] = float(v)
            source.append(name)
            break
    for k, names in SPLIT_NAMES.items():
        if k in split:
            continue
        for n in names:
            if isinstance(main.get(n), (int, float)):
                split[k] = float(main[n])
                source.append(n)
                break
    return {
        "pid": main.get("pid"), "processes": len(procs),
        "top_rule": top.get("rule", "?"), "top_verdict": top.get("verdict", "none"),
        "top_share": top.get("share_pct"),
        "high": [f["rule"] for f in findings if f.get("verdict") == "high"],
        "by_rule": {f.get("rule"): (f.get("verdict"), f.get("share_pct")) for f in findings},
        "busy_pct": main.get("busy_pct"), "step_ms": main.get("step_ms"),
        "steps": main.get("steps"), "step_source": main.get("step_source", ""),
        "split": split, "split_source": source,
    }


# ---- the truth ---------------------------------------------------------------------------------

def truth_split(truth):
    """The profiler truth's host-state split in the doctor's three buckets: L = inside a launch,
    an allocation or other CUDA call, S = inside a call that waits (frees too), H = inside no CUDA call (the framework's
    dispatch and everything else); {} for a truth without one (timing)."""
    s = truth.get("split_pct")
    if not isinstance(s, dict):
        return {}
    return {"launch": s.get("launch_call", 0.0) + s.get("other_cuda", 0.0) +
            s.get("alloc_call", 0.0),
            "sync": s.get("sync_call", 0.0) + s.get("free_call", 0.0),
            "host": s.get("dispatch", 0.0) + s.get("host", 0.0) + s.get("input", 0.0)}


def truth_on_plain_step(truth, plain_ms):
    """The truth's cause and share on the plain run's step: a profiler truth's causes with the
    profiler's own host cost taken out (causes_on_step: its kernels keep their time a step,
    its idle shrinks to the plain run's); a timing truth, made of plain step times, as it is.
    (None, None) where a figure is missing."""
    causes = truth.get("cause_pct")
    if "error" in truth or not isinstance(causes, dict) or not causes:
        return None, None
    if truth.get("instrument") != "torch.profiler":
        return truth.get("cause"), truth.get("share_pct")
    figs = [truth.get(k) for k in ("busy_pct", "idle_pct", "step_ms")] + [plain_ms]
    if not all(isinstance(x, (int, float)) for x in figs) or plain_ms <= 0:
        return None, None
    _, on_plain = causes_on_step(causes, truth["busy_pct"], truth["idle_pct"],
                                 truth["step_ms"], plain_ms)
    return top_cause(on_plain)


def agrees(truth_cause, view):
    if truth_cause == "healthy":
        return not view["high"]
    return view["top_rule"] == truth_cause and RANK.get(view["top_verdict"], 0) >= 1


def split_gap(ts, ds, of_idle=False):
    """The largest difference in points over the three buckets, or None; of_idle: each
    bucket as a share of its own host-wait idle (how the idle splits, whatever its amount:
    the two instruments slow the host differently, so the amount differs between runs)."""
    keys = ("launch", "sync", "host")
    if not all(k in ts and k in ds for k in keys):
        return None
    if of_idle:
        tt, dt = sum(ts[k] for k in keys), sum(ds[k] for k in keys)
        if tt < 1.0 or dt < 1.0:        # (almost) no host wait in one of them: no split
            return None
        return max(abs(100.0 * ts[k] / tt - 100.0 * ds[k] / dt) for k in keys)
    return max(abs(ts[k] - ds[k]) for k in keys)


def on_plain_step(split, busy_pct, step_ms, plain_ms):
    """An instrument's split rescaled to the plain run's step. Each instrument slows the host
    by its own cost (the profiler in every op, the recorder in every call), so its run idles
    more than the plain one; the kernels are not slowed, so its busy time a step is the plain
    run's too, and the plain run's idle is 100 - busy ms / plain step ms. The buckets keep
    their shares of the instrument's idle, scaled to that idle. step_ms is the program's own
    step under the instrument (its timing line), like plain_ms: the ratio is between like
    steps, never a detected step that spans several of the program's. None where a figure is
    missing or the instrument's run has no idle."""
    figs = (busy_pct, step_ms, plain_ms)
    if not split or not all(isinstance(x, (int, float)) for x in figs) or plain_ms <= 0 or \
            busy_pct >= 100.0:
        return None
    f = (100.0 - busy_on_plain_step(busy_pct, step_ms, plain_ms)) / (100.0 - busy_pct)
    return {k: v * f for k, v in split.items()}


# ---- reading a folder --------------------------------------------------------------------------

def load_json(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def step_ms_in(path):
    try:
        with open(path, errors="replace") as f:
            found = TIMING_RE.findall(f.read().replace("\r", "\n"))   # progress bars: \r
    except OSError:
        return None
    return float(found[-1][1]) if found else None


def fmt(x, nd=1):
    return "" if x is None else f"{x:.{nd}f}"


def fmt_split(s):
    return "/".join(fmt(s.get(k), 0) for k in ("launch", "sync", "host")) if s else ""


def read_rows(outdir, round_no):
    """The rows of one round's OUTDIR, truth and plain figures read; the doctor not yet."""
    run = load_json(os.path.join(outdir, "corpus_run.json")) or {}
    label = f"{round_no}" + (f" ({run['commit'][:7]})" if run.get("commit") else "")
    rows = []
    for name in sorted(os.listdir(outdir)):
        d = os.path.join(outdir, name)
        row = load_json(os.path.join(d, "row.json"))
        if not isinstance(row, dict):
            continue
        prog = row.get("program", {})
        truth = load_json(os.path.join(d, "truth.json")) or {}
        r = {"program": name, "dir": d, "round": label, "library": prog.get("library", ""),
             "design": prog.get("cause", ""), "instrument": prog.get("truth", ""),
             "args": " ".join(prog.get("args", [])),
             "status": row.get("status", "?"), "reason": row.get("reason", ""),
             "truth_cause": truth.get("cause") if "error" not in truth else None,
             "truth_share": truth.get("share_pct"), "truth_busy": truth.get("busy_pct"),
             "truth_step_ms": truth.get("step_ms"),
             "truth_split": truth_split(truth) if prog.get("truth") == "profiler" else None,
             "plain_ms": step_ms_in(os.path.join(d, "plain.log")),
             "doctor_ms": step_ms_in(os.path.join(d, "doctor.txt"))}
        r["cost_x"] = r["doctor_ms"] / r["plain_ms"] if r["plain_ms"] and r["doctor_ms"] else None
        r["plain_cause"], r["plain_share"] = truth_on_plain_step(truth, r["plain_ms"])
        r["plain_truth"] = None if r["plain_cause"] is None else \
            f'{r["plain_cause"]} {fmt(r["plain_share"])}'.strip()
        r["live"] = load_json(os.path.join(d, "doctor.json"))
        rows.append(r)
    return rows, run


def merge_rounds(rounds):
    """One row per program: its latest ok row, else its latest row."""
    merged = {}
    for rows in rounds:
        for r in rows:
            old = merged.get(r["program"])
            if old is None or r["status"] == "ok" or old["status"] != "ok":
                merged[r["program"]] = r
    return list(merged.values())


NO_TRACES = "no recorded traces to replay"


def replay(r, build, out):
    """The doctor's analysis now of a row's recorded traces; (JSON, None) or (None, why)."""
    traces = os.path.join(r["dir"], "doctor")
    if not os.path.isdir(traces) or not any(f.startswith("underfed-trace.")
                                            for f in os.listdir(traces)):
        return None, NO_TRACES
    os.makedirs(os.path.join(out, "replay"), exist_ok=True)
    json_path = os.path.join(out, "replay", r["program"] + ".json")
    with open(os.path.join(out, "replay", r["program"] + ".txt"), "w") as f:
        rc = subprocess.call([os.path.join(build, "tools", "underfed"), "doctor", "--from",
                              traces, "--json", json_path], stdout=f, stderr=subprocess.STDOUT)
    doc = load_json(json_path)
    if not isinstance(doc, dict) or not doc.get("processes"):
        return None, f"replay exited with status {rc}, no diagnosis"
    if rc != 0:       # e.g. a helper process with no device work is not diagnosed: said
        r["note"] = f"replay exit {rc}: " + "; ".join(
            line.strip() for line in open(os.path.join(out, "replay", r["program"] + ".txt"),
                                          errors="replace")
            if line.startswith("underfed doctor:") and "counters:" not in line)[:300]
    return doc, None


def apply_doctor(r, doc):
    """The doctor's columns of row r from one diagnosis JSON."""
    view = doctor_view(doc) if isinstance(doc, dict) else None
    if not view:
        return
    r.update({"top": f'{view["top_rule"]} {view["top_verdict"]}',
              "top_share": view["top_share"], "doctor_split": view["split"],
              "split_source": ",".join(view["split_source"]),
              "doctor_high": ",".join(view["high"]), "processes": view["processes"]})
    # judged: the truth on the plain step; beside it, not judged, the truth as profiled
    if r.get("plain_cause"):
        r["agree"] = agrees(r["plain_cause"], view)
        verdict, share = view["by_rule"].get(r["plain_cause"], (None, None))
        if verdict is not None:
            r["on_cause"] = f"{verdict} {fmt(share)}".strip()
        elif r["plain_cause"] != "healthy":
            r["on_cause"] = "no such rule"
    if r["truth_cause"]:
        r["agree_profiled"] = agrees(r["truth_cause"], view)
    if r["truth_split"] is not None:
        r["split_gap_profiled"] = split_gap(r["truth_split"], view["split"])
        r["split_gap_idle"] = split_gap(r["truth_split"], view["split"], of_idle=True)
        # like for like: each instrument's busy share over the program's own step under that
        # instrument (its timing line), against the program's own plain step. The truth's
        # step_ms is its timing line under the profiler; the doctor's JSON step_ms is the step
        # it detected, which can span several of the program's steps (gpt2_generate_b1: 36.8
        # ms, about 4 of its 9.5 ms steps), so the doctor's side takes doctor_ms, the
        # program's own step under the doctor (doctor.txt's timing line).
        tp = on_plain_step(r["truth_split"], r["truth_busy"], r.get("truth_step_ms"),
                           r["plain_ms"])
        dp = on_plain_step(view["split"], view["busy_pct"], r["doctor_ms"], r["plain_ms"])
        r["truth_split_plain"], r["doctor_split_plain"] = tp, dp
        r["split_gap"] = split_gap(tp, dp) if tp and dp else None


def judge(rows, build=None, out=None, replayed=None):
    """Fill the doctor's columns: from a replay of the traces (build given), else live. A row
    whose traces are no longer kept takes the replay written earlier into replayed/NAME.json,
    if there is one (its note says so)."""
    for r in rows:
        if r["status"] != "ok":
            continue
        if build is None:
            apply_doctor(r, r["live"])
            continue
        live = doctor_view(r["live"]) if isinstance(r["live"], dict) else None
        r["live_top"] = f'{live["top_rule"]} {live["top_verdict"]}' if live else ""
        doc, why = replay(r, build, out)
        earlier = os.path.join(replayed, r["program"] + ".json") if replayed else None
        if doc is None and why == NO_TRACES and earlier and os.path.isfile(earlier):
            doc, why = load_json(earlier), None
            r["note"] = f"no traces kept: the replay in {earlier}"
        if doc is None:
            r["status"], r["reason"] = "failed", f"doctor --from: {why}"
            continue
        apply_doctor(r, doc)


COLUMNS = [
    ("program", "program"), ("round", "round"), ("library", "library"),
    ("design", "written to show"),
    ("instrument", "truth by"), ("truth_busy", "truth busy %"),
    ("plain_truth", "truth on the plain step %"), ("top", "doctor top finding"),
    ("top_share", "doctor share %"), ("live_top", "live run's top finding"),
    ("on_cause", "doctor on the truth's cause %"),
    ("agree", "agree"),
    ("truth_split_plain", "idle split truth L/S/H % on the plain step"),
    ("doctor_split_plain", "doctor L/S/H % on the plain step"), ("split_gap", "split gap pts"),
    ("truth_cause", "truth cause on the profiled step (not judged)"),
    ("truth_share", "truth share % on the profiled step (not judged)"),
    ("agree_profiled", "agree on the profiled step (not judged)"),
    ("truth_split", "idle split truth L/S/H % on the profiled step (not judged)"),
    ("doctor_split", "doctor L/S/H % on its own run's step (not judged)"),
    ("split_gap_profiled", "split gap on the profiled step pts (not judged)"),
    ("split_gap_idle", "gap, as shares of the idle pts (not judged)"),
    ("plain_ms", "step ms plain"),
    ("doctor_ms", "step ms doctor"), ("cost_x", "doctor cost x"), ("status", "status"),
]


def cell(r, key):
    v = r.get(key)
    if key in ("truth_split", "truth_split_plain") and v is None and r["status"] == "ok" and \
            r["truth_split"] is None:
        return "n/a (timing truth)"
    if key in ("truth_split", "doctor_split", "truth_split_plain", "doctor_split_plain"):
        return fmt_split(v or {})
    if key in ("agree", "agree_profiled"):
        return "" if v is None else ("yes" if v else "**no**")
    if key == "cost_x":
        return fmt(v, 2)
    if key in ("plain_ms", "doctor_ms"):
        return fmt(v, 3)
    if key in ("split_gap", "split_gap_idle", "split_gap_profiled"):
        return "" if v is None else (fmt(v, 1) + ("" if v <= SPLIT_TOLERANCE_PTS else " **>10**"))
    if key == "status":
        text = v if v == "ok" else f'{v}: {r.get("reason", "")}'
        if r.get("note"):
            text += f' ({r["note"]})'
        return text.replace("|", "/")
    if isinstance(v, float):
        return fmt(v)
    return "" if v is None else str(v)


def summary(rows):
    ran = [r for r in rows if r["status"] == "ok"]
    judged = [r for r in ran if r.get("agree") is not None]
    agreed = [r for r in judged if r["agree"]]
    healthy_high = [r["program"] for r in judged
                    if r["plain_cause"] == "healthy" and r.get("doctor_high")]
    gaps = [r for r in ran if r.get("split_gap") is not None]
    within = [r for r in gaps if r["split_gap"] <= SPLIT_TOLERANCE_PTS]
    judged_prof = [r for r in ran if r.get("agree_profiled") is not None]
    agreed_prof = [r for r in judged_prof if r["agree_profiled"]]
    gaps_prof = [r for r in ran if r.get("split_gap_profiled") is not None]
    within_prof = [r for r in gaps_prof if r["split_gap_profiled"] <= SPLIT_TOLERANCE_PTS]

    def but(label, these, ok):      # " (disagree: a, b)" naming the rows that miss, or ""
        bad = [r["program"] for r in these if not ok(r)]
        return f" ({label}: {', '.join(bad)})" if bad else ""
    agree = lambda key: lambda r: r[key]
    near = lambda key: lambda r: r[key] <= SPLIT_TOLERANCE_PTS
    lines = [f"- agree with the truth on the program's plain step (a profiler truth with the "
             f"profiler's host cost taken out): {len(agreed)} of {len(judged)} programs judged"
             + but("disagree", judged, agree("agree")),
             f"- healthy programs with a high finding: {', '.join(healthy_high) or 'none'}",
             f"- host-wait split within {SPLIT_TOLERANCE_PTS:.0f} points on the plain step (each "
             f"instrument's split rescaled to it), profiler truths: {len(within)} of "
             f"{len(gaps)} compared" + but("not", gaps, near("split_gap")),
             f"- on the profiled step (not judged): agree {len(agreed_prof)} of "
             f"{len(judged_prof)}" + but("disagree", judged_prof, agree("agree_profiled"))
             + f"; host-wait split within {SPLIT_TOLERANCE_PTS:.0f} points {len(within_prof)} of "
             f"{len(gaps_prof)} compared" + but("not", gaps_prof, near("split_gap_profiled"))]
    for status in ("failed", "not run", "skipped"):
        these = [r for r in rows if r["status"] == status]
        if these:
            lines.append(f"- {status}: " + "; ".join(f"{r['program']} ({r['reason']})"
                                                   for r in these))
    return lines, (len(agreed) == len(judged) == len(ran) and len(within) == len(gaps) and
                   not any(r["status"] in ("failed", "not run") for r in rows))


def markdown(rows, columns):
    out = io.StringIO()
    out.write("| " + " | ".join(h for _, h in columns) + " |\n")
    out.write("|" + "---|" * len(columns) + "\n")
    for r in rows:
        out.write("| " + " | ".join(cell(r, k) for k, _ in columns) + " |\n")
    lines, _ = summary(rows)
    out.write("\n" + "\n".join(lines) + "\n")
    return out.getvalue()


def write_csv(path, rows, columns):
    keys = [k for k, _ in columns] + ["args", "reason", "note", "split_source",
                                      "doctor_high", "processes"]
    tmp = f"{path}.tmp.{os.getpid()}"
    with open(tmp, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(keys)
        for r in rows:
            vals = []
            for k in keys:
                v = r.get(k)
                if k in ("truth_split", "truth_split_plain") and v is None and \
                        r["status"] == "ok" and r["truth_split"] is None:
                    v = "n/a (timing truth)"
                if isinstance(v, dict):
                    v = fmt_split(v)
                elif isinstance(v, bool):
                    v = "yes" if v else "no"
                elif isinstance(v, float):
                    v = f"{v:.3f}"
                vals.append("" if v is None else v)
            w.writerow(vals)
    os.replace(tmp, path)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("outdirs", nargs="+", metavar="OUTDIR", help="rounds, oldest first")
    p.add_argument("--replay", metavar="BUILD_DIR",
                   help="judge the doctor's analysis of the recorded traces, replayed now")
    p.add_argument("--replayed", metavar="DIR",
                   help="with --replay: where a row has no traces, take DIR/NAME.json, a replay "
                        "written earlier (the committed replay/ of a table)")
    p.add_argument("--out", help="where corpus.md and corpus.csv go (default: the one OUTDIR)")
    p.add_argument("--check", action="store_true")
    a = p.parse_args()
    for d in a.outdirs:
        if not os.path.isdir(d):
            print(f"table.py: {d}: not a folder", file=sys.stderr)
            return 2
    if a.out is None and len(a.outdirs) > 1:
        p.error("several OUTDIRs: say where the table goes (--out DIR)")
    out = a.out or a.outdirs[0]
    if a.replay and not os.access(os.path.join(a.replay, "tools", "underfed"), os.X_OK):
        print(f"table.py: --replay: {a.replay}/tools/underfed is missing", file=sys.stderr)
        return 2
    # corpus.json's order (its priority), then what the runs recorded, then by name
    manifest = load_json(os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                      "corpus.json")) or {}
    order = {q["name"]: i for i, q in enumerate(manifest.get("programs", []))}
    rounds = []
    for i, d in enumerate(a.outdirs, 1):
        named = re.fullmatch(r"round(\d+)", os.path.basename(os.path.normpath(d)))
        rows, run = read_rows(d, int(named.group(1)) if named else i)
        rounds.append(rows)
        for n in run.get("names", []):
            order.setdefault(n, len(order))
    rows = merge_rounds(rounds)
    if not rows:
        print(f"table.py: {' '.join(a.outdirs)} hold no corpus rows (NAME/row.json)",
              file=sys.stderr)
        return 2
    os.makedirs(out, exist_ok=True)
    if a.replayed and not (a.replay and os.path.isdir(a.replayed)):
        p.error("--replayed needs --replay and a folder")
    judge(rows, a.replay, out, a.replayed)
    rows.sort(key=lambda r: (order.get(r["program"], len(order)), r["program"]))
    columns = [c for c in COLUMNS if c[0] != "live_top" or a.replay]
    md = markdown(rows, columns)
    tmp = os.path.join(out, f"corpus.md.tmp.{os.getpid()}")
    with open(tmp, "w") as f:
        f.write(md)
    os.replace(tmp, os.path.join(out, "corpus.md"))
    write_csv(os.path.join(out, "corpus.csv"), rows, columns)
    sys.stdout.write(md)
    _, held = summary(rows)
    return 1 if a.check and not held else 0


if __name__ == "__main__":
    sys.exit(main())
