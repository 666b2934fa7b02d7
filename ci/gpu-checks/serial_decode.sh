#!/usr/bin/env bash
# serial_decode on one H200 (issue #30), round 3: attention split over blocks and combined
# once, a grid-wide argmax (round 2: ~130 s of runs at 36eae52; round 1: 73 s at 3bf2216).
# Expected wall time: ~4.5 min (build ~90 s with -j16, a second build of the scenario with
# -DSD_P_BULK=1 -DSD_ATTN_SPLITS=8 ~60 s; then ~150 s: ceilings --quick 3 s, persistent smoke
# 2 s, 3 x --quick ~40 s (the claims' run-to-run spread), full run ~25 s, persistent sweeps
# ~15 s, trace ~8 s, memcheck at d = 256 ~6 s; on the second build: the bulk-copy sweep ~5 s,
# a --quick run of the per-op variants with 8 attention blocks per KV head ~10 s, memcheck
# ~6 s).
#   bash ci/gpu-checks/serial_decode.sh OUTDIR
# Writes OUTDIR/{logs,quick1..3,full,sweep,sweep2,trace,sanitize,bulk,splits8,sanitize8}/ and
# prints a summary table on stdout.
# SDEC_SHORT=1: the claims and the kernels only (~90 s after the build): SDEC_QUICK_RUNS quick
# runs (default 3, 2 when short), the trace, memcheck and Nsight Compute at 256 and 4096 (~10 s
# each); no full run, no sweeps, no second build (bulk copies, 8 attention splits).
set -u
out=${1:?usage: bash ci/gpu-checks/serial_decode.sh OUTDIR}
short=${SDEC_SHORT:-0}
[ "$short" = 1 ] || short=0
quick_runs=${SDEC_QUICK_RUNS:-$([ "$short" = 1 ] && echo 2 || echo 3)}
[[ $quick_runs =~ ^[1-9][0-9]?$ ]] || { echo "serial_decode.sh: SDEC_QUICK_RUNS must be 1..99" >&2; exit 2; }
mkdir -p "$out/logs" && out=$(cd "$out" && pwd) || exit 2
src=$(pwd)
build=${BUILD_DIR:-/tmp/build-gpu-checks}
export NCCL_NVLS_ENABLE=0
log() { echo "[sdec $(date +%T)] $*" >&2; }
step() {   # step NAME TIMEOUT_S CMD...: run under timeout, log to logs/NAME.log, keep the status
  local name=$1 limit=$2; shift 2
  log "$name: $*"
  local t0=$SECONDS
  timeout -k 10 "$limit" "$@" > "$out/logs/$name.log" 2>&1
  local rc=$?
  echo "$name rc=$rc $((SECONDS - t0))s" >> "$out/logs/status.txt"
  log "$name: rc=$rc in $((SECONDS - t0)) s"
  return $rc
}

[ -f "$build/CMakeCache.txt" ] ||   # a configured build keeps its UNDERFED_GIT_DESCRIBE
step configure 120 cmake -S "$src" -B "$build" -DCMAKE_BUILD_TYPE=Release \
  -DUNDERFED_GIT_DESCRIBE="$(git -C "$src" describe --always --dirty 2>/dev/null || echo sdec)"
step build 400 cmake --build "$build" -j16 --target serial_decode ceilings
bin=$build/scenarios/serial_decode
[ -x "$bin" ] || { log "no binary: see $out/logs/build.log"; tail -30 "$out/logs/build.log"; exit 1; }
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,power.draw,temperature.gpu --format=csv \
  > "$out/logs/nvidia-smi.txt" 2>&1

