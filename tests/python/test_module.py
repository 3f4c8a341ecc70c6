"""Tests of the pipeworks Python module (plain unittest; run with PYTHONPATH at the built package).

Closed forms as in the C++ tests: uniform GPipe makespan (M+K-1)(F+B), bubble (K-1)/(M+K-1),
peak activations M stashes (GPipe) against min(M, K-s) stashes (1F1B) on stage s.
"""

import inspect
import json
import os
import subprocess
import sys
import tempfile
import threading
import unittest

import numpy as np
import pandas as pd

import pipeworks as pw

MS = 1_000_000


class ScheduleTest(unittest.TestCase):
    def test_gpipe_grid_is_fill_drain(self):
        grid = pw.render_grid(pw.generate("gpipe", 2, 2))
        self.assertEqual(grid.splitlines(), [
            "t:   0  1  2  3  4  5",
            "d0: F0 F1  .  . B0 B1",
            "d1:  . F0 F1 B0 B1  .",
        ])

    def test_one_f_one_b_program_and_actions(self):
        s = pw.generate("1f1b", num_stages=2, num_microbatches=3)
        self.assertEqual(s.program_strings()[0], ["0F0", "0F1", "0B0", "0F2", "0B1", "0B2"])
        self.assertEqual(s.num_actions(), 12)
        self.assertEqual(s.programs[1][0], pw.Action(1, pw.ActionKind.F, 0))
        self.assertEqual(str(pw.parse_action("1SEND_F3")), "1SEND_F3")
        self.assertEqual(pw.schedule_kinds(), ["gpipe", "1f1b", "interleaved-1f1b", "looped-bfs", "zb-h1", "zb-h2",
                                               "zb-v", "dualpipe-v", "interleaved-zb"])

    def test_virtual_stages(self):
        s = pw.generate("interleaved-1f1b", num_stages=4, num_microbatches=4, virtual_stages=2)
        self.assertEqual(s.placement, [0, 1, 0, 1])
        self.assertEqual(s.program_strings()[1][:4], ["1F0", "1F1", "3F0", "3B0"])
        with self.assertRaises(pw.Error):
            pw.generate("gpipe", 4, 4, virtual_stages=2)
        v = pw.generate("zb-v", num_stages=4, num_microbatches=4)
        self.assertEqual(v.placement, [0, 1, 1, 0])
        self.assertEqual(v.program_strings()[0][3:6], ["3F0", "3I0", "3W0"])

    def test_passes(self):
        s = pw.generate("gpipe", 2, 2)
        r = pw.add_recompute(s)
        self.assertTrue(r.has_recompute())
        self.assertEqual(r.program_strings()[0], ["0F0", "0F1", "0R0", "0B0", "0R1", "0B1"])
        self.assertEqual(pw.add_recompute(r), r)
        lowered = pw.lower_comm(s)
        self.assertTrue(lowered.has_comm())
        self.assertEqual(pw.strip_comm(lowered), s)
        self.assertEqual(pw.validate(lowered), [])

    def test_errors_raise_pipeworks_error_with_location(self):
        with self.assertRaises(pw.Error):
            pw.generate("zigzag", 2, 2)
        with self.assertRaises(ValueError):
            pw.generate("gpipe", 0, 2)
        with self.assertRaisesRegex(pw.Error, "column 3"):
            pw.parse_action("1F0xyz")
        with self.assertRaisesRegex(pw.Error, "sched.csv:2:"):
            pw.parse_schedule("0F0,0B0\n1F0,1Q0\n", "sched.csv")

    def test_schedule_files_round_trip(self):
        s = pw.lower_comm(pw.generate("1f1b", 3, 4))
        with tempfile.TemporaryDirectory() as d:
            for ext in ("csv", "json"):
                path = os.path.join(d, "s." + ext)
                pw.save_schedule(s, path)
                self.assertEqual(pw.load_schedule(path), s)
        self.assertEqual(json.loads(s.to_json())["num_stages"], 3)


