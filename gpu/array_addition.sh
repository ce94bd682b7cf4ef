#!/usr/bin/env bash
# Array addition on the GPU: the pytest gpu tests, then the commands of the page, printed.
set -u
python3 -m pytest -o addopts="" -p no:cacheprovider -m gpu -v tests/test_array_addition.py
mkdir -p build
nvcc -O2 -o build/vector_add_cuda snippets/array_addition/vector_add.cu
for n in 6 1000003 268435456; do
    echo "\$ ./build/vector_add_cuda $n"; ./build/vector_add_cuda "$n"
    echo "\$ python snippets/array_addition/vector_add_numba.py $n"; python3 snippets/array_addition/vector_add_numba.py "$n"
done
