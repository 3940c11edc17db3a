/* Benchmark (not a test): host cost of enqueueing 1,000 small kernels one by one versus
 * enqueueing them recorded once in a cl_khr_command_buffer (0.9.8), and the time to completion
 * of both. Every run's output is checked before a figure is printed.
 *
 * usage: cmdbuf_bench [platform-name-substring|all] [kernels] [repeats]   (default: all 1000 5)
 * With `all`, every platform the loader offers is measured in this one run, and vkcl's figures
 * are compared with each other platform's.
 * Figures are medians over the repeats; microseconds of host CLOCK_MONOTONIC time. */
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include <CL/cl_ext.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define CHECK(x)                                                                   \
    do {                                                                           \
        cl_int err_ = (x);                                                         \
        if (err_ != CL_SUCCESS) {                                                  \
            fprintf(stderr, "%s:%d: %s failed: %d\n", __FILE__, __LINE__, #x, err_); \
            exit(1);                                                               \
        }                                                                          \
    } while (0)

/* cl_khr_command_buffer 0.9.8 entry points (Debian bookworm's header has older signatures). */
typedef cl_command_buffer_khr(CL_API_CALL *create_command_buffer_fn)(
    cl_uint num_queues, const cl_command_queue *queues, const cl_command_buffer_properties_khr *properties,
    cl_int *errcode_ret);
typedef cl_int(CL_API_CALL *command_buffer_fn)(cl_command_buffer_khr command_buffer);
typedef cl_int(CL_API_CALL *enqueue_command_buffer_fn)(cl_uint num_queues, cl_command_queue *queues,
                                                      cl_command_buffer_khr command_buffer,
                                                      cl_uint num_events_in_wait_list,
                                                      const cl_event *event_wait_list, cl_event *event);
typedef cl_int(CL_API_CALL *command_ndrange_kernel_fn)(
    cl_command_buffer_khr command_buffer, cl_command_queue command_queue, const cl_properties *properties,
    cl_kernel kernel, cl_uint work_dim, const size_t *global_work_offset, const size_t *global_work_size,
    const size_t *local_work_size, cl_uint num_sync_points_in_wait_list,
    const cl_sync_point_khr *sync_point_wait_list, cl_sync_point_khr *sync_point,
    cl_mutable_command_khr *mutable_handle);

static double now_us(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n) {
    qsort(v, n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

enum { ITEMS = 64 };

static const char *source = "__kernel void inc(__global int *a) { a[get_global_id(0)] += 1; }\n";

/* Zeroes the buffer, runs `run`, checks every element equals `kernels`. */
static void check(cl_command_queue q, cl_mem m, int kernels, const char *what) {
    int out[ITEMS];
    CHECK(clEnqueueReadBuffer(q, m, CL_TRUE, 0, sizeof out, out, 0, NULL, NULL));
    for (int i = 0; i < ITEMS; i++)
        if (out[i] != kernels) {
            fprintf(stderr, "cmdbuf_bench: %s gave a[%d] = %d, expected %d: no figure printed\n", what, i, out[i],
                    kernels);
            exit(1);
        }
}

static void zero(cl_command_queue q, cl_mem m) {
    int z = 0;
    CHECK(clEnqueueFillBuffer(q, m, &z, sizeof z, 0, ITEMS * sizeof z, 0, NULL, NULL));
    CHECK(clFinish(q));
}

/* Figures of one platform: host us/kernel and completion us, one by one and command buffer
 * (negative where not offered). */
struct figures {
    char name[256];
    double one_host, one_total, cb_host, cb_total;
};

static struct figures run(cl_platform_id platform, int kernels, int repeats);

int main(int argc, char **argv) {
    const char *want = argc > 1 ? argv[1] : "all";
    int kernels = argc > 2 ? atoi(argv[2]) : 1000;
    int repeats = argc > 3 ? atoi(argv[3]) : 5;
    cl_platform_id platforms[16];
    cl_uint np = 0;
    CHECK(clGetPlatformIDs(16, platforms, &np));
    struct figures f[16];
    int nf = 0, vk = -1;
    for (cl_uint i = 0; i < np; i++) {
        char pname[256] = "";
        CHECK(clGetPlatformInfo(platforms[i], CL_PLATFORM_NAME, sizeof pname, pname, NULL));
        if (strcmp(want, "all") && !strstr(pname, want)) continue;
        f[nf] = run(platforms[i], kernels, repeats);
        if (!strcmp(f[nf].name, "vkcl")) vk = nf;
        nf++;
    }
    if (nf == 0) {
        fprintf(stderr, "cmdbuf_bench: no platform named like '%s'\n", want);
        return 2;
    }
    if (vk >= 0)
        for (int i = 0; i < nf; i++) {
            if (i == vk) continue;
            printf("vkcl / %s: one-by-one host enqueue %.2fx, one-by-one completion %.2fx", f[i].name,
                   f[vk].one_host / f[i].one_host, f[vk].one_total / f[i].one_total);
            if (f[vk].cb_host > 0) printf("; vkcl command buffer completion / %s one-by-one completion %.2fx",
                                          f[i].name, f[vk].cb_total / f[i].one_total);
            if (f[i].cb_host > 0) printf("; command buffer completion %.2fx", f[vk].cb_total / f[i].cb_total);
            printf("\n");
        }
    return 0;
}

static struct figures run(cl_platform_id platform, int kernels, int repeats) {
    struct figures fig = { "", -1, -1, -1, -1 };
    char pname[256] = "";
    CHECK(clGetPlatformInfo(platform, CL_PLATFORM_NAME, sizeof pname, pname, NULL));
    snprintf(fig.name, sizeof fig.name, "%s", pname);
    cl_device_id device;
    if (clGetDeviceIDs(platform, CL_DEVICE_TYPE_DEFAULT, 1, &device, NULL) != CL_SUCCESS) {
        printf("platform %s: no device, skipped\n", pname);
        return fig;
    }
    char dname[256], ext[16384] = "";
    CHECK(clGetDeviceInfo(device, CL_DEVICE_NAME, sizeof dname, dname, NULL));
    clGetDeviceInfo(device, CL_DEVICE_EXTENSIONS, sizeof ext, ext, NULL);
    cl_int err;
    cl_context ctx = clCreateContext(NULL, 1, &device, NULL, NULL, &err);
    CHECK(err);
    cl_command_queue q = clCreateCommandQueueWithProperties(ctx, device, NULL, &err);
    CHECK(err);
    cl_program prog = clCreateProgramWithSource(ctx, 1, &source, NULL, &err);
    CHECK(err);
    CHECK(clBuildProgram(prog, 1, &device, "", NULL, NULL));
    cl_kernel k = clCreateKernel(prog, "inc", &err);
    CHECK(err);
    cl_mem m = clCreateBuffer(ctx, CL_MEM_READ_WRITE, ITEMS * sizeof(int), NULL, &err);
    CHECK(err);
    CHECK(clSetKernelArg(k, 0, sizeof m, &m));
    size_t global = ITEMS;
    printf("platform %s, device %s: %d kernels of %d work-items, median of %d runs\n", pname, dname, kernels, ITEMS,
           repeats);

    double *host = calloc(repeats, sizeof(double)), *total = calloc(repeats, sizeof(double));
    /* Warm-up (pipeline creation etc.). */
    zero(q, m);
    CHECK(clEnqueueNDRangeKernel(q, k, 1, NULL, &global, NULL, 0, NULL, NULL));
    CHECK(clFinish(q));
    for (int r = 0; r < repeats; r++) {
        zero(q, m);
        double t0 = now_us();
        for (int i = 0; i < kernels; i++) CHECK(clEnqueueNDRangeKernel(q, k, 1, NULL, &global, NULL, 0, NULL, NULL));
        double t1 = now_us();
        CHECK(clFinish(q));
        double t2 = now_us();
        check(q, m, kernels, "one by one");
        host[r] = (t1 - t0) / kernels;
        total[r] = t2 - t0;
    }
    double one_host = median(host, repeats), one_total = median(total, repeats);
    printf("one by one:     host %9.3f us/kernel to enqueue, %10.1f us to completion (%.3f us/kernel)\n", one_host,
           one_total, one_total / kernels);
    fig.one_host = one_host;
    fig.one_total = one_total;

    if (!strstr(ext, "cl_khr_command_buffer")) {
        printf("command buffer: not offered by this platform (no cl_khr_command_buffer)\n");
        return fig;
    }
    create_command_buffer_fn create =
        (create_command_buffer_fn)clGetExtensionFunctionAddressForPlatform(platform, "clCreateCommandBufferKHR");
    command_buffer_fn finalize =
        (command_buffer_fn)clGetExtensionFunctionAddressForPlatform(platform, "clFinalizeCommandBufferKHR");
    command_buffer_fn release =
        (command_buffer_fn)clGetExtensionFunctionAddressForPlatform(platform, "clReleaseCommandBufferKHR");
    enqueue_command_buffer_fn enqueue =
        (enqueue_command_buffer_fn)clGetExtensionFunctionAddressForPlatform(platform, "clEnqueueCommandBufferKHR");
    command_ndrange_kernel_fn record =
        (command_ndrange_kernel_fn)clGetExtensionFunctionAddressForPlatform(platform, "clCommandNDRangeKernelKHR");
    if (!create || !finalize || !release || !enqueue || !record) {
        printf("command buffer: entry points missing\n");
        return fig;
    }
    double t_rec = now_us();
    cl_command_buffer_khr cb = create(1, &q, NULL, &err);
    CHECK(err);
    for (int i = 0; i < kernels; i++) CHECK(record(cb, NULL, NULL, k, 1, NULL, &global, NULL, 0, NULL, NULL, NULL));
    CHECK(finalize(cb));
    double t_fin = now_us();
    zero(q, m);
    CHECK(enqueue(1, &q, cb, 0, NULL, NULL)); /* warm-up */
    CHECK(clFinish(q));
    for (int r = 0; r < repeats; r++) {
        zero(q, m);
        double t0 = now_us();
        CHECK(enqueue(1, &q, cb, 0, NULL, NULL));
        double t1 = now_us();
        CHECK(clFinish(q));
        double t2 = now_us();
        check(q, m, kernels, "command buffer");
        host[r] = (t1 - t0) / kernels;
        total[r] = t2 - t0;
    }
    double cb_host = median(host, repeats), cb_total = median(total, repeats);
    printf("command buffer: host %9.3f us/kernel to enqueue, %10.1f us to completion (%.3f us/kernel); "
           "recording + finalize once: %.1f us\n",
           cb_host, cb_total, cb_total / kernels, t_fin - t_rec);
    printf("ratio one-by-one / command buffer: host enqueue %.1fx, completion %.2fx\n", one_host / cb_host,
           one_total / cb_total);
    CHECK(release(cb));
    fig.cb_host = cb_host;
    fig.cb_total = cb_total;
    clReleaseMemObject(m);
    clReleaseKernel(k);
    clReleaseProgram(prog);
    clReleaseCommandQueue(q);
    clReleaseContext(ctx);
    return fig;
}
