// The "medium program" of vkcl-bench's build-time workloads: ten kernels and their helpers,
// the kind of file a real application ships (reductions, scans, histograms with atomics,
// tiled transposes in local memory, stencils, structs, loops). The benchmark checks six of
// the kernels against host results after building it.

#define GROUP 64
#define TILE 16

typedef struct {
    float4 pos;
    float4 vel;
    float mass;
    int alive;
} Particle;

inline uint hash32(uint x) {
    x ^= x >> 16;
    x *= 0x7feb352dU;
    x ^= x >> 15;
    x *= 0x846ca68bU;
    x ^= x >> 16;
    return x;
}

inline float smooth(float a, float b, float t) {
    float u = clamp(t, 0.0f, 1.0f);
    u = u * u * (3.0f - 2.0f * u);
    return mix(a, b, u);
}

// (A saturating add written out in C here would become llvm.sadd.sat, which vkcl's lowering
// does not handle yet; the sums of this benchmark cannot overflow.)
inline int add_wrapped(int a, int b) {
    return (int)((uint)a + (uint)b);
}

// y = a * x + y
__kernel void saxpy(__global const float *x, __global float *y, uint n, uint a_bits) {
    size_t i = get_global_id(0);
    float a = as_float(a_bits);
    if (i < n) {
        y[i] = fma(a, x[i], y[i]);
    }
}

// One partial sum per work-group of GROUP items.
__kernel __attribute__((reqd_work_group_size(GROUP, 1, 1)))
void reduce_sum(__global const int *in, __global int *partial) {
    __local int scratch[GROUP];
    size_t lid = get_local_id(0);
    scratch[lid] = in[get_global_id(0)];
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint s = GROUP / 2; s > 0; s >>= 1) {
        if (lid < s) {
            scratch[lid] = add_wrapped(scratch[lid], scratch[lid + s]);
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (lid == 0) {
        partial[get_group_id(0)] = scratch[0];
    }
}

// Inclusive prefix sum within each work-group (Hillis-Steele, double-buffered).
__kernel __attribute__((reqd_work_group_size(GROUP, 1, 1)))
void scan_block(__global const int *in, __global int *out) {
    __local int buf[2][GROUP];
    size_t lid = get_local_id(0);
    int src = 0;
    buf[0][lid] = in[get_global_id(0)];
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint off = 1; off < GROUP; off <<= 1) {
        int v = buf[src][lid];
        if (lid >= off) {
            v += buf[src][lid - off];
        }
        buf[1 - src][lid] = v;
        src = 1 - src;
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    out[get_global_id(0)] = buf[src][lid];
}

// 16-bin histogram: local atomics, then one global atomic per bin and group.
__kernel __attribute__((reqd_work_group_size(GROUP, 1, 1)))
void histogram(__global const uint *data, __global uint *bins, uint n) {
    __local uint local_bins[16];
    size_t lid = get_local_id(0);
    if (lid < 16) {
        local_bins[lid] = 0;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    size_t i = get_global_id(0);
    if (i < n) {
        atomic_inc(&local_bins[data[i] & 15u]);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    if (lid < 16 && local_bins[lid] != 0) {
        atomic_add(&bins[lid], local_bins[lid]);
    }
}

// out = transpose(in), in is h rows of w; tiles of TILE x TILE through local memory.
__kernel __attribute__((reqd_work_group_size(TILE, TILE, 1)))
void transpose(__global const float *in, __global float *out, uint w, uint h) {
    __local float tile[TILE][TILE + 1];
    uint gx = get_group_id(0) * TILE, gy = get_group_id(1) * TILE;
    uint lx = get_local_id(0), ly = get_local_id(1);
    if (gx + lx < w && gy + ly < h) {
        tile[ly][lx] = in[(gy + ly) * w + gx + lx];
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    uint ox = gy + lx, oy = gx + ly;
    if (ox < h && oy < w) {
        out[oy * h + ox] = tile[lx][ly];
    }
}

// A hash per element: out[i] = hash32(i ^ seed) % modulus.
__kernel void hash_fill(__global uint *out, uint seed, uint modulus) {
    uint i = (uint)get_global_id(0);
    out[i] = hash32(i ^ seed) % modulus;
}

// Three-point stencil with clamped edges.
__kernel void stencil3(__global const float *in, __global float *out, uint n) {
    size_t i = get_global_id(0);
    if (i >= n) {
        return;
    }
    float l = in[i == 0 ? 0 : i - 1];
    float c = in[i];
    float r = in[i + 1 >= n ? n - 1 : i + 1];
    out[i] = 0.25f * l + 0.5f * c + 0.25f * r;
}

// Escape-time fractal, a loop with a data-dependent trip count.
__kernel void mandel(__global uint *out, uint w, uint h, uint max_iter) {
    uint px = get_global_id(0), py = get_global_id(1);
    if (px >= w || py >= h) {
        return;
    }
    float cx = -2.0f + 3.0f * (float)px / (float)w;
    float cy = -1.25f + 2.5f * (float)py / (float)h;
    float x = 0.0f, y = 0.0f;
    uint it = 0;
    while (it < max_iter && x * x + y * y <= 4.0f) {
        float t = x * x - y * y + cx;
        y = 2.0f * x * y + cy;
        x = t;
        it++;
    }
    out[py * w + px] = it;
}

// Particle step with a struct in global memory.
__kernel void particles(__global Particle *p, uint n, uint dt_bits) {
    size_t i = get_global_id(0);
    if (i >= n || !p[i].alive) {
        return;
    }
    float dt = as_float(dt_bits);
    Particle q = p[i];
    float4 g = (float4)(0.0f, -9.81f, 0.0f, 0.0f);
    q.vel += g * dt / max(q.mass, 1e-3f);
    q.pos += q.vel * dt;
    if (q.pos.y < 0.0f) {
        q.pos.y = -q.pos.y;
        q.vel.y = -q.vel.y * 0.5f;
    }
    q.alive = q.pos.x * q.pos.x + q.pos.z * q.pos.z < 1.0e6f;
    p[i] = q;
}

// One compare-exchange step of a bitonic sort.
__kernel void bitonic_step(__global int *a, uint j, uint k) {
    uint i = get_global_id(0);
    uint ixj = i ^ j;
    if (ixj > i) {
        int x = a[i], y = a[ixj];
        bool up = (i & k) == 0;
        if ((x > y) == up) {
            a[i] = y;
            a[ixj] = x;
        }
    }
}

// A smooth ramp with vector types.
__kernel void ramp4(__global float4 *out, uint n) {
    size_t i = get_global_id(0);
    if (i >= n) {
        return;
    }
    float t = (float)i / (float)max(n - 1, 1u);
    float4 v = (float4)(smooth(0.0f, 1.0f, t), smooth(1.0f, 0.0f, t), t * t, sqrt(t));
    out[i] = v;
}
