/* underfed doctor: what it judges (doctor.h says what each step does). The rule table and its
 * verdicts, the kernel-name classes (elementwise, GEMM, tensor-core, GEMV, nvjet tiles,
 * misaligned), and the rules that turn the figures into findings. The figures are measured in
 * doctor.c; the ceilings comparison and the output are in doctor_report.c. */
#include "doctor.h"

#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "doctor_internal.h"

/* ---- the rule table -------------------------------------------------------------------------- */

const uf_doctor_rule uf_doctor_rules[UF_N_RULES] = {
    [UF_RULE_LAUNCH_BOUND] = {
        .id = "launch_bound",
        .failure = "launch storm: the GPU finishes each kernel before the host has launched the next",
        .share = "device idle while the thread that submits the next work was inside launch calls (that work's until it starts, or another's), or dispatching between them (outside CUDA calls for at most 100 us between two: a framework's per-op cost)",
        .moderate_pct = 3.0, .high_pct = 15.0, .gate = "", .gate_value = NAN, .gate_min_pct = NAN,
        .fix = "fewer, larger kernels: CUDA graphs (torch.compile mode=\"reduce-overhead\"), fused kernels",
        .gain = "launching cost the host nothing (no launch call or dispatch between kernels: one graph a step)",
        .host_side = 1,
        .scenario = "launch_storm",
        .source = "issue #20: launch-bound share >= 3 % moderate, >= 15 % high"},
    [UF_RULE_HOST_SYNC] = {
        .id = "host_sync",
        .failure = "host synchronization inside the step (.item(), cudaStreamSynchronize, a blocking read-back)",
        .share = "device idle after a drain of the submitting thread: its call (sync, blocking read-back, pageable copy; the driver's syncs too) in flight when the device ran out of work (the timeline's drains), as long as it had waited in the call while the device ran, at most the gap; and idle while it was inside other calls that wait for the device",
        .moderate_pct = 3.0, .high_pct = 10.0, .gate = "", .gate_value = NAN, .gate_min_pct = NAN,
        .fix = "keep values on the device; read them after the loop or every N steps (non_blocking copy to pinned memory + event)",
        .gain = "the host never waited for the device inside the step",
        .host_side = 1,
        .scenario = "host_sync (examples/pytorch/item_sync.py)",
        .source = "same scale as launch_bound: a stall of 10 % of every step is high"},
    [UF_RULE_STARVED_INPUT] = {
        .id = "starved_input",
        .failure = "starved input: the step waits for the host to prepare and copy its batch",
        .share = "device idle while the submitting thread worked outside CUDA (stretches > 100 us between calls) and the first device work it launched next was a host-to-device copy of at least 4 KiB (the batch; a smaller one is a value), or was inside that copy's call; + host-to-device copy time not under a kernel",
        .moderate_pct = 5.0, .high_pct = 20.0, .gate = "", .gate_value = NAN, .gate_min_pct = NAN,
        .fix = "prepare batches ahead (DataLoader num_workers > 0, prefetch), pinned memory, non_blocking copies on a side stream",
        .gain = "each batch were on the device when the step needed it",
        .host_side = 1,
        .scenario = "starved_input",
        .source = "starved_input's README: 20-60 % idle is the failure; 5 % is within launch noise"},
    [UF_RULE_HOST_BOUND] = {
        .id = "host_bound",
        .failure = "host-bound: the GPU waits while the host works outside CUDA (Python, data preparation, logging)",
        .share = "device idle while the submitting thread worked outside CUDA calls (stretches > 100 us between two) and launched other work than a copy to the device next, or was inside CUDA calls that neither launch, wait, allocate nor load code (queries, attributes)",
        .moderate_pct = 5.0, .high_pct = 20.0, .gate = "", .gate_value = NAN, .gate_min_pct = NAN,
        .fix = "take that work off the critical path (DataLoader workers, prefetch, asynchronous logging) or do less of it per step (torch.compile, larger steps)",
        .gain = "the GPU never waited for the host's own work",
        .host_side = 1,
        .scenario = "",
        .source = "the scale of starved_input, its input-side case: the host's time between launches of a few % is a loop's own cost"},
    [UF_RULE_ALLOC_CHURN] = {
        .id = "alloc_churn",
        .failure = "allocator churn: the GPU waits while the host allocates and frees device memory every step (cudaMalloc, cudaFree: torch.cuda.empty_cache(), a pool turned off, buffers made per step)",
        .share = "device idle while the submitting thread was inside a call that allocates, frees or pins memory, and after a drain that returned in a free (cudaFree waits for the device)",
        .moderate_pct = 3.0, .high_pct = 10.0, .gate = "", .gate_value = NAN, .gate_min_pct = NAN,
        .fix = "keep device memory across steps: no torch.cuda.empty_cache() or frees in the loop, buffers allocated once and reused, a caching or stream-ordered pool (PyTorch's caching allocator, CuPy's memory pool, cudaMallocAsync)",
        .gain = "the host never allocated or freed memory inside the step",
        .host_side = 1,
        .scenario = "host_sync malloc_free (its fix: pool)",
        .source = "the scale of host_sync: the host held in the driver while the device has nothing to run, as in a sync; on the H200 (2026-12-02) a PyTorch MLP calling empty_cache() a step spent 52 % of it on the ~19 cudaMalloc and ~19 cudaFree that follow (examples/heldout/empty_cache.py)"},
    [UF_RULE_KERNEL_COMPILE] = {
        .id = "kernel_compile",
        .failure = "kernels compiled inside the steps: new shapes make a library or compiler build and load a kernel (cuDNN's runtime-compiled kernels, torch.compile's recompiles, XLA, the driver's JIT from PTX) while the GPU waits",
        .share = "device idle while the submitting thread was inside a call that loads or links device code (cuModuleLoad*, cuLibraryLoad*, cuLink*), or worked outside CUDA and loaded device code before it next launched work; where steps like the steady ones ran before a stretch the window leaves out (a recompilation after the warm-up; slow leading steps that kept loading code), the same idle over the run since those steps, when that share is the larger (% of run)",
        .moderate_pct = 3.0, .high_pct = 10.0, .gate = "", .gate_value = NAN, .gate_min_pct = NAN,
        .fix = "keep the shapes fixed: pad to a few lengths (bucketing), torch.compile(dynamic=True) or mark_dynamic, every shape run once before the loop; a JIT cache large enough to keep the kernels (CUDA_CACHE_MAXSIZE)",
        .gain = "no kernel were built or loaded inside the steps",
        .host_side = 1,
        .scenario = "",
        .source = "the scale of alloc_churn: the host held while the device has nothing to run; on the H200 (2026-12-02) a text classifier whose padded length changes every step (examples/heldout/text_loader.py) left the GPU idle 45-88 ms at a time while the host built kernels for new lengths, each stretch ending in cuLibraryLoadData and the new kernel (cuDNN's attention) launched after it"},
    [UF_RULE_COMM_EXPOSED] = {
        .id = "comm_exposed",
        .failure = "unoverlapped all-reduce: communication runs after the compute instead of under it",
        .share = "communication (NCCL kernels) not overlapped by compute",
        .moderate_pct = 5.0, .high_pct = 20.0,
        .gate = "communication >= 10 % of the step and overlapped < 50 %", .gate_value = 50.0,
        .gate_min_pct = 10.0,
        .fix = "bucketed all-reduce launched during backward (DDP bucket_cap_mb), on its own stream",
        .gain = "all communication ran under compute",
        .scenario = "allreduce_overlap",
        .source = "issue #20: communication > 10 % of the step and < 50 % overlapped"},
    [UF_RULE_ELEMENTWISE_CHAIN] = {
        .id = "elementwise_chain",
        .failure = "bandwidth-bound chain: memory-bound kernels one after another (elementwise ops, dropout, casts, norms, softmax, ...), each re-reading and re-writing the tensor",
        .share = "kernel time in runs of >= 3 consecutive memory-bound kernels in a step: by kernel family (docs/doctor.md's table), or with counters by what they did (DRAM >= 50 % while busy, tensor pipes under 10 %); GEMMs, decode matrix products and communication never count",
        .moderate_pct = 20.0, .high_pct = 40.0, .gate = "", .gate_value = NAN, .gate_min_pct = NAN,
        .fix = "fuse the chain (torch.compile, a fused kernel): one read and one write per tensor",
        .gain = "the chains cost nothing (fused, they still make one pass: less than this)",
        .scenario = "elementwise_chain",
        .source = "elementwise_chain's README: 5 unfused ops move 11 tensors where 3 suffice"},
    [UF_RULE_LOW_SM_FILL] = {
        .id = "low_sm_fill",
        .failure = "small batch: kernels too small to fill the GPU (NVML says 100 %, SMs idle)",
        .share = "with counters (PM sampling's SM active over the steady window): busy x (100 - SM active); without: kernel time x share of SMs its grid leaves empty",
        .moderate_pct = 10.0, .high_pct = 30.0,
        .gate = "with counters: NVML utilization (without NVML, the trace's busy share) >= 90 %",
        .gate_value = 90.0, .gate_min_pct = NAN,
        .fix = "larger batch or micro-batch, fused kernels, more tokens per step",
        .gain = "every SM were busy whenever a kernel ran",
        .scenario = "small_batch one_block (launch_storm's tiny kernels too)",
        .source = "issue #20: SM active < 50 % while NVML >= 90 %"},
    [UF_RULE_SIMT_GEMM] = {
        .id = "simt_gemm",
        .failure = "tensor-core-unfriendly GEMMs: matrix products on the CUDA cores (fp32, odd shapes)",
        .share = "GEMM kernel time (GEMVs and GEMMs tiled for <= 16 tokens not counted: decode_gemv) whose kernel name says the CUDA cores (ffma, simt, sgemm, dgemm, gemmSN, gemmk1) or a misaligned tensor-core path (align1/align2: rows not 16-byte aligned); with counters, also the other GEMMs' time (tensor-core names, and names that say neither, such as XLA's gemm_fusion_dot) when tensor active is under a quarter of it and DRAM under 50 % (else they were memory-bound: small batch)",
        .moderate_pct = 10.0, .high_pct = 30.0, .gate = "", .gate_value = NAN, .gate_min_pct = NAN,
        .fix = "bf16/fp16 or TF32 (torch.backends.cuda.matmul.allow_tf32), dimensions multiple of 8/16",
        .gain = "those GEMMs cost nothing (on tensor cores they take about a sixth: less than this)",
        .scenario = "tensor_alignment",
        .source = "tensor_alignment on the H200: fp32 SIMT 6.47x slower than TF32, an align1 bf16 GEMM 6.41x slower per useful FLOP than its padded twin"},
    [UF_RULE_DECODE_GEMV] = {
        .id = "decode_gemv",
        .failure = "serial decode: matrix products of one or a few tokens stream every weight for them (batch-1 generation)",
        .share = "kernel time in decode-shaped matrix products: GEMV kernels (name contains gemv, any case: cuBLAS gemv2T/gemv2N/gemvx, CUTLASS Gemv, serial_decode's sd_gemv_kernel) and cuBLAS nvjet GEMMs whose CTA tile has a side <= 16 (nvjet_sm90_tst_128x8_...: what cuBLAS picked for 1 to 16 tokens of bf16 F.linear on the H200; other layouts can get wider tiles, not counted); simt_gemm does not count them",
        .moderate_pct = 10.0, .high_pct = 30.0, .gate = "", .gate_value = NAN, .gate_min_pct = NAN,
        .fix = "decode many sequences together (continuous batching) so each weight read serves many tokens; a CUDA graph removes the launch gaps, not the weight stream; smaller weights (quantization) cut the bytes",
        .gain = "those matrix products cost nothing (batched, each weight read serves many tokens: less than this)",
        .scenario = "serial_decode (its claims not yet held on the H200: issue #30); examples/pytorch/serial_decode.py",
        .source = "on the H200, 2026-12-01: examples/pytorch/serial_decode.py at batch 1 as a CUDA graph spends 72 % of its step in 128x8 nvjet GEMMs, and 64 sequences decode 43x the tokens/s of one; the serial_decode scenario on the H200 (its first version, 2026-12-01) read decode_gemv high for eager_b1, graph_b1 and persistent at d = 4096 (71.4, 71.1, 99.8 %) and none for batched"},
    [UF_RULE_PADDING] = {
        .id = "padding", .failure = "padding: attention and GEMMs on pad tokens",
        .share = "cannot tell: a padded kernel looks busy and well fed; only the count of real tokens shows the waste",
        .moderate_pct = NAN, .high_pct = NAN, .gate = "", .gate_value = NAN, .gate_min_pct = NAN,
        .fix = "pack sequences (varlen attention), bucket by length",
        .gain = "",
        .scenario = "varlen_attention", .source = "a trace has no token counts"},
    [UF_RULE_RECOMPUTE] = {
        .id = "recompute", .failure = "activation recompute: forward kernels run again during backward",
        .share = "cannot tell: a re-run kernel is ordinary work in a trace; only the FLOP count per step shows it",
        .moderate_pct = NAN, .high_pct = NAN, .gate = "", .gate_value = NAN, .gate_min_pct = NAN,
        .fix = "selective checkpointing: keep cheap-to-store activations",
        .gain = "",
        .scenario = "checkpoint_recompute", .source = "a trace has no model FLOP count"},
};

