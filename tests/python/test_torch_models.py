"""pipeworks.torch_models against real PyTorch models: torchvision's ResNet-18 flattened, scripted,
saved, then run by the pipeworks binary with the gradient check; models that cannot be flattened
are refused with the reason."""

import os
import subprocess
import tempfile
import unittest

import torch
import torchvision
from torch import nn

from pipeworks.torch_models import FlattenError, flatten, save_for_pipeline

PIPEWORKS = os.environ.get("PIPEWORKS_EXE", "")


class Residual(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Linear(4, 4)
        self.b = nn.Linear(4, 4)

    def forward(self, x):
        return self.b(self.a(x)) + x


class Chain(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Linear(4, 6)
        self.b = nn.Linear(6, 2)

    def forward(self, x):
        return self.b(self.a(x))


class FlattenTest(unittest.TestCase):
    def test_resnet_is_cut_into_stem_blocks_pool_and_classifier(self):
        torch.manual_seed(0)
        model = torchvision.models.resnet18(weights=None, num_classes=10)
        sequence = flatten(model)
        names = [name for name, _ in sequence.named_children()]
        self.assertEqual(names[:4], ["conv1", "bn1", "relu", "maxpool"])
        self.assertEqual(names[4:12], [f"layer{s}_{b}" for s in range(1, 5) for b in range(2)])
        self.assertEqual(names[12:], ["avgpool", "flatten", "fc"])
        self.assertIs(sequence.fc, model.fc)  # parameters shared, not copied
        self.assertFalse(sequence.relu.inplace)  # it may begin a stage
        model.eval()
        x = torch.randn(2, 3, 32, 32)
        with torch.no_grad():
            self.assertTrue(torch.allclose(sequence(x), model(x), rtol=1e-4, atol=1e-5))

    def test_nested_sequentials_are_flattened_and_children_that_chain_are_accepted(self):
        model = nn.Sequential(nn.Linear(4, 4), nn.Sequential(nn.ReLU(), nn.Linear(4, 2)))
        self.assertEqual([n for n, _ in flatten(model).named_children()], ["0", "1_0", "1_1"])
        self.assertEqual([n for n, _ in flatten(Chain(), torch.randn(3, 4)).named_children()], ["a", "b"])

    def test_models_that_are_not_a_sequence_are_refused_with_the_reason(self):
        with self.assertRaisesRegex(FlattenError, "do not compute its forward"):
            flatten(Residual(), torch.randn(3, 4))
        with self.assertRaisesRegex(FlattenError, "pass example_input"):
            flatten(Residual())
        with self.assertRaisesRegex(FlattenError, "no child modules"):
            flatten(nn.ReLU(), torch.randn(3, 4))


@unittest.skipUnless(os.path.exists(PIPEWORKS), "PIPEWORKS_EXE: the pipeworks binary (built with LibTorch)")
class ResNetPipelineTest(unittest.TestCase):
    def test_resnet18_saved_by_the_helper_runs_pipelined_with_exact_gradients(self):
        torch.manual_seed(0)
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "resnet18.pt")
            scripted = save_for_pipeline(torchvision.models.resnet18(weights=None, num_classes=10), path,
                                         torch.randn(2, 3, 32, 32))
            self.assertEqual(len(list(scripted.children())), 15)
            run = subprocess.run([PIPEWORKS, "run", "--model", path, "--input-shape", "3,32,32", "--loss",
                                  "cross_entropy", "-K", "3", "-M", "2", "--batch", "4", "--steps", "2", "--check",
                                  "--intra-op-threads", "1", "--schedule", "gpipe", "--recompute"],
                                 capture_output=True, text=True, timeout=300)
            self.assertEqual(run.returncode, 0, run.stdout + run.stderr)
            self.assertIn("pipeworks run: resnet18 on cpu, 3 stages x 2 micro-batches", run.stdout)
            self.assertIn("exactly equal", run.stdout)


if __name__ == "__main__":
    unittest.main()
