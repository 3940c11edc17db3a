// Private arrays indexed dynamically, loops over them.
__kernel void private_array(__global const int *in, __global int *out, int n) {
    int buf[16];
    size_t g = get_global_id(0);
    for (int k = 0; k < 16; k++)
        buf[k] = in[g * 16 + k] * k;
    int acc = 0;
    for (int k = 0; k < n && k < 16; k++)
        acc += buf[(k * 7 + (int)g) & 15];
    out[g] = acc;
}

__kernel void private_sort(__global float *data) {
    float v[8];
    size_t g = get_global_id(0);
    for (int k = 0; k < 8; k++)
        v[k] = data[g * 8 + k];
    for (int a = 1; a < 8; a++) {
        float key = v[a];
        int b = a - 1;
        while (b >= 0 && v[b] > key) {
            v[b + 1] = v[b];
            b--;
        }
        v[b + 1] = key;
    }
    for (int k = 0; k < 8; k++)
        data[g * 8 + k] = v[k];
}

// SROA turns the struct copy into an i64 load over two 4-byte members: type punning on
// private memory, lowered to the scalars the view covers.
typedef struct { float x, y; int tag; } Point;

__kernel void private_structs(__global const Point *in, __global Point *out, int which) {
    Point pts[4];
    size_t g = get_global_id(0);
    for (int k = 0; k < 4; k++)
        pts[k] = in[g * 4 + k];
    Point p = pts[which & 3];
    p.x += 1.0f;
    out[g] = p;
}