const char *uf_doctor_verdict_name(uf_doctor_level v)
{
    static const char *const names[] = {"none", "moderate", "high", "cannot tell"};
    return (unsigned)v < 4 ? names[v] : "?";
}

uf_doctor_level uf_doctor_verdict(uf_rule_id r, double share_pct, int gate_holds)
{
    const uf_doctor_rule *rule = &uf_doctor_rules[r];
    if (isnan(rule->moderate_pct))
        return UF_VERDICT_CANNOT_TELL;
    if (!gate_holds || isnan(share_pct))
        return UF_VERDICT_NONE;
    if (share_pct >= rule->high_pct)
        return UF_VERDICT_HIGH;
    return share_pct >= rule->moderate_pct ? UF_VERDICT_MODERATE : UF_VERDICT_NONE;
}

/* ---- kernel-name classes --------------------------------------------------------------------- */

/* Does name match a pattern: contain it, or begin with it where it starts with '^'? */
static int matches_any(const char *name, const char *const *patterns)
{
    for (int i = 0; name != NULL && patterns[i] != NULL; i++) {
        const char *p = patterns[i];
        if (p[0] == '^' ? strncmp(name, p + 1, strlen(p + 1)) == 0 : strstr(name, p) != NULL)
            return 1;
    }
    return 0;
}

