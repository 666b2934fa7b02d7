#!/usr/bin/env bash
# tests/gpu/doctor_pytorch_test.sh's judging, without a GPU or torch: a stand-in python3 answers the
# torch checks, runs the judge with the real python3, and plays each example by dropping a
# recorded fixture of tests/data/doctor where the recorder would write (pid 42: host_sync
# high; pid 43: starved_input high; pid 44, made by hand: a batch-1 decode loop of cuBLAS GEMVs
# and 128 x 8 nvjet GEMMs, decode_gemv high; serial_decode batched plays it with every matrix
# product renamed a 128 x 64 nvjet GEMM, so that its decode_gemv none is the tiles' doing and
# not a fixture without GEMMs). The script must hold the rows the fixtures fit,
# fail the ones they do not (launch_storm broken and serial_decode eager get host_sync as their
# top finding; dataloader_tokenize pretokenized gets starved_input high), and skip the DDP pair.
#   tests/cli/doctor_pytorch_dry_test.sh SOURCE_DIR BUILD_DIR; exit 0 passed, 1 failed,
#   77 no python3
set -uo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
[ $# -eq 2 ] || usage "tests/cli/doctor_pytorch_dry_test.sh SOURCE_DIR BUILD_DIR"
src_build "$1" "$2"
real=$(command -v python3) || { echo "skipped: no python3" >&2; exit 77; }
work=$build/doctor-pytorch-dry
rm -rf "$work" && mkdir -p "$work/bin" || exit 2

cat > "$work/bin/python3" << FAKE
#!/usr/bin/env bash
case "\$1" in
  -c) exit 0 ;;                       # import torch; a CUDA GPU
  -) exec "$real" "\$@" ;;            # the judge
esac
example=\$(basename "\$1" .py)-\$3
[ "\$example" = "\${DRY_HANG:-}" ] && sleep 30   # a hung example: the row's timeout ends it
case \$example in
  ddp_bucketing-*) echo "skipped: needs 2 CUDA GPUs, found 1" >&2; exit 77 ;;
  item_sync-fixed|dataloader_tokenize-broken|dataloader_tokenize-pretokenized) pid=43 ;;
  serial_decode-graph|serial_decode-batched) pid=44 ;;
  *) pid=42 ;;
esac
# batched: pid 44's loop at 64 tokens, every matrix product a 128 x 64 nvjet GEMM (no decode)
batched='s/gemv2T_kernel_val<[^>]*>\|nvjet_sm90_tst_128x8_64x12_2x1_v_bz_splitK_TNT/nvjet_sm90_tst_128x64_64x8_2x1_v_bz_TNT/'
[ "\$example" = serial_decode-batched ] || batched=
sed -e "\$batched" "$src/tests/data/doctor/underfed-trace.\$pid.txt" \
  > "\$UNDERFED_DOCTOR_OUT/underfed-trace.\$pid.txt"
echo "\$(basename "\$1" .py) \$3: 1.250 ms/step"
FAKE
chmod +x "$work/bin/python3"
touch "$work/fake_inject.so"

PATH=$work/bin:$PATH UNDERFED_INJECT=$work/fake_inject.so \
  bash "$src/tests/gpu/doctor_pytorch_test.sh" "$src" "$build" "$work/out" > "$work/out.txt" 2>&1
rc=$?
[ $rc -eq 1 ] || fail "exit $rc, expected 1 (three rows do not hold)"
grep -qF "3 PyTorch example(s) did not hold" "$work/out.txt" || fail "not exactly three rows failed"
table=$work/out/doctor_pytorch.md
row() { grep -F "| $1 | $2 |" "$table"; }
row launch_storm broken | grep -qF "| host_sync high |" || fail "launch_storm broken: top finding"
row launch_storm broken | grep -qE '\| no \|$' || fail "launch_storm broken should not hold"
row launch_storm fixed | grep -qE '\| none \| 0.0 \|.*\| yes \|$' || fail "launch_storm fixed"
row item_sync broken | grep -qE '\| high \| 15.6 \|.*\| 1.250 \| yes \|$' || fail "item_sync broken"
row item_sync fixed | grep -qE '\| none \|.*\| yes \|$' || fail "item_sync fixed"
row dataloader_tokenize broken | grep -qE '\| high \| 52.7 \|.*\| yes \|$' || fail "dataloader broken"
row dataloader_tokenize workers | grep -qE '\| yes \|$' || fail "dataloader workers"
row dataloader_tokenize pretokenized | grep -qE '\| high \| 52.7 \|.*\| no \|$' ||
  fail "dataloader pretokenized should not hold"
row ddp_bucketing broken | grep -qF "skipped (exit 77)" || fail "ddp_bucketing not skipped"
row serial_decode eager | grep -qE '\| launch_bound \| none \| 0.0 \| host_sync high \|.*\| no \|$' ||
  fail "serial_decode eager should not hold"
row serial_decode graph | grep -qE '\| high \| 88.7 \| decode_gemv high \|.*\| yes \|$' ||
  fail "serial_decode graph"
row serial_decode batched | grep -qE '\| none \| 0.0 \| [a-z_]+ none \|.*\| yes \|$' ||
  fail "serial_decode batched"
[ "$failures" -eq 0 ] || { cat "$work/out.txt" >&2; exit 1; }

# A hung example fails its own row, with the reason, and the others are still judged.
PATH=$work/bin:$PATH UNDERFED_INJECT=$work/fake_inject.so DRY_HANG=item_sync-fixed \
  UNDERFED_DOCTOR_ROW_TIMEOUT_S=1 \
  bash "$src/tests/gpu/doctor_pytorch_test.sh" "$src" "$build" "$work/out-hang" \
    > "$work/out-hang.txt" 2>&1
grep -qF "4 PyTorch example(s) did not hold" "$work/out-hang.txt" || fail "the hung row did not fail alone"
table=$work/out-hang/doctor_pytorch.md
row item_sync fixed | grep -qF "no (exit 1: timed out after 1 s)" || fail "the hung row's reason"
row item_sync broken | grep -qE '\| yes \|$' || fail "a row before the hung one"
row dataloader_tokenize broken | grep -qE '\| yes \|$' || fail "a row after the hung one"
[ "$failures" -eq 0 ] || { cat "$work/out-hang.txt" >&2; exit 1; }
echo "doctor_pytorch_test.sh judged the fixtures as expected, and a hung example failed its row alone"
