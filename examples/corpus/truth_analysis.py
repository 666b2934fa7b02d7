"""The truth of one PyTorch run, from torch.profiler's timeline (the Chrome trace kineto writes).

Pure Python, no torch: truth_torch.py records the trace and calls `analyze`; the unit test
(tests/unit/corpus_truth_test.py) feeds it synthetic events. Written from the profiler's own records
and from what PyTorch says about each op (name, input shapes and dtypes); it shares no code and
no kernel-name table with the doctor (common/doctor/), whose findings it is there to check.

The window: the program's own timed loop. Every corpus program ends its loop with a device
synchronize, reads the clock and prints `steps N step_ms X wall_s Y`; truth_torch.py drops a
profiler marker (MARKER) the moment that line is written, so the window is
[marker - N * X ms, marker]: warm-up, compilation and start-up are left out by the program's own
choice of what to time, not by a guess from the trace.

Over the window (all figures in % of the window, which is N steps):
- busy: the union of kernels, copies and memsets (all streams);
- idle intervals whose next device work was already submitted (its call had returned) when
  the device went idle are the device's own (`device_side_pct`: a replayed graph's nodes, a
  host far ahead), no host wait; every other idle interval is split by what the host thread
  that submitted the next device work was
  doing (its CUDA calls and PyTorch ops on that thread): inside a launch call (cudaLaunchKernel,
  cuLaunchKernel, cudaGraphLaunch, an asynchronous copy or memset that returned before its
  transfer ended) `launch_call`; inside a call that waits for the device (any *Synchronize, a
  blocking copy: a copy call that returned only after its transfer ended) `sync_call`; inside
  a call that gives memory back (cudaFree, which waits for the device, cuMemFree, unmapping,
  unpinning) `free_call`; inside one that asks for memory (cudaMalloc, cudaHostAlloc,
  cuMemCreate, pinning) `alloc_call`; inside another CUDA call `other_cuda`; inside a PyTorch op that submits device
  work but outside its CUDA calls (the framework's dispatch) `dispatch`; inside a DataLoader's
  next() (the profiler's own `enumerate(DataLoader)#...__next__` annotation) `input`; anywhere
  else (Python, CPU-only ops) `host`;
- causes (share of the window at stake):
  host_sync: idle that began while a sync/blocking call was in flight (the device ran out of
    work while the host waited for it), as much of it as the host had waited in that call
    before the device ran dry (the lead the sync threw away), plus sync-call time inside other
    idle; alloc_churn: the same lead where the call that drained the device was a free, plus
    alloc_call and free_call time inside other idle; launch_bound: the rest of the idle where the host was launching or
    dispatching device work (launch_call + dispatch + other_cuda); host_bound: the rest where
    the host was outside any op (host); starved_input: the rest where it waited in a
    DataLoader's next() (input); elementwise_chain: kernels of memory-bound ops in runs of
    >= 3 consecutive such kernels; simt_gemm: GEMM kernels with no tensor-core path (fp32
    without TF32, fp64) or at shapes not 16-byte aligned; decode_gemv: GEMM kernels whose output
    has a side of <= 16 (one or a few tokens); the cause is the largest of these if it reaches
    CAUSE_MIN_PCT of the window, else "healthy".
Kernel classes come from the op that launched each kernel (its shapes and dtypes, as the
profiler recorded them with record_shapes=True); kernels launched outside any op (a replayed
CUDA graph, Triton kernels) take the class that the same kernel name had when an op launched it
earlier in the run (a graph's warm-up steps), and only then a few name patterns (counted apart
in `classified_by_name_us`)."""
import bisect
import math
import re
from collections import defaultdict

MARKER = "corpus.timing_line"
CAUSE_MIN_PCT = 15.0
TIMING_RE = re.compile(r"^steps (\d+) step_ms ([0-9.]+) wall_s ([0-9.]+)\s*$")

# PyTorch ops that are matrix products, by how their operands sit in the op's inputs
# (index of A, index of B); linear and matmul are read apart.
GEMM_OPERANDS = {
    "aten::mm": (0, 1), "aten::bmm": (0, 1), "aten::addmm": (1, 2), "aten::baddbmm": (1, 2),
    "aten::_addmm_activation": (1, 2), "aten::_scaled_mm": (0, 1), "aten::addbmm": (1, 2),
}
GEMV_OPS = {"aten::mv", "aten::addmv", "aten::dot", "aten::vdot"}
CONV_OPS = {"aten::convolution", "aten::_convolution", "aten::cudnn_convolution",
            "aten::conv2d", "aten::conv1d", "aten::conv3d", "aten::convolution_backward",
            "aten::cudnn_convolution_transpose", "aten::conv_transpose2d"}