/* ---- memory-bound kernel families ------------------------------------------------------------ */

/* Kernels that by what they do read and write their tensors once per element with a few
 * operations each, so that their time is DRAM traffic: a chain of them re-reads and re-writes
 * what one fused kernel would read once. By family, from the names their libraries give them
 * (substrings, or prefixes where a pattern begins with '^'); names mangled or demangled alike.
 * Which families, and why each is memory-bound, is the mechanism; the patterns are each
 * library's naming. */
static const char *const pytorch_elementwise[] = {
    "elementwise_kernel", "vectorized_elementwise", "unrolled_elementwise", "ew_chain", NULL};
static const char *const dropout[] = {"dropout", NULL};
static const char *const casts_and_copies[] = {"copy_kernel", "CatArrayBatchedCopy",
                                               "direct_copy", NULL};
static const char *const norms[] = {"layer_norm", "LayerNorm", "layernorm", "rms_norm", "RMSNorm",
                                    "rmsnorm", "RowwiseMoments", "batch_norm", "BatchNorm",
                                    "group_norm", "GroupNorm", "bn_fw_", "bn_bw_", NULL};
static const char *const softmax[] = {"softmax", "SoftMax", "Softmax", NULL};
static const char *const reductions[] = {"reduce_kernel", "DeviceReduce", "DeviceSegmentedReduce",
                                         "nll_loss", NULL};
