#!/usr/bin/env python3
"""bench/fit_gpu_kernels: fits the A100 GPU cost model's free constants on vTrain's single-node
measured runs (../shared/published-runs/vtrain_ground_truth_single.csv) and on nothing else.

The constants fitted are those the data file marks "fitted": gemm_k_half, memory_efficiency,
host_per_kernel and the GEMM tile (gemm_efficiency is the measured matmul ceiling, not fitted). The search is coordinate descent over a
fixed grid per constant (deterministic): each round tries every grid value of one constant with
the others held, keeps the value with the lowest mean |error| of bench/published's vTrain
single-node predictions, and stops when a round changes nothing. `--write` stores the result in
sim/spec/gpu_kernels/a100-sxm-80gb.json (sources and the other figures kept); every other table
of bench/published stays held out.

Usage: bench/fit_gpu_kernels [PIPEWORKS_BINARY] [--runs DIR] [--rounds N] [--write]
"""
import argparse
import json
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import published_runs  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
DATA_FILE = os.path.join(HERE, "..", "sim", "spec", "gpu_kernels", "a100-sxm-80gb.json")
GRID = {
    "gemm_k_half": [0, 32, 64, 128, 256, 512, 1024],
    "memory_efficiency": [round(0.3 + 0.1 * i, 1) for i in range(8)],
    "host_per_kernel": [f"{us}us" for us in range(0, 160, 10)],
    "tile": [(128, 128), (128, 256), (256, 128)],
}


def with_value(model, key, value):
    out = dict(model)
    if key == "tile":
        out["tile_rows"], out["tile_cols"] = value
    else:
        out[key] = value
    return out


def value_of(model, key):
    return (model["tile_rows"], model["tile_cols"]) if key == "tile" else model[key]


def mean_error(exe, path, model):
    errors, _, _, _, failed, _ = published_runs.run_table(exe, path, None, False, published_runs.Costing(gpu=model))
    if failed or not errors:
        raise RuntimeError(f"pipeworks refused rows: {dict(failed)}")
    return statistics.mean(abs(e) for e in errors)


def fit(exe, path, model, rounds):
    best = mean_error(exe, path, model)
    print(f"start: mean |error| {100 * best:.2f}%")
    for round_number in range(1, rounds + 1):
        changed = False
        for key, grid in GRID.items():
            for value in grid:
                if value == value_of(model, key):
                    continue
                candidate = with_value(model, key, value)
                error = mean_error(exe, path, candidate)
                if error < best - 1e-6:
                    best, model, changed = error, candidate, True
            print(f"round {round_number}, {key} = {value_of(model, key)}: mean |error| {100 * best:.2f}%", flush=True)
        if not changed:
            break
    return model, best


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("exe", nargs="?", default="build/release/cli/pipeworks")
    parser.add_argument("--runs", default=os.path.join(HERE, "..", "..", "shared", "published-runs"))
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--write", action="store_true", help="store the fitted constants in the A100 data file")
    args = parser.parse_args()
    with open(DATA_FILE) as f:
        stored = json.load(f)
    model = {k: v for k, v in stored.items() if k != "sources"}
    path = os.path.join(args.runs, "vtrain_ground_truth_single.csv")
    model, best = fit(os.path.realpath(args.exe), path, model, args.rounds)
    fitted = {key: value_of(model, key) for key in GRID}
    print(f"fitted: {fitted}, mean |error| {100 * best:.2f}% on vTrain single-node")
    if args.write:
        for key in GRID:
            stored = with_value(stored, key, value_of(model, key))
        with open(DATA_FILE, "w") as f:
            json.dump(stored, f, indent=2)
            f.write("\n")
        print(f"written: {os.path.relpath(DATA_FILE)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
