"""The same CNN and augmentation in PyTorch, compiled with torch.compile: the climb's anchor.

Conv 3x3 (32) -> ReLU -> 2x2 max pool -> dense 128 -> ReLU -> dense 1, trained with Adam on
binary cross-entropy, like model.py. The augmentation draws the same flip, rotation (up to 0.05
of a turn) and zoom (up to 20 %) per image, but resamples once: the three become one affine
transform (Keras's layers resample twice, once for the rotation, once for the zoom).

    python snippets/keras/climb_torch.py
"""

# --8<-- [start:model]
import math

import torch
import torch.nn.functional as F
from torch import nn


def augment(x: torch.Tensor) -> torch.Tensor:
    """Random flip, rotation and zoom of a float (N, 3, H, W) batch, in one bilinear resampling."""
    n, dev = x.shape[0], x.device
    flip = torch.where(torch.rand(n, device=dev) < 0.5, -1.0, 1.0)
    angle = (torch.rand(n, device=dev) * 2 - 1) * 0.05 * 2 * math.pi
    scale = 1 + (torch.rand(n, device=dev) * 2 - 1) * 0.2  # >1 shows more: zoomed out
    cos, sin = torch.cos(angle) * scale, torch.sin(angle) * scale
    zero = torch.zeros_like(cos)
    theta = torch.stack([torch.stack([cos * flip, -sin, zero], 1),
                         torch.stack([sin * flip, cos, zero], 1)], 1)
    grid = F.affine_grid(theta, list(x.shape), align_corners=False)
    return F.grid_sample(x, grid, mode="bilinear", padding_mode="reflection", align_corners=False)


class CatsVsDogs(nn.Module):
    def __init__(self, image_size: int = 64):
        super().__init__()
        side = (image_size - 2) // 2
        self.conv = nn.Conv2d(3, 32, 3)
        self.hidden = nn.Linear(32 * side * side, 128)
        self.out = nn.Linear(128, 1)

    def forward(self, pixels: torch.Tensor, train: bool = True) -> torch.Tensor:
        """uint8 (N, H, W, 3) pixels in, the logit of P(dog) out."""
        x = pixels.permute(0, 3, 1, 2).float()
        if train:
            x = augment(x)
        x = F.max_pool2d(F.relu(self.conv(x / 255)), 2)
        return self.out(F.relu(self.hidden(x.flatten(1))))
# --8<-- [end:model]


# --8<-- [start:train]
def trainer(x: torch.Tensor, y: torch.Tensor, batch: int, compile: bool = True,
            bf16: bool = True):
    """epoch(): one pass over x, y (already where they should be), in a fresh order each time."""
    dev = x.device
    model = CatsVsDogs(x.shape[1]).to(dev, memory_format=torch.channels_last)
    optimizer = torch.optim.Adam(model.parameters(), 1e-3, fused=dev.type == "cuda")

    net = torch.compile(model) if compile else model  # forward and backward, one graph each

    def step(xb, yb):
        with torch.autocast(dev.type, torch.bfloat16, enabled=bf16):
            logits = net(xb)
        loss = F.binary_cross_entropy_with_logits(logits.float(), yb)
        loss.backward()
        return loss

    def epoch() -> float:
        order = torch.randperm(len(x), device=dev)
        for i in range(len(x) // batch):
            pick = order[i * batch:(i + 1) * batch]
            loss = step(x[pick], y[pick])
            optimizer.step()
            optimizer.zero_grad(set_to_none=True)
        return float(loss)  # on the host: every step has finished

    return model, epoch
# --8<-- [end:train]


if __name__ == "__main__":
    torch.manual_seed(0)
    y = torch.randint(0, 2, (64, 1)).float()
    x = (torch.rand(64, 32, 32, 3) * 60 + 150 * y[:, :, None, None]).to(torch.uint8)
    model, epoch = trainer(x, y, batch=16, compile=False, bf16=False)
    losses = [epoch() for _ in range(5)]
    assert all(math.isfinite(v) for v in losses), losses
    print(f"loss {losses[0]:.3f} -> {losses[-1]:.3f}")
