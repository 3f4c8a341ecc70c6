"""torch.distributed.pipelining's schedules built in one process, without process groups or real
stages, and written with torch's own _dump_csv: the peer the interop test holds pipeworks against.

A schedule's constructor reads only a few attributes of its stages (group_size, group_rank,
num_stages, submod), so the stages are torch's own autospec mock of PipelineStage, set up as
torch's _schedule_visualizer.get_schedule_ops sets it up. Nothing here runs a step.
"""
import dataclasses
import functools
import inspect
from unittest import mock

import torch
from torch.distributed.pipelining import schedules
from torch.distributed.pipelining.stage import PipelineStage

TORCH_VERSION = "2.14.1"  # the version whose orders tests/interop pins

# Every schedule class of torch 2.14.1 that generates an order, and the stages per rank its
# constructor takes among 1-3 (ZBV and DualPipeV: exactly 2).
ORDER_CLASSES = {
    "ScheduleGPipe": (1,),
    "Schedule1F1B": (1,),
    "ScheduleLoopedBFS": (1, 2, 3),
    "ScheduleInterleaved1F1B": (1, 2, 3),
    "ScheduleInterleavedZeroBubble": (1, 2, 3),
    "ScheduleZBVZeroBubble": (2,),
    "ScheduleDualPipeV": (2,),
}
# The module's other schedule classes, and why none has an order to compare.
NO_ORDER_CLASSES = {
    "_PipelineSchedule": "the abstract base of every schedule",
    "PipelineScheduleSingle": "the base of the one-stage-per-rank schedules",
    "PipelineScheduleMulti": "the base of the several-stage schedules; it runs a loaded order",
    "_PipelineScheduleRuntime": "runs a loaded or subclass-made order; has none of its own",
    "_ScheduleForwardOnly": "forward only (evaluation): its pipeline_order is None",
}


def check_torch():
    """None, or why this torch is not the one the pins are for / has classes not listed here."""
    if not torch.__version__.startswith(TORCH_VERSION):
        return f"tests/interop pins torch {TORCH_VERSION}'s orders; this torch is {torch.__version__}"
    found = {name for name, cls in inspect.getmembers(schedules, inspect.isclass)
             if issubclass(cls, schedules._PipelineSchedule)}
    unknown = found - set(ORDER_CLASSES) - set(NO_ORDER_CLASSES)
    missing = (set(ORDER_CLASSES) | set(NO_ORDER_CLASSES)) - found
    if unknown or missing:
        return f"torch's schedule classes changed: new {sorted(unknown)}, gone {sorted(missing)}"
    return None


@dataclasses.dataclass(frozen=True)
class Case:
    """One torch schedule: a class on `ranks` ranks, `per_rank` stages each, `microbatches`."""
    cls_name: str
    ranks: int
    per_rank: int
    microbatches: int

    @property
    def stages(self):
        return self.ranks * self.per_rank

    @property
    def name(self):
        return f"{self.cls_name}_p{self.ranks}_v{self.per_rank}_m{self.microbatches}"

    @property
    def single(self):
        return issubclass(getattr(schedules, self.cls_name), schedules.PipelineScheduleSingle)


def cases(ranks, microbatches):
    """Every shape of ORDER_CLASSES: each class on each of `ranks`, with each number of stages a
    rank it takes and each of `microbatches` (shapes torch refuses included; build says which)."""
    for cls_name, per_ranks in ORDER_CLASSES.items():
        for p in ranks:
            for v in per_ranks:
                for m in microbatches:
                    yield Case(cls_name, p, v, m)


@functools.lru_cache(maxsize=None)
def mock_stages(ranks, per_rank, single):
    """What a schedule's constructor reads of its stages: one autospec PipelineStage, rank 0 of
    `ranks`, with ranks x per_rank stages in all (a list of per_rank for the several-stage classes).
    Made once per shape (autospec is slow); constructors only write stage_index_to_group_rank,
    which each sets afresh."""
    stage = mock.create_autospec(PipelineStage, instance=True)
    stage.group_rank = 0
    stage.group_size = ranks
    stage.submod = None
    stage.num_stages = ranks * per_rank
    return stage if single else (stage,) * per_rank


def build(case):
    """The schedule object, or the ValueError with which torch refuses the shape."""
    cls = getattr(schedules, case.cls_name)
    stages = mock_stages(case.ranks, case.per_rank, case.single)
    return cls(stages if case.single else list(stages), case.microbatches)


def runtime(ranks, per_rank, microbatches, defer_pp_recv=False):
    """An empty _PipelineScheduleRuntime of that shape: it loads, lowers and dumps CSV files."""
    return schedules._PipelineScheduleRuntime(list(mock_stages(ranks, per_rank, False)), microbatches,
                                              defer_pp_recv=defer_pp_recv)


def dump_compute_only(case, built, path):
    """torch's compute-only CSV of the case (its pipeline_order, idle slots as empty cells)."""
    if case.single:  # one-stage classes have no _dump_csv: a runtime holding their order dumps it
        holder = runtime(case.ranks, case.per_rank, case.microbatches)
        holder.pipeline_order = built.pipeline_order
        holder._dump_csv(path, format="compute_only")
    else:
        built._dump_csv(path, format="compute_only")


def lower(case, built, defer_pp_recv):
    """A runtime holding torch's lowering (UNSHARD/RESHARD, REDUCE_GRAD, SEND/RECV) of the case's
    order, as _PipelineScheduleRuntime lowers a compute-only order; raises (ValueError,
    AssertionError) where torch refuses."""
    lowered = runtime(case.ranks, case.per_rank, case.microbatches, defer_pp_recv)
    lowered._prepare_schedule_with_comms(built.pipeline_order)
    return lowered


def compute_only_rows(built):
    """torch's order as rows of action strings, idle slots left out."""
    order = built.pipeline_order
    return [[str(a) for a in order[rank] if a is not None] for rank in sorted(order)]


def has_composites(order):
    """Whether an order holds OVERLAP_F_B actions, which torch's _simulate_comms_compute cannot take
    (their stage index is -1: torch's own DualPipeV comms order fails there with KeyError -1)."""
    return any(a is not None and a.computation_type.name == "OVERLAP_F_B" for actions in order.values() for a in actions)


def load_and_simulate(path, ranks, per_rank, microbatches, form):
    """Loads a CSV file with torch's _load_csv (a compute_only file is validated and lowered by
    torch's passes, a compute_comms file validated) and dry-runs a compute_comms one in
    _simulate_comms_compute, which raises where it stops progressing, unless it holds composites
    (has_composites). Raises on any refusal."""
    loaded = runtime(ranks, per_rank, microbatches)
    loaded._load_csv(path, format=form)
    if form == "compute_comms" and not has_composites(loaded.pipeline_order_with_comms):
        schedules._simulate_comms_compute(loaded.pipeline_order_with_comms,
                                          lambda s: loaded.stage_index_to_group_rank[s], ranks * per_rank)
