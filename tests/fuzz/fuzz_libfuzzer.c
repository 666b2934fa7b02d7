/* libFuzzer target of the result reader and the doctor's trace reader: the reading path of
 * fuzz_read.c, driven by coverage. Built with clang only (CMake option UNDERFED_FUZZ=ON, see
 * CMakeLists.txt). The first byte of an input picks what the rest is: a results file read
 * alone or as a result folder's launch_storm.csv, a ceilings file, a series file over the
 * results below (the default point of the gpu-a fixture), or a doctor trace (reader, analysis,
 * report, held to tests/fuzz/fuzz_doctor.h's bounds: a broken bound aborts, as a crash). Seed
 * corpus: results/nvidia-h200 and tests/data (a trace seed needs its first byte: 0x04 then the
 * file); UNDERFED_FUZZ_KNOWN=low_sm_fill as fuzz_reader's --known. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_read.h"

static const char series_results[] =
    "# underfed-results v1\n"
    "# scenario: launch_storm\n"
    "variant,role,elems,ops,step_ms,step_ms_min,step_ms_max,spread_pct,steps_timed,trace_step_ms,trace_overhead,busy_pct,kernels_per_step,kernel_us_mean,launch_us,idle_host_pct,idle_other_pct,comm_overlap_pct,comm_exposed_ms,sm_active_pct,occupancy_pct,tensor_active_pct,dram_pct,gpm_sm_active_pct,gpm_occupancy_pct,gpm_tensor_active_pct,gpm_dram_pct,nvml_util_pct,useful_flops,executed_flops,tflops_useful,pct_of_gemm,min_bytes,gbs,pct_of_copy,peak_mem_bytes,verified,max_rel_err,launches_per_step,bytes_moved,skip_reason\n"
    "eager,broken,4096,1000,6,5.925489815,6.074510185,2.483672847,200,6.101643397,1.016940566,25,1000,1.5,6,75,0,,,1.249872206,0.7499233234,0,0.1365333333,1.219699621,0.7582162498,0,0.1355358806,100,4096000,4096000,0.0006826666667,8.533333333e-05,32768,0.005461333333,0.0001365333333,36864,1,0,1000,32768000,\n"
    "graph,fixed,4096,1000,1.5525,1.544043571,1.560956429,1.08939498,200,1.666951243,1.073720607,96.61835749,1000,1.5,0.6,0.6763285024,2.70531401,,,4.42487309,2.654923854,0,0.5276650564,4.502398001,2.581117093,0,0.5271715706,100,4096000,4096000,0.002638325282,0.0003297906602,32768,0.02110660225,0.0005276650564,36864,1,0,1,32768000,\n"
    "fused,fixed,4096,1000,0.0021024,0.002095584884,0.002109215116,0.6483176928,200,0.002316742142,1.101951171,76.21765601,1,1.6024,2.5,4.756468798,19.02587519,,,3.450187846,2.070112708,0,0.3896499239,3.511078252,2.095125582,0,0.3888474359,100,4096000,4096000,1.948249619,0.2435312024,32768,15.58599696,0.3896499239,36864,1,1.2e-07,1,32768,\n";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;
    const char *text = (const char *)data + 1;
    size_t len = size - 1;
    static int known_set;
    if (!known_set) {   /* UNDERFED_FUZZ_KNOWN: fuzz_reader's --known (the analysis's known defects) */
        fuzz_doctor_set_known(getenv("UNDERFED_FUZZ_KNOWN"));
        known_set = 1;
    }
    int pick = data[0] % 5;
    fuzz_kind kind = pick == 4 ? FUZZ_DOCTOR : pick == 3 ? FUZZ_RESULTS : (fuzz_kind)pick;
    const char *scenario = pick == 3 ? "launch_storm" : NULL;
    char err[512];
    int rc = fuzz_read_one(kind, pick == 4 ? "underfed-trace.1.txt" : "fuzz.csv", scenario, text,
                           len, series_results, sizeof series_results - 1, err, sizeof err);
    if (rc == -2) {
        fprintf(stderr, "an accepted trace's diagnosis breaks a bound: %s\n", err);
        abort();
    }
    if (rc < 0) {
        fprintf(stderr, "refused without FILE:LINE: %s\n", err);
        abort();
    }
    return 0;
}