ATTENTION_OPS = re.compile(r"^aten::_(scaled_dot_product|flash_attention|efficient_attention|"
                           r"cudnn_attention)")
ELEM_BYTES = {"float": 4, "double": 8, "c10::BFloat16": 2, "BFloat16": 2, "c10::Half": 2,
              "Half": 2, "c10::Float8_e4m3fn": 1, "c10::Float8_e5m2": 1, "signed char": 1,
              "int": 4, "long int": 8}
# Name patterns used only for kernels no op launched and no earlier op-launched kernel named.
NAME_FALLBACK = [
    (re.compile(r"gemv", re.I), "gemm_decode"),
    (re.compile(r"triton_(poi|per|red)_", re.I), "memory_bound"),
    (re.compile(r"gemm|nvjet|cutlass|xmma|wgmma|matmul|triton_tem_", re.I), "gemm_tc"),
    (re.compile(r"elementwise|vectorized|unrolled|reduce|dropout|softmax|norm", re.I),
     "memory_bound"),
]
GEMM_CLASSES = ("gemm_tc", "gemm_simt", "gemm_misaligned", "gemm_decode")
KERNEL_CLASSES = GEMM_CLASSES + ("memory_bound", "attention", "other", "memcpy", "memset")
SPLIT_KEYS = ("launch_call", "dispatch", "other_cuda", "sync_call", "host", "alloc_call",
              "free_call", "input")
CAUSES = ("launch_bound", "host_bound", "host_sync", "alloc_churn", "starved_input",
          "elementwise_chain", "simt_gemm", "decode_gemv")
# The profiler's own annotation of a DataLoader handing out a batch (torch.utils.data records
# "enumerate(DataLoader)#<its iterator>.__next__" around each next()): the host's time in it
# is the wait for input (a worker's batch, or the main process's own loading).
LOADER_NEXT_RE = re.compile(r"^enumerate\(DataLoader\)#.*__next__$")


class TruthError(Exception):
    """A trace the truth cannot be taken from (no marker, no device work in the window)."""


# ---- intervals ---------------------------------------------------------------------------------

class Covered:
    """A union of intervals, for 'how much of [a, b] is covered' in O(log n)."""

    def __init__(self, intervals):
        merged = []
        for s, e in sorted(intervals):
            if e <= s:
                continue
            if merged and s <= merged[-1][1]:
                if e > merged[-1][1]:
                    merged[-1][1] = e
            else:
                merged.append([s, e])
        self.starts = [m[0] for m in merged]
        self.ends = [m[1] for m in merged]
        self.prefix = [0.0]
        for s, e in merged:
            self.prefix.append(self.prefix[-1] + e - s)

    def within(self, a, b):
        """Length of the union inside [a, b]."""
        if b <= a or not self.starts:
            return 0.0
        i = bisect.bisect_right(self.ends, a)        # first interval ending after a
        j = bisect.bisect_left(self.starts, b)       # intervals [i, j) start before b
        if i >= j:
            return 0.0
        total = self.prefix[j] - self.prefix[i]
        total -= max(0.0, a - self.starts[i])
        total -= max(0.0, self.ends[j - 1] - b)
        return max(0.0, total)

    def at(self, t, tol=0.0):
        """The merged interval (start, end) that holds t (within tol), or None."""
        i = bisect.bisect_right(self.starts, t + tol) - 1
        if i >= 0 and self.ends[i] >= t - tol:
            return self.starts[i], self.ends[i]
        return None

    def contains(self, t, tol=0.0):
        return self.at(t, tol) is not None

    def gaps(self, a, b):
        """The uncovered sub-intervals of [a, b]."""
        out, cur = [], a
        i = max(0, bisect.bisect_right(self.ends, a))
        while i < len(self.starts) and self.starts[i] < b:
            if self.starts[i] > cur:
                out.append((cur, min(self.starts[i], b)))
            cur = max(cur, self.ends[i])
            i += 1
        if cur < b:
            out.append((cur, b))
        return out

    @property
    def total(self):
        return self.prefix[-1]


