#!/usr/bin/env bash
# allreduce_overlap as two processes under a torchrun-like environment (RANK, WORLD_SIZE,
# LOCAL_RANK, MASTER_ADDR=127.0.0.1, MASTER_PORT a free port), on one host with two GPUs.
#   normal: a --quick run; both ranks exit 0, rank 0 writes the results, rank 1 writes none.
#   killed: a long run; rank 1 is killed with SIGKILL a few seconds into its timing passes;
#           rank 0 must exit 1 within 30 s with a message naming rank 1.
# usage: multigpu_procs_test.sh BINARY BUILD_DIR normal|killed
# Exit 77 without two GPUs (1 with UNDERFED_REQUIRE_GPU=1).
set -u
. "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
skip_prefix="multigpu_procs_test: "   # skip's line names the test
bin=$1 build=$2 mode=$3
tmp=$(mktemp -d)
pids=()
cleanup() {
    for p in ${pids[@]+"${pids[@]}"}; do kill -9 "$p" 2>/dev/null; done
    rm -rf "$tmp"
}
trap cleanup EXIT

# fail_now WHY: the test fails here, with the last lines of each rank's stderr
fail_now() {
    echo "multigpu_procs_test ($mode): FAILED: $1" >&2
    for r in 0 1; do
        [ -f "$tmp/err$r" ] && { echo "--- rank $r stderr (last 20 lines):" >&2; tail -20 "$tmp/err$r" >&2; }
    done
    exit 1
}

gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU' || true)
[ "${gpus:-0}" -ge 2 ] || skip "needs 2 GPUs, ${gpus:-0} visible (nvidia-smi -L)"
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])' 2>/dev/null ||
       echo $((20000 + RANDOM % 20000)))
export MASTER_ADDR=127.0.0.1 MASTER_PORT=$port WORLD_SIZE=2
unset UNDERFED_ID_FILE UNDERFED_ID_PORT

# Rank r in the background, its output in $tmp/out$r and $tmp/err$r; its pid in pids[r].
start_rank() {
    local r=$1
    shift
    RANK=$r LOCAL_RANK=$r "$bin" "$@" >"$tmp/out$r" 2>"$tmp/err$r" &
    pids[$r]=$!
}

# Rank 0 reads the ceilings the ceilings test wrote (the busbw claim needs them).
mkdir -p "$tmp/r0" "$tmp/r1"
for d in "$build"/test-results/*/; do
    [ -f "$d/ceilings.csv" ] && mkdir -p "$tmp/r0/$(basename "$d")" && cp "$d/ceilings.csv" "$tmp/r0/$(basename "$d")/"
done

if [ "$mode" = normal ]; then
    start_rank 0 --quick --out "$tmp/r0"
    start_rank 1 --quick --out "$tmp/r1"
    wait "${pids[0]}"; rc0=$?
    wait "${pids[1]}"; rc1=$?
    [ "$rc1" = 0 ] || fail_now "rank 1 exited $rc1"
    [ "$rc0" = 0 ] || fail_now "rank 0 exited $rc0"
    ls "$tmp"/r0/*/allreduce_overlap.csv >/dev/null 2>&1 || fail_now "rank 0 wrote no results"
    ! ls "$tmp"/r1/*/allreduce_overlap.csv >/dev/null 2>&1 || fail_now "rank 1 wrote results"
    grep -q "rank 0 writes the results" "$tmp/err1" ||
        fail_now "rank 1 did not say that rank 0 writes"
    echo "multigpu_procs_test (normal): both ranks exited 0; rank 0 alone wrote the results"
    exit 0
fi

# killed: five points of small per-step launch counts (no batch outgrows CUDA's launch queue)
args=(--sweep bucket_mib=64,128,256,512,1024 --sweep comm_ctas=0 --sweep sm_margin=0
      --repeat 20 --warmup 2 --no-counters --no-expect)
start_rank 0 "${args[@]}" --out "$tmp/r0"
start_rank 1 "${args[@]}" --out "$tmp/r1"
for _ in $(seq 1 3000); do      # up to 300 s for the first timing pass
    grep -q ': timing (' "$tmp/err0" 2>/dev/null && break
    kill -0 "${pids[0]}" 2>/dev/null || fail_now "rank 0 ended before its first timing pass"
    sleep 0.1
done
grep -q ': timing (' "$tmp/err0" || fail_now "rank 0 reached no timing pass in 300 s"
sleep 4
kill -0 "${pids[1]}" 2>/dev/null || fail_now "rank 1 had already ended: the run is too short"
kill -9 "${pids[1]}"
start=$(date +%s.%N)
for _ in $(seq 1 300); do       # 30 s
    kill -0 "${pids[0]}" 2>/dev/null || break
    sleep 0.1
done
if kill -0 "${pids[0]}" 2>/dev/null; then
    fail_now "rank 0 still runs 30 s after rank 1 was killed"
fi
wait "${pids[0]}"; rc0=$?
took=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
[ "$rc0" = 1 ] || fail_now "rank 0 exited $rc0, not 1"
grep -q 'rank 1 is lost' "$tmp/err0" || fail_now "rank 0's message does not name rank 1"
echo "multigpu_procs_test (killed): rank 0 exited 1 about $took s after rank 1 was killed:"
grep 'rank 1 is lost' "$tmp/err0" | head -2
exit 0
