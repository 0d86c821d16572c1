# Regenerates tests/data/hostile/ and tests/data/hostile_expected.json: one hostile case file
# per problem, with the pointer and message kvbench must report. Run: python3 tools/make_hostile_cases.py
# Cases written by hand into the catalogue (and their entries in hostile_expected.json) are
# kept: the script rewrites only the cases it makes.
import json, os, copy, shutil, struct
import numpy as np
ROOT=os.path.join(os.path.dirname(os.path.abspath(__file__)), '..')
D=os.path.join(ROOT, 'tests/data/hostile')
# The data files of the file-input cases (one problem each, beside the case files).
F=os.path.join(D,'files')
shutil.rmtree(F, ignore_errors=True); os.makedirs(F)
kvc={"op":"pmx.KeyValueCache","name":"h","seed":1,"attributes":{"num_layer":1,"layer_idx":0,"quant_bit":8},
     "shapes":{"batch":1,"seqlen":2,"num_heads":2,"head_dim":16,"max_seqlen":8},"inputs":{"start_pos":1}}
mhca={"op":"pmx.dynamic_batching.MultiHeadCacheAttention","name":"h","seed":1,
      "attributes":{"num_heads":4,"head_dim":64,"is_causal":True},"inputs":{"seqlens":[2],"start_pos":[3]}}
sdpa={"op":"dnnl.SDPACompressedKV","name":"h","seed":1,"attributes":{"group_size":32},
      "shapes":{"N":1,"H":2,"S_q":1,"S_kv":16,"D":64}}
omni={"op":"atb.ReshapeAndCacheOmni","name":"h","seed":1,"shapes":{"num_head":2,"head_size":32,"num_blocks":4,"block_size":16},
      "inputs":{"seqLen":[5],"wins":[2,0],"offsetIndex":[1,-1]}}
plain={"op":"atb.ReshapeAndCache","name":"h","seed":1,"shapes":{"num_tokens":4,"num_heads":2,"head_size":32,"num_blocks":2,"block_size":4}}
qg={"op":"kvbench.QuantizeGroup","name":"h","seed":1,"attributes":{"bits":8,"group_size":8},"shapes":{"rows":2,"length":16}}
dq={"op":"kvbench.DequantizeGroup","name":"h","seed":1,"attributes":{"formula":"onednn","bits":8,"group_size":8,"with_zero_point":True},"shapes":{"rows":2,"length":16}}
fia={"op":"aclnn.FusedInferAttentionScoreV3","name":"h","seed":1,"attributes":{"numHeads":4},
     "shapes":{"B":1,"S1":4,"S2":16,"D":32}}
fia_decode=dict(copy.deepcopy(fia), shapes={"B":1,"S1":1,"S2":16,"D":32})
expected=json.load(open(os.path.join(ROOT, 'tests/data/hostile_expected.json')))
def add(name, doc, pointer, message, raw=None):
    path=os.path.join(D,name+'.json')
    if raw is not None:
        open(path,'w').write(raw)
    else:
        d=copy.deepcopy(doc); d["name"]=name.replace('-','_'); 
        open(path,'w').write(json.dumps(d))
    old=expected.get(name+'.json')
    if old and old["pointer"]==pointer and message in old["message"]: return  # made more precise by hand
    expected[name+'.json']={"pointer":pointer,"message":message}
def m(base, **kw):
    d=copy.deepcopy(base)
    for path,v in kw.items():
        sec,key=path.split('__')
        if v is DEL: d[sec].pop(key)
        else: d.setdefault(sec,{})[key]=v
    return d
