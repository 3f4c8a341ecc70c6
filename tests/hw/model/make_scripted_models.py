#!/usr/bin/env python3
"""The TorchScript files the hw tests load (built by tests/CMakeLists.txt into the build tree):
models pipeworks must run, and a negative corpus it must refuse with a named error.

    make_scripted_models.py OUTDIR
"""
import os
import sys
from collections import OrderedDict
from typing import Tuple

import torch
from torch import nn


class TwoInputs(nn.Module):
    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return x + y


class JoinsTwo(nn.Module):
    """Its child 'join' takes two tensors."""

    def __init__(self):
        super().__init__()
        self.a = nn.Linear(8, 8)
        self.join = TwoInputs()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.join(self.a(x), x)


class Pair(nn.Module):
    def forward(self, x: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor]:
        return x, 2 * x


class ReturnsPair(nn.Module):
    """Its child 'pair' returns two tensors."""

    def __init__(self):
        super().__init__()
        self.a = nn.Linear(8, 8)
        self.pair = Pair()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        first, second = self.pair(self.a(x))
        return first + second


class Residual(nn.Module):
    """Children a and b, but its forward is b(a(x)) + x: not its children in order."""

    def __init__(self):
        super().__init__()
        self.a = nn.Linear(8, 8)
        self.b = nn.Linear(8, 8)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.b(self.a(x)) + x


class Leaf(nn.Module):
    """A parameter and no child modules."""

    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.randn(8, 4))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x @ self.w


class HasList(nn.Module):
    """Its child 'blocks' is a ModuleList (no forward)."""

    def __init__(self):
        super().__init__()
        self.blocks = nn.ModuleList([nn.Linear(8, 8), nn.Linear(8, 8)])

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for block in self.blocks:
            x = block(x)
        return x


class TwiceInside(nn.Module):
    """One Linear applied twice inside one child: sharing a stage never cuts."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 8)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc(torch.tanh(self.fc(x)))


class SumAll(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x.sum()


class MeanOverBatch(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x.mean(0)


def inflating_copy(source, target, megabytes):
    """`source`'s records, plus one compressed record of `megabytes` MiB of zeros (a zip bomb:
    the file stays small, LibTorch would inflate the record in full)."""
    import zipfile
    with zipfile.ZipFile(source) as src, zipfile.ZipFile(target, "w") as dst:
        prefix = src.namelist()[0].split("/")[0]
        for info in src.infolist():
            dst.writestr(info, src.read(info.filename))
        bomb = zipfile.ZipInfo(prefix + "/data/999")
        bomb.compress_type = zipfile.ZIP_DEFLATED
        bomb._compresslevel = 1  # fastest: the size inflated is what counts
        with dst.open(bomb, "w", force_zip64=True) as record:
            zeros = bytes(1 << 20)
            for _ in range(megabytes):
                record.write(zeros)


def main(out):
    os.makedirs(out, exist_ok=True)
    torch.manual_seed(0)

    def save(model, name):
        torch.jit.script(model).save(os.path.join(out, name))

    mlp = nn.Sequential(nn.Linear(8, 16), nn.Tanh(), nn.Linear(16, 16), nn.Tanh(), nn.Linear(16, 4))
    save(mlp, "mlp.pt")  # --input-shape 8, mse
    save(nn.Sequential(OrderedDict(
        conv1=nn.Conv2d(3, 4, 3, padding=1), bn1=nn.BatchNorm2d(4), relu1=nn.ReLU(), pool=nn.MaxPool2d(2),
        conv2=nn.Conv2d(4, 8, 3, padding=1), relu2=nn.ReLU(), gap=nn.AdaptiveAvgPool2d(1), flat=nn.Flatten(),
        fc=nn.Linear(8, 5))), "convnet.pt")  # --input-shape 3,8,8, cross_entropy
    save(nn.Sequential(OrderedDict(
        embed=nn.Embedding(20, 8), ff=nn.Linear(8, 8), act=nn.GELU(), head=nn.Linear(8, 20))),
        "tokens.pt")  # --input-shape 6 --input-dtype int64 --input-high 20, cross_entropy
    save(nn.Sequential(OrderedDict(fc1=nn.Linear(8, 8), drop=nn.Dropout(0.1), fc2=nn.Linear(8, 4))), "dropout.pt")

    save(nn.Sequential(OrderedDict(block=TwiceInside(), head=nn.Linear(8, 4))), "shared_inside_child.pt")
    shared = nn.Linear(8, 8)
    save(nn.Sequential(shared, nn.Tanh(), shared, nn.Tanh(), nn.Linear(8, 4)), "tied_module.pt")
    embed, head = nn.Embedding(20, 8), nn.Linear(8, 20)
    head.weight = embed.weight  # tied input and output embeddings
    save(nn.Sequential(OrderedDict(embed=embed, act=nn.GELU(), head=head)), "tied_embedding.pt")
    save(nn.Sequential(OrderedDict(fc=nn.Linear(8, 4), total=SumAll())), "scalar_output.pt")
    save(nn.Sequential(OrderedDict(fc=nn.Linear(8, 4), mean=MeanOverBatch(), head=nn.Linear(4, 4))),
         "loses_batch.pt")

    with open(os.path.join(out, "not_torchscript.pt"), "wb") as f:
        f.write(b"not a zip archive\n" * 16)
    torch.save(mlp, os.path.join(out, "torch_save.pt"))  # a pickled module, not TorchScript
    save(JoinsTwo(), "two_inputs.pt")
    save(ReturnsPair(), "returns_pair.pt")
    save(Residual(), "not_sequence.pt")
    save(Leaf(), "no_children.pt")
    save(HasList(), "module_list.pt")
    save(nn.Sequential(OrderedDict(fc=nn.Linear(8, 8), relu=nn.ReLU(inplace=True), head=nn.Linear(8, 4))),
         "in_place.pt")

    def data(name, **tensors):
        torch.save(tensors, os.path.join(out, name))

    data("mlp_data.pt", inputs=torch.randn(10, 8), targets=torch.randn(10, 4))
    data("convnet_data.pt", inputs=torch.randn(12, 3, 8, 8), targets=torch.randint(5, (12,)))
    data("data_no_targets.pt", inputs=torch.randn(10, 8), labels=torch.randn(10, 4))
    data("data_float64.pt", inputs=torch.randn(10, 8, dtype=torch.float64), targets=torch.randn(10, 4))
    data("data_mismatched.pt", inputs=torch.randn(10, 8), targets=torch.randn(9, 4))
    data("data_float_classes.pt", inputs=torch.randn(12, 3, 8, 8), targets=torch.randn(12, 5))
    data("data_class_7.pt", inputs=torch.randn(12, 3, 8, 8), targets=torch.full((12,), 7))
    torch.save([torch.randn(10, 8), torch.randn(10, 4)], os.path.join(out, "data_list.pt"))
    inflating_copy(os.path.join(out, "mlp.pt"), os.path.join(out, "inflates.pt"), 300)
    inflating_copy(os.path.join(out, "mlp_data.pt"), os.path.join(out, "data_inflates.pt"), 300)


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(sys.argv[1])
