"""Unit tests of the corpus's truth (examples/corpus/truth_analysis.py) on synthetic profiler
traces: no torch, no GPU (ctest unit.doctor_corpus_dry runs it).

    python3 tests/unit/corpus_truth_test.py [-v]"""
import os
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                "examples", "corpus"))
import truth_analysis as ta  # noqa: E402

MAIN, LOADER = 100, 200


class Trace:
    """A Chrome trace as kineto writes it, built event by event (times in microseconds)."""

    def __init__(self):
        self.ev, self.corr, self.ext = [], 0, 0

    def add(self, cat, name, ts, dur, tid=MAIN, **args):
        self.ev.append({"ph": "X", "cat": cat, "name": name, "ts": ts, "dur": dur, "pid": 1,
                        "tid": tid, "args": args})

    def op(self, name, ts, dur, dims=None, types=None, tid=MAIN):
        self.ext += 1
        self.add("cpu_op", name, ts, dur, tid=tid, **{"External id": self.ext,
                                                      "Input Dims": dims or [],
                                                      "Input type": types or []})

    def launch(self, ts, dur, kname, k_ts, k_dur, call="cudaLaunchKernel", tid=MAIN,
               cat="kernel"):
        self.corr += 1
        self.add("cuda_runtime", call, ts, dur, tid=tid, correlation=self.corr)
        self.add(cat, kname, k_ts, k_dur, tid=7, correlation=self.corr)

    def call(self, name, ts, dur, tid=MAIN):
        self.corr += 1
        self.add("cuda_runtime", name, ts, dur, tid=tid, correlation=self.corr)

    def marker(self, ts):
        self.add("user_annotation", ta.MARKER, ts, 0)

    def trace(self):
        return {"traceEvents": self.ev}


def line(steps, step_ms):
    return f"steps {steps} step_ms {step_ms} wall_s 1.0"


class MarkerTest(unittest.TestCase):
    def test_the_timing_line_is_marked_after_a_progress_bar(self):
        import io
        import truth_torch
        marks = []
        out = truth_torch.MarkingStdout(io.StringIO(), lambda: marks.append(1))
        out.write("Epoch 0: 50%|##  |\rEpoch 0: 100%|####|\r")
        self.assertEqual(marks, [])
        out.write("steps 200 step_ms 3.4100 wall_s 2.10")
        self.assertEqual(marks, [])                  # not before the line ends
        out.write("\nloss 0.1\n")
        self.assertEqual((marks, out.line), ([1], "steps 200 step_ms 3.4100 wall_s 2.10"))
        self.assertEqual(out.inner.getvalue().count("steps 200"), 1)


class CoveredTest(unittest.TestCase):
    def test_within_and_gaps(self):
        c = ta.Covered([(0, 10), (5, 15), (20, 30)])
        self.assertEqual(c.total, 25)
        self.assertEqual(c.within(0, 100), 25)
        self.assertEqual(c.within(12, 22), 5)
        self.assertEqual(c.within(16, 19), 0)
        self.assertEqual(c.gaps(0, 35), [(15, 20), (30, 35)])
        self.assertTrue(c.contains(15) and not c.contains(17))


class WindowTest(unittest.TestCase):
    def test_no_marker_or_line_is_an_error(self):
        t = Trace()
        t.launch(0, 5, "k", 10, 5)
        with self.assertRaises(ta.TruthError):
            ta.analyze(t.trace(), line(1, 0.1))
        t.marker(100)
        with self.assertRaises(ta.TruthError):
            ta.analyze(t.trace(), "loss 0.3")

    def test_window_ends_at_the_marker_and_spans_the_steps(self):
        t = Trace()
        t.launch(0, 5, "early", 10, 500)          # warm-up, before the window
        t.launch(1000, 5, "k", 1010, 400)
        t.launch(1500, 5, "k", 1510, 400)
        t.marker(2000)
        r = ta.analyze(t.trace(), line(2, 0.5))   # window [1000, 2000]
        self.assertAlmostEqual(r["window_ms"], 1.0)
        self.assertAlmostEqual(r["busy_pct"], 80.0)
        self.assertAlmostEqual(r["kernels_per_step"], 1.0)


