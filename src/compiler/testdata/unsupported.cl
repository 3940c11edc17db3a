// Kernels the lowering rejects today, with a clear build log (known limitations).

// SROA turns the struct copy into an i64 load over two 4-byte members: type punning on
// private memory needs the byte-addressable fallback.
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
