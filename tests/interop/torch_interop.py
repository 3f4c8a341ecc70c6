#!/usr/bin/env python3
"""pipeworks against the real torch.distributed.pipelining, both ways, in one of five parts:

  torch-files      every torch schedule class's CSV (compute-only, and lowered with comms where torch
                   lowers it) for 2 and 4 ranks, 1-3 stages per rank, several M: `pipeworks validate`
                   and `pipeworks simulate --schedule-file` take each file
  torch-deferred-files
                   the same for torch's lowering with defer_pp_recv=True (each RECV moved to just
                   before its consumer, ordered by rank parity for non-blocking sends)
  torch-runs       a sample of those files (2 ranks, 4 micro-batches, every class and stages per
                   rank, both forms) trained by `pipeworks run --schedule-file F --check`: the
                   gradients and parameters equal the non-pipelined reference's
  orders           torch's compute-only order is `pipeworks schedule --format csv`'s, action for
                   action, for each kind pipeworks also has, or differs exactly as
                   pinned_differences.py pins (refused shapes included)
  pipeworks-files  pipeworks' CSV of every kind, compute-only and --comm, loads in torch's _load_csv
                   (which validates, and lowers the compute-only one with torch's passes), and
                   torch's _simulate_comms_compute runs the --comm one to the end (one without
                   OVERLAP_F_B composites: torch's simulator takes none)

    torch_interop.py PIPEWORKS WORKDIR --part torch-files|torch-deferred-files|torch-runs|orders|pipeworks-files

Prints its progress as counts and every failure; exits 1 on any. Needs only the stdlib and torch.
"""
import argparse
import concurrent.futures
import contextlib
import io
import os
import pathlib
import re
import subprocess
import sys
import warnings

import pinned_differences as pins

try:
    import torch_schedules as ts
except ImportError as missing:  # this Python has no torch: the ctest tests show as skipped
    print(f"SKIP tests/interop needs torch: {missing}")
    sys.exit(77)

RANKS = (2, 4)
MICROBATCHES = (1, 2, 3, 4, 5, 6, 8)
MAX_SHOWN = 30  # failures printed in full; the count covers all


def reason_of(why):
    """A failure's message without its paths and numbers, to count failures by reason."""
    reason = why.rsplit("error: ", 1)[-1]
    return re.sub(r"\d+", "N", re.sub(r"\S*/\S*", "FILE", reason))[:150]


class Report:
    """Counts per check and the failures, printed as they are summed up."""

    def __init__(self):
        self.failures = []
        self.reasons = {}

    def fail(self, what, why, check=""):
        self.failures.append(f"{check} {what}: {why}".strip())
        reason = f"{check}: {reason_of(why)}" if check else reason_of(why)
        self.reasons[reason] = self.reasons.get(reason, 0) + 1

    def count(self, label, passed, total):
        print(f"{label}: {passed} of {total}", flush=True)

    def finish(self):
        for line in self.failures[:MAX_SHOWN]:
            print(f"FAIL {line}")
        if len(self.failures) > MAX_SHOWN:
            print(f"... and {len(self.failures) - MAX_SHOWN} more failures")
        for reason, n in sorted(self.reasons.items(), key=lambda item: -item[1]):
            print(f"{n:5} x {reason}")
        print(f"{len(self.failures)} failure(s)")
        return 1 if self.failures else 0


def first_line(text):
    return next((line for line in text.splitlines() if line.strip()), "(no output)")


def run_all(commands):
    """Runs each argument list; returns (returncode, stdout, stderr) per command, in order."""
    def one(args):
        done = subprocess.run(args, capture_output=True, text=True, timeout=120)
        return done.returncode, done.stdout, done.stderr
    with concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        return list(pool.map(one, commands))


def torch_cases():
    return ts.cases(RANKS, MICROBATCHES)


def built_cases(report):
    """(case, schedule object) for each case torch builds; a refusal is checked against the pins."""
    out, refused = [], 0
    cases = list(torch_cases())
    for case in cases:
        expected = pins.torch_refuses(case.cls_name, case.ranks, case.microbatches)
        try:
            built = ts.build(case)
        except ValueError as e:
            refused += 1
            if not expected:
                report.fail(case.name, f"torch refused a shape not pinned as refused: {e}")
            continue
        if expected:
            report.fail(case.name, "torch built a shape pinned as refused")
        out.append((case, built))
    report.count(f"torch built (and refused, {refused} as pinned)", len(out) + refused, len(cases))
    return out


