// The one C timing runner: it includes a CUDA C lesson, checks each kernel of the lesson's
// table, times it with CUDA events and prints what it measured (a table, and with --bench one
// "BENCH {json}" line per kernel for bench/external.py). Lessons hold no timing code.
//
// Build: nvcc -O3 -arch=native -DLESSON='"../saxpy/saxpy.cu"' -o build/bench-saxpy \
//            snippets/bench/runner.cu      (LESSON: the lesson's path from this folder)
// Each kernel is checked before it is timed (a wrong one is reported, never timed) and again
// after; the larger error of the two is recorded.
// Run:   ./build/bench-saxpy [--kernel NAME,...] [--repeats N] [--budget S] [--bench] [--list]
//                                [SIZE ...]
//        SIZE is N, or MxNxK for a lesson whose problem has three sizes (SIZE_PARTS = 3).
//        --list prints the names --kernel picks, one a line, and exits (no GPU needed).
//
// What a lesson gives the runner (names it defines before `#ifndef BENCH_RUNNER`, around its
// own short main):
//   struct Kernel { const char *name; ...; }   KERNELS[], N_KERNELS   the table, in run order;
//                                               a `bool published` member, if any, picks the
//                                               default set ("all"; "tune" runs the others)
//   SIZE_PARTS (1 or 3), MAX_DIM, DEFAULT_SIZE  the problem's size: N or M x N x K
//   Problem *setup(const long dims[3])          inputs on the device
//   Check check(Problem *, const Kernel &)      fresh inputs, one call, compared with the host
//   void launch(Problem *, const Kernel &)      one call, asynchronous: what is timed
//   Work work(const Problem *, const Kernel &)  bytes moved and flops of one call
//   void teardown(Problem *)
//   Check is {metric, value, bound, ok}; Work is {bytes, flops}.
// and, if it needs them, its own versions of the three hooks below (its non-template
// functions of these names are chosen over the runner's defaults):
//   const char *unavailable(const Kernel &)     why a row cannot run here (the runner says so
//                                               and leaves it out), or nullptr
//   std::string bench_name(const Kernel &)      the row's name in its BENCH line
//   std::string bench_extra(const Problem *, const Kernel &)  more "key": value members of
//                                               its BENCH line's "extra" (besides the bound)
#include <string>
template <typename K> const char *unavailable(const K &) { return nullptr; }
template <typename K> std::string bench_name(const K &k) { return k.name; }
template <typename P, typename K> std::string bench_extra(const P *, const K &) { return ""; }

#define BENCH_RUNNER 1
#ifndef LESSON
#error "build with -DLESSON='\"../<topic>/<lesson>.cu\"' (see the header of runner.cu)"
#endif
#include LESSON

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace bench {

[[noreturn]] static void usage_error(const char *what, const char *arg) {
    fprintf(stderr, "error: %s%s%s (see --help)\n", what, arg ? ": " : "", arg ? arg : "");
    exit(2);
}

static long parse_long(const char *s, const char *what, long lo, long hi) {
    char *end = nullptr;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (end == s || *end != '\0' || errno || v < lo || v > hi) usage_error(what, s);
    return v;
}

// "N", or with SIZE_PARTS == 3 also "MxNxK" ("N" is then N x N x N).
static std::vector<long> parse_size(const char *s) {
    std::string text(s);
    std::vector<long> dims;
    for (size_t p = 0, q; p <= text.size(); p = q + 1) {
        q = std::min(text.find('x', p), text.size());
        dims.push_back(parse_long(text.substr(p, q - p).c_str(), "SIZE must be whole numbers "
                                  "from 1 to MAX_DIM, N or MxNxK", 1, MAX_DIM));
    }
    if (dims.size() == 1) dims.resize(3, SIZE_PARTS == 3 ? dims[0] : 0);
    if (dims.size() != 3 || (SIZE_PARTS == 1 && dims[1] != 0)) usage_error("bad SIZE", s);
    return dims;
}

// The default set: kernels marked published when the table has that field, else all of them.
template <typename K> static auto published(const K &k, int) -> decltype((bool)k.published) {
    return k.published;
}
template <typename K> static bool published(const K &, long) { return true; }

static double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    size_t h = v.size() / 2;
    return v.size() % 2 ? v[h] : 0.5 * (v[h - 1] + v[h]);
}

