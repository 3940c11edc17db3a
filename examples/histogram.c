/* A 256-bin histogram of random bytes: each work-group counts its share in __local memory with
 * atomics, then merges into the global bins with atomic_add. Checked against a host histogram. */
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include <stdio.h>
#include <stdlib.h>

#define CHECK(x)                                                                   \
    do {                                                                           \
        cl_int err_ = (x);                                                         \
        if (err_ != CL_SUCCESS) {                                                  \
            fprintf(stderr, "%s:%d: %s failed: %d\n", __FILE__, __LINE__, #x, err_); \
            exit(1);                                                               \
        }                                                                          \
    } while (0)

#define BINS 256

static const char *source =
    "__kernel void histogram(__global const uchar *data, uint n, __global uint *bins,\n"
    "                        __local uint *local_bins) {\n"
    "    uint lid = get_local_id(0), lsize = get_local_size(0);\n"
    "    for (uint b = lid; b < 256; b += lsize)\n"
    "        local_bins[b] = 0;\n"
    "    barrier(CLK_LOCAL_MEM_FENCE);\n"
    "    for (size_t i = get_global_id(0); i < n; i += get_global_size(0)) {\n"
    "        uchar v = data[i];\n"
    "        if (v == 0)\n"
    "            atomic_inc(&local_bins[0]);\n"
    "        else\n"
    "            atomic_add(&local_bins[v], 1u);\n"
    "    }\n"
    "    barrier(CLK_LOCAL_MEM_FENCE);\n"
    "    for (uint b = lid; b < 256; b += lsize)\n"
    "        if (local_bins[b] != 0)\n"
    "            atomic_add(&bins[b], local_bins[b]);\n"
    "}\n";

int main(void) {
    enum { N = 10000019, GROUPS = 64, LOCAL = 128 };
    cl_platform_id platform;
    cl_device_id device;
    cl_int err;
    CHECK(clGetPlatformIDs(1, &platform, NULL));
    CHECK(clGetDeviceIDs(platform, CL_DEVICE_TYPE_DEFAULT, 1, &device, NULL));
    cl_context ctx = clCreateContext(NULL, 1, &device, NULL, NULL, &err);
    CHECK(err);
    cl_command_queue q = clCreateCommandQueueWithProperties(ctx, device, NULL, &err);
    CHECK(err);
    cl_program prog = clCreateProgramWithSource(ctx, 1, &source, NULL, &err);
    CHECK(err);
    if (clBuildProgram(prog, 1, &device, "", NULL, NULL) != CL_SUCCESS) {
        char log[8192];
        clGetProgramBuildInfo(prog, device, CL_PROGRAM_BUILD_LOG, sizeof log, log, NULL);
        fprintf(stderr, "build failed:\n%s\n", log);
        return 1;
    }
    cl_kernel k = clCreateKernel(prog, "histogram", &err);
    CHECK(err);

    unsigned char *data = malloc(N);
    cl_uint host[BINS] = {0}, bins[BINS] = {0};
    srand(7);
    for (int i = 0; i < N; i++) {
        /* Skewed towards small values so that some bins are hot. */
        int r = rand();
        data[i] = (unsigned char)((r & 1) ? (r >> 1) & 0xff : (r >> 1) & 0x0f);
        host[data[i]]++;
    }
    cl_mem ddata = clCreateBuffer(ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, N, data, &err);
    CHECK(err);
    cl_mem dbins = clCreateBuffer(ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, sizeof bins, bins, &err);
    CHECK(err);
    cl_uint n = N;
    CHECK(clSetKernelArg(k, 0, sizeof ddata, &ddata));
    CHECK(clSetKernelArg(k, 1, sizeof n, &n));
    CHECK(clSetKernelArg(k, 2, sizeof dbins, &dbins));
    CHECK(clSetKernelArg(k, 3, BINS * sizeof(cl_uint), NULL));
    size_t global = GROUPS * LOCAL, local = LOCAL;
    CHECK(clEnqueueNDRangeKernel(q, k, 1, NULL, &global, &local, 0, NULL, NULL));
    CHECK(clEnqueueReadBuffer(q, dbins, CL_TRUE, 0, sizeof bins, bins, 0, NULL, NULL));

    int wrong = 0;
    for (int b = 0; b < BINS; b++)
        if (bins[b] != host[b]) {
            if (wrong++ < 5) fprintf(stderr, "bin %d: %u, expected %u\n", b, bins[b], host[b]);
        }
    printf("histogram: %d values, %d bins, %d wrong: %s\n", N, BINS, wrong, wrong ? "FAILED" : "PASSED");
    clReleaseMemObject(ddata);
    clReleaseMemObject(dbins);
    clReleaseKernel(k);
    clReleaseProgram(prog);
    clReleaseCommandQueue(q);
    clReleaseContext(ctx);
    free(data);
    return wrong != 0;
}