static const char *const indexing[] = {"index_select", "indexSelect", "index_elementwise",
                                       "indexing_backward", "index_put", "gather", "scatter",
                                       "embedding_backward", NULL};
static const char *const foreach_optim[] = {"multi_tensor_apply", NULL};
static const char *const triton_fused[] = {"triton_poi_", "triton_red_", "triton_per_", NULL};
static const char *const cupy[] = {"^cupy_", NULL};
static const char *const xla[] = {"^loop_", "^input_", "^wrapped_", "^fusion", NULL};

static const struct memory_family {
    const char *family;
    const char *why;
    const char *const *patterns;
} memory_families[] = {
    {"PyTorch elementwise", "one read and one write per element of each tensor (vectorized, "
     "unrolled, and the suite's ew_chain)", pytorch_elementwise},
    {"dropout", "a mask and a scale per element (fused_dropout_kernel_vec, ...)", dropout},
    {"casts and copies", "a copy per element (dtype casts, contiguous(), cat)", casts_and_copies},
    {"layer, RMS, batch and group norm", "two passes over a row: statistics, then scale", norms},
    {"softmax", "a max, a sum and a scale over each row", softmax},
    {"reductions", "one read per element (sum, mean, the loss)", reductions},
    {"index, gather and scatter", "a read and a write per index (embeddings, indexing)", indexing},
    {"PyTorch foreach and fused optimizers", "each parameter, gradient and optimizer state read "
     "and written once per step (multi_tensor_apply: Adam, SGD, AMP's unscale, grad norms)",
     foreach_optim},
    {"Triton pointwise and reductions", "torch.compile's fused kernels (triton_poi_, "
     "triton_red_, triton_per_): a chain of them is what the compiler left unfused",
     triton_fused},
    {"CuPy", "its ufuncs, reductions and elementwise kernels (cupy_*)", cupy},
    {"XLA loop and input fusions", "JAX's elementwise and reduction kernels (loop_*, input_*, "
     "wrapped_*, fusion*)", xla},
};
enum { N_MEMORY_FAMILIES = sizeof memory_families / sizeof memory_families[0] };

const char *uf_doctor_memory_family(const char *name)
{
    for (int i = 0; name != NULL && i < N_MEMORY_FAMILIES; i++)
        if (matches_any(name, memory_families[i].patterns))
            return memory_families[i].family;
    return NULL;
}

int uf_doctor_is_triton_fused(const char *name) { return matches_any(name, triton_fused); }

void uf_doctor_families_markdown(uf_strbuf *b)
{
    uf_sb_puts(b, "| family | why memory-bound | kernel names |\n|---|---|---|\n");
    for (int i = 0; i < N_MEMORY_FAMILIES; i++) {
        const struct memory_family *f = &memory_families[i];
        uf_sb_printf(b, "| %s | %s |", f->family, f->why);
        for (int k = 0; f->patterns[k] != NULL; k++) {
            const char *p = f->patterns[k];
            uf_sb_printf(b, "%s`%s`%s", k ? ", " : " ", p[0] == '^' ? p + 1 : p,
                         p[0] == '^' ? "..." : "");
        }
        uf_sb_puts(b, " |\n");
    }
}

/* ---- GEMM classes ---------------------------------------------------------------------------- */

