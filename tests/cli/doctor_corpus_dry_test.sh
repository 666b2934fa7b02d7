#!/usr/bin/env bash
# The doctor's corpus tools without a GPU or torch (ctest unit.doctor_corpus_dry):
#  1. the truth's analysis on synthetic profiler traces (tests/unit/corpus_truth_test.py);
#  2. corpus.json: every program exists and compiles, names are unique, causes are the
#     doctor's rule names (or healthy), a timing truth has its reference arguments;
#  3. run.py end to end with stand-ins for python3, nvidia-smi and underfed: a GPU-less machine
#     is exit 77; a missing library or too few GPUs skips that row with the reason; a program
#     that fails is recorded failed with its reason; the rows' files are where table.py reads;
#  4. table.py on a made-up OUTDIR: agreement, judged with the truth on the plain step (top
#     finding names the cause; a healthy program with a high finding disagrees), the split gap
#     on the plain step, the profiled step's figures beside them (not judged), failed/skipped rows with their reasons,
#     --check's exit status, the doctor's JSON read through its one adapter.
#   tests/cli/doctor_corpus_dry_test.sh SOURCE_DIR
set -uo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
[ $# -eq 1 ] || usage "tests/cli/doctor_corpus_dry_test.sh SOURCE_DIR"
src=$(cd "$1" && pwd) || exit 2
corpus=$src/examples/corpus
command -v python3 > /dev/null || { echo "skipped: no python3" >&2; exit 77; }
tmp=$(mktemp -d)
trap '[ -n "${KEEP_TMP:-}" ] || rm -rf "$tmp"' EXIT
check() {   # check WHAT COND...: COND is a command; prints ok/FAIL
  local what=$1
  shift
  if "$@"; then pass "$what"; else fail "$what"; fi
}

# 1. the truth's analysis
check "truth analysis unit tests" python3 "$src/tests/unit/corpus_truth_test.py"

# 2. the manifests: corpus.json and the held-out programs' (examples/heldout*/heldout*.json)
manifest_check=$(cat << 'PY'
import json, os, sys
path, least = sys.argv[1], int(sys.argv[2])
d = os.path.dirname(path)
rules = {"launch_bound", "host_bound", "host_sync", "starved_input", "comm_exposed",
         "elementwise_chain", "low_sm_fill", "simt_gemm", "decode_gemv", "alloc_churn", "kernel_compile", "healthy"}
progs = json.load(open(path))["programs"]
names = [p["name"] for p in progs]
bad = [n for n in names if names.count(n) > 1]
for p in progs:
    f = os.path.join(d, p["file"])
    if not os.path.exists(f):
        bad.append(f"{p['name']}: no {p['file']}")
        continue
    compile(open(f).read(), f, "exec")          # a syntax error fails here
    if p["cause"] not in rules:
        bad.append(f"{p['name']}: cause {p['cause']}")
    if p["truth"] not in ("profiler", "timing"):
        bad.append(f"{p['name']}: truth {p['truth']}")
    if p["truth"] == "timing" and not p.get("ref_args"):
        bad.append(f"{p['name']}: timing truth without ref_args")
    if p.get("ref_removes", "launch_bound") not in rules - {"healthy"}:
        bad.append(f"{p['name']}: ref_removes {p['ref_removes']}")
    lo, hi = p["expect_share_pct"]
    if not 0 <= lo <= hi <= 100:
        bad.append(f"{p['name']}: expect_share_pct")
if len(progs) < least:
    bad.append(f"only {len(progs)} programs")
if bad:
    print(os.path.basename(path) + ":", bad, file=sys.stderr)
sys.exit(1 if bad else 0)
PY
)
check "corpus.json is consistent" python3 -c "$manifest_check" "$corpus/corpus.json" 20
check "heldout.json is consistent" python3 -c "$manifest_check" "$src/examples/heldout/heldout.json" 5
check "heldout2.json is consistent" python3 -c "$manifest_check" "$src/examples/heldout2/heldout2.json" 4
check "heldout3.json is consistent" python3 -c "$manifest_check" "$src/examples/heldout3/heldout3.json" 5
check "heldout4.json is consistent" python3 -c "$manifest_check" "$src/examples/heldout4/heldout4.json" 6
# the committed held-out tables re-derive from their committed rows (one round each)
for set in heldout3 heldout4; do
  committed="$src/results/nvidia-h200/doctor/$set"
  rm -rf "$tmp/rederive" && mkdir -p "$tmp/rederive"
  python3 "$corpus/table.py" "$committed/round1" --out "$tmp/rederive" > /dev/null 2>&1
  check "$set's committed table re-derives from its rows" \
    cmp -s "$tmp/rederive/corpus.md" "$committed/corpus.md"
  check "$set's committed csv re-derives from its rows" \
    cmp -s "$tmp/rederive/corpus.csv" "$committed/corpus.csv"
done
# heldout4's second round (the two programs run again after the changes), its own table
committed="$src/results/nvidia-h200/doctor/heldout4/round2"
rm -rf "$tmp/rederive" && mkdir -p "$tmp/rederive" && cp -r "$committed" "$tmp/rederive/round2"
rm -f "$tmp/rederive/round2/corpus.md" "$tmp/rederive/round2/corpus.csv"
python3 "$corpus/table.py" "$tmp/rederive/round2" --out "$tmp/rederive" > /dev/null 2>&1
check "heldout4 round 2's committed table re-derives from its rows" \
  cmp -s "$tmp/rederive/corpus.md" "$committed/corpus.md"

# 3. run.py with stand-ins. The stand-in python3 answers import checks ($STUB_MISSING fails),
# the GPU count, truth_torch.py (a made-up truth) and programs (a timing line; the reference
# runs' flags halve the step; $STUB_FAIL names a program that exits 1).
stub=$tmp/stub
mkdir -p "$stub/bin" "$stub/build/tools"
cat > "$stub/bin/python3" << 'SH'
#!/usr/bin/env bash
if [ "$1" = -c ]; then
  case $2 in
    *device_count*) echo "${STUB_GPUS:-1}"; exit 0 ;;
    "import "*) m=${2#import }; m=${m%%;*}; [[ " ${STUB_MISSING:-} " == *" $m "* ]] &&
                  { echo "ModuleNotFoundError: No module named '$m'" >&2; exit 1; }; exit 0 ;;
  esac
  exit 0
fi
if [[ $1 == */truth_torch.py ]]; then
  out=$3
  cat > "$out" << 'JSON'
{"instrument": "torch.profiler", "cause": "launch_bound", "share_pct": 62.0, "busy_pct": 30.0,
 "step_ms": 3.0, "idle_pct": 70.0, "cause_pct": {"launch_bound": 62.0, "host_bound": 7.0},
 "split_pct": {"launch_call": 20.0, "dispatch": 40.0, "other_cuda": 2.0, "sync_call": 1.0,
               "host": 7.0}}
JSON
  echo "steps 10 step_ms 3.000 wall_s 1.00"
  exit 0
fi
prog=$(basename "$1")
[ "$prog" = "${STUB_FAIL:-}" ] && { echo "Traceback: boom" >&2; exit 1; }
if [ -n "${STUB_HANG:-}" ]; then echo $$ > "$STUB_HANG"; exec sleep 60; fi
case " $* " in
  *" --cached-batch "*|*" --no-host-work "*|*" --steps-per-call "*)
    echo "steps 10 step_ms 1.000 wall_s 1.00" ;;
  *) printf 'Epoch 0:  50%%|###  | 5/10\rEpoch 0: 100%%|#####| 10/10\r'   # a progress bar
     echo "steps 10 step_ms 2.000 wall_s 1.00" ;;