# ---- the trace's records -----------------------------------------------------------------------

def _cat(e):
    return str(e.get("cat", "")).lower()


def split_events(trace):
    """The complete events of a Chrome trace, by kind: device work, CUDA calls, ops, markers,
    the DataLoader's batches handed out (LOADER_NEXT_RE)."""
    events = trace["traceEvents"] if isinstance(trace, dict) else trace
    device, calls, ops, markers, loader = [], [], [], [], []
    for e in events:
        if e.get("ph") != "X" or "ts" not in e:
            continue
        cat = _cat(e)
        rec = {"name": str(e.get("name", "")), "ts": float(e["ts"]),
               "dur": float(e.get("dur", 0.0)), "tid": e.get("tid"), "pid": e.get("pid"),
               "args": e.get("args") or {}}
        rec["end"] = rec["ts"] + rec["dur"]
        if cat in ("kernel", "gpu_memcpy", "gpu_memset"):
            rec["kind"] = {"kernel": "kernel", "gpu_memcpy": "memcpy", "gpu_memset": "memset"}[cat]
            device.append(rec)
        elif cat in ("cuda_runtime", "cuda_driver"):
            calls.append(rec)
        elif cat in ("cpu_op", "operator"):
            ops.append(rec)
        elif cat == "user_annotation" and rec["name"] == MARKER:
            markers.append(rec)
        elif cat == "user_annotation" and LOADER_NEXT_RE.match(rec["name"]):
            loader.append(rec)
    return device, calls, ops, markers, loader


def _corr(rec):
    c = rec["args"].get("correlation")
    return None if c is None else int(c)


def classify_call(call, device_by_corr, tol_us=1.0):
    """launch / sync / free / alloc / other for one CUDA runtime or driver call."""
    n = call["name"].lower()
    if "synchronize" in n:
        return "sync"
    if "launchkernel" in n or "graphlaunch" in n or "launchcooperative" in n:
        return "launch"
    if "memcpy" in n or "memset" in n:
        if "async" not in n:
            return "sync"                  # cudaMemcpy, cudaMemset: wait by definition
        work = device_by_corr.get(_corr(call))
        if work is not None and call["end"] >= work["end"] - tol_us:
            return "sync"                  # returned only after its transfer: it blocked
        return "launch"
    if n.startswith(("cudafree", "cumemfree", "cudahostunregister", "cumemhostunregister",
                     "cumemunmap", "cumemrelease", "cumemaddressfree")):
        return "free"                      # gives memory back: cudaFree waits for the device
    if n.startswith(("cudamalloc", "cudahostalloc", "cudahostregister", "cumemalloc",
                     "cumemhostalloc", "cumemhostregister", "cumemcreate", "cumemmap",
                     "cumemsetaccess", "cumemaddressreserve")):
        return "alloc"                     # asks the driver (and the OS) for memory
    return "other"


def align_threads(calls, ops):
    """The op timeline's thread of each call (call["otid"]). Kineto gives a CUDA call and the
    op around it the same system thread id; should a version number them apart, the
    call's "External id" (that of the innermost op it ran in) ties the two numberings."""
    op_tids = {o["tid"] for o in ops}
    by_ext = {}
    for o in ops:
        x = o["args"].get("External id")
        if x is not None:
            by_ext.setdefault(x, o["tid"])
    votes = defaultdict(lambda: defaultdict(int))
    for c in calls:
        x = c["args"].get("External id")
        if c["tid"] not in op_tids and x in by_ext:
            votes[c["tid"]][by_ext[x]] += 1
    remap = {t: max(v, key=v.get) for t, v in votes.items()}
    for c in calls:
        c["otid"] = remap.get(c["tid"], c["tid"])


def op_stacks(calls, ops):
    """For each CUDA call, the ops (outermost first) of its thread that enclose it; and the set
    of top-level ops that enclose at least one CUDA call (ops that submit device work)."""
    by_tid = defaultdict(list)
    for i, o in enumerate(ops):
        by_tid[o["tid"]].append((o["ts"], 0, -o["dur"], i))
    for j, c in enumerate(calls):
        by_tid[c.get("otid", c["tid"])].append((c["ts"], 1, -c["dur"], j))
    stacks = [()] * len(calls)
    gpu_top = set()
    for items in by_tid.values():
        items.sort()
        stack = []
        for ts, kind, _, idx in items:
            while stack and ops[stack[-1]]["end"] <= ts:
                stack.pop()
            if kind == 0:
                stack.append(idx)
            else:
                stacks[idx] = tuple(stack)
                if stack:
                    gpu_top.add(stack[0])
    return stacks, gpu_top


