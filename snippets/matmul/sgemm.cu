// Matrix product C = A @ B (row-major, any M, N, K): seven FP32 kernels from naive to warp-tiled
// and two BF16 tensor-core kernels (mma.sync; wgmma fed by TMA), each checked against a float64
// reference on the GPU and then timed, with cuBLAS (FP32, TF32, BF16) as the yardstick.
// The kernels are in kernels/ (one file per step of docs/kernels/matmul.md, listed by
// kernels.cuh); the inputs and the float64 check in reference.cuh; this file is the runner:
// the command line, the timing and the cuBLAS yardstick.
//
// Build: nvcc -O3 -arch=sm_90a -o build/sgemm snippets/matmul/sgemm.cu             (kernels only)
//        nvcc -O3 -arch=sm_90a -DWITH_CUBLAS -o build/sgemm snippets/matmul/sgemm.cu -lcublas
// Run:   ./build/sgemm [--kernel NAME,...] [--repeats N] [--budget S] [--bench] SIZE [SIZE ...]
//        SIZE is N (square) or MxNxK, for example 4096 or 3001x4099x2053.
// --8<-- [start:imports]
#include <cuda_bf16.h>
#include <cuda_runtime.h>
#ifdef WITH_CUBLAS
#include <cublas_v2.h>
#endif

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "kernels.cuh"    // every kernel, its launcher, and the KERNELS table
#include "reference.cuh"  // inputs, the float64 reference, the check
// --8<-- [end:imports]

struct Size { int m, n, k; };

static void usage_error(const char *msg, const char *arg) {
    fprintf(stderr, "error: %s%s%s\n", msg, arg ? ": " : "", arg ? arg : "");
    exit(2);
}

static long parse_long(const char *s, const char *what, long lo, long hi) {
    char *end = nullptr;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (end == s || *end != '\0' || errno || v < lo || v > hi) usage_error(what, s);
    return v;
}

static Size parse_size(const char *s) {
    Size z{};
    char extra;
    if (sscanf(s, "%dx%dx%d%c", &z.m, &z.n, &z.k, &extra) == 3) {
        if (z.m < 1 || z.n < 1 || z.k < 1 || z.m > 32768 || z.n > 32768 || z.k > 32768)
            usage_error("each of M, N, K must be 1..32768", s);
        return z;
    }
    int n = (int)parse_long(s, "SIZE must be N or MxNxK with each 1..32768", 1, 32768);
    return Size{n, n, n};
}

// --8<-- [start:timing]
// Samples of one measurement: seconds per call, each sample the mean of `calls` back-to-back
// calls timed with CUDA events (calls chosen so that a sample lasts at least 2 ms).
struct Samples { std::vector<double> s; int calls; };

static double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    size_t h = v.size() / 2;
    return v.size() % 2 ? v[h] : 0.5 * (v[h - 1] + v[h]);
}

// Warm up once, then take `repeats` samples, or fewer when `budget_s` seconds are spent
// (never fewer than 10).
template <typename F>
static Samples time_events(F fn, int repeats, double budget_s) {
    cudaEvent_t e0, e1;
    CUDA_CHECK(cudaEventCreate(&e0));
    CUDA_CHECK(cudaEventCreate(&e1));
    CUDA_CHECK(cudaEventRecord(e0));
    fn();
    CUDA_CHECK(cudaEventRecord(e1));
    CUDA_CHECK(cudaEventSynchronize(e1));
    CUDA_CHECK(cudaGetLastError());
    float ms = 0.0f;
    CUDA_CHECK(cudaEventElapsedTime(&ms, e0, e1));
    int calls = std::max(1, std::min(1000, (int)std::ceil(2.0 / std::max(ms, 1e-4f))));
    Samples out{{}, calls};
    double total = 0.0;
    while ((int)out.s.size() < repeats && (out.s.size() < 10 || total < budget_s)) {
        CUDA_CHECK(cudaEventRecord(e0));
        for (int c = 0; c < calls; ++c) fn();
        CUDA_CHECK(cudaEventRecord(e1));
        CUDA_CHECK(cudaEventSynchronize(e1));
        CUDA_CHECK(cudaGetLastError());
        CUDA_CHECK(cudaEventElapsedTime(&ms, e0, e1));
        out.s.push_back(ms / 1e3 / calls);
        total += ms / 1e3;
    }
    CUDA_CHECK(cudaEventDestroy(e0));
    CUDA_CHECK(cudaEventDestroy(e1));
    return out;
}
// --8<-- [end:timing]