def write_torch_files(report, built, workdir, defer_pp_recv):
    """torch's CSV files of each case: compute_only (unless defer_pp_recv), and compute_comms
    lowered with or without deferred receives where torch lowers; returns (path, case, form) of each."""
    files, not_lowered = [], 0
    for case, schedule in built:
        if not defer_pp_recv:
            only = workdir / f"{case.name}.compute_only.csv"
            ts.dump_compute_only(case, schedule, only)
            files.append((only, case, "compute_only"))
        try:
            lowered = ts.lower(case, schedule, defer_pp_recv)
        except (ValueError, AssertionError) as e:
            not_lowered += 1
            if not pins.torch_lowering_refuses(case.cls_name, str(e)):
                report.fail(case.name, f"torch did not lower its own order: {first_line(str(e))}")
            continue
        path = workdir / f"{case.name}.{'compute_comms_deferred' if defer_pp_recv else 'compute_comms'}.csv"
        lowered._dump_csv(path, format="compute_comms")
        files.append((path, case, "compute_comms"))
    print(f"torch wrote {len(files)} CSV files ({not_lowered} lowerings of its own GPipe and 1F1B orders "
          f"refused by torch, as pinned)", flush=True)
    return files


def check_command(report, command, path, refusal, result):
    """True when `pipeworks validate|simulate` passed the file; "pinned" when it refused it as
    `refusal` (a test of its output, None: no refusal pinned) allows; False otherwise."""
    rc, out, err = result
    if rc == 0:
        return True
    if rc == 1 and refusal is not None and refusal(out + err):
        return "pinned"
    report.fail(path.name, f"exit {rc}: {first_line(err or out)}", check=f"pipeworks {command}")
    return False


def part_torch_files(exe, workdir, report, defer_pp_recv):
    files = write_torch_files(report, built_cases(report), workdir, defer_pp_recv)
    for command, label in (("validate", "validated"), ("simulate", "simulated")):
        args = [[exe, "validate", str(p)] if command == "validate" else [exe, "simulate", "--schedule-file", str(p)]
                for p, _, _ in files]
        passed = pinned = 0
        for (path, case, form), result in zip(files, run_all(args)):
            if defer_pp_recv:
                refusal = pins.rendezvous_deadlock
            else:
                refusal = pins.invalid_torch_file(case.cls_name, case.microbatches, form)
                if refusal is not None and result[0] == 0:  # the file is wrong: passing it is a failure
                    report.fail(path.name, "passed, but the file is pinned as wrong", check=f"pipeworks {command}")
                    continue
            outcome = check_command(report, command, path, refusal, result)
            passed += outcome is True
            pinned += outcome == "pinned"
        why = "rendezvous deadlocks" if defer_pp_recv else "torch's 1F1B compute-only files"
        report.count(f"{label} torch files (and refused as pinned, {pinned}: {why})", passed + pinned, len(files))


# The sample of torch's files `part_torch_runs` trains: 2 ranks, 4 micro-batches, every class
# and stages per rank, both forms; a model with more layers than any such file has stages.
RUN_SAMPLE_RANKS, RUN_SAMPLE_MICROBATCHES = 2, 4
RUN_MODEL = ["--model", "mlp", "--depth", "8", "--width", "16", "--batch", "8", "--steps", "2",
             "--intra-op-threads", "1", "--timeout", "60"]


