# exercise: softmax_fused
# expect: forbidden
"""Lets PyTorch compute the softmax."""
import torch


def launch(x, out):
    torch.as_tensor(out).copy_(torch.softmax(torch.as_tensor(x), dim=1))