class ValidateTest(unittest.TestCase):
    def test_duplicate_is_located_and_rendered(self):
        bad = pw.parse_schedule("0F0,0B0,0F0\n")
        (diag,) = pw.validate(bad)
        self.assertEqual((diag.kind, diag.device, diag.position), ("duplicate", 0, 2))
        self.assertEqual(diag.related, [(0, 0)])
        self.assertIn("[0F0]", pw.render_diagnostic(bad, diag))
        self.assertIn("<0F0>", pw.render_diagnostic(bad, diag))

    def test_backward_before_forward(self):
        s = pw.generate("gpipe", 1, 1)
        s.programs = [[pw.Action(0, pw.ActionKind.B, 0), pw.Action(0, pw.ActionKind.F, 0)]]
        kinds = [d.kind for d in pw.validate(s)]
        self.assertIn("backward-before-forward", kinds)


class SimulateTest(unittest.TestCase):
    def test_gpipe_closed_form(self):
        for k in range(2, 6):
            for m in (1, 3, 8):
                r = pw.simulate(pw.generate("gpipe", k, m), pw.uniform_cost_model(k, 1 * MS, 2 * MS))
                self.assertEqual(r.makespan_ns, (m + k - 1) * 3 * MS)
                self.assertAlmostEqual(r.bubble_fraction, (k - 1) / (m + k - 1), places=12)
                self.assertAlmostEqual(pw.gpipe_closed_form_bubble(k, m), (k - 1) / (m + k - 1), places=12)

    def test_closed_form_bubble_of_every_kind(self):
        # ZB-H1 with F = I = W (uniform_cost_model splits B = 2F into I = W = F): (K-1)/(3M+K-1).
        r = pw.simulate(pw.generate("zb-h1", 4, 8), pw.uniform_cost_model(4, 1 * MS, 2 * MS))
        self.assertAlmostEqual(r.bubble_fraction, 3 / 27, places=12)
        self.assertAlmostEqual(pw.closed_form_bubble("zb-h1", 4, 8, 4), 3 / 27, places=12)
        self.assertAlmostEqual(pw.closed_form_bubble("gpipe", 4, 8, 4), pw.gpipe_closed_form_bubble(4, 8), places=12)
        self.assertAlmostEqual(pw.closed_form_bubble("interleaved-1f1b", 8, 8, 4), 3 / 19, places=12)
        self.assertIsNone(pw.closed_form_bubble("dualpipe-v", 8, 8, 4))
        self.assertIsNone(pw.closed_form_bubble("zb-h2", 4, 7, 4))
        with self.assertRaisesRegex(pw.Error, "schedule"):
            pw.closed_form_bubble("my_schedule.csv", 4, 8, 4)

    def test_contention_slows_overlapping_compute(self):
        # GPipe K=2 M=2, F=1 B=2: each device overlaps half its compute; factor 3 -> slow-down 2.
        cm = pw.uniform_cost_model(2, 1 * MS, 2 * MS)
        cm.contention_factor = [3.0, 3.0]
        self.assertEqual(pw.simulate(pw.generate("gpipe", 2, 2), cm).makespan_ns, 18 * MS)

    def test_result_dict_and_timeline_columns(self):
        r = pw.simulate(pw.lower_comm(pw.generate("1f1b", 3, 4)), pw.uniform_cost_model(3, MS, 2 * MS, MS))
        d = r.to_dict()
        self.assertEqual(d["makespan_ns"], r.makespan_ns)
        self.assertEqual(len(d["devices"]), 3)
        self.assertEqual(d["comm_mode"], "overlap")
        cols = r.timeline.columns()
        n = len(r.timeline.spans)
        self.assertEqual(n, r.num_actions)
        self.assertTrue(all(len(v) == n for v in cols.values()))
        self.assertEqual(cols["start_ns"].dtype, np.int64)
        frame = pd.DataFrame(cols)
        self.assertEqual(frame["end_ns"].max() - frame["start_ns"].min(), r.makespan_ns)
        self.assertEqual(set(frame["lane"]), {"compute", "send", "recv"})
        records = r.timeline.records()
        self.assertEqual(records[0]["action"], str(r.timeline.spans[0].action))
        self.assertEqual(r.timeline.stats().makespan_ns, r.makespan_ns)
        report = json.loads(pw.simulate_report_json(r, num_stages=3, num_microbatches=4, schedule="1f1b"))
        self.assertEqual(report["makespan_ns"], r.makespan_ns)

    def test_result_dicts_carry_every_field_of_their_tables(self):
        r = pw.simulate(pw.lower_comm(pw.generate("1f1b", 3, 4)), pw.uniform_cost_model(3, MS, 2 * MS, MS))
        fields = pw.SimResult.fields()
        self.assertEqual(fields["makespan_ns"], "ns")
        self.assertEqual(fields["throughput_samples_per_s"], "samples/s")
        d = r.to_dict()
        self.assertEqual(list(d), list(fields) + ["devices"])
        for name in fields:
            self.assertEqual(d[name], getattr(r, name), name)
        device = d["devices"][0]
        self.assertEqual(list(device), list(pw.DeviceResult.fields()) + ["stages", "memory"])
        self.assertEqual(list(device["memory"]), list(pw.MemoryReport.fields()))
        self.assertEqual(device["memory"], r.devices[0].memory.to_dict())
        self.assertEqual(pw.MemoryReport.fields()["peak_bytes"], "bytes")
        # The JSON report holds every field too, in the same order.
        report = json.loads(pw.simulate_report_json(r, num_stages=3, num_microbatches=4, schedule="1f1b"))
        keys = list(report)
        positions = [keys.index(name) for name in fields]
        self.assertEqual(positions, sorted(positions))
        self.assertEqual(list(report["devices"][0]),
                         list(pw.DeviceResult.fields()) + list(pw.MemoryReport.fields()) + ["stages"])

    def test_memory_gpipe_against_1f1b(self):
        k, m = 4, 8
        model = pw.model_preset("uniform", layers=8)
        cluster = pw.cluster_preset("dgx-h100")
        cm = pw.build_cost_model(model, cluster, pw.uniform_partition(8, k))
        stash = cm.stages[0].stash_bytes
        self.assertGreater(stash, 0)
        gpipe = pw.simulate(pw.generate("gpipe", k, m), cm)
        ofob = pw.simulate(pw.generate("1f1b", k, m), cm)
        for s in range(k):
            self.assertEqual(gpipe.devices[s].memory.peak_activation_bytes, m * cm.stages[s].stash_bytes)
            self.assertEqual(ofob.devices[s].memory.peak_activation_bytes, min(m, k - s) * cm.stages[s].stash_bytes)

    def test_mismatched_cost_model_raises(self):
        with self.assertRaises(pw.Error):
            pw.simulate(pw.generate("gpipe", 3, 2), pw.uniform_cost_model(2, MS, MS))

    def test_cost_model_copy_semantics(self):
        cm = pw.uniform_cost_model(2, MS, 2 * MS)
        stages = cm.stages
        stages[1].forward_ns = 5 * MS
        self.assertEqual(cm.stages[1].forward_ns, MS)
        cm.stages = stages
        r = pw.simulate(pw.generate("gpipe", 2, 1), cm)
        self.assertEqual(r.makespan_ns, MS + 5 * MS + 2 * MS + 2 * MS)

    def test_send_overhead_holds_the_sender(self):
        # GPipe K=2 M=2, F=10, B=20, free transfers: 90; a send overhead of 3 on each of the four
        # sends on the critical path: 102 (tests/sim/engine/simulator_test.cc draws it).
        cm = pw.uniform_cost_model(2, 10, 20)
        self.assertEqual(pw.simulate(pw.generate("gpipe", 2, 2), cm).makespan_ns, 90)
        links = cm.links
        for link in links:
            link.send_overhead_ns = 3
        cm.links = links
        self.assertEqual(pw.simulate(pw.lower_comm(pw.generate("gpipe", 2, 2)), cm).makespan_ns, 102)
        self.assertEqual(pw.LinkSpec(1e9, 25_000, 42_000).send_overhead_ns, 42_000)

    def test_compute_slots_serialise_workers_beyond_the_cores(self):
        # GPipe K=2 M=2, F=10, B=20 with one slot: every action after another, 120 against 90
        # (tests/sim/engine/simulator_test.cc draws it).
        cm = pw.uniform_cost_model(2, 10, 20)
        cm.compute_slots = 1
        self.assertEqual(pw.simulate(pw.lower_comm(pw.generate("gpipe", 2, 2)), cm).makespan_ns, 120)
        cm.compute_slice_ns = 41  # d1 keeps its slot at 60: other actions, the same makespan
        self.assertEqual(pw.simulate(pw.lower_comm(pw.generate("gpipe", 2, 2)), cm).makespan_ns, 120)
        cm.compute_slice_ns = -1
        with self.assertRaises(pw.Error):
            pw.simulate(pw.lower_comm(pw.generate("gpipe", 2, 2)), cm)
        cluster = pw.cluster_preset("cpu2")
        cluster.cores = 3
        cluster.threads_per_device = 2
        self.assertEqual(cluster.compute_slots, 1)
        cluster.core_slice_ns = 3_000_000
        self.assertEqual(pw.parse_cluster_spec(cluster.to_json()).core_slice_ns, 3_000_000)

    def test_idle_slowdown_grows_with_the_idle(self):
        # GPipe K=2 M=1, eager, F=10, B=20, slowdown 1.4 from 20 of idle: d1's F0 idled 10 (+2),
        # d0's B0 idled 32 (+8): 70 against 60 (tests/sim/engine/simulator_test.cc draws it).
        schedule = pw.lower_comm(pw.generate("gpipe", 2, 1))
        cm = pw.uniform_cost_model(2, 10, 20, 0, "eager")
        self.assertEqual(pw.simulate(schedule, cm).makespan_ns, 60)
        cm.idle_slowdown = 1.4
        cm.idle_slowdown_after_ns = 20
        self.assertEqual(pw.simulate(schedule, cm).makespan_ns, 70)
        cm.idle_slowdown_after_ns = 0
        with self.assertRaises(pw.Error):
            pw.simulate(schedule, cm)
        cluster = pw.cluster_preset("cpu2")
        cluster.idle_slowdown = 1.25
        cluster.idle_slowdown_after_ns = 5_000_000
        again = pw.parse_cluster_spec(cluster.to_json())
        self.assertEqual((again.idle_slowdown, again.idle_slowdown_after_ns), (1.25, 5_000_000))

    def test_sweep_rows_count_tables_read_beyond_the_profile(self):
        # A layer measured at micro-batch sizes 1 and 2: read at 4 its two tables extrapolate.
        spec = pw.parse_model_spec(
            '{"name": "p", "layers": [{"name": "l", "forward": {"per_sample": "1ms", "measured": {"1": "1ms", '
            '"2": "2ms"}}, "backward": "2ms", "output_bytes": {"per_sample": "1KiB", "measured": {"1": "1KiB", '
            '"2": "2KiB"}}}, {"name": "m", "forward": "1ms", "backward": "2ms"}]}')
        result = pw.sweep(spec, pw.cluster_preset("cpu2"), batch=[2, 8], stages=[1], microbatches=[2])
        by_size = {r.microbatch_size: r.extrapolated_tables for r in result.rows}
        self.assertEqual(by_size, {1: 0, 4: 2})

    def test_threads_simulate_concurrently_with_equal_results(self):
        s = pw.generate("1f1b", 8, 64)
        cm = pw.uniform_cost_model(8, MS, 2 * MS)
        results = [None] * 4

        def work(i):
            results[i] = pw.simulate(s, cm).makespan_ns

        threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        self.assertEqual(results, [(64 + 8 - 1) * 3 * MS] * 4)


