// Scalar, vector and struct-by-value arguments; work-item functions.
typedef struct {
    int a;
    float b;
    char c;
    float4 v;
} Params;

__kernel void scalars(__global float *out, float f, int i, uchar c, short s, long l, ulong d) {
    out[get_global_id(0)] = f + (float)i + (float)c + (float)s + (float)l + (float)d;
}

__kernel void vectors(__global float4 *out, float4 v, int2 w, float3 t) {
    size_t i = get_global_id(0);
    out[i] = v * (float)w.y + (float4)(t, 1.0f);
}

__kernel void by_value(__global float *out, Params p) {
    size_t i = get_global_id(0);
    out[i] = (float)p.a + p.b + (float)p.c + p.v.w;
}

__kernel void workitem(__global ulong *out) {
    size_t g = get_global_id(1) * get_global_size(0) + get_global_id(0);
    __global ulong *o = out + g * 16;
    o[0] = get_global_id(0);
    o[1] = get_global_id(1);
    o[2] = get_local_id(0);
    o[3] = get_group_id(0);
    o[4] = get_num_groups(0);
    o[5] = get_global_size(0);
    o[6] = get_local_size(0);
    o[7] = get_global_offset(0);
    o[8] = get_work_dim();
    o[9] = get_local_id(1);
    o[10] = get_local_size(1);
    o[11] = get_global_id(2);
}

__kernel __attribute__((reqd_work_group_size(8, 4, 1))) __attribute__((vec_type_hint(float4)))
void attributed(__global int *out) {
    out[get_global_id(0)] = 1;
}