/* cuBLAS/CUTLASS/nvjet GEMM kernels. */
static const char *const gemm_names[] = {"gemm", "Gemm", "GEMM", "nvjet", "matmul", NULL};
/* Their tensor-core paths: HMMA/XMMA/GMMA instructions, CUTLASS tensorop, Hopper nvjet. */
static const char *const tensor_core_names[] = {
    "xmma", "hmma", "gmma", "tensorop", "16816", "1688", "nvjet", "wmma", NULL};

/* ... unless the name says the math is CUDA-core FMAs: cuBLAS's fp32 fallback on Hopper is
 * "sm80_xmma_gemm_f32f32_..._ffma_...", an XMMA-framework kernel without tensor cores (measured
 * in tensor_alignment's fp32 variant on the H200); CUTLASS names its CUDA-core kernels simt. */
static const char *const cuda_core_names[] = {"ffma", "simt", NULL};

/* Does name contain pattern (lower case) in any case? */
static int contains_nocase(const char *name, const char *pattern)
{
    size_t n = strlen(pattern);
    for (const char *p = name; p != NULL && *p != '\0'; p++) {
        size_t i = 0;
        while (i < n && p[i] != '\0' && tolower((unsigned char)p[i]) == pattern[i])
            i++;
        if (i == n)
            return 1;
    }
    return 0;
}

/* A GEMM name; never a Triton pointwise or reduction, whose names list the ops they fused
 * ("triton_poi_fused_addmm_gelu_0" is the bias and activation after a matmul). */
int uf_doctor_is_gemm(const char *name)
{
    return matches_any(name, gemm_names) && !uf_doctor_is_triton_fused(name);
}
int uf_doctor_is_tensor_core(const char *name)
{
    return matches_any(name, tensor_core_names) && !matches_any(name, cuda_core_names);
}

/* cuBLAS's and CUTLASS's CUDA-core GEMMs by name: ampere_sgemm_*, cutlass_*_simt_sgemm_*,
 * *_dgemm_*, cuBLAS's small-N gemmSN and its k = 1 gemmk1 kernels. */
static const char *const cuda_core_gemm_names[] = {"sgemm", "dgemm", "gemmSN", "gemmk1", NULL};

int uf_doctor_is_cuda_core_gemm(const char *name)
{
    return uf_doctor_is_gemm(name) &&
           (matches_any(name, cuda_core_names) || matches_any(name, cuda_core_gemm_names));
}
int uf_doctor_is_gemv(const char *name) { return contains_nocase(name, "gemv"); }

/* The smaller side of an nvjet kernel's CTA tile: the first "_AxB_" field of its name with
 * positive decimal sides ("nvjet_sm90_tst_128x8_64x12_2x1_v_bz_TNT": 128 x 8, so 8); 0 when
 * the name is not nvjet or has no such field. */
int uf_doctor_nvjet_tile_min(const char *name)
{
    const char *p = name != NULL ? strstr(name, "nvjet") : NULL;
    for (; p != NULL && (p = strchr(p, '_')) != NULL; p++) {
        char *end;
        if (!isdigit((unsigned char)p[1]))     /* strtol would take a sign or spaces */
            continue;
        long a = strtol(p + 1, &end, 10), b;
        if (*end != 'x' || !isdigit((unsigned char)end[1]))
            continue;
        b = strtol(end + 1, &end, 10);
        if (*end == '_' && a > 0 && b > 0 && a < 100000 && b < 100000)
            return (int)(a < b ? a : b);
    }
    return 0;
}

int uf_doctor_is_decode_matmul(const char *name)
{
    int tile = uf_doctor_nvjet_tile_min(name);
    return uf_doctor_is_gemv(name) || (tile > 0 && tile <= UF_DOCTOR_SKINNY_TILE);
}

/* A CUTLASS/cuBLAS kernel name's operand alignment, in elements: "align1", "align2" (or
 * "aligna1", the A operand's) say the operands' rows are not 16-byte aligned for any element
 * of <= 4 bytes, so the kernel cannot use 16-byte loads: the slow path an odd leading
 * dimension forces (tensor_alignment's odd_vocab runs cutlass_75_tensorop_bf16_s1688gemm_bf16_
 * 128x128_tn_align1 on the H200, 0.156 of the padded GEMM's rate). "align4" and up, and names
 * without an alignment (nvjet), are not counted. */
int uf_doctor_is_misaligned(const char *name)
{
    for (const char *p = name; p != NULL && (p = strstr(p, "align")) != NULL; p++) {
        const char *q = p + 5;
        while (*q >= 'a' && *q <= 'z')       /* "aligna4", "alignc4": the operand's letter */
            q++;
        if ((*q == '1' || *q == '2') && !(q[1] >= '0' && q[1] <= '9'))
            return 1;
    }
    return 0;
}

/* ---- the rules ------------------------------------------------------------------------------- */

static void set_finding(uf_diagnosis *d, uf_rule_id r, double share, int gate, const char *fmt,
                        ...) __attribute__((format(printf, 5, 6)));

