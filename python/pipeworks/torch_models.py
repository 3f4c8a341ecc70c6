"""Your own model for ``pipeworks run|profile --model FILE.pt``: turns a PyTorch model into the
sequence pipeworks cuts into stages (its top-level children, each one tensor in and one out),
scripts it with TorchScript, checks the scripted sequence computes what the model computes, and
saves it. Imports torch only when called (the rest of the package does not need it).

    >>> import torch, torchvision
    >>> from pipeworks.torch_models import save_for_pipeline
    >>> model = torchvision.models.resnet50(weights=None)
    >>> seq = save_for_pipeline(model, "resnet50.pt", torch.randn(2, 3, 64, 64))
    >>> len(seq)   # stem (4), 16 bottleneck blocks, pooling, flatten, classifier
    23

Then: ``pipeworks run --model resnet50.pt --input-shape 3,64,64 --loss cross_entropy ...``
(docs/your_model.md).
"""

from collections import OrderedDict


class FlattenError(ValueError):
    """The model cannot be written as a sequence of its parts."""


_RESNET_PARTS = ("conv1", "bn1", "relu", "maxpool", "layer1", "layer2", "layer3", "layer4", "avgpool", "fc")


def _is_resnet(model):
    return all(hasattr(model, name) for name in _RESNET_PARTS)


def _named_sequence(model):
    """(name, module) pairs of the flattened sequence, or None when no rule applies."""
    from torch import nn

    if isinstance(model, nn.Sequential):
        parts = []
        for name, child in model.named_children():
            if isinstance(child, nn.Sequential):
                parts += [(f"{name}_{inner}", m) for inner, m in _named_sequence(child)]
            else:
                parts.append((name, child))
        return parts
    if _is_resnet(model):
        # torchvision's ResNet.forward: the stem, the four stages of blocks, pooling, then
        # torch.flatten(x, 1) before the classifier -- GPipe's cut of ResNet into blocks.
        parts = [(name, getattr(model, name)) for name in ("conv1", "bn1", "relu", "maxpool")]
        for stage in ("layer1", "layer2", "layer3", "layer4"):
            parts += [(f"{stage}_{i}", block) for i, block in getattr(model, stage).named_children()]
        return parts + [("avgpool", model.avgpool), ("flatten", nn.Flatten(1)), ("fc", model.fc)]
    return None


def flatten(model, example_input=None):
    """An ``nn.Sequential`` of the model's parts, in order, sharing the model's parameters.

    Rules, in order: an ``nn.Sequential`` gives its children (nested ``nn.Sequential`` flattened);
    a torchvision ResNet gives its stem layers, each residual block, the pooling, a flatten and
    the classifier; any other model gives its top-level children if, on ``example_input``, they
    compute in order what the model computes. Otherwise ``FlattenError`` says why. Parts that
    work in place (``nn.ReLU(inplace=True)``) are switched to ``inplace=False``: each may begin a
    stage, whose input must stay as it was received.
    """
    import torch
    from torch import nn

    parts = _named_sequence(model)
    if parts is None:
        children = list(model.named_children())
        if not children:
            raise FlattenError(f"{type(model).__name__} has no child modules to cut into stages")
        if example_input is None:
            raise FlattenError(
                f"{type(model).__name__} is neither an nn.Sequential nor a torchvision ResNet: pass example_input "
                "to check that its children in order compute its forward, or write an nn.Sequential of its stages")
        parts = children
        _check_same(model, nn.Sequential(OrderedDict(parts)), example_input,
                    f"{type(model).__name__}'s children in order ({', '.join(n for n, _ in parts)}) do not compute "
                    "its forward (it adds, branches or reshapes between them); write an nn.Sequential of its stages")
    for _, part in parts:
        # A part may begin a stage, whose input pipeworks keeps for its gradient: not in place.
        if getattr(part, "inplace", False) is True:
            part.inplace = False
    return nn.Sequential(OrderedDict(parts))


def _check_same(model, sequence, example_input, message):
    import torch

    was_training = model.training
    model.eval()
    sequence.eval()
    try:
        with torch.no_grad():
            try:
                expected, got = model(example_input), sequence(example_input)
            except Exception as error:  # a child that cannot take its predecessor's output
                raise FlattenError(f"{message}: {error}") from error
        if expected.shape != got.shape or not torch.allclose(expected, got, rtol=1e-4, atol=1e-5):
            raise FlattenError(message)
    finally:
        model.train(was_training)
        sequence.train(was_training)


def save_for_pipeline(model, path, example_input):
    """Flattens ``model`` (see ``flatten``), scripts the sequence with ``torch.jit.script``, checks
    that the scripted sequence computes what ``model`` computes on ``example_input`` (eval mode,
    rtol 1e-4, atol 1e-5), saves it to ``path`` and returns it. Raises ``FlattenError`` when the
    model cannot be flattened or a part cannot be scripted."""
    import torch

    sequence = flatten(model, example_input)
    try:
        scripted = torch.jit.script(sequence)
    except Exception as error:
        raise FlattenError(f"a part of {type(model).__name__} cannot be scripted by TorchScript: {error}") from error
    _check_same(model, scripted, example_input,
                f"the scripted sequence of {type(model).__name__} does not compute what the model computes")
    scripted.save(path)
    return scripted
