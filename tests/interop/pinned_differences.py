"""Where torch 2.14.1's schedules and pipeworks' differ, exactly: which shapes each side refuses, and
the rewrites that turn torch's compute-only rows into pipeworks' (docs/schedules.md, "Against
torch.distributed.pipelining", says why). Each rewrite also checks that the difference it pins is
there, so a torch that stops differing fails the test as surely as one that differs otherwise.
"""
import re

# torch class -> the pipeworks kinds that generate the same order (zb-h1 is ZB1P on one stage per rank).
KINDS_OF_CLASS = {
    "ScheduleGPipe": ("gpipe",),
    "Schedule1F1B": ("1f1b",),
    "ScheduleLoopedBFS": ("looped-bfs",),
    "ScheduleInterleaved1F1B": ("interleaved-1f1b",),
    "ScheduleInterleavedZeroBubble": ("interleaved-zb",),
    "ScheduleZBVZeroBubble": ("zb-v",),
    "ScheduleDualPipeV": ("dualpipe-v",),
}
ONE_STAGE_KIND_OF_CLASS = {"ScheduleInterleavedZeroBubble": "zb-h1"}  # with one stage per rank

# pipeworks' kinds by how many stages a device holds: v of 1-3, always 2 (a V), or 1.
LOOPED_KINDS = ("interleaved-1f1b", "looped-bfs", "interleaved-zb")
V_KINDS = ("zb-v", "dualpipe-v")
ONE_STAGE_KINDS = ("gpipe", "1f1b", "zb-h1", "zb-h2")


def torch_rounds_split(microbatches, ranks):
    """torch's flexible rounds: max(1, M // p) of them, which must divide M."""
    return microbatches % max(1, microbatches // ranks) == 0


def torch_refuses(cls_name, ranks, microbatches):
    """True where torch's constructor raises ValueError for the shape (stages per rank as listed)."""
    if cls_name == "Schedule1F1B":
        return microbatches < ranks
    if cls_name == "ScheduleDualPipeV":
        return microbatches < 2 * ranks
    if cls_name in ("ScheduleInterleaved1F1B", "ScheduleInterleavedZeroBubble"):
        return not torch_rounds_split(microbatches, ranks)
    return False


def pipeworks_refuses(kind, ranks, microbatches):
    """True where `pipeworks schedule` exits 2 for the shape."""
    if kind in ("interleaved-1f1b", "looped-bfs"):
        return microbatches % ranks != 0
    if kind == "interleaved-zb":
        return not torch_rounds_split(microbatches, ranks)
    return False


def torch_lowering_refuses(cls_name, message):
    """True where torch's own lowering refuses the order its class made, as pinned: GPipe's order
    holds REDUCE_GRAD, which a compute-only lowering rejects; 1F1B's fails torch's own validation
    first (its last rank's forwards numbered from 1, see last_rank_forwards_from_one)."""
    if cls_name == "ScheduleGPipe":
        return "REDUCE_GRAD" in message and "Expected compute-only schedule" in message
    if cls_name == "Schedule1F1B":
        return "without first running Forward" in message
    return False


def invalid_torch_file(cls_name, microbatches, form):
    """How `pipeworks validate` and `simulate` must refuse a torch file that is wrong (a test of
    their output), or None where the file must pass: 1F1B's compute-only order names forwards 1..M
    on its last rank (see last_rank_forwards_from_one), so M reads as M + 1, and the first
    diagnostic is stage 0's missing F M (validate lists the last stage's missing F0 after it)."""
    if cls_name == "Schedule1F1B" and form == "compute_only":
        expected = f"stage 0 has {microbatches} of {microbatches + 1} forwards; missing micro-batches {microbatches}"
        return lambda output: f"{expected} [wrong-count]" in output
    return None


def rendezvous_deadlock(output):
    """torch's defer_pp_recv lowering moves each RECV to just before its consumer, ordered for
    sends that do not block (rank parity, its _defer_recv_ops); pipeworks runs a SEND as a
    rendezvous with its RECV (sched/deadlock.h, hw/dist/c10d_transport.h), so some of those files
    deadlock in pipeworks: validate and simulate may refuse them, naming deadlock cycles only."""
    errors = [line for line in output.splitlines() if ": error: " in line]
    return bool(errors) and all("deadlock: these actions wait on each other in a cycle" in e for e in errors)


class PinMissing(Exception):
    """torch's rows do not differ from pipeworks' as the pin says."""


def reduce_grad_last(rows):
    """GPipe, 1F1B: torch's order ends each rank's row with REDUCE_GRAD of its stage (its
    _get_pipeline_order runs _add_reduce_grad); pipeworks' compute-only orders hold none."""
    out = []
    for rank, row in enumerate(rows):
        if not row or row[-1] != f"{rank}REDUCE_GRAD" or any("REDUCE_GRAD" in a for a in row[:-1]):
            raise PinMissing(f"rank {rank}'s row does not end in {rank}REDUCE_GRAD alone: {row[-3:]}")
        out.append(row[:-1])
    return out


FORWARD = re.compile(r"^(\d+)F(\d+)$")


def last_rank_forwards_from_one(rows):
    """1F1B: torch numbers the last rank's forwards 1..M, not 0..M-1 (its _get_pipeline_order
    bumps the micro-batch before the first steady-state forward even when there was no warm-up);
    pipeworks' F m is torch's F m+1 there."""
    last = rows[-1]
    forwards = sorted(int(m.group(2)) for a in last if (m := FORWARD.match(a)))
    if forwards != list(range(1, len(forwards) + 1)):
        raise PinMissing(f"the last rank's forwards are {forwards}, not 1..{len(forwards)}")
    renumbered = [f"{m.group(1)}F{int(m.group(2)) - 1}" if (m := FORWARD.match(a)) else a for a in last]
    return rows[:-1] + [renumbered]


PINS = {
    "gpipe": (reduce_grad_last,),
    "1f1b": (reduce_grad_last, last_rank_forwards_from_one),
}


def torch_rows_as_pipeworks(kind, rows):
    """torch's rows with the kind's pinned rewrites applied (PinMissing where one finds no difference)."""
    for pin in PINS.get(kind, ()):
        rows = pin(rows)
    return rows
