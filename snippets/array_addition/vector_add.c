// Array addition on the CPU: the reference the GPU versions are checked against.
// Build: gcc -O2 -Wall -o build/vector_add snippets/array_addition/vector_add.c
// Run:   ./build/vector_add [N]      (default N = 6: A = 1..6, B = 7..12)
#include "vector_add_common.h"

// --8<-- [start:add]
static void vector_add(const float *a, const float *b, float *c, long n) {
    for (long i = 0; i < n; i++) {
        c[i] = a[i] + b[i];
    }
}
// --8<-- [end:add]

int main(int argc, char **argv) {
    long n = parse_n(argc, argv);
    float *a = malloc(n * sizeof(float));
    float *b = malloc(n * sizeof(float));
    float *c = malloc(n * sizeof(float));
    if (!a || !b || !c) {
        fprintf(stderr, "error: cannot allocate 3 arrays of %ld floats\n", n);
        return 1;
    }
    fill_inputs(a, b, n);
    vector_add(a, b, c, n);
    int status = check_and_print(c, n);
    free(a);
    free(b);
    free(c);
    return status;
}
