#!/usr/bin/env python3
"""Writes structurally different but equivalent-or-known variants of a .gltf (JSON) file, to check
the importer against the independent reference (gltf_eval_reference.py) on shapes the sample
models do not have:
  reversed   nodes listed in reverse order (children before parents), every reference remapped
  parented   scene roots moved under a new transformed node; the mesh node gets a transform too
  quantized  LINEAR/STEP rotation outputs re-encoded as normalized SHORT
  sparse     rotation outputs re-encoded as sparse accessors over a zero-filled base
  matrix     un-animated nodes given as `matrix` instead of TRS
  twoskins   the skin duplicated (a second skin over the same joints, used by a copy of the mesh node)
usage: make_variants.py IN.gltf OUT_DIR           writes OUT_DIR/<variant>.gltf
       make_variants.py --check POSECAST IN.gltf   writes them to a temporary folder and checks
                                                   `POSECAST eval` on each against the reference
"""
import base64
import copy
import json
import os
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gltf_eval_reference as ref  # noqa: E402


def add_buffer(doc, data):
    doc.setdefault("buffers", []).append({"byteLength": len(data), "uri": "data:application/octet-stream;base64," + base64.b64encode(data).decode()})
    doc.setdefault("bufferViews", []).append({"buffer": len(doc["buffers"]) - 1, "byteLength": len(data)})
    return len(doc["bufferViews"]) - 1


def inline_buffers(doc, gltf):
    for i, b in enumerate(doc.get("buffers", [])):
        b["uri"] = "data:application/octet-stream;base64," + base64.b64encode(gltf.buffers[i]).decode()
    for img in doc.get("images", []):
        img.pop("uri", None) if False else None


def reversed_nodes(doc):
    n = len(doc["nodes"])
    remap = {i: n - 1 - i for i in range(n)}
    doc["nodes"] = list(reversed(doc["nodes"]))
    for node in doc["nodes"]:
        if "children" in node:
            node["children"] = [remap[c] for c in node["children"]]
    for skin in doc.get("skins", []):
        skin["joints"] = [remap[j] for j in skin["joints"]]
        if "skeleton" in skin:
            skin["skeleton"] = remap[skin["skeleton"]]
    for scene in doc.get("scenes", []):
        scene["nodes"] = [remap[i] for i in scene["nodes"]]
    for anim in doc.get("animations", []):
        for ch in anim["channels"]:
            if "node" in ch["target"]:
                ch["target"]["node"] = remap[ch["target"]["node"]]


def parented(doc):
    roots = doc["scenes"][doc.get("scene", 0)]["nodes"]
    doc["nodes"].append({"name": "variant_parent", "translation": [0.5, -1.25, 2.0], "rotation": [0.2, 0.3, -0.1, 0.927362], "scale": [1.5, 1.5, 1.5], "children": list(roots)})
    doc["scenes"][doc.get("scene", 0)]["nodes"] = [len(doc["nodes"]) - 1]
    for node in doc["nodes"]:
        if "skin" in node and "matrix" not in node:
            node["translation"] = [0.1, 0.2, 0.3]
            node["rotation"] = [0.0, 0.38268343, 0.0, 0.92387953]


def reencode_rotations(doc, gltf, sparse):
    for anim in doc.get("animations", []):
        for ch in anim["channels"]:
            if ch["target"]["path"] != "rotation":
                continue
            sampler = anim["samplers"][ch["sampler"]]
            if sampler.get("interpolation", "LINEAR") == "CUBICSPLINE":
                continue
            values = gltf.accessor(sampler["output"])
            if sparse:
                data = b"".join(struct.pack("<4f", *v) for v in values)
                idx = b"".join(struct.pack("<I", i) for i in range(len(values)))
                doc["accessors"].append({"componentType": 5126, "count": len(values), "type": "VEC4",
                                         "sparse": {"count": len(values), "indices": {"bufferView": add_buffer(doc, idx), "componentType": 5125},
                                                    "values": {"bufferView": add_buffer(doc, data)}}})
            else:
                data = b"".join(struct.pack("<4h", *[max(-32767, min(32767, round(c * 32767))) for c in ref.normalise(list(v))]) for v in values)
                doc["accessors"].append({"bufferView": add_buffer(doc, data), "componentType": 5122, "normalized": True, "count": len(values), "type": "VEC4"})
            sampler["output"] = len(doc["accessors"]) - 1


def matrices(doc):
    animated = {ch["target"].get("node") for a in doc.get("animations", []) for ch in a["channels"]}
    for i, node in enumerate(doc["nodes"]):
        if i in animated or "matrix" in node:
            continue
        m = ref.mat_trs(node.get("translation", [0, 0, 0]), ref.normalise(node.get("rotation", [0, 0, 0, 1])), node.get("scale", [1, 1, 1]))
        for key in ("translation", "rotation", "scale"):
            node.pop(key, None)
        node["matrix"] = [m[r][c] for c in range(4) for r in range(4)]


def two_skins(doc):
    doc["skins"].append(copy.deepcopy(doc["skins"][0]))
    for i, node in enumerate(list(doc["nodes"])):
        if node.get("skin") == 0:
            twin = copy.deepcopy(node)
            twin["skin"] = 1
            twin["name"] = node.get("name", "") + "_twin"
            twin.pop("children", None)
            doc["nodes"].append(twin)
            doc["scenes"][doc.get("scene", 0)]["nodes"].append(len(doc["nodes"]) - 1)
            break


def check(binary, src):
    import tempfile
    if not os.path.exists(src):
        print("%s: not found, skipped" % src)
        return ref.SKIP
    out_dir = tempfile.mkdtemp()
    write_variants(src, out_dir)
    failures = 0
    for name in sorted(os.listdir(out_dir)):
        failures += ref.compare(binary, os.path.join(out_dir, name), [0.0, 0.3, 0.77, 1.5]) != 0
    return 1 if failures else 0


def main(argv):
    if len(argv) == 4 and argv[1] == "--check":
        return check(argv[2], argv[3])
    write_variants(argv[1], argv[2])
    return 0


def write_variants(src, out_dir):
    gltf = ref.Gltf(src)
    os.makedirs(out_dir, exist_ok=True)
    base = copy.deepcopy(gltf.json)
    inline_buffers(base, gltf)
    for img in base.get("images", []):
        if "uri" in img and not img["uri"].startswith("data:"):
            img.pop("uri")
            img["bufferView"] = add_buffer(base, b"")
            img["mimeType"] = "image/png"
    variants = {
        "reversed": lambda d: reversed_nodes(d),
        "parented": lambda d: parented(d),
        "quantized": lambda d: reencode_rotations(d, gltf, sparse=False),
        "sparse": lambda d: reencode_rotations(d, gltf, sparse=True),
        "matrix": lambda d: matrices(d),
        "twoskins": lambda d: two_skins(d),
    }
    for name, make in variants.items():
        doc = copy.deepcopy(base)
        if name == "twoskins" and not doc.get("skins"):
            continue
        make(doc)
        with open(os.path.join(out_dir, name + ".gltf"), "w") as f:
            json.dump(doc, f)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
