#!/usr/bin/env python3
"""Which head sizes change an attention kernel's lane arithmetic, and the sweep that covers them.

A head size D (and V's, DV) is a specialization constant of every attention kernel. Mostly it
only bounds loops, but where a kernel divides a row among lanes the way the division comes out
changes which lanes do what: the decode kernel's P.V puts KPV = SG / (DV / 8) keys side by side
and leaves lanes idle when that does not divide its SG lanes (issue 49: its last step read past
the block at DV 24 and 40 on 16 lanes, 24-80 on 32); the lanes kernel reads D / LANES elements
a lane, whole 32-bit words of int8/int4 codes or not (issue 49: FIA's int4 codes at D 16 and
32 read none). The suite's heads were 32-512, mostly powers of two, and met neither.

Each kernel's *lane signature* below is the tuple of those relations for one head size, as
the kernel's source computes them (shaders/attention_decode.glsl, attention_tiles.glsl,
attention_lanes.glsl and the operators' loaders; src/ops/*/..._vulkan.cpp for the host's
choice of a loader). Two head sizes with the same signature at every configuration run the
same lane arithmetic with other loop bounds. The sweep (cases/head_sizes/) takes every head
size a model uses and, for every configuration (kernel, subgroup size or lanes per item,
storage bits), the smallest multiple of 8 up to 256 of each signature that no other chosen
size has: `head_sizes.py classes` prints the classes, specs/attention-kernels.md
"Head sizes" the derivation.

So that a new kernel constant cannot escape the sweep, `check-spirv` reads every attention
module's named specialization-constant expressions (what `const uint X = ...` of spec
constants compiles to) and fails on a name that ROLES below does not place: a host-set
constant, a signature term, or a size that only bounds loops or memory.

Usage:
  head_sizes.py classes                 the classes per configuration, and the chosen sizes
  head_sizes.py sizes                   the sweep's head sizes, one line
  head_sizes.py cases DIR               writes the sweep's case files into DIR
  head_sizes.py check-cases DIR         exits 1 when DIR's files differ from what `cases` writes
  head_sizes.py check-spirv SPV_DIR     exits 1 when an attention module has an unplaced constant
  head_sizes.py pick FULL_LIST CONFIG   the fewest sweep cases that compile every head variant the
                                        sweep compiles at CONFIG (FULL_LIST: `kvbench list
                                        cases/head_sizes --slow include --pipelines` there)
  head_sizes.py check-pick CHOSEN_LIST FULL_LIST   exits 1 when the chosen cases miss a head variant
"""
import json
import os
import re
import subprocess
import sys

# Every head size of the model pack and of common models (Phi-2 80, Phi-3-mini 96, Gemma 256,
# Llama 128, GPT-J 256, Falcon 64, ...), and MLA's latent 512 + rope 64 (FIA).
MODEL_SIZES = [64, 80, 96, 112, 128, 160, 192, 256]
CANDIDATES = list(range(8, 257, 8))
DECODE_SUBGROUPS = [4, 8, 16, 32, 64]   # lavapipe at 128-1024 bits; NVIDIA 32; AMD wave64
LANES = [4, 8]                           # the lanes kernel's lanes per item (LANES, constant 15)
STORAGE_BITS = {"int4": 4, "int8": 8, "f16": 16, "f32": 32}
MHCA_QUANT_GROUP = 8                     # the sweep's quant_group (PMX's default)