class ThreadRaceTest(unittest.TestCase):
    def test_calls_without_the_gil_read_consistent_copies(self):
        # race_released_gil.py changes the objects a call reads from another thread; in a child
        # interpreter so that a crash fails this test instead of ending the suite.
        script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "race_released_gil.py")
        done = subprocess.run([sys.executable, script], capture_output=True, text=True, timeout=120)
        self.assertEqual(done.returncode, 0, done.stderr[-2000:])


class SpecTest(unittest.TestCase):
    def test_units(self):
        self.assertEqual(pw.parse_duration("1.5ms"), 1_500_000)
        self.assertEqual(pw.parse_bytes("80GiB"), 80 * 2**30)
        self.assertEqual(pw.parse_bandwidth("900GB/s"), 900e9)
        self.assertEqual(pw.format_bytes(1342177280), "1.25 GiB")
        with self.assertRaises(pw.Error):
            pw.parse_duration("1.5")

    def test_presets_and_json_round_trip(self):
        names = [p["name"] for p in pw.model_presets()]
        self.assertIn("amoeba", names)
        self.assertIn("uniform", names)
        model = pw.model_preset("gpt2-small")
        self.assertEqual(model.num_layers, 14)
        self.assertEqual(pw.parse_model_spec(model.to_json()).to_json(), model.to_json())
        cluster = pw.cluster_preset("multinode", nodes=2)
        self.assertEqual(cluster.num_devices, 16)
        self.assertEqual(pw.parse_cluster_spec(cluster.to_json()).to_json(), cluster.to_json())
        cluster.contention_factor = 1.25
        self.assertEqual(pw.parse_cluster_spec(cluster.to_json()).contention_factor, 1.25)
        with self.assertRaises(pw.Error):
            pw.model_preset("uniform", hidden=10)
        with self.assertRaises(pw.Error):
            pw.model_preset("no-such-model")

    def test_partitions(self):
        self.assertEqual(pw.uniform_partition(10, 3).boundaries, [0, 4, 7, 10])
        self.assertEqual(pw.explicit_partition([0, 2, 5], 5).layers(), [2, 3])
        with self.assertRaisesRegex(pw.Error, "empty"):
            pw.explicit_partition([0, 3, 3, 5], 5)
        uniform = pw.model_preset("uniform", layers=12)
        self.assertEqual(pw.balanced_partition(uniform, 4), pw.uniform_partition(12, 4))
        amoeba = pw.model_preset("amoeba")
        balanced = pw.balanced_partition(amoeba, 4)
        self.assertNotEqual(balanced, pw.uniform_partition(amoeba.num_layers, 4))

    def test_stage_counts_past_the_library_limit_are_refused_at_once(self):
        uniform = pw.model_preset("uniform", layers=12)
        for call in (lambda: pw.uniform_partition(10**8, 10**8), lambda: pw.balanced_partition(uniform, 10**8),
                     lambda: pw.uniform_cost_model(10**8, MS, MS), lambda: pw.uniform_partition(10, 0)):
            with self.assertRaisesRegex(ValueError, "limit of 65536|must be at least 1"):
                call()
        self.assertEqual(pw.uniform_partition(65536, 65536).num_stages, 65536)