static void set_finding(uf_diagnosis *d, uf_rule_id r, double share, int gate, const char *fmt,
                        ...)
{
    uf_finding *f = &d->findings[r];
    f->rule = r;
    f->share_pct = isnan(uf_doctor_rules[r].moderate_pct) ? NAN : share;
    f->verdict = uf_doctor_verdict(r, share, gate);
    double left = 100.0 - f->share_pct;     /* the step without the share at stake, in % */
    f->gain_x = isnan(left) ? NAN : left * UF_DOCTOR_GAIN_MAX <= 100.0 ? UF_DOCTOR_GAIN_MAX
                                                                       : 100.0 / left;
    f->step_without_ms = d->step_ms / f->gain_x;
    f->span_ms = 0.0;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(f->evidence, sizeof f->evidence, fmt, ap);
    va_end(ap);
}

uf_doctor_num_text uf_doctor_num(double v, int decimals)
{
    uf_doctor_num_text n;
    if (isnan(v))
        snprintf(n.s, sizeof n.s, "n/a");
    else
        snprintf(n.s, sizeof n.s, "%.*f", decimals, v);
    return n;
}

/* low_sm_fill. With SM active (PM sampling): the busy time whose SMs sat idle, busy x
 * (100 - SM active), counted while NVML calls the GPU busy (its gate; the trace's busy share
 * stands in where NVML was not read). Without: kernel time x the share of SMs its grid leaves
 * empty (grid sizes: a full grid of stalled blocks looks full). */
static void low_sm_fill(uf_diagnosis *d, double step)
{
    const uf_timeline_metrics *m = &d->tl;
    const double gate_pct = uf_doctor_rules[UF_RULE_LOW_SM_FILL].gate_value;
    if (!isnan(d->sm_active_pct)) {
        double fill = m->busy_pct * (100.0 - fmin(d->sm_active_pct, 100.0)) / 100.0;
        int nvml = !isnan(d->nvml_util_pct);
        double util = nvml ? d->nvml_util_pct : m->busy_pct;
        set_finding(d, UF_RULE_LOW_SM_FILL, fill, util >= gate_pct,
                    "SM active %.1f %% while %s says %.0f %% (gate %.0f %%); busy %.1f %% "
                    "(from counters)", d->sm_active_pct, nvml ? "NVML" : "the trace's busy share",
                    util, gate_pct, m->busy_pct);
        return;
    }
    set_finding(d, UF_RULE_LOW_SM_FILL, d->underfilled_ms / step * 100.0, 1,
                "%.3f ms/step of SM time left empty by grids smaller than the %d SMs (from "
                "grid sizes: no counters%s%s)", d->underfilled_ms, d->sm_count,
                d->counters_note[0] ? ": " : "", d->counters_note);
}

/* simt_gemm. GEMM kernels whose name says they run on the CUDA cores, or on a misaligned
 * tensor-core path (align1/2); with tensor active (PM sampling), also the other GEMMs
 * (tensor-core-named, and those whose name says nothing of the path) when the tensor pipes
 * were active less than UF_DOCTOR_TENSOR_IDLE of their time (a fallback kernel keeps its
 * tensorop name), unless DRAM was UF_DOCTOR_DRAM_BOUND busy: then they waited on memory. */
static void simt_gemm(uf_diagnosis *d, double step)
{
    double tc = (d->tc_gemm_ms + d->unknown_gemm_ms) / step * 100.0;
    int idle = !isnan(d->tensor_active_pct) && tc > 0.0 &&
               d->tensor_active_pct < UF_DOCTOR_TENSOR_IDLE * tc;
    int memory_bound = idle && d->dram_pct >= UF_DOCTOR_DRAM_BOUND;   /* false when NaN */
    int with_tc = idle && !memory_bound;
    /* the union of the classes it counts: kernels of two classes at once count once */
    double share = (with_tc ? d->gemm_any_ms : d->simt_any_ms) / step * 100.0;
    set_finding(d, UF_RULE_SIMT_GEMM, share, 1,
                "%.3f ms/step in GEMM kernels on the CUDA cores by name (ffma, simt, sgemm), "
                "%.3f ms/step in misaligned ones (align1/align2), %.3f ms/step in tensor-core "
                "ones, %.3f ms/step in ones whose name says neither; tensor active %s %%%s",
                d->simt_gemm_ms, d->misaligned_gemm_ms, d->tc_gemm_ms, d->unknown_gemm_ms,
                uf_doctor_num(d->tensor_active_pct, 1).s,
                memory_bound ? " (under a quarter of the other GEMMs' time, but DRAM busy: "
                               "memory-bound, not counted)"
                : idle ? " (under a quarter of the other GEMMs' time: counted)" : "");
}