#ifdef WITH_CUBLAS
#define CUBLAS_CHECK(call)                                                                  \
    do {                                                                                    \
        cublasStatus_t st_ = (call);                                                        \
        if (st_ != CUBLAS_STATUS_SUCCESS) {                                                 \
            fprintf(stderr, "cuBLAS error: status %d at %s:%d\n", (int)st_, __FILE__,       \
                    __LINE__);                                                              \
            exit(1);                                                                        \
        }                                                                                   \
    } while (0)
#endif

static bool is_cublas(const char *name) { return !strncmp(name, "cublas_", 7); }

int main(int argc, char **argv) {
    std::vector<std::string> wanted;
    int repeats = 20;
    double budget_s = 1.0;
    bool bench_lines = false;
    std::vector<Size> sizes;
    for (int i = 1; i < argc; ++i) {
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            printf("usage: sgemm [--kernel NAME[,NAME...]] [--repeats N] [--budget SECONDS] "
                   "[--bench] SIZE [SIZE ...]\n"
                   "  SIZE: N (square) or MxNxK, each 1..32768 (default 1024).\n"
                   "  NAME: all (the progression, the default), tune (the tuning variants),\n"
                   "        cublas_fp32, cublas_tf32, cublas_bf16 (with -DWITH_CUBLAS), or:\n       ");
            for (int j = 0; j < N_KERNELS; ++j) printf(" %s", KERNELS[j].name);
            printf("\n  Each kernel is checked against a float64 reference, then timed with CUDA\n"
                   "  events: N samples (10..100000, default 20), fewer if SECONDS run out, never\n"
                   "  fewer than 10. --bench adds one 'BENCH {json}' line per measurement.\n");
            return 0;
        } else if (!strcmp(argv[i], "--kernel") && i + 1 < argc) {
            std::string list = argv[++i];
            for (size_t p = 0, q; p <= list.size(); p = q + 1) {
                q = list.find(',', p);
                if (q == std::string::npos) q = list.size();
                if (q > p) wanted.push_back(list.substr(p, q - p));
            }
        } else if (!strcmp(argv[i], "--repeats") && i + 1 < argc) {
            repeats = (int)parse_long(argv[++i], "--repeats must be 10..100000", 10, 100000);
        } else if (!strcmp(argv[i], "--budget") && i + 1 < argc) {
            char *end = nullptr;
            const char *s = argv[++i];
            budget_s = strtod(s, &end);
            if (end == s || *end != '\0' || !std::isfinite(budget_s) || budget_s <= 0 ||
                budget_s > 3600)
                usage_error("--budget must be a number of seconds in (0, 3600]", s);
        } else if (!strcmp(argv[i], "--bench")) {
            bench_lines = true;
        } else if (argv[i][0] == '-') {
            usage_error("unknown option (or missing value)", argv[i]);
        } else {
            sizes.push_back(parse_size(argv[i]));
        }
    }
    if (sizes.empty()) sizes.push_back(Size{1024, 1024, 1024});
    if (wanted.empty()) wanted.push_back("all");
    // The run list, in table order.
    std::vector<std::string> run;
    auto add = [&](const std::string &name) {
        if (std::find(run.begin(), run.end(), name) == run.end()) run.push_back(name);
    };
    for (const std::string &w : wanted) {
        bool known = false;
#ifdef WITH_CUBLAS
        for (const char *c : {"cublas_fp32", "cublas_tf32", "cublas_bf16"})
            if (w == c || w == "all") add(c), known = true;
#else
        if (is_cublas(w.c_str()))
            usage_error("this build has no cuBLAS (compile with -DWITH_CUBLAS -lcublas)",
                        w.c_str());
#endif
        for (const Kernel &k : KERNELS)
            if (w == k.name || (w == "all" && k.published) || (w == "tune" && !k.published))
                add(k.name), known = true;
        if (!known) usage_error("no kernel named", w.c_str());
    }
    // FP32 and TF32 first, then BF16, each group right after its cuBLAS yardstick: a measurement
    // is then taken in a similar power and thermal state as the one it is compared with.
    auto group = [&](const std::string &name) {
        bool bf16 = name == "cublas_bf16";
        for (const Kernel &k : KERNELS)
            if (name == k.name) bf16 = k.launch_bf16 != nullptr;
        return 2 * bf16 + !is_cublas(name.c_str());
    };
    std::stable_sort(run.begin(), run.end(), [&](const std::string &a, const std::string &b) {
        return group(a) < group(b);
    });

    int dev = 0;
    CUDA_CHECK(cudaGetDevice(&dev));
    cudaDeviceProp prop;
    CUDA_CHECK(cudaGetDeviceProperties(&prop, dev));
    printf("# %s, %d SMs\n", prop.name, prop.multiProcessorCount);
    // wgmma and TMA exist only on compute capability 9.0, in code built for sm_90a.
    int *flag, has_wgmma = 0;
    CUDA_CHECK(cudaMalloc(&flag, sizeof(int)));
    hopper::compiled_for_sm90a<<<1, 1>>>(flag);
    CUDA_CHECK(cudaMemcpy(&has_wgmma, flag, sizeof(int), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaFree(flag));
    if (!(has_wgmma && prop.major == 9 && prop.minor == 0)) {
        auto skipped = std::remove_if(run.begin(), run.end(), [](const std::string &name) {
            return !name.compare(0, 5, "wgmma");
        });
        if (skipped != run.end())
            printf("# wgmma kernels left out: they need an sm_90a build (nvcc -arch=sm_90a) "
                   "on a compute capability 9.0 GPU\n");
        run.erase(skipped, run.end());
    }
#ifdef WITH_CUBLAS
    cublasHandle_t handle;
    CUBLAS_CHECK(cublasCreate(&handle));
#endif
    printf("%-17s %-40s %9s %8s %8s %9s\n", "size", "kernel", "ms", "TFLOP/s", "%cuBLAS",
           "rel.err");
    bool all_ok = true;
    for (Size z : sizes) {
        const int lda = (z.k + 7) / 8 * 8, ldb = lda;  // BF16 rows of A and B^T, padded to 8
        size_t na = (size_t)z.m * z.k, nb = (size_t)z.k * z.n, nc = (size_t)z.m * z.n;
        float *A, *B, *C;
        __nv_bfloat16 *A16, *B16;
        double *R, *sums;
        CUDA_CHECK(cudaMalloc(&A, na * sizeof(float)));
        CUDA_CHECK(cudaMalloc(&B, nb * sizeof(float)));
        CUDA_CHECK(cudaMalloc(&C, nc * sizeof(float)));
        CUDA_CHECK(cudaMalloc(&A16, (size_t)z.m * lda * sizeof(__nv_bfloat16)));
        CUDA_CHECK(cudaMalloc(&B16, (size_t)z.n * ldb * sizeof(__nv_bfloat16)));
        CUDA_CHECK(cudaMalloc(&R, nc * sizeof(double)));
        CUDA_CHECK(cudaMalloc(&sums, 3 * sizeof(double)));
        fill_uniform<<<1024, 256>>>(na, A, 12345u);
        fill_uniform<<<1024, 256>>>(nb, B, 67890u);
        to_bf16<<<1024, 256>>>(z.m, z.k, lda, false, A, A16);
        to_bf16<<<1024, 256>>>(z.k, z.n, ldb, true, B, B16);
        CUDA_CHECK(cudaGetLastError());
        dgemm_reference<<<dim3(CEIL_DIV(z.n, 16), CEIL_DIV(z.m, 16)), dim3(16, 16)>>>(
            z.m, z.n, z.k, A, B, R);
        CUDA_CHECK(cudaGetLastError());
        CUDA_CHECK(cudaDeviceSynchronize());
        const double flops = 2.0 * z.m * z.n * z.k;
        char label[64];
        snprintf(label, sizeof label, "%dx%dx%d", z.m, z.n, z.k);
        double base_fp32 = 0.0, base_bf16 = 0.0;  // cuBLAS medians: the yardsticks
        for (const std::string &name : run) {
            const Kernel *kern = nullptr;
            for (const Kernel &k : KERNELS)
                if (name == k.name) kern = &k;
            const char *precision = kern ? (kern->launch_bf16 ? "bf16" : "fp32")
                                         : name.c_str() + 7;  // cublas_<precision>
            std::function<void()> fn;
            if (kern && kern->launch) {
                fn = [&, kern]() { kern->launch(z.m, z.n, z.k, A, B, C); };
            } else if (kern) {
                fn = [&, kern]() { kern->launch_bf16(z.m, z.n, z.k, A16, lda, B16, ldb, C); };
            }
#ifdef WITH_CUBLAS
            // Row-major C = A B is column-major C^T = B^T A^T: swap the operands, no copies.
            static const float one = 1.0f, zero = 0.0f;
            if (name == "cublas_fp32" || name == "cublas_tf32") {
                cublasComputeType_t ct = name == "cublas_fp32" ? CUBLAS_COMPUTE_32F
                                                               : CUBLAS_COMPUTE_32F_FAST_TF32;
                fn = [&, ct]() {
                    CUBLAS_CHECK(cublasGemmEx(handle, CUBLAS_OP_N, CUBLAS_OP_N, z.n, z.m, z.k,
                                              &one, B, CUDA_R_32F, z.n, A, CUDA_R_32F, z.k,
                                              &zero, C, CUDA_R_32F, z.n, ct,
                                              CUBLAS_GEMM_DEFAULT));
                };
            } else if (name == "cublas_bf16") {  // the same BF16 inputs (B^T), FP32 output
                fn = [&]() {
                    CUBLAS_CHECK(cublasGemmEx(handle, CUBLAS_OP_T, CUBLAS_OP_N, z.n, z.m, z.k,
                                              &one, B16, CUDA_R_16BF, ldb, A16, CUDA_R_16BF,
                                              lda, &zero, C, CUDA_R_32F, z.n,
                                              CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
                };
            }
#endif
            double rel = check(fn, nc, C, R, sums);
            double bound = tolerance(precision, z.k);
            bool ok = rel <= bound;
            if (!ok) {  // a wrong kernel is reported, never timed
                all_ok = false;
                printf("%-17s %-40s %9s %8s %8s %9.2e  FAILED (bound %.1e)\n", label,
                       name.c_str(), "-", "-", "-", rel, bound);
                if (bench_lines)
                    printf("BENCH {\"variant\": \"%s%s\", \"phase\": \"kernel\", \"samples_s\": "
                           "[], \"calls_per_sample\": 1, \"error\": {\"metric\": "
                           "\"relative_frobenius\", \"value\": %.6g, \"ok\": false}}\n",
                           is_cublas(name.c_str()) ? "" : "cuda_c/", name.c_str(),
                           std::isfinite(rel) ? rel : 1e300);
                fflush(stdout);
                continue;
            }
            Samples tm = time_events(fn, repeats, budget_s);
            double med = median(tm.s);
            if (name == "cublas_fp32") base_fp32 = med;
            if (name == "cublas_bf16") base_bf16 = med;
            double base = !strcmp(precision, "fp32") || !strcmp(precision, "tf32") ? base_fp32
                                                                                    : base_bf16;
            printf("%-17s %-40s %9.3f %8.2f %8.1f %9.2e\n", label, name.c_str(), med * 1e3,
                   flops / med / 1e12, base > 0 ? 100.0 * base / med : NAN, rel);
            if (bench_lines) {
                printf("BENCH {\"variant\": \"%s%s\", \"phase\": \"kernel\", \"samples_s\": [",
                       is_cublas(name.c_str()) ? "" : "cuda_c/", name.c_str());
                for (size_t i = 0; i < tm.s.size(); ++i)
                    printf("%s%.9g", i ? ", " : "", tm.s[i]);
                size_t elem = !strcmp(precision, "bf16") ? 2 : 4;
                printf("], \"calls_per_sample\": %d, \"error\": {\"metric\": "
                       "\"relative_frobenius\", \"value\": %.6g, \"ok\": true}, \"flops\": %.17g, "
                       "\"bytes\": %zu, \"params\": {\"m\": %d, \"n\": %d, \"k\": %d}, "
                       "\"extra\": {\"precision\": \"%s\", \"bound\": %.6g, \"library\": \"%s\"}}\n",
                       tm.calls, rel, flops, elem * (na + nb) + 4 * nc, z.m, z.n, z.k, precision,
                       bound, is_cublas(name.c_str()) ? "cublas" : "");
            }
            fflush(stdout);
        }
        CUDA_CHECK(cudaFree(A));
        CUDA_CHECK(cudaFree(B));
        CUDA_CHECK(cudaFree(C));
        CUDA_CHECK(cudaFree(A16));
        CUDA_CHECK(cudaFree(B16));
        CUDA_CHECK(cudaFree(R));
        CUDA_CHECK(cudaFree(sums));
    }
#ifdef WITH_CUBLAS
    cublasDestroy(handle);
#endif
    printf(all_ok ? "OK: every kernel matched the float64 reference\n"
                  : "FAILED: at least one kernel did not match the float64 reference\n");
    return all_ok ? 0 : 1;
}
