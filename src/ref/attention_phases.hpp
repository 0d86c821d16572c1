#pragma once
// The attention reference's three phases (ref/attention.cpp's attend runs them): K packed in
// panels and V in strips, q . k, softmax and P @ V over blocks of query rows, in the exact
// order of specs/comparison.md. Internal to the reference (attention.cpp drives them).
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "ref/attention.hpp"
#include "ref/attention_bound.hpp"

namespace kvbench::attention_phases {

constexpr int64_t kPanel = 8;        // keys per panel of the transposed K (two vectors)
constexpr int kMr = 4;               // query rows per microkernel
constexpr int64_t kRowBlock = 32;    // query rows per task
constexpr int64_t kKeyTile = 16;     // panels per tile of the q . k loop (128 keys)
constexpr int64_t kValueTile = 128;  // keys per tile of the p . V loop
constexpr int64_t kKeyChunk = 8192;  // keys packed at once for a single block of rows (a multiple of both)
// K's keys [k0, k1) transposed into panels of kPanel keys: panel p, channel d, lane j
// holds K[k0 + p * kPanel + j][d] (0 past k1). A score tile reads one panel contiguously.
// A chunk of the panels: panels [first, first + count) of the keys from k0 (panel p holds
// keys k0 + p * kPanel ...), so that scores are addressed alike in every chunk.
struct Panels {
  int64_t k0 = 0, first = 0, count = 0;
  std::unique_ptr<double[]> data;
  double norm_max = 0;  // the largest ||k_t||_2 of its keys (with bounds only)
  const double* panel(int64_t p, int64_t dk) const { return data.get() + (p - first) * dk * kPanel; }
};

// V's keys [k0, k1) in column strips of 8: strip c, key t, lane j holds V[t][8c + j], so
// a value tile reads 64 contiguous bytes per key; the dv % 8 last columns of key t are in
// `tail` at (t - k0) * (dv % 8).
struct Strips {
  int64_t k0 = 0, keys = 0, tail_width = 0;
  std::unique_ptr<double[]> data, tail;
  bool finite = true;           // every value finite: no key's 0 * v can be NaN (value_phase)
  std::vector<double> abs_max;  // per channel, the largest finite |v| of its keys (with bounds only)
  const double* strip(int64_t c) const { return data.get() + c * keys * 8; }
  double tail_at(int64_t t, int64_t j) const { return tail[static_cast<size_t>((t - k0) * tail_width + j)]; }
};

struct Job {
  const AttentionBlock& a;
  std::span<const QueryRow> rows;
  double* lse;
  RowFigures* figures = nullptr;  // per row, with bounds: what softmax_phase measured
};

// The scores of rows [r0, r1) between the three phases of a block: row r's score of key t
// at S[(r - r0) * W + t - origin], the buffer spanning whole panels of the keys from k0.
struct BlockScores {
  int64_t r0 = 0, r1 = 0, kb = 0, ke = 0, pb = 0, pe = 0, W = 0, origin = 0;
  std::unique_ptr<double[]> S;
  std::vector<int64_t> live;  // rows with a key left after the bias
  // With bounds: row r's sum_j p_j |v_jd| at weighted[(r - r0) * dv + d], accumulated by
  // value_phase with P @ V (same weights, same key order); zeros before the first one.
  double* weighted = nullptr;
  bool empty() const { return kb >= ke; }
};

// Keys [c0, c1) of the keys from k0, c0 - k0 a multiple of kPanel; with `norms`, the
// largest ||k_t||_2 into norm_max.
Panels pack_keys(const RowSource& k, int64_t k0, int64_t c0, int64_t c1, int64_t dk, unsigned threads,
                 bool norms);
// With `maxima` (the bound's): each channel's largest finite |v| into V.abs_max.
Strips pack_values(const RowSource& v, int64_t k0, int64_t k1, int64_t dv, unsigned threads,
                   bool maxima = false);

// A row that sees no key: its empty-row value, lse +inf, row max -inf.
void empty_row(const Job& job, int64_t r);
// The score buffer of rows [r0, r1) (their empty rows written at once).
BlockScores block_scores(const Job& job, int64_t r0, int64_t r1, int64_t k0);
// 1. q . k, 2. softmax, 3. P @ V of one block of rows.
void score_phase(const Job& job, const Panels& K, BlockScores& b);
void softmax_phase(const Job& job, BlockScores& b);
void value_phase(const Job& job, const Strips& V, const BlockScores& b);

}  // namespace kvbench::attention_phases
