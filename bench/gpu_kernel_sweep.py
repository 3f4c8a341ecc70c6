#!/usr/bin/env python3
"""bench/gpu_kernel_sweep: the GPU's own GEMM and streaming throughput beside what the GPU cost
model predicts for the same kernels (issue 40: within 10% over the swept shapes).

The shapes are the ones the cost model times for a GPT block (sim/spec/gpt_kernels.h): the QKV,
output projection and MLP GEMMs of GPT-3 XL (h 2048, s 2048) for micro-batches of 1, 2, 4 and 8 on
tensor-parallel ranks of 1, 2, 4 and 8, their weight gradients (inner size b s), the attention
scores as a batched GEMM, square GEMMs from 1024 to 8192, and copies of 16 MiB to 1 GiB. Each is
measured with CUDA events (3 warm-up runs, the median of 10) in bf16 through PyTorch, and
predicted by `pipeworks kernels`. Without a GPU (`--predict-only`) it prints the predictions alone.

Usage: bench/gpu_kernel_sweep [--exe PIPEWORKS] [--gpu h200-sxm] [--predict-only]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

H, S, HEADS = 2048, 2048, 16


def gemm_shapes():
    shapes = []
    for tp in (1, 2, 4, 8):
        for b in (1, 2, 4, 8):
            rows = b * S
            for n_in, n_out in ((H, 3 * H // tp), (H // tp, H), (H, 4 * H // tp), (4 * H // tp, H)):
                shapes.append((rows, n_out, n_in, 1))   # forward
                shapes.append((n_in, n_out, rows, 1))   # weight gradient
        shapes.append((S, S, H // HEADS, 4 * HEADS // tp))  # attention scores, micro-batch 4
    for side in (1024, 2048, 4096, 8192):
        shapes.append((side, side, side, 1))
    return sorted(set(shapes))


STREAM_BYTES = [16 << 20, 64 << 20, 256 << 20, 1 << 30]


def text(shape):
    m, n, k, batch = shape
    return f"{m}x{n}x{k}" + (f"x{batch}" if batch > 1 else "")


def predicted(exe, gpu, shapes):
    with tempfile.TemporaryDirectory() as work:
        out = os.path.join(work, "kernels.json")
        args = [exe, "kernels", "--gpu", gpu, "--json", out]
        for shape in shapes:
            args += ["--gemm", text(shape)]
        for size in STREAM_BYTES:
            args += ["--stream", f"{size}B"]
        done = subprocess.run(args, capture_output=True, text=True)
        if done.returncode != 0:
            sys.exit(f"gpu_kernel_sweep: {' '.join(args[:4])} ...: {done.stderr.strip()}")
        with open(out) as f:
            return [row["ns"] for row in json.load(f)["kernels"]]


def measured_ns(run):
    import torch
    for _ in range(3):
        run()
    times = []
    for _ in range(10):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        run()
        end.record()
        torch.cuda.synchronize()
        times.append(start.elapsed_time(end) * 1e6)
    return statistics.median(times)


def measure(shapes):
    import torch
    out = []
    for m, n, k, batch in shapes:
        a = torch.randn(batch, m, k, device="cuda", dtype=torch.bfloat16)
        b = torch.randn(batch, k, n, device="cuda", dtype=torch.bfloat16)
        out.append(measured_ns(lambda: torch.bmm(a, b) if batch > 1 else torch.mm(a[0], b[0])))
    for size in STREAM_BYTES:
        x = torch.empty(size // 4, device="cuda", dtype=torch.uint8)
        y = torch.empty_like(x)
        out.append(measured_ns(lambda: y.copy_(x)) * 2)  # a copy of size/4 bytes moves size/2; scale to size
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--exe", default="build/release/cli/pipeworks")
    parser.add_argument("--gpu", default="h200-sxm", help="the GPU cost model to compare with")
    parser.add_argument("--predict-only", action="store_true", help="print the predictions alone (no GPU)")
    args = parser.parse_args()
    shapes = gemm_shapes()
    names = [f"gemm {text(s)}" for s in shapes] + [f"stream {b >> 20} MiB" for b in STREAM_BYTES]
    flops = [2 * m * n * k * batch for m, n, k, batch in shapes] + [None] * len(STREAM_BYTES)
    pred = predicted(os.path.realpath(args.exe), args.gpu, shapes)
    meas = None if args.predict_only else measure(shapes)
    print(f"{'kernel':<30} {'predicted':>12} {'measured':>12} {'error':>8}   (TFLOP/s for GEMMs, GB/s for copies; error: predicted time / measured - 1)")
    errors = []
    for i, name in enumerate(names):
        rate = (lambda ns: flops[i] / ns / 1e3) if flops[i] else (lambda ns: STREAM_BYTES[i - len(shapes)] / ns)
        line = f"{name:<30} {rate(pred[i]):12.1f}"
        if meas:
            errors.append(pred[i] / meas[i] - 1)
            line += f" {rate(meas[i]):12.1f} {100 * errors[-1]:+7.1f}%"
        print(line)
    if errors:
        absolute = [abs(e) for e in errors]
        print(f"time error over {len(errors)} kernels: median {100 * statistics.median(absolute):.1f}%, "
              f"worst {100 * max(absolute):.1f}% (target: within 10%)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
