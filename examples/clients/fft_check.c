/* clFFT against a host DFT (issue 22): complex single-precision forward transforms of several
 * lengths (powers of 2, 3, 5, 7 and mixed radices), in place, one batch each, on the first
 * device of the first platform the ICD loader shows (choose it with OCL_ICD_VENDORS).
 * Prints, per length, the time clfftBakePlan took (clFFT builds its OpenCL program there),
 * the transform's time and the largest error against an O(n^2) DFT in double precision,
 * relative to the largest output magnitude; exits 1 if any error exceeds 1e-4.
 * Lengths may be given as arguments instead of the default list.
 * Build: cc -O2 -o fft_check fft_check.c -lclFFT -lOpenCL -lm */
#define CL_TARGET_OPENCL_VERSION 120
#include <clFFT.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "check.h"

int main(int argc, char **argv) {
    size_t lengths[64] = {16, 256, 1000, 2187, 3125, 4096, 2401, 6000};
    int count = 8;
    if (argc > 1) {
        count = 0;
        for (int i = 1; i < argc && count < 64; i++) lengths[count++] = strtoul(argv[i], NULL, 10);
    }
    double t_start = now();
    cl_int err;
    cl_device_id device = first_device();
    cl_context ctx = clCreateContext(NULL, 1, &device, NULL, NULL, &err);
    CHECK(err);
    cl_command_queue q = clCreateCommandQueue(ctx, device, 0, &err);
    CHECK(err);
    clfftSetupData setup;
    CHECK(clfftInitSetupData(&setup));
    CHECK(clfftSetup(&setup));
    int bad = 0;
    double bake_total = 0;
    for (int li = 0; li < count; li++) {
        size_t n = lengths[li];
        float *x = malloc(2 * n * sizeof(float)), *y = malloc(2 * n * sizeof(float));
        srand(1234 + (unsigned)n);
        for (size_t i = 0; i < 2 * n; i++) x[i] = (float)rand() / RAND_MAX - 0.5f;
        cl_mem buf = clCreateBuffer(ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR,
                                    2 * n * sizeof(float), x, &err);
        CHECK(err);
        clfftPlanHandle plan;
        size_t dims[1] = {n};
        CHECK(clfftCreateDefaultPlan(&plan, ctx, CLFFT_1D, dims));
        CHECK(clfftSetPlanPrecision(plan, CLFFT_SINGLE));
        CHECK(clfftSetLayout(plan, CLFFT_COMPLEX_INTERLEAVED, CLFFT_COMPLEX_INTERLEAVED));
        CHECK(clfftSetResultLocation(plan, CLFFT_INPLACE));
        double t0 = now();
        CHECK(clfftBakePlan(plan, 1, &q, NULL, NULL));
        double bake = now() - t0;
        bake_total += bake;
        t0 = now();
        CHECK(clfftEnqueueTransform(plan, CLFFT_FORWARD, 1, &q, 0, NULL, NULL, &buf, NULL, NULL));
        CHECK(clFinish(q));
        double run = now() - t0;
        CHECK(clEnqueueReadBuffer(q, buf, CL_TRUE, 0, 2 * n * sizeof(float), y, 0, NULL, NULL));
        double maxerr = 0, maxmag = 0;
        for (size_t k = 0; k < n; k++) {
            double re = 0, im = 0;
            for (size_t j = 0; j < n; j++) {
                double a = -2.0 * M_PI * (double)((j * k) % n) / (double)n;
                double c = cos(a), s = sin(a);
                re += x[2 * j] * c - x[2 * j + 1] * s;
                im += x[2 * j] * s + x[2 * j + 1] * c;
            }
            double dr = y[2 * k] - re, di = y[2 * k + 1] - im;
            double e = sqrt(dr * dr + di * di), m = sqrt(re * re + im * im);
            if (e > maxerr) maxerr = e;
            if (m > maxmag) maxmag = m;
        }
        double rel = maxerr / maxmag;
        int ok = rel <= 1e-4;
        bad += !ok;
        printf("n=%5zu bake %8.3f s  transform %8.4f s  max rel error %.2e %s\n", n, bake, run,
               rel, ok ? "ok" : "WRONG");
        CHECK(clfftDestroyPlan(&plan));
        clReleaseMemObject(buf);
        free(x);
        free(y);
    }
    clfftTeardown();
    clReleaseCommandQueue(q);
    clReleaseContext(ctx);
    printf("%d of %d lengths right; plans baked in %.2f s; whole run %.2f s\n", count - bad, count,
           bake_total, now() - t_start);
    return bad ? 1 : 0;
}
