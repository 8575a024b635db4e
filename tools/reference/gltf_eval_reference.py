#!/usr/bin/env python3
"""An independent reading of the glTF 2.0 specification, in double precision, used to check
`posecast eval --json`. It shares no code with the C++ importer or sampler: accessors (strides,
normalised integers, sparse), node TRS/matrix, STEP/LINEAR (slerp via math.acos/sin)/CUBICSPLINE
sampling, world matrices and the skinning palette
    palette[j] = inverse(world(mesh node)) * world(joint j) * inverseBindMatrix[j]
are all written here from the spec text.

usage:
  gltf_eval_reference.py MODEL --clip NAME|INDEX|rest --time T [--skin K]       prints JSON
  gltf_eval_reference.py --compare POSECAST_BINARY MODEL [--times T,T,...]      checks every clip
The compare mode runs `posecast eval --json` for every clip and time and exits 1 on a difference
above 1e-5 relative (the issue's target), printing the worst joint.
"""
import base64
import json
import math
import os
import struct
import subprocess
import sys

COMPONENT = {5120: ("b", 1), 5121: ("B", 1), 5122: ("h", 2), 5123: ("H", 2), 5125: ("I", 4), 5126: ("f", 4)}
NCOMP = {"SCALAR": 1, "VEC2": 2, "VEC3": 3, "VEC4": 4, "MAT2": 4, "MAT3": 9, "MAT4": 16}


def normalise_int(value, component_type):
    if component_type == 5120:
        return max(value / 127.0, -1.0)
    if component_type == 5121:
        return value / 255.0
    if component_type == 5122:
        return max(value / 32767.0, -1.0)
    if component_type == 5123:
        return value / 65535.0
    return float(value)


class Gltf:
    def __init__(self, path):
        self.path = path
        data = open(path, "rb").read()
        self.bin_chunk = None
        if data[:4] == b"glTF":
            length = struct.unpack_from("<I", data, 8)[0]
            offset = 12
            while offset < length:
                chunk_len, chunk_type = struct.unpack_from("<II", data, offset)
                body = data[offset + 8: offset + 8 + chunk_len]
                if chunk_type == 0x4E4F534A:
                    self.json = json.loads(body.decode("utf-8"))
                elif chunk_type == 0x004E4942:
                    self.bin_chunk = body
                offset += 8 + chunk_len
        else:
            self.json = json.loads(data.decode("utf-8"))
        self.buffers = []
        for b in self.json.get("buffers", []):
            uri = b.get("uri")
            if uri is None:
                self.buffers.append(self.bin_chunk)
            elif uri.startswith("data:"):
                self.buffers.append(base64.b64decode(uri.split(",", 1)[1]))
            else:
                self.buffers.append(open(os.path.join(os.path.dirname(path), uri), "rb").read())

    def _read_elements(self, view_index, byte_offset, component_type, ncomp, count, normalized, stride_override=None):
        fmt, size = COMPONENT[component_type]
        view = self.json["bufferViews"][view_index]
        buf = self.buffers[view["buffer"]]
        base = view.get("byteOffset", 0) + byte_offset
        stride = stride_override or view.get("byteStride") or size * ncomp
        out = []
        for i in range(count):
            vals = struct.unpack_from("<" + fmt * ncomp, buf, base + i * stride)
            if normalized:
                vals = tuple(normalise_int(v, component_type) for v in vals)
            out.append(tuple(float(v) for v in vals))
        return out

    def accessor(self, index):
        acc = self.json["accessors"][index]
        ncomp = NCOMP[acc["type"]]
        ct = acc["componentType"]
        norm = acc.get("normalized", False)
        if "bufferView" in acc:
            values = self._read_elements(acc["bufferView"], acc.get("byteOffset", 0), ct, ncomp, acc["count"], norm)
        else:
            values = [tuple([0.0] * ncomp)] * acc["count"]
        sparse = acc.get("sparse")
        if sparse:
            idx = sparse["indices"]
            val = sparse["values"]
            indices = self._read_elements(idx["bufferView"], idx.get("byteOffset", 0), idx["componentType"], 1, sparse["count"], False)
            replacements = self._read_elements(val["bufferView"], val.get("byteOffset", 0), ct, ncomp, sparse["count"], norm)
            values = list(values)
            for i, v in zip(indices, replacements):
                values[int(i[0])] = v
        return values


