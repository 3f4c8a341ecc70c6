"""Writes notebooks/data/example_predict_report.json: a stand-in for the `--json` report of
`pipeworks run --predict`, made entirely with the simulator so predicted_vs_measured.ipynb has
something to read on a machine without a measured run.

Layout: the fields of the `pipeworks simulate --json` report (docs/simulate_report.md) for the
prediction, plus
  "timelines":     [{"name", "num_devices", "num_stages", "num_microbatches",
                     "spans": [{"device", "lane", "action", "stage", "kind", "microbatch",
                                "start_ns", "end_ns"}, ...]}, ...]   ("predicted", "measured")
  "action_errors": [{"action", "device", "lane", "predicted_start_ns", "measured_start_ns",
                     "predicted_duration_ns", "measured_duration_ns", "duration_error_ns",
                     "relative_duration_error"}, ...]                (measured - predicted)
  "example_source": how the file was made.
The "measured" timeline is a second simulation with deliberately perturbed costs (fixed factors
per stage and kind, slower links), so the errors are made up, not measured.

Run from the repository root with the module on PYTHONPATH:
  PYTHONPATH=build/<dir>/python python3 notebooks/data/make_example_predict_report.py
"""

import json
import os

import pipeworks as pw

K, M, MB = 2, 8, 4
# Perturbation of the "measured" run: (forward, backward) factor per stage, and link latency.
FACTORS = [(1.12, 0.94), (0.97, 1.18)]
EXTRA_LATENCY_NS = 40_000


def timeline_json(timeline):
    return {"name": timeline.name, "num_devices": timeline.num_devices, "num_stages": timeline.num_stages,
            "num_microbatches": timeline.num_microbatches,
            "spans": [{k: r[k] for k in ("device", "lane", "action", "stage", "kind", "microbatch", "start_ns",
                                         "end_ns")} for r in timeline.records()]}


def action_errors(predicted, measured):
    measured_at = {(r["action"], r["lane"]): r for r in measured.records()}
    rows = []
    for p in predicted.records():
        m = measured_at[(p["action"], p["lane"])]
        error = m["duration_ns"] - p["duration_ns"]
        rows.append({"action": p["action"], "device": p["device"], "lane": p["lane"],
                     "predicted_start_ns": p["start_ns"], "measured_start_ns": m["start_ns"],
                     "predicted_duration_ns": p["duration_ns"], "measured_duration_ns": m["duration_ns"],
                     "duration_error_ns": error,
                     "relative_duration_error": error / p["duration_ns"] if p["duration_ns"] else 0.0})
    return rows


def main():
    model = pw.model_preset("gpt2-small")
    cluster = pw.cluster_preset("cpu2")
    partition = pw.balanced_partition(model, K, microbatch_size=MB)
    schedule = pw.lower_comm(pw.generate("1f1b", K, M))
    cost = pw.build_cost_model(model, cluster, partition, microbatch_size=MB)
    predicted = pw.simulate(schedule, cost)

    stages = cost.stages
    for stage, (f, b) in zip(stages, FACTORS):
        stage.forward_ns = round(stage.forward_ns * f)
        stage.recompute_ns = stage.forward_ns
        stage.backward_input_ns = round(stage.backward_input_ns * b)
        stage.backward_weight_ns = round(stage.backward_weight_ns * b)
        stage.backward_ns = stage.backward_input_ns + stage.backward_weight_ns
    cost.stages = stages
    links = cost.links
    for link in links:
        link.latency_ns += EXTRA_LATENCY_NS
    cost.links = links
    measured_result = pw.simulate(schedule, cost)
    measured = measured_result.timeline
    measured.name = "measured"

    report = json.loads(pw.simulate_report_json(
        predicted, model=model.name, cluster=cluster.name, schedule="1f1b", num_stages=K, num_microbatches=M,
        microbatch_size=MB))
    report["example_source"] = (
        "notebooks/data/make_example_predict_report.py: both timelines are simulations; 'measured' uses "
        f"costs perturbed by per-stage (forward, backward) factors {FACTORS} and +{EXTRA_LATENCY_NS} ns link "
        "latency. Not a hardware measurement.")
    report["measured_makespan_ns"] = measured_result.makespan_ns
    report["timelines"] = [timeline_json(predicted.timeline), timeline_json(measured)]
    report["action_errors"] = action_errors(predicted.timeline, measured)
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "example_predict_report.json")
    with open(path, "w") as f:
        json.dump(report, f, indent=1)
        f.write("\n")
    print("wrote", path)


if __name__ == "__main__":
    main()
