# Writes the CSV files of this folder with torch.distributed.pipelining's own code (torch 2.14.1):
# each multi-stage schedule class built over stand-in stage objects, then its _dump_csv in both
# formats ("compute_only": pipeline_order; "compute_comms": after torch's lowering, with
# UNSHARD/RESHARD/REDUCE_GRAD and SEND/RECV), and ScheduleGPipe's pipeline_order (REDUCE_GRAD).
# Usage: python make_torch_files.py OUTPUT_DIR
import csv
import os
import sys

from torch.distributed.pipelining import schedules as S


class Stage:
    """The attributes the schedule classes read from a stage when they build their orders."""

    def __init__(self, index, num_stages, group_size, rank):
        self.stage_index = index
        self.num_stages = num_stages
        self.group_size = group_size
        self.group_rank = rank
        self.submod = None
        self.is_first = index == 0
        self.is_last = index == num_stages - 1


MULTI = [  # (class, ranks, stages per rank, micro-batches, placement style)
    (S.ScheduleInterleaved1F1B, 2, 2, 4, "loop"),
    (S.ScheduleLoopedBFS, 2, 4, 8, "loop"),  # more than 3 stages a rank: stages are evicted and gathered again
    (S.ScheduleInterleavedZeroBubble, 2, 2, 4, "loop"),
    (S.ScheduleZBVZeroBubble, 2, 2, 4, "v"),
    (S.ScheduleDualPipeV, 2, 2, 4, "v"),
    (S.ScheduleDualPipeV, 4, 2, 8, "v"),
]


def main(out):
    os.makedirs(out, exist_ok=True)
    gpipe = S.ScheduleGPipe(Stage(0, 4, 4, 0), 8)
    with open(os.path.join(out, "ScheduleGPipe_p4_m8.pipeline_order.csv"), "w", newline="") as f:
        writer = csv.writer(f)
        for rank in gpipe.pipeline_order:
            writer.writerow(gpipe.pipeline_order[rank])
    for cls, ranks, per_rank, microbatches, style in MULTI:
        stages = ranks * per_rank
        mine = S.generate_rank_to_stage_mapping(ranks, stages, style=style)[0]
        schedule = cls([Stage(s, stages, ranks, 0) for s in mine], microbatches)
        base = os.path.join(out, f"{cls.__name__}_p{ranks}_v{per_rank}_m{microbatches}")
        schedule._dump_csv(base + ".compute_only.csv", format="compute_only")
        schedule._dump_csv(base + ".compute_comms.csv", format="compute_comms")


if __name__ == "__main__":
    main(sys.argv[1])