# --- 4x4 matrices as row-major lists of lists, column vectors ---
def mat_mul(a, b):
    return [[sum(a[r][k] * b[k][c] for k in range(4)) for c in range(4)] for r in range(4)]


def mat_from_column_major(m):
    return [[m[c * 4 + r] for c in range(4)] for r in range(4)]


def mat_trs(t, q, s):
    x, y, z, w = q
    rot = [[1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
           [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
           [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)]]
    return [[rot[r][0] * s[0], rot[r][1] * s[1], rot[r][2] * s[2], t[r]] for r in range(3)] + [[0.0, 0.0, 0.0, 1.0]]


def mat_inverse(m):
    # Gauss-Jordan with partial pivoting, double precision.
    a = [row[:] + [1.0 if i == j else 0.0 for j in range(4)] for i, row in enumerate(m)]
    for col in range(4):
        pivot = max(range(col, 4), key=lambda r: abs(a[r][col]))
        a[col], a[pivot] = a[pivot], a[col]
        p = a[col][col]
        a[col] = [v / p for v in a[col]]
        for r in range(4):
            if r != col:
                f = a[r][col]
                a[r] = [v - f * pv for v, pv in zip(a[r], a[col])]
    return [row[4:] for row in a]


def decompose(m):
    t = [m[0][3], m[1][3], m[2][3]]
    cols = [[m[r][c] for r in range(3)] for c in range(3)]
    s = [math.sqrt(sum(v * v for v in col)) for col in cols]
    det = (cols[0][0] * (cols[1][1] * cols[2][2] - cols[2][1] * cols[1][2]) - cols[1][0] * (cols[0][1] * cols[2][2] - cols[2][1] * cols[0][2]) + cols[2][0] * (cols[0][1] * cols[1][2] - cols[1][1] * cols[0][2]))
    if det < 0:
        s[0] = -s[0]
    r = [[cols[c][row] / s[c] for c in range(3)] for row in range(3)]
    tr = r[0][0] + r[1][1] + r[2][2]
    if tr > 0:
        k = math.sqrt(tr + 1.0) * 2
        q = [(r[2][1] - r[1][2]) / k, (r[0][2] - r[2][0]) / k, (r[1][0] - r[0][1]) / k, 0.25 * k]
    elif r[0][0] > r[1][1] and r[0][0] > r[2][2]:
        k = math.sqrt(1.0 + r[0][0] - r[1][1] - r[2][2]) * 2
        q = [0.25 * k, (r[0][1] + r[1][0]) / k, (r[0][2] + r[2][0]) / k, (r[2][1] - r[1][2]) / k]
    elif r[1][1] > r[2][2]:
        k = math.sqrt(1.0 + r[1][1] - r[0][0] - r[2][2]) * 2
        q = [(r[0][1] + r[1][0]) / k, 0.25 * k, (r[1][2] + r[2][1]) / k, (r[0][2] - r[2][0]) / k]
    else:
        k = math.sqrt(1.0 + r[2][2] - r[0][0] - r[1][1]) * 2
        q = [(r[0][2] + r[2][0]) / k, (r[1][2] + r[2][1]) / k, 0.25 * k, (r[1][0] - r[0][1]) / k]
    return t, q, s


def normalise(q):
    n = math.sqrt(sum(v * v for v in q))
    return [v / n for v in q]


def slerp(a, b, t):
    # Keys are unit quaternions by the spec; files that store them slightly off (SimpleSkin:
    # |q| = 1.0002) are normalised first, as the Khronos sample viewer does.
    a, b = normalise(a), normalise(b)
    d = sum(x * y for x, y in zip(a, b))
    if d < 0:
        b = [-v for v in b]
        d = -d
    if d > 1.0 - 1e-12:
        return normalise([x + (y - x) * t for x, y in zip(a, b)])
    theta = math.acos(min(1.0, d))
    s = math.sin(theta)
    wa = math.sin((1 - t) * theta) / s
    wb = math.sin(t * theta) / s
    return [x * wa + y * wb for x, y in zip(a, b)]


def sample_channel(gltf, sampler, path, t):
    times = [v[0] for v in gltf.accessor(sampler["input"])]
    values = gltf.accessor(sampler["output"])
    interp = sampler.get("interpolation", "LINEAR")
    cubic = interp == "CUBICSPLINE"

    def value(k):
        return list(values[3 * k + 1] if cubic else values[k])

    n = len(times)
    if t <= times[0]:
        out = value(0)
    elif t >= times[-1]:
        out = value(n - 1)
    else:
        k = max(i for i in range(n - 1) if times[i] <= t)
        t0, t1 = times[k], times[k + 1]
        u = (t - t0) / (t1 - t0)
        if interp == "STEP":
            out = value(k)
        elif interp == "LINEAR":
            a, b = value(k), value(k + 1)
            out = slerp(a, b, u) if path == "rotation" else [x + (y - x) * u for x, y in zip(a, b)]
        else:
            dt = t1 - t0
            p0, p1 = value(k), value(k + 1)
            m0 = [dt * v for v in values[3 * k + 2]]
            m1 = [dt * v for v in values[3 * (k + 1)]]
            u2, u3 = u * u, u * u * u
            h00, h10, h01, h11 = 2 * u3 - 3 * u2 + 1, u3 - 2 * u2 + u, -2 * u3 + 3 * u2, u3 - u2
            out = [h00 * a + h10 * b + h01 * c + h11 * d for a, b, c, d in zip(p0, m0, p1, m1)]
    if path == "rotation":
        out = normalise(out)
    return out


def evaluate(path, clip, time, skin_index=0):
    g = Gltf(path)
    nodes = g.json.get("nodes", [])
    local = []
    for n in nodes:
        if "matrix" in n:
            local.append(decompose(mat_from_column_major(n["matrix"])))
        else:
            local.append((list(n.get("translation", [0, 0, 0])), normalise(list(n.get("rotation", [0, 0, 0, 1]))), list(n.get("scale", [1, 1, 1]))))
    animations = g.json.get("animations", [])
    clip_name = "rest"
    if clip != "rest":
        names = [a.get("name", "animation_%d" % i) for i, a in enumerate(animations)]
        index = names.index(clip) if clip in names else int(clip)
        anim = animations[index]
        clip_name = names[index]
        for ch in anim["channels"]:
            target = ch["target"]
            if "node" not in target or target["path"] not in ("translation", "rotation", "scale"):
                continue
            v = sample_channel(g, anim["samplers"][ch["sampler"]], target["path"], time)
            t, q, s = local[target["node"]]
            slot = {"translation": 0, "rotation": 1, "scale": 2}[target["path"]]
            trs = [t, q, s]
            trs[slot] = v
            local[target["node"]] = tuple(trs)
    parent = {}
    for i, n in enumerate(nodes):
        for c in n.get("children", []):
            parent[c] = i
    world_cache = {}

    def world(i):
        if i not in world_cache:
            m = mat_trs(*local[i])
            world_cache[i] = mat_mul(world(parent[i]), m) if i in parent else m
        return world_cache[i]

    skins = g.json.get("skins", [])
    joints = []
    if skins:
        skin = skins[skin_index]
        ibms = g.accessor(skin["inverseBindMatrices"]) if "inverseBindMatrices" in skin else None
        mesh_node = next((i for i, n in enumerate(nodes) if n.get("skin") == skin_index), None)
        to_mesh = mat_inverse(world(mesh_node)) if mesh_node is not None else None
        for j, node in enumerate(skin["joints"]):
            m = world(node)
            if to_mesh is not None:
                m = mat_mul(to_mesh, m)
            if ibms is not None:
                m = mat_mul(m, mat_from_column_major(ibms[j]))
            joints.append((node, m))
    else:
        joints = [(i, world(i)) for i in range(len(nodes))]
    out = []
    for node, m in joints:
        t, q, s = local[node]
        w = world(node)
        out.append({"name": nodes[node].get("name", ""), "node": node, "t": t, "r": q, "s": s,
                    "palette": [m[r][c] for c in range(4) for r in range(4)],
                    "world_extent": max(abs(w[r][3]) for r in range(3))})
    return {"model": path, "clip": clip_name, "time": time, "joints": out}


def compare(binary, model, times):
    g = Gltf(model)
    animations = g.json.get("animations", [])
    clips = ["rest"] + [str(i) for i in range(len(animations))]
    skins = max(1, len(g.json.get("skins", [])))
    worst = (0.0, "")
    checks = 0
    for skin in range(skins):
        for clip in clips:
            for t in times:
                ref = evaluate(model, clip, t, skin)
                got = json.loads(subprocess.run([binary, "eval", model, "--clip", clip, "--time", repr(t), "--skin", str(skin), "--json"], check=True, capture_output=True, text=True).stdout)
                if len(got["joints"]) != len(ref["joints"]):
                    print("joint count differs: %d vs %d" % (len(got["joints"]), len(ref["joints"])))
                    return 1
                for gj, rj in zip(got["joints"], ref["joints"]):
                    if gj["node"] != rj["node"]:
                        print("joint order differs: node %d vs %d" % (gj["node"], rj["node"]))
                        return 1
                    # Relative to the magnitudes the palette is computed from: a palette
                    # translation is world(joint) minus the bind translation, and in a model
                    # authored in centimetres both are ~100 while their difference is ~0.01.
                    scale = max(1.0, max(abs(v) for v in rj["palette"]), rj["world_extent"])
                    errs = [abs(a - b) / scale for a, b in zip(gj["palette"], rj["palette"])]
                    tscale = max(1.0, max(abs(v) for v in rj["t"]))
                    errs += [abs(a - b) / tscale for a, b in zip(gj["t"], rj["t"])]
                    errs += [min(sum(abs(a - b) for a, b in zip(gj["r"], rj["r"])), sum(abs(a + b) for a, b in zip(gj["r"], rj["r"])))]
                    errs += [abs(a - b) / max(1.0, abs(b)) for a, b in zip(gj["s"], rj["s"])]
                    e = max(errs)
                    checks += 1
                    if e > worst[0]:
                        worst = (e, "skin %d clip %s time %g joint '%s' (node %d)" % (skin, clip, t, rj["name"], rj["node"]))
    print("%s: %d joint evaluations, worst relative difference %.3g at %s" % (model, checks, worst[0], worst[1] or "-"))
    return 0 if worst[0] <= 1e-5 else 1


SKIP = 77  # ctest SKIP_RETURN_CODE: the model is not there (../shared/assets absent)


def main(argv):
    if len(argv) >= 4 and argv[1] == "--compare":
        times = [0.0, 0.1, 0.25, 0.5, 0.77, 1.0, 1.6, 2.5, 100.0, -1.0]
        if "--times" in argv:
            times = [float(v) for v in argv[argv.index("--times") + 1].split(",")]
        binary, model = argv[2], argv[3]
        if model.startswith("gen-rig:"):
            # The generated rig is written to a file first: this reader only reads files.
            import tempfile
            path = os.path.join(tempfile.mkdtemp(), "rig.glb")
            subprocess.run([binary, "gen-rig", "--joints", model.split(":", 1)[1], "--out", path], check=True, capture_output=True)
            model = path
        elif not os.path.exists(model):
            print("%s: not found, skipped" % model)
            return SKIP
        return compare(binary, model, times)
    model = argv[1]
    clip = argv[argv.index("--clip") + 1]
    time = float(argv[argv.index("--time") + 1]) if "--time" in argv else 0.0
    skin = int(argv[argv.index("--skin") + 1]) if "--skin" in argv else 0
    json.dump(evaluate(model, clip, time, skin), sys.stdout)
    print()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
