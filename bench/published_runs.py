#!/usr/bin/env python3
"""bench/published: the simulator against published GPU runs (../shared/published-runs/).

Each usable row of vTrain's measured A100 runs (single node and multi-node) and of Narayanan et
al. 2021 Table 1 is simulated with `pipeworks simulate` on the row's own configuration and
compared with its measured iteration time; Zero Bubble Table 4 on the authors' profiled times.
Rows the simulator cannot express yet are counted and named by reason, never dropped silently.

The GPT layers are timed kernel by kernel on the A100 GPU cost model
(sim/spec/gpu_kernels/a100-sxm-80gb.json), whose fitted constants come from vTrain's single-node
rows alone (bench/fit_gpu_kernels): that table is reported as fitted, every other as held out.
`--cost-model flops` times them instead as FLOPs at 40% of peak (the baseline, nothing fitted).
Every other constant below is an assumption written beside it.

Usage: bench/published [PIPEWORKS_BINARY] [--runs DIR] [--limit N] [--rows] [--per-layer]
                       [--cost-model gpu|flops] [--gpu-kernels FILE] [--tables NAMES]
"""
import argparse
import csv
import json
import os
import statistics
import subprocess
import sys
import tempfile
from collections import Counter

# Assumptions, none fitted (the rows do not state them; the CSV says "unconfirmed"):
A100_PEAK_FLOPS = 312e12            # dense BF16, gpu_datasheets.csv
SUSTAINED_FRACTION = 0.40           # the gpt preset's FLOP model at 40% of peak (issue 38's baseline)
A100_HBM_BYTES_PER_S = 2.039e12     # A100 80GB, gpu_datasheets.csv (optimizer step's memory traffic)
LINK_LATENCY = "3us"                # NVLink hop, the dgx-h100 preset's estimate
INTER_NODE_LATENCY = "5us"          # the multinode preset's estimate
VOCAB = 50257                       # vTrain's default; "unconfirmed" in every row
GPU_KERNELS = "a100-sxm-80gb"       # the built-in GPU cost model the rows run on


class Costing:
    """How the GPT layers are timed: kernel by kernel on `gpu` (a built-in name or a data file's
    object), or (gpu None) as FLOPs at SUSTAINED_FRACTION of the A100's peak."""
    def __init__(self, gpu=GPU_KERNELS):
        self.gpu = gpu

    def device(self, memory_bytes):
        device = {"memory_bytes": memory_bytes, "peak_flops_per_s": A100_PEAK_FLOPS,
                  "memory_bandwidth": A100_HBM_BYTES_PER_S}
        if self.gpu is not None:
            device["gpu"] = self.gpu
        return device

    def flags(self):
        return [] if self.gpu is not None else ["--flops", str(A100_PEAK_FLOPS * SUSTAINED_FRACTION)]


def cluster_spec(row, nodes, costing):
    """One A100 node (or several) as the row states its links: intra_node_bw_GBps per direction
    between two GPUs of a node, inter_node_bw_Gbps per node, one NIC per GPU sharing it."""
    per_node = int(row["node_size"])
    spec = {
        "name": f"vtrain-a100-{nodes}x{per_node}",
        "devices": nodes * per_node,
        "device": costing.device("unknown"),
        "devices_per_node": per_node,
        "intra_node": {"bandwidth_bytes_per_s": float(row["intra_node_bw_GBps"]) * 1e9, "latency": LINK_LATENCY},
        "comm_mode": "overlap",
    }
    if nodes > 1:
        per_gpu = float(row["inter_node_bw_Gbps"]) * 1e9 / 8 / per_node
        spec["inter_node"] = {"bandwidth_bytes_per_s": per_gpu, "latency": INTER_NODE_LATENCY}
        spec["inter_node_links"] = per_node
    return spec


def megatron_partition(layers, pp):
    """Megatron-LM's stages: the blocks split evenly, the embedding on the first stage, the LM
    head on the last (the gpt preset's layers are embedding, the blocks, lm_head)."""
    per = layers // pp
    counts = [per] * pp
    counts[0] += 1
    counts[-1] += 1
    return ",".join(map(str, counts))


def unusable(row):
    """Why the simulator cannot predict this row yet, or None."""
    if int(row["tensor parallelism"]) > int(row["node_size"]):
        return "tensor parallelism across nodes (pipeworks keeps a tensor-parallel group inside a node)"
    if "1F1B" not in row["schedule"]:
        return f"schedule {row['schedule']!r}"
    if int(row["# layers"]) % int(row["pipeline parallelism"]) != 0:
        return "blocks not divisible by the pipeline ranks (Megatron refuses such a run)"
    return None


