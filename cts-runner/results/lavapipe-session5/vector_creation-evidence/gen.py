"""GLSL equivalents of the CTS basic/vector_creation char16 kernel (char16.cl, as test_basic
built it): the same 274 vector creations, each reading 16 bytes of `src` and writing one
16-byte result. `bytes`: one read per byte, as the kernel spells them; `words`: the fewest
reads any compiler could use (four aligned 32-bit words a line). Usage: gen.py N (first N lines)."""
import re, sys
n = int(sys.argv[1])
src = open('char16.cl').read()
lines = re.findall(r'result\[(\d+)\] = \(char16\)\((.*)\);', src)[:n]
head = ['#version 450', 'layout(local_size_x = 1) in;']
b = head[:1] + ['#extension GL_EXT_shader_8bit_storage : require',
    '#extension GL_EXT_shader_explicit_arithmetic_types_int8 : require'] + head[1:] + [
    'layout(std430, binding = 0) readonly buffer Src { int8_t src[]; };',
    'layout(std430, binding = 1) writeonly buffer Result { i8vec4 result[]; };', 'void main() {']
w = head + ['layout(std430, binding = 0) readonly buffer Src { uint src[]; };',
    'layout(std430, binding = 1) writeonly buffer Result { uvec4 result[]; };', 'void main() {']
for idx, parts in lines:
    idx = int(idx); reads = []
    for p in re.findall(r'src\[(\d+)\]|vload(\d+)\(0,src\+(\d+)\)', parts):
        reads += [int(p[0])] if p[0] else [int(p[2]) + k for k in range(int(p[1]))]
    assert len(reads) == 16
    for j in range(4):
        b.append(f'  result[{4*idx+j}] = i8vec4({", ".join(f"src[{r}]" for r in reads[4*j:4*j+4])});')
    w.append(f'  result[{idx}] = uvec4(src[0], src[1], src[2], src[3]);')
open(f'bytes{n}.comp', 'w').write('\n'.join(b + ['}']) + '\n')
open(f'words{n}.comp', 'w').write('\n'.join(w + ['}']) + '\n')
