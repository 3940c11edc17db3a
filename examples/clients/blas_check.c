/* CLBlast against host answers (issue 22): SGEMM of square and odd shapes (row-major, with
 * transposes and alpha/beta), SAXPY and SDOT, on the first device of the first platform the
 * ICD loader shows (choose it with OCL_ICD_VENDORS). Each routine runs twice: the first call
 * includes CLBlast's compilation of its kernels (through clBuildProgram), the second is the
 * routine alone. Prints both times and the largest error against double-precision host
 * results relative to the result's magnitude; exits 1 if any error exceeds 1e-4.
 * Build: cc -O2 -o blas_check blas_check.c -lclblast -lOpenCL -lm */
#define CL_TARGET_OPENCL_VERSION 120
#include <clblast_c.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "check.h"

static cl_context ctx;
static cl_command_queue q;

static cl_mem upload(const float *v, size_t n) {
    cl_int err;
    cl_mem m = clCreateBuffer(ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, n * sizeof(float),
                              (void *)v, &err);
    CHECK(err);
    return m;
}

static float *random_floats(size_t n, unsigned seed) {
    float *v = malloc(n * sizeof(float));
    srand(seed);
    for (size_t i = 0; i < n; i++) v[i] = (float)rand() / RAND_MAX - 0.5f;
    return v;
}

static int report(const char *what, double first, double second, double err) {
    int ok = err <= 1e-4;
    printf("%-34s first %8.3f s  again %8.4f s  max rel error %.2e %s\n", what, first, second,
           err, ok ? "ok" : "WRONG");
    return !ok;
}

/* C = alpha * op(A) * op(B) + beta * C, row-major, m x n result, inner size k. */
static int gemm(size_t m, size_t n, size_t k, int ta, int tb) {
    float alpha = 1.5f, beta = -0.5f;
    size_t lda = ta ? m : k, ldb = tb ? k : n, ldc = n;
    float *a = random_floats(m * k, 1), *b = random_floats(k * n, 2), *c = random_floats(m * n, 3);
    float *out = malloc(m * n * sizeof(float));
    double t[2];
    for (int r = 0; r < 2; r++) {
        cl_mem ma = upload(a, m * k), mb = upload(b, k * n), mc = upload(c, m * n);
        double t0 = now();
        CHECK(CLBlastSgemm(CLBlastLayoutRowMajor, ta ? CLBlastTransposeYes : CLBlastTransposeNo,
                           tb ? CLBlastTransposeYes : CLBlastTransposeNo, m, n, k, alpha, ma, 0,
                           lda, mb, 0, ldb, beta, mc, 0, ldc, &q, NULL));
        CHECK(clFinish(q));
        t[r] = now() - t0;
        CHECK(clEnqueueReadBuffer(q, mc, CL_TRUE, 0, m * n * sizeof(float), out, 0, NULL, NULL));
        clReleaseMemObject(ma);
        clReleaseMemObject(mb);
        clReleaseMemObject(mc);
    }
    double maxerr = 0, maxmag = 1e-30;
    for (size_t i = 0; i < m; i++)
        for (size_t j = 0; j < n; j++) {
            double s = 0;
            for (size_t p = 0; p < k; p++)
                s += (double)(ta ? a[p * lda + i] : a[i * lda + p]) *
                     (double)(tb ? b[j * ldb + p] : b[p * ldb + j]);
            double want = alpha * s + beta * c[i * ldc + j];
            double e = fabs(out[i * ldc + j] - want);
            if (e > maxerr) maxerr = e;
            if (fabs(want) > maxmag) maxmag = fabs(want);
        }
    char what[96];
    snprintf(what, sizeof what, "SGEMM %zux%zux%zu%s%s", m, n, k, ta ? " A^T" : "", tb ? " B^T" : "");
    free(a), free(b), free(c), free(out);
    return report(what, t[0], t[1], maxerr / maxmag);
}

static int axpy_dot(size_t n) {
    float alpha = 0.75f;
    float *x = random_floats(n, 4), *y = random_floats(n, 5), *out = malloc(n * sizeof(float));
    double t[2], td[2];
    float dot = 0;
    for (int r = 0; r < 2; r++) {
        cl_mem mx = upload(x, n), my = upload(y, n), md = upload(&dot, 1);
        double t0 = now();
        CHECK(CLBlastSaxpy(n, alpha, mx, 0, 1, my, 0, 1, &q, NULL));
        CHECK(clFinish(q));
        t[r] = now() - t0;
        t0 = now();
        CHECK(CLBlastSdot(n, md, 0, mx, 0, 1, my, 0, 1, &q, NULL));
        CHECK(clFinish(q));
        td[r] = now() - t0;
        CHECK(clEnqueueReadBuffer(q, my, CL_TRUE, 0, n * sizeof(float), out, 0, NULL, NULL));
        CHECK(clEnqueueReadBuffer(q, md, CL_TRUE, 0, sizeof(float), &dot, 0, NULL, NULL));
        clReleaseMemObject(mx), clReleaseMemObject(my), clReleaseMemObject(md);
    }
    double maxerr = 0, maxmag = 1e-30, want_dot = 0;
    for (size_t i = 0; i < n; i++) {
        double want = alpha * (double)x[i] + y[i];
        if (fabs(out[i] - want) > maxerr) maxerr = fabs(out[i] - want);
        if (fabs(want) > maxmag) maxmag = fabs(want);
        want_dot += (double)x[i] * out[i];
    }
    char what[64];
    snprintf(what, sizeof what, "SAXPY n=%zu", n);
    int bad = report(what, t[0], t[1], maxerr / maxmag);
    snprintf(what, sizeof what, "SDOT n=%zu (x . (ax+y))", n);
    double scale = 0;
    for (size_t i = 0; i < n; i++) scale += fabs((double)x[i] * out[i]);
    bad += report(what, td[0], td[1], fabs(dot - want_dot) / scale);
    free(x), free(y), free(out);
    return bad;
}

int main(void) {
    double t_start = now();
    cl_int err;
    cl_device_id device = first_device();
    ctx = clCreateContext(NULL, 1, &device, NULL, NULL, &err);
    CHECK(err);
    q = clCreateCommandQueue(ctx, device, 0, &err);
    CHECK(err);
    int bad = 0, total = 0;
    bad += gemm(64, 64, 64, 0, 0), total++;
    bad += gemm(256, 256, 256, 0, 0), total++;
    bad += gemm(200, 130, 77, 1, 0), total++;
    bad += gemm(129, 257, 65, 0, 1), total++;
    bad += gemm(512, 512, 512, 1, 1), total++;
    bad += axpy_dot(1 << 20), total += 2;
    clReleaseCommandQueue(q);
    clReleaseContext(ctx);
    printf("%d of %d routines right; whole run %.2f s\n", total - bad, total, now() - t_start);
    return bad ? 1 : 0;
}