class IdleSplitTest(unittest.TestCase):
    def storm(self):
        """Each 20 us step: an op whose dispatch takes 12 us, then its 4 us launch call; the
        kernel (4 us) starts when the call returns: the device waits on the host's dispatch."""
        t = Trace()
        for i in range(50):
            s = 1000 + 20 * i
            t.op("aten::mul", s, 16, [[256, 256], []], ["float", "Scalar"])
            t.launch(s + 12, 4, "vectorized_elementwise_kernel", s + 16, 4)
        t.marker(2000)
        return t

    def test_launch_storm_is_launch_bound(self):
        r = ta.analyze(self.storm().trace(), line(50, 0.02))
        self.assertAlmostEqual(r["busy_pct"], 20.0, places=5)
        self.assertEqual(r["cause"], "launch_bound")
        self.assertAlmostEqual(r["cause_pct"]["launch_bound"], 80.0, places=5)
        s = r["split_pct"]
        self.assertAlmostEqual(s["launch_call"], 20.0, places=5)
        self.assertAlmostEqual(s["dispatch"], 60.0, places=5)
        self.assertAlmostEqual(s["host"], 0.0, places=5)
        self.assertAlmostEqual(r["launch_calls_per_step"], 1.0)

    def test_python_between_steps_is_host_bound(self):
        t = Trace()
        for i in range(10):                       # 100 us steps: 10 us of GPU work, the rest
            s = 1000 + 100 * i                    # Python outside any op
            t.op("aten::add", s, 6, [[8], [8]], ["float", "float"])
            t.launch(s + 1, 4, "elementwise_kernel", s + 6, 10)
        t.marker(2000)
        r = ta.analyze(t.trace(), line(10, 0.1))
        self.assertEqual(r["cause"], "host_bound")
        self.assertGreater(r["cause_pct"]["host_bound"], 80.0)
        self.assertGreater(r["split_pct"]["host"], 80.0)

    def test_the_thread_that_submits_the_next_work_is_the_one_read(self):
        """A loader thread busy in CUDA calls does not make the main thread's Python a launch."""
        t = Trace()
        for i in range(10):
            s = 1000 + 100 * i
            t.call("cudaEventQuery", s + 10, 80, tid=LOADER)
            t.op("aten::add", s, 6, [[8], [8]], ["float", "float"])
            t.launch(s + 1, 4, "elementwise_kernel", s + 6, 10)
        t.marker(2000)
        r = ta.analyze(t.trace(), line(10, 0.1))
        self.assertEqual(r["cause"], "host_bound")
        self.assertAlmostEqual(r["split_pct"]["other_cuda"], 0.0)

    def test_calls_numbered_on_another_thread_id_join_their_ops(self):
        """Were the CUDA calls' thread ids another numbering than the ops', the calls'
        External ids tie them to their ops: the storm still reads as dispatch."""
        t = Trace()
        for i in range(50):
            s = 1000 + 20 * i
            t.op("aten::mul", s, 16, [[256, 256], []], ["float", "Scalar"])
            t.corr += 1
            t.add("cuda_runtime", "cudaLaunchKernel", s + 12, 4, tid=9999, correlation=t.corr,
                  **{"External id": t.ext})
            t.add("kernel", "vectorized_elementwise_kernel", s + 16, 4, tid=7,
                  correlation=t.corr)
        t.marker(2000)
        r = ta.analyze(t.trace(), line(50, 0.02))
        self.assertAlmostEqual(r["split_pct"]["dispatch"], 60.0, places=5)
        self.assertEqual(r["cause"], "launch_bound")

    def test_idle_after_a_drain_is_the_sync(self):
        t = Trace()
        for i in range(10):                       # GPU 60 us; .item() waits, then 30 us of
            s = 1000 + 100 * i                    # Python while the device has nothing
            t.op("aten::mm", s, 5, [[64, 64], [64, 64]], ["c10::BFloat16"] * 2)
            t.launch(s + 1, 3, "nvjet_gemm", s + 5, 60)
            t.op("aten::item", s + 6, 62)
            t.launch(s + 7, 2, "Memcpy DtoH (Device -> Pageable)", s + 65, 1,
                     call="cudaMemcpyAsync", cat="gpu_memcpy")
            t.call("cudaStreamSynchronize", s + 9, 58)
        t.marker(2000)
        r = ta.analyze(t.trace(), line(10, 0.1))
        self.assertEqual(r["cause"], "host_sync")
        self.assertGreater(r["cause_pct"]["host_sync"], 30.0)
        self.assertAlmostEqual(r["syncs_per_step"], 1.0)
        self.assertGreaterEqual(r["drained_gaps_per_step"], 0.9)
        # by host state, the idle after the sync is Python, not the sync call
        self.assertGreater(r["split_pct"]["host"], r["split_pct"]["sync_call"])

    def test_a_free_that_drains_and_the_next_allocation_are_the_allocators(self):
        """empty_cache() a step: cudaFree waits while the device finishes (a drain), then the
        next step's cudaMalloc keeps it waiting: alloc_churn, not host_sync or launch_bound."""
        t = Trace()
        for i in range(10):                       # GPU 40 us; free from s + 6 to s + 50 (the
            s = 1000 + 100 * i                    # device ran dry at s + 45), malloc 40 us
            t.op("aten::mm", s, 5, [[64, 64], [64, 64]], ["c10::BFloat16"] * 2)
            t.launch(s + 1, 3, "nvjet_gemm", s + 5, 40)
            t.call("cudaFree", s + 6, 44)
            t.call("cudaMalloc", s + 52, 40)
        t.marker(2000)
        r = ta.analyze(t.trace(), line(10, 0.1))
        self.assertEqual(r["cause"], "alloc_churn")
        self.assertGreater(r["cause_pct"]["alloc_churn"], 40.0)
        self.assertLess(r["cause_pct"]["host_sync"], 1.0)
        self.assertLess(r["cause_pct"]["launch_bound"], 15.0)
        self.assertGreater(r["split_pct"]["alloc_call"], 30.0)
        self.assertAlmostEqual(r["drained_gaps_per_step"], 1.0)

    def test_a_sync_that_waited_for_nothing_costs_nothing(self):
        """A slow host that syncs right after a tiny kernel: the device idles for the host's
        Python, not for the sync (removing the sync would not shorten the step)."""
        t = Trace()
        for i in range(10):
            s = 1000 + 100 * i
            t.op("aten::add", s, 6, [[8], [8]], ["float", "float"])
            t.launch(s + 1, 4, "elementwise_kernel", s + 6, 2)
            t.call("cudaStreamSynchronize", s + 7, 3)    # the device is done at s + 8
        t.marker(2000)
        r = ta.analyze(t.trace(), line(10, 0.1))
        self.assertEqual(r["cause"], "host_bound")
        self.assertLess(r["cause_pct"]["host_sync"], 3.0)
        self.assertGreater(r["cause_pct"]["host_bound"], 85.0)
        self.assertAlmostEqual(r["drained_gaps_per_step"], 1.0)

    def test_the_wait_in_a_dataloaders_next_is_starved_input(self):
        """A step that waits 60 us for its batch in the DataLoader's next() (the profiler's
        own annotation), then copies it and computes 20 us; 10 us of Python besides: the
        wait is starved_input, the Python host_bound."""
        t = Trace()
        for i in range(10):
            s = 1000 + 100 * i
            t.add("user_annotation",
                  "enumerate(DataLoader)#_MultiProcessingDataLoaderIter.__next__", s, 60)
            t.op("aten::copy_", s + 70, 6, [[64]], ["float"])
            t.launch(s + 71, 3, "elementwise_kernel", s + 75, 20)
        t.marker(2000)
        r = ta.analyze(t.trace(), line(10, 0.1))
        self.assertEqual(r["cause"], "starved_input")
        self.assertAlmostEqual(r["split_pct"]["input"], 60.0, delta=1.0)
        self.assertAlmostEqual(r["cause_pct"]["starved_input"], 60.0, delta=1.0)
        self.assertGreater(r["cause_pct"]["host_bound"], 5.0)
        self.assertLess(r["cause_pct"]["host_bound"], 20.0)
        # another annotation is not the loader's
        t.ev = [e for e in t.ev if "DataLoader" not in e["name"]]
        t.add("user_annotation", "my_step", 500, 1500)
        r = ta.analyze(t.trace(), line(10, 0.1))
        self.assertEqual(r["cause"], "host_bound")
        self.assertEqual(r["split_pct"]["input"], 0.0)

    def test_gaps_before_work_already_queued_are_the_devices_own(self):
        """A replayed graph: its nodes' gaps come while the host waits in the loop's final
        synchronize; the work was queued long before: no host wait, no sync cost."""
        t = Trace()
        t.call("cudaGraphLaunch", 900, 5)
        g = t.corr
        for i in range(10):                       # 90 us nodes, 10 us gaps between them
            t.add("kernel", "k", 1000 + 100 * i, 90, tid=7, correlation=g)
        t.call("cudaDeviceSynchronize", 910, 1085)
        t.marker(2000)
        r = ta.analyze(t.trace(), line(1, 1.0))
        self.assertAlmostEqual(r["device_side_pct"], 9.0)
        self.assertAlmostEqual(sum(r["split_pct"].values()), 1.0)    # only [1990, 2000]
        self.assertLess(r["cause_pct"]["host_sync"], 1.5)
        self.assertEqual(r["drained_gaps_per_step"], 1.0)

    def test_a_copy_call_that_returns_after_its_transfer_blocked(self):
        t = Trace()
        t.launch(1000, 50, "Memcpy DtoH (Device -> Pageable)", 1010, 30, call="cudaMemcpyAsync",
                 cat="gpu_memcpy")
        t.launch(1100, 5, "Memcpy HtoD (Pinned -> Device)", 1200, 30, call="cudaMemcpyAsync",
                 cat="gpu_memcpy")
        t.marker(2000)
        r = ta.analyze(t.trace(), line(1, 1.0))
        self.assertAlmostEqual(r["syncs_per_step"], 1.0)
        self.assertAlmostEqual(r["launch_calls_per_step"], 1.0)


