/* A program from SPIR-V (clCreateProgramWithIL) through the system OpenCL loader:
 * out[i] = i * m for 2^20 work-items, checked on the host. The module is il_scale.spvasm,
 * assembled by the Makefile (spirv-as) next to the binary. Usage: il_scale [module.spv]
 * (default: il_scale.spv next to the executable). Through PoCL-Remote it needs a server
 * device that lists cl_khr_il_program (docs/remote.md). */
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK(x)                                                                   \
    do {                                                                           \
        cl_int err_ = (x);                                                         \
        if (err_ != CL_SUCCESS) {                                                  \
            fprintf(stderr, "%s:%d: %s failed: %d\n", __FILE__, __LINE__, #x, err_); \
            exit(1);                                                               \
        }                                                                          \
    } while (0)

static unsigned char *read_file(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) {
        perror(path);
        exit(1);
    }
    fseek(f, 0, SEEK_END);
    *len = (size_t)ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *p = malloc(*len);
    if (fread(p, 1, *len, f) != *len) {
        fprintf(stderr, "%s: short read\n", path);
        exit(1);
    }
    fclose(f);
    return p;
}

int main(int argc, char **argv) {
    enum { N = 1 << 20 };
    const cl_uint m = 2654435761u;
    char path[4096];
    if (argc > 1) {
        snprintf(path, sizeof path, "%s", argv[1]);
    } else {
        snprintf(path, sizeof path, "%s", argv[0]);
        char *slash = strrchr(path, '/');
        snprintf(slash ? slash + 1 : path, sizeof path - (slash ? (size_t)(slash + 1 - path) : 0),
                 "il_scale.spv");
    }
    size_t len;
    unsigned char *il = read_file(path, &len);
    cl_platform_id platform;
    cl_device_id device;
    cl_int err;
    char name[256], ils[256];
    CHECK(clGetPlatformIDs(1, &platform, NULL));
    CHECK(clGetDeviceIDs(platform, CL_DEVICE_TYPE_DEFAULT, 1, &device, NULL));
    CHECK(clGetDeviceInfo(device, CL_DEVICE_NAME, sizeof name, name, NULL));
    CHECK(clGetDeviceInfo(device, CL_DEVICE_IL_VERSION, sizeof ils, ils, NULL));
    cl_context ctx = clCreateContext(NULL, 1, &device, NULL, NULL, &err);
    CHECK(err);
    cl_command_queue q = clCreateCommandQueueWithProperties(ctx, device, NULL, &err);
    CHECK(err);
    cl_program prog = clCreateProgramWithIL(ctx, il, len, &err);
    CHECK(err);
    err = clBuildProgram(prog, 1, &device, "", NULL, NULL);
    if (err != CL_SUCCESS) {
        char log[8192];
        clGetProgramBuildInfo(prog, device, CL_PROGRAM_BUILD_LOG, sizeof log, log, NULL);
        fprintf(stderr, "build failed (%d):\n%s\n", err, log);
        return 1;
    }
    cl_kernel k = clCreateKernel(prog, "scale", &err);
    CHECK(err);
    cl_mem out = clCreateBuffer(ctx, CL_MEM_WRITE_ONLY, N * sizeof(cl_uint), NULL, &err);
    CHECK(err);
    CHECK(clSetKernelArg(k, 0, sizeof out, &out));
    CHECK(clSetKernelArg(k, 1, sizeof m, &m));
    size_t global = N;
    CHECK(clEnqueueNDRangeKernel(q, k, 1, NULL, &global, NULL, 0, NULL, NULL));
    cl_uint *host = malloc(N * sizeof(cl_uint));
    CHECK(clEnqueueReadBuffer(q, out, CL_TRUE, 0, N * sizeof(cl_uint), host, 0, NULL, NULL));
    size_t wrong = 0;
    for (size_t i = 0; i < N; i++)
        wrong += host[i] != (cl_uint)i * m;
    printf("il_scale on %s (IL: %s): %d work-items, %zu wrong: %s\n", name, ils, N, wrong,
           wrong ? "FAILED" : "PASSED");
    clReleaseMemObject(out);
    clReleaseKernel(k);
    clReleaseProgram(prog);
    clReleaseCommandQueue(q);
    clReleaseContext(ctx);
    free(host);
    free(il);
    return wrong != 0;
}