def _dims(op, k):
    d = op["args"].get("Input Dims") or []
    return d[k] if k < len(d) and isinstance(d[k], list) else None


def _dtype(op, k):
    t = op["args"].get("Input type") or []
    return t[k] if k < len(t) else None


def _prod(xs):
    p = 1
    for x in xs:
        p *= int(x)
    return p


def gemm_shape(op):
    """(M, N, K, dtype) of a matrix-product op from its recorded inputs, or None."""
    name = op["name"]
    if name in GEMM_OPERANDS:
        ia, ib = GEMM_OPERANDS[name]
        a, b = _dims(op, ia), _dims(op, ib)
        if not a or not b or len(a) < 2 or len(b) < 2:
            return None
        return int(a[-2]), int(b[-1]), int(a[-1]), _dtype(op, ia)   # bmm: per batch entry
    if name == "aten::linear":
        x, w = _dims(op, 0), _dims(op, 1)
        if not x or not w or len(w) != 2:
            return None
        return _prod(x[:-1]), int(w[0]), int(x[-1]), _dtype(op, 0)
    if name == "aten::matmul":
        a, b = _dims(op, 0), _dims(op, 1)
        if not a or not b:
            return None
        m = 1 if len(a) == 1 else (_prod(a[:-1]) if len(b) <= 2 else int(a[-2]))
        n = 1 if len(b) == 1 else int(b[-1])
        return m, n, int(a[-1]), _dtype(op, 0)
    if name in GEMV_OPS:
        a = _dims(op, 1 if name == "aten::addmv" else 0)
        return (int(a[0]) if a else 0), 1, (int(a[-1]) if a else 0), _dtype(op, 0)
    return None


def gemm_class(shape, tf32):
    """The class of a GEMM kernel from its op's shape and dtype: decode-shaped first (an output
    side of <= 16: one or a few tokens; whatever the units, it streams its weights), then no
    tensor-core path (fp32 without TF32, fp64), then a shape not 16-byte aligned."""
    m, n, k, dtype = shape
    if min(m, n) <= 16:
        return "gemm_decode"
    size = ELEM_BYTES.get(dtype or "", 0)
    if dtype == "double" or (dtype == "float" and not tf32):
        return "gemm_simt"
    if size and any(d * size % 16 for d in (m, n, k)):
        return "gemm_misaligned"
    return "gemm_tc"


def kernel_class_from_stack(stack, ops, tf32):
    """The class of a kernel from the ops that enclose its launch (innermost first), or None
    when no op launched it."""
    if not stack:
        return None
    for idx in reversed(stack):
        op = ops[idx]
        name = op["name"]
        shape = gemm_shape(op) if (name in GEMM_OPERANDS or name in GEMV_OPS or
                                   name in ("aten::linear", "aten::matmul")) else None
        if shape is not None:
            return gemm_class(shape, tf32)
        if name in CONV_OPS:
            dt = _dtype(op, 0)
            return "gemm_simt" if dt == "double" else "gemm_tc"    # cuDNN: TF32 by default
        if ATTENTION_OPS.match(name):
            return "attention"
    return "memory_bound"


def name_fallback(name):
    for pat, cls in NAME_FALLBACK:
        if pat.search(name):
            return cls
    return "other"


# ---- the analysis ------------------------------------------------------------------------------

def window_from(markers, line):
    """[start, end] in trace microseconds from the marker and the program's timing line."""
    m = TIMING_RE.match(line.strip()) if line else None
    if not m:
        raise TruthError(f"no timing line ('steps N step_ms X wall_s Y') from the program: {line!r}")
    if not markers:
        raise TruthError("the trace has no marker of the timing line")
    steps, step_ms = int(m.group(1)), float(m.group(2))
    end = markers[-1]["ts"]
    return end - steps * step_ms * 1e3, end, steps, step_ms