class KernelClassTest(unittest.TestCase):
    def one(self, name, dims, types, tf32=False, kname="gemm_kernel"):
        t = Trace()
        t.op(name, 1000, 10, dims, types)
        t.launch(1002, 3, kname, 1010, 900)
        t.marker(2000)
        return ta.analyze(t.trace(), line(1, 1.0), tf32=tf32)

    def test_gemm_classes_from_the_ops_shapes_and_dtypes(self):
        bf, f = "c10::BFloat16", "float"
        r = self.one("aten::mm", [[4096, 768], [768, 50257]], [bf, bf])
        self.assertEqual(r["cause"], "simt_gemm")         # misaligned vocabulary
        self.assertAlmostEqual(r["kernel_class_pct"]["gemm_misaligned"], 90.0)
        r = self.one("aten::mm", [[4096, 768], [768, 3072]], [f, f])
        self.assertAlmostEqual(r["kernel_class_pct"]["gemm_simt"], 90.0)   # fp32, no TF32
        r = self.one("aten::mm", [[4096, 768], [768, 3072]], [f, f], tf32=True)
        self.assertEqual(r["cause"], "healthy")
        self.assertAlmostEqual(r["kernel_class_pct"]["gemm_tc"], 90.0)
        r = self.one("aten::addmm", [[3072], [1, 768], [768, 3072]], [bf, bf, bf])
        self.assertEqual(r["cause"], "decode_gemv")
        r = self.one("aten::linear", [[8, 512, 768], [3072, 768], [3072]], [bf, bf, bf])
        self.assertAlmostEqual(r["kernel_class_pct"]["gemm_tc"], 90.0)
        r = self.one("aten::_scaled_dot_product_flash_attention", [[1, 12, 512, 64]], [bf],
                     kname="flash_fwd_kernel")
        self.assertAlmostEqual(r["kernel_class_pct"]["attention"], 90.0)
        self.assertEqual(r["cause"], "healthy")

    def test_the_innermost_gemm_op_decides(self):
        t = Trace()
        bf = "c10::BFloat16"
        t.op("aten::linear", 1000, 12, [[1, 4096], [4096, 4096]], [bf, bf])
        t.op("aten::mm", 1001, 10, [[1, 4096], [4096, 4096]], [bf, bf])
        t.launch(1002, 3, "nvjet_tst_128x8", 1010, 900)
        t.marker(2000)
        r = ta.analyze(t.trace(), line(1, 1.0))
        self.assertEqual(r["cause"], "decode_gemv")

    def test_graph_kernels_take_the_class_their_name_had_under_an_op(self):
        t = Trace()
        bf = "c10::BFloat16"
        t.op("aten::mm", 100, 10, [[1, 4096], [4096, 4096]], [bf, bf])   # warm-up, eager
        t.launch(102, 3, "nvjet_tst_128x8", 110, 50)
        t.call("cudaGraphLaunch", 1000, 5)
        g = t.corr
        for i in range(4):                        # the graph's kernels: no op, one correlation
            t.add("kernel", "nvjet_tst_128x8", 1010 + 200 * i, 190, tid=7, correlation=g)
        t.marker(2000)
        r = ta.analyze(t.trace(), line(1, 1.0))
        self.assertEqual(r["cause"], "decode_gemv")
        self.assertAlmostEqual(r["cause_pct"]["decode_gemv"], 76.0)
        self.assertEqual(r["classified_by_name_us"], 0.0)

    def test_chains_of_three_or_more_memory_bound_kernels(self):
        t = Trace()
        for i in range(5):                        # gelu, add, dropout, mul, add: a chain
            t.op("aten::add", 1000 + 10 * i, 8, [[1 << 28], [1 << 28]], ["float", "float"])
            t.launch(1001 + 10 * i, 3, f"elementwise_{i}", 1100 + 150 * i, 150)
        t.op("aten::add", 1060, 8, [[8], [8]], ["float", "float"])   # alone between GEMMs:
        t.launch(1061, 3, "lonely_add", 1900, 50)                   # no chain
        t.marker(2000)
        r = ta.analyze(t.trace(), line(1, 1.0))
        self.assertEqual(r["cause"], "elementwise_chain")
        self.assertAlmostEqual(r["cause_pct"]["elementwise_chain"], 75.0 + 5.0)
        t2 = Trace()
        for i in range(2):
            t2.op("aten::add", 1000 + 10 * i, 8, [[8], [8]], ["float", "float"])
            t2.launch(1001 + 10 * i, 3, f"elementwise_{i}", 1100 + 400 * i, 400)
        t2.marker(2000)
        self.assertAlmostEqual(ta.analyze(t2.trace(), line(1, 1.0))["cause_pct"]
                               ["elementwise_chain"], 0.0)

    def test_kernels_no_op_launched_fall_back_to_their_name(self):
        t = Trace()
        t.launch(1000, 5, "triton_poi_fused_add_mul_0", 1010, 100, call="cuLaunchKernel")
        t.marker(2000)
        r = ta.analyze(t.trace(), line(1, 1.0))
        self.assertAlmostEqual(r["kernel_class_pct"]["memory_bound"], 10.0)
        self.assertAlmostEqual(r["classified_by_name_us"], 100.0)


