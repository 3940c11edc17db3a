/* A separable Gaussian blur of a 1920x1080 RGBA8 image with image2d_t and a sampler: a
 * horizontal pass from the source image into an intermediate RGBA float image, then a vertical
 * pass from it into the RGBA8 result. Checked against a host reference of the same blur.
 *
 * Needs a device with images (vkcl: VKCL_IMAGES=1; examples/run.sh sets it for this example).
 *
 * Tolerance: a channel of the result may differ from the host's by 1 (of 255) only where the
 * exact value lies within 0.101 of a unit of a rounding midpoint (x.5); elsewhere it must be
 * equal. Why: the host computes in double from the same float weights and rounds once, to
 * nearest; the device sums in float (the driver may fuse the multiply-adds: about 1e-4 of a
 * unit at most here), its read_imagef of UNORM_INT8 texels may be off by 1.5 ulp, and its
 * write_imagef to UNORM_INT8 may round with an error of up to 0.6 of a unit (OpenCL C 3.0,
 * 8.3.1.1, "<= 0.6 ulp"), so it may pick either neighbour within 0.1 of a midpoint. */
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include <math.h>
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

#define W 1920
#define H 1080
#define SIGMA 3.0
#define RADIUS 9 /* 3 sigma */
#define TAPS (2 * RADIUS + 1)

/* One pass along (dx, dy): the sampler clamps to the edge, unnormalized coordinates at texel
 * centres, nearest filtering, so each tap reads exactly one texel. */
static const char *source =
    "__kernel void blur_pass(__read_only image2d_t src, __write_only image2d_t dst,\n"
    "                        sampler_t smp, __constant float *weights, int radius,\n"
    "                        int dx, int dy) {\n"
    "    int x = get_global_id(0), y = get_global_id(1);\n"
    "    if (x >= get_image_width(dst) || y >= get_image_height(dst))\n"
    "        return;\n"
    "    float2 centre = (float2)(x + 0.5f, y + 0.5f);\n"
    "    float4 sum = (float4)(0.0f);\n"
    "    for (int i = -radius; i <= radius; i++)\n"
    "        sum += weights[i + radius] *\n"
    "               read_imagef(src, smp, centre + (float2)(i * dx, i * dy));\n"
    "    write_imagef(dst, (int2)(x, y), sum);\n"
    "}\n";

static int clampi(int v, int lo, int hi) { return v < lo ? lo : v > hi ? hi : v; }