def analyze(trace, timing_line, tf32=False, top_n=12):
    """The truth figures of one run (a dict, see the module's doc)."""
    device, calls, ops, markers, loader = split_events(trace)
    start, end, steps, step_ms = window_from(markers, timing_line)
    win_us = end - start
    if win_us <= 0:
        raise TruthError("empty window")
    device.sort(key=lambda r: r["ts"])
    dev_by_corr = {}
    for d in device:
        c = _corr(d)
        if c is not None and c not in dev_by_corr:
            dev_by_corr[c] = d
    for c in calls:
        c["class"] = classify_call(c, dev_by_corr)
    call_by_corr = {}
    for j, c in enumerate(calls):
        k = _corr(c)
        if k is not None and (k not in call_by_corr or c["class"] == "launch"):
            call_by_corr[k] = j
    align_threads(calls, ops)
    stacks, gpu_top = op_stacks(calls, ops)

    in_win = [d for d in device if d["end"] > start and d["ts"] < end]
    busy = Covered([(max(d["ts"], start), min(d["end"], end)) for d in in_win])
    if busy.total <= 0:
        raise TruthError("no device work in the window")

    # kernel classes: by the launching op; then by name as learned from op-launched kernels
    learned = defaultdict(lambda: defaultdict(float))
    for d in device:
        if d["kind"] != "kernel":
            continue
        j = call_by_corr.get(_corr(d))
        cls = kernel_class_from_stack(stacks[j], ops, tf32) if j is not None else None
        d["class"] = cls
        if cls is not None:
            learned[d["name"]][cls] += d["dur"]
    by_name_us = 0.0
    for d in device:
        if d["kind"] != "kernel":
            d["class"] = d["kind"]
        elif d["class"] is None:
            seen = learned.get(d["name"])
            if seen:
                d["class"] = max(seen.items(), key=lambda kv: kv[1])[0]
            else:
                d["class"] = name_fallback(d["name"])
                if d["end"] > start and d["ts"] < end:
                    by_name_us += min(d["end"], end) - max(d["ts"], start)

    def share(pred):
        cov = Covered([(max(d["ts"], start), min(d["end"], end)) for d in in_win if pred(d)])
        return 100.0 * cov.total / win_us

    classes = {k: share(lambda d, k=k: d["class"] == k) for k in KERNEL_CLASSES}
    # elementwise chains: runs of >= 3 consecutive memory-bound kernels in device order
    chain, run = [], []
    for d in [d for d in device if d["kind"] == "kernel"]:
        if d["class"] == "memory_bound":
            run.append(d)
            continue
        if len(run) >= 3:
            chain.extend(run)
        run = []
    if len(run) >= 3:
        chain.extend(run)
    chain_ids = {id(d) for d in chain}

    # idle split by the submitting thread's state
    per_tid = defaultdict(lambda: defaultdict(list))
    for c in calls:
        per_tid[c["otid"]][c["class"]].append((c["ts"], c["end"]))
        per_tid[c["otid"]]["cuda"].append((c["ts"], c["end"]))
    for i in gpu_top:
        per_tid[ops[i]["tid"]]["gpu_op"].append((ops[i]["ts"], ops[i]["end"]))
    for e in loader:
        per_tid[e["tid"]]["loader"].append((e["ts"], e["end"]))
    cov = {}

    def covered(tid, kind):
        key = (tid, kind)
        if key not in cov:
            if kind == "op_or_cuda":
                cov[key] = Covered(per_tid[tid]["gpu_op"] + per_tid[tid]["cuda"])
            elif kind == "op_cuda_or_loader":
                cov[key] = Covered(per_tid[tid]["gpu_op"] + per_tid[tid]["cuda"] +
                                   per_tid[tid]["loader"])
            else:
                cov[key] = Covered(per_tid[tid][kind])
        return cov[key]

    launches_per_tid = defaultdict(int)
    for c in calls:
        if c["class"] == "launch":
            launches_per_tid[c["otid"]] += 1
    main_tid = max(launches_per_tid, key=launches_per_tid.get) if launches_per_tid else None
    sync_any = Covered([(c["ts"], c["end"]) for c in calls if c["class"] == "sync"])
    free_any = Covered([(c["ts"], c["end"]) for c in calls if c["class"] == "free"])
    starts = [d["ts"] for d in device]
    split = dict.fromkeys(SPLIT_KEYS, 0.0)
    cause_us = dict.fromkeys(CAUSES, 0.0)
    drained_gaps, device_side_us = 0, 0.0
    for a, b in busy.gaps(start, end):
        i = bisect.bisect_left(starts, b - 1e-3)
        nxt = device[i] if i < len(device) else None
        j = call_by_corr.get(_corr(nxt)) if nxt is not None else None
        length = b - a
        if j is not None and calls[j]["end"] <= a:
            # the next work was already submitted when the device went idle (a replayed
            # graph's nodes, a host far ahead): the device waits on itself, not on the host
            device_side_us += length
            continue
        tid = calls[j]["otid"] if j is not None else main_tid
        launch = covered(tid, "launch").within(a, b)
        sync = covered(tid, "sync").within(a, b)
        other = covered(tid, "other").within(a, b)
        alloc = covered(tid, "alloc").within(a, b)
        free = covered(tid, "free").within(a, b)
        cuda = covered(tid, "cuda").within(a, b)
        parts = launch + sync + other + alloc + free
        scale = cuda / parts if parts > cuda > 0 else 1.0
        launch, sync, other = launch * scale, sync * scale, other * scale
        alloc, free = alloc * scale, free * scale
        op_or_cuda = covered(tid, "op_or_cuda").within(a, b)
        dispatch = max(0.0, op_or_cuda - cuda)
        # outside ops and CUDA calls: inside the DataLoader's next() the host waited for input
        inp = max(0.0, covered(tid, "op_cuda_or_loader").within(a, b) - op_or_cuda)
        host = max(0.0, length - op_or_cuda - inp)
        for k, v in zip(SPLIT_KEYS, (launch, dispatch, other, sync, host, alloc, free, inp)):
            split[k] += v
        # A device that ran out of work while the host waited in a sync: the host had been
        # waiting `wait` us while the device still worked, a lead the sync threw away; without
        # the sync the host's next work would have come that much sooner, so up to `wait` of
        # this idle is the sync's cost. The rest is what the host was doing, as elsewhere. (A
        # sync that waited for nothing, in a program whose host is slower than its device
        # anyway, costs nothing here: its idle is the host's.)
        # A free that drained the device (cudaFree waits for it) costs the same lead, the
        # allocator's.
        held = sync_any.at(a, tol=2.0) if a > start else None
        held_free = free_any.at(a, tol=2.0) if a > start and held is None else None
        drain = held or held_free
        cost = min(length, max(0.0, a - drain[0])) if drain else 0.0
        drained_gaps += drain is not None
        rest = (length - cost) / length if length > 0 else 0.0
        cause_us["host_sync" if held else "alloc_churn"] += cost
        cause_us["host_sync"] += sync * rest
        cause_us["alloc_churn"] += (alloc + free) * rest
        cause_us["launch_bound"] += (launch + dispatch + other) * rest
        cause_us["host_bound"] += host * rest
        cause_us["starved_input"] += inp * rest
    causes = {k: 100.0 * v / win_us for k, v in cause_us.items()}
    causes["elementwise_chain"] = share(lambda d: id(d) in chain_ids)
    causes["simt_gemm"] = share(lambda d: d["class"] in ("gemm_simt", "gemm_misaligned"))
    causes["decode_gemv"] = share(lambda d: d["class"] == "gemm_decode")
    cause, cause_share = max(causes.items(), key=lambda kv: kv[1])
    if cause_share < CAUSE_MIN_PCT:
        cause = "healthy"

    calls_in_win = [c for c in calls if start <= c["ts"] < end]
    kernels_in_win = [d for d in in_win if d["kind"] == "kernel"]
    top = defaultdict(float)
    top_cls = {}
    for d in kernels_in_win:
        top[d["name"]] += min(d["end"], end) - max(d["ts"], start)
        top_cls[d["name"]] = d["class"]
    top_kernels = [{"name": n[:160], "class": top_cls[n], "pct": round(100.0 * us / win_us, 2)}
                   for n, us in sorted(top.items(), key=lambda kv: -kv[1])[:top_n]]
    return {
        "instrument": "torch.profiler",
        "window_ms": win_us / 1e3,
        "steps": steps,
        "step_ms": step_ms,
        "busy_pct": 100.0 * busy.total / win_us,
        "idle_pct": 100.0 - 100.0 * busy.total / win_us,
        "split_pct": {k: 100.0 * v / win_us for k, v in split.items()},
        "device_side_pct": 100.0 * device_side_us / win_us,
        "cause_pct": causes,
        "cause": cause,
        "share_pct": cause_share,
        "kernel_class_pct": classes,
        "kernels_per_step": len(kernels_in_win) / steps,
        "syncs_per_step": sum(c["class"] == "sync" for c in calls_in_win) / steps,
        "launch_calls_per_step": sum(c["class"] == "launch" for c in calls_in_win) / steps,
        "drained_gaps_per_step": drained_gaps / steps,
        "classified_by_name_us": by_name_us,
        "tf32": bool(tf32),
        "top_kernels": top_kernels,
        "threads": len({c["tid"] for c in calls_in_win}),
    }


