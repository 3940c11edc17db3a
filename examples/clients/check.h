/* What fft_check.c and blas_check.c share: a monotonic clock, a call check and the device. */
#ifndef CLIENTS_CHECK_H
#define CLIENTS_CHECK_H
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <CL/cl.h>

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

/* The first platform's first device; prints both names. Exits as CHECK on an error. */
static inline cl_device_id first_device(void) {
    cl_platform_id platform;
    cl_device_id device;
    CHECK(clGetPlatformIDs(1, &platform, NULL));
    CHECK(clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &device, NULL));
    char name[256] = {0}, pname[256] = {0};
    clGetDeviceInfo(device, CL_DEVICE_NAME, sizeof name - 1, name, NULL);
    clGetPlatformInfo(platform, CL_PLATFORM_NAME, sizeof pname - 1, pname, NULL);
    printf("platform %s, device %s\n", pname, name);
    return device;
}
#endif
