"""Record the timeline of a Python program that runs on JAX (Keras with KERAS_BACKEND=jax), with
jax.profiler, where Nsight Systems is not installed:

    python snippets/timeline/trace_jax.py build/trace snippets/keras/train.py DATA --epochs 1

writes build/trace/plugins/profile/<run>/perfetto_trace.json.gz (open it in ui.perfetto.dev,
or give it to tools/timeline_trace.py) and the XPlane file TensorBoard's profiler reads.
Without arguments it traces a small matrix product into ./trace (a demo)."""
import runpy
import sys
from pathlib import Path

import jax

def demo():
    x = jax.numpy.ones((256, 256))
    print(f"sum of x @ x: {float((x @ x).sum()):.0f}")


if __name__ == "__main__":
    if len(sys.argv) == 1:
        with jax.profiler.trace("trace", create_perfetto_trace=True):
            demo()
        print("OK: trace written under trace/plugins/profile/")
        sys.exit(0)
    if len(sys.argv) < 3 or not Path(sys.argv[2]).is_file():
        print("error: give a trace folder and a Python program: trace_jax.py OUT PROGRAM [ARGS]",
              file=sys.stderr)
        sys.exit(2)
    out, program = sys.argv[1], sys.argv[2]
    sys.argv = sys.argv[2:]  # the program sees its own name and arguments
    sys.path.insert(0, str(Path(program).resolve().parent))  # as `python PROGRAM` would
    # --8<-- [start:trace]
    options = jax.profiler.ProfileOptions()
    options.python_tracer_level = 0  # no event per Python call: a trainer's trace stays small
    jax.profiler.start_trace(out, create_perfetto_trace=True, profiler_options=options)
    try:
        runpy.run_path(program, run_name="__main__")
    except SystemExit as done:  # the program's exit code is this one's
        code = done.code
    else:
        code = 0
    finally:
        jax.profiler.stop_trace()
    # --8<-- [end:trace]
    sys.exit(code)
