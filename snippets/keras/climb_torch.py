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
    def __init__(self, image_size: int = 64, reshape_pool: bool = False):
        super().__init__()
        side = (image_size - 2) // 2
        self.reshape_pool = reshape_pool  # pooling as reshape and max, as the climb's step 10
        self.conv = nn.Conv2d(3, 32, 3)
        self.hidden = nn.Linear(32 * side * side, 128)
        self.out = nn.Linear(128, 1)

    def forward(self, pixels: torch.Tensor, train: bool = True) -> torch.Tensor:
        """uint8 (N, H, W, 3) pixels in, the logit of P(dog) out."""
        x = pixels.permute(0, 3, 1, 2).float()
        if train:
            x = augment(x)
        x = F.relu(self.conv(x / 255))
        if self.reshape_pool:  # 2x2 windows as two more axes (even sizes: 62 x 62 here)
            n, c, h, w = x.shape
            x = x.reshape(n, c, h // 2, 2, w // 2, 2).amax((3, 5))
        else:
            x = F.max_pool2d(x, 2)
        return self.out(F.relu(self.hidden(x.flatten(1))))
# --8<-- [end:model]


# --8<-- [start:train]
def trainer(x: torch.Tensor, y: torch.Tensor, batch: int, compile: bool = True,
            bf16: bool = True, reshape_pool: bool = False, graphs: bool = False):
    """epoch(): one pass over x, y (already where they should be), in a fresh order each time.
    graphs: the compiled forward and backward replayed as CUDA graphs (one launch each)."""
    dev = x.device
    model = CatsVsDogs(x.shape[1], reshape_pool).to(dev, memory_format=torch.channels_last)
    optimizer = torch.optim.Adam(model.parameters(), 1e-3, fused=dev.type == "cuda")

    mode = "reduce-overhead" if graphs else None  # forward and backward, one graph each
    net = torch.compile(model, mode=mode) if compile else model

    def step(xb, yb):
        if graphs:  # a new training step: the last step's graph outputs may be overwritten
            torch.compiler.cudagraph_mark_step_begin()
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
    twin = CatsVsDogs(32, reshape_pool=True).to(memory_format=torch.channels_last)
    twin.load_state_dict(model.state_dict())  # the same weights, the other pooling
    with torch.no_grad():
        assert torch.allclose(twin(x, train=False), model(x, train=False), atol=1e-6)
    print(f"loss {losses[0]:.3f} -> {losses[-1]:.3f}; pooling as reshape and max agrees")
