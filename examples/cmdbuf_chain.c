/* cmdbuf_chain: where a recorded kernel's device time goes. Records 1,000 launches of one small
 * kernel (64 work-items) into a command buffer and prints the best of 7 enqueue-to-completion
 * times per kernel, for five kernels (a[i] += 1, an empty kernel, one computing get_global_id,
 * which reads the launch header, one computing the same index from get_group_id and
 * get_local_id, which do not, and a[i] += 1 with that index)
 * on an in-order queue (every command depends on the one before: a barrier each) and on an
 * out-of-order queue (no sync points: no barriers). Usage: cmdbuf_chain (first platform, first
 * device, or with CHAIN_SUBDEVICE=n a sub-device of n compute units; name vkcl with
 * OCL_ICD_VENDORS / OCL_ICD_FILENAMES). Results in docs/h200.md. */
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include <CL/cl_ext.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#define CK(x) do { cl_int e_ = (x); if (e_) { fprintf(stderr, "%s:%d: error %d\n", __FILE__, __LINE__, e_); exit(1);} } while (0)
static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec * 1e6 + t.tv_nsec / 1e3; }
static const char *src =
"__kernel void inc(__global int *a) { a[get_global_id(0)] += 1; }\n"
"__kernel void nop(__global int *a) { }\n"
"__kernel void gid(__global int *a) { if (get_global_id(0) == 0x7fffffff) a[0] = 1; }\n"
"__kernel void grp(__global int *a) { if (get_group_id(0) * 64 + get_local_id(0) == 0x7fffffff) a[0] = 1; }\n"
"__kernel void incg(__global int *a) { a[get_group_id(0) * 64 + get_local_id(0)] += 1; }\n";
typedef cl_command_buffer_khr (*create_t)(cl_uint, const cl_command_queue *, const cl_command_buffer_properties_khr *, cl_int *);
typedef cl_int (*cb_t)(cl_command_buffer_khr);
typedef cl_int (*enq_t)(cl_uint, cl_command_queue *, cl_command_buffer_khr, cl_uint, const cl_event *, cl_event *);
typedef cl_int (*rec_t)(cl_command_buffer_khr, cl_command_queue, const cl_properties *, cl_kernel, cl_uint, const size_t *, const size_t *, const size_t *, cl_uint, const cl_sync_point_khr *, cl_sync_point_khr *, cl_mutable_command_khr *);
int main(void) {
  cl_platform_id p; CK(clGetPlatformIDs(1, &p, NULL));
  cl_device_id d; CK(clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 1, &d, NULL));
  /* CHAIN_SUBDEVICE=n: run on a sub-device of n compute units (on vkcl's CUDA path a green
   * context, where a command buffer runs as a CUDA graph). */
  if (getenv("CHAIN_SUBDEVICE")) {
    cl_device_partition_property pp[] = {CL_DEVICE_PARTITION_BY_COUNTS, atoi(getenv("CHAIN_SUBDEVICE")),
                                         CL_DEVICE_PARTITION_BY_COUNTS_LIST_END, 0};
    cl_device_id s; CK(clCreateSubDevices(d, pp, 1, &s, NULL)); d = s;
  }
  cl_int e; cl_context c = clCreateContext(NULL, 1, &d, NULL, NULL, &e); CK(e);
  create_t create = (create_t)clGetExtensionFunctionAddressForPlatform(p, "clCreateCommandBufferKHR");
  cb_t fin = (cb_t)clGetExtensionFunctionAddressForPlatform(p, "clFinalizeCommandBufferKHR");
  enq_t enq = (enq_t)clGetExtensionFunctionAddressForPlatform(p, "clEnqueueCommandBufferKHR");
  rec_t rec = (rec_t)clGetExtensionFunctionAddressForPlatform(p, "clCommandNDRangeKernelKHR");
  if (!create || !fin || !enq || !rec) { fprintf(stderr, "cl_khr_command_buffer entry points missing\n"); return 2; }
  cl_mem m = clCreateBuffer(c, CL_MEM_READ_WRITE, 64 * 4, NULL, &e); CK(e);
  cl_program pr = clCreateProgramWithSource(c, 1, &src, NULL, &e); CK(e); CK(clBuildProgram(pr, 1, &d, "", NULL, NULL));
  const char *kn[5] = {"inc", "nop", "gid", "grp", "incg"};
  for (int ooo = 0; ooo < 2; ooo++) {
    cl_queue_properties qp[] = {CL_QUEUE_PROPERTIES, ooo ? CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE : 0, 0};
    cl_command_queue q = clCreateCommandQueueWithProperties(c, d, qp, &e); CK(e);
    for (int k = 0; k < 5; k++) {
      if (ooo && (k == 0 || k == 4)) continue; /* inc races without ordering */
      cl_kernel K = clCreateKernel(pr, kn[k], &e); CK(e); CK(clSetKernelArg(K, 0, sizeof m, &m));
      size_t g = 64;
      cl_command_buffer_khr cb = create(1, &q, NULL, &e); CK(e);
      for (int i = 0; i < 1000; i++) CK(rec(cb, NULL, NULL, K, 1, NULL, &g, &g, 0, NULL, NULL, NULL));
      CK(fin(cb));
      CK(enq(1, &q, cb, 0, NULL, NULL)); CK(clFinish(q));
      double best = 1e30;
      for (int r = 0; r < 7; r++) { double t0 = now(); CK(enq(1, &q, cb, 0, NULL, NULL)); CK(clFinish(q)); double t = now() - t0; if (t < best) best = t; }
      printf("%s queue, kernel %s: 1000 recorded kernels, best %.1f us = %.3f us/kernel\n", ooo ? "out-of-order (no barriers)" : "in-order", kn[k], best, best / 1000);
    }
  }
  return 0;
}