/* decode_gemv. Kernel time in decode-shaped matrix products (GEMVs, and GEMMs tiled for a few
 * tokens): each streams its whole weight matrix from HBM for one token or a few (batch-1
 * decode). The verdict is the share alone; DRAM % is evidence only, printed, not a gate. */
static void decode_gemv(uf_diagnosis *d, double step)
{
    set_finding(d, UF_RULE_DECODE_GEMV, d->gemv_ms / step * 100.0, 1,
                "%.3f ms/step in GEMVs and GEMMs tiled for <= %d tokens (%.1f %% of the step, "
                "%.1f of them per step); "
                "DRAM %s %%", d->gemv_ms, UF_DOCTOR_SKINNY_TILE, d->gemv_ms / step * 100.0,
                d->gemv_per_step,
                uf_doctor_num(d->dram_pct, 1).s);
}

/* kernel_compile: the steady window's idle while the host built or loaded code, or, where
 * steps like the steady ones had run before the window and the host compiled after them (a
 * recompilation the window leaves out as start-up), that idle's share of the run since those
 * steps (the window's included), when it is the larger and at least moderate: the share and
 * the gain are then of that span (uf_finding.span_ms). */
static void kernel_compile(uf_diagnosis *d)
{
    int run = d->recompile_ms > 0.0 && d->recompile_pct > d->compile_gap_pct &&
              d->recompile_pct >= uf_doctor_rules[UF_RULE_KERNEL_COMPILE].moderate_pct;
    char recompiled[160] = "";
    if (d->recompile_ms > 0.0)
        snprintf(recompiled, sizeof recompiled, "; %.1f ms of it after the run's first steps, "
                 "before the steady window (a recompilation): %.1f %% of the %.1f s since",
                 d->recompile_ms, d->recompile_pct, d->since_steps_ms / 1e3);
    set_finding(d, UF_RULE_KERNEL_COMPILE, run ? d->recompile_pct : d->compile_gap_pct, 1,
                "%.1f %% of the step idle while the host built or loaded device code; %.2f "
                "code loads/step (cuModuleLoad*, cuLibraryLoad*, ...), %.3f ms/step in them%s",
                d->compile_gap_pct, d->load_calls_per_step, d->load_ms_per_step, recompiled);
    if (run) {
        uf_finding *f = &d->findings[UF_RULE_KERNEL_COMPILE];
        f->span_ms = d->since_steps_ms;
        f->step_without_ms = d->since_steps_ms / f->gain_x;
    }
}

/* Whether the host thread ran or slept during its own work (part_pct of the step), in words:
 * "ran 97 % of it: WHEN_RAN", "slept 90 % of it: WHEN_SLEPT" (at most half of it run), that the
 * host state was not recorded, or "none" without such time. */
static void host_ran_text(char *out, size_t len, double part_pct, double ran_pct,
                          const char *when_ran, const char *when_slept)
{
    if (!(part_pct > 0.0))
        snprintf(out, len, "none");
    else if (isnan(ran_pct))
        snprintf(out, len, "host state not recorded");
    else if (ran_pct > 50.0)
        snprintf(out, len, "its thread ran %.0f %% of it: %s", ran_pct, when_ran);
    else
        snprintf(out, len, "its thread slept %.0f %% of it: %s", 100.0 - ran_pct, when_slept);
}

