// Matrix product C = A @ B (row-major, any M, N, K): seven FP32 kernels from naive to warp-tiled
// and two BF16 tensor-core kernels (mma.sync; wgmma fed by TMA), each checked against a float64
// reference on the GPU, with cuBLAS (FP32, TF32, BF16) as the yardstick. The kernels are in
// kernels/ (one file per step of docs/kernels/matmul.md, listed by kernels.cuh); the inputs and
// the float64 check in reference.cuh; this file is the problem (inputs, reference), one call
// of a kernel, its check, cuBLAS, and a main that checks each kernel once at a small size.
// Timing is the harness's: bench/runner.cu includes this file and times every row of KERNELS
// (`python snippets/bench/run.py matmul --variants cuda_c`).
// Build: nvcc -O3 -arch=sm_90a -o build/sgemm snippets/matmul/sgemm.cu        (kernels only)
//        nvcc -O3 -arch=sm_90a -DWITH_CUBLAS -o build/sgemm snippets/matmul/sgemm.cu -lcublas
//        (sm_90a: H100/H200, for wgmma and TMA; other GPUs: their own -arch, wgmma left out)
// Run:   ./build/sgemm          (checks every kernel at 100 x 130 x 67; takes no arguments)
// --8<-- [start:imports]
#include <cuda_bf16.h>
#include <cuda_runtime.h>
#ifdef WITH_CUBLAS
#include <cublas_v2.h>
#endif

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "kernels.cuh"    // every kernel, its launcher, and the KERNELS table
#include "reference.cuh"  // inputs, the float64 reference, the check
// --8<-- [end:imports]

// --8<-- [start:problem]
// The inputs of one size on the GPU: A and B in FP32, their BF16 copies for the tensor-core
// kernels (B transposed, rows padded to 8 values), the float64 product, and C.
struct Problem {
    int m, n, k, ld;  // ld: row stride of the BF16 copies, K rounded up to 8
    float *A, *B, *C;
    __nv_bfloat16 *A16, *Bt16;
    double *R, *sums;  // the float64 reference; the error check's sums
};

static Problem *setup(const long dims[3]) {
    Problem *p = new Problem{(int)dims[0], (int)dims[1], (int)dims[2], (int)(dims[2] + 7) / 8 * 8};
    size_t na = (size_t)p->m * p->k, nb = (size_t)p->k * p->n, nc = (size_t)p->m * p->n;
    CUDA_CHECK(cudaMalloc(&p->A, na * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&p->B, nb * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&p->C, nc * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&p->A16, (size_t)p->m * p->ld * sizeof(__nv_bfloat16)));
    CUDA_CHECK(cudaMalloc(&p->Bt16, (size_t)p->n * p->ld * sizeof(__nv_bfloat16)));
    CUDA_CHECK(cudaMalloc(&p->R, nc * sizeof(double)));
    CUDA_CHECK(cudaMalloc(&p->sums, 3 * sizeof(double)));
    fill_uniform<<<1024, 256>>>(na, p->A, 12345u);
    fill_uniform<<<1024, 256>>>(nb, p->B, 67890u);
    to_bf16<<<1024, 256>>>(p->m, p->k, p->ld, false, p->A, p->A16);
    to_bf16<<<1024, 256>>>(p->k, p->n, p->ld, true, p->B, p->Bt16);
    dgemm_reference<<<dim3(CEIL_DIV(p->n, 16), CEIL_DIV(p->m, 16)), dim3(16, 16)>>>(
        p->m, p->n, p->k, p->A, p->B, p->R);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaDeviceSynchronize());
    return p;
}

// One call, asynchronous: the FP32 kernels take A and B, the BF16 ones their copies.
static void launch(Problem *p, const Kernel &k) {
    if (k.launch) k.launch(p->m, p->n, p->k, p->A, p->B, p->C);
    else k.launch_bf16(p->m, p->n, p->k, p->A16, p->ld, p->Bt16, p->ld, p->C);
}

static const char *precision(const Kernel &k) {
#ifdef WITH_CUBLAS
    if (k.launch == cublas_tf32) return "tf32";
#endif
    return k.launch_bf16 ? "bf16" : "fp32";
}

struct Check { const char *metric; double value, bound; bool ok; };

// C poisoned, one call, and its relative error against the float64 product, within the
// bound of the kernel's precision.
static Check check(Problem *p, const Kernel &k) {
    double rel = relative_error([&] { launch(p, k); }, (size_t)p->m * p->n, p->C, p->R, p->sums);
    double bound = tolerance(precision(k), p->k);
    return {"relative_frobenius", rel, bound, rel <= bound};
}

// wgmma and TMA exist only on compute capability 9.0, in code built for sm_90a.
static const char *unavailable(const Kernel &k) {
    static int has_wgmma = -1;
    if (strncmp(k.name, "wgmma", 5)) return nullptr;
    if (has_wgmma < 0) {
        int *flag, dev, major, minor;
        CUDA_CHECK(cudaMalloc(&flag, sizeof(int)));
        hopper::compiled_for_sm90a<<<1, 1>>>(flag);
        CUDA_CHECK(cudaMemcpy(&has_wgmma, flag, sizeof(int), cudaMemcpyDeviceToHost));
        CUDA_CHECK(cudaFree(flag));
        CUDA_CHECK(cudaGetDevice(&dev));
        CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev));
        CUDA_CHECK(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev));
        has_wgmma = has_wgmma && major == 9 && minor == 0;
    }
    return has_wgmma ? nullptr
                     : "needs an sm_90a build (nvcc -arch=sm_90a) on a compute capability 9.0 GPU";
}
// --8<-- [end:problem]

