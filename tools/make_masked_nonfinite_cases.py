# Writes the cases of masked keys whose V is infinite or NaN (specs/golden-format.md, "Masked
# keys"), and their .npy inputs under cases/<operator>/masked_nonfinite/ (a case reads files in
# its own folder tree only). Run: python3 tools/make_masked_nonfinite_cases.py. No numpy: the
# files are version-1 .npy written here.
import json, os, random, struct
ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..')
DATA = 'masked_nonfinite'
MHCA = 'pmx.dynamic_batching.MultiHeadCacheAttention'
FIA = 'aclnn.FusedInferAttentionScoreV3'
SDPA = 'dnnl.SDPACompressedKV'

def npy(folder, name, descr, shape, packed):
    header = "{'descr': '%s', 'fortran_order': False, 'shape': (%s), }" % (
        descr, ''.join('%d, ' % n for n in shape).rstrip(' ') if len(shape) > 1 else '%d,' % shape[0])
    header += ' ' * (63 - (10 + len(header)) % 64) + '\n'
    os.makedirs(os.path.join(ROOT, 'cases', folder, DATA), exist_ok=True)
    with open(os.path.join(ROOT, 'cases', folder, DATA, name), 'wb') as f:
        f.write(b'\x93NUMPY\x01\x00' + struct.pack('<H', len(header)) + header.encode() + packed)
    return {'file': DATA + '/' + name}

def f16(folder, name, shape, values):
    return npy(folder, name, '<f2', shape, b''.join(struct.pack('<e', v) for v in values))

def f32(folder, name, shape, values):
    return npy(folder, name, '<f4', shape, b''.join(struct.pack('<f', v) for v in values))

def uniform(n, seed):
    rng = random.Random(seed)
    return [rng.uniform(-1, 1) for _ in range(n)]

def case(folder, body):
    with open(os.path.join(ROOT, 'cases', folder, body['name'] + '.json'), 'w') as f:
        json.dump(body, f, indent=2)
        f.write('\n')

INF, NAN = float('inf'), float('nan')
rows, D = 8, 128  # one prefill batch of 8 tokens, one head: row i sees keys 0..i (causal)

# MHCA, causal, int4: the last token's first group of V is 65504 (f16's largest), which
# quantizes to scale 9360 and code 7, and 7 * 9360 = 65520 dequantizes to +inf in f16.
v = uniform(rows * D, 1)
v[7 * D:7 * D + 8] = [65504.0] * 8
case(MHCA, {'op': MHCA, 'name': 'mhca_masked_inf_v_causal',
            'description': 'Causal prefill whose last key dequantizes to an infinite V (int4 of 65504): the '
                           'rows that do not see it stay finite, the last row is infinite',
            'seed': 1,
            'attributes': {'num_heads': 1, 'head_dim': D, 'is_causal': True, 'quant_bit': 4, 'quant_group': 8},
            'inputs': {'seqlens': [rows], 'start_pos': [0],
                       'query': f16(MHCA, 'mhca_query.npy', [rows, 1, D], uniform(rows * D, 2)),
                       'current_key': f16(MHCA, 'mhca_key.npy', [rows, 1, D], uniform(rows * D, 3)),
                       'current_value': f16(MHCA, 'mhca_value_65504.npy', [rows, 1, D], v)}})

# MHCA, attn_mask: key 7 is -inf for rows 0-6 and key 6 for rows 0-5; V of key 7 is 65504
# in its first group of 32, and of key 6 in its second (each dequantizes to +inf, as above;
# the int4 cache with groups of 32 is mhca_masks' pipeline).
v = uniform(rows * D, 1)
v[7 * D:7 * D + 32] = [65504.0] * 32
v[6 * D + 32:6 * D + 64] = [-65504.0] * 32
mask = [0.0] * (rows * rows)
for r in range(rows):
    for t in range(rows):
        if (t == 7 and r < 7) or (t == 6 and r < 6): mask[r * rows + t] = -INF
case(MHCA, {'op': MHCA, 'name': 'mhca_masked_inf_v_mask',
            'description': 'attn_mask -inf at the keys whose V dequantizes to +inf and -inf, for every row '
                           'but the last ones: a key of weight 0 adds nothing, whatever its V',
            'seed': 1,
            'attributes': {'num_heads': 1, 'head_dim': D, 'is_causal': False, 'quant_bit': 4,
                           'quant_group': 32, 'cache_layout': 2},
            'shapes': {'attn_mask_rank': 2},
            'inputs': {'seqlens': [rows], 'start_pos': [0],
                       'query': f16(MHCA, 'mhca_query.npy', [rows, 1, D], uniform(rows * D, 2)),
                       'current_key': f16(MHCA, 'mhca_key.npy', [rows, 1, D], uniform(rows * D, 3)),
                       'current_value': f16(MHCA, 'mhca_value_65504_groups.npy', [rows, 1, D], v),
                       'attn_mask': f16(MHCA, 'mhca_mask.npy', [rows, rows], mask)}})

# FIA, right-down causal (sparse mode 3), BNSD: V of key 7 +inf, of key 6 NaN.
d = 64
v = uniform(rows * d, 4)
v[7 * d + 5], v[6 * d + 9] = INF, NAN
case(FIA, {'op': FIA, 'name': 'fia_masked_nonfinite_v_causal',
           'description': 'Right-down causal prefill whose keys 6 and 7 hold a NaN and an infinite V: '
                          'the rows before them stay finite',
           'seed': 1,
           'attributes': {'numHeads': 1, 'inputLayout': 'BNSD', 'sparseMode': 3, 'attenMask_shape': '2048,2048'},
           'shapes': {'B': 1, 'S1': rows, 'S2': rows, 'D': d},
           'inputs': {'value': f16(FIA, 'fia_value_inf_nan.npy', [1, 1, rows, d], v)}})

# SDPA, bottom-right causal, int8 V: the scale of key 7's first group of 32 is +inf and of key
# 6's second NaN, so those V elements are +-inf or NaN (0 * inf for a zero code).
scales = [0.01] * (rows * 2)
scales[7 * 2], scales[6 * 2 + 1] = INF, NAN
case(SDPA, {'op': SDPA, 'name': 'sdpa_masked_nonfinite_v_causal',
            'description': 'Bottom-right causal attention whose keys 6 and 7 have a NaN and an infinite V scale: '
                           'the rows before them stay finite',
            'seed': 1,
            'attributes': {'group_size': 32, 'causal': 'bottom_right'},
            'shapes': {'N': 1, 'H': 1, 'S_q': rows, 'S_kv': rows, 'D': d},
            'inputs': {'scale_v': f32(SDPA, 'sdpa_scale_v_inf_nan.npy', [1, 1, rows, 2], scales)}})