esac
SH
cat > "$stub/bin/nvidia-smi" << 'SH'
#!/usr/bin/env bash
[ "${STUB_GPUS:-1}" -gt 0 ] || exit 9
for i in $(seq 0 $((${STUB_GPUS:-1} - 1))); do echo "GPU $i: NVIDIA H200 (UUID: GPU-stub-$i)"; done
SH
cat > "$stub/build/tools/underfed" << 'SH'
#!/usr/bin/env bash
# underfed doctor --out D --json J -- CMD...: runs CMD, writes a made-up diagnosis to J
[ "$1" = doctor ] || exit 2
if [ "$2" = --from ]; then      # doctor --from DIR --json J: a replay reads the traces anew
  ls "$3"/underfed-trace.*.txt > /dev/null 2>&1 || exit 2
  echo '{"processes": [{"pid": 12, "window_ms": 900.0, "steps": 10, "busy_pct": 33.0, "findings": [{"rule": "host_bound", "verdict": "high", "share_pct": 58.0}], "idle_split": {"launch": 20.0, "sync": 1.0, "host": 45.0}}]}' > "$5"
  exit 0
fi
out=$3 json=$5
shift 6
mkdir -p "$out"
echo "stub trace" > "$out/underfed-trace.12.txt"
"$@"
rc=$?
cat > "$json" << 'JSON'
{"processes": [
 {"pid": 11, "window_ms": 0.5, "steps": 0, "findings": []},
 {"pid": 12, "window_ms": 900.0, "steps": 10, "step_ms": 2.5, "busy_pct": 33.0,
  "launch_gap_pct": 25.0, "input_gap_pct": 40.0, "sync_gap_pct": 0.0,
  "findings": [{"rule": "launch_bound", "verdict": "high", "share_pct": 60.0},
               {"rule": "starved_input", "verdict": "moderate", "share_pct": 9.0}]}]}
