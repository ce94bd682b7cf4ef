"""The climb: the same Keras model, trained faster one change at a time, on the JAX backend.

Needs model.py beside it. Each step keeps the changes before it and adds one:

    default   Keras's own choice: the augmentation layers turn XLA off, every op runs alone
    xla       let XLA compile the whole step (model.allow_xla)
    uint8     feed the pixels as uint8, a quarter of float32's bytes to copy
    batch     1,024 images a step instead of 256
    spe       steps_per_execution=8: Keras runs 8 steps before it returns to its callbacks
    resident  the images live on the GPU; a step takes a slice, nothing crosses the bus
    bf16      mixed precision: bfloat16 arithmetic, float32 weights
    scan      one XLA program runs a whole chunk of steps (jax.lax.scan over stateless_call)
    resample  flip, rotation and zoom drawn alike but applied in one resampling, not two
    pool      2x2 max pooling as a reshape and a max: its gradient is a mask, not a scatter
    batch4096 4,096 images a step

    KERAS_BACKEND=jax python snippets/keras/climb.py
"""

# --8<-- [start:imports]
import os
import sys

os.environ.setdefault("KERAS_BACKEND", "jax")  # stateless_call and lax.scan below are JAX's

import jax
import keras
import numpy as np

from model import allow_xla, build_model  # model.py, beside this file
# --8<-- [end:imports]

# Each step's settings; a row inherits every change above it.
STEPS = {
    "default": dict(xla=False, uint8=False, batch=256, spe=1, resident=False, bf16=False,
                    scan=False, resample=False, pool=False, augment=True),
    "xla": dict(xla=True),
    "uint8": dict(uint8=True),
    "batch": dict(batch=1024),
    "spe": dict(spe=8),
    "resident": dict(resident=True),
    "bf16": dict(bf16=True),
    "scan": dict(scan=True),
    "resample": dict(resample=True),
    "pool": dict(pool=True),
    "batch4096": dict(batch=4096),
}


def settings(step: str, **changes) -> dict:
    """The settings of a step: the default's, with every change up to and including `step`."""
    found = {}
    for name, change in STEPS.items():
        found.update(change)
        if name == step:
            return {**found, **changes}
    raise KeyError(f"no step {step!r}; steps: {', '.join(STEPS)}")