void uf_doctor_apply_rules(uf_diagnosis *d)
{
    double step = d->tl.window_ms / d->n_steps;
    const uf_timeline_metrics *m = &d->tl;
    char graph[96] = "";
    if (d->idle_graph_launch_pct >= 0.05)
        snprintf(graph, sizeof graph, " (%.1f of it in graph launches, not counted: the "
                 "recorder slows them)", d->idle_graph_launch_pct);
    set_finding(d, UF_RULE_LAUNCH_BOUND, d->launch_gap_pct, 1,
                "%.1f %% of the step idle in launch calls%s, %.1f %% dispatching between them; "
                "%.0f kernels/step of %s us mean, launch-to-start %s us; busy %.1f %%",
                d->idle_launch_pct, graph, d->idle_dispatch_pct, m->kernels_per_step,
                uf_doctor_num(m->kernel_us_mean, 1).s, uf_doctor_num(m->launch_us, 1).s,
                m->busy_pct);
    set_finding(d, UF_RULE_HOST_SYNC, d->sync_gap_pct, 1,
                "%.1f %% of the step idle after syncs; %.2f syncs/step, %.2f calls/step that drained "
                "the device (syncs, frees, blocking copies: %s us idle after each, returning at "
                "%s %% of the step)", d->sync_gap_pct,
                m->syncs_per_step, m->drains_per_step, uf_doctor_num(m->sync_gap_us, 1).s,
                uf_doctor_num(d->sync_pos_pct, 0).s);
    /* the exposed copies' share of the same time as the idle parts: the devices' (doctor.h) */
    double input = d->input_gap_pct +
                   d->h2d_exposed_ms / step * 100.0 / (d->n_devices > 1 ? d->n_devices : 1);
    char ran[96];
    host_ran_text(ran, sizeof ran, d->idle_input_pct, d->input_ran_pct,
                  "it prepares the data itself", "it waits for workers or I/O");
    set_finding(d, UF_RULE_STARVED_INPUT, input, 1,
                "%.1f %% of the step idle while the host prepared input (%s); %.3f ms/step of "
                "host-to-device copies exposed; %.1f pageable copies/step", d->input_gap_pct,
                ran, d->h2d_exposed_ms, m->pageable_copies_per_step);
    host_ran_text(ran, sizeof ran, d->idle_work_pct, d->work_ran_pct, "it computes",
                  "it waits: I/O, a lock");
    set_finding(d, UF_RULE_HOST_BOUND, d->host_gap_pct, 1,
                "%.1f %% of the step idle while the host worked outside CUDA (%s), %.1f %% in "
                "other CUDA calls", d->idle_work_pct, ran, d->idle_api_pct);
    set_finding(d, UF_RULE_ALLOC_CHURN, d->alloc_gap_pct, 1,
                "%.1f %% of the step idle while the host allocated or freed memory; %.1f "
                "allocator calls/step (cudaMalloc, cudaFree, ...), %.3f ms/step in them",
                d->alloc_gap_pct, d->alloc_calls_per_step, d->alloc_ms_per_step);
    kernel_compile(d);
    double comm_share = m->comm_ms_per_step / step * 100.0;
    double exposed = isnan(m->comm_exposed_ms) ? 0.0 : m->comm_exposed_ms / step * 100.0;
    const uf_doctor_rule *comm = &uf_doctor_rules[UF_RULE_COMM_EXPOSED];
    int comm_gate = comm_share >= comm->gate_min_pct && !(m->comm_overlap_pct >= comm->gate_value);
    set_finding(d, UF_RULE_COMM_EXPOSED, exposed, comm_gate,
                "communication %.1f %% of the step, %s %% overlapped, %s ms/step exposed",
                comm_share, uf_doctor_num(m->comm_overlap_pct, 0).s,
                uf_doctor_num(m->comm_exposed_ms, 3).s);
    char triton[96] = "";
    if (d->chain_triton_per_step > 0.0)
        snprintf(triton, sizeof triton, ", %.1f of them Triton's: what torch.compile left "
                 "unfused", d->chain_triton_per_step);
    set_finding(d, UF_RULE_ELEMENTWISE_CHAIN, d->elementwise_ms / step * 100.0, 1,
                "%.3f ms/step in memory-bound chains (%.1f kernels/step memory-bound by family, "
                "%.1f by the counters%s; signal: %s); DRAM %s %%", d->elementwise_ms,
                d->chain_family_per_step, d->chain_counters_per_step, triton,
                d->chain_counters ? "kernel families and counters" : "kernel families (no counters)",
                uf_doctor_num(d->dram_pct, 0).s);
    low_sm_fill(d, step);
    simt_gemm(d, step);
    decode_gemv(d, step);
    set_finding(d, UF_RULE_PADDING, NAN, 1, "%s", uf_doctor_rules[UF_RULE_PADDING].share);
    set_finding(d, UF_RULE_RECOMPUTE, NAN, 1, "%s", uf_doctor_rules[UF_RULE_RECOMPUTE].share);
}

/* Rank: the findings rated moderate or high first, by the share of the step at stake (the
 * most their fix could gain: a moderate chain of 38 % of the step before a high GEMM rule at
 * 36 %), high before moderate at equal shares; then those rated none, larger share first;
 * cannot tell last. The verdict says whether a share is out of the ordinary for its rule
 * (each rule's own thresholds); the order says which would gain the most. */
static int rank_of(const uf_finding *f)
{
    switch (f->verdict) {
    case UF_VERDICT_HIGH:
    case UF_VERDICT_MODERATE: return 2;
    case UF_VERDICT_NONE: return 1;
    default: return 0;
    }
}

/* Whether a ranks before (or with) b. */
static int ranks_first(const uf_finding *a, const uf_finding *b)
{
    int ra = rank_of(a), rb = rank_of(b);
    if (ra != rb)
        return ra > rb;
    double sa = isnan(a->share_pct) ? -1 : a->share_pct;
    double sb = isnan(b->share_pct) ? -1 : b->share_pct;
    if (sa != sb)
        return sa > sb;
    return a->verdict >= b->verdict;
}

void uf_doctor_order_findings(uf_diagnosis *d)
{
    for (int i = 0; i < UF_N_RULES; i++)
        d->order[i] = i;
    for (int i = 1; i < UF_N_RULES; i++)
        for (int j = i; j > 0; j--) {
            if (ranks_first(&d->findings[d->order[j - 1]], &d->findings[d->order[j]]))
                break;
            int tmp = d->order[j];
            d->order[j] = d->order[j - 1];
            d->order[j - 1] = tmp;
        }
}
