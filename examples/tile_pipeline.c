/* Tile pipeline with cl_khr_command_buffer (revision 0.9.8): each frame adds two arrays tile by
 * tile through small staging buffers (copy the tiles of A and B in, a kernel adds them, copy the
 * sum out), all recorded once into a command buffer chained by sync points, finalized, then
 * replayed for every frame with fresh random input. Every element is checked on the host.
 *
 * The system CL/cl_ext.h may declare the command-buffer functions with older signatures and the
 * loader exports none of them: the 0.9.8 signatures (with the `properties` parameter) are
 * declared here and each function is looked up with clGetExtensionFunctionAddressForPlatform. */
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include <CL/cl_ext.h>
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

/* cl_khr_command_buffer 0.9.8 entry points. */
typedef cl_properties cmdbuf_command_properties;
typedef cl_command_buffer_khr(CL_API_CALL *create_command_buffer_fn)(
    cl_uint num_queues, const cl_command_queue *queues, const cl_command_buffer_properties_khr *properties,
    cl_int *errcode_ret);
typedef cl_int(CL_API_CALL *command_buffer_fn)(cl_command_buffer_khr command_buffer);
typedef cl_int(CL_API_CALL *enqueue_command_buffer_fn)(cl_uint num_queues, cl_command_queue *queues,
                                                      cl_command_buffer_khr command_buffer,
                                                      cl_uint num_events_in_wait_list,
                                                      const cl_event *event_wait_list, cl_event *event);
typedef cl_int(CL_API_CALL *command_copy_buffer_fn)(
    cl_command_buffer_khr command_buffer, cl_command_queue command_queue,
    const cmdbuf_command_properties *properties, cl_mem src_buffer, cl_mem dst_buffer, size_t src_offset,
    size_t dst_offset, size_t size, cl_uint num_sync_points_in_wait_list,
    const cl_sync_point_khr *sync_point_wait_list, cl_sync_point_khr *sync_point,
    cl_mutable_command_khr *mutable_handle);
typedef cl_int(CL_API_CALL *command_ndrange_kernel_fn)(
    cl_command_buffer_khr command_buffer, cl_command_queue command_queue,
    const cmdbuf_command_properties *properties, cl_kernel kernel, cl_uint work_dim,
    const size_t *global_work_offset, const size_t *global_work_size, const size_t *local_work_size,
    cl_uint num_sync_points_in_wait_list, const cl_sync_point_khr *sync_point_wait_list,
    cl_sync_point_khr *sync_point, cl_mutable_command_khr *mutable_handle);

static void *lookup(cl_platform_id platform, const char *name) {
    void *f = clGetExtensionFunctionAddressForPlatform(platform, name);
    if (!f) {
        fprintf(stderr, "tile_pipeline: %s not found\n", name);
        exit(1);
    }
    return f;
}

static const char *source =
    "__kernel void add(__global const float *a, __global const float *b, __global float *c) {\n"
    "    size_t i = get_global_id(0);\n"
    "    c[i] = a[i] + b[i];\n"
    "}\n";

enum { FRAMES = 60, N = 1 << 20, TILE = 1 << 16, TILES = N / TILE };