def part_torch_runs(exe, workdir, report):
    """`pipeworks run --schedule-file F --check` on a sample of torch's files: each trains, and its
    gradients and parameters equal the non-pipelined reference's."""
    built = [(case, schedule) for case, schedule in built_cases(report)
             if case.ranks == RUN_SAMPLE_RANKS and case.microbatches == RUN_SAMPLE_MICROBATCHES]
    files = [(path, case, form) for path, case, form in write_torch_files(report, built, workdir, False)
             if pins.invalid_torch_file(case.cls_name, case.microbatches, form) is None]
    args = [[exe, "run", *RUN_MODEL, "--check", "--schedule-file", str(path)] for path, _, _ in files]
    passed = 0
    for (path, _, _), (rc, out, err) in zip(files, run_all(args)):
        if rc == 0 and "PASS" in out:
            passed += 1
        else:
            report.fail(path.name, f"exit {rc}: {first_line(err or out)}", check="pipeworks run --check")
    report.count("torch files trained by pipeworks run --check, gradients equal to the reference", passed, len(files))


def schedule_args(exe, kind, ranks, per_rank, microbatches, comm=False):
    stages = ranks * (2 if kind in pins.V_KINDS else per_rank)
    args = [exe, "schedule", "--schedule", kind, "-K", str(stages), "-M", str(microbatches), "--format", "csv"]
    if kind in pins.LOOPED_KINDS:
        args += ["-v", str(per_rank)]
    return args + (["--comm"] if comm else [])


def csv_rows(text):
    return [[cell for cell in line.split(",") if cell] for line in text.splitlines()]


def first_difference(theirs, ours):
    for rank, (a, b) in enumerate(zip(theirs, ours)):
        for i, (x, y) in enumerate(zip(a, b)):
            if x != y:
                return f"rank {rank} action {i}: torch {x}, pipeworks {y}"
        if len(a) != len(b):
            return f"rank {rank}: torch {len(a)} actions, pipeworks {len(b)}"
    return f"torch {len(theirs)} ranks, pipeworks {len(ours)}"


def comparisons():
    """(case, kind) for every torch case (built or not) and each pipeworks kind of its class."""
    for case in torch_cases():
        kinds = pins.KINDS_OF_CLASS[case.cls_name]
        if case.per_rank == 1 and case.cls_name in pins.ONE_STAGE_KIND_OF_CLASS:
            kinds += (pins.ONE_STAGE_KIND_OF_CLASS[case.cls_name],)
        for kind in kinds:
            yield case, kind


def compare_one(report, case, kind, torch_rows, result, tally):
    rc, out, err = result
    what = f"{case.name} vs {kind}"
    if pins.pipeworks_refuses(kind, case.ranks, case.microbatches):
        tally["refused"] += rc == 2
        if rc != 2:
            report.fail(what, f"pipeworks took a shape pinned as refused (exit {rc})")
        return
    if rc != 0:
        return report.fail(what, f"pipeworks schedule exit {rc}: {first_line(err)}")
    if torch_rows is None:  # torch refused the shape (checked against the pins already)
        tally["torch refused"] += 1
        return
    try:
        expected = pins.torch_rows_as_pipeworks(kind, torch_rows)
    except pins.PinMissing as e:
        return report.fail(what, f"the pinned difference is not there: {e}")
    ours = csv_rows(out)
    if expected != ours:
        return report.fail(what, first_difference(expected, ours))
    tally["pinned" if kind in pins.PINS else "identical"] += 1


def part_orders(exe, report):
    built = {case: ts.compute_only_rows(schedule) for case, schedule in built_cases(report)}
    pairs = list(comparisons())
    results = run_all([schedule_args(exe, kind, c.ranks, c.per_rank, c.microbatches) for c, kind in pairs])
    by_kind = {}
    for (case, kind), result in zip(pairs, results):
        tally = by_kind.setdefault(kind, {"identical": 0, "pinned": 0, "refused": 0, "torch refused": 0, "all": 0})
        tally["all"] += 1
        compare_one(report, case, kind, built.get(case), result, tally)
    for kind, t in by_kind.items():
        print(f"  {kind:17} {t['identical']} identical, {t['pinned']} differing as pinned, {t['refused']} refused "
              f"by pipeworks as pinned, {t['torch refused']} refused by torch as pinned (of {t['all']})")
    agreed = sum(t["identical"] + t["pinned"] + t["refused"] + t["torch refused"] for t in by_kind.values())
    report.count("orders compared with torch's", agreed, len(pairs))