def simulate(exe, row, workdir, costing):
    """The row's predicted iteration time in ms, or raises with pipeworks' message."""
    gpus = int(row["# GPUs"])
    per_node = int(row["node_size"])
    nodes = max(1, (gpus + per_node - 1) // per_node)
    spec_path = os.path.join(workdir, "cluster.json")
    with open(spec_path, "w") as f:
        json.dump(cluster_spec(row, nodes, costing), f)
    tp, pp, dp = int(row["tensor parallelism"]), int(row["pipeline parallelism"]), int(row["data parallelism"])
    batch, micro = int(row["global batch"]), int(row["micro batch"])
    gpt = GptRun(layers=int(row["# layers"]), hidden=int(row["hidden size"]), heads=int(row["attention heads"]),
                 sequence=int(row["sequence length"]), vocab=VOCAB)
    layout = Layout(tp=tp, pp=pp, dp=dp, virtual_stages=1, batch=batch, microbatch=micro, schedule="1f1b",
                    recompute="checkpointing" in row["recompute"])
    return simulate_gpt(exe, gpt, layout, spec_path, workdir, costing) * 1e3


class GptRun:
    """A GPT's shape as the gpt preset's options take it."""
    def __init__(self, layers, hidden, heads, sequence, vocab):
        self.layers, self.hidden, self.heads, self.sequence, self.vocab = layers, hidden, heads, sequence, vocab


class Layout:
    """tp x pp (x v) x dp, the batch and its micro-batches, the schedule and recompute of a run."""
    def __init__(self, tp, pp, dp, virtual_stages, batch, microbatch, schedule, recompute):
        self.tp, self.pp, self.dp, self.v = tp, pp, dp, virtual_stages
        self.batch, self.microbatch, self.schedule, self.recompute = batch, microbatch, schedule, recompute


def simulate_gpt(exe, gpt, layout, cluster_path, workdir, costing):
    """`pipeworks simulate` of the run; its step in seconds, or raises with pipeworks' message."""
    out = os.path.join(workdir, "report.json")
    stages = layout.pp * layout.v
    args = [exe, "simulate", "--model", "gpt", "--layers", str(gpt.layers), "--model-width", str(gpt.hidden),
            "--heads", str(gpt.heads), "--seq-len", str(gpt.sequence), "--vocab", str(gpt.vocab),
            *costing.flags(), "--cluster-spec", cluster_path,
            "--schedule", layout.schedule, "--pp", str(layout.pp), "--dp", str(layout.dp), "--tp", str(layout.tp),
            "--batch", str(layout.batch), "-M", str(layout.batch // (layout.microbatch * layout.dp)),
            "--partition", megatron_partition(gpt.layers, stages), "--json", out]
    if layout.v > 1:
        args += ["-v", str(layout.v)]
    if layout.recompute:
        args.append("--recompute")
    done = subprocess.run(args, capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError((done.stderr or done.stdout).strip().splitlines()[-1])
    with open(out) as f:
        return json.load(f)["step_ns"] / 1e9


# Narayanan et al. 2021 Table 1 on Selene: DGX A100 nodes as the paper's section 5 and the
# datasheets state them (gpu_datasheets.csv): NVLink 3 at 300 GB/s per direction a GPU, one
# 200 Gbit/s HDR NIC a GPU. Latencies are the same estimates as above.
SELENE_NVLINK_BYTES_PER_S = 300e9
SELENE_NIC_BYTES_PER_S = 200e9 / 8


def selene_cluster_spec(gpus, costing):
    nodes = (gpus + 7) // 8
    return {"name": f"selene-{nodes}x8", "devices": nodes * 8, "device": costing.device("80GiB"),
            "devices_per_node": 8,
            "intra_node": {"bandwidth_bytes_per_s": SELENE_NVLINK_BYTES_PER_S, "latency": LINK_LATENCY},
            "inter_node": {"bandwidth_bytes_per_s": SELENE_NIC_BYTES_PER_S, "latency": INTER_NODE_LATENCY},
            "inter_node_links": 8, "comm_mode": "overlap"}


def narayanan_table(exe, path, show_rows, costing):
    """Each row's predicted iteration time against the one its TFLOP/s implies (the CSV's
    derived_iteration_time_s, the paper's eq. 3)."""
    errors = []
    with tempfile.TemporaryDirectory() as workdir:
        for row in csv.DictReader(open(path)):
            gpus = int(row["gpus"])
            cluster = os.path.join(workdir, "selene.json")
            with open(cluster, "w") as f:
                json.dump(selene_cluster_spec(gpus, costing), f)
            v = int(row["virtual_stages_per_rank"])
            gpt = GptRun(layers=int(row["layers"]), hidden=int(row["hidden"]), heads=int(row["heads"]),
                         sequence=int(row["seq_len"]), vocab=int(row["vocab"]))
            layout = Layout(tp=int(row["tp"]), pp=int(row["pp"]), dp=int(row["dp"]), virtual_stages=v,
                            batch=int(row["global_batch"]), microbatch=int(row["micro_batch"]),
                            schedule="interleaved-1f1b" if v > 1 else "1f1b", recompute=True)
            predicted = simulate_gpt(exe, gpt, layout, cluster, workdir, costing)
            measured = float(row["derived_iteration_time_s"])
            errors.append(predicted / measured - 1)
            if show_rows:
                print(f"  {row['model']:>5}: tp {layout.tp} pp {layout.pp} v {v} dp {layout.dp} mb {layout.microbatch} "
                      f"batch {layout.batch}: predicted {predicted:.2f} s, measured {measured:.2f} s, "
                      f"{100 * errors[-1]:+.1f}%")
    return errors


# Zero Bubble Table 4: the paper's schedules and ours. ZB-1p and ZB-2p are schedules the authors'
# search builds for the profiled times; our hand-written ZB-H1 and ZB-H2 stand in for them (the
# same memory budgets, 1x and 2x 1F1B's) until pipeworks synthesizes its own (issue 39).
ZB_SCHEDULES = {"1F1B": ("1f1b", "1F1B"), "1F1B-I": ("interleaved-1f1b", "interleaved 1F1B, one layer a chunk"),
                "ZB-1p": ("zb-h1", "ZB-H1 standing in for ZB-1p"), "ZB-2p": ("zb-h2", "ZB-H2 standing in for ZB-2p")}


def zb_model_spec(row, chunks):
    """`chunks` uniform layers whose F, I (the paper's B) and W share out the profiled stage times."""
    pp = int(row["pp"])
    per = pp / chunks
    ms = {k: float(row[f"T{k}_ms_profiled"]) * per for k in ("F", "B", "W")}
    layer = lambda i: {"name": f"chunk{i}", "forward": f"{round(ms['F'] * 1e6)}ns",
                       "backward_input": f"{round(ms['B'] * 1e6)}ns", "backward_weight": f"{round(ms['W'] * 1e6)}ns",
                       "output_bytes": "1B", "stash_bytes": "1B", "param_bytes": "1B"}
    return {"name": f"zb-{row['model']}", "layers": [layer(i) for i in range(chunks)]}


def zb_cluster_spec(row):
    """pp devices whose every hand-off takes the profiled communication time."""
    pp = int(row["pp"])
    comm = round(float(row["Tcomm_ms_profiled"]) * 1e6)
    return {"name": "zb-a100", "devices": pp, "device": {"memory_bytes": "unknown"}, "devices_per_node": pp,
            "intra_node": {"bandwidth_bytes_per_s": 1e18, "latency": f"{comm}ns"}, "comm_mode": "overlap"}


def zb_predict(exe, row, workdir):
    """Predicted samples per GPU per second of the row's schedule on the authors' profiled times."""
    pp, m = int(row["pp"]), int(row["num_microbatches"])
    ours = ZB_SCHEDULES[row["schedule"]][0]
    v = max(1, round(int(row["layers"]) / pp)) if ours == "interleaved-1f1b" else 1
    model, cluster, out = (os.path.join(workdir, f) for f in ("zb_model.json", "zb_cluster.json", "zb.json"))
    with open(model, "w") as f:
        json.dump(zb_model_spec(row, pp * v), f)
    with open(cluster, "w") as f:
        json.dump(zb_cluster_spec(row), f)
    args = [exe, "simulate", "--model-spec", model, "--cluster-spec", cluster, "--schedule", ours, "--pp", str(pp),
            "-M", str(m), "--batch", str(m), "--partition", "uniform", "--json", out]
    if v > 1:
        args += ["-v", str(v)]
    done = subprocess.run(args, capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError((done.stderr or done.stdout).strip().splitlines()[-1])
    with open(out) as f:
        step_s = json.load(f)["makespan_ns"] / 1e9
    return int(row["global_batch"]) / (step_s * int(row["gpus"]))


def zb_table(exe, path, show_rows):
    """Errors per row, and how many (model, M) groups rank the four schedules as measured."""
    rows = list(csv.DictReader(open(path)))
    errors, groups = [], {}
    with tempfile.TemporaryDirectory() as workdir:
        for row in rows:
            predicted = zb_predict(exe, row, workdir)
            measured = float(row["samples_per_gpu_per_s"])
            errors.append(predicted / measured - 1)
            groups.setdefault((row["model"], row["num_microbatches"]), []).append(
                (row["schedule"], predicted, measured))
            if show_rows:
                print(f"  {row['model']} M {row['num_microbatches']} {row['schedule']:<7} "
                      f"({ZB_SCHEDULES[row['schedule']][1]}): predicted {predicted:.2f}, measured {measured:.2f} "
                      f"samples/GPU/s, {100 * errors[-1]:+.1f}%")
    ranked = 0
    for key, entries in groups.items():
        by_predicted = [e[0] for e in sorted(entries, key=lambda e: -e[1])]
        by_measured = [e[0] for e in sorted(entries, key=lambda e: -e[2])]
        ranked += by_predicted == by_measured
        if show_rows and by_predicted != by_measured:
            print(f"  {key[0]} M {key[1]}: predicted order {by_predicted}, measured {by_measured}")
    return errors, ranked, len(groups)


def per_layer_times(path):
    """vTrain's rows without pipeline or data parallelism, where a step is M micro-batches through
    L layers on each tensor-parallel rank: the measured time per layer and micro-batch beside what
    the layer's GEMMs (forward, re-computed forward, backward: 4 x 24 s h^2 + 16 s^2 h FLOPs per
    sample, / tp) take at 60% of the A100's peak, per (tp, h)."""
    groups = {}
    for row in csv.DictReader(open(path)):
        if row["pipeline parallelism"] != "1" or row["data parallelism"] != "1":
            continue
        tp, h, s = int(row["tensor parallelism"]), int(row["hidden size"]), int(row["sequence length"])
        b, layers = int(row["micro batch"]), int(row["# layers"])
        m = int(row["global batch"]) // b
        measured = float(row["iteration time (ms)"]) / (layers * m)
        gemms = 4 * (24 * s * h * h + 4 * s * s * h) * b / tp / (0.6 * A100_PEAK_FLOPS) * 1e3
        groups.setdefault((tp, h), []).append((measured, gemms))
    print(f"  {'tp':>3} {'h':>5} {'rows':>5} {'measured ms':>12} {'GEMMs at 60% ms':>16}   (medians, per layer and micro-batch)")
    for (tp, h), values in sorted(groups.items()):
        print(f"  {tp:>3} {h:>5} {len(values):>5} {statistics.median(v[0] for v in values):>12.3f} "
              f"{statistics.median(v[1] for v in values):>16.3f}")


def summary(name, errors):
    if not errors:
        return f"{name}: no row predicted"
    absolute = [abs(e) for e in errors]
    return (f"{name}: {len(errors)} rows, mean |error| {100 * statistics.mean(absolute):.1f}%, "
            f"median {100 * statistics.median(absolute):.1f}%, worst {100 * max(absolute):.1f}%, "
            f"mean signed {100 * statistics.mean(errors):+.1f}%")


def run_table(exe, path, limit, show_rows, costing, every=1):
    rows = list(csv.DictReader(open(path)))[:limit][::every]
    errors, pure, skipped, failed, by_tp = [], [], Counter(), Counter(), {}
    with tempfile.TemporaryDirectory() as workdir:
        for i, row in enumerate(rows):
            reason = unusable(row)
            if reason:
                skipped[reason] += 1
                continue
            try:
                predicted = simulate(exe, row, workdir, costing)
            except RuntimeError as e:
                failed[str(e)[:120]] += 1
                continue
            measured = float(row["iteration time (ms)"])
            errors.append(predicted / measured - 1)
            if int(row["data parallelism"]) == 1 and int(row["tensor parallelism"]) == 1:
                pure.append(errors[-1])
            by_tp.setdefault(int(row["tensor parallelism"]), []).append(errors[-1])
            if show_rows:
                print(f"  row {i + 2}: gpus {row['# GPUs']} h {row['hidden size']} L {row['# layers']} "
                      f"tp {row['tensor parallelism']} pp {row['pipeline parallelism']} dp {row['data parallelism']} "
                      f"mb {row['micro batch']} "
                      f"batch {row['global batch']}: predicted {predicted:.1f} ms, measured {measured:.1f} ms, "
                      f"{100 * errors[-1]:+.1f}%")
    return errors, pure, by_tp, skipped, failed, len(rows)


TABLES = ("zero-bubble", "narayanan", "vtrain-single", "vtrain-multi")


def costing_from(args):
    if args.cost_model == "flops":
        return Costing(gpu=None)
    if args.gpu_kernels:
        with open(args.gpu_kernels) as f:
            return Costing(gpu=json.load(f))
    return Costing()


def vtrain_report(exe, args, costing, table, title):
    path = os.path.join(args.runs, table)
    if not os.path.exists(path):
        print(f"{title}: {path} not found")
        return 1
    print(f"\n{title} ({table})")
    errors, pure, by_tp, skipped, failed, total = run_table(exe, path, args.limit, args.rows, costing)
    print("  " + summary("predicted", errors))
    print("  " + summary("of them pure pipelines (tp 1, dp 1)", pure))
    for tp in sorted(by_tp):
        print("  " + summary(f"of them tp {tp}", by_tp[tp]))
    for reason, count in skipped.most_common():
        print(f"  not predicted yet, {count} of {total} rows: {reason}")
    for message, count in failed.most_common():
        print(f"  pipeworks refused {count} rows: {message}")
    return 1 if failed else 0


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("exe", nargs="?", default="build/release/cli/pipeworks")
    here = os.path.dirname(os.path.abspath(__file__))
    parser.add_argument("--runs", default=os.path.join(here, "..", "..", "shared", "published-runs"))
    parser.add_argument("--limit", type=int, default=None, help="the first N rows of each table")
    parser.add_argument("--rows", action="store_true", help="print every predicted row")
    parser.add_argument("--per-layer", action="store_true",
                        help="only vTrain's tensor-parallel rows without pp or dp: measured time per layer vs GEMMs")
    parser.add_argument("--cost-model", choices=("gpu", "flops"), default="gpu",
                        help="gpu: the A100 GPU cost model, kernel by kernel (default); flops: 40%% of peak")
    parser.add_argument("--gpu-kernels", help="a GPU cost model data file to use instead of the built-in A100's")
    parser.add_argument("--tables", default=",".join(TABLES), help=f"comma-separated, of {', '.join(TABLES)}")
    args = parser.parse_args()
    exe = os.path.realpath(args.exe)
    tables = args.tables.split(",")
    if any(t not in TABLES for t in tables):
        parser.error(f"--tables: expected names from {', '.join(TABLES)}")
    if args.per_layer:
        per_layer_times(os.path.join(args.runs, "vtrain_ground_truth_single.csv"))
        return 0
    costing = costing_from(args)
    if costing.gpu is None:
        print(f"cost model: FLOPs at {SUSTAINED_FRACTION:.0%} of {A100_PEAK_FLOPS / 1e12:.0f} TFLOP/s (assumed, "
              f"nothing fitted); every table held out")
        fitted = "held out"
    else:
        source = args.gpu_kernels or f"sim/spec/gpu_kernels/{GPU_KERNELS}.json"
        print(f"cost model: kernel by kernel on {source}, its constants fitted on vTrain single-node only")
        fitted = "fitted"
    print(f"assumed: vocabulary {VOCAB}, NVLink latency {LINK_LATENCY}, the rows' own link bandwidths")
    status = 0
    zb_path = os.path.join(args.runs, "zerobubble_qi2024_table4_main.csv")
    if "zero-bubble" in tables and os.path.exists(zb_path):
        print("\nZero Bubble Table 4 (held out; the authors' profiled F, B, W and comm per stage, one step without "
              "the optimizer; ZB-1p/2p approximated by ZB-H1/H2)")
        errors, ranked, groups = zb_table(exe, zb_path, args.rows)
        print("  " + summary("predicted", errors))
        print(f"  schedules ranked as measured in {ranked} of {groups} (model, micro-batches) groups")
    narayanan = os.path.join(args.runs, "megatron_narayanan2021_table1.csv")
    if "narayanan" in tables and os.path.exists(narayanan):
        print("\nNarayanan et al. 2021 Table 1 (held out; Selene DGX A100 nodes, fp16, full recompute, the run "
              "scripts' micro-batches and interleaving)")
        print("  " + summary("predicted", narayanan_table(exe, narayanan, args.rows, costing)))
    if "vtrain-single" in tables:
        status |= vtrain_report(exe, args, costing, "vtrain_ground_truth_single.csv", f"vTrain single node ({fitted})")
    if "vtrain-multi" in tables:
        status |= vtrain_report(exe, args, costing, "vtrain_ground_truth_multi.csv", "vTrain multi-node (held out)")
    return status


if __name__ == "__main__":
    sys.exit(main())