int main(void) {
    cl_platform_id platform;
    cl_device_id device;
    cl_int err;
    CHECK(clGetPlatformIDs(1, &platform, NULL));
    CHECK(clGetDeviceIDs(platform, CL_DEVICE_TYPE_DEFAULT, 1, &device, NULL));
    cl_bool images = CL_FALSE;
    CHECK(clGetDeviceInfo(device, CL_DEVICE_IMAGE_SUPPORT, sizeof images, &images, NULL));
    if (!images) {
        fprintf(stderr, "gaussian_blur: the device has no image support (vkcl: set VKCL_IMAGES=1): FAILED\n");
        return 1;
    }
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
    cl_kernel k = clCreateKernel(prog, "blur_pass", &err);
    CHECK(err);

    /* The source: gradients, a checkerboard of hard edges and noise (a fixed LCG). */
    unsigned char *src = malloc((size_t)W * H * 4), *out = malloc((size_t)W * H * 4);
    double *tmp = malloc((size_t)W * H * 4 * sizeof(double));
    if (!src || !out || !tmp) {
        fprintf(stderr, "gaussian_blur: out of host memory\n");
        return 1;
    }
    unsigned seed = 12345;
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++) {
            unsigned char *p = &src[((size_t)y * W + x) * 4];
            seed = seed * 1664525u + 1013904223u;
            p[0] = (unsigned char)(x * 255 / (W - 1));
            p[1] = (unsigned char)(y * 255 / (H - 1));
            p[2] = ((x / 64 + y / 64) & 1) ? 230 : 20;
            p[3] = (unsigned char)(seed >> 24);
        }

    /* Normalized Gaussian weights, as floats: the host reference uses these same values. */
    float weights[TAPS];
    double total = 0;
    for (int i = 0; i < TAPS; i++) {
        double d = i - RADIUS;
        total += exp(-d * d / (2 * SIGMA * SIGMA));
    }
    for (int i = 0; i < TAPS; i++) {
        double d = i - RADIUS;
        weights[i] = (float)(exp(-d * d / (2 * SIGMA * SIGMA)) / total);
    }

    cl_image_format rgba8 = {CL_RGBA, CL_UNORM_INT8}, rgbaf = {CL_RGBA, CL_FLOAT};
    cl_image_desc desc = {0};
    desc.image_type = CL_MEM_OBJECT_IMAGE2D;
    desc.image_width = W;
    desc.image_height = H;
    cl_mem dsrc = clCreateImage(ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, &rgba8, &desc, src, &err);
    CHECK(err);
    cl_mem dtmp = clCreateImage(ctx, CL_MEM_READ_WRITE, &rgbaf, &desc, NULL, &err);
    CHECK(err);
    cl_mem dout = clCreateImage(ctx, CL_MEM_WRITE_ONLY, &rgba8, &desc, NULL, &err);
    CHECK(err);
    cl_mem dweights = clCreateBuffer(ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, sizeof weights, weights, &err);
    CHECK(err);
    cl_sampler_properties sprops[] = {CL_SAMPLER_NORMALIZED_COORDS, CL_FALSE,
                                      CL_SAMPLER_ADDRESSING_MODE, CL_ADDRESS_CLAMP_TO_EDGE,
                                      CL_SAMPLER_FILTER_MODE, CL_FILTER_NEAREST, 0};
    cl_sampler smp = clCreateSamplerWithProperties(ctx, sprops, &err);
    CHECK(err);

    cl_int radius = RADIUS, one = 1, zero = 0;
    size_t global[2] = {W, H};
    CHECK(clSetKernelArg(k, 2, sizeof smp, &smp));
    CHECK(clSetKernelArg(k, 3, sizeof dweights, &dweights));
    CHECK(clSetKernelArg(k, 4, sizeof radius, &radius));
    /* Horizontal: source -> intermediate. */
    CHECK(clSetKernelArg(k, 0, sizeof dsrc, &dsrc));
    CHECK(clSetKernelArg(k, 1, sizeof dtmp, &dtmp));
    CHECK(clSetKernelArg(k, 5, sizeof one, &one));
    CHECK(clSetKernelArg(k, 6, sizeof zero, &zero));
    CHECK(clEnqueueNDRangeKernel(q, k, 2, NULL, global, NULL, 0, NULL, NULL));
    /* Vertical: intermediate -> result (the arguments are captured at enqueue). */
    CHECK(clSetKernelArg(k, 0, sizeof dtmp, &dtmp));
    CHECK(clSetKernelArg(k, 1, sizeof dout, &dout));
    CHECK(clSetKernelArg(k, 5, sizeof zero, &zero));
    CHECK(clSetKernelArg(k, 6, sizeof one, &one));
    CHECK(clEnqueueNDRangeKernel(q, k, 2, NULL, global, NULL, 0, NULL, NULL));
    size_t origin[3] = {0, 0, 0}, region[3] = {W, H, 1};
    CHECK(clEnqueueReadImage(q, dout, CL_TRUE, origin, region, 0, 0, out, 0, NULL, NULL));

    /* Host reference: the same two passes in double, clamped to the edge, rounded once. */
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++)
            for (int c = 0; c < 4; c++) {
                double s = 0;
                for (int i = -RADIUS; i <= RADIUS; i++)
                    s += weights[i + RADIUS] * (src[((size_t)y * W + clampi(x + i, 0, W - 1)) * 4 + c] / 255.0);
                tmp[((size_t)y * W + x) * 4 + c] = s;
            }
    long wrong = 0, off_by_one = 0;
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++)
            for (int c = 0; c < 4; c++) {
                double s = 0;
                for (int i = -RADIUS; i <= RADIUS; i++)
                    s += weights[i + RADIUS] * tmp[((size_t)clampi(y + i, 0, H - 1) * W + x) * 4 + c];
                double v = s * 255.0;
                int expect = (int)fmin(255.0, fmax(0.0, floor(v + 0.5)));
                int got = out[((size_t)y * W + x) * 4 + c];
                int diff = abs(got - expect);
                if (diff == 1 && fabs(v - floor(v) - 0.5) <= 0.101)
                    off_by_one++;
                else if (diff != 0 && wrong++ < 5)
                    fprintf(stderr, "(%d, %d) channel %d: %d, expected %d (%.4f)\n", x, y, c, got, expect, v);
            }
    printf("gaussian_blur: %dx%d RGBA8, sigma %.1f, %d taps, two passes: %ld channels off by 1 "
           "at a rounding midpoint (allowed), %ld wrong: %s\n",
           W, H, SIGMA, TAPS, off_by_one, wrong, wrong ? "FAILED" : "PASSED");
    clReleaseSampler(smp);
    clReleaseMemObject(dweights);
    clReleaseMemObject(dout);
    clReleaseMemObject(dtmp);
    clReleaseMemObject(dsrc);
    clReleaseKernel(k);
    clReleaseProgram(prog);
    clReleaseCommandQueue(q);
    clReleaseContext(ctx);
    free(src);
    free(out);
    free(tmp);
    return wrong != 0;
}