def pipeworks_kinds(exe):
    """The kinds `pipeworks schedule --help` lists for --schedule."""
    help_text = subprocess.run([exe, "schedule", "--help"], capture_output=True, text=True, timeout=60).stdout
    line = next(line for line in help_text.splitlines() if "--schedule TEXT:{" in line)
    return line.split("{", 1)[1].split("}", 1)[0].split(",")


def pipeworks_shapes(report, kinds):
    for kind in kinds:
        if kind in pins.LOOPED_KINDS:
            per_ranks = (1, 2, 3)
        elif kind in pins.V_KINDS:
            per_ranks = (2,)
        elif kind in pins.ONE_STAGE_KINDS:
            per_ranks = (1,)
        else:
            report.fail(kind, "a kind tests/interop/pinned_differences.py does not place (add it there)")
            continue
        for p in RANKS:
            for v in per_ranks:
                for m in MICROBATCHES:
                    if not pins.pipeworks_refuses(kind, p, m):
                        yield kind, p, v, m


def load_in_torch(report, path, shape, form):
    """True when torch's _load_csv takes the file (and, for compute_comms, its simulator runs it)."""
    _, p, v, m = shape
    printed = io.StringIO()
    try:
        with contextlib.redirect_stdout(printed):
            ts.load_and_simulate(str(path), p, v, m, form)
        return True
    except Exception as e:  # torch raises AssertionError, ValueError or RuntimeError on a file it refuses
        said = first_line(printed.getvalue()) if printed.getvalue() else ""
        report.fail(path.name, f"{type(e).__name__}: {first_line(str(e))} {said}", check="torch _load_csv")
        return False


def part_pipeworks_files(exe, workdir, report):
    shapes = list(pipeworks_shapes(report, pipeworks_kinds(exe)))
    jobs = [(shape, comm) for shape in shapes for comm in (False, True)]
    results = run_all([schedule_args(exe, *shape, comm=comm) for shape, comm in jobs])
    written = []
    for (shape, comm), (rc, out, err) in zip(jobs, results):
        kind, p, v, m = shape
        form = "compute_comms" if comm else "compute_only"
        path = workdir / f"pipeworks_{kind}_p{p}_v{v}_m{m}.{form}.csv"
        if rc != 0:
            report.fail(path.name, f"pipeworks schedule exit {rc}: {first_line(err)}")
            continue
        path.write_text(out)
        written.append((path, shape, form))
    report.count("pipeworks files written", len(written), len(jobs))
    composite = lambda path: "OVERLAP_F_B" in path.read_text()
    for form, label, keep in (
            ("compute_only", "pipeworks compute-only files loaded and lowered by torch's _load_csv", lambda p: True),
            ("compute_comms", "pipeworks --comm files loaded by torch's _load_csv and run to the end by its "
                              "_simulate_comms_compute", lambda p: not composite(p)),
            ("compute_comms", "pipeworks --comm files with OVERLAP_F_B loaded by torch's _load_csv (its simulator "
                              "takes no composite, not even its own DualPipeV's)", composite)):
        files = [(path, shape) for path, shape, f in written if f == form and keep(path)]
        report.count(label, sum(load_in_torch(report, path, shape, form) for path, shape in files), len(files))


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("pipeworks")
    parser.add_argument("workdir", type=pathlib.Path)
    parser.add_argument("--part", required=True,
                        choices=("torch-files", "torch-deferred-files", "torch-runs", "orders", "pipeworks-files"))
    args = parser.parse_args()
    if problem := ts.check_torch():
        print(f"FAIL {problem}")
        return 1
    warnings.filterwarnings("ignore")  # torch warns about the mocked stages' devices
    workdir = args.workdir / args.part
    workdir.mkdir(parents=True, exist_ok=True)
    report = Report()
    if args.part in ("torch-files", "torch-deferred-files"):
        part_torch_files(args.pipeworks, workdir, report, defer_pp_recv=args.part == "torch-deferred-files")
    elif args.part == "torch-runs":
        part_torch_runs(args.pipeworks, workdir, report)
    elif args.part == "orders":
        part_orders(args.pipeworks, report)
    else:
        part_pipeworks_files(args.pipeworks, workdir, report)
    return report.finish()


if __name__ == "__main__":
    sys.exit(main())