class CausesOnStep(unittest.TestCase):
    """A profile's causes on the unprofiled run's step (causes_on_step)."""

    def test_the_profilers_host_cost_leaves_the_kernels_on_top(self):
        # profiled: an 8 ms step, half busy, idle 30 host / 20 launch, chains 18 %; the plain
        # run takes 5.6 ms: its busy is the same 4 ms (71.4 %), its idle 1.6 ms in 30:20
        busy, c = ta.causes_on_step({"host_bound": 30.0, "launch_bound": 20.0,
                                     "elementwise_chain": 18.0, "alloc_churn": 0.0},
                                    50.0, 50.0, 8.0, 5.6)
        self.assertAlmostEqual(busy, 400.0 / 5.6)
        self.assertAlmostEqual(c["host_bound"], (100.0 - busy) * 30.0 / 50.0)
        self.assertAlmostEqual(c["launch_bound"], (100.0 - busy) * 20.0 / 50.0)
        self.assertAlmostEqual(c["elementwise_chain"], 18.0 * 8.0 / 5.6)
        self.assertEqual(ta.top_cause(c), ("elementwise_chain", c["elementwise_chain"]))
        self.assertEqual(ta.top_cause({"host_bound": 30.0, "launch_bound": 20.0})[0],
                         "host_bound")

    def test_no_idle_and_small_causes(self):
        busy, c = ta.causes_on_step({"host_bound": 0.0, "simt_gemm": 5.0}, 100.0, 0.0, 2.0, 2.0)
        self.assertAlmostEqual(busy, 100.0)
        self.assertEqual(c["host_bound"], 0.0)
        self.assertEqual(ta.top_cause(c)[0], "healthy")


