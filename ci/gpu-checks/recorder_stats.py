# The figures of one doctor trace folder (format 4): records by kind, file size, span, records
# and bytes per second, API calls kept / left out, H samples per thread (and their states),
# whether every H tid is among the A tids (and the main thread's, when given), records outside
# the span. One line of key=value, then a per-thread line.
import collections, glob, os, sys

d = sys.argv[1]
main_tid = int(sys.argv[2]) if len(sys.argv) > 2 and sys.argv[2].isdigit() else None
files = sorted(glob.glob(os.path.join(d, "underfed-trace.*.txt")))
if not files:
    print(f"{d}: no trace files")
    sys.exit(0)
for path in files:
    kinds = collections.Counter()
    a_tids = collections.Counter()
    h_tids = collections.defaultdict(collections.Counter)
    header = {}
    outside = 0
    span = None
    with open(path, errors="replace") as f:
        for line in f:
            w = line.rstrip("\n").split(" ")
            k = w[0]
            if k in ("span", "api_filter", "host_sampler", "record_cap", "dropped", "pid"):
                header[k] = w[1:]
                if k == "span":
                    span = (int(w[1]), int(w[2]))
                continue
            if len(k) != 1:
                continue
            kinds[k] += 1
            if k in "KCMASRP":
                t = (int(w[1]), int(w[2]))
            else:
                t = (int(w[1]), int(w[1]))
            if span and (t[0] < span[0] or t[1] > span[1]):
                outside += 1
            if k == "A":
                a_tids[int(w[5])] += 1
            elif k == "H":
                h_tids[int(w[3])][w[4]] += 1
    size = os.path.getsize(path)
    secs = (span[1] - span[0]) / 1e9 if span else float("nan")
    n = sum(kinds.values())
    subset = set(h_tids) <= set(a_tids)
    af = header.get("api_filter", ["?", "?", "?"])
    print(f"{path}: size_bytes={size} span_s={secs:.3f} records={n} "
          f"records_per_s={n / secs:.0f} bytes_per_s={size / secs:.0f} "
          f"by_kind={dict(sorted(kinds.items()))} api_kept={kinds['A']} "
          f"api_left_out={af[1]} api_left_out_ms={int(af[2]) / 1e6:.1f} min_ns={af[0]} "
          f"host_sampler={' '.join(header.get('host_sampler', []))} "
          f"record_cap={' '.join(header.get('record_cap', []))} dropped={header.get('dropped')} "
          f"h_tids_in_a_tids={subset} main_tid_in_a={main_tid in a_tids if main_tid else 'n/a'} "
          f"outside_span={outside}")
    for tid, c in sorted(h_tids.items()):
        print(f"  H tid {tid}: {sum(c.values())} samples {dict(c)}; A records of it: {a_tids.get(tid, 0)}")
    for tid, c in a_tids.most_common():
        if tid not in h_tids:
            print(f"  A tid {tid}: {c} records, not sampled")
