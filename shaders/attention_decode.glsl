// The decode ("subgroups") body of shaders/attention_core.glsl, included by it with
// KVBENCH_DECODE defined (and KVBENCH_TILES, whose 8-element slices its hooks load). The
// hooks and their contract are declared there; specs/attention-kernels.md, "The decode
// kernel", has the structure and its figures.
//
// One workgroup per item (batch b, kv head hk, the NV query vectors of its GQA group, split
// [t0, t1) of the keys), made of NSG = 4 subgroups of SG lanes (SG, constant 16, is the
// device's subgroup size; the workgroup size, constant 18, is NSG * SG). Subgroup g walks
// its own blocks of SG keys (blocks g, g + NSG, ... of the split) and keeps its own online
// softmax state; no workgroup barrier runs inside the key loop:
//   scores: lane = key. The lane loads its key's row 8 elements at a time, the next chunk
//     before this one's arithmetic, and multiplies each chunk with every query vector of
//     the item, read from shared memory as vec4s every lane reads at once (a broadcast);
//   softmax: per vector, the block's max by subgroupMax, so the running max and rescale are
//     uniform; each lane keeps its own running sum, added up once at the end;
//   P.V: lane = 8-channel slice of a V row (KPV keys side by side when a subgroup holds
//     more lanes than a row has slices), each key's weights and handle read from this
//     subgroup's slice of shared memory, written before one subgroupBarrier per block (two
//     buffers by block parity, so the next block's writes never meet this block's reads).
// After the loop one barrier, the NSG states into shared memory, another barrier, and the
// workgroup merges them into the item's partial state.
// Heads split (HS, set by the host: more than 8 vectors, or V rows above 256): subgroup g takes
// vectors [g NVS, (g + 1) NVS) of the item (NVS = NV / NSG) instead of a quarter of the
// keys, walks every block of the split for them (the K/V rows come from memory once per
// item, from the cache the other three times), and its states are the item's: no merge.
// A device that runs other subgroups than the host planned for (SG, NSG) leaves the
// partials NaN (the host fills them so before the dispatch): the case fails, it never
// passes on a wrong sum.
#ifndef KVBENCH_ATTENTION_DECODE_GLSL
#define KVBENCH_ATTENTION_DECODE_GLSL

layout(constant_id = 16) const uint SG = 32u;  // subgroup size (kDecodeSubgroupConstantId)
layout(constant_id = 17) const uint NV = 8u;   // query vectors per item, 1 to 16 (HS: a multiple of NSG)
layout(local_size_x_id = 18) in;               // NSG * SG (kDecodeWorkgroupConstantId)
const uint NSG = 4u;                           // subgroups per workgroup (kDecodeSubgroups)
const uint WG = NSG * SG;
// Heads split over the subgroups: set by the host (decode_splits_heads), the rule's one place.
layout(constant_id = 19) const bool HS = false;
const uint NVS = HS ? NV / NSG : NV;   // vectors per subgroup
const uint NCH = D / DPL, NCHV = DV / DPLV;  // 8-element chunks of a K row, of a V row
const uint KPV = SG >= NCHV ? SG / NCHV : 1u;  // keys side by side in P.V
const uint CPL = SG >= NCHV ? 1u : (NCHV + SG - 1u) / SG;  // V chunks per lane in P.V
const uint SG4 = SG / 4u;                                  // vec4s of one value per lane

// One shared array, reused. In the key loop: the query vectors (NV * D floats), then per
// subgroup two buffers (by block parity) of NV weights and a handle (two words) per lane. After it:
// the NSG subgroups' states (m, l, DV accumulators per vector). decode_shared_bytes() on
// the host.
const uint Q4 = NV * D / 4u;
const uint BUF4 = (NVS + 2u) * SG4;  // one parity buffer of one subgroup, in vec4s
const uint LOOP4 = Q4 + NSG * 2u * BUF4;
const uint STATE = DV + 2u;
const uint END4 = (NSG * NVS * STATE + 3u) / 4u;
shared vec4 ws4[LOOP4 > END4 ? LOOP4 : END4];

// The V chunk a lane takes in P.V: the same one for every key slot (KPV > 1), else chunk
// lane + SG * cc of its CPL (past NCHV: none).
uint pv_chunk(uint lane, uint cc) { return KPV > 1u ? lane % NCHV : lane + SG * cc; }

float ws_get(uint i) { return ws4[i / 4u][i % 4u]; }
void ws_set(uint i, float x) { ws4[i / 4u][i % 4u] = x; }

#define NEG_INF uintBitsToFloat(0xff800000u)