def finite(x):
    return isinstance(x, (int, float)) and math.isfinite(x)


# ---- a timing truth whose reference run was profiled -------------------------------------------

IDLE_CAUSES = ("launch_bound", "host_bound", "host_sync", "alloc_churn", "starved_input")


def busy_on_plain_step(busy_pct, step_ms, plain_ms):
    """The busy share of a plain run's step, from an instrumented run's busy share and step: an
    instrument slows the host, not the kernels, so the busy time a step is the plain run's too
    (capped at 100 %)."""
    return min(100.0, max(0.0, busy_pct * step_ms / plain_ms))


def causes_on_step(cause_pct, busy_pct, idle_pct, prof_ms, step_ms):
    """A profile's causes on an unprofiled run's step (step_ms; the profiled step prof_ms): the
    profiler slows the host, not the kernels, so the run's busy share is the profiled busy
    time a step over its own step (busy_on_plain_step); its idle (the rest) goes to the idle
    causes (IDLE_CAUSES) in the profile's proportions, and the kernel causes
    (elementwise_chain, simt_gemm, decode_gemv) keep their time a step (at most the whole
    step: the two runs' steps differ by their noise too). Returns (busy_pct, causes), in % of
    step_ms."""
    busy = busy_on_plain_step(busy_pct, prof_ms, step_ms)
    causes = {}
    for c, pct in cause_pct.items():
        if c in IDLE_CAUSES:
            causes[c] = (100.0 - busy) * pct / idle_pct if idle_pct > 0 else 0.0
        else:
            causes[c] = min(100.0, pct * prof_ms / step_ms)
    return busy, causes