// --8<-- [start:timing]
// Seconds per call: three warm-up calls, then samples of `calls` back-to-back calls between two
// CUDA events, `calls` chosen so that a sample lasts at least 2 ms (clock resolution and launch
// jitter then do not decide the figure). `repeats` samples, or fewer when `budget_s` is spent,
// never fewer than 10.
struct Samples { std::vector<double> s; int calls; };

template <typename F> static Samples time_events(F fn, int repeats, double budget_s) {
    cudaEvent_t e0, e1;
    CUDA_CHECK(cudaEventCreate(&e0));
    CUDA_CHECK(cudaEventCreate(&e1));
    for (int w = 0; w < 3; ++w) fn();
    CUDA_CHECK(cudaEventRecord(e0));
    fn();
    CUDA_CHECK(cudaEventRecord(e1));
    CUDA_CHECK(cudaEventSynchronize(e1));
    float ms = 0.0f;
    CUDA_CHECK(cudaEventElapsedTime(&ms, e0, e1));
    Samples out{{}, std::max(1, std::min(1000, (int)std::ceil(2.0 / std::max(ms, 1e-4f))))};
    double total = 0.0;
    while ((int)out.s.size() < repeats && (out.s.size() < 10 || total < budget_s)) {
        CUDA_CHECK(cudaEventRecord(e0));
        for (int c = 0; c < out.calls; ++c) fn();
        CUDA_CHECK(cudaEventRecord(e1));
        CUDA_CHECK(cudaEventSynchronize(e1));
        CUDA_CHECK(cudaGetLastError());
        CUDA_CHECK(cudaEventElapsedTime(&ms, e0, e1));
        out.s.push_back(ms / 1e3 / out.calls);
        total += ms / 1e3;
    }
    CUDA_CHECK(cudaEventDestroy(e0));
    CUDA_CHECK(cudaEventDestroy(e1));
    return out;
}
// --8<-- [end:timing]

// One measurement as the line bench/external.py reads (samples empty when the check failed).
static void bench_line(const std::string &name, const Samples &t, const Check &c, const Work &w,
                       const long *dims, const std::string &extra) {
    printf("BENCH {\"variant\": \"%s\", \"phase\": \"kernel\", \"samples_s\": [",
           name.c_str());
    for (size_t i = 0; i < t.s.size(); ++i) printf("%s%.9g", i ? ", " : "", t.s[i]);
    printf("], \"calls_per_sample\": %d, \"error\": {\"metric\": \"%s\", \"value\": %.9g, "
           "\"ok\": %s}, \"bytes\": %.17g, \"flops\": %.17g, \"params\": {",
           t.calls, c.metric, std::isfinite(c.value) ? c.value : 1e300, c.ok ? "true" : "false",
           w.bytes, w.flops);
    if (SIZE_PARTS == 3) printf("\"m\": %ld, \"n\": %ld, \"k\": %ld}", dims[0], dims[1], dims[2]);
    else printf("\"n\": %ld}", dims[0]);
    if (std::isfinite(c.bound) || !extra.empty()) {
        printf(", \"extra\": {");
        if (std::isfinite(c.bound)) printf("\"bound\": %.9g%s", c.bound, extra.empty() ? "" : ", ");
        printf("%s}", extra.c_str());
    }
    printf("}\n");
}

static void help(const char *prog) {
    printf("usage: %s [--kernel NAME[,NAME...]] [--repeats N] [--budget SECONDS] [--bench] "
           "[--list] [SIZE ...]\n  SIZE: %s, each 1..%ld (default %s)\n  NAME: all (the default), tune "
           "(the kernels outside the default set), or:\n   ",
           prog, SIZE_PARTS == 3 ? "N (square) or MxNxK" : "N", (long)MAX_DIM, DEFAULT_SIZE);
    for (int j = 0; j < N_KERNELS; ++j) printf(" %s", KERNELS[j].name);
    printf("\n  Each kernel is checked, then timed with CUDA events: N samples (10..100000, "
           "default 20),\n  fewer if SECONDS (default 1) run out, never fewer than 10. --bench "
           "adds one\n  'BENCH {json}' line per kernel. --list prints the NAMEs picked and "
           "exits.\n");
}