class ProfiledReference(unittest.TestCase):
    """A timing truth whose reference run was profiled (with_profiled_reference)."""

    # the reference's profile: a 20 ms step under the profiler, 3 ms of it kernels (15 %),
    # its idle 85 % split 60 launch / 20 host / 5 sync, 2 % elementwise chains
    PROFILE = {"step_ms": 20.0, "busy_pct": 15.0, "idle_pct": 85.0,
               "cause_pct": {"launch_bound": 60.0, "host_bound": 20.0, "host_sync": 5.0,
                             "elementwise_chain": 2.0}}

    def test_a_dispatch_bound_reference_outweighs_the_removed_cause(self):
        # plain 16 ms, reference (cached batch) 12 ms: the input is 25 % of the step; the
        # reference's true busy is 3 of its 12 plain ms (25 %), its idle 75 % shared 60:20:5
        r = ta.with_profiled_reference("starved_input", 16.0, 12.0, self.PROFILE)
        self.assertAlmostEqual(r["ref_busy_pct"], 25.0)
        self.assertAlmostEqual(r["ref_cause_pct"]["launch_bound"], 75.0 * 60.0 / 85.0)
        self.assertAlmostEqual(r["cause_pct"]["starved_input"], 25.0)
        self.assertAlmostEqual(r["cause_pct"]["launch_bound"], 0.75 * 75.0 * 60.0 / 85.0)
        self.assertAlmostEqual(r["cause_pct"]["elementwise_chain"], 0.75 * 2.0 * 20.0 / 12.0)
        self.assertAlmostEqual(r["busy_pct"], 0.75 * 25.0)
        self.assertEqual(r["cause"], "launch_bound")
        self.assertAlmostEqual(r["share_pct"], r["cause_pct"]["launch_bound"])

    def test_a_busy_reference_leaves_the_removed_cause_on_top(self):
        busy = {"step_ms": 10.0, "busy_pct": 98.0, "idle_pct": 2.0,
                "cause_pct": {"launch_bound": 1.5, "host_bound": 0.5}}
        r = ta.with_profiled_reference("starved_input", 100.0, 10.0, busy)
        self.assertEqual(r["cause"], "starved_input")
        self.assertAlmostEqual(r["share_pct"], 90.0)
        self.assertAlmostEqual(r["busy_pct"], 0.1 * 98.0)

    def test_nothing_large_enough_is_healthy(self):
        busy = {"step_ms": 10.0, "busy_pct": 99.0, "idle_pct": 1.0,
                "cause_pct": {"launch_bound": 1.0}}
        r = ta.with_profiled_reference("starved_input", 10.5, 10.0, busy)
        self.assertEqual(r["cause"], "healthy")

    def test_a_profile_without_its_figures_or_no_step_time_is_refused(self):
        with self.assertRaises(ta.TruthError):
            ta.with_profiled_reference("starved_input", 16.0, 12.0, {"step_ms": 20.0})
        with self.assertRaises(ta.TruthError):
            ta.with_profiled_reference("starved_input", 0.0, 12.0, self.PROFILE)
        with self.assertRaises(ta.TruthError):
            ta.with_profiled_reference("starved_input", 16.0, float("nan"), self.PROFILE)


if __name__ == "__main__":
    unittest.main()
