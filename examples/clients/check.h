/* What fft_check.c and blas_check.c share: a monotonic clock and a call check. */
#ifndef CLIENTS_CHECK_H
#define CLIENTS_CHECK_H
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

/* Seconds on the monotonic clock. */
static inline double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

/* Exits with status 2, naming the call, when an OpenCL/clFFT/CLBlast call returns non-zero. */
#define CHECK(x)                                                                 \
    do {                                                                         \
        int e_ = (int)(x);                                                       \
        if (e_ != 0) {                                                           \
            fprintf(stderr, "%s:%d: %s gave %d\n", __FILE__, __LINE__, #x, e_); \
            exit(2);                                                             \
        }                                                                        \
    } while (0)
#endif
