# Sourced: the wheels and the harness on PYTHONPATH, as gpu/run_all.sh sets them.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit 1
h=$(mktemp -d); ln -s "$PWD/snippets/bench" "$h/bench"
export PYTHONPATH=/tmp/site:$h NUMBA_ENABLE_CUDASIM=0 PYTHONUNBUFFERED=1
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
