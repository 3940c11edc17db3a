// Control flow: loops with break/continue, early return, nested ifs, switch.
__kernel void loops(__global int *data, int n) {
    int i = (int)get_global_id(0);
    int acc = 0;
    for (int k = 0; k < n; k++) {
        if (k == 3)
            continue;
        acc += data[k];
        if (acc > 1000)
            break;
    }
    data[i] = acc;
}

__kernel void early_return(__global int *data, int n) {
    int i = (int)get_global_id(0);
    if (i >= n)
        return;
    if (data[i] < 0) {
        data[i] = 0;
        return;
    }
    data[i] *= 2;
}

__kernel void nested_ifs(__global int *data) {
    int i = (int)get_global_id(0);
    int v = data[i];
    if (v > 10) {
        if (v > 100) {
            v = 100;
        } else if (v > 50) {
            v = 50;
        } else {
            v += 1;
        }
    } else {
        if (v < 0)
            v = -v;
    }
    data[i] = v;
}

__kernel void switches(__global int *data) {
    int i = (int)get_global_id(0);
    switch (data[i] & 7) {
    case 0: data[i] = 10; break;
    case 1: data[i] = 20; break;
    case 2:
    case 3: data[i] = 30; break;
    case 5: data[i] += 1;
    /* fall through */
    case 6: data[i] += 2; break;
    default: data[i] = -1;
    }
}

__kernel void nested_loops(__global float *m, int rows, int cols) {
    int r = (int)get_global_id(0);
    float sum = 0.0f;
    for (int i = 0; i < rows; i++) {
        for (int j = 0; j < cols; j++) {
            float x = m[i * cols + j];
            if (x < 0.0f)
                continue;
            sum += x;
            if (sum > 1e6f)
                goto done;
        }
    }
done:
    m[r] = sum;
}

__kernel void while_loop(__global uint *data) {
    uint i = get_global_id(0);
    uint x = data[i];
    uint steps = 0;
    while (x != 1 && steps < 1000) {
        x = (x & 1) ? 3 * x + 1 : x / 2;
        steps++;
    }
    data[i] = steps;
}