class _D: pass
DEL=_D()
# JSON and file-level
add('truncated_json', None, '', 'invalid JSON', raw='{"op": "pmx.KeyValueCache", "name": "x"')
add('number_1e400_in_range', None, '', 'invalid JSON', raw=json.dumps(kvc)[:-1]+', "ranges": {"current_key": [-1, 1e400]}}')
add('nested_100000_arrays', None, '', 'nest deeper than 64', raw='{"op":"pmx.KeyValueCache","name":"x","seed":1,"attributes":{"num_layer":'+'['*100000+']'*100000+'}}')
add('nested_30000_in_description', None, '', 'nest deeper than 64', raw='{"op":"pmx.KeyValueCache","name":"x","seed":1,"description":'+'['*30000+']'*30000+'}')
add('whole_document_nested', None, '', 'nest deeper than 64', raw='['*50000+']'*50000)
add('top_level_array', None, '', 'expected object', raw='[1, 2, 3]')
add('empty_file', None, '', 'invalid JSON', raw='')
add('name_30000_chars', None, '/name', 'must not be longer than 200', raw=json.dumps(dict(kvc, name='a'*30000)))
add('name_with_slash', None, '/name', 'does not match', raw=json.dumps(dict(kvc, name='a/b')))
add('unknown_top_level_key', None, '/attribute', 'unknown field', raw=json.dumps(dict(kvc, attribute={})))
add('seed_negative', None, '/seed', 'below the minimum', raw=json.dumps(dict(kvc, seed=-1)))
add('seed_string', None, '/seed', 'expected integer', raw=json.dumps(dict(kvc, seed="1")))
add('seed_2_pow_64', None, '/seed', '', raw=json.dumps(kvc)[:-1]+', "seed": 18446744073709551616}')
add('seed_float_2_pow_64', None, '/seed', 'expected integer', raw=json.dumps(kvc)[:-1]+', "seed": 1.8446744073709552e19}')
add('op_unknown', dict(kvc, op="pmx.KeyValueCach"), '/op', 'unknown operator')
add('op_missing', None, '/op', 'required field is missing', raw=json.dumps({k:v for k,v in kvc.items() if k!='op'}))
# sweeps
add('sweep_7_keys_40_values', dict(m(kvc, attributes__num_repeat=1, attributes__quant_group=8), sweep={k:list(range(1,41)) for k in ["num_layer","layer_idx","quant_group","num_repeat","batch","seqlen","num_heads"]}), '/sweep', 'expands to more than 10000')
add('sweep_unknown_key', dict(m(kvc), sweep={"quant_bits":[4,8]}), '/sweep/quant_bits', 'must also be given a value')
add('sweep_empty_list', dict(m(kvc), sweep={"quant_bit":[]}), '/sweep/quant_bit', 'at least 1')
add('sweep_bad_value', dict(m(kvc), sweep={"quant_bit":[8,3]}), '/sweep/quant_bit/1', 'must be one of')
add('sweep_not_array', dict(m(kvc), sweep={"quant_bit":8}), '/sweep/quant_bit', 'expected array')
# attributes/shapes/inputs: unknown, misplaced, types, bounds
add('attribute_misspelled', m(kvc, attributes__quant_bits=8), '/attributes/quant_bits', "did you mean 'quant_bit'")
add('attribute_in_shapes', m(kvc, shapes__num_repeat=2), '/shapes/num_repeat', 'belongs in attributes')
add('shape_in_attributes', m(kvc, attributes__head_dim=16), '/attributes/head_dim', 'belongs in shapes')
add('input_unknown', m(kvc, inputs__start=1), '/inputs/start', 'unknown key')
add('mhca_is_albi', m(mhca, attributes__is_albi=True), '/attributes/is_albi', "did you mean 'is_alibi'")
add('attribute_float_for_integer', m(kvc, attributes__num_layer=1.5), '/attributes/num_layer', 'must be an integer')
add('attribute_string_for_integer', m(kvc, attributes__quant_group="8"), '/attributes/quant_group', 'must be an integer')
add('attribute_bool_2', m(mhca, attributes__is_causal=2), '/attributes/is_causal', 'true or false')
add('attribute_not_allowed', m(kvc, attributes__quant_bit=3), '/attributes/quant_bit', 'must be one of')
add('attribute_below_min', m(kvc, attributes__num_layer=0), '/attributes/num_layer', 'at least 1')
add('attribute_required_missing', m(kvc, attributes__quant_bit=DEL), '/attributes/quant_bit', 'is required')
add('attribute_object_value', None, '/attributes/num_layer', 'expected', raw=json.dumps(m(kvc, attributes__num_layer={"a":1})))
add('attribute_null', None, '/attributes/num_layer', 'expected', raw=json.dumps(m(kvc, attributes__num_layer=None)))
add('shape_negative', None, '/shapes/batch', 'below the minimum', raw=json.dumps(m(kvc, shapes__batch=-1)))
add('shape_2_pow_40', m(kvc, shapes__head_dim=2**40), '/shapes/head_dim', 'at most 2147483647')
add('start_pos_int64_max', m(kvc, inputs__start_pos=2**63-1), '/inputs/start_pos', 'at most 2147483647')
add('start_pos_past_end', m(kvc, inputs__start_pos=7), '/inputs/start_pos', 'exceeds max_seqlen')
add('sdpa_scale_string', m(sdpa, attributes__scale="0.1"), '/attributes/scale', 'must be a finite number')
add('sdpa_scale_bool', m(sdpa, attributes__scale=True), '/attributes/scale', 'must be a finite number')
add('sdpa_scale_big_string', m(sdpa, attributes__scale="big"), '/attributes/scale', 'must be a finite number')
add('sdpa_scale_negative', m(sdpa, attributes__scale=-1.0), '/attributes/scale', 'positive')
add('sdpa_mask_unknown', m(sdpa, attributes__mask="N,H,Skv"), '/attributes/mask', 'must be one of')
add('sdpa_group_not_dividing', m(sdpa, attributes__group_size=48), '/attributes/group_size', 'must divide D')
add('mhca_seqlens_string_element', m(mhca, inputs__seqlens=[2,"3"]), '/inputs/seqlens/1', 'expected integer')
add('mhca_seqlens_zero', m(mhca, inputs__seqlens=[0]), '/inputs/seqlens/0', 'at least 1')
add('mhca_start_pos_count', m(mhca, inputs__start_pos=[1,2]), '/inputs/start_pos', 'one entry per batch')
add('mhca_kv_heads_not_dividing', m(mhca, attributes__num_kv_heads=3), '/attributes/num_kv_heads', 'divisible')
add('mhca_2_pow_40_pages', m(mhca, attributes__cache_mode=1, attributes__page_size=1, inputs__start_pos=[2**31-3]), '/inputs/start_pos', 'over the memory budget')
add('kvc_40_gb_cache', m(kvc, shapes__max_batch=1024, shapes__max_seqlen=65536, shapes__num_heads=32, shapes__head_dim=128, attributes__num_layer=4, attributes__quant_bit=0), '/shapes', 'over the budget')
add('kvc_numel_wraps', m(kvc, shapes__batch=2**21, shapes__max_batch=2**21, shapes__num_heads=2**21, shapes__head_dim=2**21, attributes__quant_bit=0), '/shapes', 'more elements than 2^64')
add('plain_2_pow_40_slots', m(plain, shapes__num_blocks=2**20, shapes__block_size=2**20), '/shapes/num_blocks', 'over the memory budget')
add('omni_500_runs', m(omni, shapes__num_head=500, inputs__seqLen=[1], inputs__wins=[0]*500, inputs__offsetIndex=[-1]*500), '/shapes/num_head', 'below 500')
add('omni_wins_count', m(omni, inputs__wins=[1]), '/inputs/wins', 'entries')
add('plain_slot_outside', m(plain, inputs__slot_mapping=[0,1,2,8]), '/inputs/slot_mapping/3', 'outside')
add('plain_slot_reused', m(plain, inputs__slot_mapping=[0,1,1,2]), '/inputs/slot_mapping/2', 'is used by tokens')
add('plain_padding_with_slots', m(plain, shapes__padding_tokens=1, inputs__slot_mapping=[0,1,2,3]), '/shapes/padding_tokens', 'only shapes a generated')
# dtypes
add('dtype_unknown_tensor', m(mhca, dtypes__T1="f32"), '/dtypes/T1', 'unknown key')
add('dtype_unknown_name', None, '/dtypes/current_key', 'is not one of', raw=json.dumps(m(kvc, dtypes__current_key="q7")))
add('dtype_not_a_choice', m(kvc, dtypes__current_key="bf16"), '/dtypes/current_key', 'must be T1')
add('dtype_derived_tensor', m(kvc, dtypes__cache="i8"), '/dtypes/cache', 'not chosen by the case file')
add('dtype_mismatch', m(kvc, dtypes__current_value="f32"), '/dtypes/current_value', 'must have the dtype of current_key')
add('sdpa_int_key_uncompressed', m(sdpa, attributes__k_compressed=False, dtypes__key="i8"), '/dtypes/key', 'must be one of')
# ranges
add('range_unknown_tensor', m(kvc, ranges__current_kye=[-1,1]), '/ranges/current_kye', "did you mean 'current_key'")
add('range_on_index_tensor', m(kvc, ranges__start_pos=[0,4]), '/ranges/start_pos', 'unknown key')
add('range_low_not_below_high', m(kvc, ranges__current_key=[1,1]), '/ranges/current_key', 'low < high')
add('range_over_f16', m(kvc, ranges__current_key=[-1e6,1e6]), '/ranges/current_key', 'largest finite f16')
add('range_three_numbers', None, '/ranges/current_key', 'at most 2 items', raw=json.dumps(m(kvc, ranges__current_key=[0,1,2])))
add('range_strings', None, '/ranges/current_key/0', 'expected number', raw=json.dumps(m(kvc, ranges__current_key=["0","1"])))
# tolerance
add('tolerance_unknown_output', m(mhca, tolerance__output={"atol":0.1,"reason":"x"}), '/tolerance/output', 'unknown key')
add('tolerance_on_input', m(kvc, tolerance__current_key={"atol":0.1,"reason":"x"}), '/tolerance/current_key', 'unknown key')
add('tolerance_without_reason', None, '/tolerance/key/reason', 'required field is missing', raw=json.dumps(m(kvc, tolerance__key={"atol":0.1})))
add('tolerance_negative', None, '/tolerance/key/atol', 'below the minimum', raw=json.dumps(m(kvc, tolerance__key={"atol":-1,"reason":"x"})))
add('tolerance_unknown_field', None, '/tolerance/key/rtl', 'unknown field', raw=json.dumps(m(kvc, tolerance__key={"rtl":0.1,"reason":"x"})))
# group ops
add('quantize_unsigned_symmetric', m(qg, attributes__signed=False), '/attributes/signed', 'need a zero point')
add('quantize_group_over_length', m(qg, attributes__group_size=17), '/attributes/group_size', 'must lie in [1, length]')
add('dequantize_formula_unknown', m(dq, attributes__formula="ascend2"), '/attributes/formula', 'must be one of')
add('dequantize_ppl_zero_point', m(dq, attributes__formula="ppl"), '/attributes/with_zero_point', 'symmetric')
# aclnn.FusedInferAttentionScoreV3: the combinations its document rejects, one file each
add('fia_kv_heads_not_dividing', m(fia, attributes__numKeyValueHeads=3), '/attributes/numKeyValueHeads', 'must divide numHeads')
add('fia_gqa_ratio_over_64', m(fia, attributes__numHeads=128, attributes__numKeyValueHeads=1), '/attributes/numKeyValueHeads', 'at most 64')
add('fia_sparse_mode_5', m(fia, attributes__sparseMode=5), '/attributes/sparseMode', 'unsupported by the operator')
add('fia_sparse_3_full_mask', m(fia, attributes__sparseMode=3, attributes__attenMask_shape="S1,S2"), '/attributes/attenMask_shape', 'takes the compressed mask')
add('fia_pre_next_both_negative', m(fia, attributes__attenMask_shape="S1,S2", attributes__preTokens=-1, attributes__nextTokens=-1), '/attributes/nextTokens', 'must be >= 0')
add('fia_bnnbsd_with_bsh', m(fia, attributes__blockSize=16, attributes__kv_cache_layout="BnNBsD", inputs__actualSeqLengthsKv=[16]), '/attributes/kv_cache_layout', 'takes BNSD or TND queries')
add('fia_paged_without_kv_lengths', m(fia, attributes__blockSize=16), '/attributes/blockSize', 'needs actualSeqLengthsKv')
add('fia_tnd_with_user_mask', m({k:v for k,v in fia.items() if k!='shapes'}, attributes__inputLayout="TND", attributes__attenMask_shape="S1,S2", shapes__D=32, inputs__actualSeqLengths=[2,4], inputs__actualSeqLengthsKv=[3,6]), '/attributes/attenMask_shape', 'takes no mask in sparseMode 0/1')
add('fia_masked_rows_without_row_invalid', m(fia, attributes__attenMask_shape="S1,S2", shapes__masked_rows=1), '/shapes/masked_rows', 'set innerPrecise 2 or 3')
add('fia_value_mode_mismatch', m(fia_decode, attributes__keyAntiquantMode=1, attributes__valueAntiquantMode=0, dtypes__key="i8"), '/attributes/valueAntiquantMode', 'except key 0')
add('fia_antiquant_mode_2_prefill', m(fia, attributes__keyAntiquantMode=2, dtypes__key="i8"), '/attributes/keyAntiquantMode', 'only modes 0 and 1')
add('fia_antiquant_mode_4_unpaged', m(fia_decode, attributes__keyAntiquantMode=4, dtypes__key="i8"), '/attributes/keyAntiquantMode', 'page-attention blocks')
add('fia_int4_per_tensor_head', m(fia_decode, attributes__keyAntiquantMode=2, dtypes__key="s4"), '/attributes/keyAntiquantMode', 'int4 KV takes')
add('fia_int4_paged', m(fia_decode, attributes__blockSize=16, inputs__actualSeqLengthsKv=[16], dtypes__key="s4"), '/attributes/blockSize', 'int4 KV has no page attention')
add('fia_combined_antiquant_bf16', m(fia_decode, attributes__antiquant_combined=True, dtypes__key="i8", dtypes__query="bf16"), '/attributes/antiquant_combined', 'f16 query only')
add('fia_post_quant_int4', m(fia_decode, dtypes__key="s4", dtypes__attentionOut="i8"), '/dtypes/attentionOut', 'int4 KV takes no post-quant')
add('fia_post_quant_band_negative', m(fia, attributes__sparseMode=4, attributes__attenMask_shape="2048,2048", attributes__preTokens=-1, attributes__nextTokens=3, dtypes__attentionOut="i8"), '/dtypes/attentionOut', 'negative preTokens/nextTokens')
add('fia_post_quant_offset_uncomputed_rows', m(fia, attributes__sparseMode=3, attributes__attenMask_shape="2048,2048", attributes__postquant_offset=True, shapes__S2=2, dtypes__attentionOut="i8"), '/attributes/postquant_offset', 'intercepted by the document')
add('fia_post_quant_per_channel_lse', m(fia, attributes__postquant_per_channel=True, attributes__softmaxLseFlag=True, dtypes__attentionOut="i8"), '/attributes/postquant_per_channel', 'no softmaxLse')
add('fia_query_padding_decode', m(fia_decode, inputs__actualSeqLengths=[1], inputs__queryPaddingSize=0), '/inputs/queryPaddingSize', 'needs Q_S > 1')
add('fia_left_padding_paged', m(fia_decode, attributes__blockSize=16, inputs__actualSeqLengthsKv=[8], inputs__kvPaddingSize=1), '/inputs/kvPaddingSize', 'no page attention')
add('fia_left_padding_causal', m(fia, attributes__sparseMode=3, attributes__attenMask_shape="2048,2048", inputs__actualSeqLengthsKv=[8], inputs__kvPaddingSize=1), '/attributes/sparseMode', 'no documented alignment origin')
add('fia_prefix_len_over_prefix', m(fia, shapes__S_prefix=4, inputs__actualSharedPrefixLen=5), '/inputs/actualSharedPrefixLen', 'must not exceed')
add('fia_prefix_paged', m(fia, shapes__S_prefix=4, attributes__blockSize=16, inputs__actualSeqLengthsKv=[16]), '/shapes/S_prefix', 'no page attention')
add('fia_mla_with_pse', m(fia, shapes__rope=64, attributes__pseShift_shape="B,N,S1,S2"), '/shapes/rope', 'MLA with pseShift is rejected')
add('fia_mla_rope_32', m(fia, shapes__rope=32), '/shapes/rope', 'must be one of')
add('fia_ascend_limits_f32', m(fia, attributes__ascend_limits=True, dtypes__query="f32"), '/attributes/ascend_limits', 'f16 or bf16')
# Inputs from files (specs/case-format.md "Inputs from files"): a FIA decode (BSH, B 1, S2 16,
# 4 heads of 32) whose mask, query, K/V and lengths come from files/.
def npy(name, array): np.save(os.path.join(F, name), array, allow_pickle=False)
def raw_npy(name, descr, shape, data, fortran=False):
    header = "{'descr': '%s', 'fortran_order': %s, 'shape': %s, }" % (descr, fortran, str(tuple(shape)))
    header += ' ' * (63 - (10 + len(header)) % 64) + '\n'
    open(os.path.join(F, name), 'wb').write(b'\x93NUMPY\x01\x00' + struct.pack('<H', len(header)) + header.encode() + data)
