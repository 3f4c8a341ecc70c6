"""pipeworks' add_unshard_reshard and add_reduce_grad against torch's own _add_unshard_reshard and
_add_reduce_grad (torch.distributed.pipelining.schedules), on the compute-only orders torch's
schedule classes make (GPipe's and 1F1B's already hold REDUCE_GRAD), for 2 and 4 ranks, 1-3
stages a rank where the class takes them and 2, 4, 8 micro-batches (63 orders): action for action
the same, on every rank. torch's order is
read into pipeworks from torch's own compute-only CSV (tests/interop/torch_schedules.py builds it).
"""
import os
import sys
import tempfile
import unittest

import pipeworks as pw
from torch.distributed.pipelining import schedules

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "interop"))
import torch_schedules as ts  # noqa: E402

MICROBATCHES = (2, 4, 8)
RANKS = (2, 4)


def flat(actions):
    """torch's actions as strings, a composite as its two sub-actions (as pipeworks holds it)."""
    out = []
    for a in actions:
        if a is None:
            continue
        if a.computation_type == schedules.OVERLAP_F_B and a.sub_actions is not None:
            out.extend(str(sub) for sub in a.sub_actions)
        else:
            out.append(str(a))
    return out


class TorchStageActionsTest(unittest.TestCase):
    def test_same_actions_as_torch_on_every_rank(self):
        if ts.check_torch():
            self.fail(ts.check_torch())
        compared = 0
        with tempfile.TemporaryDirectory() as tmp:
            for case in ts.cases(RANKS, MICROBATCHES):
                try:
                    built = ts.build(case)
                except ValueError:  # torch refuses the shape (tests/interop pins which)
                    continue
                order = built.pipeline_order
                if any(a is not None and a.computation_type == schedules.REDUCE_GRAD
                       for rank in order for a in order[rank]):
                    continue  # GPipe's and 1F1B's orders already hold REDUCE_GRAD: not compute-only
                path = os.path.join(tmp, case.name + ".csv")
                ts.dump_compute_only(case, built, path)
                ours = pw.add_reduce_grad(pw.add_unshard_reshard(pw.load_schedule(path))).program_strings()
                for rank in sorted(order):
                    theirs = schedules._add_reduce_grad(schedules._add_unshard_reshard(order[rank]),
                                                        case.microbatches)
                    with self.subTest(case=case.name, rank=rank):
                        self.assertEqual(ours[rank], flat(theirs))
                self.assertEqual(pw.validate(pw.add_reduce_grad(pw.add_unshard_reshard(pw.load_schedule(path)))), [])
                compared += 1
        self.assertEqual(compared, 63)  # every order torch 2.14.1 makes of these shapes

    def test_passes_refuse_what_they_cannot_take(self):
        s = pw.generate("1f1b", 2, 4)
        with self.assertRaisesRegex(pw.Error, "already holds 0SEND_F0"):
            pw.add_reduce_grad(pw.lower_comm(s))
        with self.assertRaisesRegex(pw.Error, "already holds 0REDUCE_GRAD"):
            pw.add_reduce_grad(pw.add_reduce_grad(s))
        with self.assertRaisesRegex(pw.Error, "at most 0 stages"):
            pw.add_unshard_reshard(s, 0)


if __name__ == "__main__":
    unittest.main()