def ceil_div(a, b):
    return -(-a // b)


# --- the signatures ---------------------------------------------------------------------

def decode_signature(sg, d, dv):
    """shaders/attention_decode.glsl: lane = key for the scores (8-element chunks of a K
    row), lane = 8-element V chunk for P.V, KPV keys side by side. The query vectors per
    item (NV) decide the heads split (HS) and FIA's V scales in registers with CPL: code
    variants the variant lists cover (tools/pick_variant_cases.py), at every head class
    here through CPL and DV."""
    nch, nchv = d // 8, dv // 8
    kpv = sg // nchv if sg >= nchv else 1
    cpl = 1 if sg >= nchv else ceil_div(nchv, sg)
    return (
        ("k_chunks>1", nch > 1),                       # the K loop loads the next chunk ahead
        ("v_row<=subgroup", nchv <= sg),               # CPL 1: each lane one V chunk
        ("keys_side_by_side", kpv > 1),                # KPV > 1
        ("kpv_divides_sg", sg % kpv == 0),             # the last P.V step stays in the block
        ("pv_lanes_all_busy", cpl == 1 and kpv * nchv == sg),
        ("last_chunks_full", cpl == 1 or nchv % sg == 0),
        ("v_rows_split_heads", dv > 256),              # HS whatever NV
    )


def tiles_signature(d, dv):
    """shaders/attention_tiles.glsl: 128 invocations, tiles of TK keys, K/V tiles loaded as
    TK * D / 8 chunks spread over the invocations, P.V by 16 invocations per vector."""
    tk = 16 if max(d, dv) <= 256 else 4
    return (
        ("TK", tk),
        ("k_tile_fills_rounds", (tk * (d // 8)) % 128 == 0),
        ("k_tile_one_round", tk * (d // 8) <= 128),
        ("v_tile_fills_rounds", (tk * (dv // 8)) % 128 == 0),
        ("v_tile_one_round", tk * (dv // 8) <= 128),
        ("pv_channels_full", dv % 16 == 0),           # CPV = ceil(DV / 16): the last one guarded
        ("d_is_dv", d == dv),
    )


def lanes_fit(op, lanes, d, dv, bits):
    """Whether the host gives these heads to the lanes kernel (attention_kernel.cpp)."""
    if d % 8 or dv % 8 or max(d, dv) > 256 or (lanes == 4 and max(d, dv) > 128):
        return False
    if op == "mhca" and bits < 16 and (d * bits) % 256 != 0:  # lanes_fit: whole words a lane
        return False
    return True


def lanes_signature(op, lanes, d, dv, bits):
    """shaders/attention_lanes.glsl with the operator's loaders: lane l holds D / LANES
    elements of every vector and loads that slice of each K/V row."""
    if not lanes_fit(op, lanes, d, dv, bits):
        return (("runs", "tiles"),)
    dpl, dplv = d // lanes, dv // lanes
    sig = [("runs", "lanes"), ("dpl_even", dpl % 2 == 0)]
    if op == "fia":
        # fia_vulkan.cpp kv_path / plain_kv: plain rows of whole uvec4s, codes of whole words
        # (by uvec4s when the slice fills them), else element by element.
        if bits >= 16:
            per_uvec4 = 128 // bits
            sig.append(("plain_uvec4", dpl % per_uvec4 == 0 and dplv % per_uvec4 == 0 and d % per_uvec4 == 0))
        else:
            whole = (dpl * bits) % 32 == 0 and (dplv * bits) % 32 == 0
            sig.append(("codes_whole_words", whole))
            sig.append(("codes_uvec4", whole and (dpl * bits) % 128 == 0 and (dplv * bits) % 128 == 0))
    if op == "mhca" and bits < 16:
        words = dpl * bits // 32                      # WORDS of mhca_attention.comp
        qg = MHCA_QUANT_GROUP
        sig += [("words_uvec4", words % 4 == 0), ("words_uvec2", words % 2 == 0),
                ("groups_in_lane", dpl % qg == 0), ("lane_in_group", qg % dpl == 0),
                ("scale_pairs", dpl % qg == 0 and (dpl // qg) % 2 == 0)]
    return tuple(sig)


# The configurations the sweep must cover: (label, function of D -> signature). FIA's FP4
# codes go through the general path, as int4 codes do where their slices are not whole words.
def configurations():
    configs = []
    for sg in DECODE_SUBGROUPS:
        configs.append((f"decode SG {sg}", lambda d, sg=sg: decode_signature(sg, d, d)))
    configs.append(("tiles", lambda d: tiles_signature(d, d)))
    for op, storages in (("sdpa", ["int8"]), ("mhca", ["int4", "int8", "f16"]), ("fia", ["int4", "int8", "f16", "f32"])):
        for storage in storages:
            for lanes in LANES:
                bits = STORAGE_BITS[storage]
                configs.append((f"lanes {op} {storage} LANES {lanes}",
                                lambda d, op=op, lanes=lanes, bits=bits: lanes_signature(op, lanes, d, d, bits)))
    return configs


def classes_of(signature):
    """{signature: [head sizes]} over the candidates."""
    out = {}
    for d in CANDIDATES:
        out.setdefault(signature(d), []).append(d)
    return out


def chosen_sizes():
    """Every model size, then per configuration the smallest size of each class that no
    size chosen so far falls in."""
    chosen = set(MODEL_SIZES)
    for _, signature in configurations():
        for sizes in classes_of(signature).values():
            if not chosen & set(sizes):
                chosen.add(sizes[0])
    return sorted(chosen)


# --- the sweep's case files --------------------------------------------------------------

# Small shapes: one kv head, its GQA group of 1, 2, 4 or 8 query heads, S_kv 137 (four blocks
# of 32 keys and a partial one: several key blocks per subgroup at every width, and splits),
# a decode (one query row) and a causal prefill of 3 rows.
GROUPS = [1, 2, 4, 8]
KEYS = 137


def sdpa_case(sizes):
    return {
        "op": "dnnl.SDPACompressedKV",
        "name": "sdpa_head_sizes",
        "description": "The head-size sweep (tools/head_sizes.py): every head size a model uses and every multiple of 8 "
                       "that changes a kernel's lane arithmetic, K and V s8 or s4 with s8 zero points, GQA groups "
                       "1-8, decode and causal prefill",
        "slow": True,
        "seed": 7001,
        "attributes": {"group_size": 8, "k_zero_point": True, "v_zero_point": True, "causal": "bottom_right"},
        "shapes": {"N": 1, "H": 1, "H_kv": 1, "S_q": 1, "S_kv": KEYS, "D": sizes[0]},
        "dtypes": {"query": "f16", "key": "i8", "value": "i8", "zp_k": "i8", "zp_v": "i8"},
        "sweep": {"D": sizes, "H": GROUPS, "S_q": [1, 3], "key": ["i8", "s4"], "value": ["i8", "s4"]},
    }


def mhca_case(sizes):
    return {
        "op": "pmx.dynamic_batching.MultiHeadCacheAttention",
        "name": "mhca_head_sizes",
        "description": "The head-size sweep (tools/head_sizes.py): every head size a model uses and every multiple of 8 "
                       "that changes a kernel's lane arithmetic, an f16 (quant_bit 0), int8 or int4 paged cache, GQA "
                       "groups 1-8, decode and causal prefill",
        "slow": True,
        "seed": 7002,
        "attributes": {"num_heads": 1, "head_dim": sizes[0], "num_kv_heads": 1, "is_causal": True, "quant_bit": 8,
                       "quant_group": MHCA_QUANT_GROUP, "cache_mode": 1, "page_size": 16},
        "inputs": {"seqlens": [1], "start_pos": [KEYS - 1]},
        "dtypes": {"query": "f16"},
        "sweep": {"head_dim": sizes, "num_heads": GROUPS, "seqlens": [[1], [3]], "quant_bit": [0, 8, 4]},
    }


def fia_cases(sizes):
    """Plain f16/bf16/f32 K/V (the query's dtype), int8/int4 codes (per-channel with offsets and
    per-token), int8 codes in page-attention blocks, FP4 codes (per-token-group, decodes, D a
    multiple of 32), MLA's 512 + 64."""
    base = {
        "op": "aclnn.FusedInferAttentionScoreV3",
        "slow": True,
        "attributes": {"numHeads": 1, "numKeyValueHeads": 1, "scaleValue": 0.1, "inputLayout": "BNSD",
                       "softmaxLseFlag": True},
        "shapes": {"B": 1, "S1": 1, "S2": KEYS, "D": sizes[0]},
        "inputs": {"actualSeqLengthsKv": [KEYS]},
    }
    what = ("The head-size sweep (tools/head_sizes.py): every head size a model uses and every multiple of 8 that "
            "changes a kernel's lane arithmetic, GQA groups 1-8, decode and prefill, ")

    def case(name, seed, description, attributes=None, dtypes=None, sweep=None, shapes=None):
        c = json.loads(json.dumps(base))
        c["name"], c["seed"], c["description"] = name, seed, what + description
        c["attributes"].update(attributes or {})
        c["shapes"].update(shapes or {})
        if dtypes:
            c["dtypes"] = dtypes
        c["sweep"] = sweep
        # keys in the order of the other case files
        order = ["op", "name", "description", "slow", "seed", "attributes", "shapes", "inputs", "dtypes", "sweep"]
        return {k: c[k] for k in order if k in c}

    return {
        "fia_plain.json": case("fia_head_sizes_plain", 7003, "K/V in the query's f16, bf16 or f32",
                               dtypes={"query": "f16"},
                               sweep={"D": sizes, "numHeads": GROUPS, "S1": [1, 3], "query": ["f16", "bf16", "f32"]}),
        "fia_codes.json": case("fia_head_sizes_codes", 7004,
                               "int8 and int4 K/V codes per channel with offsets (mode 0) and per token (mode 1)",
                               attributes={"antiquant_offset": True, "keyAntiquantMode": 0},
                               dtypes={"query": "f16", "key": "i8"},
                               sweep={"D": sizes, "numHeads": GROUPS, "S1": [1, 3], "key": ["i8", "s4"],
                                      "keyAntiquantMode": [0, 1]}),
        "fia_paged.json": case("fia_head_sizes_paged", 7007,
                               "int8 K/V codes per channel with offsets in page-attention blocks of 16 (int4 has no "
                               "page attention)",
                               attributes={"antiquant_offset": True, "keyAntiquantMode": 0, "blockSize": 16},
                               dtypes={"query": "bf16", "key": "i8"},
                               sweep={"D": sizes, "numHeads": GROUPS, "S1": [1, 3]}),
        "fia_fp4.json": case("fia_head_sizes_fp4", 7005,
                             "FP4 (E2M1) K/V codes with a FLOAT8_E8M0 scale per 32 channels (mode 6: decodes, head "
                             "sizes that are multiples of 32)",
                             attributes={"keyAntiquantMode": 6, "inputLayout": "BSND"},
                             dtypes={"key": "f4e2m1"},
                             sweep={"D": [d for d in sizes if d % 32 == 0], "numHeads": GROUPS}),
        "fia_mla.json": case("fia_head_sizes_mla", 7006,
                             "MLA's latent 512 + rope 64 in blocks of 16 (the heads split over the decode kernel's "
                             "subgroups)",
                             attributes={"inputLayout": "BSND", "blockSize": 16},
                             shapes={"D": 512, "rope": 64},
                             dtypes={"query": "bf16"},
                             sweep={"numHeads": [1, 4, 8, 16], "S1": [1, 3]}),
    }


def all_cases():
    sizes = chosen_sizes()
    files = {"sdpa.json": sdpa_case(sizes), "mhca.json": mhca_case(sizes)}
    files.update(fia_cases(sizes))
    return files


def write_cases(directory):
    os.makedirs(directory, exist_ok=True)
    for name, case in all_cases().items():
        with open(os.path.join(directory, name), "w", encoding="utf-8") as f:
            f.write(render(case))


def render(case):
    return json.dumps(case, indent=2) + "\n"


# --- the head variants of a pipeline --------------------------------------------------------

def parse_key(key):
    """(shader, {constant id: value}) of a pipeline key as `kvbench list --pipelines` prints
    it: values by position from id 0 while the ids run on, then `id=value`; `sg=N` is the
    required subgroup size."""
    shader, *parts = key.split(":")
    constants, position = {}, 0
    for part in parts:
        if part.startswith("sg="):
            continue
        if "=" in part:
            i, v = part.split("=")
            constants[int(i)] = int(v)
        else:
            constants[position] = int(part)
            position += 1
    return shader, constants


# Specialization constant ids (shaders/*_attention.comp, attention_core.glsl).
D_ID, FIA_DV_ID, FIA_KV_PATH_ID, FIA_CODES_UVEC4_ID, MHCA_CACHE_BITS_ID, LANES_ID, SG_ID = 0, 1, 2, 7, 1, 15, 16


def head_signature(key):
    """The lane signature of an attention pipeline's head sizes for its body, or None for
    other pipelines (the merges)."""
    shader, c = parse_key(key)
    m = re.match(r"(fia|mhca|sdpa)_attention(_tiles|_decode|_decode_f16)?$", shader)
    if not m or D_ID not in c:
        return None
    op, body = m.group(1), (m.group(2) or "").removesuffix("_f16")
    d = c[D_ID]
    dv = c.get(FIA_DV_ID, d) if op == "fia" else d
    if body == "_decode":
        return decode_signature(c[SG_ID], d, dv)
    if body == "_tiles":
        return tiles_signature(d, dv)
    lanes = c.get(LANES_ID, 8)
    if op == "fia":
        # The loader the host chose from the head sizes is in the key: KV_PATH (0 element by
        # element, 1 plain uvec4 rows, 2/3 int8/int4 codes by words) and CODES_UVEC4.
        return (("runs", "lanes"), ("dpl_even", (d // lanes) % 2 == 0), ("KV_PATH", c.get(FIA_KV_PATH_ID, 0)),
                ("CODES_UVEC4", c.get(FIA_CODES_UVEC4_ID, 0)))
    return lanes_signature(op, lanes, d, dv, c.get(MHCA_CACHE_BITS_ID, 8) if op == "mhca" else 8)


def head_variants(cases):
    """{case: {(shader, signature)}} from `kvbench list --pipelines` output: what each case
    compiles of each attention body's head classes (the shader names the body and the
    operator's hooks; the code variants of the other constants are the variant lists' job,
    tools/pick_variant_cases.py)."""
    out = {}
    for name, keys in cases.items():
        out[name] = {(k.split(":")[0], sig) for k in keys for sig in [head_signature(k)] if sig is not None}
    return out


def pick(pipelines_path):
    """The fewest sweep cases (greedy, small heads and decodes first) that compile every head
    variant the whole sweep compiles at this configuration."""
    cases = read_pipelines(pipelines_path)
    variants = {n: v for n, v in head_variants(cases).items() if v}
    weight = {n: 1.0 + sum(parse_key(k)[1].get(D_ID, 0) / 32 for k in cases[n]) for n in variants}
    missing = set().union(*variants.values()) if variants else set()
    total, chosen = len(missing), []
    while missing:
        best = max(sorted(variants), key=lambda n: len(variants[n] & missing) / weight[n])
        chosen.append(best)
        missing -= variants[best]
    return chosen, total


def check_pick(chosen_path, full_path):
    full = set().union(*head_variants(read_pipelines(full_path)).values())
    chosen = set().union(*head_variants(read_pipelines(chosen_path)).values())
    missing = sorted(full - chosen, key=str)
    for shader, sig in missing:
        print(f"missing: {shader} with " + ", ".join(f"{k}={v}" for k, v in sig))
    print(f"{len(full) - len(missing)} of {len(full)} head variants of the sweep in the list")
    return 1 if missing else 0


def read_pipelines(path):
    """{case name: [pipeline keys]} from `kvbench list --pipelines` output."""
    cases = {}
    for line in open(path, encoding="utf-8"):
        name, sep, rest = line.rstrip("\n").partition("  pipelines:")
        rest = rest.partition("  scratch:")[0]  # the kernels' scratch bytes, after the keys
        if sep:
            cases[name] = rest.split()
    return cases


# --- the check of the shaders' constants -------------------------------------------------

# Every named specialization-constant expression of an attention module, by role. glslang
# suffixes a name that repeats (per_word_0, bits_5): the suffix is dropped.
ROLES = {
    # set by the host (the pipeline key)
    "host": {"D", "D_0", "FIA_DV", "DQK", "KV_PATH", "K_PER_CHANNEL", "V_PER_CHANNEL", "HAS_OFFSET",
             "CODES_UVEC4", "TEXELS", "SCORE_LOADS", "LANES", "SG", "NV", "HS", "CACHE_BITS", "QG",
             "PAGE_SIZE", "SCALE_F16", "SCORE_ADDS", "PER_WORD", "gl_WorkGroupSize"},
    # terms of a signature above
    "signature": {"KPV", "CPL", "NCH", "NCHV", "DPL", "DPLV_LANES", "WORDS", "per_word", "bits", "groups_in_lane",
                  "lane_in_group", "NS", "TK", "CPV", "MAXD", "V_CHANNELS_CACHED", "PLAIN_KV", "CODES_KV",
                  "ELEMENT_CODES"},
    # sizes: shared-memory extents and strides that follow from the above, loop bounds
    "size": {"Q4", "BUF4", "LOOP4", "END4", "STATE", "SG4", "WG", "KS", "NVS", "block_step", "ng", "sbits"},
}


def named_spec_constants(spv):
    text = subprocess.run(["spirv-dis", spv], check=True, capture_output=True, text=True).stdout
    names = set()
    for m in re.finditer(r"^\s*%([A-Za-z_][A-Za-z0-9_]*) = OpSpecConstant", text, re.M):
        names.add(re.sub(r"_\d+$", "", m.group(1)) if m.group(1) not in ROLES["host"] else m.group(1))
    return names


def check_spirv(directory):
    known = set().union(*ROLES.values())
    status = 0
    modules = sorted(f for f in os.listdir(directory) if re.match(r"(fia|mhca|sdpa)_attention.*\.spv$", f))
    if not modules:
        print(f"{directory}: no attention modules (*_attention*.spv)")
        return 1
    for f in modules:
        unplaced = sorted(named_spec_constants(os.path.join(directory, f)) - known)
        for name in unplaced:
            print(f"{f}: constant {name} is in no role of tools/head_sizes.py ROLES: if it depends on a head size "
                  f"and on lanes, add it to a signature; if it only bounds loops or memory, to 'size'")
            status = 1
    print(f"{len(modules)} attention modules: every named constant placed" if status == 0 else "FAIL")
    return status


# --- main ----------------------------------------------------------------------------------

def print_classes():
    chosen = set(chosen_sizes())
    for label, signature in configurations():
        classes = classes_of(signature)
        print(f"{label}: {len(classes)} classes")
        for sig, sizes in classes.items():
            terms = ", ".join(f"{k}={v}" for k, v in sig)
            picked = sorted(chosen & set(sizes))
            print(f"  {terms}\n    sizes {sizes}; in the sweep: {picked}")
    print("sweep:", " ".join(map(str, sorted(chosen))))


def main(argv):
    if len(argv) < 2:
        print(__doc__)
        return 2
    cmd = argv[1]
    if cmd == "classes":
        print_classes()
    elif cmd == "sizes":
        print(" ".join(map(str, chosen_sizes())))
    elif cmd == "cases" and len(argv) == 3:
        write_cases(argv[2])
    elif cmd == "check-cases" and len(argv) == 3:
        status = 0
        for name, case in all_cases().items():
            path = os.path.join(argv[2], name)
            if not os.path.exists(path) or open(path, encoding="utf-8").read() != render(case):
                print(f"{path} differs from what tools/head_sizes.py writes: make it anew with "
                      f"tools/head_sizes.py cases {argv[2]}")
                status = 1
        return status
    elif cmd == "check-spirv" and len(argv) == 3:
        return check_spirv(argv[2])
    elif cmd == "pick" and len(argv) == 4:
        chosen, total = pick(argv[2])
        print(f"# {len(chosen)} cases of the head-size sweep that compile all {total} head variants at {argv[3]}")
        print("# made by tools/head_sizes.py pick; checked by tests/head_sizes.sh")
        for name in sorted(chosen):
            print(name)
    elif cmd == "check-pick" and len(argv) == 4:
        return check_pick(argv[2], argv[3])
    else:
        print(__doc__)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
