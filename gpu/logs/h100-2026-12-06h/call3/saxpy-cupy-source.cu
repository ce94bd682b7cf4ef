#include <cupy/complex.cuh>
#include <cupy/carray.cuh>
#include <cupy/atomics.cuh>
#include <cupy/math_constants.h>

    
    
    extern "C" __global__ void saxpy(const float a, const CArray<float, 1, 1, 1> _raw_x, CArray<float, 1, 1, 1> _raw_y, CIndexer<1, 1> _ind) {
      ;
      #pragma unroll 1
      CUPY_FOR(i, _ind.size()) {
        _ind.set(i);
        const float &x = _raw_x[_ind.get()];
float &y = _raw_y[_ind.get()];
y = a * x + y;
      }
      ;
    }
    