static int main(int argc, char **argv) {
    std::vector<std::string> wanted;
    std::vector<std::vector<long>> sizes;
    int repeats = 20;
    double budget_s = 1.0;
    bool bench_lines = false, list = false;
    for (int i = 1; i < argc; ++i) {
        const char *a = argv[i];
        bool has_value = i + 1 < argc;
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            help(argv[0]);
            return 0;
        } else if (!strcmp(a, "--kernel") && has_value) {
            std::string list = argv[++i];
            for (size_t p = 0, q; p <= list.size(); p = q + 1) {
                q = std::min(list.find(',', p), list.size());
                if (q > p) wanted.push_back(list.substr(p, q - p));
            }
        } else if (!strcmp(a, "--repeats") && has_value) {
            repeats = (int)parse_long(argv[++i], "--repeats must be 10..100000", 10, 100000);
        } else if (!strcmp(a, "--budget") && has_value) {
            char *end = nullptr;
            const char *s = argv[++i];
            budget_s = strtod(s, &end);
            if (end == s || *end || !std::isfinite(budget_s) || budget_s <= 0 || budget_s > 3600)
                usage_error("--budget must be a number of seconds in (0, 3600]", s);
        } else if (!strcmp(a, "--bench")) {
            bench_lines = true;
        } else if (!strcmp(a, "--list")) {
            list = true;
        } else if (a[0] == '-') {
            usage_error("unknown option (or missing value)", a);
        } else {
            sizes.push_back(parse_size(a));
        }
    }
    if (sizes.empty()) sizes.push_back(parse_size(DEFAULT_SIZE));
    if (wanted.empty()) wanted.push_back("all");
    std::vector<int> run;  // table order, each kernel once
    for (int j = 0; j < N_KERNELS; ++j) {
        bool pick = false;
        for (const std::string &w : wanted)
            pick |= w == KERNELS[j].name || (w == "all" && published(KERNELS[j], 0)) ||
                    (w == "tune" && !published(KERNELS[j], 0));
        if (pick) run.push_back(j);
    }
    for (const std::string &w : wanted) {
        bool known = w == "all" || w == "tune";
        for (int j = 0; j < N_KERNELS; ++j) known |= w == KERNELS[j].name;
        if (!known) usage_error("no kernel named", w.c_str());
    }
    if (list) {
        for (int j : run) printf("%s\n", KERNELS[j].name);
        return 0;
    }
    std::vector<int> runnable;  // a row the lesson cannot run here is said once and left out
    for (int j : run) {
        const char *why = unavailable(KERNELS[j]);
        if (why) printf("# %s left out: %s\n", KERNELS[j].name, why);
        else runnable.push_back(j);
    }
    run.swap(runnable);
    bool all_ok = true;
    printf("%-20s %-28s %10s %10s %9s\n", "size", "kernel", "ms", "GB/s", "TFLOP/s");
    for (const std::vector<long> &dims : sizes) {
        Problem *p = setup(dims.data());
        char label[64];
        if (SIZE_PARTS == 3) snprintf(label, sizeof label, "%ldx%ldx%ld", dims[0], dims[1], dims[2]);
        else snprintf(label, sizeof label, "%ld", dims[0]);
        for (int j : run) {
            const Kernel &k = KERNELS[j];
            Check c = check(p, k);  // a wrong kernel is reported, never timed
            Work w = work(p, k);
            Samples t{{}, 1};
            if (c.ok) {
                t = time_events([&] { launch(p, k); }, repeats, budget_s);
                Check after = check(p, k);  // again: a race shows as a result that moves
                if (!after.ok || after.value > c.value) c = after;
            }
            all_ok &= c.ok;
            if (c.ok) {
                double s = median(t.s);
                printf("%-20s %-28s %10.4f %10.1f %9.2f\n", label, k.name, s * 1e3,
                       w.bytes / s / 1e9, w.flops / s / 1e12);
            } else {
                printf("%-20s %-28s FAILED: %s = %g (bound %g)\n", label, k.name, c.metric,
                       c.value, c.bound);
            }
            if (bench_lines) bench_line(bench_name(k), t, c, w, dims.data(), bench_extra(p, k));
            fflush(stdout);
        }
        teardown(p);
    }
    printf(all_ok ? "OK: every kernel passed its check\n"
                  : "FAILED: at least one kernel did not pass its check\n");
    return all_ok ? 0 : 1;
}

}  // namespace bench

int main(int argc, char **argv) { return bench::main(argc, argv); }