# The machine's ceilings once (copy 2 GiB in --quick too); every run below reads this file.
step ceilings 120 "$build/benches/ceilings" --quick --out "$out/ceil"
ceil=$(ls "$out"/ceil/*/ceilings.csv 2>/dev/null | head -1)
gpu=$(basename "$(dirname "${ceil:-x/none/x}")")
for d in smoke full sweep sweep2 trace sanitize; do
  mkdir -p "$out/$d/$gpu" && [ -n "$ceil" ] && cp "$ceil" "$out/$d/$gpu/"
done

# The persistent kernel alone first, small and then at 4096: a barrier that never opens hangs
# its run, and the runs after it would lose their other variants too.
variants=()
if step smoke_p256 60 "$bin" --quick --variant persistent --sweep d_model=256 --no-trace \
     --no-counters --no-expect --out "$out/smoke" &&
   step smoke_p4096 60 "$bin" --quick --variant persistent --sweep d_model=4096 --no-trace \
     --no-counters --no-expect --out "$out/smoke"; then
  persistent_ok=1
else
  persistent_ok=0
  variants=(--variant eager_b1 --variant graph_b1 --variant batched)
  log "persistent failed its smoke runs: the runs below leave it out"
fi
# three quick runs: every claim's value three times (issue #29: margins of >= 3 spreads)
for r in $(seq 1 "$quick_runs"); do
  mkdir -p "$out/quick$r/$gpu" && [ -n "$ceil" ] && cp "$ceil" "$out/quick$r/$gpu/"
  step quick$r 180 "$bin" --quick ${variants[@]+"${variants[@]}"} --out "$out/quick$r"
done
[ "$short" = 1 ] || step full 300 "$bin" ${variants[@]+"${variants[@]}"} --out "$out/full"
# The persistent kernel's tunables at d = 4096: blocks per SM x warps per block x ring KiB per
# SM (combinations that do not fit are skipped with the reason).
[ $persistent_ok = 1 ] && [ "$short" = 0 ] &&
step sweep 240 "$bin" --quick --variant persistent --sweep d_model=4096 --sweep p_bps=1 \
  --sweep p_warps=8,16 --sweep p_ring_kib=32,64,96,128,160,192 --no-trace --no-counters \
  --no-expect --out "$out/sweep"
[ $persistent_ok = 1 ] && [ "$short" = 0 ] &&
step sweep2 120 "$bin" --quick --variant persistent --sweep d_model=4096 --sweep p_bps=2 \
  --sweep p_warps=4,8 --sweep p_ring_kib=64,128 --no-trace --no-counters --no-expect \
  --out "$out/sweep2"
# Per-kernel durations of eager_b1, graph_b1 and persistent at d = 256 and 4096 (Perfetto JSON).
tv=(--variant eager_b1 --variant graph_b1)
[ $persistent_ok = 1 ] && tv+=(--variant persistent)
step trace 180 "$bin" --quick "${tv[@]}" --sweep d_model=256,4096 --no-counters --no-expect \
  --repeat 10 --out "$out/trace" --trace "$out/trace/sd.json"
san=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
step sanitize 150 "$san" --tool memcheck --error-exitcode 1 "$bin" --quick \
  ${variants[@]+"${variants[@]}"} --repeat 1 --warmup 1 --no-counters --no-trace --no-expect \
  --sweep d_model=256 --out "$out/sanitize"
# Each kernel alone (Nsight Compute, kernels serialized): eager_b1's second step at d = 256 and
# at 4096 (83 kernels a step: skip the first step's, take the second's): duration, DRAM bytes
# read, DRAM throughput. At 256 the batch-1 kernels cost ~2.5 us each replayed, an empty node
# 0.51 us: which part of a kernel is its fixed cost.
ncu_bin=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
for d in 256 4096; do
  [ -x "$ncu_bin" ] || break
  step ncu$d 120 "$ncu_bin" --clock-control none --cache-control none --print-units base \
    --kernel-name regex:'sd_(attention|argmax|embed|gemv)' --launch-skip 83 --launch-count 83 \
    --metrics gpu__time_duration.sum,dram__bytes_read.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed \
    --csv "$bin" --quick --variant eager_b1 --sweep d_model=$d --no-trace --no-counters \
    --no-expect --repeat 2 --out "$out/ncu$d"
done

# Two compile-time variants in one second build (they touch different kernels): the
# persistent kernel's ring filled by bulk copies (TMA, one per 2 KiB stage; p_bulk = 1 in its
# rows), and the per-op attention spread over 8 blocks of one warp per KV head, combined by the
# last through memory (SD_ATTN_SPLITS=8; the default build: 1 block of 8 warps, combined in
# shared memory; the same bits; its rows' git describe says sdec-bulk-splits8).
[ "$short" = 1 ] ||
step build_bulk 400 bash -c "cmake -S '$src' -B '$build-bulk' -DCMAKE_BUILD_TYPE=Release \
  '-DCMAKE_CUDA_FLAGS=-DSD_P_BULK=1 -DSD_ATTN_SPLITS=8' \
  -DUNDERFED_GIT_DESCRIBE=sdec-bulk-splits8 > /dev/null &&
  cmake --build '$build-bulk' -j16 --target serial_decode"
mkdir -p "$out/bulk/$gpu" && [ -n "$ceil" ] && cp "$ceil" "$out/bulk/$gpu/"
[ -x "$build-bulk/scenarios/serial_decode" ] &&
step bulk 60 "$build-bulk/scenarios/serial_decode" --quick --variant persistent \
  --sweep d_model=256,4096 --sweep p_warps=16 --sweep p_ring_kib=64,128,192 --no-trace \
  --no-counters --no-expect --out "$out/bulk"
# The per-op variants with 8 attention blocks per KV head: the claims judged again (persistent
# is left out: it has its own attention), the kernels traced; then memcheck of their split
# path (the counter, the partials through memory).
for d in splits8 sanitize8; do
  mkdir -p "$out/$d/$gpu" && [ -n "$ceil" ] && cp "$ceil" "$out/$d/$gpu/"
done
[ -x "$build-bulk/scenarios/serial_decode" ] &&
step splits8 120 "$build-bulk/scenarios/serial_decode" --quick --variant eager_b1 \
  --variant graph_b1 --variant batched --no-counters --repeat 10 --out "$out/splits8" \
  --trace "$out/splits8/sd.json"
[ -x "$build-bulk/scenarios/serial_decode" ] &&
step sanitize8 150 "$san" --tool memcheck --error-exitcode 1 "$build-bulk/scenarios/serial_decode" \
  --quick --variant eager_b1 --variant graph_b1 --variant batched --repeat 1 --warmup 1 \
  --no-counters --no-trace --no-expect --sweep d_model=256 --out "$out/sanitize8"

# ---- summary ---------------------------------------------------------------------------------
python3 - "$out" <<'EOF' || true
import csv, glob, json, os, sys, collections
out = sys.argv[1]
def rows(path):
    meta, lines = [], []
    with open(path) as f:
        for line in f:
            (meta if line.startswith('#') else lines).append(line)
    return meta, list(csv.DictReader(lines))
def num(r, k, fmt):
    v = r.get(k, '')
    try:
        return fmt % float(v)
    except ValueError:
        return '-'
cols = [('variant', None), ('d_model', '%.0f'), ('p_bps', '%.0f'), ('p_warps', '%.0f'),
        ('p_ring_kib', '%.0f'), ('p_stages', '%.0f'), ('step_ms', '%.4f'), ('spread_pct', '%.2f'),
        ('pct_of_copy', '%.1f'), ('gemv_chain_pct', '%.1f'), ('busy_pct', '%.1f'),
        ('kernels_per_step', '%.0f'), ('kernel_us_mean', '%.2f'), ('launch_us', '%.1f'),
        ('tokens_per_s', '%.0f'), ('verified', '%.0f'), ('max_rel_err', '%.2g'),
        ('bitwise_diff', '%.0f'), ('steps_compared', '%.0f'), ('p_bulk', '%.0f'),
        ('sm_clock_mhz', '%.0f')]
for run in ('smoke', 'quick1', 'quick2', 'quick3', 'full', 'sweep', 'sweep2', 'trace', 'sanitize',
            'bulk', 'splits8', 'sanitize8'):
    for path in sorted(glob.glob(f'{out}/{run}/*/serial_decode.csv')):
        meta, rs = rows(path)
        print(f'\n== {run}: {path}')
        print(' '.join(c for c, _ in cols) + ' skip_reason')
        for r in rs:
            print(' '.join(r.get(c, '') if f is None else num(r, c, f) for c, f in cols),
                  (r.get('skip_reason') or '')[:100])
        for m in meta:
            if m.startswith('# claim'):
                print(m.strip()[:260])
# each claim's measured value across the three quick runs and the full run
claims = collections.OrderedDict()
for run in ('quick1', 'quick2', 'quick3', 'full', 'splits8'):
    for path in glob.glob(f'{out}/{run}/*/serial_decode.csv'):
        for m in rows(path)[0]:
            if m.startswith('# claim.'):
                body = m.split(':', 1)[1].strip()
                verdict, rest = body.split(']', 1)
                val = rest.split(')', 1)[0].replace('(measured', '').strip()
                text = rest.split(')', 1)[1].split(':', 1)[0].strip()
                claims.setdefault(text, []).append(f'{run}:{verdict.strip("[")}:{val}')
print('\n== claims across runs')
for text, vals in claims.items():
    print(f'{text[:70]:70s} ' + ' '.join(vals))
for path in glob.glob(f'{out}/*/*/ceilings.csv')[:1]:
    for line in open(path):
        if line.startswith(('copy_d2d', 'launch_us', 'graph_node')):
            print('ceiling', line.strip()[:120])
# per-kernel durations from the traces: mean us per kernel name and process section (under
# programmatic dependent launch a kernel starts in its predecessor's tail: an upper bound)
# Nsight Compute's per-kernel means (each kernel alone, serialized)
for d in (256, 4096):
    try:
        rows = list(csv.reader(open(f'{out}/logs/ncu{d}.log')))
        first = next(i for i, r in enumerate(rows) if r and r[0] == 'ID')   # ncu's header
        head = {k: i for i, k in enumerate(rows[first])}
        agg = collections.defaultdict(lambda: collections.defaultdict(list))
        for r in rows[first + 1:]:
            if len(r) == len(head) and r[head['ID']].isdigit():
                try:
                    v = float(r[head['Metric Value']].replace(',', ''))
                except ValueError:
                    continue
                agg[r[head['Kernel Name']][:32]][r[head['Metric Name']]].append(v)
        print(f'\n== ncu at d = {d}: kernel, count, mean ns, mean DRAM bytes read, mean DRAM %')
        for k, m in agg.items():
            mean = lambda key: sum(m[key]) / len(m[key]) if m[key] else float('nan')
            print(f'{k:32s} {len(m["gpu__time_duration.sum"]):4d} '
                  f'{mean("gpu__time_duration.sum"):10.0f} {mean("dram__bytes_read.sum"):14.0f} '
                  f'{mean("dram__throughput.avg.pct_of_peak_sustained_elapsed"):6.1f}')
    except Exception as e:
        print(f'ncu at d = {d}: not read:', e)
for run in ('trace', 'splits8'):
    try:
        t = json.load(open(f'{out}/{run}/sd.json'))
        ev = t['traceEvents'] if isinstance(t, dict) else t
        agg = collections.defaultdict(lambda: [0, 0.0])
        label = {e.get('pid'): e.get('args', {}).get('name', '') for e in ev
                 if e.get('ph') == 'M' and e.get('name') == 'process_name'}
        for e in ev:
            if e.get('ph') == 'X' and 'dur' in e:
                key = (str(label.get(e.get('pid'), e.get('pid'))), e.get('name', '')[:48])
                agg[key][0] += 1
                agg[key][1] += float(e['dur'])
        print(f'\n== {run}: kernels (pid, name): count, mean us, total us')
        for (pid, name), (n, tot) in sorted(agg.items(),
                                             key=lambda kv: (kv[0][0], -kv[1][1]))[:80]:
            print(f'{pid[:30]:30s} {name:48s} {n:7d} {tot / n:9.2f} {tot:11.0f}')
    except Exception as e:
        print(f'{run}: trace not read:', e)
EOF
echo
cat "$out/logs/status.txt"
tail -5 "$out/logs/sanitize.log" 2>/dev/null
tail -5 "$out/logs/sanitize8.log" 2>/dev/null