def safetensors(name, tensors):
    header, data = {}, b''
    for key, (dtype, array) in tensors.items():
        header[key] = {"dtype": dtype, "shape": list(array.shape), "data_offsets": [len(data), len(data) + array.nbytes]}
        data += array.tobytes()
    text = json.dumps(header).encode(); text += b' ' * (-len(text) % 8)
    open(os.path.join(F, name), 'wb').write(struct.pack('<Q', len(text)) + text + data)
mask = np.zeros((1, 1, 1, 16), bool); mask[..., 8:] = True
npy('mask_f32.npy', mask.astype(np.float32))
npy('mask_8_slots.npy', mask[..., :8])
raw_npy('mask_truncated.npy', '|b1', (1, 1, 1, 16), mask.tobytes()[:10])
raw_npy('mask_holds_2.npy', '|b1', (1, 1, 1, 16), bytes([0] * 15 + [2]))
raw_npy('query_big_endian.npy', '>f2', (1, 1, 128), np.zeros(128, '>f2').tobytes())
raw_npy('query_fortran.npy', '<f2', (1, 1, 128), np.zeros(128, '<f2').tobytes(), fortran=True)
npy('query_u16.npy', np.zeros((1, 1, 128), np.uint16))
npy('query_f64.npy', np.zeros((1, 1, 128), np.float64))
npy('kv_lengths_17.npy', np.array([17], np.int64))
npy('kv_lengths_negative.npy', np.array([-1], np.int64))
open(os.path.join(F, 'not_a_tensor.bin'), 'w').write('plain text\n')
codes = np.zeros((1, 16, 128), np.int8)
safetensors('kv_cache.safetensors', {"k_cache": ("I8", codes), "v_cache": ("I8", codes)})
fia_file = m(fia_decode, attributes__attenMask_shape="B,1,1,S2")
def file_input(name, pointer, message, **inputs):
    doc = copy.deepcopy(fia_file)
    doc["inputs"] = {k: v for k, v in inputs.items()}
    add(name, doc, pointer, message)