class SweepTest(unittest.TestCase):
    def sweep(self, threads):
        return pw.sweep(pw.model_preset("uniform", layers=8), pw.cluster_preset("dgx-h100"),
                        batch=[32], stages=[2, 4, 16], microbatches=[1, 4, 8, 5], sweep_threads=threads)

    def test_columns_make_a_frame(self):
        result = self.sweep(threads=2)
        # 16 stages > 8 devices, 5 does not divide 32: skipped.
        # Each skipped (stages, micro-batches) pair counts once per schedule x recompute (4 x 2):
        # the sweep's schedules by default are gpipe, 1f1b, zb-h1 and zb-h2.
        self.assertEqual(result.skipped["more_stages_than_devices"], 1 * 4 * 8)
        self.assertEqual(result.skipped["microbatches_not_dividing_batch"], 2 * 1 * 8)
        cols = result.columns()
        frame = pw.sweep_frame(result)
        self.assertEqual(len(frame), len(result.rows))
        self.assertEqual(len(result.rows), 2 * 3 * 4 * 2)
        self.assertEqual(cols["makespan_ns"].dtype, np.int64)
        self.assertEqual(cols["fits"].dtype, np.bool_)
        self.assertTrue(frame["simulated"].all())
        self.assertEqual(list(frame["makespan_ns"]), [r.makespan_ns for r in result.rows])
        self.assertIn(result.best_fitting(), result.ranked())

    def test_columns_csv_and_json_carry_every_field_of_the_table(self):
        result = self.sweep(threads=1)
        fields = pw.SweepRow.fields()
        self.assertEqual(fields["makespan_ns"], "ns")
        self.assertEqual(fields["bubble_fraction"], "fraction")
        self.assertEqual(fields["samples_per_s"], "samples/s")
        cols = result.columns()
        self.assertEqual(list(cols), list(fields))
        self.assertEqual(cols["stages"].dtype, np.int32)
        self.assertEqual(cols["samples_per_s"].dtype, np.float64)
        self.assertEqual(cols["partition"][0], "4,4")
        header = result.to_csv().splitlines()[0].split(",")
        self.assertEqual(header, [name for name in fields if name != "simulated"])
        rows = json.loads(result.to_json())["rows"]
        self.assertEqual(set(rows[0]), set(fields))
        self.assertEqual(rows[0]["partition"], [0, 4, 8])
        for name in ("makespan_ns", "peak_bytes", "fits", "note"):
            self.assertEqual([row[name] for row in rows], [getattr(r, name) for r in result.rows], name)
        empty = pw.sweep(pw.model_preset("uniform", layers=8), pw.cluster_preset("dgx-h100"),
                         batch=[32], stages=[16], microbatches=[4]).columns()
        self.assertEqual(list(empty), list(fields))
        self.assertEqual((len(empty["makespan_ns"]), empty["makespan_ns"].dtype), (0, np.int64))

    def test_rows_identical_for_any_thread_count(self):
        a, b = self.sweep(threads=1).columns(), self.sweep(threads=2).columns()
        for key in a:
            self.assertEqual(list(a[key]), list(b[key]), key)

    def test_old_keyword_names_still_work_with_a_warning(self):
        model, cluster = pw.model_preset("uniform", layers=8), pw.cluster_preset("dgx-h100")
        with self.assertWarnsRegex(DeprecationWarning, r"plan\(batch_size=\) is deprecated; use batch="):
            old = pw.plan(model, cluster, batch_size=16, num_devices=4, threads=1)
        self.assertEqual(old.report(), pw.plan(model, cluster, batch=16, devices=4).report())
        with self.assertWarnsRegex(DeprecationWarning, r"sweep\(stage_counts=\) is deprecated; use stages="):
            pw.sweep(model, cluster, batch=[16], stage_counts=[2], microbatches=[4])
        with self.assertRaisesRegex(TypeError, "both batch_size= and batch="):
            pw.plan(model, cluster, batch=16, batch_size=16, devices=4)

    def test_plan(self):
        plan = pw.plan(pw.model_preset("uniform", layers=8), pw.cluster_preset("dgx-h100"),
                       batch=16, devices=4)
        self.assertIsNotNone(plan.best)
        self.assertIn("best:", plan.report())
        self.assertTrue(plan.runners_up)
        families = [r["family"] for r in plan.runners_up]
        self.assertIn("zb-h1, recompute off", families)
        only = pw.plan(pw.model_preset("uniform", layers=8), pw.cluster_preset("dgx-h100"),
                       batch=16, devices=4, schedules=["1f1b"])
        self.assertEqual([f for f in (r["family"] for r in only.runners_up) if "recompute" in f],
                         ["1f1b, recompute off", "1f1b, recompute on"])
        v = pw.plan(pw.model_preset("uniform", layers=8), pw.cluster_preset("dgx-h100"),
                    batch=16, devices=4, schedules=["zb-v", "interleaved-1f1b"], virtual_stages=[2])
        self.assertIn("interleaved-1f1b v=2, recompute off", [r["family"] for r in v.runners_up])
        best = v.sweep.rows[v.best]
        self.assertEqual(best.num_stages, 2 * (best.num_stages // best.virtual_stages))
        self.assertEqual(set(v.sweep.columns()["virtual_stages"]), {2})

    def test_data_parallel_rows_and_plans(self):
        model, cluster = pw.model_preset("gpt3-1.3b"), pw.cluster_preset("dgx-h100")
        result = pw.sweep(model, cluster, batch=[64], stages=[2], dp=[1, 4], zero=["0", "1"], microbatches=[8])
        # dp 1 has nothing to shard: one row per schedule x recompute; dp 4 one per ZeRO stage too.
        self.assertEqual(len(result.rows), 4 * 2 + 4 * 2 * 2)
        cols = result.columns()
        self.assertEqual(set(cols["dp"]), {1, 4})
        self.assertEqual(set(cols["devices"]), {2, 8})
        self.assertEqual({z for z, d in zip(cols["zero"], cols["dp"]) if d == 1}, {"0"})
        self.assertTrue((cols["mfu"] > 0).all() and (cols["mfu"] < 0.4).all())
        self.assertTrue((cols["tokens_per_s"] == cols["samples_per_s"] * 2048).all())
        self.assertTrue((cols["extrapolated_tables"] == 0).all())  # a preset's costs are formulas
        replicated = [r for r in result.rows if r.dp == 4]
        self.assertTrue(all(r.tail_ns > 0 for r in replicated))
        plan = pw.plan(model, cluster, batch=256, devices=8, zero=["1"])
        best = plan.sweep.rows[plan.best]
        self.assertEqual(best.num_stages // best.virtual_stages * best.dp, 8)
        self.assertIn("tp 1 x pp 8 x dp 1", [r["family"] for r in plan.runners_up])

    def test_tensor_parallel_views_rows_and_plans(self):
        model, cluster = pw.model_preset("gpt3-1.3b"), pw.cluster_preset("dgx-h100")
        rank = pw.tensor_parallel_view(model, 4, sequence_parallel=True)
        self.assertEqual((rank.tensor_parallel, rank.sequence_parallel), (4, True))
        self.assertLess(rank.total_param_bytes(), model.total_param_bytes() / 3)
        costs = pw.build_cost_model(rank, cluster, pw.uniform_partition(rank.num_layers, 2), microbatch_size=2)
        whole = pw.build_cost_model(model, cluster, pw.uniform_partition(model.num_layers, 2), microbatch_size=2)
        # A quarter of the work each rank, plus two all-reduces a block on NVLink.
        self.assertGreater(costs.stages[1].forward_ns, whole.stages[1].forward_ns / 4)
        self.assertLess(costs.stages[1].forward_ns, whole.stages[1].forward_ns / 2)
        hidden = pw.build_cost_model(pw.tensor_parallel_view(model, 4, overlap=True), cluster,
                                     pw.uniform_partition(rank.num_layers, 2), microbatch_size=2)
        self.assertLess(hidden.stages[1].forward_ns, costs.stages[1].forward_ns)
        flash = pw.model_preset("gpt3-1.3b", attention="flash")
        self.assertLess(flash.layers[1].stash_bytes.per_sample_bytes, model.layers[1].stash_bytes.per_sample_bytes / 2)
        with self.assertRaisesRegex(pw.Error, "expected stored, selective-recompute or flash"):
            pw.model_preset("gpt3-1.3b", attention="fused")
        # On a GPU cost model a rank of 4 takes more than a quarter of the whole: narrower GEMMs.
        on_a100 = pw.model_preset("gpt3-1.3b", gpu="a100-sxm-80gb")
        quarter = pw.tensor_parallel_view(on_a100, 4)
        self.assertGreater(quarter.layers[1].forward.at(1), on_a100.layers[1].forward.at(1) / 4)
        with self.assertRaisesRegex(pw.Error, "unknown GPU 'a100'"):
            pw.model_preset("gpt3-1.3b", gpu="a100")
        with self.assertRaisesRegex(pw.Error, "excludes option 'flops_per_s'"):
            pw.model_preset("gpt3-1.3b", gpu="h100-sxm", flops_per_s=1e14)
        with self.assertRaisesRegex(pw.Error, "does not say how it splits"):
            pw.tensor_parallel_view(pw.model_preset("uniform"), 2)
        result = pw.sweep(model, cluster, batch=[16], stages=[2], tp=[1, 2], microbatches=[4], schedules=["1f1b"],
                          recompute=[False])
        cols = result.columns()
        self.assertEqual(list(cols["tp"]), [1, 2])
        self.assertEqual(list(cols["devices"]), [2, 4])
        self.assertEqual([r.tp for r in result.rows], [1, 2])
        plan = pw.plan(model, cluster, batch=64, devices=8, tp=[2, 8], schedules=["1f1b"])
        families = [r["family"] for r in plan.runners_up]
        self.assertIn("tp 8 x pp 1 x dp 1", families)
        self.assertNotIn("tp 1 x pp 8 x dp 1", families)


class VizTest(unittest.TestCase):
    def setUp(self):
        cm = pw.uniform_cost_model(2, MS, 2 * MS, MS // 10)
        self.result = pw.simulate(pw.lower_comm(pw.generate("gpipe", 2, 2)), cm)

    def test_svg_and_grid(self):
        svg = pw.svg_gantt([self.result.timeline], title="two stages", width_px=600)
        self.assertIn("<svg", svg)
        self.assertIn("two stages", svg)
        self.assertIn("d0:", pw.terminal_grid(self.result.timeline))
        self.assertEqual(pw.as_timelines(self.result)[0], self.result.timeline)

    def test_trace_file(self):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "trace.json")
            counts = pw.write_chrome_trace(path, [self.result.timeline])
            with open(path) as f:
                trace = json.load(f)
            self.assertEqual(len(trace["traceEvents"]), counts["events"])
            self.assertEqual(counts["dropped_spans"], 0)
            pw.write_svg(os.path.join(d, "t.svg"), [self.result.timeline])
            self.assertTrue(os.path.getsize(os.path.join(d, "t.svg")) > 0)
        with self.assertRaises(pw.Error):
            pw.write_svg("/nonexistent-dir/t.svg", [self.result.timeline])


class PlottingTest(unittest.TestCase):
    def test_plot_spans_draws_every_compute_span(self):
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        r = pw.simulate(pw.lower_comm(pw.generate("gpipe", 2, 3)), pw.uniform_cost_model(2, MS, 2 * MS, MS // 10))
        fig, ax = plt.subplots()
        pw.plot_timeline(ax, r)
        # One broken_barh collection per span (compute and comm strips).
        self.assertEqual(len(ax.collections), len(r.timeline.spans))
        self.assertEqual(ax.get_xlim(), (0.0, r.makespan_ns / MS))
        self.assertEqual(ax.get_title(), "predicted")
        plt.close(fig)
        self.assertEqual(pw.kind_color("SEND_F"), "#6b6b6b")
        self.assertNotEqual(pw.kind_color("F"), pw.kind_color("B"))


class DocstringTest(unittest.TestCase):
    def test_every_public_name_documents_more_than_its_signature(self):
        undocumented = []
        for name in pw.__all__:
            obj = getattr(pw, name)
            if not (inspect.isclass(obj) or callable(obj)):
                continue
            doc = (obj.__doc__ or "").strip()
            lines = [line for line in doc.splitlines() if line.strip()]
            # pybind11 puts the signature on the first line; require a description after it.
            if inspect.isclass(obj) or inspect.isfunction(obj):  # pure Python: no signature line
                ok = bool(lines)
            else:
                ok = len(lines) >= 2
            if not ok:
                undocumented.append(name)
        self.assertEqual(undocumented, [])


class ReprTest(unittest.TestCase):
    def test_every_class_has_a_readable_repr(self):
        import inspect
        classes = [getattr(pw._pipeworks, n) for n in dir(pw._pipeworks)
                   if inspect.isclass(getattr(pw._pipeworks, n)) and not issubclass(getattr(pw._pipeworks, n), Exception)]
        plain = [c.__name__ for c in classes if "__repr__" not in c.__dict__]
        self.assertEqual(plain, [])

    def test_reprs_name_their_figures(self):
        layer = pw.model_preset("gpt2-small").layers[1]
        self.assertRegex(repr(layer), r"^<LayerSpec '.*' forward .* backward .* \(I .*, W .*\), stash .*, params .*>$")
        plan = pw.plan(pw.model_preset("uniform", layers=8), pw.cluster_preset("dgx-h100"), batch=16, devices=4)
        self.assertRegex(repr(plan), r"^<Plan best: \d+ stages, \d+ micro-batches, .*, recompute (on|off): step .*>$")
        self.assertRegex(repr(plan.sweep.rows[0]), r"^<SweepRow \d+ stages, .* samples/s, peak .*>$")
        r = pw.simulate(pw.generate("gpipe", 2, 2), pw.uniform_cost_model(2, 1 * MS, 2 * MS))
        self.assertEqual(repr(r.devices[0].memory)[:len("<MemoryReport peak ")], "<MemoryReport peak ")
        self.assertRegex(repr(r.timeline.stats()), r"^<TimelineStats makespan 9.00 ms, bubble 33.3%, 2 devices>$")
        self.assertEqual(repr(pw.cluster_preset("cpu2").intra_node)[:len("<LinkSpec bandwidth ")], "<LinkSpec bandwidth ")


if __name__ == "__main__":
    unittest.main()
