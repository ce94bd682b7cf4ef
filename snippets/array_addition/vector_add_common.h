// Shared by vector_add.c and vector_add.cu: argument parsing, inputs, and the host-side check.
#ifndef VECTOR_ADD_COMMON_H
#define VECTOR_ADD_COMMON_H

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_N (1L << 31)

// N from the command line: default 6 (the original article's example), 1 <= N <= 2^31.
static long parse_n(int argc, char **argv) {
    if (argc == 2 && (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0)) {
        printf("usage: %s [N]\nAdds two arrays of N floats (A[i] = i + 1, B[i] = i + 7) "
               "and checks every element. Default N = 6.\n", argv[0]);
        exit(0);
    }
    if (argc > 2) {
        fprintf(stderr, "error: expected at most one argument, N (try --help)\n");
        exit(2);
    }
    if (argc == 1) return 6;
    char *end;
    errno = 0;
    long n = strtol(argv[1], &end, 10);
    if (errno != 0 || end == argv[1] || *end != '\0' || n < 1 || n > MAX_N) {
        fprintf(stderr, "error: N must be a whole number from 1 to %ld, got '%s'\n", MAX_N, argv[1]);
        exit(2);
    }
    return n;
}

static void fill_inputs(float *a, float *b, long n) {
    for (long i = 0; i < n; i++) {
        a[i] = (float)(i + 1);
        b[i] = (float)(i + 7);
    }
}

// Recompute every element on the host; print C (all of it when short); return the exit status.
static int check_and_print(const float *c, long n) {
    long bad = 0, first_bad = -1;
    for (long i = 0; i < n; i++) {
        float expected = (float)(i + 1) + (float)(i + 7);
        if (c[i] != expected) {
            if (first_bad < 0) first_bad = i;
            bad++;
        }
    }
    printf("C = A + B:");
    for (long i = 0; i < n; i++) {
        if (n > 10 && i == 3) {
            printf(" ...");
            i = n - 4;
            continue;
        }
        printf(" %.0f", c[i]);
    }
    printf("\n");
    if (bad) {
        fprintf(stderr, "error: %ld of %ld elements are wrong (first at index %ld: %g)\n",
                bad, n, first_bad, c[first_bad]);
        return 1;
    }
    printf("OK: all %ld elements match\n", n);
    return 0;
}

#endif