# --8<-- [start:flops]
def train_flop_per_image(size: int = 64) -> int:
    """Floating-point operations of one training image: the convolution and the two dense layers.

    Forward, a multiply-add is 2 FLOP. Backward computes the weight gradients (as much as the
    forward) and the input gradients (as much again) of every layer except the first, whose input
    is the image: 3x the forward, less one convolution. Augmentation, pooling and the activations
    are left out: they move bytes, they do not multiply matrices.
    """
    out = size - 2  # 3x3 convolution, no padding
    conv = 2 * out * out * 32 * (3 * 3 * 3)
    dense = 2 * (out // 2) ** 2 * 32 * 128 + 2 * 128
    return 3 * (conv + dense) - conv
# --8<-- [end:flops]


# --8<-- [start:resample]
class OneResample(keras.layers.Layer):
    """RandomFlip, RandomRotation(0.05) and RandomZoom(0.2) of model.py, drawn per image the same
    way, composed into one affine transform: one bilinear resampling instead of two."""

    def __init__(self, seed=None, **kwargs):
        super().__init__(**kwargs)
        self.seed_generator = keras.random.SeedGenerator(seed)

    def call(self, x, training=True):
        if not training:
            return x
        ops, n = keras.ops, keras.ops.shape(x)[0]
        coin = keras.random.uniform((n,), seed=self.seed_generator)
        flip = ops.where(coin < 0.5, -1.0, 1.0)
        turn = keras.random.uniform((n,), -0.05 * 2 * np.pi, 0.05 * 2 * np.pi,
                                    seed=self.seed_generator)
        zoom = keras.random.uniform((n,), 0.8, 1.2, seed=self.seed_generator)
        cos, sin = ops.cos(turn) * zoom, ops.sin(turn) * zoom
        cy, cx = (x.shape[1] - 1) / 2, (x.shape[2] - 1) / 2
        # output pixel (px, py) reads the input at centre + M (p - centre), M = rotate.zoom.flip
        a0, a1, b0, b1 = cos * flip, -sin, sin * flip, cos
        zero = ops.zeros_like(cos)
        transform = ops.stack([a0, a1, cx - a0 * cx - a1 * cy, b0, b1, cy - b0 * cx - b1 * cy,
                               zero, zero], axis=1)
        return ops.image.affine_transform(x, transform, fill_mode="reflect")
# --8<-- [end:resample]


# --8<-- [start:pool]
class PoolByReshape(keras.layers.Layer):
    """MaxPooling2D(2) for even sides: (N, H, W, C) -> (N, H/2, 2, W/2, 2, C), max over the 2s.

    XLA runs MaxPooling2D's gradient as select-and-scatter, one of the slowest kernels of the
    step; the gradient of a max over an axis is an elementwise mask that fuses with its
    neighbours."""

    def call(self, x):
        _, h, w, c = x.shape
        return keras.ops.max(keras.ops.reshape(x, (-1, h // 2, 2, w // 2, 2, c)), axis=(2, 4))
# --8<-- [end:pool]


# --8<-- [start:model]
def make_model(s: dict, image_size: int = 64) -> keras.Model:
    """The page's model, compiled the way the step says."""
    keras.mixed_precision.set_global_policy("mixed_bfloat16" if s["bf16"] else "float32")
    try:
        keras.utils.set_random_seed(0)
        once = s["resample"] and s["augment"]
        model = build_model(image_size, augment=s["augment"] and not once)  # takes the policy
        if once:  # float32 coordinates: bfloat16 cannot place a pixel of 64 exactly
            model = keras.Sequential([keras.Input((image_size, image_size, 3)),
                                      OneResample(dtype="float32", name="augmentation_once"),
                                      *model.layers], name=model.name)
        if s["pool"]:  # the same layers, the pooling swapped
            model = keras.Sequential(
                [keras.Input((image_size, image_size, 3))]
                + [PoolByReshape(name="pool_by_reshape")
                   if isinstance(layer, keras.layers.MaxPooling2D) else layer
                   for layer in model.layers], name=model.name)
    finally:
        keras.mixed_precision.set_global_policy("float32")
    if s["xla"]:
        allow_xla(model)  # without it, jit_compile="auto" resolves to False for this model
    model.compile(optimizer=keras.optimizers.Adam(1e-3), loss="binary_crossentropy",
                  metrics=["accuracy"], steps_per_execution=s["spe"])
    return model
# --8<-- [end:model]


# --8<-- [start:resident]
class OnDevice(keras.utils.PyDataset):
    """Batches sliced from arrays that already live on the GPU, shuffled there each epoch."""

    def __init__(self, x, y, batch: int, seed: int = 0):
        super().__init__()
        self.x, self.y, self.batch = jax.device_put(x), jax.device_put(y), batch
        self.key = jax.random.key(seed)

    def __len__(self):
        return len(self.x) // self.batch

    def __getitem__(self, i):
        return self.x[i * self.batch:(i + 1) * self.batch], self.y[i * self.batch:(i + 1) * self.batch]

    def on_epoch_end(self):
        self.key, key = jax.random.split(self.key)
        order = jax.random.permutation(key, len(self.x))  # a gather on the GPU, no copy back
        self.x, self.y = self.x[order], self.y[order]
# --8<-- [end:resident]


# --8<-- [start:scan]
def scan_epoch(model: keras.Model, steps: int, batch: int):
    """One jitted program that trains `steps` steps: the Keras model's own step, rolled in a scan.

    Keras's fit on JAX calls one compiled step per batch from Python, even with
    steps_per_execution. Here the loop itself is compiled: the host launches one program for
    `steps` batches, drawn on the GPU from the resident images.
    """
    loss_fn, optimizer = keras.losses.BinaryCrossentropy(), model.optimizer
    optimizer.build(model.trainable_variables)

    def loss_of(trainable, non_trainable, x, y):
        out, non_trainable = model.stateless_call(trainable, non_trainable, x, training=True)
        return loss_fn(y, out), non_trainable

    grad = jax.value_and_grad(loss_of, has_aux=True)

    def step(state, xy):
        trainable, non_trainable, opt = state
        (loss, non_trainable), grads = grad(trainable, non_trainable, *xy)
        trainable, opt = optimizer.stateless_apply(opt, grads, trainable)
        return (trainable, non_trainable, opt), loss

    @jax.jit
    def run(state, x, y, key):
        pick = jax.random.permutation(key, len(x))[:steps * batch]
        xs = x[pick].reshape(steps, batch, *x.shape[1:])
        ys = y[pick].reshape(steps, batch, *y.shape[1:])
        return jax.lax.scan(step, state, (xs, ys))

    return run


def state_of(model: keras.Model):
    return ([v.value for v in model.trainable_variables],
            [v.value for v in model.non_trainable_variables],
            [v.value for v in model.optimizer.variables])
# --8<-- [end:scan]


def trainer(step: str, x: np.ndarray, y: np.ndarray, **changes):
    """(model, settings, epoch): epoch() trains once over x, y and returns the last loss."""
    s = settings(step, **changes)
    model = make_model(s, x.shape[1])
    x = x if s["uint8"] else x.astype("float32")
    if s["scan"]:
        run = scan_epoch(model, len(x) // s["batch"], s["batch"])
        data = jax.device_put(x), jax.device_put(y)
        box = {"state": state_of(model), "key": jax.random.key(0)}

        def epoch() -> float:
            box["key"], key = jax.random.split(box["key"])
            box["state"], losses = run(box["state"], *data, key)
            return float(losses[-1])  # on the host: every step has finished
    elif s["resident"]:
        data = OnDevice(x, y, s["batch"])

        def epoch() -> float:
            return float(model.fit(data, epochs=1, verbose=0).history["loss"][-1])
    else:
        def epoch() -> float:
            return float(model.fit(x, y, batch_size=s["batch"], epochs=1,
                                   verbose=0).history["loss"][-1])
    return model, s, epoch


if __name__ == "__main__":
    if keras.backend.backend() != "jax":  # an exported KERAS_BACKEND wins over the default above
        print(f"climb.py runs on JAX, not {keras.backend.backend()}: run it with "
              "KERAS_BACKEND=jax", file=sys.stderr)
        raise SystemExit(2)
    rng = np.random.default_rng(0)
    y = rng.integers(0, 2, 32).astype("float32")[:, None]
    x = (rng.uniform(0, 60, (32, 32, 32, 3)) + 150 * y[:, :, None, None]).astype("uint8")
    maps = rng.normal(size=(2, 30, 30, 8)).astype("float32")
    assert np.array_equal(PoolByReshape()(maps), keras.layers.MaxPooling2D(2)(maps))
    print(f"{train_flop_per_image(64) / 1e6:.1f} MFLOP per training image at 64x64")
    for step in ("xla", "batch4096"):  # the second has every change of the climb
        model, s, epoch = trainer(step, x, y, batch=8)
        losses = [epoch() for _ in range(3)]
        assert np.isfinite(losses).all(), f"{step}: loss {losses}"
        print(f"{step}: {[layer.name for layer in model.layers]}, loss {losses[0]:.3f} -> {losses[-1]:.3f}")