// --8<-- [start:cublas]
#ifdef WITH_CUBLAS
static cublasHandle_t cublas = nullptr;  // made by the first call (a check), kept

static void cublas_gemm(int M, int N, int K, const void *A, cudaDataType a_type, int lda,
                        const void *B, cudaDataType b_type, int ldb, bool b_transposed, float *C,
                        cublasComputeType_t compute) {
    static const float one = 1.0f, zero = 0.0f;
    if (!cublas && cublasCreate(&cublas) != CUBLAS_STATUS_SUCCESS) {
        fprintf(stderr, "error: cublasCreate failed\n");
        exit(1);
    }
    // Row-major C = A B is column-major C^T = B^T A^T: swap the operands, no copies.
    cublasStatus_t st = cublasGemmEx(cublas, b_transposed ? CUBLAS_OP_T : CUBLAS_OP_N,
                                     CUBLAS_OP_N, N, M, K, &one, B, b_type, ldb, A, a_type, lda,
                                     &zero, C, CUDA_R_32F, N, compute, CUBLAS_GEMM_DEFAULT);
    if (st != CUBLAS_STATUS_SUCCESS) {
        fprintf(stderr, "cuBLAS error: status %d\n", (int)st);
        exit(1);
    }
}

void cublas_fp32(int M, int N, int K, const float *A, const float *B, float *C) {
    cublas_gemm(M, N, K, A, CUDA_R_32F, K, B, CUDA_R_32F, N, false, C, CUBLAS_COMPUTE_32F);
}
void cublas_tf32(int M, int N, int K, const float *A, const float *B, float *C) {
    cublas_gemm(M, N, K, A, CUDA_R_32F, K, B, CUDA_R_32F, N, false, C,
                CUBLAS_COMPUTE_32F_FAST_TF32);
}
// The same BF16 inputs as the tensor-core kernels (B^T), FP32 output.
void cublas_bf16(int M, int N, int K, const __nv_bfloat16 *A, int lda, const __nv_bfloat16 *Bt,
                 int ldb, float *C) {
    cublas_gemm(M, N, K, A, CUDA_R_16BF, lda, Bt, CUDA_R_16BF, ldb, true, C, CUBLAS_COMPUTE_32F);
}
// The same call over the zero padding, K = lda, as the tensor-core kernels compute it: at a K
// that is no multiple of 8 (the odd shape) the like-for-like yardstick.
void cublas_bf16_padded_k(int M, int N, int, const __nv_bfloat16 *A, int lda,
                          const __nv_bfloat16 *Bt, int ldb, float *C) {
    cublas_gemm(M, N, lda, A, CUDA_R_16BF, lda, Bt, CUDA_R_16BF, ldb, true, C, CUBLAS_COMPUTE_32F);
}
#endif
// --8<-- [end:cublas]

#ifdef BENCH_RUNNER  // what bench/runner.cu needs besides: the size, the work, the record
const int SIZE_PARTS = 3;
const long MAX_DIM = 32768;
const char *const DEFAULT_SIZE = "1024";
struct Work { double bytes, flops; };
static Work work(const Problem *p, const Kernel &k) {
    double item = strcmp(precision(k), "bf16") ? 4.0 : 2.0;  // bytes per input element
    return {item * ((double)p->m * p->k + (double)p->k * p->n) + 4.0 * p->m * p->n,
            2.0 * p->m * p->n * p->k};
}
static std::string bench_name(const Kernel &k) {  // cuBLAS under its own name
    return k.library ? k.name : std::string("cuda_c/") + k.name;
}
static std::string bench_extra(const Problem *, const Kernel &k) {
    return std::string("\"precision\": \"") + precision(k) + "\", \"library\": \"" +
           (k.library ? k.library : "") + "\"";
}
#endif

static void teardown(Problem *p) {
    for (void *d : {(void *)p->A, (void *)p->B, (void *)p->C, (void *)p->A16, (void *)p->Bt16,
                    (void *)p->R, (void *)p->sums})
        CUDA_CHECK(cudaFree(d));
    delete p;
}

#ifndef BENCH_RUNNER
int main(int argc, char **argv) {
    if (argc > 1) {
        fprintf(stderr, "error: %s takes no arguments (timing: python snippets/bench/run.py matmul)\n", argv[0]);
        return 2;
    }
    const long dims[3] = {100, 130, 67};  // no dimension a multiple of a tile or of 8
    Problem *p = setup(dims);
    int failed = 0;
    for (const Kernel &k : KERNELS) {
        const char *why = unavailable(k);
        Check c = why ? Check{} : check(p, k);
        printf("%-40s %s\n", k.name, why ? why : c.ok ? "matches the float64 product" : "WRONG");
        failed += !why && !c.ok;
    }
    teardown(p);
    printf(failed ? "FAILED: %d kernel(s) off the float64 product\n" : "OK: every kernel within its bound\n", failed);
    return failed ? 1 : 0;
}
#endif
