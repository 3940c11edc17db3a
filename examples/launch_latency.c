/* launch_latency: where a short launch's round trip goes (issue 17). Launches a 64-work-item
 * kernel (a[i] += 1) and waits for it with clFinish, N times (default 2000), and prints the
 * median, minimum and 90th percentile of the round trip; then the same on a queue with
 * CL_QUEUE_PROFILING_ENABLE, printing the median of each stage between the event's profiling
 * times (QUEUED -> SUBMIT -> START -> END) and from END to clFinish's return. vkcl's profiling
 * times are CLOCK_MONOTONIC host times, so END -> return is the completion's hand-off to the
 * waiting thread there; other platforms' times may be device clocks (that column is then
 * meaningless). Checks the counter on the host at the end. Usage: launch_latency [N]
 * (first platform, first device; name vkcl with OCL_ICD_VENDORS / OCL_ICD_FILENAMES). */
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#define CK(x) do { cl_int e_ = (x); if (e_) { fprintf(stderr, "%s:%d: error %d\n", __FILE__, __LINE__, e_); exit(1);} } while (0)
static double now_ns(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec * 1e9 + t.tv_nsec; }
static int cmp(const void *a, const void *b) { double x = *(const double *)a, y = *(const double *)b; return x < y ? -1 : x > y; }
static double median(double *v, int n) { qsort(v, n, sizeof *v, cmp); return v[n / 2]; }

int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 2000;
  if (n < 10) n = 10;
  cl_platform_id p; cl_device_id d; cl_int e;
  CK(clGetPlatformIDs(1, &p, NULL));
  CK(clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 1, &d, NULL));
  char name[256]; CK(clGetDeviceInfo(d, CL_DEVICE_NAME, sizeof name, name, NULL));
  cl_context c = clCreateContext(NULL, 1, &d, NULL, NULL, &e); CK(e);
  const char *src = "__kernel void inc(__global int *a) { a[get_global_id(0)] += 1; }";
  cl_program pr = clCreateProgramWithSource(c, 1, &src, NULL, &e); CK(e);
  CK(clBuildProgram(pr, 1, &d, "", NULL, NULL));
  cl_kernel k = clCreateKernel(pr, "inc", &e); CK(e);
  cl_mem b = clCreateBuffer(c, CL_MEM_READ_WRITE, 256, NULL, &e); CK(e);
  CK(clSetKernelArg(k, 0, sizeof b, &b));
  size_t g = 64;
  int z[64] = {0};
  double *t = malloc(sizeof(double) * n * 5);
  double *q2s = t + n, *s2st = t + 2 * n, *st2e = t + 3 * n, *e2r = t + 4 * n;
  int launches = 0;
  printf("device: %s, %d round trips each\n", name, n);
  for (int prof = 0; prof < 2; prof++) {
    cl_queue_properties props[] = {CL_QUEUE_PROPERTIES, prof ? CL_QUEUE_PROFILING_ENABLE : 0, 0};
    cl_command_queue q = clCreateCommandQueueWithProperties(c, d, props, &e); CK(e);
    for (int i = 0; i < 64; i++) z[i] = 0;
    CK(clEnqueueWriteBuffer(q, b, CL_TRUE, 0, sizeof z, z, 0, NULL, NULL));
    launches = 0;
    for (int i = -20; i < n; i++) {
      cl_event ev = NULL;
      double t0 = now_ns();
      CK(clEnqueueNDRangeKernel(q, k, 1, NULL, &g, NULL, 0, NULL, prof ? &ev : NULL));
      CK(clFinish(q));
      double t1 = now_ns();
      launches++;
      if (i >= 0) {
        t[i] = (t1 - t0) / 1e3;
        if (prof) {
          cl_ulong qd, sb, st, en;
          CK(clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_QUEUED, sizeof qd, &qd, NULL));
          CK(clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_SUBMIT, sizeof sb, &sb, NULL));
          CK(clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_START, sizeof st, &st, NULL));
          CK(clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_END, sizeof en, &en, NULL));
          q2s[i] = (sb - qd) / 1e3; s2st[i] = (st - sb) / 1e3; st2e[i] = (en - st) / 1e3;
          e2r[i] = (t1 - (double)en) / 1e3;
        }
      }
      if (ev) clReleaseEvent(ev);
    }
    CK(clEnqueueReadBuffer(q, b, CL_TRUE, 0, sizeof z, z, 0, NULL, NULL));
    for (int i = 0; i < 64; i++)
      if (z[i] != launches) { fprintf(stderr, "a[%d] = %d, want %d\n", i, z[i], launches); return 1; }
    double m = median(t, n);
    printf("%s: round trip median %.1f us, min %.1f, p90 %.1f\n", prof ? "profiling queue" : "queue",
           m, t[0], t[n * 9 / 10]);
    if (prof) {
      double r = median(e2r, n);
      printf("  stages (medians, us): queued->submit %.1f, submit->start %.1f, start->end %.1f, ",
             median(q2s, n), median(s2st, n), median(st2e, n));
      if (r >= 0 && r < 1e4) printf("end->clFinish return %.1f\n", r);
      else printf("end->clFinish return n/a (profiling times are not CLOCK_MONOTONIC here)\n");
    }
    CK(clReleaseCommandQueue(q));
  }
  return 0;
}