JSON
exit $rc
SH
: > "$stub/build/tools/libunderfed_inject.so"
chmod +x "$stub/bin/python3" "$stub/bin/nvidia-smi" "$stub/build/tools/underfed"
export PATH="$stub/bin:$PATH"
py=$stub/bin/python3
real_python=$(PATH=${PATH#"$stub/bin:"} command -v python3)
run() { "$real_python" "$corpus/run.py" --python "$py" "$@"; }

STUB_GPUS=0 run "$stub/build" "$tmp/none" tv_loader_w0 2> "$tmp/none.err"
check "no GPU: run.py exits 77 with the reason" test $? -eq 77
check "no GPU: the reason is said" grep -q "skipped: no GPU" "$tmp/none.err"
run "$stub/nobuild" "$tmp/x" tv_loader_w0 2> /dev/null
check "no build: exit 2" test $? -eq 2
run "$stub/build" "$tmp/x" no_such_program 2> /dev/null
check "unknown program: exit 2" test $? -eq 2
run "$stub/build" "$tmp/x" --manifest "$tmp/no-such.json" 2> "$tmp/m.err"
check "a manifest that is not there: exit 2 with the reason" \
  bash -c "test $? -eq 2 && grep -q 'cannot read it' '$tmp/m.err'"
echo '{"programs": [{"name": "x", "file": "x.py", "cause": "healthy", "truth": "timing", "args": []}]}' \
  > "$tmp/bad.json"
run "$stub/build" "$tmp/x" --manifest "$tmp/bad.json" 2> "$tmp/m.err"
check "a timing program without ref_args: exit 2 with the reason" \
  bash -c "test $? -eq 2 && grep -q 'needs ref_args' '$tmp/m.err'"
echo '[1, 2]' > "$tmp/bad.json"
run "$stub/build" "$tmp/x" --manifest "$tmp/bad.json" 2> "$tmp/m.err"
check "a manifest without its list: exit 2 with the reason" \
  bash -c "test $? -eq 2 && grep -q 'no \"programs\" list' '$tmp/m.err'"

# (the names both before and after the options: the device script once put them after)
STUB_GPUS=1 STUB_MISSING=lightning STUB_FAIL=torch_chain.py \
  run "$stub/build" "$tmp/out" tv_loader_w0 eager_storm --budget-s 400 lightning_bar \
  ddp_allreduce torch_chain --log "$tmp/run.log" 2> "$tmp/run.err"
check "a failed row makes run.py exit 1" test $? -eq 1
check "progress on stderr" grep -q "tv_loader_w0: doctor" "$tmp/run.err"
check "progress in --log too" grep -q "tv_loader_w0: doctor" "$tmp/run.log"
row() { "$real_python" -c 'import json,sys; r=json.load(open(sys.argv[1])); print(r["status"] + ": " + r["reason"])' "$tmp/out/$1/row.json"; }
check "lightning missing: row skipped with the reason" \
  bash -c "[[ '$(row lightning_bar)' == \"skipped: python3 cannot import lightning (ModuleNotFoundError\"* ]]"
check "one GPU: the 2-GPU row skipped with the reason" \
  test "$(row ddp_allreduce)" = "skipped: needs 2 GPUs, this machine has 1"
check "a failing program: row failed with the reason" \
  test "$(row torch_chain)" = "failed: plain exited with status 1 (see plain.log)"
# tv_loader_w0's reference (a cached batch: 1 ms of the plain 2 ms) is profiled too: the stand-in
# profile's 30 % busy of 3 ms is 0.9 ms, 90 % of the reference's plain 1 ms; its idle 10 % goes
# 62:7 of the profile's 70 % idle to launch_bound and host_bound, each half of it in the plain step
check "timing truth with a profiled reference: removed share, the reference's own causes" \
  "$real_python" -c '
import json, sys
t = json.load(open(sys.argv[1]))
ok = (abs(t["removed_share_pct"] - 50.0) < 1e-9 and t["cause"] == "starved_input" and
      abs(t["share_pct"] - 50.0) < 1e-9 and abs(t["busy_pct"] - 45.0) < 1e-9 and
      abs(t["cause_pct"]["launch_bound"] - 0.5 * 10.0 * 62.0 / 70.0) < 1e-9 and
      t["instrument"] == "timing + the reference profiled")
sys.exit(0 if ok else 1)' "$tmp/out/tv_loader_w0/truth.json"
check "the profiled reference ran as a fourth process" test -s "$tmp/out/tv_loader_w0/ref_truth.log"
# another manifest: its programs from its own folder; a healthy program whose reference removes
# a cost ("ref_removes") gets that cause when the cost is 15 % or more (here half the step)
run "$stub/build" "$tmp/held" jax_cnn --manifest "$src/examples/heldout/heldout.json" 2> /dev/null
check "--manifest: exit 0" test $? -eq 0
check "--manifest: the program from the manifest's folder" \
  grep -q "examples/heldout/jax_cnn.py" "$tmp/held/jax_cnn/plain.log"
check "ref_removes: a healthy program's reference that halves the step says launch_bound" \
  "$real_python" -c '
import json, sys
t = json.load(open(sys.argv[1]))
sys.exit(0 if t["cause"] == "launch_bound" and abs(t["share_pct"] - 50.0) < 1e-9 else 1)' \
  "$tmp/held/jax_cnn/truth.json"
for f in plain.log truth.log doctor.txt doctor.json row.json; do
  check "eager_storm/$f written" test -s "$tmp/out/eager_storm/$f"
done

# stopped from outside (an outer timeout's SIGTERM): the program in flight is killed, the rows
# are recorded not run with the reason, exit 1
STUB_HANG=$tmp/hang.pid "$real_python" "$corpus/run.py" --python "$py" "$stub/build" "$tmp/stop" \
  tv_loader_w0 eager_storm 2> /dev/null &
runner=$!
for _ in $(seq 50); do [ -s "$tmp/hang.pid" ] && break; sleep 0.1; done
kill -TERM $runner
wait $runner
check "SIGTERM: run.py exits 1" test $? -eq 1
sleep 0.2
check "SIGTERM: the program in flight is killed" \
  bash -c "[ -s '$tmp/hang.pid' ] && ! kill -0 \$(cat '$tmp/hang.pid') 2> /dev/null"
check "SIGTERM: the row in flight is recorded not run" \
  test "$(row ../stop/tv_loader_w0)" = "not run: the runner was stopped (SIGTERM) during this program"
check "SIGTERM: the rows after it too" \
  test "$(row ../stop/eager_storm)" = "not run: the runner was stopped (SIGTERM) before this program"

"$real_python" "$corpus/table.py" "$tmp/out" > "$tmp/table.md"
check "table.py exits 0 without --check" test $? -eq 0
check "table files written" test -s "$tmp/out/corpus.md" -a -s "$tmp/out/corpus.csv"
# eager_storm: truth launch_bound 62 %, doctor's main process (the longer window) launch_bound
# high: agree; split truth L = launch 20 + other CUDA 2, S = 1, H = dispatch 40 + host 7
# against the doctor's 25/0/40 (its fallback names): gap 7.
# on the plain step (2 ms): the truth's 30 % of 3 ms busy is 45 % of it, its idle 55 of 70 (x 0.786:
# 17.3/0.8/36.9); the doctor's 33 % is of the program's own step under it (doctor.txt's timing
# line, 2 ms), not of the step it detected (its JSON's 2.5 ms, which may span several of the
# program's steps): 33 % of the plain 2 ms too, its split as it is (25/0/40): 7.7 points apart,
# in L; its truth on the plain step: launch_bound 62 x 0.786 = 48.7 (the idle causes shrink
# with the idle; a timing truth, as it is: starved_input 50.0). Judged: those on the plain
# step; beside them, not judged, the profiled step's (launch_bound 62.0, the splits as
# recorded: 7.0 apart, and 7.0 as shares of each one's idle)
check "eager_storm agrees, split within 10, and on the plain step 7.7 apart" \
  grep -q "^| eager_storm | 1[^|]* | torch | launch_bound | profiler | 30.0 | launch_bound 48.7 | launch_bound high | 60.0 | high 60.0 | yes | 17/1/37 | 25/0/40 | 7.7 | launch_bound | 62.0 | yes | 22/1/47 | 25/0/40 | 7.0 | 7.0 | 2.000 | 2.000 | 1.00 | ok |$" "$tmp/table.md"
check "the split's count, judged on the plain step" \
  grep -q "^- host-wait split within 10 points on the plain step (each instrument's split rescaled to it), profiler truths: 1 of 1 compared$" "$tmp/table.md"
check "the profiled step's counts beside it, not judged" \
  grep -q "^- on the profiled step (not judged): agree 1 of 2 (disagree: tv_loader_w0); host-wait split within 10 points 1 of 1 compared$" "$tmp/table.md"
check "tv_loader_w0 (starved_input) against launch_bound: disagrees; no split (timing)" \
  grep -q "^| tv_loader_w0 | 1[^|]* | torchvision | starved_input | timing | 45.0 | starved_input 50.0 | launch_bound high | 60.0 | moderate 9.0 | \*\*no\*\* | n/a (timing truth) |  |  | starved_input | 50.0 | \*\*no\*\* | n/a (timing truth) | 25/0/40 |" "$tmp/table.md"
check "failed and skipped rows carry their reasons" \
  grep -q "^- skipped: .*lightning_bar (python3 cannot import lightning" "$tmp/table.md"
check "summary counts" grep -q "^- agree with the truth on the program's plain step (a profiler truth with the profiler's host cost taken out): 1 of 2 programs judged (disagree: tv_loader_w0)$" "$tmp/table.md"
"$real_python" "$corpus/table.py" "$tmp/out" --check > /dev/null
check "--check fails on a disagreement" test $? -eq 1
check "csv has a row per program" test "$(wc -l < "$tmp/out/corpus.csv")" -eq 6

# 4. table.py alone: a healthy program with a high finding disagrees; the split object of a
# newer doctor is preferred to the fallback names; a split gap over 10 is marked.
mk() {  # mk DIR NAME CAUSE TRUTH_JSON DOCTOR_JSON
  mkdir -p "$1/$2"
  printf '{"status": "ok", "reason": "", "program": {"library": "torch", "cause": "%s", "truth": "profiler"}}\n' "$3" > "$1/$2/row.json"
  echo "$4" > "$1/$2/truth.json"
  echo "$5" > "$1/$2/doctor.json"
  echo "steps 5 step_ms 1.000 wall_s 1.0" > "$1/$2/plain.log"
  echo "steps 5 step_ms 1.500 wall_s 1.0" > "$1/$2/doctor.txt"
}
t2=$tmp/t2
mk "$t2" healthy_one healthy '{"cause": "healthy", "share_pct": 3.0, "busy_pct": 99.0, "cause_pct": {"launch_bound": 3.0}}' \
  '{"processes": [{"window_ms": 10, "findings": [{"rule": "low_sm_fill", "verdict": "high", "share_pct": 31.0}]}]}'
mk "$t2" split_new host_bound \
  '{"instrument": "torch.profiler", "cause": "host_bound", "share_pct": 70.0, "busy_pct": 25.0, "idle_pct": 75.0, "step_ms": 1.5, "cause_pct": {"host_bound": 70.0, "launch_bound": 5.0}, "split_pct": {"launch_call": 5.0, "sync_call": 0.0, "host": 70.0}}' \
  '{"processes": [{"window_ms": 10, "busy_pct": 40.0, "launch_gap_pct": 75.0, "idle_split": {"launch": 4.0, "sync": 0.0, "host": 55.0}, "findings": [{"rule": "host_bound", "verdict": "high", "share_pct": 69.0}]}]}'
"$real_python" "$corpus/table.py" "$t2" > "$tmp/t2.md"
check "healthy with a high finding disagrees" grep -q "^| healthy_one |.* low_sm_fill high | 31.0 |  | \*\*no\*\* |" "$tmp/t2.md"
# (as shares of each one's idle, 5/0/70 and 4/0/55 split alike: 0.1). On the plain 1 ms step
# (both runs 1.5 ms): the truth's 25 % busy is 37.5 %, its idle x 62.5/75 (4.2/0/58.3, and
# host_bound 58.3); the doctor's 40 % is 60 %, its idle x 40/60 (2.7/0/36.7): 21.7 apart
check "the newer split object is read; a gap over 10 is marked" \
  grep -q "^| split_new |.* host_bound 58.3 | host_bound high | 69.0 | high 69.0 | yes | 4/0/58 | 3/0/37 | 21.7 \*\*>10\*\* | host_bound | 70.0 | yes | 5/0/70 | 4/0/55 | 15.0 \*\*>10\*\* | 0.1 | 1.000 | 1.500 | 1.50 | ok |$" "$tmp/t2.md"
check "healthy programs with a high finding named" grep -q "^- healthy programs with a high finding: healthy_one$" "$tmp/t2.md"
# rounds: a later round's ok row replaces an earlier one; a later failure does not replace an
# earlier ok row; --replay judges the recorded traces replayed now, the live top beside it
t4=$tmp/round2
mk "$t4" torch_chain elementwise_chain '{"cause": "elementwise_chain", "share_pct": 99.0, "busy_pct": 99.7, "split_pct": {"launch_call": 0, "sync_call": 0, "host": 0.2}}' \
  '{"processes": [{"window_ms": 10, "findings": [{"rule": "elementwise_chain", "verdict": "high", "share_pct": 98.0}]}]}'
mkdir -p "$t4/eager_storm"
echo '{"status": "failed", "reason": "plain exited with status 1", "program": {"cause": "launch_bound", "truth": "profiler"}}' > "$t4/eager_storm/row.json"
"$real_python" "$corpus/table.py" "$tmp/out" "$t4" > /dev/null 2>&1
check "several rounds need --out" test $? -eq 2
"$real_python" "$corpus/table.py" "$tmp/out" "$t4" --out "$tmp/merged" > "$tmp/merged.md"
check "rounds: the later ok row is taken" grep -q "^| torch_chain | 2 | torch | elementwise_chain |.* yes |" "$tmp/merged.md"
check "rounds: a later failure keeps the earlier ok row" grep -q "^| eager_storm | 1[^|]* | torch |.* ok |$" "$tmp/merged.md"
"$real_python" "$corpus/table.py" "$tmp/out" --replay "$stub/build" --out "$tmp/replayed" > "$tmp/replayed.md"
check "replay: the doctor's columns from the replayed traces, the live top beside" \
  grep -q "^| eager_storm | 1[^|]* | torch | launch_bound | profiler | 30.0 | launch_bound 48.7 | host_bound high | 58.0 | launch_bound high | no such rule | \*\*no\*\* | 17/1/37 | 20/1/45 | 8.1 | launch_bound | 62.0 | \*\*no\*\* | 22/1/47 | 20/1/45 | 2.0 |" "$tmp/replayed.md"
check "replay: its JSON and text kept" test -s "$tmp/replayed/replay/eager_storm.json" -a -f "$tmp/replayed/replay/eager_storm.txt"
"$real_python" "$corpus/table.py" "$tmp/out" --replay "$stub/nobuild" 2> /dev/null > /dev/null
check "replay without a build: exit 2" test $? -eq 2
# a row whose traces are gone takes the replay written earlier (--replayed), and says so
cp -r "$tmp/out" "$tmp/out-notraces" && rm -rf "$tmp/out-notraces/eager_storm/doctor"
mkdir -p "$tmp/earlier" && sed 's/"host_bound"/"launch_bound"/' "$tmp/replayed/replay/eager_storm.json" \
  > "$tmp/earlier/eager_storm.json"
"$real_python" "$corpus/table.py" "$tmp/out-notraces" --replay "$stub/build" --replayed "$tmp/earlier" \
  --out "$tmp/replayed2" > "$tmp/replayed2.md"
check "replayed: a row without traces takes the earlier replay, its note says where" \
  grep -q "^| eager_storm | 1[^|]* | torch | launch_bound | profiler | 30.0 | launch_bound 48.7 | launch_bound high | 58.0 | .*ok (no traces kept: the replay in $tmp/earlier/eager_storm.json) |$" "$tmp/replayed2.md"
"$real_python" "$corpus/table.py" "$tmp/out-notraces" --replay "$stub/build" --out "$tmp/replayed3" > "$tmp/replayed3.md"
check "without --replayed such a row fails with the reason" \
  grep -q "^| eager_storm |.*failed: doctor --from: no recorded traces to replay |$" "$tmp/replayed3.md"
"$real_python" "$corpus/table.py" "$tmp/out" --replayed "$tmp/earlier" > /dev/null 2>&1
check "--replayed without --replay: exit 2" test $? -eq 2

mkdir -p "$tmp/empty"
"$real_python" "$corpus/table.py" "$tmp/empty" 2> /dev/null
check "no rows: exit 2" test $? -eq 2
t3=$tmp/t3
# (on the plain step: the truth 4.2/0/58.3, host_bound 58.3; the doctor's 30 % of 1.5 ms is
# 45 % of the plain 1 ms, its idle x 55/70: 3.1/0/51.9, 6.4 apart)
mk "$t3" fine host_bound '{"instrument": "torch.profiler", "cause": "host_bound", "share_pct": 70.0, "busy_pct": 25.0, "idle_pct": 75.0, "step_ms": 1.5, "cause_pct": {"host_bound": 70.0, "launch_bound": 5.0}, "split_pct": {"launch_call": 5.0, "sync_call": 0.0, "host": 70.0}}' \
  '{"processes": [{"window_ms": 10, "busy_pct": 30.0, "idle_split": {"launch": 4.0, "sync": 0.0, "host": 66.0}, "findings": [{"rule": "host_bound", "verdict": "high", "share_pct": 69.0}]}]}'
"$real_python" "$corpus/table.py" "$t3" --check > /dev/null
check "--check passes when all agree and splits are within 10" test $? -eq 0

[ "$failures" = 0 ] && echo "corpus dry test: all held" || echo "corpus dry test: FAILED" >&2
[ "$failures" = 0 ]