void main() {
  const uint item = grid_workgroup();  // large plans dispatch a 2-D grid
  if (item >= pc.num_items) return;    // the whole workgroup leaves together
  if (gl_SubgroupSize != SG || gl_NumSubgroups != NSG) return;  // partials stay NaN: a FAIL
  const uint lid = gl_LocalInvocationIndex, sg = gl_SubgroupID, lane = gl_SubgroupInvocationID;
  const uint b = items[5u * item], hk = items[5u * item + 1u], v0 = items[5u * item + 2u];
  const uint nv = items[5u * item + 3u], split = items[5u * item + 4u];
  const uint slot_base = batch_plan[3u * b], nsplit = batch_plan[3u * b + 1u], chunk = batch_plan[3u * b + 2u];
  const uint H = pc.num_heads, G = pc.num_heads / pc.num_kv_heads;
  const Batch bt = batch_info(b);

  // The item's query vectors (zeros past nv) as vec4s.
  for (uint i = lid; i < Q4; i += WG) {
    const uint vl = 4u * i / D, d = 4u * i % D, v = v0 + vl;
    vec4 x = vec4(0.0);
    if (vl < nv)
      for (uint j = 0u; j < 4u; ++j) x[j] = query_at(bt, v / G, hk * G + v % G, d + j);
    ws4[i] = x;
  }
  // This subgroup's vectors (all NV, or its NVS with HS): each one's row, head and last
  // visible key (vectors past nv repeat the last one and see no key).
  const uint vbase = HS ? sg * NVS : 0u;
  uint row_of[NVS], head_of[NVS];
  int last_of[NVS];
  int t_stop = -1;
  for (uint vs = 0u; vs < NVS; ++vs) {
    const uint vl = vbase + vs, v = v0 + min(vl, nv - 1u);
    row_of[vs] = v / G;
    head_of[vs] = hk * G + v % G;
    last_of[vs] = vl < nv ? last_key(bt, row_of[vs]) : -1;
    t_stop = max(t_stop, last_of[vs]);
  }
  const uint t0 = split * chunk;
  const int t1 = min(min(int(t0 + chunk), int(kv_length(bt))), t_stop + 1);
  barrier();  // the query vectors are in shared memory

  float m[NVS], lsum[NVS], acc[NVS][CPL][DPLV];
  for (uint v = 0u; v < NVS; ++v) {
    m[v] = NEG_INF;
    lsum[v] = 0.0;
    for (uint cc = 0u; cc < CPL; ++cc)
      for (uint j = 0u; j < DPLV; ++j) acc[v][cc][j] = 0.0;
  }
  // This lane's key slot and V chunk in P.V (lanes past KPV * NCHV idle there).
  const uint pv_key = KPV > 1u ? min(lane / NCHV, KPV - 1u) : 0u;
  const bool pv_lane = KPV == 1u || lane < KPV * NCHV;
#ifdef ATTENTION_ITEM_BEGIN
  item_begin(bt, hk, 0u, lane % NCHV);  // what the V chunk needs for every key (with CPL 1: its only chunk)
#endif
  uint parity = 0u;
  // Blocks sg, sg + NSG, ... of the split; with HS every block.
  const uint first_block = HS ? 0u : sg, block_step = HS ? 1u : NSG;
  for (int tb = int(t0 + first_block * SG); tb < t1; tb += int(block_step * SG), parity ^= 1u) {  // uniform per subgroup
    const int t = tb + int(lane);
    const bool in_split = t < t1;
    const uvec2 handle = key_handle(bt, uint(in_split ? t : t1 - 1));
    // Scores: this lane's key against every query vector.
    float s[NVS];
    for (uint v = 0u; v < NVS; ++v) s[v] = 0.0;
    float xa[DPL];
    load_key(bt, hk, handle, 0u, xa);
    for (uint c = 0u; c < NCH; ++c) {
      float xb[DPL];
      if (c + 1u < NCH) {
        load_key(bt, hk, handle, c + 1u, xb);  // the next chunk's loads ahead of this one's FMAs
      } else {
        for (uint j = 0u; j < DPL; ++j) xb[j] = 0.0;
      }
      const vec4 ka = vec4(xa[0], xa[1], xa[2], xa[3]), kb = vec4(xa[4], xa[5], xa[6], xa[7]);
      for (uint v = 0u; v < NVS; ++v) {
        const uint q = ((vbase + v) * D + c * DPL) / 4u;
        s[v] += dot(ws4[q], ka) + dot(ws4[q + 1u], kb);
      }
      for (uint j = 0u; j < DPL; ++j) xa[j] = xb[j];
    }
    // The online softmax over the block, and the P.V weights and handles for the others.
    const uint buf = Q4 + (sg * 2u + parity) * BUF4;
    for (uint v = 0u; v < NVS; ++v) {
      const float sv = in_split && t <= last_of[v] ? score(bt, row_of[v], head_of[v], uint(t), s[v]) : NEG_INF;
      const float m_new = max(m[v], subgroupMax(sv));
      const bool none = m_new == NEG_INF;  // nothing visible yet: rescale 1, p 0
      const float rescale = none ? 1.0 : exp(m[v] - m_new);
      const float p = none || sv == NEG_INF ? 0.0 : exp(sv - m_new);
      m[v] = m_new;
      lsum[v] = lsum[v] * rescale + p;
      for (uint cc = 0u; cc < CPL; ++cc)
        for (uint j = 0u; j < DPLV; ++j) acc[v][cc][j] *= rescale;
      ws4[buf + v * SG4 + lane / 4u][lane % 4u] = ATTENTION_PV_WEIGHT(p);
    }
    ws4[buf + NVS * SG4 + lane / 4u][lane % 4u] = uintBitsToFloat(handle.x);
    ws4[buf + (NVS + 1u) * SG4 + lane / 4u][lane % 4u] = uintBitsToFloat(handle.y);
    subgroupBarrier();
    // P.V: lane = chunk of V, KPV keys side by side. Where KPV does not divide SG (V rows
    // of 24, 40, 48, 72, 80, ... at 32 lanes) the last step's upper slots pass the block's
    // SG keys: their weights and handles would be the next slice's, or past the array.
    for (uint k0 = 0u; k0 < SG; k0 += KPV) {
      const uint k = k0 + pv_key;
      if (!pv_lane || k >= SG || tb + int(k) >= t1) continue;
      const uvec2 hv = uvec2(floatBitsToUint(ws4[buf + NVS * SG4 + k / 4u][k % 4u]),
                             floatBitsToUint(ws4[buf + (NVS + 1u) * SG4 + k / 4u][k % 4u]));
      float w[NVS];
      for (uint v = 0u; v < NVS; ++v) w[v] = ws4[buf + v * SG4 + k / 4u][k % 4u];
      for (uint cc = 0u; cc < CPL; ++cc) {
        const uint c = pv_chunk(lane, cc);
        if (c >= NCHV) continue;
        float x[DPLV];
        load_value(bt, hk, hv, c, x);
        for (uint v = 0u; v < NVS; ++v)  // a key of weight 0 (masked) adds nothing, even an infinite V
          if (w[v] != 0.0)
            for (uint j = 0u; j < DPLV; ++j) acc[v][cc][j] += w[v] * x[j];
      }
    }
  }

  // The subgroups' states into shared memory (nobody reads q or the weights any more):
  // m and l by the first lane, the accumulators added up over the KPV key slots in turn.
  barrier();
  const uint st = sg * NVS * STATE;  // with HS: the states of vectors vbase.. in order
  for (uint v = 0u; v < NVS; ++v) {
    const float l = subgroupAdd(lsum[v]);
    if (lane == 0u) {
      ws_set(st + v * STATE, m[v]);
      ws_set(st + v * STATE + 1u, l);
    }
  }
  for (uint kp = 0u; kp < KPV; ++kp) {
    if (pv_lane && pv_key == kp)
      for (uint cc = 0u; cc < CPL; ++cc) {
        const uint c = pv_chunk(lane, cc);
        if (c >= NCHV) continue;
        for (uint v = 0u; v < NVS; ++v)
          for (uint j = 0u; j < DPLV; ++j) {
            const uint i = st + v * STATE + 2u + c * DPLV + j;
            ws_set(i, kp == 0u ? acc[v][cc][j] : ws_get(i) + acc[v][cc][j]);
          }
      }
    subgroupBarrier();
  }
  barrier();
  // The NSG states merged into the item's partial state, (vector, channel) per invocation;
  // with HS each vector's one state (at vl * STATE) copied.
  const uint ng = HS ? 1u : NSG;
  for (uint i = lid; i < nv * (DV + 1u); i += WG) {
    const uint vl = i / (DV + 1u), ch = i % (DV + 1u);  // ch == DV: m and l
    float big = NEG_INF;
    for (uint g = 0u; g < ng; ++g) big = max(big, ws_get((g * NV + vl) * STATE));
    float sum = 0.0;
    for (uint g = 0u; g < ng; ++g) {
      const uint gs = (g * NV + vl) * STATE;
      const float mg = ws_get(gs);
      const float weight = mg == NEG_INF ? 0.0 : exp(mg - big);
      sum += weight * ws_get(gs + (ch == DV ? 1u : 2u + ch));
    }
    const uint first = partial_first(slot_base, v0 + vl, hk, G, H, nsplit, split);
    if (ch == DV) {
      partials[first] = big;
      partials[first + 1u] = sum;
    } else {
      partials[first + 2u + ch] = sum;
    }
  }
}

#endif