int main(void) {
    cl_platform_id platform;
    cl_device_id device;
    cl_int err;
    CHECK(clGetPlatformIDs(1, &platform, NULL));
    CHECK(clGetDeviceIDs(platform, CL_DEVICE_TYPE_DEFAULT, 1, &device, NULL));
    char exts[8192];
    CHECK(clGetDeviceInfo(device, CL_DEVICE_EXTENSIONS, sizeof exts, exts, NULL));
    if (!strstr(exts, "cl_khr_command_buffer")) {
        fprintf(stderr, "tile_pipeline: device lacks cl_khr_command_buffer\n");
        return 1;
    }
    create_command_buffer_fn create = (create_command_buffer_fn)lookup(platform, "clCreateCommandBufferKHR");
    command_buffer_fn finalize = (command_buffer_fn)lookup(platform, "clFinalizeCommandBufferKHR");
    command_buffer_fn release = (command_buffer_fn)lookup(platform, "clReleaseCommandBufferKHR");
    enqueue_command_buffer_fn enqueue = (enqueue_command_buffer_fn)lookup(platform, "clEnqueueCommandBufferKHR");
    command_copy_buffer_fn copy = (command_copy_buffer_fn)lookup(platform, "clCommandCopyBufferKHR");
    command_ndrange_kernel_fn ndrange = (command_ndrange_kernel_fn)lookup(platform, "clCommandNDRangeKernelKHR");

    cl_context ctx = clCreateContext(NULL, 1, &device, NULL, NULL, &err);
    CHECK(err);
    /* Out of order: inside the command buffer only the sync points order the commands. */
    cl_queue_properties qprops[] = {CL_QUEUE_PROPERTIES, CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE, 0};
    cl_command_queue q = clCreateCommandQueueWithProperties(ctx, device, qprops, &err);
    CHECK(err);
    cl_program prog = clCreateProgramWithSource(ctx, 1, &source, NULL, &err);
    CHECK(err);
    if (clBuildProgram(prog, 1, &device, "", NULL, NULL) != CL_SUCCESS) {
        char log[8192];
        clGetProgramBuildInfo(prog, device, CL_PROGRAM_BUILD_LOG, sizeof log, log, NULL);
        fprintf(stderr, "build failed:\n%s\n", log);
        return 1;
    }
    cl_kernel k = clCreateKernel(prog, "add", &err);
    CHECK(err);
    const size_t frame = N * sizeof(float), tile = TILE * sizeof(float);
    cl_mem a = clCreateBuffer(ctx, CL_MEM_READ_ONLY, frame, NULL, &err);
    CHECK(err);
    cl_mem b = clCreateBuffer(ctx, CL_MEM_READ_ONLY, frame, NULL, &err);
    CHECK(err);
    cl_mem c = clCreateBuffer(ctx, CL_MEM_WRITE_ONLY, frame, NULL, &err);
    CHECK(err);
    cl_mem ta = clCreateBuffer(ctx, CL_MEM_READ_WRITE, tile, NULL, &err);
    CHECK(err);
    cl_mem tb = clCreateBuffer(ctx, CL_MEM_READ_WRITE, tile, NULL, &err);
    CHECK(err);
    cl_mem tc = clCreateBuffer(ctx, CL_MEM_READ_WRITE, tile, NULL, &err);
    CHECK(err);
    CHECK(clSetKernelArg(k, 0, sizeof ta, &ta));
    CHECK(clSetKernelArg(k, 1, sizeof tb, &tb));
    CHECK(clSetKernelArg(k, 2, sizeof tc, &tc));

    /* Record once: for each tile, copy in (after the previous tile's copy-out, which frees the
     * staging buffers), add, copy out. */
    cl_command_buffer_khr cb = create(1, &q, NULL, &err);
    CHECK(err);
    cl_sync_point_khr done = 0;
    const size_t global = TILE;
    for (size_t t = 0; t < TILES; t++) {
        cl_sync_point_khr in[2], added;
        cl_uint nwait = done ? 1 : 0;
        const cl_sync_point_khr *wait = done ? &done : NULL;
        CHECK(copy(cb, NULL, NULL, a, ta, t * tile, 0, tile, nwait, wait, &in[0], NULL));
        CHECK(copy(cb, NULL, NULL, b, tb, t * tile, 0, tile, nwait, wait, &in[1], NULL));
        CHECK(ndrange(cb, NULL, NULL, k, 1, NULL, &global, NULL, 2, in, &added, NULL));
        CHECK(copy(cb, NULL, NULL, tc, c, 0, t * tile, tile, 1, &added, &done, NULL));
    }
    CHECK(finalize(cb));

    float *ha = malloc(frame), *hb = malloc(frame), *hc = malloc(frame);
    if (!ha || !hb || !hc) {
        fprintf(stderr, "tile_pipeline: out of host memory\n");
        return 1;
    }
    srand(42);
    long wrong = 0;
    for (int f = 0; f < FRAMES; f++) {
        for (int i = 0; i < N; i++) {
            ha[i] = (float)rand() / RAND_MAX;
            hb[i] = (float)rand() / RAND_MAX;
        }
        cl_event written[2], ran;
        CHECK(clEnqueueWriteBuffer(q, a, CL_FALSE, 0, frame, ha, 0, NULL, &written[0]));
        CHECK(clEnqueueWriteBuffer(q, b, CL_FALSE, 0, frame, hb, 0, NULL, &written[1]));
        CHECK(enqueue(0, NULL, cb, 2, written, &ran));
        CHECK(clEnqueueReadBuffer(q, c, CL_TRUE, 0, frame, hc, 1, &ran, NULL));
        for (int i = 0; i < N; i++) {
            if (hc[i] != ha[i] + hb[i]) {
                if (wrong < 5)
                    fprintf(stderr, "frame %d: c[%d] = %f, expected %f\n", f, i, hc[i], ha[i] + hb[i]);
                wrong++;
            }
        }
        CHECK(clReleaseEvent(written[0]));
        CHECK(clReleaseEvent(written[1]));
        CHECK(clReleaseEvent(ran));
    }
    printf("tile_pipeline: %d frames x %d elements (%d tiles, %d commands), %ld wrong: %s\n", FRAMES, N, TILES,
           4 * TILES, wrong, wrong ? "FAILED" : "PASSED");
    CHECK(release(cb));
    clReleaseMemObject(a);
    clReleaseMemObject(b);
    clReleaseMemObject(c);
    clReleaseMemObject(ta);
    clReleaseMemObject(tb);
    clReleaseMemObject(tc);
    clReleaseKernel(k);
    clReleaseProgram(prog);
    clReleaseCommandQueue(q);
    clReleaseContext(ctx);
    free(ha);
    free(hb);
    free(hc);
    return wrong ? 1 : 0;
}