file_input('fia_file_mask_wrong_dtype', '/inputs/attenMask', "this case's attenMask is bool [1,1,1,16]", attenMask={"file": "files/mask_f32.npy"})
file_input('fia_file_mask_wrong_shape', '/inputs/attenMask', "is bool [1,1,1,8]; this case's attenMask is bool [1,1,1,16]", attenMask={"file": "files/mask_8_slots.npy"})
file_input('fia_file_mask_truncated', '/inputs/attenMask/file', 'the .npy is truncated', attenMask={"file": "files/mask_truncated.npy"})
file_input('fia_file_mask_holds_2', '/inputs/attenMask', 'a bool is 0 or 1', attenMask={"file": "files/mask_holds_2.npy"})
file_input('fia_file_path_escapes', '/inputs/attenMask/file', "outside the case file's folder", attenMask={"file": "../mixed/valid.json"})
file_input('fia_file_absolute_path', '/inputs/attenMask/file', "outside the case file's folder", attenMask={"file": "/etc/passwd"})
file_input('fia_file_missing', '/inputs/attenMask/file', 'No such file', attenMask={"file": "files/nope.npy"})
file_input('fia_file_not_a_tensor_file', '/inputs/query/file', 'neither a .npy', query={"file": "files/not_a_tensor.bin"})
file_input('fia_file_missing_tensor', '/inputs/key/tensor', "has no tensor 'k_cahce' (it has k_cache, v_cache)", key={"file": "files/kv_cache.safetensors", "tensor": "k_cahce"})
file_input('fia_file_safetensors_two_tensors', '/inputs/key/tensor', 'name one with', key={"file": "files/kv_cache.safetensors"})
file_input('fia_file_tensor_of_npy', '/inputs/query/tensor', 'a .npy holds one array', query={"file": "files/mask_f32.npy", "tensor": "x"})
file_input('fia_file_big_endian', '/inputs/query/file', 'big-endian', query={"file": "files/query_big_endian.npy"})
file_input('fia_file_fortran_order', '/inputs/query/file', 'Fortran order', query={"file": "files/query_fortran.npy"})
file_input('fia_file_uint16_without_dtype', '/inputs/query', 'say which dtype', query={"file": "files/query_u16.npy"})
file_input('fia_file_dtype_wrong_width', '/inputs/query/dtype', '"dtype": "f32" reads 32-bit elements', query={"file": "files/query_u16.npy", "dtype": "f32"})
file_input('fia_file_float64', '/inputs/query/file', 'float64', query={"file": "files/query_f64.npy"})
file_input('fia_file_block_table', '/inputs/blockTable', 'cannot come from a file', blockTable={"file": "files/kv_lengths_17.npy"})
file_input('fia_file_output', '/inputs/attentionOut', 'is an output', attentionOut={"file": "files/mask_f32.npy"})
file_input('fia_file_unknown_tensor', '/inputs/atenMask', "did you mean 'attenMask'", atenMask={"file": "files/mask_f32.npy"})
file_input('fia_file_absent_tensor', '/inputs/pseShift', 'this case has no tensor pseShift', pseShift={"file": "files/mask_f32.npy"})
file_input('fia_file_lengths_above_s2', '/inputs/actualSeqLengthsKv', 'element 0: a length above S2 = 16', actualSeqLengthsKv={"file": "files/kv_lengths_17.npy"})
file_input('fia_file_lengths_negative', '/inputs/actualSeqLengthsKv', 'must be at least 0', actualSeqLengthsKv={"file": "files/kv_lengths_negative.npy"})
file_input('fia_file_lengths_float', '/inputs/actualSeqLengthsKv', 'are integers', actualSeqLengthsKv={"file": "files/mask_f32.npy"})
file_input('fia_file_bad_key', '/inputs/query/fil', 'unknown field', query={"fil": "files/mask_f32.npy"})

json.dump(expected, open(os.path.join(ROOT, 'tests/data/hostile_expected.json'),'w'), indent=1, sort_keys=True)
print(len(expected))
