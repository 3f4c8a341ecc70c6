"""Tests of pipeworks.synthesize and plan(synthesize=True): one schedule for one seed, the same
report as `pipeworks synthesize --json` for the same inputs, the cap held, the schedule simulating
to its step, a V placement, and hostile inputs refused with the CLI's messages.

Run with PYTHONPATH at the built package and PIPEWORKS_EXE at the built binary (ctest sets both).
"""

import json
import os
import subprocess
import tempfile
import threading
import unittest

import pipeworks as pw

PIPEWORKS = os.environ.get("PIPEWORKS_EXE", "")
GIB = 1 << 30
# 300 local-search evaluations: a fixed amount of work, so one seed gives one schedule anywhere.
PROBLEM = dict(stages=4, microbatches=8, max_evaluations=300)


def model():
    return pw.model_preset("uniform")


def cluster():
    return pw.cluster_preset("dgx-h100")


def cli(*args):
    return subprocess.run([PIPEWORKS, *args], capture_output=True, text=True, check=False)


class SynthesizeTest(unittest.TestCase):
    def test_one_seed_gives_one_schedule(self):
        a = pw.synthesize(model(), cluster(), memory_cap_bytes=GIB, seed=5, **PROBLEM)
        b = pw.synthesize(model(), cluster(), memory_cap_bytes=GIB, seed=5, **PROBLEM)
        self.assertFalse(a.stopped_by_clock)
        self.assertEqual(a.schedule, b.schedule)
        self.assertEqual(a.to_json(), b.to_json())
        self.assertEqual(a.evaluations, 300)
        self.assertRegex(repr(a), r"^<SynthesisResult 4 stages, 8 micro-batches: step .*, .*% above the bound>$")

    def test_recompute_false_never_searches_r(self):
        # uniform on cpu2, K 2, M 8: 200 MiB hold 2 micro-batches plainly, 8 re-materialized.
        args = dict(stages=2, microbatches=8, max_evaluations=100, memory_cap_bytes=200 << 20)
        searched = pw.synthesize(pw.model_preset("uniform", layers=4), pw.cluster_preset("cpu2"), **args)
        plain = pw.synthesize(pw.model_preset("uniform", layers=4), pw.cluster_preset("cpu2"), recompute=False, **args)
        self.assertEqual(searched.recompute_in_flight_limits, [8, 8])
        self.assertEqual(len(searched.hand_written), 8)
        self.assertEqual(plain.recompute_in_flight_limits, [])
        self.assertEqual(len(plain.hand_written), 4)
        self.assertEqual(plain.recomputed_backwards, 0)

    def test_fits_the_cap_and_simulates_to_its_step(self):
        cap = 2 * GIB
        r = pw.synthesize(model(), cluster(), memory_cap_bytes=cap, **PROBLEM)
        self.assertTrue(r.fits)
        self.assertEqual(r.caps_bytes, [cap] * 4)
        self.assertEqual(len(r.peak_bytes), 4)
        self.assertTrue(all(peak <= cap for peak in r.peak_bytes))
        self.assertGreaterEqual(r.step_ns, r.lower_bound_ns)
        self.assertAlmostEqual(r.gap_to_lower_bound, (r.step_ns - r.lower_bound_ns) / r.lower_bound_ns)
        plain = [h["schedule"] for h in r.hand_written if not h["recompute"]]
        self.assertEqual(plain, ["gpipe", "1f1b", "zb-h1", "zb-h2"])
        fitting = [h for h in r.hand_written if h["fits"]]
        self.assertTrue(all(r.step_ns <= h["step_ns"] for h in fitting))
        self.assertEqual(r.best_hand_written, min(fitting, key=lambda h: h["step_ns"])["label"])
        self.assertTrue(r.origin)
        # The schedule is the module's own: lowered and simulated on the same costs, the same step.
        costs = pw.build_cost_model(model(), cluster(), pw.uniform_partition(8, 4), microbatch_size=4)
        self.assertEqual(pw.simulate(pw.lower_comm(r.schedule), costs).step_ns, r.step_ns)
        report = json.loads(r.to_json())
        self.assertEqual((report["step_ns"], report["microbatch_size"]), (r.step_ns, r.microbatch_size))

    @unittest.skipUnless(os.path.exists(PIPEWORKS), "PIPEWORKS_EXE: the pipeworks binary")
    def test_report_equals_the_cli_json(self):
        with tempfile.TemporaryDirectory() as scratch:
            path = os.path.join(scratch, "report.json")
            run = cli("synthesize", "--model", "uniform", "--cluster", "dgx-h100", "-K", "4", "-M", "8",
                      "--memory-cap", "1GiB", "--batch", "16", "--seed", "7", "--max-evaluations", "300",
                      "--json", path)
            self.assertEqual(run.returncode, 0, run.stdout + run.stderr)
            with open(path, encoding="utf-8") as f:
                expected = f.read()
        found = pw.synthesize(model(), cluster(), memory_cap_bytes=pw.parse_bytes("1GiB"), batch=16, seed=7,
                              **PROBLEM)
        self.assertEqual(found.to_json(), expected)

    def test_hostile_inputs_raise_with_the_cli_messages(self):
        cases = [
            (dict(memory_cap_bytes=1024), "no schedule fits a memory cap of 1.00 KiB"),
            (dict(memory_cap_bytes=0), "the memory cap must be positive, got 0 bytes"),
            (dict(memory_cap_bytes=GIB, stages=9), "9 stages do not fit on cluster 'dgx-h100'"),
            (dict(memory_cap_bytes=GIB, stages=0), "number of stages must be at least 1, got 0"),
            (dict(memory_cap_bytes=GIB, microbatches=0), "number of micro-batches must be at least 1, got 0"),
            (dict(memory_cap_bytes=GIB, batch=12), "batch 12 and 8 micro-batches: "),
            (dict(memory_cap_bytes=GIB, time_limit=0.0), "the time limit must be above 0 and at most 3600 s"),
            (dict(memory_cap_bytes=GIB, time_limit=float("nan")), "the time limit must be above 0"),
            (dict(memory_cap_bytes=GIB, max_evaluations=-2), "the evaluations must be at least 0, got -2"),
            (dict(memory_cap_bytes=GIB, optimizer="lion"), "lion"),
            (dict(memory_cap_bytes=GIB, microbatches=500000, stages=8, time_limit=1.0), "more than the time limit"),
        ]
        for overrides, message in cases:
            args = dict(stages=4, microbatches=8, max_evaluations=10)
            args.update(overrides)
            with self.subTest(**{k: str(v) for k, v in overrides.items()}):
                with self.assertRaises(ValueError) as raised:
                    pw.synthesize(model(), cluster(), **args)
                self.assertIsInstance(raised.exception, pw.Error)
                self.assertIn(message, str(raised.exception))

    @unittest.skipUnless(os.path.exists(PIPEWORKS), "PIPEWORKS_EXE: the pipeworks binary")
    def test_the_cli_prints_the_same_messages(self):
        for flags, message in [(["-K", "4", "--memory-cap", "1KiB"], "no schedule fits a memory cap of 1.00 KiB"),
                               (["-K", "9", "--memory-cap", "40GiB"], "9 stages do not fit on cluster 'dgx-h100'"),
                               (["-K", "4", "--memory-cap", "40GiB", "--batch", "12"], "--batch 12 and 8 micro-batches: ")]:
            run = cli("synthesize", "--model", "uniform", "--cluster", "dgx-h100", "-M", "8", *flags)
            self.assertNotEqual(run.returncode, 0)
            self.assertIn(message, run.stderr)

    def test_placement_shares_devices_in_a_v(self):
        v = [0, 1, 2, 3, 3, 2, 1, 0]
        r = pw.synthesize(model(), cluster(), memory_cap_bytes=GIB, stages=8, microbatches=8, max_evaluations=100,
                          placement=v)
        self.assertEqual(list(r.schedule.placement), v)
        self.assertEqual(r.caps_bytes, [GIB] * 4)
        self.assertEqual(len(r.peak_bytes), 4)
        self.assertTrue(r.fits)
        self.assertEqual(len(r.in_flight_limits), 8)
        self.assertEqual([h["label"] for h in r.hand_written if not h["recompute"]], ["zb-v", "dualpipe-v"])
        report = json.loads(r.to_json())
        self.assertEqual(report["placement"], v)
        self.assertEqual(report["devices"][0]["stages"], [0, 7])
        with self.assertRaisesRegex(pw.Error, "placement 0,1,0: placement names 3 stages but the schedule has 8"):
            pw.synthesize(model(), cluster(), memory_cap_bytes=GIB, stages=8, microbatches=8, max_evaluations=10,
                          placement=[0, 1, 0])

    def test_search_placement_tries_the_v_and_the_loop(self):
        r = pw.synthesize(model(), cluster(), memory_cap_bytes=GIB, stages=8, microbatches=8, max_evaluations=100,
                          search_placement=4)
        tried = r.placements_tried
        self.assertEqual([t["name"] for t in tried], ["V", "loop of 2"])
        self.assertEqual(tried[1]["placement"], [0, 1, 2, 3, 0, 1, 2, 3])
        fastest = min(tried, key=lambda t: t["step_ns"])
        self.assertEqual(list(r.schedule.placement), fastest["placement"])
        self.assertEqual(r.step_ns, fastest["step_ns"])
        self.assertEqual(json.loads(r.to_json())["placements_tried"][0]["name"], "V")
        self.assertEqual(pw.synthesize(model(), cluster(), memory_cap_bytes=GIB, **PROBLEM).placements_tried, [])
        with self.assertRaisesRegex(pw.Error, "no placement of 8 stages on 3 devices to search"):
            pw.synthesize(model(), cluster(), memory_cap_bytes=GIB, stages=8, microbatches=8, search_placement=3)
        with self.assertRaisesRegex(ValueError, "search_placement"):
            pw.synthesize(model(), cluster(), memory_cap_bytes=GIB, stages=8, microbatches=8, search_placement=4,
                          placement=[0, 1, 2, 3, 3, 2, 1, 0])

    def test_threads_search_at_once_with_equal_results(self):
        results = [None, None]

        def work(i):
            results[i] = pw.synthesize(model(), cluster(), memory_cap_bytes=GIB, **PROBLEM).to_json()

        threads = [threading.Thread(target=work, args=(i,)) for i in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        self.assertEqual(results[0], results[1])


class PlanSynthesisTest(unittest.TestCase):
    def plan(self, **options):
        heavy = pw.model_preset("uniform", param_bytes=GIB)  # replicas pay for their all-reduce
        return pw.plan(heavy, cluster(), batch=16, devices=4, memory_cap_bytes=40 * GIB, sweep_threads=1,
                       synthesize=True, synthesis_max_evaluations=200, **options)

    def test_synthesized_family_is_labelled_and_holds_its_schedule(self):
        plan = self.plan(schedules=["1f1b"])
        s = plan.synthesis
        self.assertTrue(s["found"])
        source = plan.sweep.rows[s["source"]]
        self.assertEqual((source.dp, source.tp, source.recompute, source.virtual_stages), (1, 1, False, 1))
        family = plan.runners_up[-1]
        self.assertTrue(family["family"].startswith("synthesized (searched from K=4 M="), family["family"])
        self.assertTrue(s["beats_best"])
        self.assertTrue(family["reason"].startswith("the best: faster than the best row"), family["reason"])
        self.assertLess(s["row"].makespan_ns, plan.sweep.rows[plan.best].makespan_ns)
        self.assertEqual(s["schedule"].num_stages, source.num_stages)
        self.assertEqual(json.loads(s["report_json"])["step_ns"], s["row"].makespan_ns)
        self.assertIn("synthesized schedule: searched from", plan.report())
        self.assertEqual(plan.report(), self.plan(schedules=["1f1b"]).report())

    def test_not_searched_when_only_replicated_rows_fit(self):
        one_layer = pw.model_preset("uniform", layers=1)
        plan = pw.plan(one_layer, cluster(), batch=16, devices=4, synthesize=True)
        s = plan.synthesis
        self.assertFalse(s["found"])
        self.assertIsNone(s["source"])
        self.assertIsNone(s["schedule"])
        self.assertEqual(s["why_not"], "no fitting row has tp 1 and dp 1")
        self.assertIn("dp 4: synthesis models one pipeline without data parallelism", s["unsearchable"])
        self.assertIsNone(pw.plan(one_layer, cluster(), batch=16, devices=4).synthesis)

    def test_bad_search_options_raise(self):
        with self.assertRaisesRegex(pw.Error, "the time limit must be above 0"):
            self.plan(synthesis_time_limit=0.0)


if __name__ == "__main__":
    unittest.main()