def top_cause(causes):
    """The largest cause and its share, "healthy" where it is below CAUSE_MIN_PCT."""
    top = max(causes, key=lambda c: causes[c])
    return (top if causes[top] >= CAUSE_MIN_PCT else "healthy"), causes[top]


def with_profiled_reference(cause, plain_ms, ref_ms, ref_truth):
    """The causes of a program timed against a reference run that removes one cause (a cached
    batch for a data loader), where the reference itself was profiled: without its profile,
    the reference's step would have to be taken as all device work, and whatever else slows
    the program would go unseen. The removed cause takes 1 - ref_ms / plain_ms of the plain
    step; the rest of the plain step is the reference's, whose own causes the profile gives.
    The profiler slows the host, so its idle shares overstate the reference's: its kernels
    are not slowed, so the reference's true busy share is the profiled busy time a step over
    the reference's plain step (ref_ms); its idle (the rest) goes to the idle causes
    (IDLE_CAUSES) in the profile's proportions, and the kernel causes (elementwise_chain,
    simt_gemm, decode_gemv) keep their time a step (causes_on_step). All shares in % of
    the plain step; returns the truth's fields (cause, share_pct, cause_pct, busy_pct,
    ref_busy_pct, ref_cause_pct), or raises TruthError on a profile without its figures."""
    need = ("step_ms", "busy_pct", "idle_pct", "cause_pct")
    if not all(k in ref_truth for k in need) or not isinstance(ref_truth["cause_pct"], dict):
        raise TruthError("the reference's profile has no " + "/".join(need))
    if not (finite(plain_ms) and finite(ref_ms) and plain_ms > 0 and ref_ms > 0):
        raise TruthError("no plain or reference step time")
    frac = ref_ms / plain_ms
    ref_busy, ref_causes = causes_on_step(ref_truth["cause_pct"], ref_truth["busy_pct"],
                                          ref_truth["idle_pct"], ref_truth["step_ms"], ref_ms)
    causes = {c: frac * v for c, v in ref_causes.items()}
    causes[cause] = causes.get(cause, 0.0) + 100.0 * (1.0 - frac)
    top, share = top_cause(causes)
    return {"cause": top, "share_pct": share, "cause_pct": causes, "busy_pct": frac * ref_busy,
            "ref_busy_pct": ref_busy, "ref_cause_pct": ref_causes}
